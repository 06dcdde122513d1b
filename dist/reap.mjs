import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-VI6VWKXP.mjs";
import "./shared-HRSGTLVH.mjs";
import "./shared-QYZQB6T6.mjs";

// actions/reap/main.mjs
await run("reap");
