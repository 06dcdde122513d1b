import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-JHJEMV23.mjs";
import "./shared-GFABUB3C.mjs";
import "./shared-OEW5QBWU.mjs";
import "./shared-LYUHZPR6.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/check-head/main.mjs
await runItemAction("check-head");
