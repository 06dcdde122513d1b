import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-XWRSUUSE.mjs";import"./shared-54Q3L47T.mjs";import"./shared-MN3TUCBY.mjs";await r("renew");
