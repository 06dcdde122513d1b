// The conformance layer itself (tests/conformance/): every emulator a test starts under
// `node --test` checks each of its exchanges against GitHub's OpenAPI description and fails
// the test run on a difference not listed in tests/conformance/deviations.mjs. Here: that a
// difference does fail a run and is named (operation, field, rule), that each rule fires, and
// that each listed deviation is needed, exactly where it applies.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { DEVIATIONS } from './conformance/deviations.mjs';
import { loadSpec } from './conformance/openapi.mjs';
import { validateExchange } from './conformance/validate.mjs';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT } from './helpers/action-runner.mjs';

const TOKEN = 'test-token';
const b64 = (s) => Buffer.from(s).toString('base64');

/** Runs `node --test` on a test file written from `source` (in a temp dir); bounded. */
function runTestFile(source) {
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-conformance-'));
  const file = path.join(dir, 'broken.test.mjs');
  writeFileSync(file, source);
  const env = { ...process.env, LEASEHOLD_CONFORMANCE_DIR: path.join(dir, 'run') };
  delete env.NODE_TEST_CONTEXT; // a run of its own, not a file of this one
  delete env.LEASEHOLD_CONFORMANCE_RUN;
  delete env.LEASEHOLD_CONFORMANCE;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, out });
    });
  });
}

const EMULATOR = pathToFileURL(path.join(ROOT, 'tests', 'emulator', 'emulator.mjs')).href;

test('an emulator answer GitHub would never send fails the test run, naming the operation, the field and the rule', { timeout: 90_000 }, async () => {
  // The emulator is made to answer a contents write with a body of the wrong shape (a fault
  // answer: the same path a broken emulator handler would take).
  const { code, out } = await runTestFile(`
    import { after, test } from 'node:test';
    import { startEmulator } from ${JSON.stringify(EMULATOR)};
    const emu = await startEmulator();
    after(() => emu.close());
    test('a write', async () => {
      emu.faults.add({ method: 'PUT', action: { status: 201, body: { content: { sha: 42 }, commit: { sha: 'x' } } } });
      const r = await fetch(emu.url + '/repos/octo/locks/contents/a.txt', { method: 'PUT', headers: { authorization: 'token t' }, body: JSON.stringify({ message: 'm', content: ${JSON.stringify(b64('a'))} }) });
      await r.text();
    });
  `);
  assert.notEqual(code, 0, out);
  assert.match(out, /not ok .*broken\.test\.mjs|hookFailed|after hook/);
  assert.match(out, /\[repos\/create-or-update-file-contents\]/);
  assert.match(out, /response 201 body: \/content\/sha: must be string/);
  assert.match(out, /rule response-body/);
  assert.match(out, /1 mismatches/);
});

test('an emulator never closed is checked at exit, and fails its test file', { timeout: 90_000 }, async () => {
  const { code, out } = await runTestFile(`
    import { test } from 'node:test';
    import { startEmulator } from ${JSON.stringify(EMULATOR)};
    test('a request to a route GitHub does not have, answered 200', async () => {
      const emu = await startEmulator();
      emu.faults.add({ path: '/no/such/route', action: { status: 200, body: { ok: true } } });
      await (await fetch(emu.url + '/no/such/route', { headers: { authorization: 'token t' } })).text();
      emu.server?.unref?.();
      process.nextTick(() => emu.close().catch(() => {})); // too late: after the test, without awaiting
    });
  `);
  assert.notEqual(code, 0, out);
  assert.match(out, /GET \/no\/such\/route -> 200 \[no documented operation\]/);
  assert.match(out, /rule operation/);
});

/** Exchanges from a real emulator, one per situation a rule or a deviation is about. */
async function samples() {
  const got = [];
  const emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'a.txt': 'a\n' }, onExchange: (e) => got.push(e), conformance: false });
  const call = async (method, p, { body, headers = {}, token = TOKEN } = {}) => {
    const r = await fetch(emu.url + p, { method, headers: { ...(token ? { authorization: `token ${token}` } : {}), ...headers }, body: typeof body === 'string' ? body : body && JSON.stringify(body) });
    await r.arrayBuffer();
    return got.at(-1);
  };
  const head = await emu.head('main');
  const file = await call('GET', '/repos/octo/app/contents/a.txt');
  const sha = file.responseBody.sha;
  const [running, finished] = await emu.actions.startRun(41, { jobs: [{ name: 'build' }, { name: 'lint' }] });
  emu.actions.setJob(finished, { status: 'completed', conclusion: 'success' });
  const s = {
    ok: {
      get: file,
      put: await call('PUT', '/repos/octo/app/contents/b.txt', { body: { message: 'm', content: b64('b') } }),
      tree: await call('POST', '/repos/octo/app/git/trees', { body: { tree: [{ path: 'x', mode: '100644', type: 'blob', content: 'x' }] } }),
      refused: await call('PUT', '/repos/octo/app/contents/c.txt', { body: { content: b64('c') } }),
      run: await call('GET', '/repos/octo/app/actions/runs/41'),
      job: await call('GET', `/repos/octo/app/actions/jobs/${finished}`),
    },
    'job-conclusion-null-not-in-enum': await call('GET', `/repos/octo/app/actions/jobs/${running}`),
    'any-get-304-not-modified': await call('GET', '/repos/octo/app/actions/runs/41', { headers: { 'if-none-match': '*' } }),
    'any-400-problems-parsing-json': await call('PUT', '/repos/octo/app/contents/c.txt', { body: '{not json' }),
    'any-401-credentials': await call('GET', '/repos/octo/app/contents/a.txt', { token: null }),
    'unknown-route-404': await call('GET', '/no/such/route'),
    'any-404-not-found': await call('POST', '/repos/octo/nope/git/refs', { body: { ref: 'refs/heads/x', sha: head } }),
    'contents-raw-media-type': await call('GET', '/repos/octo/app/contents/a.txt', { headers: { accept: 'application/vnd.github.raw+json' } }),
    'contents-put-missing-file-ignores-sha': await call('PUT', '/repos/octo/app/contents/new.txt', { body: { message: 'm', content: b64('n'), sha: 'f'.repeat(40) } }),
    'legacy-get-git-refs-ref': await call('GET', '/repos/octo/app/git/refs/heads/main'),
    'legacy-get-git-refs': await call('GET', '/repos/octo/app/git/refs'),
    'matching-refs-link-page': await call('GET', '/repos/octo/app/git/matching-refs/heads/?page=2'),
  };
  emu.faults.add({ method: 'PUT', action: { status: 429, headers: { 'retry-after': '1' } } });
  s['any-403-429-rate-limited'] = await call('PUT', '/repos/octo/app/contents/a.txt', { body: { message: 'm', content: b64('r'), sha } });
  // (GET contents documents a 403; PUT contents does not.)
  emu.faults.add({ method: 'PUT', action: { status: 403, body: { message: 'Resource not accessible by integration' } } });
  s['any-403-forbidden'] = await call('PUT', '/repos/octo/app/contents/a.txt', { body: { message: 'm', content: b64('f'), sha } });
  emu.faults.add({ method: 'GET', action: { status: 502 } });
  s['any-5xx-server-error'] = await call('GET', '/repos/octo/app/contents/a.txt');
  emu.faults.add({ method: 'PUT', action: { conflict: true } });
  s['contents-write-branch-race-409'] = await call('PUT', '/repos/octo/app/contents/a.txt', { body: { message: 'm', content: b64('z'), sha } });
  s['description-ambiguous-oneof'] = s['contents-write-branch-race-409'];
  emu.staleReads({ ms: 60_000 });
  await call('PUT', '/repos/octo/app/contents/a.txt', { body: { message: 'm', content: b64('w'), sha } });
  s['contents-stale-read'] = await call('GET', '/repos/octo/app/contents/a.txt');
  await emu.close();
  return s;
}

test('each rule fires on an answer GitHub would not give, and a valid answer passes', async () => {
  const s = await samples();
  const problemsOf = (ex) => validateExchange(ex).problems;
  for (const name of ['get', 'put', 'tree', 'refused', 'run', 'job']) assert.deepEqual(problemsOf(s.ok[name]), [], name);
  assert.equal(validateExchange(s.ok.refused).refused, true, 'a request missing "message" refused with 422 is fine');

  const tamper = (ex, f) => {
    const copy = structuredClone(ex);
    f(copy);
    return problemsOf(copy);
  };
  const expect = (problems, rule, field) => {
    assert.ok(problems.some((p) => p.rule === rule && (field === undefined || p.field === field)), `expected rule ${rule} on ${field}: ${JSON.stringify(problems)}`);
  };
  expect(tamper(s.ok.put, (e) => (e.responseBody.content.sha = 42)), 'response-body', '/content/sha');
  expect(tamper(s.ok.put, (e) => delete e.responseBody.commit), 'response-body', '(root)');
  expect(tamper(s.ok.get, (e) => delete e.responseBody.encoding), 'response-body');
  expect(tamper(s.ok.put, (e) => (e.status = 418)), 'status', 'status');
  expect(tamper(s.ok.put, (e) => delete e.requestBody.message), 'request-body', '(root)');
  expect(tamper(s.ok.put, (e) => (e.requestBody.branch = 7)), 'request-body', '/branch');
  expect(tamper(s.ok.get, (e) => e.query.push(['page_size', '3'])), 'query-param', 'page_size');
  expect(tamper(s.ok.get, (e) => delete e.responseHeaders['x-ratelimit-remaining']), 'rate-limit-headers', 'x-ratelimit-remaining');
  expect(tamper(s.ok.get, (e) => delete e.responseHeaders.etag), 'etag', 'etag');
  expect(tamper(s.ok.tree, (e) => delete e.responseHeaders.location), 'response-header', 'Location');
  expect(tamper(s.ok.get, (e) => (e.responseHeaders['content-type'] = 'text/plain')), 'content-type');
  expect(tamper(s['any-403-429-rate-limited'], (e) => delete e.responseHeaders['retry-after']), 'rate-limit-signal', 'retry-after');
  expect(tamper(s['unknown-route-404'], (e) => (e.status = 200)), 'operation');
  expect(tamper(s.ok.refused, (e) => (e.status = 201)), 'request-body');
  expect(tamper(s.ok.job, (e) => delete e.responseBody.runner_name), 'response-body', '(root)');
  expect(tamper(s.ok.job, (e) => (e.responseBody.conclusion = 'stale')), 'response-body', '/conclusion');
  expect(tamper(s.ok.run, (e) => delete e.responseBody.head_commit), 'response-body', '(root)');
  // The deviation lets through the null of an unfinished job, not any value outside the enum.
  expect(tamper(s['job-conclusion-null-not-in-enum'], (e) => (e.responseBody.conclusion = 'bogus')), 'response-body', '/conclusion');
});

test('each listed deviation is needed, and only where it applies', async (t) => {
  const s = await samples();
  for (const d of DEVIATIONS) {
    const ex = s[d.id];
    assert.ok(ex, `no sample exchange for deviation ${d.id}`);
    const all = validateExchange(ex);
    assert.deepEqual(all.problems, [], `${d.id}: ${JSON.stringify(all.problems)}`);
    assert.ok(all.allowed.includes(d.id), `${d.id} is what lets its sample through (allowed: ${all.allowed})`);
    const without = validateExchange(ex, DEVIATIONS.filter((x) => x.id !== d.id));
    assert.ok(without.problems.length > 0, `${d.id}: its sample passes without it`);
    assert.ok(d.source && d.what && d.kind, `${d.id} says what it is and where that is from`);
  }
  // A deviation is no blanket: the valid answers need none.
  for (const name of ['get', 'put', 'tree', 'run', 'job']) assert.deepEqual(validateExchange(s.ok[name]).allowed, [], name);
  t.diagnostic(`${DEVIATIONS.length} deviations from GitHub's OpenAPI description (api.github.com, @octokit/openapi ${loadSpec().version}), each needed: ${DEVIATIONS.map((d) => d.id).join(', ')}`);
});
