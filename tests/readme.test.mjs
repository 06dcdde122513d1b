// Keeps the README true: every input and output of every action is in its table with the
// action.yml default, every `uses:` of a leasehold action is pinned to a full commit SHA, and the
// two quick-start commands exist as npm scripts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, actionMetadata } from './helpers/action-runner.mjs';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const actions = readdirSync(join(ROOT, 'actions'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'lib')
  .map((d) => d.name);

function table(heading) {
  const start = readme.indexOf(`### ${heading}\n`);
  assert.ok(start >= 0, `README has a "${heading}" section`);
  const rows = readme.slice(start).split('\n').slice(2);
  const out = new Map();
  for (const row of rows) {
    if (row.startsWith('###')) break;
    const cells = row.split('|').map((c) => c.trim());
    const name = cells[1]?.match(/^`([^`]+)`$/);
    if (name) out.set(name[1], cells.slice(2, -1));
  }
  return out;
}

for (const name of actions) {
  test(`README documents every input of ${name} with its default`, () => {
    const rows = table(`${name} inputs`);
    const meta = actionMetadata(name);
    assert.deepEqual([...rows.keys()].sort(), Object.keys(meta.inputs).sort());
    for (const [input, spec] of Object.entries(meta.inputs)) {
      const [required, defaultCell] = rows.get(input);
      assert.equal(required, spec.required === 'true' ? 'yes' : 'no', `${input}: required`);
      if (spec.default) assert.ok(defaultCell.includes(`\`${spec.default}\``), `${input}: default ${spec.default} in "${defaultCell}"`);
    }
  });

  test(`README documents every output of ${name}`, () => {
    const rows = table(`${name} outputs`);
    const yml = readFileSync(join(ROOT, 'actions', name, 'action.yml'), 'utf8');
    const outputs = [...yml.split('\noutputs:\n')[1].split('\nruns:')[0].matchAll(/^  ([\w-]+):$/gm)].map((m) => m[1]);
    assert.deepEqual([...rows.keys()].sort(), outputs.sort());
  });
}

test('every leasehold action in the README is pinned to a full commit SHA', () => {
  const uses = [...readme.matchAll(/uses: (\S+)/g)].map((m) => m[1]);
  assert.ok(uses.length >= 2);
  for (const u of uses) assert.match(u, /@[0-9a-f]{40}$/, u);
});

test('the quick-start commands exist', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.ok(readme.includes('npm run demo') && pkg.scripts.demo);
  assert.ok(readme.includes('npm test') && pkg.scripts.test);
});
