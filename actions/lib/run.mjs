// The action's entry: read inputs the way the runner passes them, run the operation, and
// write outputs, the job summary and the exit code.
import * as core from '@actions/core';
import { CARRY_PREFIX, CONTEXT, INPUTS, inputEnvName, OUTPUTS } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { describeEnd, exitCodeOf, runCleanupCommand } from './cleanup.mjs';
import { checkGuardInputs, FORWARDED, guard } from './guard.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { actionInput, describeInputError, describeInputWarning } from './input-error.mjs';
import { finalLine, outputsFor, summaryFor } from './report.mjs';
import { loadCore } from './wasm.mjs';

/** An error's message as a workflow author reads it: its input named as an action input. */
export const errorMessage = (error) => describeInputError(error, actionInput);

/** A plan's warning as a workflow author reads it. */
export const warningMessage = (warning) => describeInputWarning(warning, actionInput);

/** Raw inputs as the core reads them: untrimmed input values plus run context. */
export function collectInputs(kind, env = process.env) {
  const raw = {};
  for (const name of INPUTS[kind]) {
    if (name === 'token') continue;
    const value = env[inputEnvName(name)];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  for (const name of CONTEXT) {
    if (env[name]) raw[name] = env[name];
  }
  // The versions earlier steps of this job carried (acquire's, exported for release and for
  // actions/cleanup, whose operation is a release): the core takes the one of its own lock, if
  // any, and plans on it first.
  if (kind === 'release' || kind === 'cleanup') {
    const carried = Object.keys(env).filter((k) => k.startsWith(CARRY_PREFIX)).sort().map((k) => env[k]);
    if (carried.length) raw.carried = JSON.stringify(carried);
  }
  return raw;
}

const logger = {
  debug: (text) => core.debug(text),
  info: (text) => core.info(text),
  warning: (text) => core.warning(text),
};

/** Listens for the runner's cancellation signals while `body` runs (each heard signal is
 *  logged once; the process is not ended by them meanwhile). */
export async function withCancellation(body) {
  const controller = new AbortController();
  const onSignal = (signal) => {
    if (!controller.signal.aborted) core.info(`received ${signal}`);
    controller.abort(signal);
  };
  const signals = FORWARDED;
  for (const s of signals) process.on(s, onSignal);
  try {
    return await body(controller.signal);
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

function transportFor(plan, token) {
  return createTransport({
    baseUrl: apiBaseUrl(),
    token,
    repository: plan.repository,
  });
}

/**
 * The `token` input, masked in the log at once: read before any other input, so no message
 * printed after (an input error echoing a value) can show it. Empty when not given.
 */
function maskedToken() {
  const token = (process.env[inputEnvName('token')] ?? '').trim();
  if (token) core.setSecret(token);
  return token;
}

function requireToken(token) {
  if (!token) throw Object.assign(new Error('input `token` is required'), { code: 'invalid-input', input: 'token' });
  return token;
}

/**
 * Runs the action `kind`: its operation is `opKind` (the same but for actions/cleanup, whose
 * operation is a release). `before(loaded, inputs)`, when given, runs once every input is
 * checked and before anything is sent, and returns inputs to add (cleanup: its command's
 * report).
 */
export async function run(kind, { opKind = kind, before } = {}) {
  if (kind === 'acquire' && process.env.STATE_isPost === 'true') return post();
  // First of all, so the post step knows it is the post step even when an input check below
  // fails the main step (it then finds no claim and says so).
  if (kind === 'acquire') core.saveState('isPost', 'true');
  let op;
  try {
    const token = maskedToken();
    const loaded = loadCore();
    const { Operation, version } = loaded;
    const inputs = collectInputs(kind);
    op = new Operation(opKind, inputs, undefined);
    let plan = op.plan;
    requireToken(token);
    if (before) {
      const added = await before(loaded, inputs);
      op.free?.();
      op = new Operation(opKind, { ...inputs, ...added }, undefined);
      plan = op.plan;
    }
    for (const warning of plan.warnings) core.warning(warningMessage(warning));
    core.info(`leasehold ${version}: ${opKind} ${plan.lock} in ${plan.repository} (branch ${plan.stateBranch}) as ${plan.holderId}`);
    if (kind === 'acquire') {
      // Saved before anything is sent, so the post step can clean up even if this step is
      // killed while it waits.
      core.saveState('holder-id', plan.holderId);
      core.saveState('nonce', plan.nonce);
    }
    const perform = transportFor(plan, token);
    const outcome = await withCancellation((cancel) => runOperation({ op, perform, logger, cancel }));
    if (kind === 'acquire') {
      core.saveState('result', outcome.result);
      // The post step's cleanup treats any older answer as a stale cache.
      if (outcome.state) core.saveState('revision', String(outcome.state.revision));
    }
    // The version this step knew last, for the job's later steps (release writes on it).
    if (outcome.carry) core.exportVariable(outcome.carry.name, outcome.carry.value);
    const outputs = outputsFor(kind, outcome);
    for (const name of OUTPUTS[kind]) core.setOutput(name, outputs[name] ?? '');
    core.info(finalLine(kind, outcome));
    if (process.env.GITHUB_STEP_SUMMARY) {
      try {
        await core.summary.addRaw(summaryFor(kind, outcome, plan)).write();
      } catch (error) {
        core.warning(`could not write the job summary: ${error.message}`);
      }
    }
    if (!outcome.success) core.setFailed(`leasehold ${kind} ${outcome.result}: ${outcome.error?.message ?? ''}`.trim());
  } catch (error) {
    // Bad input (or a broken core) is reported before anything was sent.
    const where = error.input ? ` [${error.input}]` : '';
    core.setOutput('result', 'failed');
    core.setOutput('error-code', error.code ?? 'internal');
    // The yes-or-no outputs say no, as their descriptions promise, never nothing.
    for (const name of ['acquired', 'renewed', 'released']) {
      if (OUTPUTS[kind].includes(name)) core.setOutput(name, 'false');
    }
    core.setFailed(`leasehold ${kind}${where}: ${errorMessage(error)}`);
  } finally {
    op?.free?.();
  }
}

/**
 * The acquire action's post step (post-if: always()): if this job still holds or waits under
 * the claim acquire made, and no release removed it, remove it. Warns, never fails the job: the
 * explicit release step is the primary path.
 */
async function post() {
  let op;
  try {
    const holderId = process.env['STATE_holder-id'];
    const nonce = process.env.STATE_nonce;
    if (!holderId || !nonce) return core.info('leasehold post: acquire did not start; nothing to clean up');
    const token = maskedToken();
    const { Operation } = loadCore();
    const inputs = { ...collectInputs('acquire'), 'holder-id': holderId, nonce };
    if (process.env.STATE_revision) inputs['min-revision'] = process.env.STATE_revision;
    op = new Operation('cleanup', inputs, undefined);
    const plan = op.plan;
    for (const warning of plan.warnings) core.warning(warningMessage(warning));
    const perform = transportFor(plan, requireToken(token));
    const outcome = await runOperation({ op, perform, logger });
    const said = {
      skipped: 'release-on-exit is false; leaving the lock as it is',
      released: 'released the lock this job still held (no release step removed it)',
      'queue-cleaned': "removed this job's queue entry",
      noop: 'nothing left to clean up',
    }[outcome.result];
    const l = outcome.lifecycle;
    // Under the lifecycle a post step's release has no report: the slot is quarantined, not
    // freed, until an operator's recover (which needs the id printed here) or the reaper.
    if (said && l?.cleanupResult && l.cleanupResult !== 'released') {
      core.warning(`leasehold post ${plan.lock}: ${said}; no cleanup was reported, so the slot is ${l.cleanupResult}${l.reservationId ? ` as ${l.reservationId} (recover it with reservation-id ${l.reservationId} once the resource is known clean)` : ''}${l.incidentId ? `; incident ${l.incidentId}` : ''}`);
    } else if (said) core.info(`leasehold post ${plan.lock}: ${said}`);
    else core.warning(`leasehold post ${plan.lock}: could not clean up (${outcome.result}: ${outcome.error?.message ?? ''}); the release step or the lease must free it`);
  } catch (error) {
    core.warning(`leasehold post: cleanup skipped: ${error.message}`);
  } finally {
    op?.free?.();
  }
}

/**
 * actions/run's first step: every input a later step of it reads is checked by the core (the
 * acquire, the guard's, the cleanup command's and the release's rules) before acquire changes
 * anything, so a bad one fails the step naming the run's input and leaves the lock untouched.
 * It sends nothing (the token is only checked to be there).
 */
export function runCheck(env = process.env) {
  const given = collectInputs('run-check', env); // the run's inputs, and the run context
  const pick = (...names) => Object.fromEntries(names.filter((n) => given[n] !== undefined).map((n) => [n, given[n]]));
  const context = pick(...CONTEXT);
  const lockInputs = ['lock', 'repository', 'state-branch', 'holder-suffix', 'check-run-id'];
  // Each later step, with its inputs under its own names; `as` names them back as the run's.
  const steps = [
    { check: (l, i) => new l.Operation('acquire', i, undefined), inputs: pick(...lockInputs, 'timeout-minutes', 'poll-seconds', 'lease-minutes', 'record-job-id') },
    { check: (l, i) => new l.Guard(i), inputs: pick('kill-grace-seconds') },
    { check: (l, i) => new l.Operation('release', i, undefined), inputs: pick(...lockInputs, 'release-deadline-seconds') },
  ];
  // The cleanup step runs when `cleanup-command` is not empty (its condition): a value of blanks
  // only is checked, and refused, here.
  if (given['cleanup-command'] !== undefined) {
    const cleanup = pick('kill-grace-seconds', 'blocked-exit-code');
    cleanup.command = given['cleanup-command'];
    if (given['cleanup-timeout-seconds'] !== undefined) cleanup['timeout-seconds'] = given['cleanup-timeout-seconds'];
    steps.push({ check: (l, i) => new l.CleanupRun(i), inputs: cleanup, as: { command: 'cleanup-command', 'timeout-seconds': 'cleanup-timeout-seconds' } });
  }
  try {
    requireToken(maskedToken());
    const loaded = loadCore();
    commandArgv(given.command);
    for (const { check, inputs, as = {} } of steps) {
      try {
        check(loaded, { ...inputs, ...context }).free?.();
      } catch (error) {
        if (error.input && as[error.input]) error.input = as[error.input];
        throw error;
      }
    }
    core.info('leasehold run: every input checked; the lock is untouched so far');
  } catch (error) {
    const named = error.input ? ` [${error.input}]` : '';
    core.setFailed(`leasehold run${named}: ${errorMessage(error)} (the lock was not touched)`);
  }
}

/** The guard's `command` input as its argv: one argument per line, trimmed, blank lines dropped. */
function commandArgv(value = '') {
  const argv = value.split('\n').map((l) => l.trim()).filter(Boolean);
  if (argv.length === 0) throw Object.assign(new Error('input `command` is required: the program and its arguments, one per line'), { code: 'invalid-input', input: 'command' });
  return argv;
}

/** actions/guard: run `command` under this job's holding (see guard.mjs). */
export async function runGuard() {
  try {
    const token = maskedToken();
    const core_ = loadCore();
    const inputs = collectInputs('guard');
    const { report, plan, machine } = checkGuardInputs(core_, inputs);
    const argv = commandArgv(process.env[inputEnvName('command')]);
    for (const warning of plan.warnings) core.warning(warningMessage(warning));
    requireToken(token);
    const perform = transportFor(plan, token);
    const emit = (obj) => core.info(JSON.stringify(obj));
    const onCarry = (carry) => core.exportVariable(carry.name, carry.value);
    const { exitCode, reason } = await guard({ core: core_, machine, report, argv, perform, emit, logger, secrets: [token], onCarry });
    core.setOutput('exit-code', String(exitCode));
    core.setOutput('result', reason);
    if (exitCode !== 0) core.setFailed(`leasehold guard: ${reason} (exit code ${exitCode})`);
  } catch (error) {
    const where = error.input ? ` [${error.input}]` : '';
    core.setOutput('result', 'failed');
    core.setFailed(`leasehold guard${where}: ${errorMessage(error)}`);
  }
}

/**
 * actions/cleanup: run the cleanup command (cleanup.mjs), let the core classify how it ended,
 * then release with that report in the same step. Every input, the release's included, is
 * checked before the command runs; the release runs whatever the command did.
 */
export async function runCleanup() {
  // From the start, a cancellation signal never ends this process before the release: one
  // received before the command starts keeps it from starting.
  let cancelled = null;
  const early = (signal) => (cancelled ??= signal);
  const signals = FORWARDED;
  for (const s of signals) process.on(s, early);
  try {
    await run('cleanup', { opKind: 'release', before: (loaded, inputs) => cleanupReport(loaded, inputs, () => cancelled) });
  } finally {
    for (const s of signals) process.off(s, early);
  }
}

/** Runs the cleanup command and returns its report as release inputs. */
async function cleanupReport(loaded, inputs, cancelled) {
  const machine = new loaded.CleanupRun(inputs);
  try {
    const { argv, timeoutMs } = machine.settings;
    core.info(`leasehold cleanup: running ${JSON.stringify(argv)} (deadline ${timeoutMs / 1000} s)`);
    const { end, report } = await runCleanupCommand({ machine, logger, secrets: [process.env[inputEnvName('token')] ?? ''], cancelled: cancelled() });
    core.info(`leasehold cleanup: the command ${describeEnd(end)}: cleanup ${report.cleanup}, health ${report.health}, reason ${report.reason}`);
    core.setOutput('command-exit-code', exitCodeOf(end));
    core.setOutput('command-result', end.kind);
    return { cleanup: report.cleanup, health: report.health, reason: report.reason };
  } finally {
    machine.free();
  }
}
