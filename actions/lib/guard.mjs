// The guard: runs a child process (no shell, in its own process group) under a live holding.
// Every decision is the core's guard machine (`core.Guard`): when to verify, renew, wait and
// stop, what the exit code is. This module performs its commands (start a renewal, spawn the
// child, arm the one timer, signal the group, finish) and turns what happens into its events
// (a renewal ended, the timer fired, the child exited, a signal arrived).
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { machineEvents, runOperation, systemClock } from './driver.mjs';

/** The signals the guard hears and tells its machine of, which passes them on to the child's
 *  process group. SIGBREAK is Windows' Ctrl-Break, the runner's second cancellation signal there
 *  (Node can listen for it anywhere; only Windows sends it): the machine passes it on as SIGTERM. */
export const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'];

/**
 * Names never passed on to the child, whatever their value: where a GitHub token reaches this
 * process (the action's input, the CLI's credential, the names `gh` and others read), and the
 * runner's own credentials (the Actions runtime token, the OIDC token request's token and URL).
 * The runtime's service URLs go with the runtime token: they are no credential, but without the
 * token they only make a tool believe it can reach the runtime.
 */
const CREDENTIAL_NAMES = new Set([
  'INPUT_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'LEASEHOLD_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
  'ACTIONS_RUNTIME_URL',
  'ACTIONS_RESULTS_URL',
]);

/**
 * How the child's whole process tree is started and stopped on `platform`.
 * - POSIX: the child leads its own process group (`detached`), and a signal goes to the group
 *   (`kill(-pid)`), so whatever the command started, also after the command itself exited, is
 *   reached.
 * - Windows has neither process groups nor signals: the child is started in the guard's console
 *   (not detached: a detached child gets a console of its own) and its tree is stopped with
 *   `taskkill /T /PID` for SIGTERM, SIGINT and SIGHUP (asks the tree's windows to close; a
 *   console program only stops by force, which the kill grace then brings) and
 *   `taskkill /T /F /PID` for SIGKILL (ends every process of the tree). `/T` follows the
 *   parent links of live processes, so a descendant whose parent already exited is not
 *   reached: README "Windows".
 * A forced stop that fails is a warning, never swallowed ("nothing left to stop" is no
 * failure); a polite one that fails is logged. `kill` and `run` are injected for tests.
 */
export function processTree({ platform = process.platform, kill = (pid, signal) => process.kill(pid, signal), run = spawnSync, logger } = {}) {
  if (platform === 'win32') {
    return {
      spawnOptions: { detached: false, windowsHide: true },
      signal(pid, signal) {
        const force = signal === 'SIGKILL';
        const args = force ? ['/T', '/F', '/PID', String(pid)] : ['/T', '/PID', String(pid)];
        const r = run('taskkill', args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, encoding: 'utf8' });
        // taskkill exits 128 when no process of that id is left: nothing to stop.
        if (!r.error && (r.status === 0 || r.status === 128)) return;
        const why = `taskkill ${args.join(' ')} failed: ${r.error?.message ?? `exit ${r.status}: ${String(r.stderr ?? '').trim()}`}`;
        if (force) logger?.warning(`leasehold guard: ${why}`);
        else logger?.info(`leasehold guard: ${why}; the tree is ended by force after the kill grace`);
      },
    };
  }
  return {
    spawnOptions: { detached: true },
    signal(pid, signal) {
      try {
        kill(-pid, signal);
      } catch (error) {
        if (error.code !== 'ESRCH') logger?.warning(`leasehold guard: could not send ${signal} to the command's process group ${pid}: ${error.message}`);
      }
    },
  };
}

/**
 * Checks a guard's inputs before anything is sent, all in the core: the renew operation's (lock,
 * nonce, holder id, run context…) and the guard's own (`kill-grace-seconds`); an error names the
 * input. Returns { report, plan, machine }: what the guard says and renews with, the renewals'
 * plan, and the guard machine.
 */
export function checkGuardInputs(core, inputs, kind = 'renew') {
  const report = new core.GuardReport(kind, inputs);
  try {
    return { report, plan: report.plan, machine: new core.Guard(inputs) };
  } catch (error) {
    report.free?.();
    throw error;
  }
}

// A second line of defence only, and on purpose narrower than the core's list of credential
// shapes (`credentialShape`, crates/leasehold-core/src/wire/secrets.rs, which refuses them as
// identifiers): the protected work may need its own credentials (a model provider's key, a cloud
// key), so only GitHub's token prefixes (at a value's start or after a character that is not a
// letter or digit, followed by a token character) are dropped from the child's environment.
const GITHUB_TOKEN_SHAPE = /(?:^|[^A-Za-z0-9])(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_)[A-Za-z0-9_-]/;

/**
 * The child's environment: `env` without any credential (the names above, any variable whose
 * value holds one of `secrets`, and any whose value has a GitHub token's shape). On Windows a
 * variable's name has no case (`gh_token` is read as `GH_TOKEN`), so the names match in any case
 * there.
 */
export function childEnv(env, secrets, platform = process.platform) {
  const values = secrets.map((s) => (s ?? '').trim()).filter(Boolean);
  const named = platform === 'win32' ? (name) => CREDENTIAL_NAMES.has(name.toUpperCase()) : (name) => CREDENTIAL_NAMES.has(name);
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    const text = String(value);
    if (named(name) || values.some((s) => text.includes(s)) || GITHUB_TOKEN_SHAPE.test(text)) continue;
    out[name] = value;
  }
  return out;
}

/** How `child_process` reports an end, as the core reads it (`ChildExit`). */
export function childExit(code, signal) {
  if (signal) return { kind: 'signalled', signal, number: constants.signals[signal] ?? 0 };
  return { kind: 'exited', code: code ?? 0 };
}

/**
 * guard({ core: { Operation }, machine, report, argv, perform, emit, logger, clock, env, secrets })
 *   → Promise<{ exitCode, reason }>
 * `machine` is a fresh `core.Guard`, `report` a fresh `core.GuardReport` (each renewal runs its
 * operation on its inputs as they are then; it writes the documents `emit` prints, one JSON line
 * each); `perform` is the GitHub transport; `secrets` are values the child's environment must not
 * carry; `tree` starts and stops the child's process tree (processTree: the platform's way);
 * `onCarry` is given the carried version of the last renewal that left one, once, when the guard
 * finishes (the action exports it for later steps; once, not at every renewal of a long job).
 */
export async function guard({ core, machine, report, argv, perform, emit, logger, clock = systemClock, env = process.env, secrets = [], tree = processTree({ logger }), onCarry = () => {} }) {
  const events = machineEvents(clock);
  const { push } = events;
  let child = null;
  let carried = null;
  const renew = (kind) => {
    // From the inputs as they are now: a claim's renewal rotates its token.
    const op = new core.Operation(report.kind, report.inputs, undefined);
    runOperation({ op, perform, logger, clock })
      // A renewal whose driver threw (its transport, or the operation itself) ended all the
      // same: the core makes it a failed renewal of unknown outcome, and the machine decides
      // (the child runs on until the local deadline; a verification that failed so is refused).
      .catch((error) => report.unfinished(error?.message ?? error))
      .then((outcome) => {
        // The version the renewal knew last, for the job's later steps (release writes on it).
        if (outcome?.carry) carried = outcome.carry;
        report.heard(kind === 'verified', outcome);
        push({ kind, now: clock.now(), outcome });
      })
      .catch((error) => events.fail(error))
      .finally(() => op.free?.());
  };
  const forward = (signal) => push({ kind: 'signal-received', now: clock.now(), signal });
  const group = (signal) => {
    if (child?.pid) tree.signal(child.pid, signal);
  };
  const start = (lease) => {
    // Node reports some failures to start through 'error' and throws the others from spawn
    // itself (ENOTDIR, ENAMETOOLONG, E2BIG, a NUL in an argument; on Windows a .cmd without a
    // shell): either way the command could not be started.
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', ...tree.spawnOptions, env: childEnv(env, secrets) });
    } catch (error) {
      child = null;
      emit(report.startDocument({ pid: null, argv, lease }));
      push({ kind: 'child-exited', now: clock.now(), exit: { kind: 'spawn-failed', message: error?.message ?? String(error) } });
      return;
    }
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
    emit(report.startDocument({ pid: child.pid ?? null, argv, lease }));
  };

  // After an error of the guard itself (the machine refused an event, a command it does not
  // know, the report refused an outcome) nothing decides any more: the child's group is stopped
  // as the machine would stop it (SIGTERM, SIGKILL after the kill grace) before the error goes
  // on, so no process outlives the guard.
  const stopGroup = async () => {
    if (!child?.pid) return;
    group('SIGTERM');
    await clock.sleepUntil(clock.now() + killGraceMs);
    group('SIGKILL');
  };
  const { killGraceMs } = machine.settings;

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
            events.arm(command.at);
            break;
          case 'signal':
            group(command.signal);
            break;
          case 'finish':
            emit(report.finishDocument(command));
            if (carried) onCarry(carried);
            return { exitCode: command.exitCode, reason: command.reason };
          default:
            throw new Error(`leasehold guard: unknown command ${command.kind}`);
        }
      }
      step = machine.step(await events.next());
    }
  } catch (error) {
    logger.warning(`leasehold guard: stopping the command's process group after an error of the guard: ${error.message}`);
    await stopGroup();
    throw error;
  } finally {
    events.disarm();
    for (const s of FORWARDED) process.off(s, forward);
  }
}
