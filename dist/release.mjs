import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-FWWAHPLT.mjs";
import "./shared-NNCFRTIC.mjs";
import "./shared-4YBJV74U.mjs";

// actions/release/main.mjs
await run("release");
