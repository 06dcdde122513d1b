import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-NZOZN6BW.mjs";import"./shared-QIAAILGF.mjs";import"./shared-2EQ4DVL7.mjs";import"./shared-QXPF774U.mjs";import"./shared-32Z5632G.mjs";await t("audit");
