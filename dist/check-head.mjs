import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-6ALGFQY5.mjs";import"./shared-7CUQ22NB.mjs";import"./shared-ABBUWIY2.mjs";import"./shared-2U72ZG6A.mjs";import"./shared-JEIIXCR4.mjs";await t("check-head");
