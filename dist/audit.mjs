import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-ASOJW6EE.mjs";import"./shared-SB6VJPB5.mjs";import"./shared-RFU2AFLA.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await t("audit");
