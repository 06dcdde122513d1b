import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-LIHFED64.mjs";import"./shared-YQG6ZYNW.mjs";import"./shared-JEIIXCR4.mjs";await r("reap");
