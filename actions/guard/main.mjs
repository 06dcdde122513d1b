import { runGuard } from '../lib/run.mjs';

await runGuard();
