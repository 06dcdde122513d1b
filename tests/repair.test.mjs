// The way back from a hand-broken state: `node dist/cli.mjs repair --lock L` (a dry run) says
// what it would write and writes nothing; with --confirm it rewrites the file as a valid empty
// state whose fence counter is the highest fence its history ever handed out, so fences keep
// increasing across the repair. Run through the built CLI and acquire action against the
// emulator.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
});
after(async () => {
  await emu.close();
});

function cli(args) {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token' };
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, doc: JSON.parse(stdout.trim().split('\n').at(-1)) }));
  });
}

const acquire = (lock, runId) => runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'timeout-minutes': '0' }, context: jobContext({ runId }) });
const release = (lock, runId) => runAction('release', { apiUrl: emu.url, inputs: { lock }, context: jobContext({ runId }) });
const writes = (mark, lock) => emu.log.filter((q) => q.seq > mark && q.method !== 'GET' && q.path.includes(`/contents/locks/${lock}.json`));

test('repair keeps fences increasing across a hand-broken state', async () => {
  const lock = 'mended';
  await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 2 }));
  // Fences 1, 2, 3 handed out; 1 and 2 released, 3 still held when the operator breaks the file.
  const fences = [];
  for (const runId of [6001, 6002, 6003]) {
    const r = await acquire(lock, runId);
    assert.equal(r.code, 0, r.stderr);
    fences.push(Number(r.outputs.fence));
    if (runId !== 6003) assert.equal((await release(lock, runId)).code, 0);
  }
  assert.deepEqual(fences, [1, 2, 3]);
  // By hand: a version that is not JSON, then one with the holder dropped, the counter lowered
  // to 1 and a waiter queued twice: only the history still shows fence 3.
  const path = `locks/${lock}.json`;
  await emu.writeFile('leasehold-state', path, '{ "oops": ');
  const lowered = JSON.parse((await emu.history('leasehold-state', path)).at(-2).content);
  const waiter = { holderId: 'octo/app:6009:build', nonce: '00000000000000cc', run: lowered.holders[0].run, leaseMs: 60000, enqueuedAt: lowered.holders[0].acquiredAt, lastSeenAt: lowered.holders[0].acquiredAt };
  Object.assign(lowered, { fence: 1, holders: [], queue: [waiter, waiter] });
  await emu.writeFile('leasehold-state', path, JSON.stringify(lowered, null, 2));
  const stuck = await acquire(lock, 6004);
  assert.equal(stuck.outputs['error-code'], 'state-invalid', 'every verb stops on the broken file');

  // The dry run: says what it would write, writes nothing.
  let mark = emu.log.at(-1).seq;
  const dry = await cli(['repair', '--lock', lock, '--repository', 'octo/app']);
  assert.equal(dry.doc.status, 'would-repair', dry.stderr);
  assert.equal(dry.code, dry.doc.exitCode);
  assert.equal(dry.code, 0);
  assert.match(dry.doc.schema, /^leasehold-result\/\d+$/);
  const plan = dry.doc.outcome.repair;
  assert.equal(plan.fence, 3, 'the highest fence of the history');
  assert.equal(plan.written, false);
  assert.match(plan.problem, /holder id "octo\/app:6009:build" appears twice/);
  assert.ok(plan.versionsSkipped >= 1, 'the version that is not JSON was skipped');
  assert.equal(plan.versionsRead, (await emu.history('leasehold-state', path)).length);
  assert.deepEqual(writes(mark, lock), [], 'the dry run wrote nothing');

  // Confirmed: rewritten as an empty state keeping the fence counter.
  mark = emu.log.at(-1).seq;
  const done = await cli(['repair', '--lock', lock, '--repository', 'octo/app', '--confirm']);
  assert.equal(done.doc.status, 'repaired', done.stderr);
  assert.equal(done.code, 0);
  assert.equal(writes(mark, lock).length, 1, 'one write');
  const repaired = JSON.parse(await emu.readFile('leasehold-state', path));
  assert.deepEqual([repaired.fence, repaired.holders, repaired.queue, repaired.lastChange.action], [3, [], [], 'repair']);

  // The lock works again, and the next fence is above every one handed out before.
  const next = await acquire(lock, 6005);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(Number(next.outputs.fence), 4);

  // A valid state is left alone.
  mark = emu.log.at(-1).seq;
  const again = await cli(['repair', '--lock', lock, '--repository', 'octo/app', '--confirm']);
  assert.equal(again.doc.status, 'noop');
  assert.deepEqual(writes(mark, lock), []);
});

test('repair --help documents the verb', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), 'repair', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise((r) => child.on('close', r));
  assert.equal(code, 0);
  assert.match(out, /--confirm/);
});
