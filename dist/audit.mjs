import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-IEA2A5GG.mjs";import"./shared-JMFHF64U.mjs";import"./shared-O2PP2E4B.mjs";import"./shared-YQC6BU5T.mjs";import"./shared-P5F4JHHZ.mjs";await t("audit");
