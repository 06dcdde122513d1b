// The guard on Windows (actions/lib/guard.mjs processTree, the platform injected): no process
// groups and no signals there, so the child is started in the guard's console and its tree is
// stopped with taskkill: /T for the polite stop, /T /F for the final one; a stop that fails is
// reported, not swallowed. Then the same guard loop as on POSIX, with the Windows tree and a
// stand-in taskkill, stops a command whose holding can no longer be proven.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnv, guard, processTree } from '../actions/lib/guard.mjs';
import { createTransport } from '../actions/lib/github.mjs';
import { loadCore } from '../dist/leasehold-core.mjs';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const recorder = () => {
  const lines = [];
  const log = (level) => (text) => lines.push(`${level}: ${text}`);
  return { lines, logger: { debug: () => {}, info: log('info'), warning: log('warning') } };
};

test('Windows: the tree is started in the guard\'s console and stopped with taskkill /T, then /T /F', () => {
  const calls = [];
  const { lines, logger } = recorder();
  let answer = { status: 0 };
  const tree = processTree({ platform: 'win32', run: (file, args) => (calls.push([file, ...args]), answer), logger });
  assert.deepEqual(tree.spawnOptions, { detached: false, windowsHide: true });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGKILL']) tree.signal(4242, signal);
  assert.deepEqual(calls, [
    ['taskkill', '/T', '/PID', '4242'],
    ['taskkill', '/T', '/PID', '4242'],
    ['taskkill', '/T', '/PID', '4242'],
    ['taskkill', '/T', '/F', '/PID', '4242'],
  ]);
  assert.deepEqual(lines, []);
  answer = { status: 128, stderr: 'ERROR: The process "4242" not found.' };
  tree.signal(4242, 'SIGKILL');
  assert.deepEqual(lines, [], 'nothing left to stop is no failure');
  answer = { status: 1, stderr: 'ERROR: Access is denied.' };
  tree.signal(4242, 'SIGKILL');
  assert.match(lines.at(-1), /^warning: leasehold guard: taskkill \/T \/F \/PID 4242 failed: exit 1: ERROR: Access is denied\.$/);
  answer = { status: 1, stderr: 'ERROR: can only be terminated forcefully' };
  tree.signal(4242, 'SIGTERM');
  assert.match(lines.at(-1), /^info: .*taskkill \/T \/PID 4242 failed.*ended by force after the kill grace/);
  answer = { error: Object.assign(new Error('spawnSync taskkill ENOENT'), { code: 'ENOENT' }) };
  tree.signal(4242, 'SIGKILL');
  assert.match(lines.at(-1), /^warning: .*ENOENT/, 'a taskkill that cannot run is reported');
});

test('POSIX: the child leads its group and every signal goes to the group; a gone group is no failure', () => {
  const calls = [];
  const { lines, logger } = recorder();
  let fail = null;
  const tree = processTree({ platform: 'linux', kill: (pid, signal) => { calls.push([pid, signal]); if (fail) throw fail; }, logger });
  assert.deepEqual(tree.spawnOptions, { detached: true });
  tree.signal(4242, 'SIGTERM');
  tree.signal(4242, 'SIGKILL');
  assert.deepEqual(calls, [[-4242, 'SIGTERM'], [-4242, 'SIGKILL']]);
  fail = Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
  tree.signal(4242, 'SIGKILL');
  assert.deepEqual(lines, []);
  fail = Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
  tree.signal(4242, 'SIGKILL');
  assert.match(lines.at(-1), /^warning: .*SIGKILL.*group 4242.*EPERM/);
});

test('the guard loop stops the command through the Windows tree when the holding can no longer be proven', { timeout: 60_000 }, async () => {
  const core = loadCore();
  const emu = await startEmulator({ owner: 'octo', repo: 'app' });
  try {
    const policy = { ttlSeconds: 30, renewSeconds: 10, graceSeconds: 0, maxTtlSeconds: 3600, skewSeconds: 0, minRemainingSeconds: 3 };
    await emu.writeFile(emu.defaultBranch, 'locks/win.config.json', JSON.stringify({ capacity: 1, lease: policy }));
    const context = jobContext({ runId: 9700 });
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'win' }, context });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const inputs = { ...context, lock: 'win', 'holder-id': a.outputs['holder-id'], nonce: a.outputs.nonce, 'kill-grace-seconds': '1' };
    const transport = createTransport({ baseUrl: emu.url, token: 'test-token', repository: 'octo/app' });
    const emitted = [];
    // The verification is answered; after that GitHub never answers, so the local deadline passes.
    const perform = async (command) => {
      if (emitted.length === 0) return transport(command);
      throw new Error('socket closed by the peer');
    };
    // A stand-in taskkill (this machine has none): the polite stop is refused, as a console
    // program refuses it; the forced one ends the process.
    const calls = [];
    const run = (file, args) => {
      calls.push([file, ...args]);
      if (!args.includes('/F')) return { status: 1, stderr: 'ERROR: This process can only be terminated forcefully (with /F option).' };
      process.kill(Number(args.at(-1)), 'SIGKILL');
      return { status: 0 };
    };
    const { lines, logger } = recorder();
    const tree = processTree({ platform: 'win32', run, logger });
    // Virtual time once the command runs: each wait of the guard ends at once, at its end.
    let offset = 0;
    const clock = {
      now: () => Date.now() + offset,
      sleepUntil: async (at, signal) => {
        await new Promise((r) => setTimeout(r, emitted.length ? 1 : 20));
        if (!signal?.aborted && at > Date.now() + offset) offset += at - (Date.now() + offset);
      },
    };
    const result = await guard({ core, machine: new core.Guard(inputs), report: new core.GuardReport('renew', inputs), argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], perform, emit: (d) => emitted.push(d), logger, clock, env: { PATH: process.env.PATH }, tree });
    assert.deepEqual(result, { exitCode: 13, reason: 'deadline' }, lines.join('\n'));
    const pid = String(emitted[0].pid);
    // The polite stop, then the forced one (again, a kill grace later, while the tree is seen
    // alive: this test's clock runs each wait out at once).
    assert.deepEqual(calls.slice(0, 2), [['taskkill', '/T', '/PID', pid], ['taskkill', '/T', '/F', '/PID', pid]], lines.join('\n'));
    for (const call of calls.slice(2)) assert.deepEqual(call, ['taskkill', '/T', '/F', '/PID', pid], lines.join('\n'));
    assert.ok(lines.some((l) => /^info: .*terminated forcefully/.test(l)), lines.join('\n'));
    assert.equal(emitted.at(-1).event, 'guard-exit');
  } finally {
    await emu.close();
  }
});

test("Windows: a credential's variable name matches in any case (Windows reads gh_token as GH_TOKEN); elsewhere names keep their case", () => {
  const env = { gh_token: 'legacy-40-hex-token-without-a-prefix', Github_Token: 'x', PATH: '/bin' };
  assert.deepEqual(Object.keys(childEnv(env, [], 'win32')), ['PATH']);
  assert.deepEqual(Object.keys(childEnv(env, [], 'linux')).sort(), ['Github_Token', 'PATH', 'gh_token']);
});
