import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-QIAAILGF.mjs";import"./shared-QXPF774U.mjs";import"./shared-32Z5632G.mjs";await r("recover");
