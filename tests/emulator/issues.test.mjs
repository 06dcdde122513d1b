// The issues, comments, pull requests, workflow-runs listing and identity routes, each answer
// checked against GitHub's OpenAPI description (the conformance check runs at close()).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEmulator } from './emulator.mjs';

async function api(emu, method, path, { token = 'job', body } = {}) {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, link: res.headers.get('link'), body: text ? JSON.parse(text) : null };
}

test('issues and comments: authors, pagination, edits move updated_at, state', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const emu = await startEmulator({ now: () => now });
  try {
    emu.identities.set('pat', { login: 'octocat' });
    emu.identities.set('app', { login: 'review-bot[bot]', type: 'Bot', app: 'review-bot' });
    const issues = emu.repo('octo', 'locks').issues;
    const n = issues.create({ title: 'Item' });
    const created = await api(emu, 'POST', `/repos/octo/locks/issues/${n}/comments`, { body: { body: 'hello' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.user.login, 'github-actions[bot]');
    assert.equal(created.body.user.type, 'Bot');
    assert.equal(created.body.performed_via_github_app.slug, 'github-actions');
    assert.equal(created.body.created_at, created.body.updated_at);
    for (let i = 0; i < 4; i++) await api(emu, 'POST', `/repos/octo/locks/issues/${n}/comments`, { token: i % 2 ? 'pat' : 'app', body: { body: `c${i}` } });
    const p1 = await api(emu, 'GET', `/repos/octo/locks/issues/${n}/comments?per_page=2`);
    assert.equal(p1.body.length, 2);
    assert.match(p1.link, /rel="next"/);
    const p3 = await api(emu, 'GET', `/repos/octo/locks/issues/${n}/comments?per_page=2&page=3`);
    assert.deepEqual(p3.body.map((c) => c.body), ['c3']);
    assert.equal(p3.body[0].user.login, 'octocat');
    assert.equal(p3.body[0].performed_via_github_app, null);
    now += 5000;
    const edited = await api(emu, 'PATCH', `/repos/octo/locks/issues/comments/${created.body.id}`, { body: { body: 'changed' } });
    assert.equal(edited.status, 200);
    assert.notEqual(edited.body.updated_at, edited.body.created_at);
    const other = issues.commentAs(n, 'forged', { login: 'mallory' });
    assert.equal(issues.comments(n).find((c) => c.id === other).user.login, 'mallory');
    const made = await api(emu, 'POST', '/repos/octo/locks/issues', { body: { title: 'Alert', body: 'b' } });
    assert.equal(made.status, 201);
    const closed = await api(emu, 'PATCH', `/repos/octo/locks/issues/${made.body.number}`, { body: { state: 'closed' } });
    assert.equal(closed.body.state, 'closed');
    const open = await api(emu, 'GET', '/repos/octo/locks/issues?state=open&per_page=100');
    assert.deepEqual(open.body.map((i) => i.number), [n]);
    const reopened = await api(emu, 'PATCH', `/repos/octo/locks/issues/${made.body.number}`, { body: { state: 'open', body: 'b2' } });
    assert.equal(reopened.body.state, 'open');
    assert.equal((await api(emu, 'GET', `/repos/octo/locks/issues/${made.body.number}`)).body.body, 'b2');
  } finally {
    await emu.close();
  }
});

test('identity: GET /user for a user token, 403 for an installation token; GET /users/{login}', async () => {
  const emu = await startEmulator();
  try {
    emu.identities.set('pat', { login: 'octocat' });
    const me = await api(emu, 'GET', '/user', { token: 'pat' });
    assert.equal(me.status, 200);
    assert.equal(me.body.login, 'octocat');
    const job = await api(emu, 'GET', '/user');
    assert.equal(job.status, 403);
    assert.equal(job.body.message, 'Resource not accessible by integration');
    const bot = await api(emu, 'GET', '/users/github-actions%5Bbot%5D');
    assert.equal(bot.status, 200);
    assert.equal(bot.body.type, 'Bot');
    assert.equal((await api(emu, 'GET', '/users/nobody')).status, 404);
  } finally {
    await emu.close();
  }
});

test('pull requests: head moves on a push, closed and merged; workflow runs listed newest first', async () => {
  const emu = await startEmulator();
  try {
    const repo = emu.repo('octo', 'locks');
    const a = 'a'.repeat(40);
    const n = repo.pulls.open({ headSha: a });
    let pr = await api(emu, 'GET', `/repos/octo/locks/pulls/${n}`);
    assert.equal(pr.status, 200);
    assert.equal(pr.body.head.sha, a);
    assert.equal(pr.body.state, 'open');
    repo.pulls.push(n, 'b'.repeat(40));
    pr = await api(emu, 'GET', `/repos/octo/locks/pulls/${n}`);
    assert.equal(pr.body.head.sha, 'b'.repeat(40));
    repo.pulls.close(n, { merged: true });
    pr = await api(emu, 'GET', `/repos/octo/locks/pulls/${n}`);
    assert.equal(pr.body.state, 'closed');
    assert.equal(pr.body.merged, true);
    assert.equal((await api(emu, 'GET', '/repos/octo/locks/pulls/999')).status, 404);
    await emu.actions.startRun(501, { path: '.github/workflows/reap.yml', event: 'schedule', status: 'in_progress' });
    await emu.actions.startRun(502, { path: '.github/workflows/reap.yml', event: 'schedule', status: 'queued' });
    await emu.actions.startRun(503, { path: '.github/workflows/ci.yml' });
    emu.actions.complete(501, 1, 'success');
    const runs = await api(emu, 'GET', '/repos/octo/locks/actions/workflows/reap.yml/runs?event=schedule&per_page=1');
    assert.equal(runs.status, 200);
    assert.equal(runs.body.total_count, 2);
    assert.deepEqual(runs.body.workflow_runs.map((r) => r.id), [502]);
    assert.ok(runs.body.workflow_runs[0].run_started_at);
    assert.equal((await api(emu, 'GET', '/repos/octo/locks/actions/workflows/nope.yml/runs')).status, 404);
  } finally {
    await emu.close();
  }
});
