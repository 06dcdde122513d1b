// The guard: runs a child process (no shell, in its own process group) under a live holding.
// Every decision is the core's guard machine (`core.Guard`): when to verify, renew, wait and
// stop, what the exit code is. This module performs its commands (start a renewal, spawn the
// child, arm the one timer, signal the group, finish) and turns what happens into its events
// (a renewal ended, the timer fired, the child exited, a signal arrived).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { runOperation, systemClock } from './driver.mjs';

/** The signals the guard forwards to the child's process group. */
export const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Names under which a credential reaches this process; never passed on to the child. */
const CREDENTIAL_NAMES = ['INPUT_TOKEN', 'GITHUB_TOKEN', 'LEASEHOLD_TOKEN'];

/**
 * Checks a guard's inputs before anything is sent, all in the core: the renew operation's (lock,
 * nonce, holder id, run context…) and the guard's own (`kill-grace-seconds`); an error names the
 * input. Returns { plan, machine }: the renewals' plan and the guard machine.
 */
export function checkGuardInputs(core, inputs) {
  const probe = new core.Operation('renew', inputs, undefined);
  const plan = probe.plan;
  probe.free?.();
  return { plan, machine: new core.Guard(inputs) };
}

/**
 * The child's environment: `env` without any credential (the names above, and any variable
 * whose value holds one of `secrets`).
 */
export function childEnv(env, secrets) {
  const values = secrets.map((s) => (s ?? '').trim()).filter(Boolean);
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    if (CREDENTIAL_NAMES.includes(name) || values.some((s) => String(value).includes(s))) continue;
    out[name] = value;
  }
  return out;
}

function childExit(code, signal) {
  if (signal) return { kind: 'signalled', signal, number: constants.signals[signal] ?? 0 };
  return { kind: 'exited', code: code ?? 0 };
}

/** What guard-exit says of the child (as `child_process` reports it). */
function childFields(child) {
  return {
    childExitCode: child?.kind === 'exited' ? child.code : null,
    childSignal: child?.kind === 'signalled' ? child.signal : null,
    error: child?.kind === 'spawn-failed' ? child.message : null,
  };
}

/**
 * guard({ core: { Operation }, machine, inputs, argv, perform, emit, logger, clock, env, secrets })
 *   → Promise<{ exitCode, reason }>
 * `machine` is a fresh `core.Guard`; `inputs` are the renew operation's raw inputs; `emit(obj)`
 * writes one JSON line; `perform` is the GitHub transport; `secrets` are values the child's
 * environment must not carry.
 */
export async function guard({ core, machine, inputs, argv, perform, emit, logger, clock = systemClock, env = process.env, secrets = [] }) {
  const events = [];
  let wake = null;
  let fatal = null;
  const push = (event) => {
    events.push(event);
    wake?.();
  };
  let first = null; // the verification's outcome
  let child = null;
  let timer = null;
  const disarm = () => timer?.abort();
  const arm = (at) => {
    disarm();
    const controller = (timer = new AbortController());
    clock.sleepUntil(at, controller.signal).then(() => {
      if (!controller.signal.aborted) push({ kind: 'timer-fired', now: clock.now() });
    });
  };
  const renew = (kind) => {
    const op = new core.Operation('renew', inputs, undefined);
    runOperation({ op, perform, logger, clock })
      .then(
        (outcome) => {
          if (kind === 'verified') first = outcome;
          push({ kind, now: clock.now(), outcome });
        },
        (error) => {
          fatal = error;
          wake?.();
        },
      )
      .finally(() => op.free?.());
  };
  const forward = (signal) => push({ kind: 'signal-received', now: clock.now(), signal });
  const group = (signal) => {
    try {
      if (child?.pid) process.kill(-child.pid, signal);
    } catch {
      // Nothing left in the group.
    }
  };
  const start = (lease) => {
    child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', detached: true, env: childEnv(env, secrets) });
    let ended = false;
    child.on('exit', (code, signal) => {
      if (!ended) push({ kind: 'child-exited', now: clock.now(), exit: childExit(code, signal) });
      ended = true;
    });
    child.on('error', (error) => {
      if (!ended) push({ kind: 'child-exited', now: clock.now(), exit: { kind: 'spawn-failed', message: error.message } });
      ended = true;
    });
    for (const s of FORWARDED) process.on(s, forward);
    emit({
      event: 'guard-start',
      lock: first.lock,
      holderId: first.holderId,
      fence: first.fence ?? null,
      pid: child.pid ?? null,
      argv,
      expiresAt: new Date(lease.expiresAt).toISOString(),
      localDeadline: new Date(lease.localDeadline).toISOString(),
    });
  };

  try {
    let step = machine.step({ kind: 'started', now: clock.now() });
    for (;;) {
      for (const line of step.log ?? []) logger[line.level](`leasehold guard: ${line.text}`);
      for (const command of step.commands) {
        switch (command.kind) {
          case 'verify':
            renew('verified');
            break;
          case 'renew':
            renew('renewal-ended');
            break;
          case 'spawn':
            start(command.lease);
            break;
          case 'wait-until':
            arm(command.at);
            break;
          case 'signal':
            group(command.signal);
            break;
          case 'finish': {
            const { exitCode, reason } = command;
            if (reason === 'not-held') {
              emit({ event: 'guard-refused', lock: first.lock, holderId: first.holderId, result: first.result, error: first.error ?? null });
            } else {
              const { childExitCode, childSignal, error } = childFields(command.child);
              emit({ event: 'guard-exit', reason, exitCode, childExitCode, childSignal, renewals: command.renewals, error });
            }
            return { exitCode, reason };
          }
          default:
            throw new Error(`leasehold guard: unknown command ${command.kind}`);
        }
      }
      while (events.length === 0 && !fatal) await new Promise((resolve) => (wake = resolve));
      wake = null;
      if (fatal) throw fatal;
      step = machine.step(events.shift());
    }
  } finally {
    disarm();
    for (const s of FORWARDED) process.off(s, forward);
  }
}
