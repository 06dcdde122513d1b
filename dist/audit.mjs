import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-5OMC5HUR.mjs";import"./shared-A3WHNWZQ.mjs";import"./shared-KHWKXNC4.mjs";import"./shared-DBLLKVPJ.mjs";import"./shared-4Z44FCLV.mjs";await t("audit");
