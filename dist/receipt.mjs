import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-E56RGFEZ.mjs";
import "./shared-HNTBTSAB.mjs";
import "./shared-IOKF6WDH.mjs";
import "./shared-TIR34BED.mjs";
import "./shared-4YBJV74U.mjs";

// actions/receipt/main.mjs
await runItemAction("receipt");
