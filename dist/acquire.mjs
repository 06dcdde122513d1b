import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-SMD5MPPW.mjs";
import "./shared-ZYBR2UAM.mjs";
import "./shared-LLDF532U.mjs";

// actions/acquire/main.mjs
await run("acquire");
