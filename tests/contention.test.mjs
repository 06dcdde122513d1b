// Contention: many jobs, each a real acquire process, a short hold and a real release process,
// against one capacity-2 lock in the emulator. Afterwards every commit the state branch ever had
// is checked: never more than 2 holders, fences strictly increasing and never repeated, every
// job admitted exactly once, and nothing left behind. Then the same with faults injected.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const CAPACITY = 2;
const JOBS = 8;
let emu;

before(async () => {
  emu = await startEmulator({
    owner: 'octo',
    repo: 'app',
    files: { 'locks/seats.config.json': `{"capacity": ${CAPACITY}}\n`, 'locks/seats-faulty.config.json': `{"capacity": ${CAPACITY}}\n` },
  });
});
after(() => emu.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function job(lock, i) {
  const context = jobContext({ repository: `octo/repo-${i % 3}`, runId: 3000 + i, job: 'build' });
  const inputs = { lock, repository: 'octo/app', 'poll-seconds': '1', 'timeout-minutes': '5' };
  const acquire = await runAction('acquire', { apiUrl: emu.url, inputs, context });
  const held = acquire.outputs.acquired === 'true';
  // The work under the lock: a real wait, as a job's critical section takes real time. It is not
  // write spacing and not GitHub's clock: the other jobs are real processes that poll on their
  // own clocks, and this hold is what makes them queue behind a full lock and be admitted by a
  // release (staggered, so the releases do not all land in one instant).
  if (held) await sleep(1500 + ((i * 37) % 1000));
  const release = await runAction('release', { apiUrl: emu.url, inputs: { lock, repository: 'octo/app' }, context });
  return { i, acquire, release, holderId: acquire.outputs['holder-id'] };
}

/** Checks every committed version of the lock's state; returns a summary. */
async function checkHistory(lock, jobs) {
  const history = await emu.history('leasehold-state', `locks/${lock}.json`);
  assert.ok(history.length >= JOBS * 2, `expected at least ${JOBS * 2} commits, got ${history.length}`);
  let lastFence = 0;
  let lastRevision = 0;
  let maxHolders = 0;
  const fenceOf = new Map(); // holder id -> the fence it was admitted with
  const admissions = new Map(); // holder id -> times admitted
  let previousHolders = new Set();
  for (const { commit, content } of history) {
    const state = JSON.parse(content);
    assert.ok(state.holders.length <= CAPACITY, `commit ${commit} has ${state.holders.length} holders`);
    maxHolders = Math.max(maxHolders, state.holders.length);
    assert.ok(state.revision > lastRevision, `revision did not grow at ${commit}`);
    lastRevision = state.revision;
    assert.ok(state.fence >= lastFence, `fence counter went back at ${commit}`);
    const newcomers = state.holders.filter((h) => !previousHolders.has(`${h.holderId}#${h.fence}`)).sort((a, b) => a.fence - b.fence);
    for (const h of newcomers) {
      assert.ok(h.fence > lastFence, `fence ${h.fence} of ${h.holderId} at ${commit} is not above the last fence ${lastFence}`);
      lastFence = h.fence;
      admissions.set(h.holderId, (admissions.get(h.holderId) ?? 0) + 1);
      fenceOf.set(h.holderId, h.fence);
    }
    previousHolders = new Set(state.holders.map((h) => `${h.holderId}#${h.fence}`));
  }
  const final = JSON.parse(history[history.length - 1].content);
  assert.deepEqual(final.holders, [], 'no holder left behind');
  assert.deepEqual(final.queue, [], 'no queue entry left behind');
  for (const j of jobs) {
    assert.equal(j.acquire.outputs.result, 'acquired', `job ${j.i}: ${j.acquire.stdout}`);
    assert.equal(admissions.get(j.holderId), 1, `job ${j.i} admitted ${admissions.get(j.holderId)} times`);
    assert.equal(String(fenceOf.get(j.holderId)), j.acquire.outputs.fence, `job ${j.i}: the fence it reported is the fence it was admitted with`);
    assert.equal(j.release.outputs.result, 'released', `job ${j.i}: ${j.release.stdout}`);
  }
  return { commits: history.length, maxHolders, lastFence };
}

test(`${JOBS} concurrent jobs on a capacity-${CAPACITY} lock`, async () => {
  const start = emu.log.length;
  const jobs = await Promise.all(Array.from({ length: JOBS }, (_, i) => job('seats', i)));
  const summary = await checkHistory('seats', jobs);
  assert.equal(summary.maxHolders, CAPACITY, 'the lock was used to capacity');
  const requests = emu.log.slice(start);
  const conflicts = requests.filter((r) => r.status === 409).length;
  console.log(`# contention: ${summary.commits} commits, ${requests.length} requests, ${conflicts} conflicts`);
});

test(`${JOBS} concurrent jobs with lost acknowledgements and 5xx injected`, async () => {
  const start = emu.log.length;
  const rules = [];
  for (let k = 0; k < 6; k++) {
    rules.push(emu.faults.add({ method: 'PUT', path: /seats-faulty/, skip: 2 + k * 4, action: { applyThen: k % 2 ? 'reset' : { status: 502 } } }));
    rules.push(emu.faults.add({ method: 'PUT', path: /seats-faulty/, skip: 4 + k * 5, action: { status: 500 } }));
    rules.push(emu.faults.add({ method: 'GET', path: /seats-faulty/, skip: 3 + k * 7, action: { status: 502 } }));
  }
  try {
    const jobs = await Promise.all(Array.from({ length: JOBS }, (_, i) => job('seats-faulty', i)));
    await checkHistory('seats-faulty', jobs);
  } finally {
    emu.faults.clear();
  }
  const fired = rules.reduce((n, r) => n + r.fired, 0);
  assert.ok(fired >= 6, `expected faults to fire, ${fired} did`);
  const requests = emu.log.slice(start);
  console.log(`# contention with faults: ${fired} faults injected over ${requests.length} requests`);
});

test('16 jobs under GitHub limits enforced by the emulator provoke no 403 or 429', async () => {
  const limited = await startEmulator({
    owner: 'octo',
    repo: 'app',
    files: { 'locks/seats.config.json': `{"capacity": ${CAPACITY}}\n` },
    limits: { primaryPerHour: 5000, contentPerMinute: 80, contentPerHour: 500 },
  });
  try {
    // The lock's first use (creating its state branch) happens once in its life; warm it up so
    // this test measures contention.
    const warm = jobContext({ runId: 8999 });
    await runAction('acquire', { apiUrl: limited.url, inputs: { lock: 'seats', repository: 'octo/app' }, context: warm });
    await runAction('release', { apiUrl: limited.url, inputs: { lock: 'seats', repository: 'octo/app' }, context: warm });
    const from = limited.log.length;
    const jobs = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const context = jobContext({ repository: `octo/repo-${i % 4}`, runId: 9000 + i });
        const inputs = { lock: 'seats', repository: 'octo/app', 'poll-seconds': '1', 'timeout-minutes': '5' };
        await sleep(i * 200); // jobs of a workflow start within seconds of each other (runners are assigned one by one), not in one millisecond
        const a = await runAction('acquire', { apiUrl: limited.url, inputs, context });
        await sleep(100);
        const r = await runAction('release', { apiUrl: limited.url, inputs: { lock: 'seats', repository: 'octo/app' }, context });
        return { a, r };
      }),
    );
    for (const { a, r } of jobs) {
      assert.equal(a.outputs.result, 'acquired', a.stdout);
      assert.equal(r.outputs.result, 'released', r.stdout);
    }
    const log = limited.log.slice(from);
    const refused = limited.log.filter((q) => q.status === 403 || q.status === 429);
    assert.deepEqual(refused, [], 'leasehold itself never ran into a rate limit');
    const writes = log.filter((q) => q.method !== 'GET').length;
    console.log(`# 16 jobs under enforced limits: ${log.length} requests, ${writes} content-generating, 0 refused`);
  } finally {
    await limited.close();
  }
});
