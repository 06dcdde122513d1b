import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-GFABUB3C.mjs";
import "./shared-LYUHZPR6.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/status/main.mjs
await run("status");
