import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-P4ZXYRRP.mjs";
import "./shared-AEBF7NXJ.mjs";
import "./shared-GTPURL7H.mjs";

// actions/release/main.mjs
await run("release");
