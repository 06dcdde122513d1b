import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-ZLPVLJKU.mjs";
import "./shared-RAC3G2BW.mjs";
import "./shared-QYZQB6T6.mjs";

// actions/guard/main.mjs
await runGuard();
