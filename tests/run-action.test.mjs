// actions/run, the composite action: its steps run in order as the runner runs them
// (helpers/composite-runner.mjs: action.yml parsed, `if:` and `${{ }}` evaluated, each `run:`
// started with bash and GITHUB_ACTION_PATH), each step's process against the emulator. Acquire,
// the command under the guard, then the cleanup command with its report or a plain release,
// the last two under `if: always()`: a failing, killed or cancelled command still releases.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';
import { evaluate, runComposite, stepRuns } from './helpers/composite-runner.mjs';

let emu;
let seq = 0;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
});
after(() => emu.close());

const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));
const execPathOf = (program) => execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim();
const nodeCommand = (script) => [process.execPath, '-e', script].join('\n');

/** A fresh lock and job; `run(inputs, onStep)` runs actions/run in that job. */
function job() {
  const lock = `run-${++seq}`;
  const context = jobContext({ runId: 8600 + seq });
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...context, GITHUB_API_URL: emu.url };
  const run = (inputs, onStep) => runComposite('run', { inputs: { lock, 'record-job-id': 'false', ...inputs }, env, onStep });
  return { lock, context, run, holderId: `octo/app:${context.GITHUB_RUN_ID}:build` };
}

describe('the composite runner reads expressions as GitHub does', () => {
  test('conditions, status functions and comparisons', () => {
    const context = { inputs: { a: '', b: 'X' }, steps: { s: { outputs: { ok: 'true' } } } };
    const ok = { failed: false, cancelled: false };
    const failed = { failed: true, cancelled: false };
    const cancelled = { failed: false, cancelled: true };
    assert.equal(stepRuns("steps.s.outputs.ok == 'true'", context, ok), true);
    assert.equal(stepRuns("steps.s.outputs.ok == 'TRUE'", context, ok), true, 'strings compare without case');
    assert.equal(stepRuns("steps.s.outputs.ok == 'true'", context, failed), false, 'success() is implied');
    assert.equal(stepRuns("always() && inputs.a != ''", context, failed), false);
    assert.equal(stepRuns("always() && !(inputs.a != '' && steps.s.outputs.ok == 'true')", context, cancelled), true);
    assert.equal(stepRuns('${{ always() }}', context, cancelled), true);
    assert.equal(stepRuns(undefined, context, cancelled), false);
    assert.equal(stepRuns('failure()', context, failed), true);
    assert.equal(evaluate('steps.nope.outputs.x || inputs.b', context).value, 'X');
    assert.throws(() => evaluate('inputs.a ==', context));
  });
});

describe('actions/run', { timeout: 180_000 }, () => {
  test('acquire, run the command under the guard, release', async () => {
    const { lock, run, holderId } = job();
    const r = await run({ command: nodeCommand("console.log('work ' + 'done')") });
    assert.equal(r.outcome, 'success', JSON.stringify(r.steps, null, 1));
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'release']);
    assert.equal(r.steps.cleanup.outcome, 'skipped');
    assert.match(r.steps.guard.stdout, /work done/);
    assert.equal(r.outputs.acquired, 'true');
    assert.equal(r.outputs['holder-id'], holderId);
    assert.equal(r.outputs.fence, '1');
    assert.equal(r.outputs['exit-code'], '0');
    assert.equal(r.outputs['guard-result'], 'child-exited');
    assert.equal(r.outputs.released, 'true');
    assert.equal(r.outputs['release-result'], 'released');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test("the job's check run id reaches acquire, which looks up and records that job", async () => {
    const { lock, context } = job();
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...context, GITHUB_API_URL: emu.url };
    const [jobId] = await emu.actions.startRun(Number(context.GITHUB_RUN_ID), { jobs: [{ name: 'build (linux)', runnerName: context.RUNNER_NAME }] });
    const from = emu.log.length;
    const r = await runComposite('run', { inputs: { lock, command: nodeCommand('0') }, env, checkRunId: jobId });
    assert.equal(r.outcome, 'success', JSON.stringify(r.steps, null, 1));
    assert.match(r.steps.acquire.stdout, new RegExp(`recorded job id ${jobId} \\("build \\(linux\\)", from this job's check run id\\)`));
    const asked = emu.log.slice(from).filter((q) => q.path.includes('/actions/'));
    assert.deepEqual(asked.map((q) => `${q.method} ${q.path} ${q.status}`), [`GET /repos/octo/app/actions/jobs/${jobId} 200`]);
  });

  test('without Node.js 20 or newer on PATH it stops before touching the lock, saying what to do', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'leasehold-path-'));
    symlinkSync(execPathOf('bash'), join(bin, 'bash'));
    const cases = [['none', null], ['Node.js 16', '#!/bin/sh\necho 16\n']];
    for (const [found, fake] of cases) {
      if (fake) writeFileSync(join(bin, 'node'), fake, { mode: 0o755 });
      const { lock, context } = job();
      const from = emu.log.length;
      const r = await runComposite('run', {
        inputs: { lock, command: nodeCommand('0') },
        env: { HOME: process.env.HOME, ...context, GITHUB_API_URL: emu.url, PATH: bin },
      });
      assert.equal(r.outcome, 'failure');
      assert.deepEqual(r.order, ['node'], 'no bundle runs, not even the release');
      assert.match(r.steps.node.stdout, new RegExp(`::error::leasehold run needs Node.js 20 or newer on PATH .*\\(found: ${found}\\); add actions/setup-node`));
      assert.deepEqual(emu.log.slice(from), [], 'no request');
    }
  });

  test('a failing command fails the step and still releases', async () => {
    const { lock, run } = job();
    const r = await run({ command: nodeCommand('process.exit(3)') });
    assert.equal(r.outcome, 'failure');
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'release']);
    assert.equal(r.steps.guard.outcome, 'failure');
    assert.equal(r.outputs['exit-code'], '3');
    assert.equal(r.outputs['release-result'], 'released');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('with a cleanup command, it runs after the command and its release replaces the plain one', async () => {
    const { lock, run } = job();
    const r = await run({ command: nodeCommand('process.exit(0)'), 'cleanup-command': nodeCommand("console.log('cleaning ' + 'up')") });
    assert.equal(r.outcome, 'success', JSON.stringify(r.steps, null, 1));
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'cleanup']);
    assert.equal(r.steps.release.outcome, 'skipped');
    assert.match(r.steps.cleanup.stdout, /cleaning up/);
    assert.match(r.steps.cleanup.stdout, /cleanup confirmed, health healthy/);
    assert.equal(r.outputs['cleanup-exit-code'], '0');
    assert.equal(r.outputs.released, 'true');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test("the release writes on the version acquire carried through GITHUB_ENV, before any read", async () => {
    const { lock, run } = job();
    await run({ command: nodeCommand('process.exit(0)') }); // first use: the branch is created
    let releaseFrom = null;
    const r = await run({ command: nodeCommand('process.exit(0)') }, (id) => {
      if (id === 'release') releaseFrom = emu.log.length ? emu.log[emu.log.length - 1].seq : 0;
    });
    assert.equal(r.outcome, 'success', JSON.stringify(r.steps, null, 1));
    const release = emu.log.filter((e) => e.seq > releaseFrom).map((e) => `${e.method} ${e.status}`);
    assert.equal(release[0]?.split(' ')[0], 'PUT', `the release's first request is its write: ${release}`);
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test("the cleanup step's release writes on the version acquire carried too, before any read", async () => {
    const { lock, run } = job();
    await run({ command: nodeCommand('process.exit(0)') }); // first use: the branch is created
    let cleanupFrom = null;
    const r = await run({ command: nodeCommand('process.exit(0)'), 'cleanup-command': nodeCommand('process.exit(0)') }, (id) => {
      if (id === 'cleanup') cleanupFrom = emu.log.length ? emu.log[emu.log.length - 1].seq : 0;
    });
    assert.equal(r.outcome, 'success', JSON.stringify(r.steps, null, 1));
    const release = emu.log.filter((e) => e.seq > cleanupFrom).map((e) => `${e.method} ${e.status}`);
    assert.equal(release[0], 'PUT 200', `the cleanup's first request is its write, on the version carried: ${release}`);
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('a bad input of a later step fails the first step, named as the run names it, and the lock is untouched', async () => {
    const cases = [
      [{ 'cleanup-command': nodeCommand('process.exit(0)'), 'cleanup-timeout-seconds': '0' }, 'cleanup-timeout-seconds'],
      [{ 'cleanup-command': nodeCommand('process.exit(0)'), 'blocked-exit-code': '200' }, 'blocked-exit-code'],
      [{ 'kill-grace-seconds': '999' }, 'kill-grace-seconds'],
      [{ 'lease-minutes': '0' }, 'lease-minutes'],
      [{ command: ' \n ' }, 'command'],
      [{ 'cleanup-command': ' \n ' }, 'cleanup-command'],
      [{ token: '' }, 'token'],
    ];
    for (const [inputs, named] of cases) {
      const { lock, run } = job();
      const r = await run({ command: nodeCommand('process.exit(0)'), ...inputs });
      assert.equal(r.outcome, 'failure', named);
      assert.deepEqual(r.order, ['node', 'check'], `${named}: ${JSON.stringify(r.steps, null, 1)}`);
      assert.match(r.steps.check.stdout, new RegExp(`::error::leasehold run \\[${named}\\]: input \`${named}\` .*\\(the lock was not touched\\)`), named);
      assert.equal(await emu.readFile('leasehold-state', `locks/${lock}.json`), null, `${named}: nothing was written`);
    }
  });

  test('a cleanup step that dies before its release: the plain release still frees the lock', async () => {
    const { lock, run } = job();
    // The cleanup command kills the cleanup step's own process (its parent) outright.
    const r = await run({ command: nodeCommand('process.exit(0)'), 'cleanup-command': ['bash', '-c', 'kill -9 $PPID'].join('\n') });
    assert.equal(r.outcome, 'failure');
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'cleanup', 'release'], JSON.stringify(r.steps, null, 1));
    assert.equal(r.steps.release.outcome, 'success');
    assert.equal(r.outputs.released, 'true');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test("a cleanup step whose release failed: the plain release frees the lock, and the run's release outputs are its", async () => {
    const { lock, run } = job();
    let refusal = null;
    const r = await run({ command: nodeCommand('process.exit(0)'), 'cleanup-command': nodeCommand('process.exit(0)') }, (id) => {
      // Every write of the cleanup step is refused, as GitHub refuses a token without access.
      if (id === 'cleanup') refusal = emu.faults.add({ method: 'PUT', path: `/repos/octo/app/contents/locks/${lock}.json`, times: 100, action: { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/repos/contents#create-or-update-file-contents', status: '403' } } });
      if (id === 'release') refusal?.remove();
    });
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'cleanup', 'release'], JSON.stringify(r.steps, null, 1));
    assert.notEqual(r.steps.cleanup.outputs.released, 'true');
    assert.equal(r.steps.release.outputs.released, 'true', r.steps.release.stdout);
    assert.equal(r.outputs.released, 'true');
    assert.equal(r.outputs['release-result'], 'released');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('the guard finds the holding gone (another job may hold the resource): the cleanup command does not run, the plain release does', async () => {
    const { lock, run, holderId } = job();
    const mark = join(mkdtempSync(join(tmpdir(), 'leasehold-run-')), 'cleaned');
    let armed = false;
    // The guard's first read of the state: the holding is gone by then (removed by a fallback
    // release, or taken over), so the guard proves it not held.
    const remove = emu.onRequest(async ({ method, path }) => {
      if (!armed || method !== 'GET' || !path.endsWith(`/contents/locks/${lock}.json`)) return;
      armed = false;
      const state = await stateOf(lock);
      state.holders = state.holders.filter((h) => h.holderId !== holderId);
      state.revision += 1;
      await emu.writeFile('leasehold-state', `locks/${lock}.json`, `${JSON.stringify(state, null, 2)}\n`, 'the holding removed elsewhere');
    });
    try {
      const r = await run({ command: nodeCommand('process.exit(0)'), 'cleanup-command': nodeCommand(`require('fs').writeFileSync(${JSON.stringify(mark)}, 'x')`) }, (id) => {
        if (id === 'guard') armed = true;
      });
      assert.equal(r.outputs['guard-result'], 'not-held', JSON.stringify(r.steps.guard?.stdout));
      assert.equal(r.steps.cleanup.outcome, 'skipped', 'no cleanup of a resource this job no longer holds');
      assert.equal(existsSync(mark), false, 'the cleanup command never ran');
      assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'release']);
    } finally {
      remove();
    }
  });

  test('a command killed outright still gets its cleanup and release', async () => {
    const { lock, run } = job();
    const r = await run({ command: nodeCommand("process.kill(process.pid, 'SIGKILL')"), 'cleanup-command': nodeCommand('process.exit(0)') });
    assert.equal(r.outcome, 'failure');
    assert.equal(r.outputs['exit-code'], '137');
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'cleanup']);
    assert.equal(r.outputs.released, 'true');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('a job cancelled while the command runs: the guard stops it, the release still runs', async () => {
    const { lock, run } = job();
    const r = await run({ command: nodeCommand("console.log('long ' + 'work'); setInterval(() => {}, 1000)") }, (id, child, cancel) => {
      if (id !== 'guard') return;
      child.stdout.on('data', (d) => String(d).includes('long work') && cancel());
    });
    assert.equal(r.outcome, 'cancelled');
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'guard', 'release']);
    assert.equal(r.outputs['exit-code'], String(128 + 2), 'the command ended by the SIGINT passed on');
    assert.equal(r.outputs['release-result'], 'released');
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('not acquired (the lock is busy and timeout-minutes is 0): the command never runs, the release cleans up', async () => {
    const { lock, run } = job();
    const other = jobContext({ runId: 8599, job: 'other' });
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context: other });
    assert.equal(a.outputs.result, 'acquired');
    const r = await run({ command: nodeCommand("require('fs').writeFileSync('ran', 'x')"), 'cleanup-command': nodeCommand('process.exit(0)'), 'timeout-minutes': '0' });
    assert.equal(r.outcome, 'failure');
    assert.deepEqual(r.order, ['node', 'check', 'acquire', 'release', 'not-acquired']);
    assert.match(r.steps['not-acquired'].stdout, /::error::leasehold run: the lock was not acquired \(acquire: timeout\)/);
    assert.equal(r.outputs.acquired, 'false');
    assert.equal(r.outputs['acquire-result'], 'timeout');
    assert.equal(r.steps.guard.outcome, 'skipped');
    assert.equal(r.steps.cleanup.outcome, 'skipped');
    assert.match(r.outputs['release-result'], /^(noop|queue-cleaned)$/);
    const state = await stateOf(lock);
    assert.deepEqual(state.holders.map((h) => h.holderId), ['octo/app:8599:other']);
    assert.deepEqual(state.queue, []);
  });

  test("a matrix cell without holder-suffix whose acquire is refused (holder-collision): its release leaves the other cell's holding", async () => {
    const { lock, context, run } = job();
    // The first cell (same run, same job id, another runner) holds the lock.
    const first = { ...context, RUNNER_NAME: 'runner-first' };
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'record-job-id': 'false' }, context: first });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const r = await run({ command: nodeCommand("require('fs').writeFileSync('ran', 'x')") });
    assert.equal(r.outcome, 'failure');
    assert.equal(r.outputs['acquire-result'], 'failed');
    assert.equal(r.steps.guard.outcome, 'skipped');
    assert.equal(r.outputs['release-result'], 'noop', r.steps.release.stdout);
    assert.match(r.steps.release.stdout, /another job of this run attempt/);
    const state = await stateOf(lock);
    assert.deepEqual(state.holders.map((h) => h.run.runnerName), ['runner-first'], 'the first cell still holds');
  });

  test('every step runs a bundle of this checkout through GITHUB_ACTION_PATH, never a workspace path', () => {
    const meta = parseYaml(readFileSync(join(ROOT, 'actions', 'run', 'action.yml'), 'utf8'));
    assert.equal(meta.runs.steps[0].id, 'node', 'node is checked first');
    for (const step of meta.runs.steps.filter((s) => !['node', 'not-acquired'].includes(s.id))) {
      assert.equal(step.uses, undefined, `${step.id}: a uses: in a composite action resolves against the caller's workspace`);
      assert.match(step.run, /^exec node "\$GITHUB_ACTION_PATH\/\.\.\/\.\.\/dist\/[\w-]+\.mjs"$/, step.id);
    }
    assert.deepEqual(meta.runs.steps.filter((s) => /^always\(\) && /.test(s.if ?? '')).map((s) => s.id), ['cleanup', 'release', 'not-acquired'], 'cleanup and release run always');
  });
});
