import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-QJGEBCBB.mjs";
import "./shared-B7KGEZMB.mjs";
import "./shared-GTPURL7H.mjs";

// actions/guard/main.mjs
await runGuard();
