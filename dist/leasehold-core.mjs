import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{b as o,c as e}from"./shared-32Z5632G.mjs";export{e as loadBench,o as loadCore};
