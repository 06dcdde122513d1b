import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-6JGT3HTJ.mjs";
import "./shared-KWFSOBKM.mjs";
import "./shared-GTPURL7H.mjs";

// actions/guard/main.mjs
await runGuard();
