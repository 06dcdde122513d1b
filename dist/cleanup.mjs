import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{m as a}from"./shared-YI3ETAQ2.mjs";import"./shared-B54WUC2T.mjs";import"./shared-P5F4JHHZ.mjs";await a();
