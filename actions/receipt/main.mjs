import { runItemAction } from '../lib/items.mjs';

await runItemAction('receipt');
