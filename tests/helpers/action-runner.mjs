// Runs a leasehold action the way the GitHub runner does: `node dist/<bundle>` with INPUT_*
// variables (the action.yml defaults filled in, as the runner does), GITHUB_* context, and the
// GITHUB_OUTPUT / GITHUB_STATE / GITHUB_STEP_SUMMARY files, then reads back what it wrote.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const metadataCache = new Map();

function scalar(text) {
  const t = text.trim();
  if (t.startsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
  if (t.startsWith('"')) return JSON.parse(t);
  return t;
}

/** The `yaml` package when installed (every test run: npm ci); the demo runs without it. */
const yaml = (() => {
  try {
    return createRequire(import.meta.url)('yaml');
  } catch {
    return null;
  }
})();

/**
 * What the runner takes from actions/<name>/action.yml (or the action.yml in `dir`): each
 * input's default and whether it is required, and runs.main/post, parsed with the `yaml`
 * package. Where that is not installed (the demo on a fresh clone needs no install) a reader for
 * the shape of leasehold's own action.yml files stands in.
 */
export function actionMetadata(name, dir = join(ROOT, 'actions', name)) {
  if (!metadataCache.has(dir)) {
    const text = readFileSync(join(dir, 'action.yml'), 'utf8');
    let meta;
    if (yaml) {
      const doc = yaml.parse(text);
      const inputs = Object.fromEntries(Object.entries(doc.inputs ?? {}).map(([k, v]) => [k, Object.fromEntries(['default', 'required'].filter((f) => v?.[f] !== undefined).map((f) => [f, String(v[f])]))]));
      // A composite action's `runs.steps` is no entry point: only the scalar keys count.
      meta = { inputs, runs: Object.fromEntries(Object.entries(doc.runs ?? {}).filter(([, v]) => typeof v !== 'object')) };
    } else {
      meta = lineReader(text);
    }
    metadataCache.set(dir, meta);
  }
  return metadataCache.get(dir);
}

/** The demo's stand-in for the `yaml` package, for leasehold's own action.yml layout only. */
function lineReader(text) {
  const meta = { inputs: {}, runs: {} };
  let section = null;
  let input = null;
  for (const line of text.split('\n')) {
    const top = line.match(/^(\w[\w-]*):/);
    if (top) {
      section = top[1];
      continue;
    }
    const key = line.match(/^  ([\w-]+):\s*(.*)$/);
    if (key && section === 'inputs') {
      input = key[1];
      meta.inputs[input] = {};
    } else if (key && section === 'runs' && key[2].trim()) {
      meta.runs[key[1]] = scalar(key[2]);
    }
    const field = line.match(/^    (default|required):\s*(.*)$/);
    if (field && section === 'inputs' && input) meta.inputs[input][field[1]] = scalar(field[2]);
  }
  return meta;
}

/** Both readers agree on every action (a test calls this). */
export function metadataReadersAgree(name) {
  const text = readFileSync(join(ROOT, 'actions', name, 'action.yml'), 'utf8');
  const canonical = (v) => (v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])])) : v);
  return JSON.stringify(canonical(lineReader(text))) === JSON.stringify(canonical(actionMetadata(name)));
}

/** Parses the GITHUB_OUTPUT / GITHUB_STATE file format (`name<<DELIMITER … DELIMITER`). */
export function parseCommandFile(text) {
  const values = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const heredoc = line.match(/^([^=<]+)<<(.+)$/);
    if (heredoc) {
      const [, name, delimiter] = heredoc;
      const body = [];
      while (++i < lines.length && lines[i] !== delimiter) body.push(lines[i]);
      // The runner refuses a heredoc whose delimiter never comes, and so does this reader.
      if (i >= lines.length) throw new Error(`command file: ${name}<<${delimiter} is not closed`);
      values[name] = body.join('\n');
    } else {
      const eq = line.indexOf('=');
      if (eq <= 0) throw new Error(`command file: invalid line ${JSON.stringify(line)} (neither name=value nor name<<delimiter)`);
      values[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  return values;
}

let runSeq = 0;

let declared = null;
/** Every input any action of this repository declares. */
function declaredAnywhere() {
  declared ??= new Set(
    readdirSync(join(ROOT, 'actions'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== 'lib')
      .flatMap((d) => Object.keys(actionMetadata(d.name).inputs ?? {})),
  );
  return declared;
}

/** The environment the runner gives a step, for a simulated job. */
export function jobContext({ repository = 'octo/app', runId = 1000, runAttempt = 1, job = 'build', runner = `runner-${runId}-${job}` } = {}) {
  return {
    GITHUB_REPOSITORY: repository,
    GITHUB_RUN_ID: String(runId),
    GITHUB_RUN_ATTEMPT: String(runAttempt),
    GITHUB_JOB: job,
    RUNNER_NAME: runner,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_ACTIONS: 'true',
    CI: 'true',
  };
}

/**
 * Runs actions/<name> against `apiUrl`. `inputs` are the step's `with:` values; `context` is
 * from jobContext(). `phase: 'post'` runs the post entry with `state` (what the main step
 * saved) as STATE_* variables, as the runner does. `checkRunId` is `job.check_run_id` (absent by
 * default, as on GitHub Enterprise Server). `onSpawn(child)` sees the process (to send
 * it signals). Resolves to { code, signal, outputs, state, exported (what it wrote to GITHUB_ENV,
 * for the job's later steps: pass it as `env`), summary, stdout, stderr, ms, files }
 * (files: every file the step's directory held at the end, by relative path, as text).
 * `actionDir` runs the action in that directory instead of actions/<name> (the benchmarks run
 * another project's actions this way).
 */
export function runAction(name, { apiUrl, token = 'test-token', inputs = {}, context = jobContext(), env = {}, signal, phase = 'main', state = {}, onSpawn, checkRunId = null, actionDir = join(ROOT, 'actions', name) } = {}) {
  const meta = actionMetadata(name, actionDir);
  const dir = mkdtempSync(join(tmpdir(), `leasehold-step-${process.pid}-${++runSeq}-`));
  const files = { GITHUB_OUTPUT: join(dir, 'output'), GITHUB_STATE: join(dir, 'state'), GITHUB_STEP_SUMMARY: join(dir, 'summary'), GITHUB_ENV: join(dir, 'env') };
  for (const f of Object.values(files)) writeFileSync(f, '');
  const stepEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...context,
    ...files,
    GITHUB_API_URL: apiUrl,
    RUNNER_TEMP: dir,
    ...env,
  };
  // The runner passes an input the action does not declare and warns "Unexpected input(s)".
  // Tests hand one action's inputs to its sibling (acquire's to release) as workflows do, but an
  // input no leasehold action declares is a typo, and fails here.
  const unknown = Object.keys(inputs).filter((k) => !Object.hasOwn(meta.inputs ?? {}, k) && !declaredAnywhere().has(k));
  if (unknown.length) throw new Error(`no leasehold action declares the input ${unknown.join(', ')} (given to actions/${name})`);
  for (const [input, spec] of Object.entries(meta.inputs ?? {})) {
    let value = inputs[input] ?? spec.default ?? '';
    if (value === '${{ github.token }}') value = token;
    // A step that runs has seen no failure so far: the runner evaluates job.status to success.
    if (value === '${{ job.status }}') value = 'success';
    // job.check_run_id: a number where GitHub provides it, null (an empty input) elsewhere.
    if (value === '${{ job.check_run_id }}') value = checkRunId ?? '';
    stepEnv[`INPUT_${input.replace(/ /g, '_').toUpperCase()}`] = String(value);
  }
  for (const [key, value] of Object.entries(state)) stepEnv[`STATE_${key}`] = value;
  const entry = meta.runs[phase];
  if (!entry) throw new Error(`${actionDir} has no ${phase} entry`);
  const bundle = resolve(actionDir, entry);
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    // `signal` (an AbortSignal) kills the step outright, like a lost runner: SIGKILL, no cleanup.
    const child = spawn(process.execPath, [bundle], { env: stepEnv, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, sig) => {
      const read = (f) => readFileSync(f, 'utf8');
      const result = {
        code,
        signal: sig,
        outputs: parseCommandFile(read(files.GITHUB_OUTPUT)),
        state: parseCommandFile(read(files.GITHUB_STATE)),
        exported: parseCommandFile(read(files.GITHUB_ENV)),
        summary: read(files.GITHUB_STEP_SUMMARY),
        stdout,
        stderr,
        ms: Date.now() - started,
        files: Object.fromEntries(readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => [join(e.parentPath ?? e.path, e.name).slice(dir.length + 1), read(join(e.parentPath ?? e.path, e.name))])),
      };
      rmSync(dir, { recursive: true, force: true });
      resolvePromise(result);
    });
  });
}
