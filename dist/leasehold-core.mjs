import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadCore
} from "./shared-BFD3RWKA.mjs";
export {
  loadCore
};
