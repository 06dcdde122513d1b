import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-IV5MOLWG.mjs";
import "./shared-DCEVCRNG.mjs";
import "./shared-BT7D45HE.mjs";

// actions/receipt/main.mjs
await runItemAction("receipt");
