// The guard (dist/cli.mjs guard, and actions/guard): a child runs under a live holding; the
// guard renews on the core's schedule and stops the child's process group when the holding is
// taken over or when renewals stop answering past the local deadline, but not on a transient
// renewal failure. The lock's lease here is short (30 s, renewed every 10 s) so the tests see
// real renewal ticks.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';
import { readPid } from './helpers/pid-file.mjs';

const POLICY = { ttlSeconds: 30, renewSeconds: 10, graceSeconds: 0, maxTtlSeconds: 3600, skewSeconds: 0, minRemainingSeconds: 3 };
let emu;
let seq = 0;
let scratch;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-guard-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));

/** A fresh lock with the short lease policy, held by a new job. */
async function held() {
  const lock = `guarded-${++seq}`;
  await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1, lease: POLICY }));
  const context = jobContext({ runId: 7000 + seq });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock }, context });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  return { lock, context, holderId: a.outputs['holder-id'], nonce: a.outputs.nonce };
}

/**
 * Runs `node dist/cli.mjs guard … -- command…`; resolves to { code, events, stderr, ms }. The
 * returned promise also has `.started`, which resolves when the guard prints its first line
 * (the holding is verified and the command spawned).
 */
function cliGuard({ lock, context, holderId, nonce }, command) {
  const started = Date.now();
  let markStarted;
  const startedPromise = new Promise((r) => (markStarted = r));
  const run = new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), 'guard', '--lock', lock, '--holder-id', holderId, '--nonce', nonce, '--kill-grace-seconds', '2', '--', ...command], {
      env: { PATH: process.env.PATH, ...context, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('\n')) markStarted();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      markStarted();
      const events = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      resolve({ code, events, stderr, ms: Date.now() - started });
    });
  });
  run.started = startedPromise;
  return run;
}

const sleeper = (seconds, pidFile) =>
  pidFile
    ? ['sh', '-c', `sleep ${seconds} & echo $! > ${pidFile}; wait`]
    : [process.execPath, '-e', `setTimeout(() => {}, ${seconds * 1000})`];

/** Whether a process is still running (a zombie, dead but not yet reaped, is not). */
const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
};

describe('guard', { concurrency: 6, timeout: 120_000 }, () => {
  test('runs the command to its end, renewing the lease meanwhile, and passes its exit code through', async () => {
    const h = await held();
    const before = (await stateOf(h.lock)).holders[0].expiresAt;
    const g = await cliGuard(h, [process.execPath, '-e', 'setTimeout(() => process.exit(3), 12000)']);
    assert.equal(g.code, 3, g.stderr);
    assert.equal(g.events[0].event, 'guard-start');
    assert.equal(g.events[0].holderId, h.holderId);
    const end = g.events.at(-1);
    assert.deepEqual([end.event, end.reason, end.exitCode, end.childExitCode], ['guard-exit', 'child-exited', 3, 3]);
    assert.ok(end.renewals >= 1, `renewed ${end.renewals} times`);
    const after = (await stateOf(h.lock)).holders[0].expiresAt;
    // Renewed about 10 s after acquire: the lease moved forward by about that (GitHub's clock is
    // read to the second, and stamped by its lower bound).
    assert.ok(Date.parse(after) >= Date.parse(before) + 5_000, `expiresAt moved from ${before} to ${after}`);
  });

  test('stops the whole process group when the holding is taken over (exit 13, reason lost)', async () => {
    const h = await held();
    const pidFile = join(scratch, `pid-${seq}`);
    const run = cliGuard(h, sleeper(60, pidFile));
    await run.started;
    const grandchild = await readPid(pidFile);
    // Another claim takes the holding over (as a rerun would).
    const state = await stateOf(h.lock);
    state.revision += 1;
    state.holders[0].nonce = 'ffffffffffffffff';
    await emu.writeFile('leasehold-state', `locks/${h.lock}.json`, `${JSON.stringify(state, null, 2)}\n`);
    const g = await run;
    assert.equal(g.code, 13, g.stderr);
    assert.equal(g.events.at(-1).reason, 'lost');
    assert.match(g.stderr, /belongs to another claim/);
    assert.ok(g.ms < 25_000, `stopped after ${g.ms} ms (at the first renewal, ~10 s)`);
    for (let i = 0; i < 40 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(alive(grandchild), false, 'the grandchild in the process group was stopped too');
  });

  test('stops the command at the local deadline when renewals stop answering (exit 13, reason deadline)', async () => {
    const h = await held();
    const run = cliGuard(h, sleeper(120));
    await run.started;
    const rule = emu.faults.add({ method: 'GET', path: new RegExp(`locks/${h.lock}\\.json$`), times: Infinity, action: { status: 502 } });
    try {
      const g = await run;
      assert.equal(g.code, 13, g.stderr);
      assert.equal(g.events.at(-1).reason, 'deadline');
      assert.match(g.stderr, /renewal failed/);
      // The deadline is expiresAt - 3 s, about 27 s after the verification.
      assert.equal(g.events[0].event, 'guard-start');
      const deadline = Date.parse(g.events[0].localDeadline);
      const end = Date.now();
      // The stop begins a kill grace (2 s here) before the deadline, so the command is gone by it.
      assert.ok(end >= deadline - 2_000, `not stopped before deadline - kill grace (${end - deadline} ms after the deadline)`);
      assert.ok(end < deadline + 15_000, `stopped soon after the deadline (${end - deadline} ms after)`);
      assert.ok(rule.fired >= 2);
    } finally {
      rule.remove();
    }
  });

  test('a transient renewal failure does not stop the command', async () => {
    const h = await held();
    const run = cliGuard(h, sleeper(14));
    await run.started;
    const rule = emu.faults.add({ method: 'GET', path: new RegExp(`locks/${h.lock}\\.json$`), times: 2, action: { status: 502 } });
    const g = await run;
    assert.equal(rule.fired, 2);
    assert.equal(g.code, 0, g.stderr);
    assert.equal(g.events.at(-1).reason, 'child-exited');
  });

  test('a claim that does not hold never runs the command (exit 14)', async () => {
    const h = await held();
    const marker = join(scratch, `never-${seq}`);
    const g = await cliGuard({ ...h, nonce: 'eeeeeeeeeeeeeeee' }, ['touch', marker]);
    assert.equal(g.code, 14);
    assert.equal(g.events[0].event, 'guard-refused');
    assert.equal(g.events[0].result, 'lost');
    assert.equal(existsSync(marker), false);
  });

  test('actions/guard runs a command, one argument per line, under the holding', async () => {
    const h = await held();
    const r = await runAction('guard', {
      apiUrl: emu.url,
      context: h.context,
      inputs: { lock: h.lock, nonce: h.nonce, command: `${process.execPath}\n-e\nprocess.exit(0)` },
    });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.outputs['exit-code'], '0');
    assert.equal(r.outputs.result, 'child-exited');
    assert.match(r.stdout, /"event":"guard-start"/);
  });

  test('a command that spawn refuses outright (ENOTDIR, thrown, not emitted) is spawn-failed, exit 127, with both guard lines', async () => {
    const h = await held();
    const r = await runAction('guard', {
      apiUrl: emu.url,
      context: h.context,
      inputs: { lock: h.lock, nonce: h.nonce, command: '/etc/passwd/nope' },
    });
    assert.equal(r.outputs.result, 'spawn-failed', r.stdout);
    assert.equal(r.outputs['exit-code'], '127');
    assert.match(r.stdout, /"event":"guard-start"/);
    assert.match(r.stdout, /"event":"guard-exit"/);
    assert.doesNotMatch(r.stdout, /error of the guard/);
  });

  test("actions/guard carries the version its last renewal wrote to the job's later steps: the release writes on it, with no read", async () => {
    const h = await held();
    const g = await runAction('guard', {
      apiUrl: emu.url,
      context: h.context,
      inputs: { lock: h.lock, nonce: h.nonce, command: `${process.execPath}\n-e\nsetTimeout(() => process.exit(0), 12000)` },
    });
    assert.equal(g.outputs.result, 'child-exited', g.stdout);
    assert.match(g.stdout, /"renewals":[1-9]/, 'a renewal wrote');
    const carried = Object.keys(g.exported).filter((k) => k.startsWith('LEASEHOLD_CARRY_'));
    assert.equal(carried.length, 1, JSON.stringify(g.exported));
    const envFile = g.files.env ?? '';
    assert.equal((envFile.match(/LEASEHOLD_CARRY_/g) ?? []).length, 1, 'exported once, not at every renewal');
    const from = emu.log.length ? emu.log[emu.log.length - 1].seq : 0;
    const r = await runAction('release', { apiUrl: emu.url, context: h.context, inputs: { lock: h.lock }, env: g.exported });
    assert.equal(r.outputs.result, 'released', r.stdout);
    const sent = emu.log.filter((e) => e.seq > from).map((e) => `${e.method} ${e.status}`);
    assert.equal(sent[0], 'PUT 200', `the release's first request is its write, on the renewal's version: ${sent}`);
  });

  test('actions/renew extends the lease; if-due renews only when due', async () => {
    const h = await held();
    const inputs = { lock: h.lock, nonce: h.nonce };
    const early = await runAction('renew', { apiUrl: emu.url, context: h.context, inputs: { ...inputs, 'if-due': 'true' } });
    assert.equal(early.outputs.result, 'not-due');
    assert.equal(early.outputs.renewed, 'false');
    const now = await runAction('renew', { apiUrl: emu.url, context: h.context, inputs });
    assert.equal(now.code, 0, now.stdout);
    assert.equal(now.outputs.result, 'renewed');
    assert.equal(now.outputs['expires-at'], (await stateOf(h.lock)).holders[0].expiresAt);
    const lost = await runAction('renew', { apiUrl: emu.url, context: h.context, inputs: { ...inputs, nonce: 'dddddddddddddddd' } });
    assert.equal(lost.code, 1);
    assert.equal(lost.outputs.result, 'lost');
    assert.equal(lost.outputs['error-code'], 'lost');
  });
});
