// A resource pool end to end, process by process: 12 jobs from 3 repositories, each a real
// acquire process, a short hold and a real release process, against 3 resources of caps 1, 2
// and 2 with preference chains and two partitions, in the emulator. Afterwards every commit the
// state branch ever had is checked: no resource above its cap, no two holdings whose partitions
// intersect, every job admitted exactly once, and each told its resource (`resource`,
// `resource-tags`) as the state recorded it. Then a bad config fails before any write.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const POOL = {
  resources: {
    solo: { capacity: 1, tags: ['fast'] },
    'duo-a': { capacity: 2, tags: ['fast', 'gpu'] },
    'duo-b': { capacity: 2, tags: ['gpu'] },
  },
};
const CAPS = { solo: 1, 'duo-a': 2, 'duo-b': 2 };
// Per job: its repository, its preference chain and its partition (two partitions, db and ui).
const JOBS = [
  ['octo/api', 'solo,duo-a', 'db'], ['octo/api', 'fast', 'db'], ['octo/api', 'gpu', ''], ['octo/api', 'solo', 'ui'],
  ['octo/web', 'duo-b,duo-a', 'ui'], ['octo/web', 'gpu', 'ui'], ['octo/web', 'fast', ''], ['octo/web', '', ''],
  ['octo/ops', 'solo', 'db'], ['octo/ops', 'duo-a,solo', ''], ['octo/ops', 'duo-b', 'db'], ['octo/ops', '', 'ui'],
];
let emu;

before(async () => {
  emu = await startEmulator({
    owner: 'octo',
    repo: 'locks',
    files: {
      'locks/pool.config.json': `${JSON.stringify(POOL)}\n`,
      'locks/broken.config.json': '{"resources": {"a": {"capacity": 0}}}\n',
    },
  });
});
after(() => emu.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function job(i) {
  const [repository, prefer, partition] = JOBS[i];
  const context = jobContext({ repository, runId: 7000 + i, job: 'build' });
  const inputs = { lock: 'pool', repository: 'octo/locks', 'poll-seconds': '1', 'timeout-minutes': '5', 'record-job-id': 'false', prefer, partition };
  await sleep(i * 40);
  const acquire = await runAction('acquire', { apiUrl: emu.url, inputs, context });
  // The work under the holding: a real wait (the other jobs are real processes polling on their
  // own clocks), staggered so the releases do not land in one instant.
  if (acquire.outputs.acquired === 'true') await sleep(1200 + ((i * 53) % 900));
  const release = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks' }, context });
  return { i, partition, acquire, release, holderId: acquire.outputs['holder-id'] };
}

const intersect = (a, b) => a.length > 0 && b.length > 0 && (a.includes('*') || b.includes('*') || a.some((x) => b.includes(x)));

test('12 jobs from 3 repositories on a pool of caps 1, 2 and 2 with preference chains and two partitions', async () => {
  const jobs = await Promise.all(JOBS.map((_, i) => job(i)));
  const history = await emu.history('leasehold-state', 'locks/pool.json');
  assert.ok(history.length >= 24, `expected at least 24 commits, got ${history.length}`);
  const admitted = new Map(); // holder id -> { fence, resource }
  let previous = new Set();
  for (const { commit, content } of history) {
    const state = JSON.parse(content);
    for (const [name, cap] of Object.entries(CAPS)) {
      const n = state.holders.filter((h) => h.pool?.resource === name).length;
      assert.ok(n <= cap, `commit ${commit}: ${name} has ${n} holdings, cap ${cap}`);
    }
    state.holders.forEach((a, i) => state.holders.slice(i + 1).forEach((b) => {
      assert.ok(!intersect(a.pool?.partition ?? [], b.pool?.partition ?? []), `commit ${commit}: ${a.holderId} and ${b.holderId} hold intersecting partitions`);
    }));
    for (const h of state.holders) {
      assert.ok(h.pool?.resource in CAPS, `commit ${commit}: ${h.holderId} holds a declared resource`);
      const key = `${h.holderId}#${h.fence}`;
      if (!previous.has(key)) {
        assert.ok(!admitted.has(h.holderId), `${h.holderId} admitted twice`);
        admitted.set(h.holderId, { fence: h.fence, resource: h.pool.resource });
      }
    }
    previous = new Set(state.holders.map((h) => `${h.holderId}#${h.fence}`));
  }
  const final = JSON.parse(history[history.length - 1].content);
  assert.deepEqual([final.holders, final.queue], [[], []], 'nothing left behind');
  for (const j of jobs) {
    assert.equal(j.acquire.outputs.result, 'acquired', `job ${j.i}: ${j.acquire.stdout}`);
    const seen = admitted.get(j.holderId);
    assert.ok(seen, `job ${j.i} was admitted`);
    assert.equal(j.acquire.outputs.fence, String(seen.fence), `job ${j.i}: its fence`);
    assert.equal(j.acquire.outputs.resource, seen.resource, `job ${j.i}: the resource output is the one the state recorded`);
    assert.equal(j.acquire.outputs['resource-tags'], POOL.resources[seen.resource].tags.join(','), `job ${j.i}: resource-tags`);
    assert.equal(j.release.outputs.result, 'released', `job ${j.i}: ${j.release.stdout}`);
  }
  assert.ok(admitted.size === JOBS.length);
});

test('a pool config that breaks a rule fails acquire before any write, naming the rule', async () => {
  const writesBefore = emu.log.filter((q) => q.method !== 'GET').length;
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'broken', repository: 'octo/locks', 'record-job-id': 'false' }, context: jobContext({ runId: 7100 }) });
  assert.equal(a.outputs.result, 'failed');
  assert.equal(a.outputs['error-code'], 'config-invalid');
  assert.match(a.stdout, /pool rule resource-capacity/);
  assert.equal(emu.log.filter((q) => q.method !== 'GET').length, writesBefore, 'nothing written');
});

test('report-usage records a reading, keeps a newer one, refuses an undeclared resource; a rate-limited release backs its resource off; status shows holdings per resource', async () => {
  const at = (offsetMs) => new Date(emu.now() + offsetMs).toISOString().replace(/\.\d+Z$/, 'Z');
  const reading = (extra) => ({ lock: 'pool', repository: 'octo/locks', resource: 'duo-b', used: '0.25', 'window-start': at(-3600000), 'reset-at': at(3600000), 'observed-at': at(-60000), ...extra });
  const recorded = await runAction('report-usage', { apiUrl: emu.url, inputs: reading(), context: jobContext({ runId: 7200 }) });
  assert.equal(recorded.outputs.result, 'recorded', recorded.stdout);
  assert.equal(recorded.outputs.resource, 'duo-b');
  const older = await runAction('report-usage', { apiUrl: emu.url, inputs: reading({ used: '0.9', 'observed-at': at(-120000) }), context: jobContext({ runId: 7201 }) });
  assert.equal(older.outputs.result, 'noop', 'an older reading never replaces a newer one');
  const undeclared = await runAction('report-usage', { apiUrl: emu.url, inputs: reading({ resource: 'nope' }), context: jobContext({ runId: 7202 }) });
  assert.equal(undeclared.outputs['error-code'], 'config-invalid');
  let state = JSON.parse(await emu.readFile('leasehold-state', 'locks/pool.json'));
  assert.equal(state.pool.usage['duo-b'].usedBp, 2500);

  // A job on solo reports a rate limit on release: solo backs off, and the next job that
  // prefers it is given the next resource in its chain.
  const first = jobContext({ repository: 'octo/api', runId: 7300 });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', prefer: 'solo', 'record-job-id': 'false' }, context: first });
  assert.equal(a.outputs.resource, 'solo');
  const status = await runAction('status', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks' }, context: first });
  assert.match(status.summary, /\| resource \| held \|/);
  assert.match(status.summary, /\| `solo` \| 1\/1 \|/);
  assert.match(status.summary, /\| `duo-a` \| 0\/2 \|/);
  const r = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', outcome: 'rate-limited' }, context: first });
  assert.equal(r.outputs.result, 'released');
  state = JSON.parse(await emu.readFile('leasehold-state', 'locks/pool.json'));
  assert.equal(state.pool.backoff.solo.hits, 1);
  const second = jobContext({ repository: 'octo/api', runId: 7301 });
  const b = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', prefer: 'solo,duo-a', 'record-job-id': 'false' }, context: second });
  assert.equal(b.outputs.resource, 'duo-a', 'solo is backing off');
  const ok = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', outcome: 'success' }, context: second });
  assert.equal(ok.outputs.result, 'released');
  state = JSON.parse(await emu.readFile('leasehold-state', 'locks/pool.json'));
  assert.equal(state.pool.backoff.solo.hits, 1, "a success resets only its own resource's backoff");
  const bad = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', outcome: 'meh' }, context: second });
  assert.equal(bad.outputs['error-code'], 'invalid-input');
});

test('a rate-limited renewal that is not due records the outcome and says not-due; the lease stays as it was', async () => {
  const job = jobContext({ repository: 'octo/web', runId: 7400 });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', prefer: 'duo-b', requires: 'gpu', 'record-job-id': 'false' }, context: job });
  assert.equal(a.outputs.resource, 'duo-b', a.stdout);
  const before = JSON.parse(await emu.readFile('leasehold-state', 'locks/pool.json'));
  const expiresAt = before.holders.find((h) => h.holderId === a.outputs['holder-id']).expiresAt;
  const r = await runAction('renew', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', nonce: a.outputs.nonce, 'if-due': 'true', outcome: 'rate-limited' }, context: job });
  assert.equal(r.outputs.result, 'not-due', r.stdout);
  assert.equal(r.outputs.renewed, 'false');
  const after = JSON.parse(await emu.readFile('leasehold-state', 'locks/pool.json'));
  assert.equal(after.revision, before.revision + 1, 'one write: the outcome');
  assert.equal(after.pool.backoff['duo-b'].hits, 1);
  assert.equal(after.holders.find((h) => h.holderId === a.outputs['holder-id']).expiresAt, expiresAt, 'not extended');
  const rel = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'pool', repository: 'octo/locks', outcome: 'success' }, context: job });
  assert.equal(rel.outputs.result, 'released');
});
