import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-E2U7YS6J.mjs";
import "./shared-FWWAHPLT.mjs";
import "./shared-VD44QYDX.mjs";
import "./shared-NNCFRTIC.mjs";
import "./shared-4YBJV74U.mjs";

// actions/check-head/main.mjs
await runItemAction("check-head");
