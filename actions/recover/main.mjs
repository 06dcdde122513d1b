import { run } from '../lib/run.mjs';

await run('recover');
