import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-OHZ6SBQC.mjs";
import "./shared-SXIAN3UU.mjs";
import "./shared-PGCUYKP6.mjs";

// actions/renew/main.mjs
await run("renew");
