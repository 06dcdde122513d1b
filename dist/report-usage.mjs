import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-I6E7OWIH.mjs";import"./shared-6DU67WVF.mjs";import"./shared-ZSPTYOHE.mjs";await r("report-usage");
