import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-6JGT3HTJ.mjs";
import "./shared-KWFSOBKM.mjs";
import "./shared-GTPURL7H.mjs";

// actions/reap/main.mjs
await run("reap");
