import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-ZLPVLJKU.mjs";
import "./shared-RAC3G2BW.mjs";
import "./shared-QYZQB6T6.mjs";

// actions/release/main.mjs
await run("release");
