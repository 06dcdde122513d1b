import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{b as o,c as e}from"./shared-W4ZUK67W.mjs";export{e as loadBench,o as loadCore};
