// The emulator next to GitHub's real answers, as recorded by octokit (npm @octokit/fixtures):
// every recorded exchange of an operation the emulator serves is replayed against the emulator
// and the two answers compared: status, the shape of the body (the same keys, with values of
// the same JSON types, at every level) and the headers that matter (ETag, content type, cache
// control, Location, x-ratelimit-*). Known differences are listed in
// tests/conformance/deviations.mjs (FIXTURE_DIFFERENCES), each with its reason.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { FIXTURE_DIFFERENCES } from './conformance/deviations.mjs';
import { loadSpec } from './conformance/openapi.mjs';
import { startEmulator } from './emulator/emulator.mjs';

const require = createRequire(import.meta.url);
const FIXTURES = path.join(path.dirname(require.resolve('@octokit/fixtures/package.json')), 'scenarios', 'api.github.com');
const TOKEN = 'test-token';

// The operations leasehold's driver performs, and the answers its core relies on.
const LEASEHOLD = {
  'repos/get-content': [200, 304, 404],
  'repos/create-or-update-file-contents': [200, 201, 404, 409, 422],
  'git/create-tree': [201],
  'git/create-commit': [201],
  'git/create-ref': [201, 422],
};

const HEADERS = ['etag', 'content-type', 'cache-control', 'location', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-used', 'x-ratelimit-resource'];

/** Every recorded exchange: { scenario, index, method, path, status, body, response, headers, operation }. */
function recordings() {
  const api = loadSpec();
  const out = [];
  for (const scenario of readdirSync(FIXTURES).sort()) {
    const list = JSON.parse(readFileSync(path.join(FIXTURES, scenario, 'normalized-fixture.json'), 'utf8'));
    list.forEach((x, index) => {
      const method = x.method.toUpperCase();
      const rawPath = x.path.split('?')[0];
      const found = api.match(method, rawPath);
      const legacy = method === 'GET' && /^\/repos\/[^/]+\/[^/]+\/git\/refs\/?$/.test(rawPath) ? 'legacy GET /repos/{owner}/{repo}/git/refs' : null;
      out.push({ scenario, index, method, path: x.path, status: x.status, body: x.body, response: x.response, headers: x.headers, reqheaders: x.reqheaders, operation: found?.op.id ?? legacy });
    });
  }
  return out;
}

let emu;
let head;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'README.md': '# hello-world' } });
  head = await emu.head('main');
});
after(() => emu.close());

async function call(method, p, { body, accept = 'application/vnd.github.v3+json' } = {}) {
  const r = await fetch(emu.url + p, {
    method,
    headers: { authorization: `token ${TOKEN}`, accept, ...(body ? { 'content-type': 'application/json; charset=utf-8' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json = text;
  try {
    json = text ? JSON.parse(text) : '';
  } catch {}
  return { status: r.status, headers: Object.fromEntries(r.headers), response: json };
}

/**
 * How to replay a recorded exchange on the emulator (scenario#index -> request). The
 * emulator's repository octo/app stands for the scenario's repository.
 */
const REPLAY = {
  'get-repository#0': () => call('GET', '/repos/octo/app'),
  'get-content#0': () => call('GET', '/repos/octo/app/contents/'),
  'get-content#1': (x) => call('GET', '/repos/octo/app/contents/README.md', { accept: x.reqheaders.accept }),
  'create-file#0': (x) => call('PUT', '/repos/octo/app/contents/test.txt', { body: x.body }),
  'git-refs#0': () => call('GET', '/repos/octo/app/git/refs/'),
  'git-refs#1': () => call('POST', '/repos/octo/app/git/refs', { body: { ref: 'refs/heads/test', sha: head } }),
  'git-refs#2': () => call('PATCH', '/repos/octo/app/git/refs/heads/test', { body: { sha: head } }),
  'git-refs#3': () => call('GET', '/repos/octo/app/git/refs/'),
  'git-refs#4': () => call('DELETE', '/repos/octo/app/git/refs/heads/test'),
  // Errors, on routes the emulator serves: a 404 and a 422 "Validation Failed" with errors[].
  'branch-protection#0': () => call('GET', '/repos/octo/app/contents/nowhere.txt'),
  'errors#0': () => call('POST', '/repos/octo/app/git/commits', { body: { message: 'm', tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', author: { name: '', email: 'a@b.c' } } }),
};

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Shape differences: keys missing or extra, JSON types that differ, at every level. */
function shapeDiff(recorded, emulated, at = '') {
  const out = [];
  const [a, b] = [typeOf(recorded), typeOf(emulated)];
  if (a !== b) return [{ at: at || '/', kind: 'type', detail: `recorded ${a}, emulator ${b}` }];
  if (a === 'array') {
    if (recorded.length && emulated.length) out.push(...shapeDiff(recorded[0], emulated[0], `${at}/0`));
    return out;
  }
  if (a !== 'object') return out;
  for (const k of Object.keys(recorded)) {
    if (!(k in emulated)) out.push({ at: `${at}/${k}`, kind: 'missing', detail: 'recorded, not sent by the emulator' });
    else out.push(...shapeDiff(recorded[k], emulated[k], `${at}/${k}`));
  }
  for (const k of Object.keys(emulated)) if (!(k in recorded)) out.push({ at: `${at}/${k}`, kind: 'extra', detail: 'sent by the emulator, not recorded' });
  return out;
}

function headerDiff(recorded, emulated) {
  const out = [];
  for (const name of HEADERS) {
    const [a, b] = [recorded[name], emulated[name]];
    if (a === undefined && b === undefined) continue;
    if (a === undefined) out.push({ at: `header ${name}`, kind: 'extra', detail: `emulator sends ${JSON.stringify(b)}` });
    else if (b === undefined) out.push({ at: `header ${name}`, kind: 'missing', detail: `recorded ${JSON.stringify(a)}` });
    else if (name === 'content-type' || name === 'cache-control') {
      if (String(a).split(';')[0] !== String(b).split(';')[0] || (name === 'cache-control' && a !== b)) out.push({ at: `header ${name}`, kind: 'value', detail: `recorded ${a}, emulator ${b}` });
    } else if (name === 'etag') {
      if (!/^(W\/)?"[^"]+"$/.test(b)) out.push({ at: 'header etag', kind: 'value', detail: `emulator ${b} is not an entity tag` });
    } else if (name.startsWith('x-ratelimit-') && name !== 'x-ratelimit-resource') {
      if (!/^\d+$/.test(b)) out.push({ at: `header ${name}`, kind: 'value', detail: `emulator ${b} is not an integer` });
    } else if (name === 'x-ratelimit-resource' && a !== b) out.push({ at: `header ${name}`, kind: 'value', detail: `recorded ${a}, emulator ${b}` });
  }
  return out;
}

const allowed = (scenario, d) => FIXTURE_DIFFERENCES.find((f) => f.scenarios.includes(scenario) && f.at.test(d.at) && f.kinds.includes(d.kind));

test('every recorded answer of an operation the emulator serves is replayed and matches in shape and headers', async (t) => {
  const all = recordings();
  const served = new Set(['repos/get', 'repos/get-content', 'repos/create-or-update-file-contents', 'repos/delete-file', 'git/create-tree', 'git/create-commit', 'git/get-commit', 'git/create-ref', 'git/get-ref', 'git/list-matching-refs', 'git/update-ref', 'git/delete-ref', 'rate-limit/get', 'legacy GET /repos/{owner}/{repo}/git/refs']);
  const candidates = all.filter((x) => (x.operation && served.has(x.operation)) || REPLAY[`${x.scenario}#${x.index}`]);
  const problems = [];
  const used = new Set();
  let compared = 0;
  for (const x of candidates) {
    const key = `${x.scenario}#${x.index}`;
    const replay = REPLAY[key];
    if (!replay) {
      // A recorded redirect of a renamed repository: the emulator has no renames.
      if (x.status === 301 || x.status === 307) continue;
      problems.push(`${key} ${x.method} ${x.path} ${x.status}: recorded for ${x.operation}, which the emulator serves, but not replayed here`);
      continue;
    }
    const got = await replay(x);
    compared++;
    const diffs = [];
    if (got.status !== x.status) diffs.push({ at: 'status', kind: 'value', detail: `recorded ${x.status}, emulator ${got.status}` });
    if (x.status !== 204) diffs.push(...shapeDiff(x.response, got.response));
    diffs.push(...headerDiff(x.headers, got.headers));
    for (const d of diffs) {
      const ok = allowed(x.scenario, d);
      if (ok) used.add(ok.id);
      else problems.push(`${key} ${x.method} ${x.path} -> ${x.status} [${x.operation ?? 'error shape'}] ${d.at}: ${d.kind}: ${d.detail}`);
    }
  }
  t.diagnostic(`fixtures compared: ${compared} recorded exchanges (@octokit/fixtures ${require('@octokit/fixtures/package.json').version}) over ${new Set(candidates.map((x) => x.operation).filter(Boolean)).size} operations; known differences used: ${[...used].sort().join(', ')}`);
  assert.deepEqual(problems, [], `the emulator differs from GitHub's recorded answers:\n${problems.join('\n')}`);
  const unused = FIXTURE_DIFFERENCES.filter((f) => !used.has(f.id)).map((f) => f.id);
  assert.deepEqual(unused, [], 'a listed fixture difference no longer occurs: remove it from deviations.mjs');
});

test("leasehold's operations and the answers it relies on: which have a recording", (t) => {
  const all = recordings();
  const recorded = new Map();
  for (const x of all) if (x.operation) recorded.set(x.operation, new Set([...(recorded.get(x.operation) ?? []), x.status]));
  const lines = [];
  const without = [];
  for (const [op, statuses] of Object.entries(LEASEHOLD)) {
    const have = recorded.get(op) ?? new Set();
    const missing = statuses.filter((s) => !have.has(s));
    if (!have.size) without.push(op);
    lines.push(`${op}: recorded ${have.size ? [...have].join(', ') : 'nothing'}; not recorded: ${missing.join(', ') || 'none'}`);
  }
  // The contents read is recorded only as a directory listing and in the raw media type: the
  // JSON file object leasehold reads (content + encoding) has no recording.
  const jsonFile = all.some((x) => x.operation === 'repos/get-content' && x.response && typeof x.response === 'object' && !Array.isArray(x.response) && 'content' in x.response);
  lines.push(`repos/get-content as a JSON file object: ${jsonFile ? 'recorded' : 'not recorded'}`);
  t.diagnostic(`leasehold operations without any recording: ${without.join(', ') || 'none'}`);
  for (const l of lines) t.diagnostic(l);
  assert.deepEqual(without, ['git/create-tree', 'git/create-commit'], 'update this list (and the report) when the recordings change');
  assert.equal(jsonFile, false);
});
