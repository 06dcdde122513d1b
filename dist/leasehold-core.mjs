import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadBench,
  loadCore
} from "./shared-QYZQB6T6.mjs";
export {
  loadBench,
  loadCore
};
