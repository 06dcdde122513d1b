import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-RE5GGR6Z.mjs";
import "./shared-M7CKZ7H6.mjs";
import "./shared-GTPURL7H.mjs";

// actions/status/main.mjs
await run("status");
