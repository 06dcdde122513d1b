import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-R74WJ6WY.mjs";import"./shared-6PCWCKG4.mjs";import"./shared-RFU2AFLA.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await t("audit");
