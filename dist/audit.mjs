import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-MYR3TJGG.mjs";
import "./shared-IJ23LW3I.mjs";
import "./shared-6PT5REBG.mjs";
import "./shared-TCTJ6L4B.mjs";
import "./shared-4YBJV74U.mjs";

// actions/audit/main.mjs
await runItemAction("audit");
