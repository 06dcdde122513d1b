import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadCore
} from "./shared-25GS4S6X.mjs";
export {
  loadCore
};
