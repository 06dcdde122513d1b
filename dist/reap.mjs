import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{i as r}from"./shared-NGFWZ27G.mjs";import"./shared-ZR6JCHYZ.mjs";import"./shared-MN3TUCBY.mjs";await r("reap");
