import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-OJ2BXMAI.mjs";
import "./shared-XY2HJ2VG.mjs";
import "./shared-4AUH3CBJ.mjs";

// actions/renew/main.mjs
await run("renew");
