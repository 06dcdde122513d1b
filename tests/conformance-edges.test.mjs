// One test per fact of docs/github-semantics.md that leasehold relies on. Each asserts
// both sides: what the emulator answers (on the wire and in its git repository), and how the
// driver takes it: the transport (actions/lib/github.mjs, which turns answers into the core's
// replies) and, where the fact changes what a job does, the real bundles in dist/. The section
// comments name the doc's anchors (docs/github-semantics.md#<anchor>).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTransport } from '../actions/lib/github.mjs';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const TOKEN = 'test-token';
const BRANCH = 'main'; // the state lives on the default branch here: no first use to pay for
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const IS_AT = /^is at [0-9a-f]{40} but expected [0-9a-f]{40}$/;

/** A fresh emulator for one test, every exchange kept (headers included). */
async function emulator(t, options = {}) {
  const exchanges = [];
  const emu = await startEmulator({
    owner: 'octo',
    repo: 'app',
    files: { 'locks/duo.config.json': '{"capacity": 2}\n', 'README.md': 'app\n' },
    onExchange: (e) => exchanges.push(e),
    ...options,
  });
  t.after(() => emu.close());
  const perform = createTransport({ baseUrl: emu.url, token: TOKEN, repository: 'octo/app' });
  return { emu, exchanges, perform };
}

const read = (path, extra = {}) => ({ kind: 'readFile', path, ref: BRANCH, timeoutMs: 5000, ...extra });
const write = (path, content, sha, extra = {}) => ({ kind: 'writeFile', path, content, message: `write ${path}`, branch: BRANCH, sha, timeoutMs: 5000, ...extra });

let runId = 7000;
function job(emu, lock, { runId: id = ++runId, inputs = {}, name = 'build' } = {}) {
  const context = jobContext({ repository: 'octo/app', runId: id, job: name });
  const common = { lock, 'state-branch': BRANCH, 'poll-seconds': '1', ...inputs };
  return {
    holderId: `octo/app:${id}:${name}`,
    acquire: (extra = {}) => runAction('acquire', { apiUrl: emu.url, token: TOKEN, inputs: { 'timeout-minutes': '1', ...common, ...extra }, context }),
    // `env`: what acquire exported for the later steps of its job (GITHUB_ENV).
    release: (extra = {}, env = {}) => runAction('release', { apiUrl: emu.url, token: TOKEN, inputs: { ...common, ...extra }, context, env }),
  };
}

const stateOf = async (emu, lock) => JSON.parse(await emu.readFile(BRANCH, `locks/${lock}.json`));
const entry = (emu, seq) => emu.log.find((e) => e.seq === seq);
const holderIds = (state) => state.holders.map((h) => h.holderId).sort();
const ok = (r) => assert.equal(r.code, 0, r.stdout + r.stderr);

describe('docs/github-semantics.md, one fact at a time: the emulator and the driver', { concurrency: 4, timeout: 60_000 }, () => {
  // ---- docs/github-semantics.md#writes-with-a-sha -----------------------------------------

  test('contents PUT, existing file, stale sha: 409, nothing applied; the driver re-reads and plans again', async (t) => {
    const { emu, perform } = await emulator(t);
    // Emulator and transport.
    const v1 = await perform(read('README.md'));
    assert.equal(v1.kind, 'file');
    await emu.writeFile(BRANCH, 'README.md', 'changed by another writer\n');
    const head = await emu.head(BRANCH);
    const reply = await perform(write('README.md', 'mine\n', v1.sha));
    assert.equal(reply.kind, 'http');
    assert.equal(reply.status, 409);
    assert.match(reply.message, /does not match/);
    assert.equal(await emu.head(BRANCH), head, 'nothing committed');
    assert.equal(await emu.readFile(BRANCH, 'README.md'), 'changed by another writer\n');

    // The bundles: b plans on a version, c's write lands before b's, so b's sha is stale.
    const seed = job(emu, 'duo');
    ok(await seed.acquire());
    ok(await seed.release());
    const b = job(emu, 'duo');
    const c = job(emu, 'duo');
    const hold = emu.faults.add({ method: 'PUT', path: /duo\.json$/, action: { pause: true } });
    const acquiring = b.acquire();
    const held = await hold.paused;
    ok(await c.acquire()); // the rule fired once, on b's write: c's passes
    hold.release();
    const out = await acquiring;
    ok(out);
    assert.equal(out.outputs.result, 'acquired');
    assert.equal(entry(emu, held.seq).status, 409, "b's write on the stale sha");
    assert.ok(emu.log.some((e) => e.seq > held.seq && e.method === 'GET'), 'b read again after the 409');
    assert.deepEqual(holderIds(await stateOf(emu, 'duo')), [b.holderId, c.holderId].sort());
  });

  test('contents PUT, existing file, no sha: 422; the driver takes it as a conflict (the file appeared) and re-reads', async (t) => {
    const { emu, perform } = await emulator(t);
    const reply = await perform(write('README.md', 'x\n', undefined));
    assert.equal(reply.kind, 'http');
    assert.equal(reply.status, 422);
    assert.match(reply.message, /"sha" wasn't supplied/);
    assert.equal(await emu.readFile(BRANCH, 'README.md'), 'app\n');

    // release of a lock with no state file confirms absence with a create-only write (no sha);
    // the file appears meanwhile (x acquires): 422, then a read and a compare-and-swap write.
    const r = job(emu, 'appear');
    const x = job(emu, 'appear');
    const hold = emu.faults.add({ method: 'PUT', path: /appear\.json$/, action: { pause: true } });
    const releasing = r.release();
    const held = await hold.paused;
    ok(await x.acquire()); // the rule fired once, on r's write: x's pass
    hold.release();
    const out = await releasing;
    ok(out);
    assert.equal(entry(emu, held.seq).status, 422);
    assert.equal(out.outputs.result, 'noop');
    assert.deepEqual(holderIds(await stateOf(emu, 'appear')), [x.holderId]);
  });

  test('contents PUT, missing file, any sha: 201, the sha ignored; leasehold never deletes state to release', async (t) => {
    const { emu, perform, exchanges } = await emulator(t);
    const reply = await perform(write('locks/ghost.json', '{}\n', 'f'.repeat(40)));
    assert.equal(reply.kind, 'written');
    assert.equal(exchanges.at(-1).status, 201);
    assert.equal(await emu.readFile(BRANCH, 'locks/ghost.json'), '{}\n');

    // The hazard: a deleted state file loses the compare-and-swap. b's write, planned on a
    // version that is deleted before it lands, is created (201), not refused.
    const a = job(emu, 'duo');
    const b = job(emu, 'duo');
    ok(await a.acquire());
    const hold = emu.faults.add({ method: 'PUT', path: /duo\.json$/, action: { pause: true } });
    const acquiring = b.acquire();
    const held = await hold.paused;
    await emu.writeFile(BRANCH, 'locks/duo.json', null, 'someone deletes the state');
    hold.release();
    ok(await acquiring);
    assert.equal(entry(emu, held.seq).status, 201, 'the stale sha was ignored');
    assert.deepEqual(holderIds(await stateOf(emu, 'duo')), [a.holderId, b.holderId].sort());
    // Which is why release writes the state (a compare-and-swap) and never deletes it.
    ok(await a.release());
    ok(await b.release());
    assert.ok(!emu.log.some((e) => e.method === 'DELETE'), 'no DELETE was ever sent');
    assert.deepEqual((await stateOf(emu, 'duo')).holders, []);
  });

  test('contents on a missing branch: 404; the driver creates the orphan state branch on first use', async (t) => {
    const { emu, perform } = await emulator(t);
    const r = await perform(read('locks/a.json', { ref: 'nowhere' }));
    assert.equal(r.kind, 'http');
    assert.equal(r.status, 404);
    assert.match(r.message, /No commit found for the ref nowhere/);
    const w = await perform(write('locks/a.json', '{}\n', undefined, { branch: 'nowhere' }));
    assert.equal(w.status, 404);
    assert.equal(w.message, 'Branch nowhere not found');

    const j = job(emu, 'first', { inputs: { 'state-branch': 'leasehold-state' } });
    // What one step sent: each request as "METHOD path status", the repository left out.
    const sentBy = async (step) => {
      const from = emu.log.at(-1).seq;
      const out = await step();
      ok(out);
      return { out, sent: emu.log.filter((e) => e.seq > from).map((e) => `${e.method} ${e.path.replace('/repos/octo/app', '').replace(/\?.*/, '')} ${e.status}`) };
    };
    const { out, sent: seen } = await sentBy(() => j.acquire());
    assert.equal(out.outputs.result, 'acquired');
    // The read's 404 names the missing ref, so the branch is made before the first write: no
    // write is sent against a branch that does not exist (a write that still meets a missing
    // branch creates it and sends the same write again: fixture
    // acquire-first-use-write-finds-no-branch).
    assert.ok(seen.includes('GET /contents/locks/first.json 404'), seen.join('\n'));
    assert.ok(!seen.includes('PUT /contents/locks/first.json 404'), seen.join('\n'));
    // The state rides in the branch's first commit: creating the ref is the write.
    const create = ['POST /git/trees 201', 'POST /git/commits 201', 'POST /git/refs 201'];
    assert.deepEqual(seen.filter((s) => s.startsWith('POST')), create);
    assert.equal(seen.at(-1), 'POST /git/refs 201');
    assert.ok(!seen.some((s) => s.startsWith('PUT')), seen.join('\n'));
    const lockRepository = seen.filter((s) => !s.includes('/actions/'));
    assert.ok(lockRepository.length <= 5, `first use in at most 5 requests: ${lockRepository.join(', ')}`);
    const state = JSON.parse(await emu.readFile('leasehold-state', 'locks/first.json'));
    assert.equal(state.holders[0].holderId, out.outputs['holder-id']);

    // The version acquire carried is the file's blob id as GitHub names it: release writes on
    // it, once, unrefused.
    const { out: rel, sent: released } = await sentBy(() => j.release({}, out.exported));
    assert.equal(rel.outputs.result, 'released');
    assert.deepEqual(released, ['PUT /contents/locks/first.json 200']);
  });

  test('every REST request names GitHub\'s media type and the API version leasehold is written to (GitHub\'s "API versions")', async (t) => {
    const { perform, exchanges } = await emulator(t);
    await perform(read('README.md'));
    await perform(write('locks/v.json', '{}\n', undefined));
    const [r, w] = exchanges;
    for (const e of [r, w]) {
      assert.equal(e.requestHeaders['x-github-api-version'], '2022-11-28', JSON.stringify(e.requestHeaders));
      assert.equal(e.requestHeaders.accept, 'application/vnd.github+json');
    }
  });

  test('a GraphQL request names the "Update refs preview" media type GitHub lists updateRefs under, and no REST API version', async (t) => {
    const { perform, exchanges } = await emulator(t);
    await perform({ kind: 'graphql', document: 'query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { id } }', variables: { owner: 'octo', name: 'app' }, timeoutMs: 5000 });
    const [q] = exchanges;
    assert.equal(q.requestHeaders.accept, 'application/vnd.github.update-refs-preview+json', JSON.stringify(q.requestHeaders));
    assert.equal(q.requestHeaders['x-github-api-version'], undefined);
  });

  test('a GraphQL answer says whether it had data at all: a document refused before it ran has none', async (t) => {
    const { perform } = await emulator(t);
    const ran = await perform({ kind: 'graphql', document: 'query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { id } }', variables: { owner: 'octo', name: 'app' }, timeoutMs: 5000 });
    assert.equal(ran.dataAbsent, false, JSON.stringify(ran));
    const refused = await perform({ kind: 'graphql', document: 'query { repository(owner: "octo", name: "app") { noSuchField } }', variables: {}, timeoutMs: 5000 });
    assert.equal(refused.dataAbsent, true, JSON.stringify(refused));
    assert.ok(refused.errors.length > 0);
  });

  test('a git object created, its answer cut off (201, no sha): the transport says it may have been sent, never "created" without a sha', async (t) => {
    // A body cut short is not an answer GitHub describes (it is one that never fully arrived), so
    // the conformance check, which would flag it, is off for this one.
    const { emu, perform } = await emulator(t, { conformance: false });
    for (const [path, call] of [
      [/\/git\/trees$/, { kind: 'createTree', files: [{ path: 'README.md', content: 'x\n' }], timeoutMs: 5000 }],
      [/\/git\/commits$/, { kind: 'createCommit', message: 'm', tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', parents: [], timeoutMs: 5000 }],
      [/\/git\/refs$/, { kind: 'createBranch', branch: 'cut', sha: '0'.repeat(40), timeoutMs: 5000 }],
    ]) {
      const cut = emu.faults.add({ method: 'POST', path, action: { status: 201, body: {} } });
      const r = await perform(call);
      cut.remove();
      assert.equal(r.kind, 'transport', `${call.kind}: ${JSON.stringify(r)}`);
      assert.equal(r.sent, true, call.kind);
      assert.match(r.message, /sha/, call.kind);
    }
  });

  // ---- docs/github-semantics.md#many-files-on-one-branch ----------------------------------

  test('writes to DIFFERENT files of one branch collide: 409 "is at X but expected Y"; the driver re-reads and succeeds', async (t) => {
    const { emu, perform } = await emulator(t);
    // a's write has built its commit and waits before moving the branch; b's lands first.
    const gate = emu.faults.add({ method: 'PUT', path: /a\.txt$/, action: { pause: true, at: 'beforeRefUpdate' } });
    const pa = perform(write('a.txt', 'a\n', undefined));
    await gate.paused;
    const rb = await perform(write('b.txt', 'b\n', undefined));
    assert.equal(rb.kind, 'written');
    gate.release();
    const ra = await pa;
    assert.equal(ra.kind, 'http');
    assert.equal(ra.status, 409);
    assert.match(ra.message, IS_AT);
    assert.equal(await emu.readFile(BRANCH, 'a.txt'), null, 'nothing applied');
    assert.equal(await emu.readFile(BRANCH, 'b.txt'), 'b\n');

    // Two jobs, two locks, one state branch.
    const x = job(emu, 'x');
    const y = job(emu, 'y');
    const hold = emu.faults.add({ method: 'PUT', path: /\/x\.json$/, action: { pause: true, at: 'beforeRefUpdate' } });
    const ax = x.acquire();
    const held = await hold.paused;
    ok(await y.acquire());
    hold.release();
    const outX = await ax;
    ok(outX);
    assert.equal(outX.outputs.result, 'acquired');
    assert.equal(entry(emu, held.seq).status, 409);
    assert.ok(emu.log.some((e) => e.seq > held.seq && e.method === 'PUT' && /\/x\.json$/.test(e.path) && e.status === 201));
    assert.deepEqual(holderIds(await stateOf(emu, 'x')), [x.holderId]);
    assert.deepEqual(holderIds(await stateOf(emu, 'y')), [y.holderId]);
  });

  // ---- docs/github-semantics.md#stale-reads -----------------------------------------------

  test('contents GET after a write can be stale (the replaced version, max-age=60); the driver never acts on it', async (t) => {
    // GitHub's clock (the emulator's) runs `ahead` of this machine's; moving it on stands in
    // for waiting out the stale window.
    let ahead = 0;
    const { emu, perform, exchanges } = await emulator(t, { now: () => Date.now() + ahead });
    const before = await perform(read('README.md'));
    emu.staleReads({ path: /README\.md|stale\.json/, ms: 1500 });
    const w = await perform(write('README.md', 'new\n', before.sha));
    assert.equal(w.kind, 'written');
    const stale = await perform(read('README.md'));
    assert.equal(stale.kind, 'file');
    assert.equal(stale.sha, before.sha, 'the replaced version');
    assert.equal(stale.content, 'app\n');
    assert.equal(emu.log.at(-1).fault, 'staleRead');
    assert.match(exchanges.at(-1).responseHeaders['cache-control'], /max-age=60/);
    ahead += 1600; // past the 1.5 s stale window
    const fresh = await perform(read('README.md'));
    assert.equal(fresh.sha, w.sha);

    // A holder releases right after acquiring: its first reads show the state before its
    // acquire. It must not decide on them (a write on a stale sha is refused, and reads that
    // go back in revision are read again) and it still releases, once.
    const j = job(emu, 'stale');
    ok(await j.acquire());
    const seq = emu.log.at(-1).seq;
    const out = await j.release();
    ok(out);
    assert.equal(out.outputs.result, 'released');
    assert.ok(emu.log.some((e) => e.seq > seq && e.fault === 'staleRead'), 'release was served a stale read');
    assert.deepEqual((await stateOf(emu, 'stale')).holders, []);
  });

  // ---- docs/github-semantics.md#request-time-limit ----------------------------------------

  test('a request killed at the time limit: 502 "Server Error", the write applied later; the driver reads back and finds it', async (t) => {
    const { emu, perform } = await emulator(t, { timeLimitMs: 400, killedWork: 'finish' });
    const v = await perform(read('README.md'));
    const slow = emu.faults.add({ method: 'PUT', path: /README\.md$/, action: { latencyMs: 1200, at: 'beforeRefUpdate' } });
    const r = await perform(write('README.md', 'late\n', v.sha));
    assert.deepEqual([r.kind, r.status, r.message], ['http', 502, 'Server Error']);
    const killed = emu.log.find((e) => e.fault === 'latency:1200+killed');
    assert.ok(killed);
    assert.equal(killed.applied, undefined, 'answered at the limit, before the work ended');
    await waitFor(() => killed.applied !== undefined, 5000);
    assert.equal(killed.applied, 200, 'the work went on');
    assert.equal(await emu.readFile(BRANCH, 'README.md'), 'late\n');
    slow.remove();

    // The bundle: its admission write is killed (held past the limit), and lands before the
    // driver's read-back (held until then). The core never re-sends a write whose outcome is
    // unknown: it reads back and recognises its own claim.
    const j = job(emu, 'killed');
    const slowWrite = emu.faults.add({ method: 'PUT', path: /killed\.json$/, action: { pause: true, at: 'beforeRefUpdate' } });
    const readBack = emu.faults.add({ method: 'GET', path: /killed\.json$/, skip: 1, action: { pause: true } });
    const acquiring = j.acquire();
    const w = await slowWrite.paused;
    await readBack.paused; // the driver got its 502 and reads back
    assert.equal(entry(emu, w.seq).status, 502);
    slowWrite.release();
    await waitFor(() => entry(emu, w.seq).applied !== undefined, 5000);
    assert.equal(entry(emu, w.seq).applied, 201, 'the killed write landed');
    readBack.release();
    const out = await acquiring;
    ok(out);
    assert.equal(out.outputs.result, 'acquired');
    assert.ok(!emu.log.some((e) => e.seq > w.seq && e.method === 'PUT'), 'not written again');
    const state = await stateOf(emu, 'killed');
    assert.deepEqual(holderIds(state), [j.holderId]);
    assert.equal(state.fence, 1, 'admitted once');
  });

  test('a request killed at the time limit with its write NOT applied; the driver reads back, finds nothing, writes again', async (t) => {
    const { emu, perform } = await emulator(t, { timeLimitMs: 400, killedWork: 'drop' });
    const v = await perform(read('README.md'));
    const head = await emu.head(BRANCH);
    const slow = emu.faults.add({ method: 'PUT', path: /README\.md$/, action: { latencyMs: 800, at: 'beforeRefUpdate' } });
    const r = await perform(write('README.md', 'dropped\n', v.sha));
    assert.deepEqual([r.kind, r.status], ['http', 502]);
    const killed = emu.log.find((e) => /killed/.test(e.fault ?? ''));
    await waitFor(() => killed.applied !== undefined, 5000);
    assert.equal(killed.applied, 'dropped');
    assert.equal(await emu.head(BRANCH), head, 'nothing committed');
    slow.remove();

    // And when the client gives up first (its own timeout, below GitHub's limit): no answer
    // at all, and the transport says the request may have been sent.
    emu.setTimeLimit({ ms: null });
    emu.faults.add({ method: 'PUT', path: /README\.md$/, action: { latencyMs: 600 } });
    const gaveUp = await perform(write('README.md', 'x\n', v.sha, { timeoutMs: 150 }));
    assert.equal(gaveUp.kind, 'transport');
    assert.equal(gaveUp.sent, true);
    assert.match(gaveUp.message, /timed out|aborted due to timeout/);
    emu.setTimeLimit({ ms: 400 });

    // The bundle: its killed write is dropped before the driver reads back; the read finds no
    // claim, so the core plans again and writes again.
    const j = job(emu, 'dropped');
    const slowWrite = emu.faults.add({ method: 'PUT', path: /dropped\.json$/, action: { pause: true, at: 'beforeRefUpdate' } });
    const readBack = emu.faults.add({ method: 'GET', path: /dropped\.json$/, skip: 1, action: { pause: true } });
    const acquiring = j.acquire();
    const w2 = await slowWrite.paused;
    await readBack.paused;
    assert.equal(entry(emu, w2.seq).status, 502);
    slowWrite.release();
    await waitFor(() => entry(emu, w2.seq).applied !== undefined, 5000);
    assert.equal(entry(emu, w2.seq).applied, 'dropped');
    readBack.release();
    const out = await acquiring;
    ok(out);
    assert.equal(out.outputs.result, 'acquired');
    const again = emu.log.filter((e) => e.seq > w2.seq && e.method === 'PUT');
    // Written again: answered 201, or (on a loaded machine the 400 ms limit can catch the second
    // write too) answered 502 at the limit and applied anyway, which the next read-back found.
    assert.ok(again.some((e) => e.status === 201 || e.applied === 201), `written again after reading back (after the killed write: ${JSON.stringify(emu.log.filter((e) => e.seq > w2.seq).map((e) => [e.method, e.path, e.status, e.fault]))})`);
    const state = await stateOf(emu, 'dropped');
    assert.deepEqual(holderIds(state), [j.holderId]);
    assert.equal(state.fence, 1);
  });

  // ---- docs/github-semantics.md#git-refs --------------------------------------------------

  test('POST git/refs is create-if-absent: 422 "Reference already exists"; the driver takes the branch another job created', async (t) => {
    const { emu, perform } = await emulator(t);
    const head = await emu.head(BRANCH);
    const r = await perform({ kind: 'createBranch', branch: BRANCH, sha: head, timeoutMs: 5000 });
    assert.deepEqual([r.kind, r.status, r.message], ['http', 422, 'Reference already exists']);

    const inputs = { 'state-branch': 'leasehold-state' };
    const a = job(emu, 'duo', { inputs });
    const b = job(emu, 'duo', { inputs });
    const hold = emu.faults.add({ method: 'POST', path: /\/git\/refs$/, action: { pause: true } });
    const acquiring = a.acquire();
    const held = await hold.paused;
    ok(await b.acquire()); // b creates the state branch meanwhile (the rule fired on a's)
    hold.release();
    const out = await acquiring;
    ok(out);
    assert.equal(entry(emu, held.seq).status, 422);
    assert.equal(out.outputs.result, 'acquired');
    const state = JSON.parse(await emu.readFile('leasehold-state', 'locks/duo.json'));
    assert.deepEqual(holderIds(state), [a.holderId, b.holderId].sort());
  });

  // ---- docs/github-semantics.md#rate-limits, docs/github-semantics.md#rate-limit-signals ---

  test('rate-limit headers on every answer; the primary limit is 403 with remaining 0 and a reset; the transport hands them over', async (t) => {
    const { emu, perform, exchanges } = await emulator(t, { rateLimit: 3 });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await perform(read('README.md')));
    const h = exchanges.map((e) => e.responseHeaders);
    assert.deepEqual(h.map((x) => x['x-ratelimit-remaining']), ['2', '1', '0', '0']);
    assert.deepEqual(h.map((x) => x['x-ratelimit-used']), ['1', '2', '3', '3']);
    assert.ok(h.every((x) => x['x-ratelimit-limit'] === '3' && x['x-ratelimit-resource'] === 'core' && /^\d+$/.test(x['x-ratelimit-reset'])));
    const limited = seen[3];
    assert.equal(limited.kind, 'http');
    assert.equal(limited.status, 403);
    assert.match(limited.message, /^API rate limit exceeded/);
    assert.equal(limited.ratelimitRemaining, 0);
    assert.equal(limited.ratelimitReset, Number(h[3]['x-ratelimit-reset']));
    assert.ok(limited.ratelimitReset > Date.now() / 1000, 'reset is in the future (epoch seconds)');
    assert.ok(limited.date, 'the Date header travels with it, to put the reset on our clock');
  });

  test('403/429 with retry-after: the transport hands it over; the driver waits that long, then goes on', async (t) => {
    const { emu, perform, exchanges } = await emulator(t);
    emu.faults.add({ method: 'GET', times: 1, action: { status: 429, headers: { 'retry-after': '1' } } });
    const r = await perform(read('README.md'));
    assert.deepEqual([r.kind, r.status, r.retryAfter], ['http', 429, '1']);
    assert.match(r.message, /secondary rate limit/);

    for (const action of [
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 403, headers: { 'retry-after': '1' }, body: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' } },
    ]) {
      const j = job(emu, `ra-${action.status}`);
      const rule = emu.faults.add({ method: 'GET', times: 1, action });
      const from = exchanges.length;
      const out = await j.acquire();
      ok(out);
      assert.equal(out.outputs.result, 'acquired');
      assert.equal(rule.fired, 1);
      const mine = exchanges.slice(from);
      assert.equal(mine[0].status, action.status);
      const gap = mine[1].startedAt - (mine[0].startedAt + mine[0].ms);
      assert.ok(gap >= 950, `the next request came ${gap} ms after retry-after: 1`);
      await j.release();
    }
  });

  test('primary limit during acquire: taken as a rate limit (a wait), never as a refusal', async (t) => {
    const { emu, exchanges } = await emulator(t);
    const j = job(emu, 'primary');
    emu.faults.add({
      method: 'GET',
      times: 1,
      action: {
        status: 403,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 2) },
        body: { message: 'API rate limit exceeded for installation.' },
      },
    });
    const out = await j.acquire();
    ok(out);
    assert.equal(out.outputs.result, 'acquired');
    assert.equal(exchanges[0].status, 403);
    assert.match(out.stdout, /rate-limited/);
  });

  test('primary limit during acquire: no request before x-ratelimit-reset (GitHub: "wait until reset")', async (t) => {
    const { emu, exchanges } = await emulator(t);
    const j = job(emu, 'primary-reset');
    const reset = Math.floor(Date.now() / 1000) + 3;
    emu.faults.add({
      method: 'GET',
      times: 1,
      action: { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }, body: { message: 'API rate limit exceeded for installation.' } },
    });
    const out = await j.acquire();
    ok(out);
    assert.ok(exchanges[1].startedAt >= reset * 1000, `second request at ${exchanges[1].startedAt}, reset at ${reset * 1000}`);
  });

  test('primary limit during acquire with the reset far away: fail fast, no retries that cannot succeed', async (t) => {
    const { emu, exchanges } = await emulator(t);
    const j = job(emu, 'primary-far');
    const reset = Math.floor(Date.now() / 1000) + 3600;
    emu.faults.add({
      method: 'GET',
      times: Infinity,
      action: { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }, body: { message: 'API rate limit exceeded for installation.' } },
    });
    const out = await j.acquire();
    assert.equal(out.outputs.result, 'failed');
    assert.equal(out.outputs['error-code'], 'api-unavailable');
    assert.equal(exchanges.length, 1, 'one request, then fail fast');
    emu.faults.clear();
  });

  // ---- docs/github-semantics.md#conditional-reads -----------------------------------------

  test('If-None-Match: 304 with no body and no cost to the primary limit; the driver polls with it and gets notModified', async (t) => {
    const { emu, perform, exchanges } = await emulator(t);
    const first = await perform(read('README.md'));
    assert.ok(first.etag);
    const again = await perform(read('README.md', { ifNoneMatch: first.etag }));
    // A 304 is dated as every answer is (RFC 9110 asks it of an origin with a clock): the core
    // keeps its estimate of GitHub's clock current from it.
    assert.deepEqual(Object.keys(again).sort(), ['date', 'kind']);
    assert.equal(again.kind, 'notModified');
    assert.ok(Number.isFinite(Date.parse(again.date)), `a date: ${again.date}`);
    const [e1, e2] = exchanges;
    assert.equal(e2.status, 304);
    assert.equal(e2.responseBody, null);
    assert.equal(e2.responseHeaders.etag, first.etag);
    assert.equal(e2.responseHeaders['x-ratelimit-remaining'], e1.responseHeaders['x-ratelimit-remaining'], '304 spends nothing');
    assert.equal(e2.responseHeaders['x-ratelimit-used'], e1.responseHeaders['x-ratelimit-used']);

    // A waiter polls with If-None-Match: 304s while nothing changes, then the release lets it in.
    const holder = job(emu, 'poll');
    const waiter = job(emu, 'poll');
    ok(await holder.acquire());
    const from = exchanges.length;
    const waiting = waiter.acquire();
    await waitFor(() => exchanges.slice(from).some((e) => e.status === 304), 15_000);
    ok(await holder.release());
    const out = await waiting;
    ok(out);
    assert.equal(out.outputs.result, 'acquired');
    assert.equal(out.outputs['queue-position'], '1');
    const polls = exchanges.slice(from).filter((e) => e.method === 'GET' && e.requestHeaders['if-none-match']);
    const notModified = polls.filter((e) => e.status === 304);
    assert.ok(notModified.length >= 1, 'polled with If-None-Match and got 304');
    // Every counted answer spends one request and reports its own `x-ratelimit-used`, so the
    // values the counted answers report are distinct. A free 304 reports the count as it stands,
    // which is one some counted answer reported; a 304 that cost a request would report a value
    // no other answer has. (Comparing with "the previous exchange" instead depends on which of
    // two concurrent requests, holder's and waiter's on one token, the server finished first.)
    const spent = exchanges.filter((x) => x.status !== 304 && x.responseHeaders?.['x-ratelimit-used'] !== undefined).map((x) => x.responseHeaders['x-ratelimit-used']);
    assert.equal(new Set(spent).size, spent.length, 'each counted answer spent one request');
    for (const e of notModified) {
      assert.ok(spent.includes(e.responseHeaders['x-ratelimit-used']), `a 304 is free (it reports used=${e.responseHeaders['x-ratelimit-used']}, a count no counted answer reported)`);
      assert.equal(Number(e.responseHeaders['x-ratelimit-remaining']) + Number(e.responseHeaders['x-ratelimit-used']), Number(e.responseHeaders['x-ratelimit-limit']));
    }
  });

  // ---- Transport, no answer (docs/github-semantics.md#request-time-limit) -----------------

  test('a connection reset: no answer; the transport says the request may have been sent', async (t) => {
    const { emu, perform } = await emulator(t);
    emu.faults.add({ method: 'PUT', action: { reset: true } });
    const r = await perform(write('README.md', 'x\n', 'a'.repeat(40)));
    assert.equal(r.kind, 'transport');
    assert.equal(r.sent, true);
    assert.equal(emu.log.at(-1).status, null);
  });
});

async function waitFor(predicate, ms) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(25);
  }
}
