import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-CSBZDRDB.mjs";import"./shared-AV52ZUCL.mjs";import"./shared-IV76RYDZ.mjs";import"./shared-NKLBQW6C.mjs";import"./shared-32Z5632G.mjs";await t("check-head");
