import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-SMD5MPPW.mjs";
import "./shared-ZYBR2UAM.mjs";
import "./shared-LLDF532U.mjs";

// actions/guard/main.mjs
await runGuard();
