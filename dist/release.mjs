import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-4F6AEB6P.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await r("release");
