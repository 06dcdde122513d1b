import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-WFLVGPA6.mjs";import"./shared-KEQYBHUS.mjs";import"./shared-IV76RYDZ.mjs";import"./shared-NKLBQW6C.mjs";import"./shared-32Z5632G.mjs";await t("receipt");
