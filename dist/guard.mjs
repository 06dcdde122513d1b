import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-GFABUB3C.mjs";
import "./shared-LYUHZPR6.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/guard/main.mjs
await runGuard();
