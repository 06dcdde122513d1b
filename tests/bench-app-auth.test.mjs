// The GitHub App front the org-lock benchmark puts before the emulator
// (tests/bench/org-lock/app-auth.mjs): it answers the two GitHub App routes as GitHub does,
// refuses a JWT GitHub would refuse, and forwards everything else with the installation's one
// token in place of the token it minted. Its upstream here is a server that echoes what reached it.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startAppAuth } from './bench/org-lock/app-auth.mjs';

const APP_ID = '123456';
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
let upstream;
let front;

before(async () => {
  upstream = http.createServer((req, res) => {
    const text = JSON.stringify({ method: req.method, path: req.url, authorization: req.headers.authorization ?? null });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  front = await startAppAuth({ upstream: `http://127.0.0.1:${upstream.address().port}`, appId: APP_ID, publicKey, owner: 'org', repo: 'locks' });
});
after(async () => {
  await front.close();
  await new Promise((r) => upstream.close(r));
});

/** An RS256 JWT as a GitHub App signs it; `claims` overrides iss/iat/exp, `key` the signer. */
function jwt(claims = {}, key = privateKey) {
  const now = Math.floor(Date.now() / 1000);
  const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc({ iss: APP_ID, iat: now - 30, exp: now + 540, ...claims })}`;
  return `${head}.${crypto.sign('RSA-SHA256', Buffer.from(head), key).toString('base64url')}`;
}

async function call(method, path, authorization) {
  const res = await fetch(`${front.url}${path}`, { method, headers: authorization ? { authorization } : {} });
  return { status: res.status, body: await res.json() };
}

test('a valid JWT finds the installation and mints a token the front swaps for the installation token upstream', async () => {
  const inst = await call('GET', '/repos/org/locks/installation', `Bearer ${jwt()}`);
  assert.equal(inst.status, 200);
  const minted = await call('POST', `/app/installations/${inst.body.id}/access_tokens`, `Bearer ${jwt()}`);
  assert.equal(minted.status, 201);
  assert.match(minted.body.token, /^ghs_/);
  assert.ok(Date.parse(minted.body.expires_at) > Date.now());
  const forwarded = await call('GET', '/repos/org/locks/contents/a.json?ref=x', `token ${minted.body.token}`);
  assert.equal(forwarded.status, 200);
  assert.deepEqual(forwarded.body, { method: 'GET', path: '/repos/org/locks/contents/a.json?ref=x', authorization: `Bearer ghs_installation_${inst.body.id}` });
});

test('a JWT GitHub would refuse is answered 401', async () => {
  const now = Math.floor(Date.now() / 1000);
  const cases = [
    ['signed with another key', jwt({}, other.privateKey)],
    ['another App', jwt({ iss: '999' })],
    ['issued in the future', jwt({ iat: now + 300, exp: now + 600 })],
    ['expired', jwt({ iat: now - 700, exp: now - 10 })],
    ['valid for more than ten minutes', jwt({ iat: now - 30, exp: now + 700 })],
    ['not a JWT', 'not-a-jwt'],
  ];
  for (const [why, token] of cases) {
    const r = await call('GET', '/repos/org/locks/installation', `Bearer ${token}`);
    assert.equal(r.status, 401, why);
    assert.equal(typeof r.body.message, 'string', why);
  }
  assert.equal((await call('GET', '/repos/org/locks/installation')).status, 401, 'no Authorization header');
});

test('a token the front did not mint, or another installation, is refused', async () => {
  assert.deepEqual(await call('GET', '/repos/org/locks/contents/a.json', 'token ghs_made_up'), { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } });
  assert.equal((await call('POST', '/app/installations/1/access_tokens', `Bearer ${jwt()}`)).status, 404);
  // Every App route the front answered is in its log, refusals included.
  assert.ok(front.log.every((e) => e.status >= 200), JSON.stringify(front.log));
  assert.ok(front.log.some((e) => e.status === 404 && e.path === '/app/installations/1/access_tokens'));
});
