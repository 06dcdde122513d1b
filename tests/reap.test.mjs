// Holders that die outright (SIGKILL: no release step, no post step) and the two things that free
// them: the reaper (actions/reap, dist/cli.mjs reap), once the Actions API proves their run or
// job is over, and, with no reaper at all, the lease running out. A live holder is never freed
// by the reaper, also when the Actions API fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';
import { killPid, readPid } from './helpers/pid-file.mjs';

// A short lease, so a renewal tick is seconds away; the expiry test moves GitHub's clock instead
// of waiting.
const POLICY = { ttlSeconds: 60, renewSeconds: 20, graceSeconds: 5, maxTtlSeconds: 3600, skewSeconds: 5, minRemainingSeconds: 10 };
let emu;
let seq = 0;
let scratch;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-reap-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const stateOf = async (e, lock) => JSON.parse(await e.readFile('leasehold-state', `locks/${lock}.json`));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function newLock(e, name) {
  await e.writeFile(e.defaultBranch, `locks/${name}.config.json`, JSON.stringify({ capacity: 1, lease: POLICY }));
  return name;
}

/** A job whose run GitHub reports running, with one job of this name on this runner. */
async function runningJob(e, runId, job = 'build') {
  const context = jobContext({ runId, job });
  const [jobId] = await e.actions.startRun(runId, { jobs: [{ name: job, runnerName: context.RUNNER_NAME }] });
  return { context, jobId };
}

/**
 * A holder mid-lease, killed outright: acquire, then the guarded work (`dist/cli.mjs guard`), then
 * SIGKILL to the guard and its command. Nothing of the job runs after that.
 */
async function killedHolder(e, lock, runId) {
  const { context, jobId } = await runningJob(e, runId);
  const a = await runAction('acquire', { apiUrl: e.url, inputs: { lock }, context });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  const pidFile = join(scratch, `pid-${++seq}`);
  const guard = spawn(
    process.execPath,
    [join(ROOT, 'dist/cli.mjs'), 'guard', '--lock', lock, '--nonce', a.outputs.nonce, '--', 'sh', '-c', `sleep 300 & echo $! > ${pidFile}; wait`],
    { env: { PATH: process.env.PATH, ...context, GITHUB_API_URL: e.url, GITHUB_TOKEN: 'test-token' }, stdio: 'ignore' },
  );
  const work = await readPid(pidFile);
  const gone = new Promise((r) => guard.on('close', r));
  guard.kill('SIGKILL');
  killPid(work, 'SIGKILL');
  await gone;
  return { context, jobId, holderId: a.outputs['holder-id'] };
}

function reapCli(e, locks, extra = []) {
  return new Promise((resolve, reject) => {
    const args = [join(ROOT, 'dist/cli.mjs'), 'reap', ...locks.flatMap((l) => ['--lock', l]), '--repository', 'octo/app', ...extra];
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, GITHUB_API_URL: e.url, GITHUB_TOKEN: 'test-token' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, out: stdout.trim() ? JSON.parse(stdout.trim().split('\n').at(-1)) : null }));
  });
}

const verdicts = (report) => JSON.parse(report).flatMap((r) => r.entries.map((x) => `${x.holderId} ${x.action} ${x.reason}`));

describe('the reaper', { concurrency: 2, timeout: 120_000 }, () => {
  test('a holder killed with SIGKILL is kept while its job runs, and freed (slot handed on) once the job completes', async () => {
    const lock = await newLock(emu, 'reap-killed');
    const dead = await killedHolder(emu, lock, 8101);
    let state = await stateOf(emu, lock);
    assert.equal(state.holders[0].run.jobId, dead.jobId, 'acquire recorded the numeric job id');
    // A second job waits; a third waiter is killed while waiting (no post step) and its run ends.
    const waiter = await runningJob(emu, 8102);
    const waiting = runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'poll-seconds': '1', 'timeout-minutes': '2' }, context: waiter.context });
    const lost = await runningJob(emu, 8103);
    const killedWaiter = new AbortController();
    const lostRun = runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'poll-seconds': '1' }, context: lost.context, signal: killedWaiter.signal }).catch(() => {});
    for (let i = 0; i < 200 && (await stateOf(emu, lock)).queue.length < 2; i++) await sleep(100);
    killedWaiter.abort();
    await lostRun;
    await emu.actions.complete(8103, 1, 'cancelled');

    // The holder's job is still running as far as GitHub knows: kept. The dead waiter: removed.
    const first = await runAction('reap', { apiUrl: emu.url, inputs: { lock } });
    assert.equal(first.outputs.result, 'reaped', first.stdout);
    assert.deepEqual(verdicts(first.outputs.report).sort(), [
      `${dead.holderId} kept active`,
      `octo/app:8102:build kept active`,
      `octo/app:8103:build removed job-completed`,
    ]);
    state = await stateOf(emu, lock);
    assert.deepEqual(state.holders.map((h) => h.holderId), [dead.holderId]);
    assert.deepEqual(state.queue.map((q) => q.holderId), ['octo/app:8102:build']);

    // GitHub marks the lost job failed: the reaper frees the holding and hands the slot on.
    emu.actions.setJob(dead.jobId, { status: 'completed', conclusion: 'failure' });
    const second = await runAction('reap', { apiUrl: emu.url, inputs: { lock } });
    assert.equal(second.outputs.result, 'reaped', second.stdout);
    assert.equal(second.outputs.removed, '1');
    assert.match(second.summary, /\| removed \| job-completed \| `octo\/app:8101:build` \| holding \(fence 1\) \|/);
    state = await stateOf(emu, lock);
    assert.equal(state.lastChange.action, 'reap');
    assert.deepEqual(state.lastChange.removed.map((r) => [r.holderId, r.reason]), [[dead.holderId, 'job-completed']]);
    assert.deepEqual(state.holders.map((h) => [h.holderId, h.fence]), [['octo/app:8102:build', 2]]);
    const w = await waiting;
    assert.equal(w.outputs.result, 'acquired', w.stdout);
  });

  test('a live holder is never freed, also when the Actions API fails or refuses', async () => {
    const lock = await newLock(emu, 'reap-live');
    const live = await runningJob(emu, 8201);
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock }, context: live.context });
    assert.equal(a.outputs.result, 'acquired');
    for (const action of [{ status: 502 }, { status: 403, body: { message: 'Resource not accessible by integration' } }, { status: 404 }]) {
      const rule = emu.faults.add({ method: 'GET', path: new RegExp(`/actions/jobs/${live.jobId}$`), times: Infinity, action });
      const r = await runAction('reap', { apiUrl: emu.url, inputs: { lock, 'api-retry-max-ms': '1000' } });
      rule.remove();
      assert.equal(r.outputs.result, 'reaped', r.stdout);
      assert.deepEqual(verdicts(r.outputs.report), [`${a.outputs['holder-id']} kept unverified`], `${action.status}`);
      assert.equal((await stateOf(emu, lock)).holders.length, 1);
    }
    // And with the API answering: running, kept.
    const r = await reapCli(emu, [lock]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.out.outcome.reaped[0].entries.map((x) => [x.action, x.reason]), [['kept', 'active']]);
    const released = await runAction('release', { apiUrl: emu.url, inputs: { lock }, context: live.context });
    assert.equal(released.outputs.result, 'released', 'the holding is intact: its own release frees it');
  });

  test('a rate limit on the Actions API stops the questions: what was proven is written, the step fails', async () => {
    const lock = await newLock(emu, 'reap-limited');
    // Three holdings on a capacity-3 lock, from runs 8501..8503; run 8501 is over; the question
    // about run 8502 is rate limited.
    await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 3, lease: POLICY }));
    const ids = [];
    for (const runId of [8501, 8502, 8503]) {
      const { context } = await runningJob(emu, runId);
      const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context });
      assert.equal(a.outputs.result, 'acquired', a.stdout);
      ids.push(a.outputs['holder-id']);
    }
    await emu.actions.complete(8501, 1, 'failure');
    const rule = emu.faults.add({ method: 'GET', path: /\/actions\/runs\/8502\//, times: Infinity, action: { status: 429, headers: { 'retry-after': '2' }, body: { message: 'You have exceeded a secondary rate limit.' } } });
    const r = await runAction('reap', { apiUrl: emu.url, inputs: { lock } });
    rule.remove();
    assert.equal(r.code, 1);
    assert.equal(r.outputs.result, 'failed');
    assert.equal(r.outputs['error-code'], 'rate-limited');
    assert.equal(r.outputs.removed, '1');
    assert.match(r.stdout, /asking no more questions in this reap/);
    assert.deepEqual((await stateOf(emu, lock)).holders.map((h) => h.holderId), ids.slice(1), 'the proven removal was written; the rest left as it is');
    assert.equal(emu.log.filter((q) => q.path.includes('/actions/runs/8503/')).length, 0, 'no question after the rate limit');
  });

  test('without a recorded job id the run attempt decides; one reap covers several locks; bad input names the input', async () => {
    const lock = await newLock(emu, 'reap-run-level');
    const { context } = await runningJob(emu, 8301);
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context });
    assert.equal((await stateOf(emu, lock)).holders[0].run.jobId, undefined);
    await emu.actions.complete(8301, 1, 'failure');
    const r = await reapCli(emu, [lock, 'reap-nothing-here']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.out.outcome.reaped.map((x) => x.lock), [lock, 'reap-nothing-here']);
    assert.deepEqual(r.out.outcome.reaped[0].entries.map((x) => [x.holderId, x.action, x.reason]), [[a.outputs['holder-id'], 'removed', 'run-completed']]);
    assert.deepEqual((await stateOf(emu, lock)).holders, []);
    const bad = await runAction('reap', { apiUrl: emu.url, inputs: { lock: 'ok\nnot/ok' } });
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /\[lock\]/);
  });
});

describe('expiry alone, with no reaper', { timeout: 120_000 }, () => {
  test('a holder killed with SIGKILL is freed by the next acquire once ttl + grace + skew have passed on GitHub clock, not before', async () => {
    // GitHub's clock runs `offset` ahead of this machine's: moving it stands in for waiting.
    let offset = 0;
    const e = await startEmulator({ owner: 'octo', repo: 'app', now: () => Date.now() + offset });
    try {
      const lock = await newLock(e, 'expiry');
      const dead = await killedHolder(e, lock, 8401);
      const { expiresAt } = (await stateOf(e, lock)).holders[0];
      const waiter = await runningJob(e, 8402);
      const waiting = runAction('acquire', { apiUrl: e.url, inputs: { lock, 'poll-seconds': '1', 'timeout-minutes': '2' }, context: waiter.context });
      for (let i = 0; i < 100 && (await stateOf(e, lock)).queue.length < 1; i++) await sleep(100);
      // Past expiresAt, but within grace + skew (10 s): the holding stands. The waiter is a real
      // process polling on its own clock, so wait (bounded) until it has read the lock twice by
      // the moved clock: it judged the holding at least once then, and did not take it (a take
      // is a write that ends the acquire, never followed by another read).
      offset = Date.parse(expiresAt) - Date.now() + 4_000;
      const mark = e.log.at(-1).seq;
      const looks = () => e.log.filter((q) => q.seq > mark && q.method === 'GET' && q.path.includes(`/contents/locks/${lock}.json`)).length;
      for (let i = 0; i < 100 && looks() < 2; i++) await sleep(100);
      assert.ok(looks() >= 2, `the waiter read the lock ${looks()} time(s) by the moved clock, not twice: did it take the holding?`);
      assert.deepEqual((await stateOf(e, lock)).holders.map((h) => h.holderId), [dead.holderId], 'not taken within grace and skew');
      // Past expiresAt + grace + skew: the next poll takes it.
      offset = Date.parse(expiresAt) - Date.now() + (POLICY.graceSeconds + POLICY.skewSeconds + 2) * 1000;
      const w = await waiting;
      assert.equal(w.outputs.result, 'acquired', w.stdout);
      const state = await stateOf(e, lock);
      assert.deepEqual(state.lastChange.removed.map((r) => [r.holderId, r.reason]), [[dead.holderId, 'lease-expired']]);
    } finally {
      await e.close();
    }
  });
});
