import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  loadCore
} from "./shared-BT7D45HE.mjs";
export {
  loadCore
};
