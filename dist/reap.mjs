import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-HNTBTSAB.mjs";
import "./shared-TIR34BED.mjs";
import "./shared-4YBJV74U.mjs";

// actions/reap/main.mjs
await run("reap");
