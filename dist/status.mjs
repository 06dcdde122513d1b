import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as t}from"./shared-KEQYBHUS.mjs";import"./shared-NKLBQW6C.mjs";import"./shared-32Z5632G.mjs";await t("status");
