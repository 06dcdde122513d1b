import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{m as r}from"./shared-ZCKRVAM2.mjs";import"./shared-IJ7RDVYA.mjs";import"./shared-P5F4JHHZ.mjs";await r();
