// Tests for the GitHub REST emulator. Run: node --test tests/emulator/
// Plain fetch against a real emulator; every behaviour is checked on the wire and, for
// writes, straight in the bare git repository.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEmulator } from './emulator.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = 'ghs_test_token';
const INITIAL_A = '{"holder":null}\n';
const FILES = { 'locks/a.json': INITIAL_A, 'locks/b.json': '{"holder":"x"}\n', 'README.md': 'hello\n' };

const b64 = (s) => Buffer.from(s).toString('base64');
const unb64 = (s) => Buffer.from(s, 'base64').toString('utf8');
/** git's blob sha, which GitHub returns as the contents `sha`. */
const blobSha = (s) => crypto.createHash('sha1').update(`blob ${Buffer.byteLength(s)}\0${s}`).digest('hex');

async function start(t, options = {}) {
  const emu = await startEmulator({ files: FILES, ...options });
  t.after(() => emu.close());
  return { emu, api: client(emu) };
}

function client(emu, token = TOKEN) {
  const call = async (method, p, body, headers = {}) => {
    const auth = token === null ? {} : { authorization: `token ${token}` };
    const r = await fetch(emu.url + p, {
      method,
      headers: { ...auth, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    return { status: r.status, headers: r.headers, body: json, text };
  };
  return {
    call,
    get: (p, headers) => call('GET', p, undefined, headers),
    file: (p, ref, headers) =>
      call('GET', `/repos/octo/locks/contents/${p}${ref ? `?ref=${encodeURIComponent(ref)}` : ''}`, undefined, headers),
    put: (p, body) => call('PUT', `/repos/octo/locks/contents/${p}`, body),
    del: (p, body) => call('DELETE', `/repos/octo/locks/contents/${p}`, body),
  };
}

function assertError(res, status, message) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.message, message);
  assert.equal(res.body.status, String(status));
  assert.match(res.body.documentation_url, /^https:\/\/docs\.github\.com\/rest/);
}

// ---------------------------------------------------------------------------------------

test('authentication, unknown repos and routes, common headers', async (t) => {
  const { emu } = await start(t, { tokens: [TOKEN] });
  const anon = client(emu, null);
  assertError(await anon.get('/repos/octo/locks'), 401, 'Requires authentication');
  assertError(await client(emu, 'nope').get('/repos/octo/locks'), 401, 'Bad credentials');

  const bearer = await fetch(`${emu.url}/repos/octo/locks`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(bearer.status, 200);

  const api = client(emu);
  assertError(await api.get('/repos/octo/other'), 404, 'Not Found');
  assertError(await api.get('/nowhere'), 404, 'Not Found');
  assertError(await api.call('POST', '/repos/octo/locks/contents/x'), 404, 'Not Found');

  const r = await api.get('/repos/octo/locks');
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.match(r.headers.get('x-github-request-id'), /^[0-9A-F:]+$/);
  assert.equal(r.headers.get('x-ratelimit-limit'), '5000');
  assert.equal(r.headers.get('x-ratelimit-resource'), 'core');
  assert.ok(r.headers.get('x-ratelimit-reset') > Date.now() / 1000);
  assert.ok(!Number.isNaN(Date.parse(r.headers.get('date'))));
  assert.ok(r.headers.get('etag'));
  assert.equal(r.body.full_name, 'octo/locks');
  assert.equal(r.body.name, 'locks');
  assert.equal(r.body.default_branch, 'main');
  assert.equal(r.body.owner.login, 'octo');
  assert.equal(r.body.owner.type, 'User');
  assert.equal(typeof r.body.id, 'number');
  assert.equal(typeof r.body.node_id, 'string');
  assert.equal(r.body.private, false);
  assert.deepEqual(
    [r.body.permissions.admin, r.body.permissions.push, r.body.permissions.pull],
    [true, true, true],
  );
  assert.equal(r.body.url, `${emu.url}/repos/octo/locks`);

  // GitHub owner/repo names are case-insensitive.
  assert.equal((await api.get('/repos/OCTO/Locks')).status, 200);
});

test('GET contents: shape, base64 wrapping, blob sha, refs, 404s', async (t) => {
  const long = 'x'.repeat(200) + '\n';
  const { emu, api } = await start(t, { files: { ...FILES, 'big.txt': long } });
  const r = await api.file('locks/a.json');
  assert.equal(r.status, 200);
  const f = r.body;
  assert.equal(f.type, 'file');
  assert.equal(f.encoding, 'base64');
  assert.equal(f.name, 'a.json');
  assert.equal(f.path, 'locks/a.json');
  assert.equal(f.size, Buffer.byteLength(INITIAL_A));
  assert.equal(f.sha, blobSha(INITIAL_A));
  assert.equal(unb64(f.content), INITIAL_A);
  assert.equal(f.url, `${emu.url}/repos/octo/locks/contents/locks/a.json?ref=main`);
  assert.equal(f.git_url, `${emu.url}/repos/octo/locks/git/blobs/${f.sha}`);
  assert.ok(f.html_url && f.download_url);
  assert.deepEqual(Object.keys(f._links).sort(), ['git', 'html', 'self']);

  // GitHub wraps base64 at 60 characters and ends every line with "\n".
  const big = (await api.file('big.txt')).body.content;
  const lines = big.split('\n');
  assert.equal(lines.pop(), '');
  assert.ok(lines.length > 1);
  for (const l of lines.slice(0, -1)) assert.equal(l.length, 60);
  assert.equal(unb64(big), long);

  assertError(await api.file('locks/missing.json'), 404, 'Not Found');
  assertError(await api.file('locks/a.json', 'nope'), 404, 'No commit found for the ref nope');

  // ref = commit sha reads that commit; ref = branch name reads its head.
  const first = await emu.head();
  await emu.writeFile('main', 'locks/a.json', 'changed\n');
  assert.equal(unb64((await api.file('locks/a.json', first)).body.content), INITIAL_A);
  assert.equal(unb64((await api.file('locks/a.json', first.slice(0, 12))).body.content), INITIAL_A);
  assert.equal(unb64((await api.file('locks/a.json', 'main')).body.content), 'changed\n');

  // Directory listing and the raw media type.
  const dir = await api.file('locks');
  assert.equal(dir.status, 200);
  assert.deepEqual(dir.body.map((e) => e.name), ['a.json', 'b.json']);
  const raw = await api.file('locks/a.json', null, { accept: 'application/vnd.github.raw' });
  assert.equal(raw.text, 'changed\n');
});

test('ETag / If-None-Match: 304 does not count against the rate limit', async (t) => {
  const { api } = await start(t);
  const first = await api.file('locks/a.json');
  const etag = first.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]{40}"$/);
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));

  const cached = await api.file('locks/a.json', null, { 'if-none-match': etag });
  assert.equal(cached.status, 304);
  assert.equal(cached.text, '');
  assert.equal(cached.headers.get('etag'), etag);
  assert.equal(Number(cached.headers.get('x-ratelimit-remaining')), remaining);
  // W/ prefixed and list forms match too.
  assert.equal((await api.file('locks/a.json', null, { 'if-none-match': `"zz", W/${etag}` })).status, 304);

  const again = await api.file('locks/a.json');
  assert.equal(Number(again.headers.get('x-ratelimit-remaining')), remaining - 1);
  assert.equal(again.headers.get('etag'), etag);

  // After a write the old etag no longer matches.
  await api.put('locks/a.json', { message: 'w', content: b64('new\n'), sha: first.body.sha });
  const fresh = await api.file('locks/a.json', null, { 'if-none-match': etag });
  assert.equal(fresh.status, 200);
  assert.notEqual(fresh.headers.get('etag'), etag);
});

test('primary rate limit: counter per token, 403 at zero, /rate_limit is free', async (t) => {
  const { emu, api } = await start(t, { rateLimit: 3 });
  for (let i = 2; i >= 0; i--) {
    const r = await api.get('/repos/octo/locks');
    assert.equal(r.headers.get('x-ratelimit-remaining'), String(i));
    assert.equal(r.headers.get('x-ratelimit-used'), String(3 - i));
  }
  const over = await api.get('/repos/octo/locks');
  assert.equal(over.status, 403);
  assert.match(over.body.message, /^API rate limit exceeded/);
  assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
  const rl = await api.get('/rate_limit');
  assert.equal(rl.status, 200);
  assert.equal(rl.body.resources.core.remaining, 0);
  // Another token has its own window.
  assert.equal((await client(emu, 'other').get('/repos/octo/locks')).status, 200);
});

test('secondary limit on content-generating requests: 403 with retry-after, nothing applied', async (t) => {
  let clock = 1_800_000_000_000;
  const { emu, api } = await start(t, { limits: { contentPerMinute: 3, contentPerHour: 5 }, now: () => clock });
  for (let i = 0; i < 3; i++) {
    const r = await api.put(`limited-${i}.txt`, { message: 'm', content: b64('x') });
    assert.equal(r.status, 201, r.text);
  }
  const over = await api.put('limited-3.txt', { message: 'm', content: b64('x') });
  assert.equal(over.status, 403);
  assert.match(over.body.message, /secondary rate limit/);
  assert.equal(over.headers.get('retry-after'), '60');
  assert.equal((await api.file('limited-3.txt')).status, 404, 'the refused write was not applied');
  assert.equal((await api.get('/repos/octo/locks')).status, 200, 'reads are not content-generating');
  clock += 61_000;
  assert.equal((await api.put('limited-3.txt', { message: 'm', content: b64('x') })).status, 201);
  assert.equal((await api.put('limited-4.txt', { message: 'm', content: b64('x') })).status, 201);
  const hourly = await api.put('limited-5.txt', { message: 'm', content: b64('x') });
  assert.equal(hourly.status, 403, 'the hourly window (5) is full');
  assert.equal(Number(hourly.headers.get('retry-after')) > 3000, true);
  assert.equal(emu.secondary.refused, 2);
});

test('PUT contents: create, update, stale sha, missing sha, validation, real commits', async (t) => {
  let clock = Date.parse('2030-01-02T03:04:05Z');
  const { emu, api } = await start(t, { now: () => clock });
  const head0 = await emu.head('main');

  // Missing file: created whatever `sha` says (GitHub ignores it) -> 201.
  const created = await api.put('locks/new.json', { message: 'create', content: b64('v1\n'), sha: 'f'.repeat(40) });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.content.sha, blobSha('v1\n'));
  assert.equal(created.body.content.path, 'locks/new.json');
  assert.equal(created.body.content.name, 'new.json');
  assert.equal(created.body.content.size, 3);
  assert.equal(created.body.content.type, 'file');
  const c = created.body.commit;
  assert.match(c.sha, /^[0-9a-f]{40}$/);
  assert.deepEqual(c.parents.map((p) => p.sha), [head0]);
  assert.equal(c.message, 'create');
  assert.equal(c.author.date, '2030-01-02T03:04:05Z');
  assert.equal(c.committer.name, 'github-actions[bot]');
  assert.match(c.tree.sha, /^[0-9a-f]{40}$/);
  assert.deepEqual(c.verification, { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null });
  assert.equal(await emu.head('main'), c.sha);
  assert.equal(await emu.readFile('main', 'locks/new.json'), 'v1\n');
  // It is a real git commit.
  const catFile = execFileSync('git', ['--git-dir', emu.gitDir, 'cat-file', '-p', c.sha], { encoding: 'utf8' });
  assert.match(catFile, new RegExp(`^tree ${c.tree.sha}\nparent ${head0}\n`));

  // Existing file without sha -> 422; with a stale sha -> 409; with the right sha -> 200.
  assertError(
    await api.put('locks/a.json', { message: 'm', content: b64('x') }),
    422,
    'Invalid request.\n\n"sha" wasn\'t supplied.',
  );
  const stale = 'e'.repeat(40);
  assertError(
    await api.put('locks/a.json', { message: 'm', content: b64('x'), sha: stale }),
    409,
    `locks/a.json does not match ${stale}`,
  );
  clock += 60_000;
  const updated = await api.put('locks/a.json', {
    message: 'take',
    content: b64('{"holder":"me"}\n'),
    sha: blobSha(INITIAL_A),
    committer: { name: 'Lock Bot', email: 'lock@example.com' },
    author: { name: 'Ann', email: 'ann@example.com', date: '2029-12-31T23:59:59Z' },
  });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.content.sha, blobSha('{"holder":"me"}\n'));
  assert.equal(updated.body.commit.committer.name, 'Lock Bot');
  assert.equal(updated.body.commit.committer.date, '2030-01-02T03:05:05Z');
  assert.equal(updated.body.commit.author.name, 'Ann');
  assert.equal(updated.body.commit.author.date, '2029-12-31T23:59:59Z');
  assert.deepEqual(updated.body.commit.parents.map((p) => p.sha), [c.sha]);

  // Validation.
  assertError(await api.put('x.txt', { content: b64('x') }), 422, 'Invalid request.\n\n"message" wasn\'t supplied.');
  assertError(await api.put('x.txt', { message: 'm' }), 422, 'Invalid request.\n\n"content" wasn\'t supplied.');
  assertError(await api.put('x.txt', { message: 'm', content: 'not base64!' }), 422, 'content is not valid Base64');
  // GitHub decodes strictly: wrapped base64 (as GET returns it) is refused.
  const wrapped = b64('y'.repeat(100)).replace(/(.{60})/, '$1\n');
  assertError(await api.put('x.txt', { message: 'm', content: wrapped }), 422, 'content is not valid Base64');
  assertError(await api.put('x.txt', '{oops'), 400, 'Problems parsing JSON');
  assertError(
    await api.put('x.txt', { message: 'm', content: b64('x'), branch: 'nope' }),
    404,
    'Branch nope not found',
  );
  assertError(await api.file('x.txt', 'nope'), 404, 'No commit found for the ref nope');
  assert.equal(await emu.readFile('main', 'x.txt'), null);
});

test('PUT to another branch; DELETE contents; a deleted file loses the compare-and-swap', async (t) => {
  const { emu, api } = await start(t);
  const head = await emu.head();
  assert.equal((await api.call('POST', '/repos/octo/locks/git/refs', { ref: 'refs/heads/state', sha: head })).status, 201);
  const r = await api.put('locks/a.json', { message: 'm', content: b64('on state\n'), sha: blobSha(INITIAL_A), branch: 'state' });
  assert.equal(r.status, 200);
  assert.equal(r.body.content.url.endsWith('?ref=state'), true);
  assert.equal(await emu.readFile('state', 'locks/a.json'), 'on state\n');
  assert.equal(await emu.readFile('main', 'locks/a.json'), INITIAL_A);

  assertError(await api.del('locks/a.json', { message: 'rm' }), 422, 'Invalid request.\n\n"sha" wasn\'t supplied.');
  assertError(await api.del('locks/a.json', { message: 'rm', sha: '1'.repeat(40) }), 409, `locks/a.json does not match ${'1'.repeat(40)}`);
  assertError(await api.del('locks/zzz.json', { message: 'rm', sha: '1'.repeat(40) }), 404, 'Not Found');
  const del = await api.del('locks/a.json', { message: 'rm', sha: blobSha(INITIAL_A) });
  assert.equal(del.status, 200);
  assert.equal(del.body.content, null);
  assert.equal(await emu.readFile('main', 'locks/a.json'), null);
  // docs/github-semantics.md#writes-with-a-sha: a missing file is created whatever sha says,
  // so a writer holding the old sha "wins" a CAS it should have lost.
  const stale = await api.put('locks/a.json', { message: 'm', content: b64('late\n'), sha: blobSha(INITIAL_A) });
  assert.equal(stale.status, 201);
});

test('history() walks every state of a file, oldest first', async (t) => {
  const { emu, api } = await start(t);
  let sha = blobSha(INITIAL_A);
  for (const v of ['one\n', 'two\n', 'three\n']) {
    const r = await api.put('locks/a.json', { message: v, content: b64(v), sha });
    sha = r.body.content.sha;
    await api.put(`other-${v.trim()}.txt`, { message: 'noise', content: b64(v) });
  }
  const h = await emu.history('main', 'locks/a.json');
  assert.deepEqual(h.map((e) => e.content), [INITIAL_A, 'one\n', 'two\n', 'three\n']);
  for (const e of h) assert.match(e.commit, /^[0-9a-f]{40}$/);
  assert.deepEqual(await emu.history('main', 'nothing.txt'), []);
  assert.deepEqual(await emu.history('nobranch', 'locks/a.json'), []);
});

test('two PUTs to DIFFERENT files of one branch: the later ref update gets "is at X but expected Y"', async (t) => {
  const { emu, api } = await start(t);
  const head0 = await emu.head();
  // Hold the write to a.json after it has read the head and built its commit, before it
  // moves the branch; let the write to b.json land meanwhile.
  const gate = emu.faults.add({
    method: 'PUT',
    path: /\/contents\/locks\/a\.json$/,
    action: { pause: true, at: 'beforeRefUpdate' },
  });
  const pendingA = api.put('locks/a.json', { message: 'A', content: b64('A\n'), sha: blobSha(INITIAL_A) });
  await gate.paused;
  const b = await api.put('locks/b.json', { message: 'B', content: b64('B\n'), sha: blobSha(FILES['locks/b.json']) });
  assert.equal(b.status, 200, b.text);
  gate.release();
  const a = await pendingA;
  assertError(a, 409, `is at ${b.body.commit.sha} but expected ${head0}`);
  assert.equal(gate.fired, 1);
  assert.equal(await emu.readFile('main', 'locks/a.json'), INITIAL_A);
  assert.equal(await emu.readFile('main', 'locks/b.json'), 'B\n');
  assert.equal(await emu.head(), b.body.commit.sha);
  // A retry against the new head succeeds (its own file's sha is still valid).
  const retry = await api.put('locks/a.json', { message: 'A', content: b64('A\n'), sha: blobSha(INITIAL_A) });
  assert.equal(retry.status, 200);
});

test('concurrent PUTs are not serialized: every success is a commit, nothing is lost', async (t) => {
  const { emu, api } = await start(t);
  const head0 = await emu.head();
  const n = 8;
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => api.put(`c/${i}.txt`, { message: `c${i}`, content: b64(`${i}\n`) })),
  );
  const wins = [];
  for (const [i, r] of results.entries()) {
    if (r.status === 201) wins.push(i);
    else assert.match(r.body.message, /^is at [0-9a-f]{40} but expected [0-9a-f]{40}$/, r.text);
  }
  assert.ok(wins.length >= 1);
  const commits = execFileSync('git', ['--git-dir', emu.gitDir, 'rev-list', `${head0}..main`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  assert.equal(commits.length, wins.length);
  for (let i = 0; i < n; i++) {
    assert.equal(await emu.readFile('main', `c/${i}.txt`), wins.includes(i) ? `${i}\n` : null);
  }
});

test('git refs: get, legacy prefix array, create, 422s, update, delete', async (t) => {
  const { emu, api } = await start(t);
  const head = await emu.head();
  for (const p of ['/repos/octo/locks/git/ref/heads/main', '/repos/octo/locks/git/refs/heads/main']) {
    const r = await api.get(p);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.object, {
      sha: head,
      type: 'commit',
      url: `${emu.url}/repos/octo/locks/git/commits/${head}`,
    });
    assert.equal(r.body.ref, 'refs/heads/main');
    assert.equal(r.body.url, `${emu.url}/repos/octo/locks/git/refs/heads/main`);
    assert.equal(typeof r.body.node_id, 'string');
  }
  assertError(await api.get('/repos/octo/locks/git/ref/heads/nope'), 404, 'Not Found');
  assertError(await api.get('/repos/octo/locks/git/refs/heads/nope'), 404, 'Not Found');

  const refs = '/repos/octo/locks/git/refs';
  const created = await api.call('POST', refs, { ref: 'refs/heads/lock-1', sha: head });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.ref, 'refs/heads/lock-1');
  assert.equal(created.body.object.sha, head);
  assert.equal(created.headers.get('location'), created.body.url);
  assertError(await api.call('POST', refs, { ref: 'refs/heads/lock-1', sha: head }), 422, 'Reference already exists');
  assertError(await api.call('POST', refs, { ref: 'refs/heads/x', sha: 'a'.repeat(40) }), 422, 'Object does not exist');
  assertError(await api.call('POST', refs, { ref: 'heads/x', sha: head }), 422, 'Reference name is invalid');
  assertError(await api.call('POST', refs, { ref: 'refs/x', sha: head }), 422, 'Reference name is invalid');
  assertError(await api.call('POST', refs, { ref: 'refs/heads/a..b', sha: head }), 422, 'Reference name is invalid');
  assertError(await api.call('POST', refs, { sha: head }), 422, 'Invalid request.\n\n"ref" wasn\'t supplied.');

  // Legacy GET /git/refs/{ref}: no exact match but prefix matches -> an ARRAY.
  const legacy = await api.get('/repos/octo/locks/git/refs/heads/lock');
  assert.equal(legacy.status, 200);
  assert.ok(Array.isArray(legacy.body));
  assert.deepEqual(legacy.body.map((r) => r.ref), ['refs/heads/lock-1']);
  assertError(await api.get('/repos/octo/locks/git/ref/heads/lock'), 404, 'Not Found');
  const matching = await api.get('/repos/octo/locks/git/matching-refs/heads/');
  assert.deepEqual(matching.body.map((r) => r.ref), ['refs/heads/lock-1', 'refs/heads/main']);

  // PATCH: fast-forward only unless force.
  const next = await emu.writeFile('main', 'f.txt', 'f\n');
  const ff = await api.call('PATCH', `${refs}/heads/lock-1`, { sha: next });
  assert.equal(ff.status, 200, ff.text);
  assert.equal(ff.body.object.sha, next);
  assertError(await api.call('PATCH', `${refs}/heads/lock-1`, { sha: head }), 422, 'Update is not a fast forward');
  assert.equal((await api.call('PATCH', `${refs}/heads/lock-1`, { sha: head, force: true })).status, 200);
  assertError(await api.call('PATCH', `${refs}/heads/none`, { sha: head }), 422, 'Reference does not exist');

  const del = await api.call('DELETE', `${refs}/heads/lock-1`);
  assert.equal(del.status, 204);
  assertError(await api.call('DELETE', `${refs}/heads/lock-1`), 422, 'Reference does not exist');
  assertError(await api.get('/repos/octo/locks/git/ref/heads/lock-1'), 404, 'Not Found');
});

test('faults: status (not applied), defaults, skip/times, method and path filters', async (t) => {
  const { emu, api } = await start(t);
  const r502 = emu.faults.add({ method: 'PUT', path: '/repos/octo/locks/contents/locks/a.json', action: { status: 502 } });
  const res = await api.put('locks/a.json', { message: 'm', content: b64('x'), sha: blobSha(INITIAL_A) });
  assertError(res, 502, 'Server Error');
  assert.equal(r502.fired, 1);
  assert.equal(await emu.readFile('main', 'locks/a.json'), INITIAL_A); // not applied
  const entry = emu.log.at(-1);
  assert.equal(entry.fault, 'status:502');
  assert.equal(entry.status, 502);
  assert.equal(entry.method, 'PUT');
  assert.equal(entry.path, '/repos/octo/locks/contents/locks/a.json');
  // times defaults to 1.
  assert.equal((await api.put('locks/a.json', { message: 'm', content: b64('x'), sha: blobSha(INITIAL_A) })).status, 200);

  // skip 1, times 2, a GET on a RegExp path.
  const rule = emu.faults.add({ method: 'GET', path: /^\/repos\/octo\/locks$/, skip: 1, times: 2, action: { status: 500 } });
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await api.get('/repos/octo/locks')).status);
  assert.deepEqual(statuses, [200, 500, 500, 200]);
  assert.equal(rule.fired, 2);
  // Method filter: a PUT rule does not fire on GET.
  emu.faults.add({ method: 'PUT', action: { status: 500 } });
  assert.equal((await api.file('README.md')).status, 200);
  emu.faults.clear();
  assert.equal((await api.put('z.txt', { message: 'm', content: b64('z') })).status, 201);

  // 403 defaults to GitHub's secondary-rate-limit answer, with retry-after.
  emu.faults.add({ action: { status: 403 } });
  const sec = await api.get('/repos/octo/locks');
  assert.equal(sec.status, 403);
  assert.match(sec.body.message, /^You have exceeded a secondary rate limit/);
  assert.ok(Number(sec.headers.get('retry-after')) > 0);
  // Headers and body can be set.
  emu.faults.add({ action: { status: 429, headers: { 'retry-after': '60' }, body: { message: 'slow down' } } });
  const custom = await api.get('/repos/octo/locks');
  assert.equal(custom.status, 429);
  assert.equal(custom.headers.get('retry-after'), '60');
  assert.deepEqual(custom.body, { message: 'slow down' });
  // Primary-limit flavour when x-ratelimit-remaining is 0.
  emu.faults.add({ action: { status: 403, headers: { 'x-ratelimit-remaining': '0' } } });
  const prim = await api.get('/repos/octo/locks');
  assert.match(prim.body.message, /^API rate limit exceeded/);
  assert.equal(prim.headers.get('x-ratelimit-remaining'), '0');
  emu.faults.add({ action: { status: 401 } });
  assertError(await api.get('/repos/octo/locks'), 401, 'Bad credentials');

  assert.throws(() => emu.faults.add({ action: {} }), TypeError);
  assert.throws(() => emu.faults.add({ action: { status: 500, reset: true } }), TypeError);
});

test('faults: applyThen status, applyThen reset, reset', async (t) => {
  const { emu, api } = await start(t);
  // applyThen 502: the write lands, the client is told it failed.
  emu.faults.add({ method: 'PUT', action: { applyThen: { status: 502 } } });
  const r = await api.put('locks/a.json', { message: 'm', content: b64('landed\n'), sha: blobSha(INITIAL_A) });
  assertError(r, 502, 'Server Error');
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'landed\n');
  assert.equal(emu.log.at(-1).fault, 'applyThen:502');
  // A naive retry with the old sha now loses to its own first attempt.
  const retry = await api.put('locks/a.json', { message: 'm', content: b64('landed\n'), sha: blobSha(INITIAL_A) });
  assert.equal(retry.status, 409);

  // applyThen reset: the write lands, the connection dies.
  emu.faults.add({ method: 'PUT', action: { applyThen: 'reset' } });
  await assert.rejects(api.put('locks/a.json', { message: 'm', content: b64('second\n'), sha: blobSha('landed\n') }));
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'second\n');
  assert.equal(emu.log.at(-1).fault, 'applyThen:reset');
  assert.equal(emu.log.at(-1).status, null);

  // reset: nothing applied, the connection dies.
  const rule = emu.faults.add({ method: 'PUT', action: { reset: true } });
  await assert.rejects(api.put('locks/a.json', { message: 'm', content: b64('third\n'), sha: blobSha('second\n') }));
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'second\n');
  assert.equal(rule.fired, 1);
  assert.equal(emu.log.at(-1).fault, 'reset');
  // The emulator keeps serving.
  assert.equal((await api.file('locks/a.json')).status, 200);
});

test('faults: latencyMs, conflict, pause released by clear()', async (t) => {
  const { emu, api } = await start(t);
  emu.faults.add({ path: '/repos/octo/locks', action: { latencyMs: 250 } });
  const t0 = performance.now();
  assert.equal((await api.get('/repos/octo/locks')).status, 200);
  assert.ok(performance.now() - t0 >= 240);
  assert.equal(emu.log.at(-1).fault, 'latency:250');
  assert.ok(emu.log.at(-1).ms >= 240);

  // conflict: as if another write on the branch had won; nothing applied; not on GET.
  const head = await emu.head();
  const rule = emu.faults.add({ action: { conflict: true } });
  assert.equal((await api.file('locks/a.json')).status, 200);
  const c = await api.put('locks/a.json', { message: 'm', content: b64('x'), sha: blobSha(INITIAL_A) });
  assert.equal(c.status, 409);
  const m = /^is at ([0-9a-f]{40}) but expected ([0-9a-f]{40})$/.exec(c.body.message);
  assert.ok(m, c.body.message);
  assert.equal(m[2], head);
  assert.notEqual(m[1], head);
  assert.equal(rule.fired, 1);
  assert.equal(await emu.head(), head);

  // A request held at 'request' is let go by clear().
  const gate = emu.faults.add({ method: 'GET', action: { pause: true } });
  const pending = api.file('README.md');
  const info = await gate.paused;
  assert.equal(info.method, 'GET');
  emu.faults.clear();
  assert.equal((await pending).status, 200);
});

test('staleReads: GETs by branch return the replaced version for ms after a write', async (t) => {
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const { emu, api } = await start(t, { now: () => clock });
  const before = await api.file('locks/a.json');
  emu.faults.staleReads({ path: 'locks/a.json', ms: 10_000 });
  const w = await api.put('locks/a.json', { message: 'm', content: b64('new\n'), sha: before.body.sha });
  assert.equal(w.status, 200);

  const stale = await api.file('locks/a.json');
  assert.equal(stale.status, 200);
  assert.equal(unb64(stale.body.content), INITIAL_A);
  assert.equal(stale.body.sha, before.body.sha);
  assert.equal(stale.headers.get('etag'), before.headers.get('etag'));
  assert.equal(emu.log.at(-1).fault, 'staleRead');
  // Git itself has the new version, and reads by commit sha are never stale.
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'new\n');
  assert.equal(unb64((await api.file('locks/a.json', w.body.commit.sha)).body.content), 'new\n');
  // Other paths are not affected.
  await api.put('locks/b.json', { message: 'm', content: b64('b2\n'), sha: blobSha(FILES['locks/b.json']) });
  assert.equal(unb64((await api.file('locks/b.json')).body.content), 'b2\n');

  clock += 10_001;
  const fresh = await api.file('locks/a.json');
  assert.equal(unb64(fresh.body.content), 'new\n');
  assert.equal(fresh.body.sha, w.body.content.sha);

  // A created file reads as missing during the window (RegExp path).
  emu.faults.staleReads({ path: /created/, ms: 5_000 });
  await api.put('locks/created.json', { message: 'm', content: b64('c\n') });
  assertError(await api.file('locks/created.json'), 404, 'Not Found');
  // Turning it off makes reads fresh at once.
  emu.faults.staleReads(null);
  assert.equal(unb64((await api.file('locks/created.json')).body.content), 'c\n');
});

test('createRepo hosts more repositories; close() removes the temp dir, keeps options.dir', async (t) => {
  const emu = await startEmulator({ files: FILES });
  const api = client(emu);
  const other = await emu.createRepo('acme', 'state', 'trunk', { 'x.txt': 'x\n' });
  assert.equal(other.defaultBranch, 'trunk');
  const r = await api.get('/repos/acme/state/contents/x.txt');
  assert.equal(r.status, 200);
  assert.equal(r.body.url, `${emu.url}/repos/acme/state/contents/x.txt?ref=trunk`);
  assert.equal((await api.get('/repos/acme/state')).body.default_branch, 'trunk');
  const w = await api.call('PUT', '/repos/acme/state/contents/y.txt', { message: 'm', content: b64('y\n') });
  assert.equal(w.status, 201);
  assert.equal(await other.readFile('trunk', 'y.txt'), 'y\n');
  assert.equal(await emu.readFile('main', 'y.txt'), null);
  await assert.rejects(emu.createRepo('acme', 'state'));

  const base = path.dirname(path.dirname(emu.gitDir));
  await fs.access(emu.gitDir);
  await emu.close();
  await assert.rejects(fs.access(base));

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'emu-keep-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const kept = await startEmulator({ dir, files: { 'k.txt': 'k\n' } });
  assert.ok(kept.gitDir.startsWith(dir));
  await kept.close();
  await fs.access(path.join(kept.gitDir, 'HEAD'));
});

test('CLI: prints the URL, serves, stops on SIGINT', async () => {
  const child = spawn(process.execPath, [path.join(HERE, 'emulator.mjs'), '--port', '0', '--owner', 'o', '--repo', 'r'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      if (buf.includes('\n')) resolve(buf.split('\n')[0].trim());
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const r = await fetch(`${url}/repos/o/r`, { headers: { authorization: 'token t' } });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).full_name, 'o/r');
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
});

// ---------------------------------------------------------------------------------------
// git data: POST git/trees, POST git/commits, GET git/commits/{sha}

const TREES_DOC = 'https://docs.github.com/rest/git/trees#create-a-tree';
const COMMITS_DOC = 'https://docs.github.com/rest/git/commits#create-a-commit';

const gitOut = (emu, ...args) => execFileSync('git', ['--git-dir', emu.gitDir, ...args], { encoding: 'utf8' });
const hasObject = (emu, sha) => {
  try {
    execFileSync('git', ['--git-dir', emu.gitDir, 'cat-file', '-e', sha], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const post = (api, kind, body) => api.call('POST', `/repos/octo/locks/git/${kind}`, body);
const treeOf = async (api, commit) => (await api.get(`/repos/octo/locks/git/commits/${commit}`)).body.tree.sha;
/** `git ls-tree -r` of a tree as "mode type sha\tpath" lines. */
const lsTree = (emu, tree) => gitOut(emu, 'ls-tree', '-r', tree).trim().split('\n');

test('git data: an orphan branch from scratch (trees -> commits -> refs), then contents on it', async (t) => {
  let clock = Date.parse('2030-01-02T03:04:05Z');
  const { emu, api } = await start(t, { now: () => clock });
  const main0 = await emu.head('main');

  // 1. A tree holding one file, given as content (GitHub writes the blob).
  const tree = await post(api, 'trees', { tree: [{ path: 'README.md', mode: '100644', type: 'blob', content: '# new\n' }] });
  assert.equal(tree.status, 201, tree.text);
  const readme = blobSha('# new\n');
  assert.deepEqual(tree.body, {
    sha: tree.body.sha,
    url: `${emu.url}/repos/octo/locks/git/trees/${tree.body.sha}`,
    tree: [
      { path: 'README.md', mode: '100644', type: 'blob', sha: readme, size: 6, url: `${emu.url}/repos/octo/locks/git/blobs/${readme}` },
    ],
    truncated: false,
  });
  assert.deepEqual(lsTree(emu, tree.body.sha), [`100644 blob ${readme}\tREADME.md`]);

  // 2. A root commit: parents [].
  const commit = await post(api, 'commits', { message: 'start', tree: tree.body.sha, parents: [] });
  assert.equal(commit.status, 201, commit.text);
  const c = commit.body;
  assert.equal(commit.headers.get('location'), c.url);
  assert.match(c.sha, /^[0-9a-f]{40}$/);
  assert.equal(c.url, `${emu.url}/repos/octo/locks/git/commits/${c.sha}`);
  assert.equal(typeof c.node_id, 'string');
  assert.ok(c.html_url.endsWith(`/octo/locks/commit/${c.sha}`));
  assert.deepEqual(c.tree, { sha: tree.body.sha, url: tree.body.url });
  assert.equal(c.message, 'start');
  assert.deepEqual(c.parents, []);
  const bot = { name: 'github-actions[bot]', email: '41898282+github-actions[bot]@users.noreply.github.com', date: '2030-01-02T03:04:05Z' };
  assert.deepEqual(c.author, bot);
  assert.deepEqual(c.committer, bot);
  assert.deepEqual(c.verification, { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null });
  assert.match(gitOut(emu, 'cat-file', '-p', c.sha), new RegExp(`^tree ${tree.body.sha}\nauthor `)); // no parent line
  assert.equal(await emu.head('main'), main0); // nothing moved yet

  // 3. The branch.
  const ref = await post(api, 'refs', { ref: 'refs/heads/new-branch', sha: c.sha });
  assert.equal(ref.status, 201, ref.text);

  // 4. Contents work on it, and it shares nothing with main.
  const got = await api.file('README.md', 'new-branch');
  assert.equal(got.status, 200, got.text);
  assert.equal(unb64(got.body.content), '# new\n');
  assert.equal(got.body.sha, readme);
  assertError(await api.file('locks/a.json', 'new-branch'), 404, 'Not Found');
  clock += 60_000;
  const put = await api.put('docs/second.md', { message: 'second', content: b64('two\n'), branch: 'new-branch' });
  assert.equal(put.status, 201, put.text);
  assert.deepEqual(put.body.commit.parents.map((p) => p.sha), [c.sha]);
  assert.equal(await emu.head('new-branch'), put.body.commit.sha);
  assert.equal(await emu.readFile('new-branch', 'docs/second.md'), 'two\n');
  assert.equal(await emu.readFile('new-branch', 'README.md'), '# new\n');
  assert.equal(gitOut(emu, 'rev-list', '--count', 'new-branch').trim(), '2');
  assert.equal(await emu.head('main'), main0);
  assert.equal(await emu.readFile('main', 'docs/second.md'), null);

  // GET git/commits/{sha}: the same description; contents commits read back too.
  const back = await api.get(`/repos/octo/locks/git/commits/${c.sha}`);
  assert.equal(back.status, 200);
  assert.deepEqual(back.body, c);
  const second = await api.get(`/repos/octo/locks/git/commits/${put.body.commit.sha}`);
  assert.deepEqual(second.body, put.body.commit);
  for (const sha of ['f'.repeat(40), 'nonsense', tree.body.sha, c.sha.slice(0, 12)]) {
    const r = await api.get(`/repos/octo/locks/git/commits/${sha}`);
    assertError(r, 404, 'Not Found');
    assert.equal(r.body.documentation_url, 'https://docs.github.com/rest/git/commits#get-a-commit-object');
  }
});

test('POST git/trees: nested paths, every mode, tree entries by sha, base_tree with deletions', async (t) => {
  const { emu, api } = await start(t);
  const head = await emu.head();

  // Nested paths get their intermediate trees; modes are kept as given.
  const nested = await post(api, 'trees', {
    tree: [
      { path: 'a/b/c.txt', mode: '100644', type: 'blob', content: 'c\n' },
      { path: 'a/b/run.sh', mode: '100755', type: 'blob', content: '#!/bin/sh\n' },
      { path: 'a/link', mode: '120000', type: 'blob', content: 'b/c.txt' },
      { path: 'top.json', mode: '100644', type: 'blob', sha: blobSha(INITIAL_A) }, // an existing blob
      { path: 'vendor/lib', mode: '160000', type: 'commit', sha: '1'.repeat(40) }, // a submodule
    ],
  });
  assert.equal(nested.status, 201, nested.text);
  const [a, top, vendor] = nested.body.tree;
  assert.deepEqual(nested.body.tree.map((e) => [e.path, e.mode, e.type]), [
    ['a', '040000', 'tree'],
    ['top.json', '100644', 'blob'],
    ['vendor', '040000', 'tree'],
  ]);
  assert.equal(a.url, `${emu.url}/repos/octo/locks/git/trees/${a.sha}`);
  assert.equal('size' in a, false);
  assert.equal(top.size, Buffer.byteLength(INITIAL_A));
  assert.deepEqual(lsTree(emu, nested.body.sha), [
    `100644 blob ${blobSha('c\n')}\ta/b/c.txt`,
    `100755 blob ${blobSha('#!/bin/sh\n')}\ta/b/run.sh`,
    `120000 blob ${blobSha('b/c.txt')}\ta/link`,
    `100644 blob ${blobSha(INITIAL_A)}\ttop.json`,
    `160000 commit ${'1'.repeat(40)}\tvendor/lib`,
  ]);
  // A submodule entry is listed without url or size.
  const sub = await post(api, 'trees', { tree: [{ path: 'm', mode: '160000', type: 'commit', sha: head }] });
  assert.deepEqual(sub.body.tree, [{ path: 'm', mode: '160000', type: 'commit', sha: head }]);

  // A subtree by sha, under a new name and nested.
  const copy = await post(api, 'trees', { tree: [{ path: 'x/copy', mode: '040000', type: 'tree', sha: a.sha }] });
  assert.equal(copy.status, 201, copy.text);
  assert.deepEqual(lsTree(emu, copy.body.sha).map((l) => l.split('\t')[1]), ['x/copy/b/c.txt', 'x/copy/b/run.sh', 'x/copy/link']);

  // base_tree: start from main's tree; sha null deletes (nested or not); the rest is kept.
  const base = await treeOf(api, head);
  const edited = await post(api, 'trees', {
    base_tree: base,
    tree: [
      { path: 'locks/a.json', mode: '100644', type: 'blob', sha: null },
      { path: 'README.md', mode: '100644', type: 'blob', content: 'changed\n' },
      { path: 'locks/c.json', mode: '100644', type: 'blob', content: '{}\n' },
      { path: 'gone/never.txt', mode: '100644', type: 'blob', sha: null }, // not there: nothing to do
    ],
  });
  assert.equal(edited.status, 201, edited.text);
  assert.deepEqual(lsTree(emu, edited.body.sha), [
    `100644 blob ${blobSha('changed\n')}\tREADME.md`,
    `100644 blob ${blobSha(FILES['locks/b.json'])}\tlocks/b.json`,
    `100644 blob ${blobSha('{}\n')}\tlocks/c.json`,
  ]);
  assert.deepEqual(lsTree(emu, base).length, 3); // the base tree is untouched
  // Deleting the last files of a directory removes it; "" as sha deletes too.
  const emptied = await post(api, 'trees', {
    base_tree: edited.body.sha,
    tree: [
      { path: 'locks/b.json', mode: '100644', type: 'blob', sha: null },
      { path: 'locks/c.json', mode: '100644', type: 'blob', sha: '' },
    ],
  });
  assert.deepEqual(emptied.body.tree.map((e) => e.path), ['README.md']);
  // A commit sha as base_tree stands for its tree; a later entry for a path wins.
  const fromCommit = await post(api, 'trees', {
    base_tree: head,
    tree: [
      { path: 'x.txt', mode: '100644', type: 'blob', content: 'first\n' },
      { path: 'x.txt', mode: '100644', type: 'blob', content: 'second\n' },
    ],
  });
  assert.deepEqual(fromCommit.body.tree.map((e) => e.path), ['README.md', 'locks', 'x.txt']);
  assert.equal(fromCommit.body.tree[2].sha, blobSha('second\n'));
  // A tree with nothing left in it: GitHub answers 404.
  const none = await post(api, 'trees', { base_tree: emptied.body.sha, tree: [{ path: 'README.md', mode: '100644', type: 'blob', sha: null }] });
  assertError(none, 404, 'Not Found');

  // The edited tree, committed on main and moved there, is what contents then serve.
  const commit = await post(api, 'commits', { message: 'edit', tree: edited.body.sha, parents: [head] });
  assert.equal(commit.status, 201, commit.text);
  assert.equal((await api.call('PATCH', '/repos/octo/locks/git/refs/heads/main', { sha: commit.body.sha })).status, 200);
  assertError(await api.file('locks/a.json'), 404, 'Not Found');
  assert.equal(unb64((await api.file('README.md')).body.content), 'changed\n');
});

test('POST git/trees: 422s and 404', async (t) => {
  const { emu, api } = await start(t);
  const head = await emu.head();
  const baseTree = await treeOf(api, head);
  const readme = blobSha(FILES['README.md']);
  const bad = async (body, message) => {
    const r = await post(api, 'trees', body);
    assertError(r, 422, message);
    assert.equal(r.body.documentation_url, TREES_DOC);
  };
  const file = (extra) => ({ path: 'f.txt', mode: '100644', type: 'blob', ...extra });
  const neither = 'Must supply either tree.sha or tree.content. Request will be rejected if both are present.';

  // Missing or invalid `tree`.
  await bad({}, 'Invalid tree info');
  await bad({ tree: [] }, 'Invalid tree info');
  await bad({ tree: 'README.md' }, 'Invalid tree info');
  await bad({ tree: { path: 'x' } }, 'Invalid tree info');
  await bad({ tree: ['README.md'] }, 'Invalid tree info');
  // Mode: one of git's five, as a string; a deletion needs one too.
  await bad({ tree: [file({ mode: '100664', content: 'x' })] }, 'Must supply a valid tree.mode');
  await bad({ tree: [file({ mode: '40000', type: 'tree', sha: baseTree })] }, 'Must supply a valid tree.mode');
  await bad({ tree: [file({ mode: 100644, content: 'x' })] }, 'Must supply a valid tree.mode');
  await bad({ tree: [{ path: 'README.md', type: 'blob', sha: null }] }, 'Must supply a valid tree.mode');
  // Type: the sha must name an object of that type.
  await bad({ tree: [file({ type: 'blub', sha: readme })] }, `tree.sha ${readme} is not a valid blub`);
  await bad({ tree: [file({ sha: baseTree })] }, `tree.sha ${baseTree} is not a valid blob`);
  await bad({ tree: [file({ sha: 'f'.repeat(40) })] }, `tree.sha ${'f'.repeat(40)} is not a valid blob`);
  await bad({ tree: [{ path: 'd', mode: '040000', type: 'tree', sha: readme }] }, `tree.sha ${readme} is not a valid tree`);
  await bad({ tree: [{ path: 'm', mode: '160000', type: 'commit', sha: 'x' }] }, 'tree.sha x is not a valid commit');
  // ...and the mode must agree with the object.
  await bad({ tree: [{ path: 'd', mode: '040000', type: 'blob', sha: readme }] }, 'GitRPC::BadObjectState');
  await bad({ tree: [{ path: 'l', mode: '120000', type: 'tree', sha: baseTree }] }, 'GitRPC::BadObjectState');
  await bad({ tree: [{ path: 'm', mode: '160000', type: 'commit', sha: '0'.repeat(40) }] }, 'GitRPC::BadObjectState');
  // Exactly one of sha and content.
  await bad({ tree: [file({ sha: readme, content: 'x' })] }, neither);
  await bad({ tree: [file({})] }, neither);
  await bad({ tree: [file({ content: null })] }, neither);
  await bad({ tree: [file({ sha: null, content: 'x' })] }, neither);
  await bad({ tree: [{ path: 'd', mode: '040000', type: 'tree', content: 'x' }] }, 'A subdirectory may not have content');
  // Paths.
  await bad({ tree: [file({ path: '/abs.txt', content: 'x' })] }, 'tree.path cannot start with a slash');
  await bad({ tree: [file({ path: 'a/../b', content: 'x' })] }, 'tree.path contains a malformed path component');
  await bad({ tree: [file({ content: 'x' }), file({ path: 'f.txt/g', content: 'y' })] }, 'GitRPC::BadObjectState');
  // base_tree: a tree, or a commit; anything else is refused.
  for (const b of ['f'.repeat(40), readme, 'nonsense', '']) {
    await bad({ base_tree: b, tree: [file({ content: 'x' })] }, 'base_tree is not a valid tree oid');
  }
  // The first bad entry decides, and nothing is written for a refused request.
  await bad({ tree: [file({ content: 'never written\n' }), file({ path: '/x', content: 'y' })] }, 'tree.path cannot start with a slash');
  assert.equal(hasObject(emu, blobSha('never written\n')), false);

  assertError(await post(api, 'trees', '{oops'), 400, 'Problems parsing JSON');
  assertError(await api.call('POST', '/repos/octo/nope/git/trees', { tree: [file({ content: 'x' })] }), 404, 'Not Found');
  assertError(await api.get('/repos/octo/locks/git/trees'), 404, 'Not Found');
});

test('POST git/commits: identities, parents, merge commits, 422s', async (t) => {
  const clock = Date.parse('2030-01-02T03:04:05Z');
  const { emu, api } = await start(t, { now: () => clock });
  const head = await emu.head();
  const tree = await treeOf(api, head);
  const bad = async (body, message) => {
    const r = await post(api, 'commits', body);
    assertError(r, 422, message);
    assert.equal(r.body.documentation_url, COMMITS_DOC);
    return r;
  };

  await bad({ tree }, 'Invalid request.\n\n"message" wasn\'t supplied.');
  await bad({ message: 'm' }, 'Invalid request.\n\n"tree" wasn\'t supplied.');
  await bad({}, 'Invalid request.\n\n"message", "tree" weren\'t supplied.');
  await bad({ message: 'm', tree: null }, "Invalid request.\n\nFor 'properties/tree', nil is not a string.");
  await bad({ message: 7, tree }, "Invalid request.\n\nFor 'properties/message', 7 is not a string.");
  await bad({ message: 'm', tree: 'nonsense' }, 'The tree parameter must be exactly 40 characters and contain only [0-9a-f].');
  await bad({ message: 'm', tree: 'f'.repeat(40) }, 'Tree SHA does not exist');
  await bad({ message: 'm', tree: head }, 'Tree SHA is not a tree object');
  await bad({ message: 'm', tree, parents: ['f'.repeat(40)] }, 'Parent SHA does not exist or is not a commit object');
  await bad({ message: 'm', tree, parents: [head, tree] }, 'Parent SHA does not exist or is not a commit object');
  await bad(
    { message: 'm', tree, parents: ['nonsense'] },
    "Each SHA in the 'parents' parameter must be exactly 40 characters and contain only [0-9a-f].",
  );
  await bad({ message: 'm', tree, parents: head }, `Invalid request.\n\nFor 'properties/parents', "${head}" is not an array.`);
  await bad({ message: 'm', tree, author: null }, "Invalid request.\n\nFor 'properties/author', nil is not an object.");
  await bad(
    { message: 'm', tree, author: { name: null, email: null } },
    "Invalid request.\n\nFor 'properties/email', nil is not a string.\nFor 'properties/name', nil is not a string.",
  );
  await bad({ message: 'm', tree, committer: { name: 'Bob' } }, 'Invalid request.\n\n"email" wasn\'t supplied.');
  await bad(
    { message: 'm', tree, author: { name: 'Bob', email: 'bob@example.com', date: '2031-11-02T15:05:10' } },
    'Invalid request.\n\n2031-11-02T15:05:10 is not a valid date-time.',
  );
  const vf = await bad({ message: 'm', tree, author: { name: '', email: 'bob@example.com' } }, 'Validation Failed');
  assert.deepEqual(vf.body.errors, [{ resource: 'author', code: 'missing_field', field: 'name' }]);
  assertError(await api.call('POST', '/repos/octo/nope/git/commits', { message: 'm', tree }), 404, 'Not Found');

  // The author given; the committer defaults to the author; dates come back in UTC; the
  // message is kept byte for byte.
  const bob = { name: 'Bob', email: 'bob@example.com', date: '1972-11-02T15:05:10+08:00' };
  const c1 = await post(api, 'commits', { message: 'subject\n\nbody\n', tree, parents: [head], author: bob });
  assert.equal(c1.status, 201, c1.text);
  const bobOut = { name: 'Bob', email: 'bob@example.com', date: '1972-11-02T07:05:10Z' };
  assert.deepEqual(c1.body.author, bobOut);
  assert.deepEqual(c1.body.committer, bobOut);
  assert.equal(c1.body.message, 'subject\n\nbody\n');
  assert.deepEqual(c1.body.parents, [
    { sha: head, url: `${emu.url}/repos/octo/locks/git/commits/${head}`, html_url: `${emu.url}/octo/locks/commit/${head}` },
  ]);
  assert.equal(gitOut(emu, 'cat-file', 'commit', c1.body.sha).split('\n\n').slice(1).join('\n\n'), 'subject\n\nbody\n');
  // A committer alone: the author is the token's user, dated now.
  const ann = { name: 'Ann', email: 'ann@example.com' };
  const c2 = await post(api, 'commits', { message: 'm', tree, parents: [c1.body.sha], committer: ann });
  assert.deepEqual(c2.body.committer, { ...ann, date: '2030-01-02T03:04:05Z' });
  assert.equal(c2.body.author.name, 'github-actions[bot]');
  // Two parents make a merge commit; no branch moves.
  const merge = await post(api, 'commits', { message: 'merge', tree, parents: [head, c2.body.sha] });
  assert.deepEqual(merge.body.parents.map((p) => p.sha), [head, c2.body.sha]);
  assert.match(gitOut(emu, 'cat-file', '-p', merge.body.sha), new RegExp(`\nparent ${head}\nparent ${c2.body.sha}\n`));
  assert.equal(await emu.head(), head);
});

test('git data routes share the machinery: auth, rate limit, log, status / applyThen / reset faults', async (t) => {
  const clock = Date.parse('2030-01-02T03:04:05Z');
  const { emu, api } = await start(t, { now: () => clock, tokens: [TOKEN] });
  const body = { tree: [{ path: 'f.txt', mode: '100644', type: 'blob', content: 'f\n' }] };
  assertError(await post(client(emu, null), 'trees', body), 401, 'Requires authentication');

  // status on POST git/trees: answered at the edge, nothing written.
  const rule = emu.faults.add({ method: 'POST', path: /\/git\/trees$/, action: { status: 502 } });
  const failed = await post(api, 'trees', body);
  assertError(failed, 502, 'Server Error');
  assert.equal(rule.fired, 1);
  assert.equal(hasObject(emu, blobSha('f\n')), false);
  assert.deepEqual(
    [emu.log.at(-1).method, emu.log.at(-1).path, emu.log.at(-1).status, emu.log.at(-1).fault],
    ['POST', '/repos/octo/locks/git/trees', 502, 'status:502'],
  );
  // The rule is used up; the next request goes through and counts against the rate limit.
  const ok = await post(api, 'trees', body);
  assert.equal(ok.status, 201, ok.text);
  const used = Number(ok.headers.get('x-ratelimit-used'));
  assert.ok(used >= 1);
  assert.equal(hasObject(emu, blobSha('f\n')), true);

  // applyThen on POST git/commits: the commit is made, the client is told it failed. A retry
  // with the same inputs in the same second gets the very same commit back.
  emu.faults.add({ method: 'POST', path: '/repos/octo/locks/git/commits', action: { applyThen: { status: 500 } } });
  const lied = await post(api, 'commits', { message: 'm', tree: ok.body.sha, parents: [] });
  assertError(lied, 500, 'Server Error');
  assert.equal(emu.log.at(-1).applied, 201);
  assert.equal(emu.log.at(-1).fault, 'applyThen:500');
  const objects = gitOut(emu, 'cat-file', '--batch-all-objects', '--batch-check');
  const retry = await post(api, 'commits', { message: 'm', tree: ok.body.sha, parents: [] });
  assert.equal(retry.status, 201);
  assert.ok(objects.includes(`${retry.body.sha} commit`));
  assert.equal(Number(retry.headers.get('x-ratelimit-used')), used + 2);

  // reset on GET git/commits/{sha}.
  emu.faults.add({ method: 'GET', path: /\/git\/commits\//, action: { reset: true } });
  await assert.rejects(api.get(`/repos/octo/locks/git/commits/${retry.body.sha}`));
  assert.equal((await api.get(`/repos/octo/locks/git/commits/${retry.body.sha}`)).status, 200);
});

test("pause at 'afterApply': the write lands, only its answer is held; paused names the request's token", async (t) => {
  const { emu, api } = await start(t);
  const gate = emu.faults.add({ method: 'PUT', path: /\/contents\/locks\/a\.json$/, action: { pause: true, at: 'afterApply' } });
  let answered = false;
  const pending = api.put('locks/a.json', { message: 'A', content: b64('A\n'), sha: blobSha(INITIAL_A) }).then((r) => ((answered = true), r));
  const info = await gate.paused;
  assert.equal(info.token, TOKEN);
  assert.equal(info.method, 'PUT');
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'A\n', 'the write landed while its answer is held');
  assert.equal(answered, false);
  gate.release();
  const a = await pending;
  assert.equal(a.status, 200, a.text);
  assert.equal(emu.log.at(-1).applied, 200);
  assert.throws(() => emu.faults.add({ action: { status: 500, at: 'afterApply' } }), /'at' applies only/);
});

test('request time limit: past it the client gets 502 "Server Error" (or a reset) at once; the work finishes or is dropped', async (t) => {
  const { emu, api } = await start(t, { timeLimitMs: 200 });
  const put = (content, sha) => api.put('locks/a.json', { message: 'm', content: b64(content), sha });
  // 'finish' (default): the write lands after the client was told it failed.
  emu.faults.add({ method: 'PUT', action: { latencyMs: 500, at: 'beforeRefUpdate' } });
  const killed = await put('late\n', blobSha(INITIAL_A));
  const entry = emu.log.at(-1);
  assert.equal(entry.applied, undefined, 'answered at the limit, before the work ended');
  assertError(killed, 502, 'Server Error');
  assert.ok(killed.headers.get('x-ratelimit-remaining'), 'rate-limit headers on the kill answer too');
  assert.equal(entry.fault, 'latency:500+killed');
  await waitUntil(() => entry.applied !== undefined);
  assert.equal(entry.applied, 200);
  assert.equal(await emu.readFile('main', 'locks/a.json'), 'late\n');

  // 'drop': the work stops before it moves the branch; nothing is applied.
  emu.setTimeLimit({ work: 'drop' });
  const head = await emu.head();
  emu.faults.add({ method: 'PUT', action: { pause: true, at: 'beforeRefUpdate' } });
  assertError(await put('dropped\n', blobSha('late\n')), 502, 'Server Error');
  const dropped = emu.log.at(-1);
  emu.faults.clear(); // lets the held work go on: to its checkpoint
  await waitUntil(() => dropped.applied !== undefined);
  assert.equal(dropped.applied, 'dropped');
  assert.equal(await emu.head(), head);

  // answer 'reset': no HTTP answer at all.
  emu.setTimeLimit({ answer: 'reset', work: 'finish' });
  emu.faults.add({ method: 'GET', action: { latencyMs: 400 } });
  await assert.rejects(api.file('locks/a.json'));
  assert.equal(emu.log.at(-1).status, null);
  // Off: slow requests are answered when done.
  emu.setTimeLimit({ ms: null });
  emu.faults.add({ method: 'GET', action: { latencyMs: 300 } });
  assert.equal((await api.file('locks/a.json')).status, 200);
  assert.throws(() => emu.setTimeLimit({ answer: 404 }), /5xx/);
  assert.throws(() => emu.setTimeLimit({ work: 'maybe' }), /finish/);
});

test('onExchange and LEASEHOLD_CONFORMANCE_DIR: every request and answer, as recorded for the conformance check', async (t) => {
  const seen = [];
  const { emu, api } = await start(t, { onExchange: (e) => seen.push(e) });
  const got = await api.file('locks/a.json', 'main');
  await api.put('locks/a.json', { message: 'm', content: b64('x\n'), sha: got.body.sha });
  emu.faults.add({ method: 'GET', action: { reset: true } });
  await assert.rejects(api.file('locks/a.json'));
  assert.equal(seen.length, 3);
  const [g, p, r] = seen;
  assert.deepEqual([g.method, g.path, g.query, g.status], ['GET', '/repos/octo/locks/contents/locks/a.json', [['ref', 'main']], 200]);
  assert.equal(g.requestHeaders.authorization, 'token [redacted]', 'no token is recorded');
  assert.equal(g.responseBody.sha, got.body.sha);
  assert.equal(g.responseHeaders.etag, got.headers.get('etag'));
  assert.deepEqual(p.requestBody, { message: 'm', content: b64('x\n'), sha: got.body.sha });
  assert.equal(p.status, 200);
  assert.deepEqual([r.status, r.reset, r.responseBody], [null, true, null]);
  assert.equal(typeof g.startedAt, 'number');

  // LEASEHOLD_CONFORMANCE_DIR: one JSON line per exchange, per process.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'leasehold-rec-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const saved = process.env.LEASEHOLD_CONFORMANCE_DIR;
  process.env.LEASEHOLD_CONFORMANCE_DIR = dir;
  let rec;
  try {
    rec = await startEmulator({ files: FILES });
  } finally {
    if (saved === undefined) delete process.env.LEASEHOLD_CONFORMANCE_DIR;
    else process.env.LEASEHOLD_CONFORMANCE_DIR = saved;
  }
  await client(rec).file('README.md');
  await rec.close();
  const lines = (await fs.readFile(path.join(dir, `exchanges-${process.pid}.jsonl`), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 1);
  assert.equal(lines[0].status, 200);
  assert.equal(lines[0].source, path.relative(process.cwd(), process.argv[1]));
});

test('shapes GitHub records: ETag and cache headers on writes, Location on created trees, raw media type echoed, /rate_limit', async (t) => {
  const { api } = await start(t);
  const got = await api.file('locks/a.json');
  const w = await api.put('locks/a.json', { message: 'm', content: b64('y\n'), sha: got.body.sha });
  assert.match(w.headers.get('etag'), /^"[0-9a-f]{64}"$/);
  assert.equal(w.headers.get('cache-control'), 'private, max-age=60, s-maxage=60');
  const missing = await api.file('nope.json');
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('cache-control'), null, 'no cache headers on an error');
  const tree = await api.call('POST', '/repos/octo/locks/git/trees', { tree: [{ path: 'f', mode: '100644', type: 'blob', content: 'f' }] });
  assert.equal(tree.headers.get('location'), tree.body.url);
  const v3 = await api.file('README.md', null, { accept: 'application/vnd.github.v3.raw' });
  assert.equal(v3.headers.get('content-type'), 'application/vnd.github.v3.raw; charset=utf-8');
  const rl = await api.get('/rate_limit');
  assert.deepEqual(Object.keys(rl.body.resources).slice(0, 2), ['core', 'search']);
  assert.ok(rl.headers.get('etag'));
  assert.equal((await api.get('/rate_limit', { 'if-none-match': rl.headers.get('etag') })).status, 304);
  const repo = await api.get('/repos/octo/locks');
  for (const k of ['forks_url', 'has_discussions', 'network_count', 'subscribers_count', 'license', 'mirror_url']) assert.ok(k in repo.body, k);
  assert.ok('followers_url' in repo.body.owner);
});

// ---- GitHub Actions: runs, attempts, jobs ------------------------------------------------

const RUNS = '/repos/octo/locks/actions/runs';
const JOBS = '/repos/octo/locks/actions/jobs';

test('actions: a run reads as of its LATEST attempt; each attempt and job keeps its own status', async (t) => {
  let clock = Date.parse('2030-03-04T05:06:07Z');
  const { emu, api } = await start(t, { now: () => clock });
  const [build, lint] = await emu.actions.startRun(7, { jobs: [{ name: 'build', runnerName: 'runner-a' }, { name: 'lint', status: 'queued' }] });
  assert.ok(Number.isInteger(build) && Number.isInteger(lint) && build !== lint);

  let run = (await api.get(`${RUNS}/7`)).body;
  assert.deepEqual([run.id, run.run_attempt, run.status, run.conclusion], [7, 1, 'in_progress', null]);
  assert.equal(run.head_sha, await emu.head());
  assert.equal(run.head_branch, 'main');
  assert.equal(run.previous_attempt_url, null);
  assert.equal(run.url, `${emu.url}${RUNS}/7`);
  assert.equal(run.run_started_at, '2030-03-04T05:06:07Z');
  assert.equal(run.repository.full_name, 'octo/locks');
  assert.equal(run.head_commit.id, run.head_sha);

  let job = (await api.get(`${JOBS}/${build}`)).body;
  assert.deepEqual([job.id, job.run_id, job.run_attempt, job.name, job.status, job.conclusion, job.runner_name], [build, 7, 1, 'build', 'in_progress', null, 'runner-a']);
  assert.equal(job.completed_at, null);
  const queued = (await api.get(`${JOBS}/${lint}`)).body;
  assert.deepEqual([queued.status, queued.runner_name, queued.runner_id, queued.steps], ['queued', null, null, []]);

  // GitHub re-runs only a completed run.
  assert.throws(() => emu.actions.rerun(7), /attempt 1 is in_progress: GitHub re-runs only a completed run/);

  // Jobs move on; illegal moves throw.
  clock += 60_000;
  emu.actions.setJob(lint, { status: 'in_progress' });
  job = (await api.get(`${JOBS}/${lint}`)).body;
  assert.equal(job.status, 'in_progress');
  assert.match(job.runner_name, /^GitHub Actions \d+$/, 'a started job is on a runner');
  assert.equal(job.started_at, '2030-03-04T05:07:07Z');
  emu.actions.setJob(build, { status: 'completed', conclusion: 'success' });
  job = (await api.get(`${JOBS}/${build}`)).body;
  assert.deepEqual([job.status, job.conclusion, job.completed_at], ['completed', 'success', '2030-03-04T05:07:07Z']);
  assert.throws(() => emu.actions.setJob(build, { status: 'in_progress' }), /completed already/);
  assert.throws(() => emu.actions.setJob(lint, { status: 'in_progress', conclusion: 'success' }), /only a completed one has a conclusion/);
  assert.throws(() => emu.actions.setJob(lint, { status: 'completed' }), /needs a conclusion/);
  assert.throws(() => emu.actions.setJob(lint, { status: 'completed', conclusion: 'startup_failure' }), /needs a conclusion/, 'a run conclusion, not a job one');
  assert.throws(() => emu.actions.setJob(lint, { state: 'done' }), /unknown state/);
  assert.throws(() => emu.actions.setJob(424242, { status: 'queued' }), /no job 424242/);
  // All jobs done, yet the run goes on until the test says it completed (as on GitHub, a moment later).
  assert.equal((await api.get(`${RUNS}/7`)).body.status, 'in_progress');

  // complete(): the attempt and every unfinished job.
  clock += 60_000;
  emu.actions.complete(7, 1, 'failure');
  run = (await api.get(`${RUNS}/7`)).body;
  assert.deepEqual([run.run_attempt, run.status, run.conclusion, run.updated_at], [1, 'completed', 'failure', '2030-03-04T05:08:07Z']);
  assert.deepEqual(
    [(await api.get(`${JOBS}/${build}`)).body.conclusion, (await api.get(`${JOBS}/${lint}`)).body.conclusion],
    ['success', 'failure'],
    'a finished job keeps its conclusion; an unfinished one takes the run\'s',
  );
  assert.throws(() => emu.actions.complete(7, 1, 'success'), /completed already/);
  assert.throws(() => emu.actions.setJob(lint, { status: 'queued' }), /is completed/);

  // rerun: attempt 2 under the same run id; GET runs/{id} now answers for attempt 2.
  clock += 60_000;
  const again = emu.actions.rerun(7);
  assert.equal(again.length, 2);
  assert.ok(!again.includes(build) && !again.includes(lint), 'a re-run makes new jobs');
  run = (await api.get(`${RUNS}/7`)).body;
  assert.deepEqual([run.run_attempt, run.status, run.conclusion], [2, 'in_progress', null]);
  assert.equal(run.previous_attempt_url, `${emu.url}${RUNS}/7/attempts/1`);
  assert.equal(run.run_started_at, '2030-03-04T05:09:07Z');
  const first = (await api.get(`${RUNS}/7/attempts/1`)).body;
  assert.deepEqual([first.run_attempt, first.status, first.conclusion], [1, 'completed', 'failure']);
  const second = (await api.get(`${RUNS}/7/attempts/2`)).body;
  assert.deepEqual([second.run_attempt, second.status, second.conclusion], [2, 'in_progress', null]);
  assert.equal((await api.get(`${JOBS}/${lint}`)).body.run_attempt, 1, 'a job of attempt 1 still reads as such');
  const redo = (await api.get(`${JOBS}/${again[1]}`)).body;
  assert.deepEqual([redo.name, redo.run_attempt, redo.status], ['lint', 2, 'in_progress']);

  // An attempt can also wait or queue before it runs; it completes only through complete().
  emu.actions.setAttemptStatus(7, 2, 'waiting');
  assert.equal((await api.get(`${RUNS}/7`)).body.status, 'waiting');
  assert.throws(() => emu.actions.setAttemptStatus(7, 2, 'completed'), /finish it with complete/);
  emu.actions.complete(7, 2, 'startup_failure');
  run = (await api.get(`${RUNS}/7`)).body;
  assert.deepEqual([run.status, run.conclusion], ['completed', 'startup_failure']);
  assert.equal((await api.get(`${JOBS}/${again[0]}`)).body.conclusion, 'cancelled', 'jobs cannot end in startup_failure');
  assert.throws(() => emu.actions.complete(7, 2, 'done'), /completed already/);
  assert.throws(() => emu.actions.complete(7, 3, 'success'), /has no attempt 3/);

  // Run ids are unique across repositories, as on GitHub; attempts start as asked.
  const other = await emu.createRepo('acme', 'app');
  await assert.rejects(other.actions.startRun(7, { jobs: [] }), /run id 7 is already taken \(in octo\/locks\)/);
  await assert.rejects(other.actions.startRun(0), /positive integer/);
  await assert.rejects(other.actions.startRun(8, { status: 'completed' }), /status must be one of/);
  await other.actions.startRun(8, { status: 'queued', jobs: [{ name: 'a' }] });
  const q = await api.get('/repos/acme/app/actions/runs/8');
  assert.deepEqual([q.body.status, q.body.conclusion, q.body.repository.full_name], ['queued', null, 'acme/app']);
  assert.equal(emu.repo('acme', 'app').actions, other.actions);
});

test('actions: a status change changes the ETag; a 304 costs nothing', async (t) => {
  const { emu, api } = await start(t);
  const [job] = await emu.actions.startRun(11, { jobs: [{ name: 'build' }] });
  const before = await api.get(`${RUNS}/11`);
  const etag = before.headers.get('etag');
  const cached = await api.get(`${RUNS}/11`, { 'if-none-match': etag });
  assert.equal(cached.status, 304);
  assert.equal(cached.headers.get('x-ratelimit-used'), before.headers.get('x-ratelimit-used'));
  emu.actions.setJob(job, { status: 'completed', conclusion: 'success' });
  emu.actions.complete(11, 1, 'success');
  const after = await api.get(`${RUNS}/11`, { 'if-none-match': etag });
  assert.equal(after.status, 200);
  assert.equal(after.body.status, 'completed');
});

test('actions: the jobs of an attempt are paged like every GitHub list (per_page, page, Link)', async (t) => {
  const { emu, api } = await start(t);
  const names = ['a', 'b', 'c', 'd', 'e'];
  const ids = await emu.actions.startRun(21, { jobs: names.map((name) => ({ name })) });
  const list = (q) => api.get(`${RUNS}/21/attempts/1/jobs${q}`);
  const rels = (r) => Object.fromEntries([...(r.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], new URL(m[1]).search]));

  const all = await list('');
  assert.equal(all.body.total_count, 5);
  assert.deepEqual(all.body.jobs.map((j) => j.id), ids, 'in creation order');
  assert.deepEqual(all.body.jobs.map((j) => j.name), names);
  assert.equal(all.headers.get('link'), null, 'one page: no Link header');

  const p1 = await list('?per_page=2');
  assert.deepEqual([p1.body.total_count, p1.body.jobs.map((j) => j.name)], [5, ['a', 'b']]);
  assert.deepEqual(rels(p1), { next: '?per_page=2&page=2', last: '?per_page=2&page=3' });
  const p2 = await list('?per_page=2&page=2');
  assert.deepEqual(p2.body.jobs.map((j) => j.name), ['c', 'd']);
  assert.deepEqual(rels(p2), { prev: '?per_page=2&page=1', next: '?per_page=2&page=3', last: '?per_page=2&page=3', first: '?per_page=2&page=1' });
  assert.equal(p2.headers.get('link').split(', ').map((l) => /rel="(\w+)"/.exec(l)[1]).join(), 'prev,next,last,first', "GitHub's order");
  const p3 = await list('?per_page=2&page=3');
  assert.deepEqual(p3.body.jobs.map((j) => j.name), ['e']);
  assert.deepEqual(rels(p3), { prev: '?per_page=2&page=2', first: '?per_page=2&page=1' });
  const beyond = await list('?per_page=2&page=9');
  assert.deepEqual([beyond.body.total_count, beyond.body.jobs], [5, []]);

  // The next link is served as it is.
  const next = await fetch(/<([^>]+)>; rel="next"/.exec(p1.headers.get('link'))[1], { headers: { authorization: `token ${TOKEN}` } });
  assert.deepEqual((await next.json()).jobs.map((j) => j.name), ['c', 'd']);

  // per_page defaults to 30 and stops at 100.
  await emu.actions.startRun(22, { jobs: Array.from({ length: 130 }, (_, i) => ({ name: `j${i}` })) });
  const big = (q) => api.get(`${RUNS}/22/attempts/1/jobs${q}`);
  const d = await big('');
  assert.deepEqual([d.body.total_count, d.body.jobs.length], [130, 30]);
  assert.deepEqual(rels(d), { next: '?page=2', last: '?page=5' });
  const max = await big('?per_page=500');
  assert.equal(max.body.jobs.length, 100);
  assert.equal(rels(max).last, '?per_page=500&page=2');
});

test('actions: unknown runs, attempts and jobs are 404 Not Found, also across repositories', async (t) => {
  const { emu, api } = await start(t);
  const [job] = await emu.actions.startRun(31, { jobs: [{ name: 'build' }] });
  const other = await emu.createRepo('acme', 'app');
  await other.actions.startRun(32, { jobs: [{ name: 'x' }] });
  const notFound = async (p, doc) => {
    const r = await api.get(p);
    assertError(r, 404, 'Not Found');
    assert.equal(r.body.documentation_url, `https://docs.github.com/rest/actions/${doc}`);
  };
  await notFound(`${RUNS}/999`, 'workflow-runs#get-a-workflow-run');
  await notFound(`${RUNS}/abc`, 'workflow-runs#get-a-workflow-run');
  await notFound(`${RUNS}/32`, 'workflow-runs#get-a-workflow-run'); // another repository's run
  await notFound(`${RUNS}/31/attempts/2`, 'workflow-runs#get-a-workflow-run-attempt');
  await notFound(`${RUNS}/31/attempts/0`, 'workflow-runs#get-a-workflow-run-attempt');
  await notFound(`${RUNS}/999/attempts/1`, 'workflow-runs#get-a-workflow-run-attempt');
  await notFound(`${RUNS}/31/attempts/2/jobs`, 'workflow-jobs#list-jobs-for-a-workflow-run-attempt');
  await notFound(`${RUNS}/999/attempts/1/jobs`, 'workflow-jobs#list-jobs-for-a-workflow-run-attempt');
  await notFound(`${JOBS}/999`, 'workflow-jobs#get-a-job-for-a-workflow-run');
  await notFound(`/repos/acme/app/actions/jobs/${job}`, 'workflow-jobs#get-a-job-for-a-workflow-run');
  assertError(await api.get('/repos/octo/nope/actions/runs/31'), 404, 'Not Found');
  // Read-only here: writes to these paths are no route.
  assertError(await api.call('POST', `${RUNS}/31/attempts/1`), 404, 'Not Found');
  assert.equal((await api.get(`${RUNS}/31/`)).status, 200, 'a final slash is the same resource');
});

test('actions: faults on these paths (5xx, 403 without actions: read, reset, latency); plain reads for the limits', async (t) => {
  const { emu, api } = await start(t, { limits: { primaryPerHour: 6, contentPerMinute: 1 } });
  const [job] = await emu.actions.startRun(41, { jobs: [{ name: 'build' }] });

  const r502 = emu.faults.add({ method: 'GET', path: /\/actions\/runs\/41\/attempts\/1$/, action: { status: 502 } });
  assertError(await api.get(`${RUNS}/41/attempts/1`), 502, 'Server Error');
  assert.equal(r502.fired, 1);
  assert.deepEqual([emu.log.at(-1).path, emu.log.at(-1).fault], [`${RUNS}/41/attempts/1`, 'status:502']);
  // A token without `actions: read` (GITHUB_TOKEN with a narrower `permissions:`).
  emu.faults.add({
    path: new RegExp(`/actions/jobs/${job}$`),
    action: { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run', status: '403' } },
  });
  assertError(await api.get(`${JOBS}/${job}`), 403, 'Resource not accessible by integration');
  emu.faults.add({ path: /\/attempts\/1\/jobs$/, action: { reset: true } });
  await assert.rejects(api.get(`${RUNS}/41/attempts/1/jobs`));
  assert.equal(emu.log.at(-1).status, null);
  emu.faults.add({ path: `${RUNS}/41`, action: { latencyMs: 150 } });
  const t0 = performance.now();
  assert.equal((await api.get(`${RUNS}/41`)).status, 200);
  assert.ok(performance.now() - t0 >= 140);

  // Plain reads: the primary limit counts them (fault answers do not), the limit on
  // content-generating requests does not.
  assert.equal(emu.log.filter((e) => e.status === 200).length, 1);
  for (const p of [`${RUNS}/41/attempts/1`, `${RUNS}/41/attempts/1/jobs`, `${JOBS}/${job}`, `${RUNS}/41`]) {
    assert.equal((await api.get(p)).status, 200, p);
  }
  const last = await api.get(`${RUNS}/41`);
  assert.equal(last.headers.get('x-ratelimit-remaining'), '0');
  const over = await api.get(`${RUNS}/41`);
  assert.equal(over.status, 403);
  assert.match(over.body.message, /^API rate limit exceeded/);
  assert.equal(emu.secondary.refused, 0);
});

async function waitUntil(predicate, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
