import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-BOX4LTB6.mjs";
import "./shared-BREDGPVC.mjs";
import "./shared-BT7D45HE.mjs";

// actions/reap/main.mjs
await run("reap");
