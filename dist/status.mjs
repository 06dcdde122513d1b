import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-S3K353HW.mjs";
import "./shared-4SKEG3SY.mjs";
import "./shared-BT7D45HE.mjs";

// actions/status/main.mjs
await run("status");
