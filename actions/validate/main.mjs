import { runValidate } from '../lib/validate-action.mjs';

await runValidate();
