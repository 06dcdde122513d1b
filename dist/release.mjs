import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-6PCWCKG4.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await r("release");
