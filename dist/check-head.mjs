import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-RQU26UYN.mjs";import"./shared-ERQSXWPR.mjs";import"./shared-KHWKXNC4.mjs";import"./shared-DBLLKVPJ.mjs";import"./shared-4Z44FCLV.mjs";await t("check-head");
