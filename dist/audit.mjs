import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-JIDTRZMJ.mjs";import"./shared-3TXGWFTB.mjs";import"./shared-CVTWCYAL.mjs";import"./shared-JGMHO4PB.mjs";import"./shared-MN3TUCBY.mjs";await t("audit");
