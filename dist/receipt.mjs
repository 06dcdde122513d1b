import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-F3KMT4R3.mjs";import"./shared-DFIE2JBT.mjs";import"./shared-IV76RYDZ.mjs";import"./shared-NKLBQW6C.mjs";import"./shared-32Z5632G.mjs";await t("receipt");
