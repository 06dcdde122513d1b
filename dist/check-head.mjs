import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-5FYRBYGM.mjs";import"./shared-MLG4V76Q.mjs";import"./shared-HJ2TEX7R.mjs";import"./shared-RQ2WS5JY.mjs";import"./shared-MN3TUCBY.mjs";await t("check-head");
