import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-CCZYAMS5.mjs";import"./shared-24F5XGIW.mjs";import"./shared-PYCJGDXB.mjs";import"./shared-XI2NRGWE.mjs";import"./shared-MN3TUCBY.mjs";await t("audit");
