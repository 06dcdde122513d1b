// The command line as a user meets it (node dist/cli.mjs, as processes): --help for the CLI and
// for every command it lists, claims verbs included; the lock verbs acquire, release, status,
// renew and reap against the emulator, each printing one versioned document whose exitCode is
// the process's and comes from the core's one table; status's terminal view.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext } from './helpers/action-runner.mjs';
import { loadCore } from '../dist/leasehold-core.mjs';

const CLI = join(ROOT, 'dist/cli.mjs');
const TABLE = loadCore().exitTable;

/** Runs the CLI; resolves to { code, stdout, stderr, docs (stdout's JSON lines) }. */
function cli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const docs = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      resolve({ code, stdout, stderr, docs });
    });
  });
}

/** The one document of a run: versioned, for this command, its exitCode the process's, by the table. */
function oneDocument(r, command) {
  assert.equal(r.stdout.trim().split('\n').length, 1, `one line on stdout: ${r.stdout}\n${r.stderr}`);
  const [doc] = r.docs;
  assert.ok(doc, `a JSON document: ${r.stdout}\n${r.stderr}`);
  assert.equal(doc.schema, 'leasehold-result/1');
  assert.equal(doc.command, command);
  assert.equal(doc.exitCode, r.code, `exitCode is the exit code: ${r.stdout}`);
  const row = TABLE.find((t) => t.status === doc.status);
  assert.ok(row, `status ${doc.status} is in the table`);
  assert.equal(row.exitCode, doc.exitCode, `${doc.status} exits ${row.exitCode}`);
  assert.equal(doc.action, row.action);
  return doc;
}

/** The command names --help lists: the CLI's own list. */
function listed(help, heading) {
  const section = help.split(`${heading}:\n`)[1] ?? '';
  return section.split('\n\n')[0].split('\n').map((l) => l.trim().split(/\s+/)).filter((w) => w[0]);
}

test("package.json's bin `leasehold` is dist/cli.mjs, which starts with a node shebang", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.deepEqual(pkg.bin, { leasehold: 'dist/cli.mjs' });
  assert.ok(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n'));
});

describe('--help', () => {
  test('the CLI and every command it lists (and every claims verb) answer --help with 0', async () => {
    const top = await cli(['--help']);
    assert.equal(top.code, 0, top.stderr);
    const commands = listed(top.stdout, 'Commands').map((w) => w[0]);
    for (const verb of ['acquire', 'release', 'status', 'renew', 'guard', 'reap', 'validate', 'claims', 'slots']) assert.ok(commands.includes(verb), `${verb} in ${commands}`);
    const claims = listed(top.stdout, 'Claims verbs').map((w) => w.join(' '));
    assert.ok(claims.length >= 4, claims.join(', '));
    for (const words of [...commands.filter((c) => c !== 'claims').map((c) => [c]), ['claims'], ...claims.map((c) => c.split(' '))]) {
      const r = await cli([...words, '--help']);
      assert.equal(r.code, 0, `${words.join(' ')} --help: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /^usage: leasehold /, `${words.join(' ')} --help prints its usage`);
    }
    for (const flag of ['-h', 'help']) assert.equal((await cli([flag])).code, 0, flag);
  });

  test('an unknown command or flag is a usage document (2)', async () => {
    oneDocument(await cli(['no-such-verb']), 'no-such-verb');
    const r = await cli(['acquire', '--lok', 'x']);
    assert.equal(oneDocument(r, 'acquire').status, 'usage');
    assert.match(r.docs[0].error.message, /--lok/);
  });
});

describe('the lock verbs against the emulator', () => {
  let emu;
  let run = 7000;
  before(async () => {
    emu = await startEmulator({ owner: 'octo', repo: 'app', tokens: ['test-token'] });
  });
  after(() => emu.close());

  const envOf = (context, token = 'test-token') => ({ ...context, GITHUB_API_URL: emu.url, GITHUB_TOKEN: token });
  const fresh = () => jobContext({ runId: ++run });

  test('acquire, status, renew, release, reap: one document each, 0 by the table', async () => {
    const a = fresh();
    const acquired = await cli(['acquire', '--lock', 'cli-a', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(a));
    const doc = oneDocument(acquired, 'acquire');
    assert.equal(doc.status, 'acquired');
    assert.equal(doc.outcome.fence, 1);
    const nonce = doc.outcome.nonce;

    const status = oneDocument(await cli(['status', '--lock', 'cli-a'], envOf(fresh())), 'status');
    assert.equal(status.status, 'ok');
    assert.equal(status.outcome.state.holders[0].holderId, doc.outcome.holderId);

    const renewed = oneDocument(await cli(['renew', '--lock', 'cli-a', '--nonce', nonce], envOf(a)), 'renew');
    assert.equal(renewed.status, 'renewed');

    const reaped = oneDocument(await cli(['reap', '--lock', 'cli-a', '--repository', 'octo/app'], envOf(fresh())), 'reap');
    assert.equal(reaped.status, 'reaped');

    const released = oneDocument(await cli(['release', '--lock', 'cli-a'], envOf(a)), 'release');
    assert.equal(released.status, 'released');
    const again = oneDocument(await cli(['release', '--lock', 'cli-a'], envOf(a)), 'release');
    assert.equal(again.status, 'noop');
  });

  test('distinct outcomes keep distinct codes: timeout 10, lost 13, config 3, stale 16, permission 21, transport 20, usage 2', async () => {
    const holder = fresh();
    oneDocument(await cli(['acquire', '--lock', 'cli-b', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(holder)), 'acquire');
    const timeout = await cli(['acquire', '--lock', 'cli-b', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(fresh()));
    assert.equal(oneDocument(timeout, 'acquire').status, 'timeout');
    assert.equal(timeout.code, 10);

    const lost = await cli(['renew', '--lock', 'cli-b', '--nonce', '0123456789abcdef0123456789abcdef'], envOf(holder));
    assert.equal(oneDocument(lost, 'renew').status, 'lost');
    assert.equal(lost.code, 13);

    await emu.writeFile(emu.defaultBranch, 'locks/cli-c.config.json', '{"capacity": 0}');
    // A lock in use (a state without a recorded config), so acquire reads the config and fails on it.
    await emu.writeFile('leasehold-state', 'locks/cli-c.json', JSON.stringify({ schema: 1, lock: 'cli-c', revision: 1, fence: 0, holders: [], queue: [] }));
    const config = await cli(['acquire', '--lock', 'cli-c', '--timeout-minutes', '1', '--record-job-id', 'false'], envOf(fresh()));
    assert.equal(oneDocument(config, 'acquire').status, 'config');
    assert.equal(config.code, 3);
    assert.match(config.docs[0].error.message, /capacity/);

    await emu.writeFile('leasehold-state', 'locks/cli-d.json', 'not json');
    const stale = await cli(['status', '--lock', 'cli-d', '--json'], envOf(fresh()));
    assert.equal(oneDocument(stale, 'status').status, 'stale');
    assert.equal(stale.code, 16);

    // A token without access to the repository: GitHub's 403 "Resource not accessible by
    // integration" (a 401 is retried first: a fresh token takes seconds to become valid).
    emu.faults.add({ method: 'GET', path: /\/contents\/locks\/cli-b\.json/, action: { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/repos/contents#get-repository-content', status: '403' } } });
    const refused = await cli(['status', '--lock', 'cli-b'], envOf(fresh()));
    assert.equal(oneDocument(refused, 'status').status, 'permission');
    assert.equal(refused.code, 21);

    const unreachable = await cli(['renew', '--lock', 'cli-b', '--nonce', '0123456789abcdef0123456789abcdef', '--api-max-attempts', '1'], { ...envOf(holder), GITHUB_API_URL: 'http://127.0.0.1:9' });
    assert.equal(oneDocument(unreachable, 'renew').status, 'transport');
    assert.equal(unreachable.code, 20);

    const usage = await cli(['release', '--lock', 'no spaces allowed'], envOf(fresh()));
    assert.equal(oneDocument(usage, 'release').status, 'usage');
    assert.equal(usage.code, 2);

    const noToken = await cli(['status', '--lock', 'cli-b'], { ...envOf(fresh()), GITHUB_TOKEN: '' });
    assert.equal(oneDocument(noToken, 'status').error.code, 'no-token');
  });

  test('status at a terminal: holders, queue and a timeline; --json is the document', async () => {
    const holder = fresh();
    oneDocument(await cli(['acquire', '--lock', 'cli-e', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(holder)), 'acquire');
    const view = await cli(['status', '--lock', 'cli-e', '--human'], envOf(fresh()));
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stdout, /^lock cli-e in octo\/app/);
    assert.match(view.stdout, /1 of capacity 1 held · 0 waiting · last fence 1/);
    assert.match(view.stdout, /\nHolders\n {2}fence +holder/);
    assert.ok(view.stdout.includes(`octo/app:${holder.GITHUB_RUN_ID}:build`), view.stdout);
    assert.match(view.stdout, /\nQueue\n {2}empty\n/);
    assert.match(view.stdout, /\nTimeline \(UTC\)\n[\s\S]*held {2}fence 1 octo\/app:\d+:build +\|[ █]+\| now/);
    const json = await cli(['status', '--lock', 'cli-e', '--json'], envOf(fresh()));
    assert.equal(oneDocument(json, 'status').outcome.state.holders.length, 1);
    assert.equal(oneDocument(await cli(['status', '--lock', 'cli-e', '--json', '--human'], envOf(fresh())), 'status').status, 'usage');
  });

  test('a waiting acquire whose terminal closes (SIGHUP) leaves the queue: cancelled, 10', async () => {
    oneDocument(await cli(['acquire', '--lock', 'cli-hup', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(fresh())), 'acquire');
    const child = spawn(process.execPath, [CLI, 'acquire', '--lock', 'cli-hup', '--timeout-minutes', '5', '--poll-seconds', '1', '--record-job-id', 'false'], { env: { PATH: process.env.PATH, ...envOf(fresh()) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const ended = new Promise((resolve) => child.on('close', resolve));
    const queue = async () => JSON.parse(await emu.readFile('leasehold-state', 'locks/cli-hup.json')).queue;
    for (let i = 0; i < 400 && (await queue()).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal((await queue()).length, 1, 'the second acquire waits in the queue');
    child.kill('SIGHUP');
    const code = await ended;
    const doc = JSON.parse(stdout.trim());
    assert.equal(doc.status, 'cancelled', stdout);
    assert.equal(code, 10);
    assert.deepEqual(await queue(), [], 'it left the queue before it exited');
  });
});

describe('the lifecycle verbs and statuses (docs/lifecycle.md) from the command line', () => {
  // The exit codes only a lock under the lifecycle ends with: 19 a degraded cleanup report,
  // 18 an acquire during the lock's incident, 22 a refused recovery; each by its table row.
  let emu;
  let run = 7600;
  const config = `${JSON.stringify({ capacity: 2, lifecycle: { cooldownSeconds: 1 } })}\n`;
  before(async () => {
    emu = await startEmulator({ owner: 'octo', repo: 'app', tokens: ['test-token'], files: { 'locks/life.config.json': config } });
  });
  after(() => emu.close());
  const envOf = (context) => ({ ...context, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token' });
  const fresh = () => jobContext({ runId: ++run });
  const acquire = (c) => cli(['acquire', '--lock', 'life', '--timeout-minutes', '0', '--record-job-id', 'false'], envOf(c));

  test('19 report-degraded, 18 incident, 22 recover-refused, 0 incident-recovered', async () => {
    const a = fresh();
    assert.equal(oneDocument(await acquire(a), 'acquire').status, 'acquired');
    // A contradictory report (confirmed, yet blocked) still releases this holder, as a quarantine.
    const degraded = oneDocument(await cli(['release', '--lock', 'life', '--cleanup', 'confirmed', '--health', 'blocked'], envOf(a)), 'release');
    assert.equal(degraded.status, 'report-degraded');
    assert.equal(degraded.exitCode, 19);

    const b = fresh();
    assert.equal(oneDocument(await acquire(b), 'acquire').status, 'acquired');
    const blocked = oneDocument(await cli(['release', '--lock', 'life', '--cleanup', 'unknown', '--health', 'blocked'], envOf(b)), 'release');
    assert.equal(blocked.exitCode, 0, JSON.stringify(blocked));
    const incident = oneDocument(await acquire(fresh()), 'acquire');
    assert.equal(incident.status, 'incident');
    assert.equal(incident.exitCode, 18);

    const refused = oneDocument(await cli(['recover', '--operation', 'recover', '--lock', 'life', '--reservation-id', 'q999', '--resource-safe'], envOf(fresh())), 'recover');
    assert.equal(refused.status, 'recover-refused');
    assert.equal(refused.exitCode, 22);
    const ended = oneDocument(await cli(['recover', '--operation', 'recover-incident', '--lock', 'life', '--confirmed'], envOf(fresh())), 'recover');
    assert.equal(ended.status, 'incident-recovered');
    assert.equal(ended.exitCode, 0);
  });
});
