// The driver's transport for the core's Actions reads (actions/lib/github.mjs: getRunAttempt,
// getJob, listJobs) against the emulator: the reply shapes, failures as the core sees them, and
// that each request goes to the command's own repository (where the consumer's run lives), not
// to the repository holding the lock.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { runOperation } from '../actions/lib/driver.mjs';
import { createTransport, graphqlUrlFor } from '../actions/lib/github.mjs';
import { startEmulator } from './emulator/emulator.mjs';

const TOKEN = 'test-token';
const LOCKS = 'octo/locks'; // the transport's repository: the lock's state
const APP = 'octo/app'; // the consumer's repository: its workflow runs

let emu;
let app;
let perform;
const exchanges = [];
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'locks', onExchange: (e) => exchanges.push(e) });
  app = (await emu.createRepo('octo', 'app')).actions;
  perform = createTransport({ baseUrl: emu.url, token: TOKEN, repository: LOCKS });
});
after(() => emu.close());

let nextRun = 9000;
const runAttempt = (runId, attempt, extra = {}) => ({ kind: 'getRunAttempt', repository: APP, runId, attempt, timeoutMs: 5000, ...extra });
const getJob = (jobId, extra = {}) => ({ kind: 'getJob', repository: APP, jobId, timeoutMs: 5000, ...extra });
const listJobs = (runId, attempt, extra = {}) => ({ kind: 'listJobs', repository: APP, runId, attempt, timeoutMs: 5000, ...extra });
/** The exchange the last request made. */
const last = () => exchanges.at(-1);
const isDate = (d) => typeof d === 'string' && !Number.isNaN(Date.parse(d));

describe('transport: the Actions reads', { concurrency: false }, () => {
  test('getRunAttempt: the run as of that attempt, from the command\'s repository', async () => {
    const runId = ++nextRun;
    await app.startRun(runId, { jobs: [{ name: 'build' }] });
    const first = await perform(runAttempt(runId, 1));
    assert.equal(last().path, `/repos/${APP}/actions/runs/${runId}/attempts/1`);
    assert.deepEqual(last().query, [['exclude_pull_requests', 'true']]);
    assert.ok(isDate(first.date), first.date);
    assert.deepEqual(first, { kind: 'run', runId, runAttempt: 1, status: 'in_progress', conclusion: null, date: first.date });

    app.complete(runId, 1, 'cancelled');
    app.rerun(runId);
    const done = await perform(runAttempt(runId, 1));
    assert.deepEqual([done.runAttempt, done.status, done.conclusion], [1, 'completed', 'cancelled']);
    const again = await perform(runAttempt(runId, 2));
    assert.deepEqual([again.runAttempt, again.status, again.conclusion], [2, 'in_progress', null]);
  });

  test('getJob: one job, its attempt and runner', async () => {
    const runId = ++nextRun;
    const [build, lint] = await app.startRun(runId, { jobs: [{ name: 'build', runnerName: 'runner-7' }, { name: 'lint', status: 'queued' }] });
    const r = await perform(getJob(build));
    assert.equal(last().path, `/repos/${APP}/actions/jobs/${build}`);
    assert.deepEqual(last().query, []);
    assert.ok(isDate(r.date));
    assert.deepEqual(r, { kind: 'job', id: build, runId, runAttempt: 1, name: 'build', status: 'in_progress', conclusion: null, runnerName: 'runner-7', completedAt: null, date: r.date });
    const queued = await perform(getJob(lint));
    assert.deepEqual([queued.status, queued.conclusion, queued.runnerName], ['queued', null, null]);
    app.setJob(build, { status: 'completed', conclusion: 'failure' });
    const failed = await perform(getJob(build));
    assert.deepEqual([failed.status, failed.conclusion], ['completed', 'failure']);
  });

  test('listJobs: the first page of 100, with the total', async () => {
    const runId = ++nextRun;
    const ids = await app.startRun(runId, { jobs: [{ name: 'a' }, { name: 'b', status: 'queued' }, { name: 'c', status: 'completed', conclusion: 'skipped' }] });
    const r = await perform(listJobs(runId, 1));
    assert.equal(last().path, `/repos/${APP}/actions/runs/${runId}/attempts/1/jobs`);
    assert.deepEqual(last().query, [['per_page', '100']]);
    assert.ok(isDate(r.date));
    assert.equal(r.kind, 'jobs');
    assert.equal(r.totalCount, 3);
    assert.deepEqual(r.jobs, [
      { id: ids[0], name: 'a', status: 'in_progress', conclusion: null, runnerName: r.jobs[0].runnerName },
      { id: ids[1], name: 'b', status: 'queued', conclusion: null, runnerName: null },
      { id: ids[2], name: 'c', status: 'completed', conclusion: 'skipped', runnerName: null },
    ]);
    assert.match(r.jobs[0].runnerName, /^GitHub Actions \d+$/);
    assert.deepEqual(Object.keys(r).sort(), ['date', 'jobs', 'kind', 'totalCount']);

    const many = ++nextRun;
    await app.startRun(many, { jobs: Array.from({ length: 130 }, (_, i) => ({ name: `j${i}` })) });
    const page = await perform(listJobs(many, 1));
    assert.deepEqual([page.totalCount, page.jobs.length, page.jobs.at(-1).name], [130, 100, 'j99'], 'one request: the first page only');
  });

  test('404: an unknown run, attempt or job; and the run is looked for in the command\'s repository only', async () => {
    const runId = ++nextRun;
    const [job] = await app.startRun(runId, { jobs: [{ name: 'build' }] });
    for (const command of [runAttempt(runId, 2), runAttempt(424242, 1), getJob(424242), listJobs(runId, 3)]) {
      const r = await perform(command);
      assert.equal(r.kind, 'http', JSON.stringify(r));
      assert.equal(r.status, 404);
      assert.equal(r.message, 'Not Found');
      assert.equal(r.retryAfter, null);
      assert.ok(Number.isInteger(r.ratelimitRemaining) && Number.isInteger(r.ratelimitReset));
      assert.ok(isDate(r.date));
    }
    // The same run and job asked of the lock's repository: not there.
    const before = exchanges.length;
    assert.equal((await perform(runAttempt(runId, 1, { repository: LOCKS }))).status, 404);
    assert.equal((await perform(getJob(job, { repository: LOCKS }))).status, 404);
    assert.equal((await perform(listJobs(runId, 1, { repository: LOCKS }))).status, 404);
    assert.deepEqual(
      exchanges.slice(before).map((e) => e.path),
      [`/repos/${LOCKS}/actions/runs/${runId}/attempts/1`, `/repos/${LOCKS}/actions/jobs/${job}`, `/repos/${LOCKS}/actions/runs/${runId}/attempts/1/jobs`],
    );
    // No Actions read so far went to the lock's repository but these three.
    assert.equal(exchanges.filter((e) => e.path.startsWith(`/repos/${LOCKS}/actions/`)).length, 3);
  });

  test('failures: 5xx, 403 without actions: read, a reset, the time limit', async () => {
    const runId = ++nextRun;
    const [job] = await app.startRun(runId, { jobs: [{ name: 'build' }] });

    emu.faults.add({ method: 'GET', path: `/repos/${APP}/actions/runs/${runId}/attempts/1`, action: { status: 502 } });
    const r502 = await perform(runAttempt(runId, 1));
    assert.deepEqual([r502.kind, r502.status, r502.message], ['http', 502, 'Server Error']);
    assert.ok(isDate(r502.date));

    emu.faults.add({ path: `/repos/${APP}/actions/jobs/${job}`, action: { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run', status: '403' } } });
    const r403 = await perform(getJob(job));
    assert.deepEqual([r403.kind, r403.status, r403.message, r403.retryAfter], ['http', 403, 'Resource not accessible by integration', null]);

    emu.faults.add({ path: /\/attempts\/1\/jobs$/, action: { status: 429, headers: { 'retry-after': '30' } } });
    const r429 = await perform(listJobs(runId, 1));
    assert.deepEqual([r429.kind, r429.status, r429.retryAfter], ['http', 429, '30']);

    emu.faults.add({ path: /\/attempts\/1\/jobs$/, action: { reset: true } });
    const reset = await perform(listJobs(runId, 1));
    assert.equal(reset.kind, 'transport');
    assert.equal(reset.sent, true);

    emu.faults.add({ path: `/repos/${APP}/actions/jobs/${job}`, action: { latencyMs: 1000 } });
    const slow = await perform(getJob(job, { timeoutMs: 100 }));
    assert.deepEqual(slow, { kind: 'transport', sent: true, message: 'request timed out and was aborted' });

    // Each rule fired once: the next reads succeed.
    assert.equal((await perform(runAttempt(runId, 1))).kind, 'run');
    assert.equal((await perform(listJobs(runId, 1))).kind, 'jobs');
  });

  test('a command naming no repository or no integer id is the core\'s bug: perform throws, nothing is sent', async () => {
    const before = exchanges.length;
    await assert.rejects(perform(runAttempt(1, 1, { repository: 'octo' })), /getRunAttempt needs repository "owner\/name", not "octo"/);
    await assert.rejects(perform(getJob('7')), /getJob needs a positive integer jobId, not "7"/);
    await assert.rejects(perform(listJobs(1, 0)), /listJobs needs a positive integer attempt, not 0/);
    await assert.rejects(perform({ kind: 'getJob', jobId: 1, timeoutMs: 1000 }), /needs repository/, 'not the transport\'s repository in its place');
    assert.equal(exchanges.length, before);
  });

  test('the driver logs each command with its repository, and each reply', async () => {
    const runId = ++nextRun;
    const [job] = await app.startRun(runId, { jobs: [{ name: 'build', runnerName: 'r1' }] });
    const commands = [runAttempt(runId, 1), getJob(job), listJobs(runId, 1)];
    // A stand-in for a core operation: one command after another, then finish (bounded).
    let i = 0;
    const op = { step: () => ({ command: i < commands.length ? commands[i++] : { kind: 'finish', outcome: { done: true } } }) };
    const lines = [];
    const logger = { debug: (l) => lines.push(l), info: (l) => lines.push(l), warning: (l) => lines.push(l) };
    assert.deepEqual(await runOperation({ op, perform, logger }), { done: true });
    assert.deepEqual(lines, [
      `GET actions/runs/${runId}/attempts/1 in ${APP} → run ${runId} attempt 1: in_progress`,
      `GET actions/jobs/${job} in ${APP} → job ${job} (build): in_progress on r1`,
      `GET actions/runs/${runId}/attempts/1/jobs in ${APP} → 1 of 1 jobs: build in_progress`,
    ]);
  });
});

test('a 200 whose body lacks the expected fields is an answer that never fully arrived; fields GitHub does not promise may be missing or null', async (t) => {
  // GitHub never sends these (the emulator's conformance check would refuse them), so a bare
  // server plays them: each path answers 200 with a body missing what the reply needs.
  const bodies = {
    '/repos/octo/app/actions/runs/1/attempts/1': { id: 1, run_attempt: 1 }, // no status (which may be null, never absent)
    // GitHub's description requires neither run_attempt nor a non-null status of a run.
    '/repos/octo/app/actions/runs/4/attempts/2': { id: 4, status: null, conclusion: null },
    '/repos/octo/app/actions/jobs/2': { id: 2, run_id: 1, run_attempt: 1, name: 'b', status: 'queued', conclusion: null }, // no runner_name
    '/repos/octo/app/actions/runs/1/attempts/1/jobs': { total_count: 1 }, // no jobs
  };
  const server = http.createServer((req, res) => {
    const body = bodies[new URL(req.url, 'http://x').pathname];
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body ? JSON.stringify(body) : 'not json');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const bare = createTransport({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: TOKEN, repository: LOCKS });
  for (const [command, missing] of [
    [runAttempt(1, 1), /status/],
    [getJob(2), /runner_name/],
    [listJobs(1, 1), /jobs/],
    [getJob(3), /id/], // a body that is not JSON at all
  ]) {
    const r = await bare(command);
    assert.equal(r.kind, 'transport', JSON.stringify(r));
    assert.equal(r.sent, true);
    assert.match(r.message, /^the answer could not be read: /);
    assert.match(r.message, missing);
  }
  const bareRun = await bare(runAttempt(4, 2));
  assert.deepEqual(bareRun, { kind: 'run', runId: 4, runAttempt: null, status: null, conclusion: null, date: bareRun.date });
});

test('on GitHub Enterprise Server GraphQL goes to /api/graphql beside /api/v3; a GraphQL 200 brings its rate-limit headers; a Validation Failed brings its errors\' fields and codes', async (t) => {
  // GitHub Enterprise Server serves REST at https://HOST/api/v3 and GraphQL at
  // https://HOST/api/graphql. A bare server records where each request went.
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${new URL(req.url, 'http://x').pathname}`);
    if (req.method === 'POST' && req.url.startsWith('/api/graphql')) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000000', 'retry-after': '30' });
      res.end(JSON.stringify({ data: null, errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded for installation.' }] }));
      return;
    }
    res.writeHead(422, { 'content-type': 'application/json; charset=utf-8' });
    const error = req.method === 'PUT' ? { resource: 'Content', field: 'sha', code: 'missing_field' } : { resource: 'Reference', code: 'already_exists', field: 'ref' };
    res.end(JSON.stringify({ message: 'Validation Failed', errors: [error] }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const ghes = createTransport({ baseUrl: `http://127.0.0.1:${server.address().port}/api/v3`, token: TOKEN, repository: LOCKS });
  const q = await ghes({ kind: 'graphql', document: 'query { viewer { login } }', variables: {}, timeoutMs: 5000 });
  assert.equal(q.kind, 'graphql', JSON.stringify(q));
  assert.deepEqual([q.retryAfter, q.ratelimitRemaining, q.ratelimitReset], ['30', 0, 1800000000]);
  assert.equal(q.errors[0].type, 'RATE_LIMITED');
  const r = await ghes({ kind: 'createBranch', branch: 'leasehold-state', sha: 'a'.repeat(40), timeoutMs: 5000 });
  assert.equal(r.kind, 'http', JSON.stringify(r));
  assert.equal(r.message, 'Validation Failed (ref already_exists)');
  // A write without the sha of a file that exists, in GitHub's documented shape: the field and
  // the code, so the core reads it as the conflict it is.
  const w = await ghes({ kind: 'writeFile', path: 'locks/a.json', branch: 'leasehold-state', content: '{}\n', message: 'm', timeoutMs: 5000 });
  assert.equal(w.kind, 'http', JSON.stringify(w));
  assert.equal(w.message, 'Validation Failed (sha missing_field)');
  assert.deepEqual(seen, ['POST /api/graphql', 'POST /api/v3/repos/octo/locks/git/refs', 'PUT /api/v3/repos/octo/locks/contents/locks/a.json']);
  assert.equal(graphqlUrlFor('https://api.github.com'), 'https://api.github.com/graphql');
  assert.equal(graphqlUrlFor('https://ghe.example.com/api/v3/'), 'https://ghe.example.com/api/graphql');
});

test('a file past 1 MB is read in the raw media type as GitHub names it, its bytes taken as they came even when the answer says json', async (t) => {
  // GitHub's reference names the type application/vnd.github.raw+json; a server may label the
  // raw answer as JSON, which a client must not parse: the file's text is what counts.
  const text = '{ "schema": 1,\n  "lock": "big" }\n';
  const accepts = [];
  const server = http.createServer((req, res) => {
    accepts.push(req.headers.accept);
    if (/raw/.test(req.headers.accept ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', etag: '"e1"' });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', etag: '"e1"' });
    res.end(JSON.stringify({ type: 'file', encoding: 'none', content: '', sha: 'b'.repeat(40), size: 2_000_000, path: 'locks/big.json' }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const bare = createTransport({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: TOKEN, repository: LOCKS });
  const r = await bare({ kind: 'readFile', path: 'locks/big.json', ref: 'leasehold-state', timeoutMs: 5000 });
  assert.deepEqual(r, { kind: 'file', sha: 'b'.repeat(40), content: text, etag: '"e1"', date: r.date });
  assert.equal(accepts[1], 'application/vnd.github.raw+json');
});

test('the raw re-read of a file past 1 MB has what is left of the read\'s time limit, not a second one', async (t) => {
  // The first answer takes half the limit and the raw one most of it: within one limit only if
  // the limit were given twice.
  const server = http.createServer((req, res) => {
    const raw = /raw/.test(req.headers.accept ?? '');
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(raw ? '{}\n' : JSON.stringify({ type: 'file', encoding: 'none', content: '', sha: 'b'.repeat(40), size: 2_000_000, path: 'locks/big.json' }));
    }, raw ? 800 : 500);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const bare = createTransport({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: TOKEN, repository: LOCKS });
  const r = await bare({ kind: 'readFile', path: 'locks/big.json', ref: 'leasehold-state', timeoutMs: 1000 });
  assert.equal(r.kind, 'transport', JSON.stringify(r));
  assert.equal(r.sent, true);
});

test('a comment or an issue whose user is null (GitHub\'s description allows it) is read with no login, not refused', async (t) => {
  const stamp = '2026-12-01T00:00:00Z';
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const body = path.endsWith('/comments')
      ? [{ id: 1, user: null, created_at: stamp, updated_at: stamp, body: 'gone' }, { id: 2, user: { login: 'octo', type: 'User' }, created_at: stamp, updated_at: stamp, body: 'hi' }]
      : [{ number: 3, user: null, title: 't', body: null, state: 'open' }];
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const bare = createTransport({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: TOKEN, repository: LOCKS });
  const c = await bare({ kind: 'listComments', repository: 'octo/app', number: 3, page: 1, timeoutMs: 5000 });
  assert.equal(c.kind, 'comments', JSON.stringify(c));
  assert.deepEqual(c.comments.map((m) => [m.id, m.login, m.userType]), [[1, '', ''], [2, 'octo', 'User']]);
  const i = await bare({ kind: 'listIssues', repository: 'octo/app', page: 1, timeoutMs: 5000 });
  assert.equal(i.kind, 'issues', JSON.stringify(i));
  assert.deepEqual(i.issues.map((x) => [x.number, x.login]), [[3, '']]);
});
