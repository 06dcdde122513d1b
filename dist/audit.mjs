import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-EFFN6VHN.mjs";import"./shared-I6E7OWIH.mjs";import"./shared-G34ANFPN.mjs";import"./shared-6DU67WVF.mjs";import"./shared-ZSPTYOHE.mjs";await t("audit");
