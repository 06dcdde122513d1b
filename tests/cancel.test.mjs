// A cancel that comes while a request is in flight (the driver, actions/lib/driver.mjs, against
// the emulator with the built core): it goes to the core with that request's answer
// (`cancelledReply`), so an answer that ends the operation, an acquire's admitting write, does
// not lose it. The job, being cancelled, gives the slot back instead of finishing `acquired`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadCore } from '../dist/leasehold-core.mjs';
import { runOperation } from '../actions/lib/driver.mjs';
import { createTransport } from '../actions/lib/github.mjs';
import { startEmulator } from './emulator/emulator.mjs';

let emu;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'locks/c.config.json': '{"capacity": 1}\n' } });
});
after(() => emu.close());

const inputs = (runId) => ({ lock: 'c', GITHUB_REPOSITORY: 'octo/app', GITHUB_RUN_ID: String(runId), GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'build', 'record-job-id': 'false' });
const quiet = { debug() {}, info() {}, warning() {} };

async function acquire(runId, cancelOn) {
  const { Operation } = loadCore();
  const op = new Operation('acquire', inputs(runId), undefined);
  const transport = createTransport({ baseUrl: emu.url, token: 'test-token', repository: 'octo/app' });
  const cancel = new AbortController();
  // The runner's SIGINT, arriving while this request is in flight.
  const perform = (command) => {
    if (cancelOn(command)) cancel.abort();
    return transport(command);
  };
  try {
    return await runOperation({ op, perform, logger: quiet, cancel: cancel.signal });
  } finally {
    op.free?.();
  }
}

const state = async () => JSON.parse(await emu.readFile('leasehold-state', 'locks/c.json'));

test('cancelled while the admitting write is in flight: the answer goes with the cancel, and the slot is given back', async () => {
  const first = await acquire(1, () => false);
  assert.equal(first.result, 'acquired');
  await emu.writeFile('leasehold-state', 'locks/c.json', `${JSON.stringify({ ...(await state()), holders: [], revision: (await state()).revision + 1 }, null, 2)}\n`, 'free again');
  const outcome = await acquire(2, (command) => command.kind === 'writeFile');
  assert.equal(outcome.result, 'cancelled', JSON.stringify(outcome.error));
  assert.deepEqual((await state()).holders, [], 'nothing of the cancelled job is left');
});
