// actions/cleanup (dist/cleanup.mjs), run as the runner runs it against the emulator: the
// cleanup command runs with no shell, one argument per line, in a scrubbed environment and
// under its deadline; the core classifies how it ended; the release in the same step records
// that report, whatever the command did.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
let scratch;
let seq = 0;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-cleanup-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));

/** A fresh lock held by a new job. */
async function held() {
  const lock = `cleaned-${++seq}`;
  const context = jobContext({ runId: 8100 + seq });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context });
  assert.equal(a.outputs.result, 'acquired', a.stdout + a.stderr);
  return { lock, context };
}

/** `node -e <script> args…` as the command input: one argument per line. */
const nodeCommand = (script, ...args) => [process.execPath, '-e', script, ...args].join('\n');

const reportIn = (stdout) => /cleanup (\w+), health (\w+), reason ([\w-]+)/.exec(stdout)?.slice(1);

describe('actions/cleanup', { timeout: 120_000 }, () => {
  test('exit 0 confirms; the release in the same step removes the holding; no token reaches the command', async () => {
    const { lock, context } = await held();
    const envFile = join(scratch, 'env.json');
    const r = await runAction('cleanup', {
      apiUrl: emu.url,
      token: 'ghs_secrettokenvalue0123456789',
      inputs: { lock, command: nodeCommand("require('fs').writeFileSync(process.argv[1], JSON.stringify(process.env))", envFile) },
      context,
      env: { GITHUB_TOKEN: 'ghs_secrettokenvalue0123456789', COPY_OF_TOKEN: 'x ghs_secrettokenvalue0123456789', KEEP_ME: 'model-key' },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(reportIn(r.stdout), ['confirmed', 'healthy', 'completed']);
    assert.equal(r.outputs['command-exit-code'], '0');
    assert.equal(r.outputs['command-result'], 'exited');
    assert.equal(r.outputs.released, 'true');
    assert.equal(r.outputs.result, 'released');
    assert.equal(r.outputs['holder-id'], `octo/app:${context.GITHUB_RUN_ID}:build`);
    assert.deepEqual((await stateOf(lock)).holders, []);
    const env = JSON.parse(readFileSync(envFile, 'utf8'));
    for (const name of ['INPUT_TOKEN', 'GITHUB_TOKEN', 'COPY_OF_TOKEN']) assert.equal(env[name], undefined, name);
    assert.ok(!Object.values(env).some((v) => v.includes('secrettokenvalue')), 'no value carries the token');
    assert.equal(env.KEEP_ME, 'model-key', 'the rest of the environment is passed on');
  });

  test('arguments are passed as given, one per line, with no shell', async () => {
    const { lock, context } = await held();
    const out = join(scratch, 'argv.json');
    const r = await runAction('cleanup', {
      apiUrl: emu.url,
      inputs: { lock, command: `${nodeCommand("require('fs').writeFileSync(process.argv[1], JSON.stringify(process.argv.slice(2)))", out)}\n$HOME; echo hi\n\n  two words  \n` },
      context,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), ['$HOME; echo hi', 'two words']);
  });

  test('a failing command is unknown, the blocked code is blocked, and the lock is released either way', async () => {
    for (const [code, blocked, expected] of [
      [3, '', ['unknown', 'healthy', 'failed']],
      [42, '42', ['unknown', 'blocked', 'account-blocked']],
      [42, '41', ['unknown', 'healthy', 'failed']],
    ]) {
      const { lock, context } = await held();
      const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand(`process.exit(${code})`), 'blocked-exit-code': blocked }, context });
      assert.deepEqual(reportIn(r.stdout), expected, r.stdout);
      assert.equal(r.outputs['command-exit-code'], String(code));
      assert.equal(r.outputs.released, 'true', r.stdout + r.stderr);
      assert.deepEqual((await stateOf(lock)).holders, []);
    }
  });

  test('a command past its deadline is stopped (its whole group) and counts as unknown', async () => {
    const { lock, context } = await held();
    const marker = join(scratch, 'grandchild-alive');
    // The command starts a grandchild that would write a file 4 s later, then hangs.
    const script = `require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => require("fs").writeFileSync(process.argv[1], "x"), 4000)', process.argv[1]], { stdio: 'ignore' }); setInterval(() => {}, 1000);`;
    const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand(script, marker), 'timeout-seconds': '1', 'kill-grace-seconds': '1' }, context });
    assert.deepEqual(reportIn(r.stdout), ['unknown', 'healthy', 'timeout'], r.stdout);
    assert.equal(r.outputs['command-result'], 'timed-out');
    assert.equal(r.outputs['command-exit-code'], '');
    assert.equal(r.outputs.released, 'true');
    await new Promise((resolve) => setTimeout(resolve, 4500));
    assert.equal(existsSync(marker), false, 'the grandchild was stopped with the group');
  });

  test("in a cancelled job the command gets at most 120 s, so it and the release fit GitHub's 5 minutes", async () => {
    const { lock, context } = await held();
    const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand('process.exit(0)'), 'job-status': 'cancelled' }, context });
    assert.match(r.stdout, /running .* \(deadline 120 s\)/, r.stdout);
    assert.match(r.stdout, /the job was cancelled: the cleanup command gets 120 s \(not its timeout-seconds of 300 s\)/);
    assert.equal(r.outputs.released, 'true');
    const ok = await held();
    const plain = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock: ok.lock, command: nodeCommand('process.exit(0)'), 'job-status': 'success' }, context: ok.context });
    assert.match(plain.stdout, /running .* \(deadline 300 s\)/, plain.stdout);
  });

  test('a command that cannot start is unknown, and the lock is released', async () => {
    const { lock, context } = await held();
    const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: 'leasehold-no-such-program\n--x' }, context });
    assert.deepEqual(reportIn(r.stdout), ['unknown', 'healthy', 'failed'], r.stdout);
    assert.equal(r.outputs['command-result'], 'spawn-failed');
    assert.equal(r.outputs.released, 'true');
  });

  test('a cancelled step passes the signal on; the command ends unproven and the lock is still released', async () => {
    const { lock, context } = await held();
    let step;
    const run = runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand("console.log('cleanup ' + 'running'); setInterval(() => {}, 1000)") }, context, onSpawn: (c) => (step = c) });
    // Wait until the command is running (it prints first), then cancel as the runner does.
    await new Promise((resolve) => {
      const poll = setInterval(() => {
        if (step?.stdout) {
          step.stdout.on('data', (d) => {
            if (String(d).includes('cleanup running')) {
              clearInterval(poll);
              resolve();
            }
          });
          clearInterval(poll);
        }
      }, 10);
    });
    step.kill('SIGINT');
    const r = await run;
    assert.deepEqual(reportIn(r.stdout), ['unknown', 'healthy', 'cancelled'], r.stdout);
    assert.equal(r.outputs['command-result'], 'signalled');
    assert.equal(r.outputs.released, 'true');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('a cancelled step whose command ignores the signal SIGKILLs it (kill grace 1 s here) and still releases', async () => {
    const { lock, context } = await held();
    let step;
    const script = "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {}); console.log('cleanup ' + 'running'); setInterval(() => {}, 1000)";
    const run = runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand(script), 'kill-grace-seconds': '1' }, context, onSpawn: (c) => (step = c) });
    await new Promise((resolve) => {
      const poll = setInterval(() => {
        if (step?.stdout) {
          step.stdout.on('data', (d) => {
            if (String(d).includes('cleanup running')) resolve();
          });
          clearInterval(poll);
        }
      }, 10);
    });
    step.kill('SIGINT');
    const r = await run;
    assert.match(r.stdout, /did not end after the signal; SIGKILL to its process group/);
    assert.equal(r.outputs['command-result'], 'signalled', r.stdout);
    assert.equal(r.outputs.released, 'true');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('with the lock\'s lifecycle on, the report decides the slot: a cooldown, a quarantine or the incident', async () => {
    const cases = [
      { code: 0, kind: 'cooldown', reason: 'completed', result: 'cooldown-started' },
      { code: 3, kind: 'quarantine', reason: 'failed', result: 'quarantined' },
      { code: 42, kind: 'quarantine', reason: 'account-blocked', incident: true, result: 'incident' },
    ];
    for (const c of cases) {
      const lock = `lifecycle-${++seq}`;
      await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, '{"capacity": 1, "lifecycle": {"cooldownSeconds": 600}}\n');
      const context = jobContext({ runId: 8100 + seq });
      const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context });
      assert.equal(a.outputs.result, 'acquired', a.stdout + a.stderr);
      const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand(`process.exit(${c.code})`), 'blocked-exit-code': '42' }, context });
      assert.equal(r.outputs.released, 'true', r.stdout + r.stderr);
      const state = await stateOf(lock);
      assert.equal(state.schema, 2);
      assert.deepEqual(state.holders, []);
      assert.equal(state.reservations.length, 1, JSON.stringify(state));
      const [reservation] = state.reservations;
      assert.equal(reservation.kind, c.kind);
      assert.equal(reservation.reason, c.reason);
      assert.equal(reservation.holderId, `octo/app:${context.GITHUB_RUN_ID}:build`);
      assert.equal(reservation.run.runnerName, context.RUNNER_NAME);
      assert.equal(reservation.endsAt !== undefined, c.kind === 'cooldown');
      assert.equal(state.incident !== undefined && state.incident !== null, Boolean(c.incident), JSON.stringify(state.incident));
      assert.equal(r.outputs['cleanup-result'], c.result);
      assert.equal(r.outputs['reservation-id'], reservation.id);
      assert.equal(r.outputs['incident-id'], c.incident ? state.incident.id : '');
      assert.notEqual(r.outputs['report-degraded'], 'true', "the command's report is always valid");
      assert.equal(r.code, 0, 'a valid report, whatever it says, does not fail the step');
    }
  });

  test('a bad input fails the step before the command runs or anything is sent', async () => {
    const { lock, context } = await held();
    const marker = join(scratch, 'ran');
    for (const [input, value] of [['timeout-seconds', '0'], ['blocked-exit-code', '0'], ['blocked-exit-code', '200'], ['command', '\n \n']]) {
      const seq0 = emu.log.length;
      const r = await runAction('cleanup', { apiUrl: emu.url, inputs: { lock, command: nodeCommand(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`), [input]: value }, context });
      assert.equal(r.code, 1, `${input}=${value}: ${r.stdout}`);
      assert.equal(r.outputs.result, 'failed');
      assert.equal(r.outputs['error-code'], 'invalid-input');
      assert.match(r.stdout + r.stderr, new RegExp(`\\[${input}\\]`));
      assert.equal(emu.log.length, seq0, 'nothing was sent');
      assert.equal(existsSync(marker), false, 'the command did not run');
    }
    assert.equal((await stateOf(lock)).holders.length, 1);
  });
});
