import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-UTNL5PUZ.mjs";import"./shared-ZCKRVAM2.mjs";import"./shared-DEJTENV4.mjs";import"./shared-IJ7RDVYA.mjs";import"./shared-P5F4JHHZ.mjs";await t("check-head");
