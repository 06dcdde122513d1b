import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-F5Y7JN75.mjs";import"./shared-NGFWZ27G.mjs";import"./shared-3JSI53LK.mjs";import"./shared-ZR6JCHYZ.mjs";import"./shared-MN3TUCBY.mjs";await t("check-head");
