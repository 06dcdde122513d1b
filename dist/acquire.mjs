import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-JYRAPC2T.mjs";
import "./shared-DJJ2KX5J.mjs";
import "./shared-GTPURL7H.mjs";

// actions/acquire/main.mjs
await run("acquire");
