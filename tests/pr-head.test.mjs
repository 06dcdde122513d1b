// acquire with pull-request and expected-head-sha, and actions/check-head, as the runner runs
// them, against the emulator: a queued acquire whose pull request is pushed to leaves the
// queue (result superseded) and the waiter behind it gets the slot; the same when the push lands
// between its last poll and its admission write (an emulator hook on that write's request);
// empty inputs make no pull-request request at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const REPO = 'octo/app';
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
let emu;
let repo;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'locks/seat.config.json': '{"capacity": 1}\n', 'locks/seat2.config.json': '{"capacity": 1}\n' } });
  repo = emu.repo('octo', 'app');
});
after(() => emu.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const acquire = (lock, runId, inputs = {}) =>
  runAction('acquire', { apiUrl: emu.url, context: jobContext({ repository: REPO, runId }), inputs: { lock, 'poll-seconds': '1', 'timeout-minutes': '5', ...inputs } });
const release = (lock, runId) => runAction('release', { apiUrl: emu.url, context: jobContext({ repository: REPO, runId }), inputs: { lock } });

async function state(lock) {
  const text = await emu.readFile('leasehold-state', `locks/${lock}.json`);
  return text ? JSON.parse(text) : { holders: [], queue: [] };
}

/** Waits (setup, not a timed assertion) until `holderRun` is in the queue of `lock`. */
async function queued(lock, holderRun) {
  for (let i = 0; i < 600; i++) {
    if ((await state(lock)).queue.some((q) => q.holderId === `${REPO}:${holderRun}:build`)) return;
    await sleep(50);
  }
  throw new Error(`run ${holderRun} never queued on ${lock}`);
}

const pullReads = (n) => emu.log.filter((e) => e.method === 'GET' && e.path === `/repos/${REPO}/pulls/${n}`).length;

test('a queued acquire whose pull request is pushed to leaves with superseded; the waiter behind gets the slot', async () => {
  const n = repo.pulls.open({ headSha: A });
  const first = await acquire('seat', 1);
  assert.equal(first.outputs.acquired, 'true', first.stdout);
  const second = acquire('seat', 2, { 'pull-request': String(n), 'expected-head-sha': A });
  await queued('seat', 2);
  const third = acquire('seat', 3);
  await queued('seat', 3);
  repo.pulls.push(n, B);
  const left = await second;
  assert.equal(left.outputs.result, 'superseded', left.stdout);
  assert.equal(left.outputs.acquired, 'false');
  assert.equal(left.outputs['error-code'], 'head-moved');
  assert.notEqual(left.code, 0, 'the step fails: the work must not run');
  assert.ok((await state('seat')).queue.every((q) => !q.holderId.includes(':2:')), 'its queue entry is gone');
  assert.equal((await release('seat', 1)).outputs.released, 'true');
  const got = await third;
  assert.equal(got.outputs.acquired, 'true', got.stdout);
  await release('seat', 3);
});

test('the push lands between the last poll and the admitting write: caught after admission, the slot goes on', async () => {
  const n = repo.pulls.open({ headSha: A });
  const first = await acquire('seat2', 11);
  assert.equal(first.outputs.acquired, 'true');
  const second = acquire('seat2', 12, { 'pull-request': String(n), 'expected-head-sha': A });
  await queued('seat2', 12);
  const third = acquire('seat2', 13);
  await queued('seat2', 13);
  // The hook fires on the request of the write that admits run 12, before GitHub applies it.
  let pushedAt = null;
  const remove = emu.onRequest(({ method, path, body }) => {
    if (pushedAt || method !== 'PUT' || path !== `/repos/${REPO}/contents/locks/seat2.json`) return;
    const next = JSON.parse(Buffer.from(body.content, 'base64').toString('utf8'));
    if (next.holders.some((h) => h.holderId === `${REPO}:12:build`)) {
      repo.pulls.push(n, B);
      pushedAt = pullReads(n);
    }
  });
  // Setup, not a timing assertion: let the waiter make its read while queued (its first poll)
  // before the release, on a loaded machine too.
  for (let i = 0; i < 600 && pullReads(n) < 1; i++) await sleep(50);
  const readsBefore = pullReads(n);
  await release('seat2', 11); // its write admits run 12
  const left = await second;
  remove();
  assert.ok(pushedAt !== null, 'the admitting write was seen');
  assert.equal(left.outputs.result, 'superseded', left.stdout);
  assert.ok(pullReads(n) > pushedAt, 'read again after admission');
  assert.ok(readsBefore >= 1, 'read while queued');
  const got = await third;
  assert.equal(got.outputs.acquired, 'true', got.stdout);
  assert.deepEqual((await state('seat2')).holders.map((h) => h.holderId), [`${REPO}:13:build`]);
  await release('seat2', 13);
});

test('empty inputs make no pull-request request; check-head says current, superseded or unverified within its budget', async () => {
  const before = emu.log.filter((e) => e.path.includes('/pulls/')).length;
  const plain = await acquire('seat', 21);
  assert.equal(plain.outputs.acquired, 'true');
  await release('seat', 21);
  assert.equal(emu.log.filter((e) => e.path.includes('/pulls/')).length, before, 'no pull-request request at all');

  const n = repo.pulls.open({ headSha: A });
  const check = (inputs) => runAction('check-head', { apiUrl: emu.url, context: jobContext({ repository: REPO, runId: 30 }), inputs });
  const current = await check({ 'pull-request': String(n), 'expected-head-sha': A });
  assert.equal(current.code, 0, current.stdout);
  assert.equal(current.outputs.result, 'current');
  repo.pulls.push(n, B);
  const moved = await check({ 'pull-request': String(n), 'expected-head-sha': A });
  assert.notEqual(moved.code, 0);
  assert.equal(moved.outputs.result, 'superseded');
  assert.equal(moved.outputs['head-sha'], B);
  assert.equal(moved.outputs['exit-code'], '10');
  repo.pulls.close(n, { merged: true });
  const closed = await check({ 'pull-request': String(n), 'expected-head-sha': B });
  assert.equal(closed.outputs.result, 'superseded');
  assert.match(closed.outputs.detail, /merged/);
  const missing = await check({ 'pull-request': '9999', 'expected-head-sha': A });
  assert.equal(missing.outputs.result, 'unverified-head');
  assert.equal(missing.outputs['exit-code'], '17');
  const bad = await check({ 'pull-request': String(n), 'expected-head-sha': 'nope' });
  assert.equal(bad.outputs.status, 'usage');
  assert.match(bad.stdout, /input `expected-head-sha` must be a 40-hex commit sha/);
});
