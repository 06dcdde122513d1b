import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-V5FHZQAO.mjs";
import "./shared-XY2HJ2VG.mjs";
import "./shared-BT7D45HE.mjs";

// actions/release/main.mjs
await run("release");
