import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{k as r}from"./shared-JMFHF64U.mjs";import"./shared-YQC6BU5T.mjs";import"./shared-P5F4JHHZ.mjs";await r("renew");
