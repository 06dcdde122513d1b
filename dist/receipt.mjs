import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-5RY2JEI3.mjs";import"./shared-H2YA6AIB.mjs";import"./shared-RFU2AFLA.mjs";import"./shared-2PDPZR2D.mjs";import"./shared-32Z5632G.mjs";await t("receipt");
