// Keeps the README true: every input and output of every action is in its table with the
// action.yml default; every `uses:` is pinned to a full commit SHA with a `# vX.Y.Z` comment,
// and the leasehold pin is a released commit of this repository's history that has every
// action the README uses; no example pastes an expression into a script; and the two
// quick-start commands exist as npm scripts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ROOT, actionMetadata, metadataReadersAgree } from './helpers/action-runner.mjs';

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
    const outputs = Object.keys(parseYaml(readFileSync(join(ROOT, 'actions', name, 'action.yml'), 'utf8')).outputs ?? {});
    assert.deepEqual([...rows.keys()].sort(), outputs.sort());
  });
}

// The README's YAML examples, each dedented (most are fragments of a job's steps).
const yamlBlocks = (text) =>
  [...text.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)].map((m) => {
    const lines = m[1].split('\n');
    const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
    return lines.map((l) => l.slice(indent)).join('\n');
  });

/** Every `uses:` line of the README's examples: the action, its ref and its trailing comment. */
const usesLines = (text) =>
  yamlBlocks(text).flatMap((block) =>
    [...block.matchAll(/^\s*(?:- )?uses:\s*([^\s#]+)\s*(#.*)?$/gm)].map((m) => {
      const [action, ref = ''] = m[1].split('@');
      const leasehold = /^[\w.-]+\/leasehold\/actions\/([\w-]+)$/.exec(action);
      return { line: m[0].trim(), action, ref, comment: m[2] ?? '', name: leasehold?.[1] };
    }),
  );

const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const SEMVER = /^# v((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?)$/;

/** What is wrong with the README's pins, checked against this repository's history. */
function pinProblems(text, changelog) {
  const problems = [];
  const uses = usesLines(text);
  if (!uses.some((u) => u.name)) return ['the README has no leasehold `uses:` line'];
  for (const u of uses) {
    if (!/^[0-9a-f]{40}$/.test(u.ref)) problems.push(`${u.line}: not pinned to a full 40-character commit SHA`);
    if (!SEMVER.test(u.comment)) problems.push(`${u.line}: no \`# vX.Y.Z\` version comment after the SHA (Dependabot reads it)`);
  }
  const ours = uses.filter((u) => u.name);
  const shas = [...new Set(ours.map((u) => u.ref))];
  const versions = [...new Set(ours.map((u) => SEMVER.exec(u.comment)?.[1]))];
  if (shas.length !== 1 || versions.length !== 1) {
    return [...problems, `every leasehold action must be pinned to one commit and version, found ${shas.join(', ')} (${versions.join(', ')})`];
  }
  const [sha] = shas;
  const [version] = versions;
  if (problems.length) return problems;
  if (git('cat-file', '-e', `${sha}^{commit}`).status !== 0) {
    return [`the pinned commit ${sha} is not in this repository's history`];
  }
  if (git('merge-base', '--is-ancestor', sha, 'HEAD').status !== 0) problems.push(`the pinned commit ${sha} is not an ancestor of HEAD (a commit of main)`);
  // Every action the README uses is at the pinned commit, with every file its runs: names.
  for (const name of [...new Set(ours.map((u) => u.name))].sort()) {
    const file = `actions/${name}/action.yml`;
    const meta = git('show', `${sha}:${file}`);
    if (meta.status !== 0) {
      problems.push(`the README uses actions/${name}, but the pinned commit ${sha.slice(0, 12)} has no ${file}: pin a newer commit that has every action (docs/releasing.md)`);
      continue;
    }
    const runs = parseYaml(meta.stdout)?.runs ?? {};
    for (const key of ['pre', 'main', 'post'].filter((k) => runs[k])) {
      const entry = posix.normalize(posix.join(`actions/${name}`, runs[key]));
      if (git('cat-file', '-e', `${sha}:${entry}`).status !== 0) problems.push(`${file} at ${sha.slice(0, 12)}: runs.${key} ${entry} is missing`);
    }
  }
  // The version is a released one, and its tag (where this clone has it) is the pinned commit.
  if (!changelog.includes(`\n## [${version}] - `)) problems.push(`v${version}: CHANGELOG.md has no released '## [${version}] - <date>' entry`);
  const tag = git('rev-parse', '-q', '--verify', `refs/tags/v${version}^{commit}`);
  if (tag.status === 0 && tag.stdout.trim() !== sha) problems.push(`tag v${version} is ${tag.stdout.trim()}, the README pins ${sha} as v${version}`);
  return problems;
}

/** `run:` scripts of the README's examples that contain a `${{ … }}` expression. */
function injectedRuns(text) {
  const found = [];
  const walk = (node, where) => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${where}[${i}]`));
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'run' && typeof v === 'string' && v.includes('${{')) found.push(`${where}.run: ${v.trim()}`);
        else walk(v, `${where}.${k}`);
      }
    }
  };
  yamlBlocks(text).forEach((block, i) => walk(parseYaml(block), `yaml block ${i + 1}`));
  return found;
}

const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');

test('every `uses:` in the README is pinned to a commit SHA with its version, and the leasehold pin has every action it uses', (t) => {
  const shallow = git('rev-parse', '--is-shallow-repository');
  assert.equal(shallow.status, 0, `the README's pins are checked against this repository's git history, and git says: ${shallow.stderr}`);
  assert.equal(shallow.stdout.trim(), 'false', 'this clone is shallow: the README\'s pins are checked against the full history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)');
  const uses = usesLines(readme);
  t.diagnostic(`${uses.length} uses: lines; leasehold pinned to ${[...new Set(uses.filter((u) => u.name).map((u) => `${u.ref} ${u.comment}`))].join(', ')}`);
  assert.deepEqual(pinProblems(readme, changelog), []);
  // Not vacuous: an action the pinned commit lacks, a SHA outside the history, a short SHA and a
  // missing version comment are each found.
  const pin = uses.find((u) => u.name);
  const ex = (name, ref, comment = pin.comment) => `\`\`\`yaml\n- uses: x/leasehold/actions/${name}@${ref} ${comment}\n\`\`\`\n`;
  assert.match(pinProblems(ex('no-such-action', pin.ref), changelog).join('\n'), /has no actions\/no-such-action\/action\.yml/);
  assert.match(pinProblems(ex('acquire', 'f'.repeat(40)), changelog).join('\n'), /not in this repository's history/);
  assert.match(pinProblems(ex('acquire', pin.ref.slice(0, 12)), changelog).join('\n'), /full 40-character/);
  assert.match(pinProblems(ex('acquire', pin.ref, ''), changelog).join('\n'), /version comment/);
  assert.match(pinProblems(ex('acquire', pin.ref, '# v9.9.9'), changelog).join('\n'), /no released '## \[9\.9\.9\]/);
});

test('no `run:` in the README\'s examples contains a ${{ }} expression (outputs go through env:)', () => {
  assert.deepEqual(injectedRuns(readme), []);
  assert.equal(injectedRuns('```yaml\n- env:\n    F: ${{ steps.a.outputs.f }}\n  run: echo "$F"\n```\n').length, 0);
  assert.equal(injectedRuns('```yaml\n- run: echo "${{ steps.a.outputs.f }}"\n```\n').length, 1, 'an expression in a script is found');
});

test('the quick-start commands exist', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.ok(readme.includes('npm run demo') && pkg.scripts.demo);
  assert.ok(readme.includes('npm test') && pkg.scripts.test);
});

test('the README\'s exit-code table is the core\'s one table', async () => {
  const { loadCore } = await import('../dist/leasehold-core.mjs');
  const start = readme.indexOf('### Exit codes\n');
  assert.ok(start >= 0, 'README has an "Exit codes" section');
  const rows = new Map();
  for (const row of readme.slice(start).split('\n').slice(1)) {
    if (row.startsWith('#')) break;
    const cells = row.split('|').map((c) => c.trim());
    if (/^\d+$/.test(cells[1] ?? '')) rows.set(Number(cells[1]), [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
  }
  const table = new Map();
  for (const r of loadCore().exitTable) table.set(r.exitCode, [...(table.get(r.exitCode) ?? []), r.status]);
  assert.deepEqual(rows, table);
});

// Blocks fenced ```yaml unreleased show an action newer than the pinned release: each uses
// `@UNRELEASED`, and only for actions the pinned commit does not have (once a release has one,
// pin it like the others).
test('unreleased examples name only actions newer than the pinned release', () => {
  const blocks = [...readme.matchAll(/^```yaml unreleased\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const pinned = usesLines(readme).find((u) => u.name)?.ref;
  assert.ok(pinned);
  for (const block of blocks) {
    for (const m of block.matchAll(/uses:\s*[\w.-]+\/leasehold\/actions\/([\w-]+)@(\S+)/g)) {
      assert.equal(m[2], 'UNRELEASED', m[0]);
      assert.notEqual(git('cat-file', '-e', `${pinned}:actions/${m[1]}/action.yml`).status, 0, `actions/${m[1]} is in the pinned release: pin it instead of marking it unreleased`);
      assert.ok(actions.includes(m[1]), `actions/${m[1]} exists in this tree`);
    }
  }
});

test("the demo's stand-in action.yml reader reads every action as the yaml package does", () => {
  for (const name of actions) assert.ok(metadataReadersAgree(name), name);
});
