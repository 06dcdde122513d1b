import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-EZRB54KC.mjs";import"./shared-NBVYVBAW.mjs";import"./shared-JEIIXCR4.mjs";await r("renew");
