import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-U3RYRJ7G.mjs";import"./shared-U2YGMAB3.mjs";import"./shared-HJ2TEX7R.mjs";import"./shared-RQ2WS5JY.mjs";import"./shared-MN3TUCBY.mjs";await t("audit");
