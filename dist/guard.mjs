import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  runGuard
} from "./shared-2XWMTTGF.mjs";
import "./shared-76JVIU6K.mjs";
import "./shared-BT7D45HE.mjs";

// actions/guard/main.mjs
await runGuard();
