// The guard's fixes, each run through the built CLI (dist/cli.mjs guard) or the built action as a
// runner would: the SIGKILL after the kill grace reaches the whole process group even when the
// direct child has exited; the child's environment carries no credential; a renewal still
// running when the child exits is finished and reported; SIGINT, SIGTERM and SIGHUP are
// forwarded to the group. The lock's lease is short (30 s, renewed every 10 s), the kill grace 2 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';

const POLICY = { ttlSeconds: 30, renewSeconds: 10, graceSeconds: 0, maxTtlSeconds: 3600, skewSeconds: 0, minRemainingSeconds: 3 };
// A token nobody would mistake for another value: the child's environment must not hold it.
const FAKE_TOKEN = 'ghs_leaseholdFakeToken0123456789abcdef';
// What a runner puts in a step's environment besides the token: its own credentials (and the
// runtime's URLs, which go with them). None of these values is the token or has its shape, so
// only their names can keep them from the child; GH_TOKEN likewise.
const RUNNER_CREDENTIALS = {
  GH_TOKEN: 'plain-gh-token-value',
  ACTIONS_RUNTIME_TOKEN: 'eyJhbGciOiJSUzI1NiJ9.runtime',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'eyJhbGciOiJSUzI1NiJ9.oidc',
  ACTIONS_ID_TOKEN_REQUEST_URL: 'https://pipelines.example/oidc?api-version=2.0',
  ACTIONS_RUNTIME_URL: 'https://pipelines.example/runtime/',
  ACTIONS_RESULTS_URL: 'https://results.example/',
};
// Other GitHub tokens, not the guard's: dropped for their shape.
const OTHER_SHAPED = {
  DEPLOY_PAT: 'github_pat_11ABCDEFG0123456789_abcdef',
  REMOTE_URL: 'https://x-access-token:ghp_Another0123456789@github.example/o/r.git',
};
// Values that only look close: a prefix inside a word is no token's.
const LOOKALIKES = { BUILD_TAG: 'nightghp_1', SHORT: 'ghs_' };
let emu;
let seq = 0;
let scratch;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-guard-fixes-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const waitFor = async (what, ms = 10_000) => {
  for (let i = 0; i < ms / 50; i++) {
    if (what()) return true;
    await sleep(50);
  }
  return what();
};

/** A fresh lock with the short lease policy, held by a new job. */
async function held() {
  const lock = `fixes-${++seq}`;
  await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1, lease: POLICY }));
  const context = jobContext({ runId: 8000 + seq });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock }, context });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  return { lock, context, holderId: a.outputs['holder-id'], nonce: a.outputs.nonce };
}

/** Takes the holding over (as a rerun would): the next renewal proves it lost. */
async function takeOver(lock) {
  const state = await stateOf(lock);
  state.revision += 1;
  state.holders[0].nonce = 'ffffffffffffffff';
  await emu.writeFile('leasehold-state', `locks/${lock}.json`, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * Runs `node dist/cli.mjs guard … -- command…` with `env` added; resolves to { code, events,
 * stderr }. `.started` resolves at the first JSON line, `.exited` at the guard-exit line, and
 * `.process` is the guard's process.
 */
function cliGuard({ lock, context, holderId, nonce }, command, env = {}) {
  let markStarted;
  let markExited;
  const started = new Promise((r) => (markStarted = r));
  const exited = new Promise((r) => (markExited = r));
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), 'guard', '--lock', lock, '--holder-id', holderId, '--nonce', nonce, '--kill-grace-seconds', '2', '--', ...command], {
    env: { PATH: process.env.PATH, ...context, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    if (stdout.includes('\n')) markStarted();
    if (stdout.includes('"guard-exit"')) markExited();
  });
  child.stderr.on('data', (d) => (stderr += d));
  const run = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      markStarted();
      markExited();
      const events = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      resolve({ code, events, stderr });
    });
  });
  return Object.assign(run, { started, exited, process: child });
}

const node = (script) => [process.execPath, '-e', script];

/** Whether a process is still running (a zombie, dead but not yet reaped, is not). */
const alive = (pid) => {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('guard fixes', { concurrency: 6, timeout: 120_000 }, () => {
  test('the SIGKILL after the kill grace reaches a grandchild that ignores SIGTERM, though the direct child exited on SIGTERM', async () => {
    const h = await held();
    const pidFile = join(scratch, `grandchild-${seq}`);
    const grandchild = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`;
    // The direct child starts the grandchild (same process group) and ends on SIGTERM.
    const direct = `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'ignore' }); setInterval(() => {}, 1000);`;
    const run = cliGuard(h, node(direct));
    await run.started;
    assert.ok(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8')), 'the grandchild started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    try {
      await takeOver(h.lock);
      const g = await run;
      assert.equal(g.code, 13, g.stderr);
      const end = g.events.at(-1);
      assert.deepEqual([end.event, end.reason, end.childSignal], ['guard-exit', 'lost', 'SIGTERM']);
      // The guard ends only after the kill grace, with the SIGKILL sent: the grandchild is gone.
      assert.ok(await waitFor(() => !alive(pid), 3_000), 'the grandchild that ignores SIGTERM was killed');
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  test("the child's environment carries no credential (the CLI)", async () => {
    const h = await held();
    const dump = join(scratch, `env-cli-${seq}.json`);
    const env = {
      GITHUB_TOKEN: FAKE_TOKEN,
      LEASEHOLD_TOKEN: FAKE_TOKEN,
      INPUT_TOKEN: FAKE_TOKEN,
      CI_AUTH: `Bearer ${FAKE_TOKEN}`,
      RENAMED: FAKE_TOKEN,
      ...RUNNER_CREDENTIALS,
      ...OTHER_SHAPED,
      ...LOOKALIKES,
      LEASEHOLD_KEEP: 'visible',
    };
    const g = await cliGuard(h, node(`require('fs').writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.env))`), env);
    assert.equal(g.code, 0, g.stderr);
    const seen = JSON.parse(readFileSync(dump, 'utf8'));
    for (const name of ['GITHUB_TOKEN', 'LEASEHOLD_TOKEN', 'INPUT_TOKEN', 'CI_AUTH', 'RENAMED', ...Object.keys(RUNNER_CREDENTIALS), ...Object.keys(OTHER_SHAPED)]) assert.equal(seen[name], undefined, name);
    assert.deepEqual(Object.entries(seen).filter(([, v]) => v.includes(FAKE_TOKEN)), []);
    assert.equal(seen.LEASEHOLD_KEEP, 'visible', 'other variables pass through');
    for (const [name, value] of Object.entries(LOOKALIKES)) assert.equal(seen[name], value, `${name} is no credential and passes through`);
  });

  test("the child's environment carries no credential (actions/guard)", async () => {
    const h = await held();
    const dump = join(scratch, `env-action-${seq}.json`);
    const r = await runAction('guard', {
      apiUrl: emu.url,
      token: FAKE_TOKEN,
      context: h.context,
      env: { GITHUB_TOKEN: FAKE_TOKEN, OTHER_SECRET: `x${FAKE_TOKEN}y`, ...RUNNER_CREDENTIALS, ...OTHER_SHAPED, LEASEHOLD_KEEP: 'visible' },
      inputs: { lock: h.lock, nonce: h.nonce, command: `${process.execPath}\n-e\nrequire('fs').writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.env))` },
    });
    assert.equal(r.outputs.result, 'child-exited', r.stdout);
    const seen = JSON.parse(readFileSync(dump, 'utf8'));
    for (const name of ['GITHUB_TOKEN', 'INPUT_TOKEN', 'OTHER_SECRET', ...Object.keys(RUNNER_CREDENTIALS), ...Object.keys(OTHER_SHAPED)]) assert.equal(seen[name], undefined, name);
    assert.deepEqual(Object.entries(seen).filter(([, v]) => v.includes(FAKE_TOKEN)), []);
    assert.equal(seen.LEASEHOLD_KEEP, 'visible');
  });

  test('a renewal still running when the child exits is finished and its outcome reported', async () => {
    const h = await held();
    const run = cliGuard(h, node('setTimeout(() => process.exit(5), 11000)'));
    await run.started;
    // Once the holding is verified: the renewal at ~10 s writes late (8 s); the child has ended
    // at 11 s by then.
    const rule = emu.faults.add({ method: 'PUT', path: new RegExp(`locks/${h.lock}\\.json$`), action: { latencyMs: 8_000 } });
    try {
      const g = await run;
      assert.equal(rule.fired, 1, 'the renewal wrote');
      assert.equal(g.code, 5, g.stderr);
      const end = g.events.at(-1);
      assert.deepEqual([end.reason, end.exitCode, end.renewals], ['child-exited', 5, 1]);
      assert.match(g.stderr, /the command ended while a renewal runs/);
      assert.match(g.stderr, /the renewal running when the command ended: renewed/);
    } finally {
      rule.remove();
    }
  });

  test('a renewal that never ends after the child exits is reported as of unknown outcome', async () => {
    const h = await held();
    const run = cliGuard(h, node('setTimeout(() => process.exit(6), 11000)'));
    await run.started;
    const rule = emu.faults.add({ method: 'PUT', path: new RegExp(`locks/${h.lock}\\.json$`), times: Infinity, action: { pause: true } });
    // Once the holding is verified, every write of the lock state is held: the renewal cannot
    // end before its deadline.
    try {
      await run.exited;
      rule.remove(); // the held write lands; the renewal's last request ends, and the guard's process
      const g = await run;
      assert.equal(g.code, 6, g.stderr);
      assert.equal(g.events.at(-1).reason, 'child-exited');
      assert.match(g.stderr, /the command ended while a renewal runs/);
      assert.match(g.stderr, /(its outcome is unknown|when the command ended: unknown outcome)/);
    } finally {
      rule.remove();
    }
  });

  // The runner cancels with SIGINT, SIGTERM 7.5 s later, and kills the guard's own process 2.5 s
  // after that, not the child's group: a command that ignores the signals would outlive the
  // guard and the release after it. SIGKILL goes to the group within the signal's grace (7 s,
  // or the kill grace when shorter: 2 s here).
  test('a command that ignores the cancellation signal is SIGKILLed with its group, before the runner would kill the guard', async () => {
    const h = await held();
    const pidFile = join(scratch, `stubborn-${seq}`);
    const script = `for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
      require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      setInterval(() => {}, 1000);`;
    const run = cliGuard(h, node(script));
    await run.started;
    assert.ok(await waitFor(() => existsSync(pidFile)), 'the child is ready');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const sent = Date.now();
    run.process.kill('SIGINT');
    const g = await run;
    const took = Date.now() - sent;
    const end = g.events.at(-1);
    assert.deepEqual([end.event, end.reason, end.childSignal], ['guard-exit', 'child-exited', 'SIGKILL'], g.stderr);
    assert.equal(g.code, 137);
    assert.ok(!alive(pid), 'the command is gone');
    assert.ok(took < 7_000, `ended ${took} ms after the signal, within the 7.5 s before the runner's SIGTERM`);
    assert.match(g.stderr, /did not end after the signal: SIGKILL to its process group/);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    test(`${signal} to the guard is forwarded to the child's process group`, async () => {
      const h = await held();
      const got = join(scratch, `signal-${signal}-${seq}`);
      const ready = `${got}.ready`;
      const script = `const fs = require('fs');
        for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => { fs.writeFileSync(${JSON.stringify(got)}, s); process.exit(0); });
        fs.writeFileSync(${JSON.stringify(ready)}, '');
        setTimeout(() => process.exit(9), 8000);`;
      const run = cliGuard(h, node(script));
      await run.started;
      assert.ok(await waitFor(() => existsSync(ready)), 'the child is ready');
      run.process.kill(signal);
      const g = await run;
      assert.equal(existsSync(got) && readFileSync(got, 'utf8'), signal, g.stderr);
      assert.equal(g.code, 0, g.stderr);
      assert.equal(g.events.at(-1).reason, 'child-exited');
    });
  }
});
