import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-IJ23LW3I.mjs";
import "./shared-TCTJ6L4B.mjs";
import "./shared-4YBJV74U.mjs";

// actions/acquire/main.mjs
await run("acquire");
