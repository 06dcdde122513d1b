import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  run
} from "./shared-S34ZBD4P.mjs";
import "./shared-MUMZVIIX.mjs";
import "./shared-V7GRIPFJ.mjs";
import "./shared-5ZBYKQBK.mjs";
import "./shared-BFD3RWKA.mjs";

// actions/acquire/main.mjs
await run("acquire");
