import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-Z7OWDX67.mjs";
import "./shared-66P7PQNO.mjs";
import "./shared-GTPURL7H.mjs";

// actions/acquire/main.mjs
await run("acquire");
