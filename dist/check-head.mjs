import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{a as t}from"./shared-LYXCMKUU.mjs";import"./shared-EH6QUMTT.mjs";import"./shared-65DRFUWA.mjs";import"./shared-TQ6RRQUR.mjs";import"./shared-W4ZUK67W.mjs";await t("check-head");
