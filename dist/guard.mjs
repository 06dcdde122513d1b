import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-WKQXHXQD.mjs";
import "./shared-ZYBR2UAM.mjs";
import "./shared-CYILUAGI.mjs";

// actions/guard/main.mjs
await runGuard();
