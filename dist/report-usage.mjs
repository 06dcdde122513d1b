import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-LUPKNVBY.mjs";import"./shared-TQ6RRQUR.mjs";import"./shared-W4ZUK67W.mjs";await r("report-usage");
