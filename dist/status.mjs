import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-T6WL666B.mjs";
import "./shared-NNCFRTIC.mjs";
import "./shared-4YBJV74U.mjs";

// actions/status/main.mjs
await run("status");
