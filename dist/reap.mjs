import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-BQNQF7HQ.mjs";
import "./shared-MUMZVIIX.mjs";
import "./shared-F2X5AEPO.mjs";
import "./shared-5ZBYKQBK.mjs";
import "./shared-25GS4S6X.mjs";

// actions/reap/main.mjs
await run("reap");
