// `node dist/cli.mjs validate FILE…` and actions/validate (its bundle, run as the runner runs it):
// each broken config rule refused with the rule named and placed on its line, the README's
// examples accepted, and on a pull request only the config files it changes checked.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, parseCommandFile } from './helpers/action-runner.mjs';
import { positionOf } from '../actions/lib/validate.mjs';

const CLI = join(ROOT, 'dist/cli.mjs');
const corpus = JSON.parse(readFileSync(join(ROOT, 'schema/lock-config.corpus.json'), 'utf8')).cases;
let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'leasehold-validate-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function run(file, args, { env = {}, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: { PATH: process.env.PATH, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const validate = async (...files) => {
  const r = await run(process.execPath, [CLI, 'validate', ...files]);
  return { ...r, doc: JSON.parse(r.stdout) };
};
let seq = 0;
const file = (text, name = `c${++seq}.config.json`) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('validate FILE…', () => {
  test('refuses each broken rule with the rule named, in one document (3), and accepts the valid ones (0)', async () => {
    for (const c of corpus) {
      const r = await validate(file(c.text));
      assert.equal(r.doc.schema, 'leasehold-result/1');
      assert.equal(r.doc.command, 'validate');
      assert.equal(r.code, r.doc.exitCode);
      const [v] = r.doc.files;
      if (c.rule === null) {
        assert.equal(r.code, 0, `${c.text}: ${r.stdout}`);
        assert.equal(r.doc.status, 'ok');
        assert.equal(v.valid, true);
      } else {
        assert.equal(r.code, 3, c.text);
        assert.equal(r.doc.status, 'config');
        assert.equal(v.problem.rule, c.rule, c.text);
        assert.ok(v.problem.line >= 1 && v.problem.column >= 1, c.text);
        assert.ok(r.stderr.includes(`:${v.problem.line}:${v.problem.column}: ${c.rule}: `), r.stderr);
      }
    }
  });

  test("accepts the README's lock config examples, and a valid file beside a broken one still fails the run", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]).filter((t) => {
      try {
        const v = JSON.parse(t);
        return 'capacity' in v && !('schema' in v);
      } catch {
        return false;
      }
    });
    assert.ok(examples.length >= 2);
    const r = await validate(...examples.map((t) => file(t)));
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.doc.files.length, examples.length);
    const mixed = await validate(file('{"capacity": 2}'), file('{"capacity": 99}'));
    assert.equal(mixed.code, 3);
    assert.deepEqual(mixed.doc.files.map((f) => f.valid), [true, false]);
  });

  test('places the rule on the offending line', async () => {
    const text = '{\n  "capacity": 2,\n  "lease": {\n    "ttlSeconds": 600,\n    "renewSeconds": 400\n  }\n}\n';
    const [v] = (await validate(file(text))).doc.files;
    assert.deepEqual([v.problem.rule, v.problem.pointer, v.problem.line, v.problem.column], ['lease.renew-at-most-half-ttl', '/lease/renewSeconds', 5, 5]);
    const syntax = (await validate(file('{\n  "capacity": 2,\n}\n'))).doc.files[0].problem;
    assert.deepEqual([syntax.rule, syntax.line], ['json', 3]);
    const unknown = (await validate(file('{\n  "capacity": 2,\n  "lease": {\n    "ttl": 600\n  }\n}'))).doc.files[0].problem;
    assert.deepEqual([unknown.rule, unknown.pointer, unknown.line], ['shape', '/lease/ttl', 4]);
  });

  test('without a file, or with one it cannot read: usage (2)', async () => {
    const none = await validate();
    assert.equal(none.code, 2);
    assert.equal(none.doc.status, 'usage');
    const missing = await validate(join(dir, 'no-such.json'));
    assert.equal(missing.code, 2);
    assert.equal(missing.doc.error.code, 'unreadable');
  });
});

test('positionOf: a JSON pointer to its key, the last of duplicate keys, escaped tokens, arrays', () => {
  const text = '{"a": {"b": 1, "b": 2}, "x/y": [10, {"z": 3}]}';
  assert.deepEqual(positionOf(text, ''), { line: 1, column: 1 });
  assert.deepEqual(positionOf(text, '/a/b'), { line: 1, column: 16 });
  assert.deepEqual(positionOf(text, '/x~1y/1/z'), { line: 1, column: 38 });
  assert.deepEqual(positionOf(text, '/a/nothing'), { line: 1, column: 2 }, 'the deepest prefix that exists');
  assert.deepEqual(positionOf('\n\n  {"k": "}"\n, "v": 1}', '/v'), { line: 4, column: 3 });
});

describe('actions/validate on a pull request of the lock repository', () => {
  let repo;
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  before(() => {
    // A lock repository with a pull request's merge commit checked out (fetch-depth: 2): the
    // base has an old broken config the pull request does not touch.
    repo = join(dir, 'locks-repo');
    mkdirSync(join(repo, 'locks'), { recursive: true });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'locks', 'old.config.json'), '{"capacity": 0}\n');
    writeFileSync(join(repo, 'locks', 'kept.config.json'), '{"capacity": 2}\n');
    git('add', '.');
    git('commit', '-qm', 'base');
    git('checkout', '-qb', 'pr');
    writeFileSync(join(repo, 'locks', 'gpu.config.json'), '{\n  "capacity": 2,\n  "lease": {\n    "ttlSeconds": 600,\n    "renewSeconds": 400\n  }\n}\n');
    writeFileSync(join(repo, 'locks', 'web.config.json'), '{ "capacity": 3 }\n');
    writeFileSync(join(repo, 'README.md'), 'not a config\n');
    git('add', '.');
    git('commit', '-qm', 'pr');
    git('checkout', '-q', 'main');
    git('merge', '-q', '--no-ff', '-m', 'Merge pr into main', 'pr');
  });

  async function action(inputs, event = 'pull_request') {
    const files = { GITHUB_OUTPUT: join(dir, `out-${++seq}`), GITHUB_STEP_SUMMARY: join(dir, `sum-${seq}`) };
    for (const f of Object.values(files)) writeFileSync(f, '');
    const env = { ...files, GITHUB_WORKSPACE: repo, GITHUB_EVENT_NAME: event, ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])) };
    const r = await run(process.execPath, [join(ROOT, 'dist/validate.mjs')], { env, cwd: repo });
    return { ...r, outputs: parseCommandFile(readFileSync(files.GITHUB_OUTPUT, 'utf8')), summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8') };
  }

  test('checks the changed config files only and annotates the broken rule on its line', async () => {
    const r = await action({ files: 'locks/*.config.json', 'changed-only': 'true' });
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.outputs.result, 'config');
    assert.equal(r.outputs.checked, '2', 'gpu and web: old and kept are not in the pull request');
    assert.equal(r.outputs.invalid, '1');
    const report = JSON.parse(r.outputs.report);
    assert.deepEqual(report.map((v) => [v.file, v.valid]), [['locks/gpu.config.json', false], ['locks/web.config.json', true]]);
    assert.match(r.stdout, /^::error title=leasehold config rule lease\.renew-at-most-half-ttl,file=locks\/gpu\.config\.json,line=5,col=5::"lease": the renew interval/m);
    assert.doesNotMatch(r.stdout, /old\.config\.json/);
    assert.match(r.summary, /1 of 2 lock configs break a rule/);
  });

  test('a pattern written ./locks/… or locks//… names the files git names, so changed-only still checks them', async () => {
    for (const files of ['./locks/*.config.json', 'locks//*.config.json', './locks/gpu.config.json']) {
      const r = await action({ files, 'changed-only': 'true' });
      assert.equal(r.outputs.result, 'config', `${files}: ${r.stdout}`);
      assert.ok(Number(r.outputs.checked) >= 1, `${files}: the changed gpu config is checked`);
      assert.match(r.stdout, /file=locks\/gpu\.config\.json/);
    }
  });

  test("a config's text that reaches the summary through a rule's message is escaped", async () => {
    writeFileSync(join(repo, 'locks', 'evil.config.json'), '{"capacity": 1, "<img src=https://x.example/t.png>": 1, "![x](https://x.example/p.png)": 2}\n');
    try {
      const r = await action({ files: 'locks/evil.config.json' }, 'push');
      assert.equal(r.outputs.invalid, '1', r.stdout);
      assert.doesNotMatch(r.summary, /<img|!\[x\]\(/);
      assert.match(r.summary, /&#60;img src=|&#33;&#91;x&#93;/, 'shown as written');
    } finally {
      rmSync(join(repo, 'locks', 'evil.config.json'));
    }
  });

  test('changed-only false, or not a pull request: every matched file', async () => {
    // 'False' too: the one boolean rule of every input (the core's), YAML 1.2's spellings.
    for (const [inputs, event] of [[{ 'changed-only': 'false' }, 'pull_request'], [{ 'changed-only': 'False' }, 'pull_request'], [{}, 'push']]) {
      const r = await action({ files: 'locks/*.config.json', ...inputs }, event);
      assert.equal(r.outputs.checked, '4', r.stdout);
      assert.equal(r.outputs.invalid, '2');
      assert.match(r.stdout, /::error title=leasehold config rule capacity,file=locks\/old\.config\.json,line=1,col=2::/);
    }
  });

  test('a valid pull request passes; a bad input fails naming it', async () => {
    const ok = await action({ files: 'locks/web.config.json\nlocks/kept.config.json' }, 'push');
    assert.equal(ok.code, 0, ok.stdout);
    assert.equal(ok.outputs.result, 'ok');
    const bad = await action({ files: '../etc/passwd' });
    assert.equal(bad.code, 1);
    assert.equal(bad.outputs.result, 'failed');
    assert.match(bad.stdout, /\[files\]/);
    const flag = await action({ 'changed-only': 'yes' });
    assert.match(flag.stdout, /\[changed-only\]/);
  });
});
