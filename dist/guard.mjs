import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-S3K353HW.mjs";
import "./shared-4SKEG3SY.mjs";
import "./shared-BT7D45HE.mjs";

// actions/guard/main.mjs
await runGuard();
