import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-TSYNO332.mjs";
import "./shared-DPPQFPU5.mjs";
import "./shared-BT7D45HE.mjs";

// actions/acquire/main.mjs
await run("acquire");
