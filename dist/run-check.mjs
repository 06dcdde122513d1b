import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import{j as r}from"./shared-24F5XGIW.mjs";import"./shared-XI2NRGWE.mjs";import"./shared-MN3TUCBY.mjs";r();
