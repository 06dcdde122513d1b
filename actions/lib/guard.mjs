// The guard: runs a child process (no shell, in its own process group) under a live holding.
// It verifies the holding, renews it on the core's schedule (one renewal at a time), and stops
// the child's process group when a renewal proves the holding lost or the local deadline passes
// without a proven renewal. What to do next is the core's decision (guardDecide); this module
// only performs it: spawn, renew, wait, kill.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { runOperation, systemClock } from './driver.mjs';

/** Exit codes of the guard itself (a child that ends on its own passes its code through). */
export const EXIT = { usage: 64, lost: 70, deadline: 71, notHeld: 72 };

const signalNumber = (name) => constants.signals[name] ?? 0;

/**
 * Checks a guard's inputs before anything is sent: the renew operation's (lock, nonce, holder id,
 * run context…; its errors name the input) and the kill grace (`graceText`, in seconds, 1 to
 * 300; a bad one is an error naming `graceName`). Returns { plan, killGraceMs }.
 */
export function checkGuardInputs(core, inputs, graceText, graceName) {
  const probe = new core.Operation('renew', inputs, undefined);
  const plan = probe.plan;
  probe.free?.();
  const grace = (graceText ?? '').trim() || '10';
  if (!/^\d+$/.test(grace) || Number(grace) < 1 || Number(grace) > 300) {
    throw Object.assign(new Error(`${graceName} must be a whole number from 1 to 300 (got ${JSON.stringify(grace)})`), { code: 'invalid-input', input: 'kill-grace-seconds' });
  }
  return { plan, killGraceMs: Number(grace) * 1000 };
}

/**
 * guard({ core: { Operation, guardDecide }, inputs, argv, perform, emit, logger, clock,
 *         killGraceMs }) → Promise<{ exitCode, reason }>
 * `inputs` are the renew operation's raw inputs (lock, nonce, holder-id, context…); `emit(obj)`
 * writes one JSON line; `perform` is the GitHub transport.
 */
export async function guard({ core, inputs, argv, perform, emit, logger, clock = systemClock, killGraceMs = 10_000 }) {
  const renew = async () => {
    const op = new core.Operation('renew', inputs, undefined);
    try {
      return await runOperation({ op, perform, logger, clock });
    } finally {
      op.free?.();
    }
  };

  const first = await renew();
  if (first.result !== 'renewed') {
    emit({ event: 'guard-refused', lock: first.lock, holderId: first.holderId, result: first.result, error: first.error ?? null });
    return { exitCode: EXIT.notHeld, reason: 'not-held' };
  }
  let lease = first.lease;
  let last = 'none';
  let lastAttemptAt = null;
  let renewals = 0;

  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', detached: true });
  let exited = null;
  const exit = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve((exited = { code, signal })));
    child.on('error', (error) => resolve((exited = { code: null, signal: null, error: error.message })));
  });
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

  const group = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const forward = (signal) => group(signal);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, forward);

  let killed = null;
  try {
    while (!exited) {
      const decision = core.guardDecide({ now: clock.now(), lease, last, lastAttemptAt, killGraceMs });
      if (decision.action === 'renew') {
        // A renewal still retrying at the local deadline has not proven anything: the deadline
        // wins (the renewal may finish in the background; its answer is ignored).
        const controller = new AbortController();
        const outcome = await Promise.race([
          renew(),
          clock.sleepUntil(decision.until, controller.signal).then(() => null),
          exit.then(() => null),
        ]);
        controller.abort();
        renewals += 1;
        lastAttemptAt = clock.now();
        if (outcome === null) {
          continue; // the deadline came (or the child ended): ask the core again
        } else if (outcome.result === 'renewed') {
          lease = outcome.lease;
          last = 'renewed';
        } else if (outcome.result === 'not-due') {
          // Held, not due yet by GitHub's clock: the lease already proven stands, and the core
          // spaces the next try.
          last = 'not-due';
        } else if (outcome.result === 'lost') {
          last = 'lost';
          logger.warning(`leasehold guard: ${outcome.error?.message ?? 'the holding was lost'}`);
        } else {
          last = 'failed';
          logger.warning(`leasehold guard: renewal failed (${outcome.error?.code ?? outcome.result}: ${outcome.error?.message ?? ''}); the child runs on until ${new Date(lease.localDeadline).toISOString()}`);
        }
      } else if (decision.action === 'wait') {
        const controller = new AbortController();
        await Promise.race([clock.sleepUntil(decision.until, controller.signal), exit]);
        controller.abort();
      } else {
        killed = decision.reason;
        logger.warning(`leasehold guard: stopping the child (${killed === 'lost' ? 'the holding was lost' : 'the local deadline passed without a proven renewal'})`);
        group('SIGTERM');
        const timer = setTimeout(() => group('SIGKILL'), killGraceMs);
        await exit;
        clearTimeout(timer);
      }
    }
  } finally {
    for (const s of signals) process.off(s, forward);
  }

  const childExit = exited.error ? 127 : (exited.code ?? 128 + signalNumber(exited.signal));
  const exitCode = killed ? EXIT[killed] : childExit;
  const reason = killed ?? (exited.error ? 'spawn-failed' : 'child-exited');
  emit({ event: 'guard-exit', reason, exitCode, childExitCode: exited.code, childSignal: exited.signal, renewals, error: exited.error ?? null });
  return { exitCode, reason };
}
