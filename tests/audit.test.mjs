// actions/audit (reaper-delivery) as the runner runs it, against the emulator: it opens one
// issue, leaves it alone on an unchanged rerun (no write), updates it when the problem changes,
// closes it when the problem clears, never touches an issue with the same title from someone
// else, and a failed or ambiguous read touches nothing and fails the step. And the CLI verb.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { jobContext, ROOT, runAction } from './helpers/action-runner.mjs';
import { startEmulator } from './emulator/emulator.mjs';

const REPO = 'octo/app';
const TITLE = 'leasehold: the reaper is not being delivered';
const MIN = 60_000;
let emu;
let repo;
let now = Date.parse('2026-06-01T12:00:00Z');

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', now: () => now });
  repo = emu.repo('octo', 'app');
  emu.identities.set('pat-mallory', { login: 'mallory' });
});
after(() => emu.close());

const audit = (inputs = {}) => runAction('audit', { apiUrl: emu.url, token: 'job-token', context: jobContext({ repository: REPO, runId: 900 }), inputs });
const writes = () => emu.log.filter((e) => e.path.startsWith(`/repos/${REPO}/issues`) && e.method !== 'GET').length;
const alerts = () => repo.issues.list().filter((i) => i.body?.includes('<!-- leasehold-alert reaper-delivery v1 -->'));

test('reaper-delivery: opened, unchanged without a write, updated on change, closed when clear; a lookalike is never touched', async () => {
  // Someone else's issue with the same title (and even the marker).
  const mallory = repo.issues.create({ title: TITLE, body: '<!-- leasehold-alert reaper-delivery v1 -->\nlookalike', token: 'pat-mallory' });
  // No scheduled run at all yet: there is no workflow. A 404 is a failed read.
  const missing = await audit();
  assert.notEqual(missing.code, 0, missing.stdout);
  assert.equal(missing.outputs.status, 'permission');
  assert.equal(writes(), 0, 'a failed read touches no issue');

  await emu.actions.startRun(7001, { path: '.github/workflows/reap.yml', event: 'schedule', status: 'in_progress' });
  emu.actions.complete(7001, 1, 'failure');
  const opened = await audit();
  assert.equal(opened.code, 0, opened.stdout);
  assert.equal(opened.outputs.status, 'opened');
  assert.match(opened.outputs.problem, /7001\) ended `failure`/);
  const issue = Number(opened.outputs.issue);
  assert.equal(repo.issues.get(issue).user.login, 'github-actions[bot]');
  const afterOpen = writes();
  // Oldest first: an issue opened while the pages are read lands after them.
  const lists = emu.log.filter((e) => e.method === 'GET' && e.path === `/repos/${REPO}/issues`);
  assert.ok(lists.length > 0 && lists.every((e) => new URLSearchParams(e.query).get('direction') === 'asc'), JSON.stringify(lists.map((e) => e.query)));

  now += 2 * MIN;
  const unchanged = await audit();
  assert.equal(unchanged.outputs.status, 'unchanged', unchanged.stdout);
  assert.equal(writes(), afterOpen, 'an unchanged problem writes nothing');

  now += MIN;
  await emu.actions.startRun(7002, { path: '.github/workflows/reap.yml', event: 'schedule', status: 'in_progress' });
  now += 20 * MIN;
  const updated = await audit();
  assert.equal(updated.outputs.status, 'updated', updated.stdout);
  assert.equal(updated.outputs.issue, String(issue));
  assert.match(repo.issues.get(issue).body, /7002\) has been `in_progress` for more than 15 minutes/);

  emu.actions.complete(7002, 1, 'success');
  const closed = await audit();
  assert.equal(closed.outputs.status, 'closed', closed.stdout);
  assert.equal(repo.issues.get(issue).state, 'closed');
  assert.match(repo.issues.get(issue).body, /7002\) has been/, 'closed without rewriting it');
  const clear = await audit();
  assert.equal(clear.outputs.status, 'noop');

  // Too old: the schedule stopped delivering.
  now += 31 * MIN;
  const stale = await audit();
  assert.equal(stale.outputs.status, 'opened', stale.stdout);
  assert.match(stale.outputs.problem, /older than 30 minutes/);
  assert.notEqual(Number(stale.outputs.issue), issue, 'a new issue: the closed one stays closed');

  const lookalike = repo.issues.get(mallory);
  assert.equal(lookalike.state, 'open');
  assert.match(lookalike.body, /lookalike/);
  assert.equal(lookalike.updated_at, lookalike.created_at, 'never touched');
});

test('a failed or ambiguous read leaves the issue untouched and fails the step', async () => {
  const before = writes();
  // Two open issues of ours with the marker: ambiguous.
  const [ours] = alerts().filter((i) => i.state === 'open' && i.user.login === 'github-actions[bot]');
  repo.issues.create({ title: 'copy', body: ours.body });
  const ambiguous = await audit();
  assert.notEqual(ambiguous.code, 0);
  assert.equal(ambiguous.outputs.status, 'ambiguous', ambiguous.stdout);
  assert.equal(ambiguous.outputs['exit-code'], '16');
  // The issues listing fails.
  emu.faults.add({ method: 'GET', path: `/repos/${REPO}/issues`, times: Infinity, action: { status: 502 } });
  const failed = await audit({ 'api-max-attempts': '2', 'api-retry-base-ms': '100' });
  emu.faults.clear();
  assert.notEqual(failed.code, 0);
  assert.equal(failed.outputs.status, 'transport', failed.stdout);
  assert.equal(writes(), before, 'no issue written');
  // incident is not built: refused as input.
  const incident = await audit({ check: 'incident' });
  assert.equal(incident.outputs.status, 'usage');
  assert.match(incident.stdout, /alerts for a lock's incident are not built/);
});

test('the CLI: audit prints one document and exits by the table', async () => {
  const run = (args) =>
    new Promise((resolve) => {
      const env = { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'pat-mallory', GITHUB_REPOSITORY: REPO };
      execFile(process.execPath, ['dist/cli.mjs', 'audit', ...args], { cwd: ROOT, encoding: 'utf8', env }, (error, stdout, stderr) => resolve({ status: error ? error.code : 0, stdout, stderr }));
    });
  // Under mallory's token the audit finds mallory's own marked issue and keeps that one.
  const r = await run(['--workflow', 'reap.yml']);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.command, 'audit');
  assert.equal(doc.report.identity, 'mallory');
  assert.equal(doc.status, 'updated');
  assert.equal((await run(['--help'])).status, 0);
});
