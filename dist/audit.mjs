import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-V4KFT4FZ.mjs";import"./shared-4F6AEB6P.mjs";import"./shared-RFU2AFLA.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await t("audit");
