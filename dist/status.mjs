import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-MBY7Q5SC.mjs";
import "./shared-6XUVUBOO.mjs";
import "./shared-BT7D45HE.mjs";

// actions/status/main.mjs
await run("status");
