// The cleanup command's driver (actions/lib/cleanup.mjs) around the core's run machine, with a
// real child process, the real clock and a process tree and signal source the test controls:
// what the driver does with the machine's commands when a SIGKILL does not end the command, when
// a signal came before the start, and on Windows' Ctrl-Break.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { runCleanupCommand } from '../actions/lib/cleanup.mjs';
import { loadCore } from '../dist/leasehold-core.mjs';

const core = loadCore();
const quiet = { info() {}, warning() {}, debug() {} };

/** A command that ignores every polite signal and runs until killed. */
const stubborn = [process.execPath, '-e', "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {}); console.log('stubborn ' + 'up'); setInterval(() => {}, 1000)"].join('\n');

/** A process tree that records each signal and lets the first `failKills` SIGKILLs fail, as a
 *  `taskkill /F` that failed would; the others kill the command for real. */
function tree({ failKills }) {
  const sent = [];
  let failed = 0;
  return {
    sent,
    spawnOptions: { detached: true, stdio: 'ignore' },
    signal(pid, signal) {
      sent.push(signal);
      if (signal !== 'SIGKILL') return;
      if (failed < failKills) {
        failed += 1;
        return;
      }
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    },
  };
}

test('a SIGKILL that does not end the command goes again a kill grace later, and the run ends', { skip: process.platform === 'win32', timeout: 30_000 }, async () => {
  const machine = new core.CleanupRun({ command: stubborn, 'timeout-seconds': '60', 'kill-grace-seconds': '1' });
  const signals = new EventEmitter();
  const t = tree({ failKills: 1 });
  const lines = [];
  const logger = { info: (l) => lines.push(l), warning: (l) => lines.push(l) };
  const run = runCleanupCommand({ machine, logger, tree: t, signals });
  // Once the command runs (its listeners are on), the runner's cancel arrives.
  await new Promise((resolve) => setTimeout(resolve, 300));
  signals.emit('SIGHUP', 'SIGHUP');
  const { end, report } = await run;
  machine.free();
  assert.deepEqual(t.sent, ['SIGHUP', 'SIGKILL', 'SIGKILL', 'SIGKILL'], lines.join('\n'));
  assert.deepEqual(end, { kind: 'signalled', signal: 'SIGKILL' });
  assert.equal(report.reason, 'cancelled');
  assert.ok(lines.some((l) => l.includes('still running after SIGKILL')), lines.join('\n'));
  assert.equal(signals.listenerCount('SIGHUP'), 0, 'the listeners are removed at the end');
});

test('a signal before the start keeps the command from running, and Ctrl-Break is named as received', async () => {
  const machine = new core.CleanupRun({ command: stubborn });
  const t = tree({ failKills: 0 });
  const { end, report } = await runCleanupCommand({ machine, logger: quiet, tree: t, signals: new EventEmitter(), cancelled: 'SIGBREAK' });
  machine.free();
  assert.deepEqual(end, { kind: 'signalled', signal: 'SIGBREAK' });
  assert.equal(report.cleanup, 'unknown');
  assert.deepEqual(t.sent, [], 'nothing was started, so nothing is signalled');
});

test('Ctrl-Break while the command runs goes on to its group as SIGTERM', { skip: process.platform === 'win32', timeout: 30_000 }, async () => {
  const machine = new core.CleanupRun({ command: stubborn, 'kill-grace-seconds': '1' });
  const signals = new EventEmitter();
  const t = tree({ failKills: 0 });
  const run = runCleanupCommand({ machine, logger: quiet, tree: t, signals });
  await new Promise((resolve) => setTimeout(resolve, 300));
  signals.emit('SIGBREAK', 'SIGBREAK');
  const { end } = await run;
  machine.free();
  assert.deepEqual(t.sent.slice(0, 2), ['SIGTERM', 'SIGKILL']);
  assert.equal(end.kind, 'signalled');
});
