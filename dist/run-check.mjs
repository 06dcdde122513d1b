import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{k as r}from"./shared-3TXGWFTB.mjs";import"./shared-JGMHO4PB.mjs";import"./shared-MN3TUCBY.mjs";r();
