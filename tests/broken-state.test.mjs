// A state file an operator broke by hand: each kind has an answer that names the file and what
// is wrong with it, changes nothing (no write reaches GitHub: the emulator's log shows none),
// and points at the way back (`leasehold repair`, docs/operations.md). Run through the built
// acquire action as the runner runs it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
let seq = 0;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  // A first acquire creates the state branch the broken files are written to.
  const first = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'first', 'timeout-minutes': '0' }, context: jobContext({ runId: 4999 }) });
  assert.equal(first.code, 0, first.stderr);
});
after(async () => {
  await emu.close();
});

const holder = (id, fence) => ({
  holderId: id,
  nonce: '00000000000000aa',
  fence,
  run: { repository: 'octo/app', runId: 1, runAttempt: 1, job: 'build' },
  acquiredAt: '2026-11-30T00:00:00.000Z',
  expiresAt: '2099-11-30T00:00:00.000Z',
  leaseMs: 60000,
  ceilingAt: '2099-11-30T00:00:00.000Z',
});
const entry = (id) => ({
  holderId: id,
  nonce: '00000000000000bb',
  run: { repository: 'octo/app', runId: 2, runAttempt: 1, job: 'build' },
  leaseMs: 60000,
  enqueuedAt: '2026-11-30T00:00:00.000Z',
  lastSeenAt: '2026-11-30T00:00:00.000Z',
});
const state = (lock, over) => JSON.stringify({ schema: 1, lock, revision: 4, fence: 4, holders: [], queue: [], ...over }, null, 2);

/** name → (lock) → the broken text, and what the error must say about it. */
const CASES = {
  'invalid JSON': { text: () => '{ "schema": 1, "lock": ', says: /not valid JSON/, code: 'state-not-json' },
  'a duplicated holder': {
    text: (lock) => state(lock, { holders: [holder('octo/app:1:build', 3), holder('octo/app:1:build', 4)] }),
    says: /holder id "octo\/app:1:build" appears twice/,
    code: 'state-invalid',
  },
  "a fence counter below a holder's fence": {
    text: (lock) => state(lock, { fence: 2, holders: [holder('octo/app:1:build', 3)] }),
    says: /a holder's fence is above the lock's fence counter 2/,
    code: 'state-invalid',
  },
  'a holder also in the queue': {
    text: (lock) => state(lock, { holders: [holder('octo/app:1:build', 3)], queue: [entry('octo/app:1:build')] }),
    says: /appears twice/,
    code: 'state-invalid',
  },
  'a file of several megabytes': {
    text: (lock) => state(lock, { holders: [], queue: [], padding: 'x'.repeat(3 * 1024 * 1024) }),
    says: /the file is \d+ bytes, more than the 1000000 a state may have/,
    code: 'state-invalid',
  },
  'a newer schema': { text: (lock) => JSON.stringify({ schema: 3, lock }), says: /schema 3, newer than this version/, code: 'state-newer-schema' },
  'wrong types': { text: (lock) => state(lock, { revision: 'four' }), says: /invalid type: string "four", expected u64/, code: 'state-invalid' },
};

describe('a hand-broken state file', { concurrency: 2 }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: the error names the file and what is wrong, and nothing is written`, async () => {
      const lock = `broken-${++seq}`;
      const path = `locks/${lock}.json`;
      await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1 }));
      await emu.writeFile('leasehold-state', path, c.text(lock));
      const before = (await emu.history('leasehold-state', path)).length;
      const mark = emu.log.at(-1)?.seq ?? 0;
      const r = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'timeout-minutes': '1' }, context: jobContext({ runId: 5000 + seq }) });
      assert.notEqual(r.code, 0, `${name}: the step fails`);
      assert.equal(r.outputs['error-code'], c.code, r.stderr);
      const said = r.stdout + r.stderr;
      assert.match(said, new RegExp(`${path} on branch leasehold-state`), said);
      assert.match(said, c.says, said);
      assert.match(said, new RegExp(`leasehold repair --lock ${lock}`));
      const mine = emu.log.filter((q) => q.seq > mark && q.path.includes(`/contents/locks/${lock}.json`));
      assert.ok(mine.length > 0, 'the state was read');
      assert.deepEqual(mine.filter((q) => q.method !== 'GET').map((q) => q.method), [], 'nothing was written');
      assert.equal((await emu.history('leasehold-state', path)).length, before, 'the file is as the operator left it');
    });
  }
});

// A directory where a file belongs: the transport says what GitHub listed there, and the core
// names it. Neither is something `leasehold repair` can write over, and nothing is written.
describe('a directory where a file belongs', { concurrency: 2 }, () => {
  test('at the state path: state-invalid, naming the path, its branch and the directory', async () => {
    const lock = `dir-state-${++seq}`;
    const path = `locks/${lock}.json`;
    await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1 }));
    await emu.writeFile('leasehold-state', `${path}/left-here.txt`, 'not a lock state\n');
    const mark = emu.log.at(-1)?.seq ?? 0;
    const r = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'timeout-minutes': '1' }, context: jobContext({ runId: 5600 + seq }) });
    assert.notEqual(r.code, 0, r.stdout);
    assert.equal(r.outputs['error-code'], 'state-invalid', r.stderr);
    assert.match(r.stdout + r.stderr, new RegExp(`${path} on branch leasehold-state: GitHub lists a dir there, not a file leasehold can read; nothing was changed`));
    const mine = emu.log.filter((q) => q.seq > mark);
    assert.ok(mine.some((q) => q.method === 'GET' && q.path.includes(`/contents/${path}`)), 'the state was read');
    assert.deepEqual(mine.filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}`), [], 'nothing was written');
  });

  test('at the config path: config-invalid, naming the path and the directory', async () => {
    const lock = `dir-config-${++seq}`;
    await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json/README.md`, 'a directory\n');
    const mark = emu.log.at(-1)?.seq ?? 0;
    const r = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, 'timeout-minutes': '1' }, context: jobContext({ runId: 5700 + seq }) });
    assert.notEqual(r.code, 0, r.stdout);
    assert.equal(r.outputs['error-code'], 'config-invalid', r.stderr);
    assert.match(r.stdout + r.stderr, new RegExp(`locks/${lock}\\.config\\.json: GitHub lists a dir there on the default branch, not a file leasehold can read`));
    const mine = emu.log.filter((q) => q.seq > mark);
    assert.deepEqual(mine.filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}`), [], 'nothing was written');
  });
});
