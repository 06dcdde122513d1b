import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{n as a}from"./shared-A3WHNWZQ.mjs";import"./shared-DBLLKVPJ.mjs";import"./shared-4Z44FCLV.mjs";await a();
