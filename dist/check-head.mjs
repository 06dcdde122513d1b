import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-JX4YOV63.mjs";
import "./shared-VI6VWKXP.mjs";
import "./shared-QILOXU7V.mjs";
import "./shared-HRSGTLVH.mjs";
import "./shared-QYZQB6T6.mjs";

// actions/check-head/main.mjs
await runItemAction("check-head");
