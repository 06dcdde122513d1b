import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-V6FW2Q3U.mjs";import"./shared-LUPKNVBY.mjs";import"./shared-65DRFUWA.mjs";import"./shared-TQ6RRQUR.mjs";import"./shared-W4ZUK67W.mjs";await t("audit");
