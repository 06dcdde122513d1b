import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-7CUQ22NB.mjs";import"./shared-2U72ZG6A.mjs";import"./shared-JEIIXCR4.mjs";await r("reap");
