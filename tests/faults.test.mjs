// Every class of GitHub answer the core distinguishes, injected by the emulator during acquire,
// during the wait loop, and during release. Each job must end with the right outcome and lose
// nothing: no duplicate admission, no lost release, no slot left taken.
//
// Classes: conflict, not-found, refusal, rate-limited (server-directed, secondary, primary),
// transient (5xx, 401 just after a token was minted), unknown-outcome (write applied, answer lost).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
let seq = 0;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  // The state branch exists before the faults: on first use the state rides in the branch's
  // first commit (no PUT), and a fault meant for a state PUT would not fire.
  const warm = jobContext({ runId: 9_999 });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'warm' }, context: warm });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  await runAction('release', { apiUrl: emu.url, inputs: { lock: 'warm' }, context: warm, env: a.exported });
});
after(() => emu.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));
const nowSeconds = () => Math.floor(Date.now() / 1000);

// What the emulator answers for each class (each fires once on the chosen request).
const FAULTS = {
  conflict: { methods: ['PUT'], action: () => ({ conflict: true }) },
  'not-found': { methods: ['GET'], action: () => ({ status: 404, body: { message: 'Not Found' } }) },
  refusal: { methods: ['GET', 'PUT'], action: () => ({ status: 403, body: { message: 'Resource not accessible by integration' } }) },
  'rate-limited (retry-after)': { methods: ['GET', 'PUT'], action: () => ({ status: 429, headers: { 'retry-after': '1' } }) },
  'rate-limited (secondary)': {
    methods: ['GET', 'PUT'],
    action: () => ({ status: 403, headers: { 'retry-after': '1' }, body: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' } }),
  },
  'rate-limited (primary)': {
    methods: ['GET', 'PUT'],
    action: () => ({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '5000', 'x-ratelimit-reset': String(nowSeconds() + 2) },
      body: { message: 'API rate limit exceeded for installation.' },
    }),
  },
  'transient (502)': { methods: ['GET'], action: () => ({ status: 502, body: { message: 'Server Error' } }) },
  'transient (401 grace)': { methods: ['GET'], action: () => ({ status: 401, body: { message: 'Bad credentials' } }) },
  'unknown-outcome (502)': { methods: ['PUT'], action: () => ({ applyThen: { status: 502 } }) },
  'unknown-outcome (reset)': { methods: ['PUT'], action: () => ({ applyThen: 'reset' }) },
};

function inject(lock, method, action) {
  return emu.faults.add({ method, path: new RegExp(`/contents/locks/${lock}\\.json$`), action });
}

const inputs = (lock, extra = {}) => ({ lock, 'poll-seconds': '1', 'timeout-minutes': '2', 'api-retry-base-ms': '200', ...extra });

/** The state has exactly these holders (by holder id and nonce) and an empty queue. */
async function assertHolders(lock, expected) {
  const state = await stateOf(lock);
  assert.deepEqual(
    state.holders.map((h) => [h.holderId, h.nonce]),
    expected,
    `holders of ${lock}: ${JSON.stringify(state.holders.map((h) => h.holderId))}`,
  );
  assert.deepEqual(state.queue, [], `queue of ${lock}`);
}

describe('fault classes during acquire', { concurrency: 4, timeout: 120_000 }, () => {
  for (const [name, fault] of Object.entries(FAULTS)) {
    for (const method of fault.methods) {
      test(`${name} on ${method}`, async () => {
        const lock = `acq-${++seq}`;
        const ctx = jobContext({ runId: 10_000 + seq });
        const rule = inject(lock, method, fault.action());
        const a = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
        assert.equal(rule.fired, 1, 'the fault fired');
        if (name === 'refusal') {
          assert.equal(a.code, 1);
          assert.equal(a.outputs.result, 'failed');
          assert.equal(a.outputs['error-code'], 'refused');
          assert.match(a.stdout, /403 Resource not accessible by integration/);
          // Refused on the read: nothing written. Refused on the write: nothing landed.
          const text = await emu.readFile('leasehold-state', `locks/${lock}.json`);
          if (text) await assertHolders(lock, []);
          return;
        }
        assert.equal(a.code, 0, a.stdout);
        assert.equal(a.outputs.result, 'acquired');
        await assertHolders(lock, [[a.outputs['holder-id'], a.outputs.nonce]]);
        if (name.startsWith('rate-limited')) assert.match(a.stdout, /\(rate-limited\): retrying in/);
        if (name.startsWith('transient')) assert.match(a.stdout, /\(transient\): retrying in/);
        if (name.startsWith('unknown-outcome')) assert.match(a.stdout, /the write may have been applied; reading it back/);
        const r = await runAction('release', { apiUrl: emu.url, inputs: { lock }, context: ctx });
        assert.equal(r.outputs.result, 'released');
        await assertHolders(lock, []);
      });
    }
  }
});

describe('fault classes in the wait loop', { concurrency: 4, timeout: 120_000 }, () => {
  for (const [name, fault] of Object.entries(FAULTS)) {
    for (const method of fault.methods) {
      test(`${name} on ${method}`, async () => {
        const lock = `wait-${++seq}`;
        const blocker = jobContext({ runId: 20_000 + seq, job: 'blocker' });
        const waiterCtx = jobContext({ runId: 20_000 + seq, job: 'waiter' });
        const b = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: blocker });
        assert.equal(b.outputs.result, 'acquired', `the blocker holds the lock\n${b.stdout}${b.stderr}`);
        let settled = null;
        const waiter = runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: waiterCtx });
        waiter.then((w) => (settled = w), () => {}); // a rejection is awaited below
        // Setup, not an assertion on timing: a spawned process on a busy 2-core machine can take
        // several seconds to start and, a moment after the blocker's write, lets the lock settle
        // before it enqueues. Wait for it up to 30 s (the test's own time-out is 120 s), or until
        // the waiter ended without queueing (its output then says why).
        for (const until = Date.now() + 30_000; Date.now() < until && !settled && !(await stateOf(lock)).queue.length; ) await sleep(25);
        const queued = (await stateOf(lock)).queue.length;
        assert.equal(queued, 1, settled ? `the waiter ended before it queued:\n${settled.stdout}${settled.stderr}` : 'the waiter is queued within 30 s');
        // The wait loop only reads; its one write is its own admission. The blocker's holding
        // is removed by another writer (as an operator would) without admitting anybody, so the
        // waiter is the only client left: its next poll meets the fault, and then it admits
        // itself with a write of its own.
        const rule = inject(lock, method, fault.action());
        const state = await stateOf(lock);
        state.revision += 1;
        state.holders = [];
        await emu.writeFile('leasehold-state', `locks/${lock}.json`, `${JSON.stringify(state, null, 2)}\n`);
        const w = await waiter;
        assert.equal(rule.fired, 1, 'the fault fired');
        if (name === 'refusal') {
          assert.equal(w.outputs.result, 'failed');
          assert.equal(w.outputs['error-code'], 'refused');
          // Its queue entry (or holding) is still there for release to clean.
          const r = await runAction('release', { apiUrl: emu.url, inputs: inputs(lock), context: waiterCtx });
          assert.match(r.outputs.result, /^(queue-cleaned|released)$/);
          await assertHolders(lock, []);
          return;
        }
        assert.equal(w.code, 0, w.stdout);
        assert.equal(w.outputs.result, 'acquired');
        await assertHolders(lock, [[w.outputs['holder-id'], w.outputs.nonce]]);
        const r = await runAction('release', { apiUrl: emu.url, inputs: inputs(lock), context: waiterCtx });
        assert.equal(r.outputs.result, 'released');
        await assertHolders(lock, []);
      });
    }
  }
});

describe('fault classes during release', { concurrency: 4, timeout: 120_000 }, () => {
  for (const [name, fault] of Object.entries(FAULTS)) {
    for (const method of fault.methods) {
      test(`${name} on ${method}`, async () => {
        const lock = `rel-${++seq}`;
        const ctx = jobContext({ runId: 30_000 + seq });
        const a = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
        assert.equal(a.outputs.result, 'acquired');
        const rule = inject(lock, method, fault.action());
        const r = await runAction('release', { apiUrl: emu.url, inputs: { lock, 'api-retry-base-ms': '200' }, context: ctx });
        assert.equal(rule.fired, 1, 'the fault fired');
        if (name === 'refusal') {
          assert.equal(r.code, 1);
          assert.equal(r.outputs.result, 'failed');
          assert.equal(r.outputs['error-code'], 'refused');
          await assertHolders(lock, [[a.outputs['holder-id'], a.outputs.nonce]]);
          const again = await runAction('release', { apiUrl: emu.url, inputs: { lock }, context: ctx });
          assert.equal(again.outputs.result, 'released');
        } else {
          assert.equal(r.code, 0, r.stdout);
          assert.equal(r.outputs.result, 'released', r.stdout);
          assert.equal(r.outputs.released, 'true');
        }
        await assertHolders(lock, []);
      });
    }
  }
});

test('a release that cannot record its result within its deadline says so distinctly', { timeout: 120_000 }, async () => {
  const lock = `rel-unrecorded`;
  const ctx = jobContext({ runId: 40_000 });
  await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
  const rule = emu.faults.add({ method: 'GET', path: /rel-unrecorded\.json$/, times: Infinity, action: { status: 502 } });
  try {
    const r = await runAction('release', { apiUrl: emu.url, inputs: { lock, 'release-deadline-seconds': '30', 'api-retry-max-ms': '5000' }, context: ctx });
    assert.equal(r.code, 1);
    assert.equal(r.outputs.result, 'release-unrecorded');
    assert.equal(r.outputs.released, 'false');
    assert.equal(r.outputs['error-code'], 'api-unavailable');
    assert.match(r.summary, /released `rel-unrecorded`, but the lock state could not be updated/);
    assert.ok(rule.fired >= 3, `retried until the deadline (${rule.fired} attempts)`);
  } finally {
    rule.remove();
  }
});
