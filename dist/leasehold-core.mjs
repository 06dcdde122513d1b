import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadBench,
  loadCore
} from "./shared-4YBJV74U.mjs";
export {
  loadBench,
  loadCore
};
