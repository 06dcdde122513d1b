import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-Y35Z3OP3.mjs";import"./shared-527SXNOI.mjs";import"./shared-RFU2AFLA.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await t("audit");
