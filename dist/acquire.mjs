import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-GHKBLQ2E.mjs";
import "./shared-U7EP43ZF.mjs";
import "./shared-GTPURL7H.mjs";

// actions/acquire/main.mjs
await run("acquire");
