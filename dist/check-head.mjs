import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-VHRUEXVQ.mjs";import"./shared-LIHFED64.mjs";import"./shared-J2CQDV2Y.mjs";import"./shared-YQG6ZYNW.mjs";import"./shared-JEIIXCR4.mjs";await t("check-head");
