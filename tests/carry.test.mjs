// Release writes on the version acquire carried to it (exported through GITHUB_ENV, as the
// runner hands any step's exports to the job's later steps): an uncontended cycle is three
// requests, and a carried version that is out of date costs only the conflict and one read.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
// GitHub's clock runs this far ahead of this machine's: moving it on stands in for waiting.
let ahead = 0;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', now: () => Date.now() + ahead, files: { 'locks/deploy.config.json': '{"capacity": 2}\n' } });
});
after(() => emu.close());

const lastSeq = () => (emu.log.length ? emu.log[emu.log.length - 1].seq : 0);
const since = (seq) => emu.log.filter((r) => r.seq > seq).map((r) => `${r.method} ${r.status}`);
const inputs = { lock: 'deploy', 'record-job-id': 'false' };

test('an uncontended acquire and release: read and write, then the release write alone', async () => {
  // Warm the lock (first use creates the branch), then let it go quiet.
  const first = jobContext({ runId: 1 });
  const a0 = await runAction('acquire', { apiUrl: emu.url, inputs, context: first });
  await runAction('release', { apiUrl: emu.url, inputs, context: first, env: a0.exported });
  ahead += 2000;
  const context = jobContext({ runId: 2 });
  const seq = lastSeq();
  const a = await runAction('acquire', { apiUrl: emu.url, inputs, context });
  assert.equal(a.outputs.result, 'acquired');
  const names = Object.keys(a.exported);
  assert.deepEqual(names, ['LEASEHOLD_CARRY_deploy']);
  const r = await runAction('release', { apiUrl: emu.url, inputs, context, env: a.exported });
  assert.equal(r.outputs.result, 'released', r.stdout);
  assert.deepEqual(since(seq), ['GET 200', 'PUT 200', 'PUT 200']);
  const state = JSON.parse(await emu.readFile('leasehold-state', 'locks/deploy.json'));
  assert.deepEqual(state.holders, []);
});

test('a carried version another job overtook: the release write conflicts, reads, and releases', async () => {
  ahead += 2000;
  const one = jobContext({ runId: 3 });
  const two = jobContext({ runId: 4 });
  const a1 = await runAction('acquire', { apiUrl: emu.url, inputs, context: one });
  ahead += 2000;
  const a2 = await runAction('acquire', { apiUrl: emu.url, inputs, context: two });
  assert.equal(a2.outputs.result, 'acquired');
  ahead += 2000;
  const seq = lastSeq();
  const r1 = await runAction('release', { apiUrl: emu.url, inputs, context: one, env: a1.exported });
  assert.equal(r1.outputs.result, 'released', r1.stdout);
  assert.deepEqual(since(seq), ['PUT 409', 'GET 200', 'PUT 200']);
  const state = JSON.parse(await emu.readFile('leasehold-state', 'locks/deploy.json'));
  assert.deepEqual(state.holders.map((h) => h.holderId), [a2.outputs['holder-id']]);
  // The other job's carried version is out of date too, and released all the same.
  const r2 = await runAction('release', { apiUrl: emu.url, inputs, context: two, env: a2.exported });
  assert.equal(r2.outputs.result, 'released', r2.stdout);
});

test("another lock's carried version is not taken for this lock's", async () => {
  ahead += 2000;
  const context = jobContext({ runId: 5 });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs, context });
  ahead += 2000;
  // Same variable name (a lock whose name differs only in `.` or `-`), another lock inside.
  const carried = JSON.parse(a.exported.LEASEHOLD_CARRY_deploy);
  const foreign = { LEASEHOLD_CARRY_deploy: JSON.stringify({ ...carried, lock: 'de-ploy' }) };
  const seq = lastSeq();
  const r = await runAction('release', { apiUrl: emu.url, inputs, context, env: foreign });
  assert.equal(r.outputs.result, 'released', r.stdout);
  assert.deepEqual(since(seq), ['GET 200', 'PUT 200']);
});
