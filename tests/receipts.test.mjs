// actions/receipt as the runner runs it, against the emulator: a receipt posted by run A lets
// run B (named in it) skip; edited, posted by another identity, naming another run: no skip;
// every fail-open path is skip=false with a warning naming why. And the CLI verbs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { jobContext, ROOT, runAction } from './helpers/action-runner.mjs';
import { startEmulator } from './emulator/emulator.mjs';

const REPO = 'octo/app';
let emu;
let repo;
let now = Date.parse('2026-06-01T12:00:00Z');

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', now: () => now });
  repo = emu.repo('octo', 'app');
  emu.identities.set('pat-octocat', { login: 'octocat' });
  emu.identities.set('review-app', { login: 'review-bot[bot]', type: 'Bot', app: 'review-bot' });
});
after(() => emu.close());

const receipt = (number, runId, inputs = {}, token = 'job-token') =>
  runAction('receipt', {
    apiUrl: emu.url,
    token,
    context: jobContext({ repository: REPO, runId }),
    // The job's own token is 'job-token' (the runner fills both defaults with github.token;
    // a step given another token still gets the job's in job-token).
    inputs: { number: String(number), 'job-token': 'job-token', ...inputs },
  });

/** A receipt block as post writes it, for comments written another way. */
const block = (run, runs) => `receipt\n\n<!-- leasehold-receipt ${JSON.stringify({ v: 1, run: String(run), runs: runs.map(String) })} -->\n`;

function checked(r, skip, reason) {
  assert.equal(r.code, 0, `the step succeeds either way:\n${r.stdout}\n${r.stderr}`);
  assert.equal(r.outputs.skip, String(skip), r.stdout);
  assert.equal(r.outputs.reason, reason, r.stdout);
  const doc = JSON.parse(r.outputs.result);
  assert.equal(doc.schema !== undefined, true);
  assert.equal(doc.exitCode, skip ? 10 : 0);
  if (!skip) assert.match(r.stdout, new RegExp(`::warning::.*${reason}`), 'the reason is a warning');
  return doc;
}

test('run A posts a receipt naming run B; B skips; A posting again writes nothing', async () => {
  const n = repo.pulls.open({ headSha: 'a'.repeat(40) });
  const posted = await receipt(n, 100, { operation: 'post', runs: '101' });
  assert.equal(posted.code, 0, posted.stdout);
  assert.equal(posted.outputs.status, 'posted', posted.stdout);
  const comments = repo.issues.comments(n);
  assert.equal(comments.length, 1);
  assert.equal(comments[0].user.login, 'github-actions[bot]');
  assert.match(comments[0].body, /<!-- leasehold-receipt \{"v":1,"run":"100","runs":\["101"\]\} -->/);

  const b = await receipt(n, 101, { operation: 'check' });
  const doc = checked(b, true, 'receipt');
  assert.equal(doc.report.identity, 'github-actions[bot]');
  assert.equal(b.outputs['comment-id'], String(comments[0].id));
  // The cost: one identity resolution and one page of comments.
  assert.equal(doc.stats.requests, 2);

  const again = await receipt(n, 100, { operation: 'post', runs: '101' });
  assert.equal(again.outputs.status, 'already-posted', again.stdout);
  assert.equal(repo.issues.comments(n).length, 1, 'once per run');
});

test('naming another run, edited afterwards, or written by another identity: no skip', async () => {
  const n = repo.pulls.open({ headSha: 'b'.repeat(40) });
  await receipt(n, 200, { operation: 'post', runs: '201' });
  checked(await receipt(n, 202, { operation: 'check' }), false, 'no-receipt');

  now += 5000;
  const [c] = repo.issues.comments(n);
  repo.issues.edit(c.id, c.body);
  const edited = checked(await receipt(n, 201, { operation: 'check' }), false, 'edited');
  assert.match(edited.report.warnings.join('\n'), /edited: comment \d+ names this run but was edited/);

  const m = repo.pulls.open({ headSha: 'c'.repeat(40) });
  repo.issues.commentAs(m, block(300, [301]), { login: 'mallory' });
  const other = checked(await receipt(m, 301, { operation: 'check' }), false, 'other-author');
  assert.match(other.report.warnings.join('\n'), /written by mallory, not github-actions\[bot\]/);
  // The job token's receipt does not count for a check under a user's token either.
  await receipt(m, 300, { operation: 'post', runs: '301' });
  checked(await receipt(m, 301, { operation: 'check' }, 'pat-octocat'), false, 'other-author');
  // Under that user's token, its own receipt counts.
  const p = repo.pulls.open({ headSha: 'd'.repeat(40) });
  await receipt(p, 310, { operation: 'post', heads: 'd'.repeat(40) }, 'pat-octocat');
  checked(await receipt(p, 311, { operation: 'check', 'head-sha': 'd'.repeat(40) }, 'pat-octocat'), true, 'receipt');
});

test('every doubt fails open: skip=false with a warning naming why', async () => {
  const n = repo.pulls.open({ headSha: 'e'.repeat(40) });
  await receipt(n, 400, { operation: 'post', runs: '401' });
  // An installation token that is not the job's own: its identity cannot be resolved.
  checked(await receipt(n, 401, { operation: 'check' }, 'review-app'), false, 'identity-unresolved');
  // A token acting as an App identity the workflow posts its own output under.
  checked(await receipt(n, 401, { operation: 'check', 'app-logins': 'octocat, other[bot]' }, 'pat-octocat'), false, 'identity-is-app');
  // A malformed block by the same identity.
  const m = repo.pulls.open({ headSha: 'f'.repeat(40) });
  repo.issues.comment(m, '<!-- leasehold-receipt {"v":2,"run":"500","runs":["501"]} -->');
  const malformed = checked(await receipt(m, 501, { operation: 'check' }), false, 'malformed');
  assert.match(malformed.report.warnings.join('\n'), /version 2/);
  // Unreadable comments (a server error past the retry budget; a missing item).
  emu.faults.add({ method: 'GET', path: `/repos/${REPO}/issues/${n}/comments`, times: Infinity, action: { status: 502 } });
  checked(await receipt(n, 401, { operation: 'check', 'api-max-attempts': '2', 'api-retry-base-ms': '100' }), false, 'comments-unreadable');
  emu.faults.clear();
  checked(await receipt(99999, 401, { operation: 'check' }), false, 'comments-unreadable');
  // A rate limit.
  emu.faults.add({ method: 'GET', path: `/repos/${REPO}/issues/${n}/comments`, times: Infinity, action: { status: 429, headers: { 'retry-after': '3600' } } });
  checked(await receipt(n, 401, { operation: 'check', 'api-max-attempts': '1' }), false, 'rate-limited');
  emu.faults.clear();
  // The identity's own read rate-limited.
  emu.faults.add({ method: 'GET', path: '/user', times: Infinity, action: { status: 429, headers: { 'retry-after': '3600' } } });
  checked(await receipt(n, 401, { operation: 'check', 'api-max-attempts': '1' }), false, 'rate-limited');
  emu.faults.clear();
  // More comments than the check reads (10 pages of 100).
  const big = repo.issues.create({ title: 'busy' });
  for (let i = 0; i < 1001; i++) repo.issues.comment(big, `comment ${i}`);
  const many = checked(await receipt(big, 401, { operation: 'check' }), false, 'too-many-comments');
  assert.equal(many.stats.requests, 11, 'one identity read and ten pages, no more');
  // And the healthy case still skips.
  checked(await receipt(n, 401, { operation: 'check' }), true, 'receipt');
});

test('post writes only for an outright success that absorbed something', async () => {
  const n = repo.issues.create({ title: 'item' });
  const failed = await receipt(n, 600, { operation: 'post', runs: '601', 'job-status': 'failure' });
  assert.equal(failed.code, 0);
  assert.equal(failed.outputs.status, 'not-posted');
  assert.equal(failed.outputs.reason, 'not-a-success');
  const nothing = await receipt(n, 600, { operation: 'post' });
  assert.equal(nothing.outputs.reason, 'nothing-absorbed');
  assert.equal(repo.issues.comments(n).length, 0);
  const bad = await receipt(n, 600, { operation: 'post', runs: '601,x' });
  assert.notEqual(bad.code, 0, 'bad input fails the step');
  assert.match(bad.stdout, /input `runs` must list run ids/);
});

test('the CLI: receipt check|post print one document and exit by the table', async () => {
  const n = repo.issues.create({ title: 'cli' });
  // Spawned asynchronously: the emulator answers from this process.
  const cli = (args, runId) =>
    new Promise((resolve) => {
      const env = { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'job-token', GITHUB_REPOSITORY: REPO, GITHUB_RUN_ID: String(runId) };
      execFile(process.execPath, ['dist/cli.mjs', ...args], { cwd: ROOT, encoding: 'utf8', env }, (error, stdout, stderr) => resolve({ status: error ? error.code : 0, stdout, stderr }));
    });
  // No job status said is no success shown: nothing is posted.
  const unsaid = await cli(['receipt', 'post', '--number', String(n), '--runs', '701', '--job-token'], 700);
  assert.equal(unsaid.status, 0, unsaid.stderr);
  assert.deepEqual([JSON.parse(unsaid.stdout).status, JSON.parse(unsaid.stdout).report.reason], ['not-posted', 'not-a-success']);
  const post = await cli(['receipt', 'post', '--number', String(n), '--runs', '701', '--job-token', '--job-status', 'success'], 700);
  assert.equal(post.status, 0, post.stderr);
  assert.equal(JSON.parse(post.stdout).status, 'posted');
  const skip = await cli(['receipt', 'check', '--number', String(n), '--job-token'], 701);
  assert.equal(skip.status, 10, skip.stderr);
  const doc = JSON.parse(skip.stdout);
  assert.equal(doc.status, 'receipted');
  assert.equal(doc.report.skip, true);
  // Without --job-token the job token's identity is unresolved: do the work.
  const unresolved = await cli(['receipt', 'check', '--number', String(n)], 701);
  assert.equal(unresolved.status, 0);
  assert.equal(JSON.parse(unresolved.stdout).report.reason, 'identity-unresolved');
  assert.equal((await cli(['receipt', 'nope'], 701)).status, 2);
  const help = await cli(['receipt', '--help'], 701);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /leasehold receipt check/);
});
