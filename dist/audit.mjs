import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-NB7YJTEW.mjs";import"./shared-XWRSUUSE.mjs";import"./shared-JQVX7DO2.mjs";import"./shared-54Q3L47T.mjs";import"./shared-MN3TUCBY.mjs";await t("audit");
