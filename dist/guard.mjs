import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-OHZ6SBQC.mjs";
import "./shared-SXIAN3UU.mjs";
import "./shared-PGCUYKP6.mjs";

// actions/guard/main.mjs
await runGuard();
