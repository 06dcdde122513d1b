import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runItemAction
} from "./shared-BPJMEQJV.mjs";
import "./shared-TXBHROMF.mjs";
import "./shared-XLBMYJWY.mjs";
import "./shared-U3V2J47G.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/receipt/main.mjs
await runItemAction("receipt");
