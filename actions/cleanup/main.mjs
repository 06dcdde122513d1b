import { runCleanup } from '../lib/run.mjs';

await runCleanup();
