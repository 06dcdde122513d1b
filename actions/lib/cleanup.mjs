// The cleanup command of actions/cleanup: run it (no shell, its own process group, the
// guard's scrubbed environment) under the deadline the core's settings give, and say how it
// ended. What that end means for the resource is the core's (`classifyCleanup`); the release
// that records it is the release operation's.
import { spawn } from 'node:child_process';
import { systemClock } from './driver.mjs';
import { asForwarded, childEnv, FORWARDED, processTree } from './guard.mjs';

/**
 * runCleanupCommand({ settings, env, secrets, tree, clock, logger, signals }) → Promise<end>
 * `settings` are the core's (`cleanupCommand(inputs)`: argv, timeoutMs, killGraceMs,
 * signalKillMs, secondSignalKillMs); `end` is
 * `{kind: 'exited', code}`, `{kind: 'signalled', signal}`, `{kind: 'timed-out'}` or
 * `{kind: 'spawn-failed', message}`. At the deadline the command's process group gets SIGTERM,
 * then SIGKILL after the kill grace (or as soon as the command itself has ended). SIGINT,
 * SIGTERM, SIGHUP and SIGBREAK this process receives while the command runs go on to its group
 * (a cancelled job's cleanup should stop, and its end then proves nothing), SIGKILL following
 * `signalKillMs` after the first and `secondSignalKillMs` after a second. `tree` starts and
 * stops the process tree (processTree: the platform's way); `signals` is the process they are
 * received on (for tests). `cancelled` names a signal received before the command could start:
 * it is then not started, and ends `signalled` by it.
 */
export function runCleanupCommand({ settings, env = process.env, secrets = [], tree = processTree(), clock = systemClock, logger, signals = process, cancelled = null }) {
  const { argv, timeoutMs, killGraceMs, signalKillMs, secondSignalKillMs } = settings;
  if (cancelled) {
    logger?.warning(`leasehold cleanup: ${cancelled} was received before the cleanup command started; it does not run`);
    return Promise.resolve({ kind: 'signalled', signal: cancelled });
  }
  return new Promise((resolve) => {
    const timer = new AbortController();
    const grace = new AbortController();
    let timedOut = false;
    let ended = false;
    let child;
    const group = (signal) => {
      if (child?.pid) tree.signal(child.pid, signal);
    };
    // A signal (the runner cancelling: SIGINT, SIGTERM 7.5 s later, the step killed 2.5 s after
    // that) is passed on, and SIGKILL follows within the core's times, so the command never
    // outlives this step and the release in it.
    let received = 0;
    let killAt = Infinity;
    let killTimer = null;
    const forward = (signal) => {
      received += 1;
      const at = clock.now() + (received === 1 ? signalKillMs : secondSignalKillMs);
      logger?.info(`leasehold cleanup: received ${signal}; passing it on to the cleanup command (SIGKILL in ${Math.ceil((Math.min(at, killAt) - clock.now()) / 1000)} s unless it ends)`);
      group(asForwarded(signal));
      if (at >= killAt) return;
      killAt = at;
      killTimer?.abort();
      const armed = (killTimer = new AbortController());
      clock.sleepUntil(at, armed.signal).then(() => {
        if (armed.signal.aborted || ended) return;
        logger?.warning('leasehold cleanup: the cleanup command did not end after the signal; SIGKILL to its process group');
        group('SIGKILL');
      });
    };
    const finish = (end) => {
      if (ended) return;
      ended = true;
      timer.abort();
      grace.abort();
      killTimer?.abort();
      for (const s of FORWARDED) signals.off(s, forward);
      // What the command left running dies with it once its deadline has passed.
      if (timedOut) group('SIGKILL');
      resolve(timedOut ? { kind: 'timed-out' } : end);
    };
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', ...tree.spawnOptions, env: childEnv(env, secrets) });
    } catch (error) {
      resolve({ kind: 'spawn-failed', message: error.message });
      return;
    }
    for (const s of FORWARDED) signals.on(s, forward);
    child.on('exit', (code, signal) => finish(signal ? { kind: 'signalled', signal } : { kind: 'exited', code: code ?? 0 }));
    child.on('error', (error) => finish({ kind: 'spawn-failed', message: error.message }));
    const deadline = clock.now() + timeoutMs;
    clock.sleepUntil(deadline, timer.signal).then(() => {
      if (timer.signal.aborted || ended) return;
      timedOut = true;
      logger?.warning(`leasehold cleanup: the cleanup command is still running after ${timeoutMs / 1000} s; stopping it (SIGTERM, SIGKILL after ${killGraceMs / 1000} s)`);
      group('SIGTERM');
      clock.sleepUntil(clock.now() + killGraceMs, grace.signal).then(() => {
        if (!ended) group('SIGKILL');
      });
    });
  });
}

/** How a command's end reads in the log. */
export function describeEnd(end) {
  switch (end.kind) {
    case 'exited':
      return `exited with ${end.code}`;
    case 'signalled':
      return `was ended by ${end.signal}`;
    case 'timed-out':
      return 'was stopped at its deadline';
    default:
      return `could not start (${end.message})`;
  }
}

/** The command's exit code as the `command-exit-code` output: empty when it did not exit by itself. */
export const exitCodeOf = (end) => (end.kind === 'exited' ? String(end.code) : '');
