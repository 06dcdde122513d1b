// Runs a composite action (actions/<name>/action.yml with `runs.using: composite`) the way the
// GitHub runner runs one: its steps in order, each step's `if:` evaluated first (no status
// function in it means `success() && …`; `always()`, `success()`, `failure()`, `cancelled()`),
// `${{ }}` in `env:` and in the outputs' `value:` evaluated against the `inputs` (the `with:`
// values over the action.yml defaults) and `steps.<id>.outputs` contexts, and each `run:` written
// to a file and started as the runner starts `shell: bash` (`bash --noprofile --norc -eo
// pipefail <file>`), with GITHUB_ACTION_PATH, its own GITHUB_OUTPUT / GITHUB_STATE /
// GITHUB_STEP_SUMMARY files, and the job's environment. A cancellation is delivered as the
// runner delivers it (docs/github-semantics.md): SIGINT to the running step's process, SIGTERM
// 7.5 s later, SIGKILL 2.5 s after that; from then on only steps whose condition holds after a
// cancellation (`always()`, `cancelled()`) run.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT, parseCommandFile } from './action-runner.mjs';

/** The tokens of a GitHub Actions expression (the subset composite actions here use). */
function tokenize(text) {
  const tokens = [];
  const re = /\s*(?:('(?:[^']|'')*')|(==|!=|&&|\|\||[!().,])|(true|false|null)\b|(-?\d+(?:\.\d+)?)|([A-Za-z_][\w-]*))/y;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) throw new Error(`expression: cannot read ${JSON.stringify(text.slice(at))} in ${JSON.stringify(text)}`);
    at = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'literal', value: m[1].slice(1, -1).replace(/''/g, "'") });
    else if (m[2] !== undefined) tokens.push({ kind: 'op', value: m[2] });
    else if (m[3] !== undefined) tokens.push({ kind: 'literal', value: { true: true, false: false, null: null }[m[3]] });
    else if (m[4] !== undefined) tokens.push({ kind: 'literal', value: Number(m[4]) });
    else tokens.push({ kind: 'name', value: m[5] });
  }
  return tokens;
}

const truthy = (v) => !(v === false || v === null || v === undefined || v === '' || v === 0);
// GitHub compares strings without regard to case; other types are coerced to numbers.
const equal = (a, b) => {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  const num = (v) => (v === null || v === undefined ? 0 : v === '' ? 0 : typeof v === 'boolean' ? Number(v) : Number(v));
  return typeof a === typeof b ? a === b : num(a) === num(b);
};

/**
 * Evaluates `text` (without `${{ }}`) against `context` ({ inputs, steps, github, env }) and
 * `status` ({ failed, cancelled }). Returns the value, and whether a status function was called.
 */
export function evaluate(text, context, status = { failed: false, cancelled: false }) {
  const tokens = tokenize(text);
  let i = 0;
  let usedStatus = false;
  const peek = () => tokens[i];
  const take = (value) => {
    const t = tokens[i];
    if (value !== undefined && t?.value !== value) throw new Error(`expression: expected ${value} in ${JSON.stringify(text)}`);
    i++;
    return t;
  };
  const functions = {
    always: () => true,
    success: () => !status.failed && !status.cancelled,
    failure: () => status.failed && !status.cancelled,
    cancelled: () => status.cancelled,
  };
  function primary() {
    const t = take();
    if (!t) throw new Error(`expression: unexpected end of ${JSON.stringify(text)}`);
    if (t.kind === 'literal') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      const v = or();
      take(')');
      return v;
    }
    if (t.kind === 'op' && t.value === '!') return !truthy(primary());
    if (t.kind !== 'name') throw new Error(`expression: unexpected ${t.value} in ${JSON.stringify(text)}`);
    if (peek()?.value === '(') {
      take('(');
      take(')');
      const f = functions[t.value];
      if (!f) throw new Error(`expression: unknown function ${t.value}()`);
      usedStatus = true;
      return f();
    }
    let value = context[t.value];
    while (peek()?.value === '.') {
      take('.');
      const key = take().value;
      value = value === null || value === undefined ? null : value[key];
    }
    return value === undefined ? null : value;
  }
  function comparison() {
    let left = primary();
    while (peek()?.value === '==' || peek()?.value === '!=') {
      const op = take().value;
      const right = primary();
      left = op === '==' ? equal(left, right) : !equal(left, right);
    }
    return left;
  }
  function and() {
    let left = comparison();
    while (peek()?.value === '&&') {
      take();
      const right = comparison();
      left = truthy(left) ? right : left;
    }
    return left;
  }
  function or() {
    let left = and();
    while (peek()?.value === '||') {
      take();
      const right = and();
      left = truthy(left) ? left : right;
    }
    return left;
  }
  const value = or();
  if (i !== tokens.length) throw new Error(`expression: trailing ${tokens[i].value} in ${JSON.stringify(text)}`);
  return { value, usedStatus };
}

/** `text` with every `${{ … }}` replaced by its value, as a string. */
export function interpolate(text, context) {
  return String(text ?? '').replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expr) => {
    const { value } = evaluate(expr, context);
    return value === null || value === undefined ? '' : String(value);
  });
}

/** Whether a step runs: its `if:` (a `${{ }}` wrapper allowed), `success()` when none names a status. */
export function stepRuns(condition, context, status) {
  if (condition === undefined || condition === null || condition === '') return !status.failed && !status.cancelled;
  const text = String(condition).trim().replace(/^\$\{\{([\s\S]*)\}\}$/, '$1');
  const { value, usedStatus } = evaluate(text, context, status);
  if (!usedStatus) return !status.failed && !status.cancelled && truthy(value);
  return truthy(value);
}

const CANCEL_TERM_MS = 7_500;
const CANCEL_KILL_MS = 2_500;

/**
 * Runs actions/<name> (composite). `inputs` are the `with:` values; `env` is the job's
 * environment (GITHUB_* context, GITHUB_API_URL…); `token` stands in for `github.token`;
 * `checkRunId` stands in for `job.check_run_id` (absent, as on GitHub Enterprise Server, by
 * default); `onStep(id, child, cancel)` sees each step's process as it starts, and `cancel()`
 * cancels the job as the runner does. Resolves to { outcome, outputs, steps: { id: { outcome, code, signal,
 * outputs, stdout, stderr } }, order } with outcome `success` | `failure` | `cancelled`.
 */
export async function runComposite(name, { inputs = {}, env = {}, token = 'test-token', checkRunId = null, onStep } = {}) {
  const dir = join(ROOT, 'actions', name);
  const meta = parseYaml(readFileSync(join(dir, 'action.yml'), 'utf8'));
  if (meta.runs?.using !== 'composite') throw new Error(`actions/${name} is not a composite action`);
  const github = { token, action_path: dir };
  const status = { failed: false, cancelled: false };
  // job.status as the runner gives a composite action's steps: cancelled once the job is (a
  // failing step of the composite changes only the composite's own result, not the job's).
  const job = {
    get status() {
      return status.cancelled ? 'cancelled' : 'success';
    },
    check_run_id: checkRunId,
  };
  const resolvedInputs = {};
  for (const [input, spec] of Object.entries(meta.inputs ?? {})) {
    const given = inputs[input];
    resolvedInputs[input] = given !== undefined ? String(given) : interpolate(spec?.default ?? '', { github, job });
  }
  const context = { inputs: resolvedInputs, steps: {}, github, job };
  const steps = {};
  const order = [];
  let running = null;
  const timers = [];
  const cancel = () => {
    if (status.cancelled) return;
    status.cancelled = true;
    const child = running;
    if (!child) return;
    child.kill('SIGINT');
    timers.push(setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM'), CANCEL_TERM_MS));
    timers.push(setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), CANCEL_TERM_MS + CANCEL_KILL_MS));
  };
  const scratch = mkdtempSync(join(tmpdir(), `leasehold-composite-${process.pid}-`));
  // What a step writes to GITHUB_ENV reaches every later step of the job (a step's own `env:`
  // wins over it), as the runner does.
  const exported = {};
  try {
    for (const [n, step] of meta.runs.steps.entries()) {
      const id = step.id ?? `__run_${n}`;
      if (!stepRuns(step.if, context, status)) {
        steps[id] = { outcome: 'skipped', outputs: {} };
        context.steps[id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' };
        continue;
      }
      if (step.uses) throw new Error(`actions/${name}: step ${id} uses ${step.uses}; this runner runs run: steps`);
      if (step.shell !== 'bash') throw new Error(`actions/${name}: step ${id} has shell ${step.shell}; this runner knows bash`);
      order.push(id);
      const files = { GITHUB_OUTPUT: join(scratch, `${id}.output`), GITHUB_STATE: join(scratch, `${id}.state`), GITHUB_ENV: join(scratch, `${id}.env`), GITHUB_STEP_SUMMARY: join(scratch, `${id}.summary`) };
      for (const f of Object.values(files)) writeFileSync(f, '');
      const script = join(scratch, `${id}.sh`);
      writeFileSync(script, step.run);
      const stepEnv = { ...env, ...exported, ...files, GITHUB_ACTION_PATH: dir, RUNNER_TEMP: scratch };
      for (const [key, value] of Object.entries(step.env ?? {})) stepEnv[key] = interpolate(value, context);
      const result = await new Promise((resolve, reject) => {
        const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { env: stepEnv, cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'] });
        running = child;
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
        onStep?.(id, child, cancel);
      });
      running = null;
      const outputs = parseCommandFile(readFileSync(files.GITHUB_OUTPUT, 'utf8'));
      Object.assign(exported, parseCommandFile(readFileSync(files.GITHUB_ENV, 'utf8')));
      const outcome = result.code === 0 ? 'success' : 'failure';
      if (outcome === 'failure') status.failed = true;
      steps[id] = { outcome, outputs, ...result };
      context.steps[id] = { outputs, outcome, conclusion: outcome };
    }
  } finally {
    for (const t of timers) clearTimeout(t);
    rmSync(scratch, { recursive: true, force: true });
  }
  const outputs = Object.fromEntries(Object.entries(meta.outputs ?? {}).map(([k, v]) => [k, interpolate(v.value, context)]));
  return { outcome: status.cancelled ? 'cancelled' : status.failed ? 'failure' : 'success', outputs, steps, order };
}
