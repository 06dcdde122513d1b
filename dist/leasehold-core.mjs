import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadCore
} from "./shared-4AUH3CBJ.mjs";
export {
  loadCore
};
