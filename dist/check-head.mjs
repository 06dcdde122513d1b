import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-6VHY45XC.mjs";import"./shared-EZRB54KC.mjs";import"./shared-CNH6RT5H.mjs";import"./shared-NBVYVBAW.mjs";import"./shared-JEIIXCR4.mjs";await t("check-head");
