import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-KDQETFUG.mjs";import"./shared-YI3ETAQ2.mjs";import"./shared-JJ3CO44V.mjs";import"./shared-B54WUC2T.mjs";import"./shared-P5F4JHHZ.mjs";await t("receipt");
