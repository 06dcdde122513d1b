import { runClaim } from '../lib/claim-action.mjs';

await runClaim();
