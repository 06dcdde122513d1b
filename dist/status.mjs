import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-GNIHNO6Y.mjs";
import "./shared-BUMHKZ2E.mjs";
import "./shared-GTPURL7H.mjs";

// actions/status/main.mjs
await run("status");
