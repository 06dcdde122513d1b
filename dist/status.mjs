import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-TXBHROMF.mjs";
import "./shared-U3V2J47G.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/status/main.mjs
await run("status");
