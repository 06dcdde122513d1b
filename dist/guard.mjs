import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-TXBHROMF.mjs";
import "./shared-U3V2J47G.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/guard/main.mjs
await runGuard();
