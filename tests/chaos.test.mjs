// Chaos run of real processes. 16 jobs, each the real bundles run as the runner runs them
// (dist/acquire.mjs, then dist/guard.mjs holding the lock while its command runs, then
// dist/release.mjs), contend for one capacity-2 lock in the emulator with faults on (5xx,
// lost acknowledgements, branch races, latency, rate limits, on the lock's file and on the
// Actions API the reaper asks). A driver with a seeded PRNG (the seed is printed; CHAOS_SEED=n
// makes the same choices again: fates, delays, reruns, faults; the processes' timing is the
// machine's) SIGKILLs processes at chosen points: while queued (acquire waiting),
// between a write and its answer (the emulator holds the answer of a write that has landed and
// names whose it is), while holding (the guard), during release. The "runner" then reports the
// killed job failed; some killed jobs are rerun as a new attempt (GITHUB_RUN_ATTEMPT + 1). The
// reaper (dist/reap.mjs) runs on a schedule throughout.
//
// Afterwards, from the state branch's FULL history (every commit's state document):
//   - never more holders than the capacity;
//   - fences unique (one holding each) and increasing, the fence counter never going back;
//   - a holding is only ever removed by its own job, unless that job was killed (the reaper's
//     proof, and every lease expiry, only ever free the dead);
//   - every holding of a killed job freed within the stated BOUND: freed by a write whose own
//     clock (`lastChange.at`, GitHub's time) is at most the holding's `expiresAt` + grace + skew
//     (when any writer may evict it) + one reaper period. The bound is computed from the lease
//     times in the state, not from this machine's timing; the lease (60 s) is long next to the
//     reaper period, which frees a dead holder in seconds once its job is reported over;
//   - every job that was never killed acquired and released its own holding (result released);
//   - nothing left behind once the faults stop: after one last reaper run, no holder, no queue.
// Printed: the seed, kills per kind, faults per kind, and the longest time a dead holder kept
// its slot. `npm run chaos` runs this file alone.
//
// How to check that it can fail (done when it was written, seed 415820134; both restored with
// `git checkout crates dist`): in crates/leasehold-core/src/admission/fifo.rs admit while
// `holders.len() < capacity + 1`, `bash .ci/build`, run this file: "3 holders on a capacity-2
// lock". In crates/leasehold-core/src/ops/reap.rs make `Evidence::Active` a `Verdict::Over`
// (a running job taken as over), rebuild, run: "the holding of … whose job was alive, was
// removed by reaper … (reap)".
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const JOBS = 16;
const CAPACITY = 2;
const LOCK = 'chaos';
const LOCK_PATH = new RegExp(`/contents/locks/${LOCK}\\.json$`);
const POLICY = { ttlSeconds: 60, renewSeconds: 20, graceSeconds: 5, maxTtlSeconds: 3600, skewSeconds: 5, minRemainingSeconds: 10 };
const REAP_EVERY_MS = 4000;
/** How late a dead holding may be freed, past its `expiresAt` in the state. */
const BOUND_MS = (POLICY.graceSeconds + POLICY.skewSeconds) * 1000 + REAP_EVERY_MS;
const KILL_KINDS = ['queued', 'write-answer', 'holding', 'release'];

/** mulberry32: a small seeded PRNG. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** A stream of choices of its own for each part of the driver, so they do not depend on the
 *  order in which the concurrent parts happen to draw. */
const stream = (n) => {
  const next = prng((SEED ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0);
  const between = (lo, hi) => Math.floor(lo + next() * (hi - lo));
  return { next, between };
};
const { between } = stream(0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let emu;
before(async () => {
  // No conformance check here (tests/conformance covers these routes elsewhere): it would
  // cost the two cores more than the 16 processes do.
  emu = await startEmulator({
    owner: 'octo',
    repo: 'app',
    conformance: false,
    files: { [`locks/${LOCK}.config.json`]: JSON.stringify({ capacity: CAPACITY, lease: POLICY }) },
    limits: { graphqlPerHour: 1_000_000 },
  });
});
after(() => emu.close());

const stateOf = async () => {
  const text = await emu.readFile('leasehold-state', `locks/${LOCK}.json`);
  return text ? JSON.parse(text) : null;
};

/** The faults, chosen by the seed: each fires once, on the n-th request of its kind. */
function addFaults() {
  const kinds = [
    ['GET 502', 'GET', LOCK_PATH, () => ({ status: 502 }), 10, 300],
    ['GET 429', 'GET', LOCK_PATH, () => ({ status: 429, headers: { 'retry-after': '1' } }), 3, 300],
    ['GET latency', 'GET', LOCK_PATH, () => ({ latencyMs: between(200, 1500) }), 6, 300],
    ['PUT 500', 'PUT', LOCK_PATH, () => ({ status: 500 }), 5, 60],
    ['PUT conflict', 'PUT', LOCK_PATH, () => ({ conflict: true }), 5, 60],
    ['PUT applied, 502', 'PUT', LOCK_PATH, () => ({ applyThen: { status: 502 } }), 4, 60],
    ['PUT applied, reset', 'PUT', LOCK_PATH, () => ({ applyThen: 'reset' }), 4, 60],
    ['PUT latency', 'PUT', LOCK_PATH, () => ({ latencyMs: between(200, 1500) }), 4, 60],
    ['Actions API 502', 'GET', /\/actions\//, () => ({ status: 502 }), 4, 60],
  ];
  const rules = [];
  for (const [name, method, path, action, count, spread] of kinds) {
    for (let k = 0; k < count; k++) rules.push(emu.faults.add({ name, method, path, skip: between(0, spread), action: action() }));
  }
  return rules;
}

const jobs = [];
const byToken = new Map();
const kills = [];

function kill(job, kind) {
  if (!job.child || job.child.exitCode !== null || job.killed) return false;
  job.killed = true;
  job.child.kill('SIGKILL');
  kills.push({ kind, runId: job.runId, attempt: job.attempt, at: emu.now() });
  return true;
}

/** Runs one step of a job; `onSpawn` sees its process. */
function stepOf(job, name, inputs, extra = {}) {
  return runAction(name, {
    apiUrl: emu.url,
    token: job.token,
    inputs: { lock: LOCK, repository: 'octo/app', 'api-max-attempts': '8', 'api-retry-base-ms': '200', ...inputs },
    context: job.context,
    onSpawn: (child) => (job.child = child),
    ...extra,
  });
}

/** One attempt of a job: acquire, hold under the guard, release; killed where its fate says. */
async function attempt(runId, number, fate) {
  const { next, between } = stream(runId * 10 + number);
  const job = { runId, attempt: number, fate, token: `chaos-${runId}-${number}`, context: jobContext({ runId, runAttempt: number }), killed: false, child: null, steps: {} };
  job.holderId = `octo/app:${runId}:build`;
  jobs.push(job);
  byToken.set(job.token, job);
  const runner = { name: 'build', runnerName: job.context.RUNNER_NAME };
  if (number === 1) await emu.actions.startRun(runId, { jobs: [runner] });
  else emu.actions.rerun(runId, { jobs: [runner] });

  const acquiring = stepOf(job, 'acquire', { 'poll-seconds': '1', 'timeout-minutes': '5' });
  if (fate === 'queued') {
    // Killed once it waits in the queue (or, if it was admitted at once, while it holds).
    for (let i = 0; i < 600 && job.child?.exitCode === null; i++) {
      const st = await stateOf();
      if (st?.queue.some((q) => q.holderId === job.holderId && q.run?.runAttempt === number)) {
        await sleep(between(0, 1500));
        kill(job, 'queued');
        break;
      }
      await sleep(100);
    }
  }
  job.steps.acquire = await acquiring;
  if (!job.killed && job.steps.acquire.outputs.acquired === 'true') {
    const holding = stepOf(job, 'guard', { nonce: job.steps.acquire.outputs.nonce, command: `sleep\n${between(1, 3)}` });
    if (fate === 'holding' || fate === 'queued') setTimeout(() => kill(job, 'holding'), between(200, 1200));
    job.steps.guard = await holding;
  }
  if (!job.killed) {
    const releasing = stepOf(job, 'release', {});
    if (fate === 'release') setTimeout(() => kill(job, 'release'), between(0, 800));
    job.steps.release = await releasing;
  }
  if (!job.killed) {
    emu.actions.complete(runId, number, 'success');
    return job;
  }
  // The runner reports the job failed, a moment later; the job may be rerun.
  await sleep(between(200, 2000));
  emu.actions.complete(runId, number, 'failure');
  job.completedAt = emu.now();
  if (number === 1 && next() < 0.5) await attempt(runId, 2, null);
  return job;
}

/** Holds the answer of landed writes, one at a time, and kills a writer whose fate says so. */
async function answerGate(done) {
  const { next, between } = stream(1);
  while (!done.settled) {
    const rule = emu.faults.add({ name: 'answer held', method: 'PUT', path: LOCK_PATH, action: { pause: true, at: 'afterApply' } });
    const info = await Promise.race([rule.paused, done.promise]);
    const job = info && byToken.get(info.token);
    if (job?.fate === 'write-answer' && next() < 0.6) kill(job, 'write-answer');
    rule.remove();
    await sleep(between(0, 300));
  }
}

async function reaper(done, runs) {
  while (!done.settled) {
    const startedAt = emu.now();
    const r = await runAction('reap', { apiUrl: emu.url, token: 'chaos-reaper', inputs: { lock: LOCK, repository: 'octo/app', 'api-retry-base-ms': '200' } });
    runs.push({ startedAt, result: r.outputs.result, removed: Number(r.outputs.removed || 0) });
    await Promise.race([sleep(Math.max(0, REAP_EVERY_MS - (emu.now() - startedAt))), done.promise]);
  }
}

test(`chaos: ${JOBS} real processes on a capacity-${CAPACITY} lock, killed at random, faults on, the reaper on a schedule`, { timeout: 240_000 }, async () => {
  console.log(`chaos seed ${SEED} (CHAOS_SEED=${SEED} makes the same choices again)`);
  // The first use of the lock creates its state branch: once in its life, before the contention.
  const warm = { runId: 1, context: jobContext({ runId: 1 }) };
  await emu.actions.startRun(1, { jobs: [{ name: 'build', runnerName: warm.context.RUNNER_NAME }] });
  await stepOf(warm, 'acquire', {});
  await stepOf(warm, 'release', {});
  emu.actions.complete(1, 1, 'success');

  const fates = [...KILL_KINDS, ...KILL_KINDS, ...KILL_KINDS, null, null, null, null];
  for (let i = fates.length - 1; i > 0; i--) {
    const j = between(0, i + 1);
    [fates[i], fates[j]] = [fates[j], fates[i]];
  }
  const rules = addFaults();
  let settle;
  const done = { settled: false, promise: new Promise((r) => (settle = r)) };
  const reapRuns = [];
  const background = [answerGate(done), reaper(done, reapRuns)];
  const finished = await Promise.all(
    fates.map(async (fate, i) => {
      await sleep(i * 300); // runners pick the jobs up one by one
      return attempt(5000 + i, 1, fate);
    }),
  );
  assert.equal(finished.length, JOBS);
  // The faults stop; the scheduled reaper stops; one last reaper run.
  emu.faults.clear();
  done.settled = true;
  settle(null);
  await Promise.all(background);
  const last = await runAction('reap', { apiUrl: emu.url, token: 'chaos-reaper', inputs: { lock: LOCK, repository: 'octo/app' } });
  assert.equal(last.outputs.result, 'reaped', last.stdout);

  const report = await checkHistory();
  const faultsByKind = {};
  for (const r of rules) faultsByKind[r.name] = (faultsByKind[r.name] ?? 0) + r.fired;
  const killsByKind = Object.fromEntries(KILL_KINDS.map((k) => [k, kills.filter((x) => x.kind === k).length]));
  const reruns = jobs.filter((j) => j.attempt === 2).length;
  console.log(`chaos: ${jobs.length - 1} attempts (${reruns} reruns), ${report.commits} commits, ${emu.log.length} requests, max ${report.maxHolders} holders, last fence ${report.lastFence}, ${report.gaveUp} acquires gave up under the faults`);
  console.log(`chaos kills: ${kills.length} (${Object.entries(killsByKind).map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`chaos faults: ${Object.values(faultsByKind).reduce((a, b) => a + b, 0)} fired (${Object.entries(faultsByKind).map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`chaos reaper: ${reapRuns.length + 1} runs, ${reapRuns.reduce((n, r) => n + r.removed, 0) + Number(last.outputs.removed || 0)} holdings removed`);
  console.log(`chaos: ${report.dead} dead holdings; the longest a dead holder kept its slot: ${(report.longestDeadMs / 1000).toFixed(1)} s after its kill (the bound: freed by ${BOUND_MS / 1000} s past the expiresAt of its ${POLICY.ttlSeconds} s lease)`);
  assert.ok(kills.length >= 6, `the driver killed processes (${kills.length})`);
});

/** Checks every committed version of the lock's state against the run's record. */
async function checkHistory() {
  const history = await emu.history('leasehold-state', `locks/${LOCK}.json`);
  const states = history.map(({ commit, content }) => ({ commit, state: JSON.parse(content) }));
  const killed = new Map(kills.map((k) => [`${k.runId}#${k.attempt}`, k]));
  const key = (h) => `${h.holderId}#${h.fence}`;
  const attemptOf = (h) => `${h.run.runId}#${h.run.runAttempt}`;
  const fenceOwner = new Map();
  const lastSeen = new Map(); // holding key -> { index, holder }
  let lastFence = 0;
  let counter = 0;
  let maxHolders = 0;
  let previous = new Map();
  for (const [index, { commit, state }] of states.entries()) {
    assert.ok(state.holders.length <= CAPACITY, `commit ${commit}: ${state.holders.length} holders on a capacity-${CAPACITY} lock`);
    maxHolders = Math.max(maxHolders, state.holders.length);
    assert.ok(state.fence >= counter, `commit ${commit}: the fence counter went back from ${counter} to ${state.fence}`);
    counter = state.fence;
    const current = new Map(state.holders.map((h) => [key(h), h]));
    const newcomers = state.holders.filter((h) => !previous.has(key(h))).sort((a, b) => a.fence - b.fence);
    for (const h of newcomers) {
      assert.ok(!fenceOwner.has(h.fence), `commit ${commit}: fence ${h.fence} handed out twice (${fenceOwner.get(h.fence)}, ${h.holderId} attempt ${h.run.runAttempt})`);
      assert.ok(h.fence > lastFence, `commit ${commit}: fence ${h.fence} of ${h.holderId} is not above the last fence ${lastFence}`);
      assert.ok(h.fence <= state.fence, `commit ${commit}: fence ${h.fence} above the counter ${state.fence}`);
      fenceOwner.set(h.fence, `${h.holderId} attempt ${h.run.runAttempt}`);
      lastFence = h.fence;
    }
    for (const [k, h] of previous) {
      if (current.has(k)) continue;
      // Gone: by its own job's write, or it belonged to a job that was killed.
      const own = state.lastChange.by === h.holderId;
      assert.ok(own || killed.has(attemptOf(h)), `commit ${commit}: the holding of ${h.holderId} (attempt ${h.run.runAttempt}, fence ${h.fence}), whose job was alive, was removed by ${state.lastChange.by} (${state.lastChange.action})`);
    }
    for (const [k, h] of current) lastSeen.set(k, { index, holder: h });
    previous = current;
  }
  const final = states.at(-1).state;
  assert.deepEqual(final.holders, [], 'no holder left behind once the faults stopped');
  assert.deepEqual(final.queue, [], 'no queue entry left behind once the faults stopped');

  // Every dead holding freed within the bound; the longest a dead holder kept its slot.
  let longestDeadMs = 0;
  let dead = 0;
  for (const [k, { index, holder }] of lastSeen) {
    const kill = killed.get(attemptOf(holder));
    if (!kill) continue;
    const freedBy = states[index + 1].state.lastChange;
    const freedAt = Date.parse(freedBy.at);
    const deadline = Date.parse(holder.expiresAt) + BOUND_MS;
    assert.ok(freedAt <= deadline, `the dead holding ${k} was freed at ${freedBy.at} (${freedBy.action}), past its bound ${new Date(deadline).toISOString()}`);
    if (freedAt > kill.at) dead++;
    longestDeadMs = Math.max(longestDeadMs, freedAt - kill.at);
  }
  // Every attempt that was never killed and was told it holds released its own holding (the
  // faults may make an acquire give up: it then failed, holding nothing it knows of, and its
  // release cleans whatever its last write left).
  let gaveUp = 0;
  for (const job of jobs.filter((j) => !j.killed && j.runId !== 1)) {
    const a = job.steps.acquire;
    const r = job.steps.release.outputs.result;
    if (a.outputs.acquired === 'true') {
      assert.equal(r, 'released', `job ${job.runId} attempt ${job.attempt}: its release found its holding\n${job.steps.release.stdout}`);
    } else {
      gaveUp++;
      assert.equal(a.outputs.result, 'failed', `job ${job.runId} attempt ${job.attempt}: acquire ${a.outputs.result}\n${a.stdout}`);
      assert.ok(['released', 'noop', 'queue-cleaned'].includes(r), `job ${job.runId} attempt ${job.attempt}: release ${r}\n${job.steps.release.stdout}`);
    }
  }
  return { commits: states.length, maxHolders, lastFence, longestDeadMs, dead, gaveUp };
}
