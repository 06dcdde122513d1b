import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-WM4YGZ74.mjs";
import "./shared-ZLPVLJKU.mjs";
import "./shared-RR2IBB2J.mjs";
import "./shared-RAC3G2BW.mjs";
import "./shared-QYZQB6T6.mjs";

// actions/receipt/main.mjs
await runItemAction("receipt");
