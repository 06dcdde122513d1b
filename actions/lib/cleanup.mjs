// The cleanup command of actions/cleanup: every time and choice is the core's run machine
// (`core.CleanupRun`: when the command is stopped, which signal goes to its group and when, how
// it ended and what that says about the resource); this module performs its commands (spawn the
// command with no shell, in its own process group and the guard's scrubbed environment; arm the
// one timer; signal the group; finish) and turns what happens into its events. The release that
// records the report is the release operation's.
import { spawn } from 'node:child_process';
import { machineEvents, systemClock } from './driver.mjs';
import { childEnv, childExit, FORWARDED, processTree } from './guard.mjs';

/**
 * runCleanupCommand({ machine, logger, env, secrets, tree, clock, signals, cancelled })
 *   → Promise<{ end, report }>
 * `machine` is a fresh `core.CleanupRun`; `end` is `{kind: 'exited', code}`,
 * `{kind: 'signalled', signal}`, `{kind: 'timed-out'}` or `{kind: 'spawn-failed', message}`, and
 * `report` the release's `{cleanup, health, reason}`. SIGINT, SIGTERM, SIGHUP and SIGBREAK this
 * process receives while the command runs go to the machine (`signals` is the process they are
 * received on, for tests); `cancelled` names one received before the command could start. `tree`
 * starts and stops the process tree (processTree: the platform's way).
 */
export async function runCleanupCommand({ machine, logger, env = process.env, secrets = [], tree = processTree({ logger }), clock = systemClock, signals = process, cancelled = null }) {
  const events = machineEvents(clock);
  const { push } = events;
  let child = null;
  const forward = (signal) => push({ kind: 'signal-received', now: clock.now(), signal });
  const start = (argv) => {
    let ended = false;
    const exited = (exit) => {
      if (!ended) push({ kind: 'child-exited', now: clock.now(), exit });
      ended = true;
    };
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', ...tree.spawnOptions, env: childEnv(env, secrets) });
    } catch (error) {
      exited({ kind: 'spawn-failed', message: error.message });
      return;
    }
    child.on('exit', (code, signal) => exited(childExit(code, signal)));
    child.on('error', (error) => exited({ kind: 'spawn-failed', message: error.message }));
    for (const s of FORWARDED) signals.on(s, forward);
  };
  try {
    if (cancelled) push({ kind: 'signal-received', now: clock.now(), signal: cancelled });
    push({ kind: 'started', now: clock.now() });
    for (;;) {
      const step = machine.step(await events.next());
      for (const line of step.log ?? []) logger?.[line.level](`leasehold cleanup: ${line.text}`);
      for (const command of step.commands) {
        switch (command.kind) {
          case 'spawn':
            start(command.argv);
            break;
          case 'wait-until':
            events.arm(command.at);
            break;
          case 'signal':
            if (child?.pid) tree.signal(child.pid, command.signal);
            break;
          case 'finish':
            return { end: command.end, report: command.report };
          default:
            throw new Error(`leasehold cleanup: unknown command ${command.kind}`);
        }
      }
    }
  } catch (error) {
    // Nothing decides any more (the machine refused an event): the command's group is stopped
    // as the machine stops it at its deadline (SIGTERM, SIGKILL when the command has ended or
    // the kill grace is over), so no process outlives the step. The step then fails without
    // releasing (actions/run's plain release follows it, with no report: the slot is judged
    // unproven).
    if (child?.pid) {
      logger?.warning(`leasehold cleanup: stopping the cleanup command's process group after an error: ${error.message}`);
      tree.signal(child.pid, 'SIGTERM');
      const ended = new AbortController();
      if (child.exitCode !== null || child.signalCode !== null) ended.abort();
      else child.once('exit', () => ended.abort());
      await clock.sleepUntil(clock.now() + machine.settings.killGraceMs, ended.signal);
      tree.signal(child.pid, 'SIGKILL');
    }
    throw error;
  } finally {
    events.disarm();
    for (const s of FORWARDED) signals.off(s, forward);
  }
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
