import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-MLG4V76Q.mjs";import"./shared-RQ2WS5JY.mjs";import"./shared-MN3TUCBY.mjs";await r("reap");
