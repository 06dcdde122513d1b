// The acquire and release bundles in dist/, run as the runner runs them (INPUT_* variables,
// GITHUB_OUTPUT / GITHUB_STATE / GITHUB_STEP_SUMMARY files, GITHUB_* context), against the
// GitHub emulator.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const CONFIG = 'locks/deploy.config.json';
let emu;
// GitHub's clock (the emulator's, sent in every answer's date header) runs `ahead` of this
// machine's. Moving it on stands in for waiting: see settle().
let ahead = 0;

before(async () => {
  const two = '{"capacity": 2}\n';
  emu = await startEmulator({
    owner: 'octo',
    repo: 'app',
    now: () => Date.now() + ahead,
    files: { [CONFIG]: two, 'locks/matrix.config.json': two, 'locks/full.config.json': two },
  });
});
after(() => emu.close());
beforeEach(() => emu.faults.clear());

const api = () => emu.url;
const stateOf = async (lock = 'deploy') => {
  const text = await emu.readFile('leasehold-state', `locks/${lock}.json`);
  return text === null ? null : JSON.parse(text);
};
const requestsSince = (seq) => emu.log.filter((r) => r.seq > seq);
const lastSeq = () => (emu.log.length ? emu.log[emu.log.length - 1].seq : 0);
const writesSince = (seq) => requestsSince(seq).filter((r) => r.method !== 'GET');
/** Lets the locks settle: GitHub's clock moves on 2 s, so every version written so far is more
 *  than a second old by it and no writer finds a lock busy (the core puts off a write to a lock
 *  another job wrote less than a second ago, by GitHub's clock, and reads again). Two seconds,
 *  not one: the date header has a resolution of a second. */
const settle = () => {
  ahead += 2000;
};

describe('acquire and release, uncontended', { timeout: 60_000 }, () => {
  test('first use creates the state branch; acquire holds with fence 1; release frees it', async () => {
    const ctx = jobContext({ runId: 501, job: 'deploy' });
    const acquired = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'deploy' }, context: ctx });
    assert.equal(acquired.code, 0, acquired.stdout + acquired.stderr);
    assert.equal(acquired.outputs.acquired, 'true');
    assert.equal(acquired.outputs.result, 'acquired');
    assert.equal(acquired.outputs['holder-id'], 'octo/app:501:deploy');
    assert.equal(acquired.outputs.fence, '1');
    assert.equal(acquired.outputs['queue-position'], '0');
    assert.match(acquired.outputs.nonce, /^[0-9a-f]{16,}$/);
    assert.match(acquired.summary, /### leasehold: acquired `deploy` with fence 1/);
    assert.match(acquired.summary, /\| 1 \| `octo\/app:501:deploy` \|/);

    const readme = await emu.readFile('leasehold-state', 'README.md');
    assert.match(readme, /lock state written by leasehold/);
    assert.equal(await emu.readFile('leasehold-state', '.github/workflows/ci.yml'), null, 'the state branch is an orphan');
    let state = await stateOf();
    assert.equal(state.schema, 1);
    assert.equal(state.holders.length, 1);
    assert.equal(state.holders[0].holderId, 'octo/app:501:deploy');
    assert.equal(state.holders[0].run.url, 'https://github.com/octo/app/actions/runs/501/attempts/1');
    assert.equal(state.config.capacity, 2);

    const released = await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy' }, context: ctx });
    assert.equal(released.code, 0, released.stdout + released.stderr);
    assert.equal(released.outputs.released, 'true');
    assert.equal(released.outputs.result, 'released');
    assert.match(released.summary, /### leasehold: released `deploy`/);
    state = await stateOf();
    assert.deepEqual(state.holders, []);
    assert.deepEqual(state.queue, []);
  });

  test('steady state: one acquire plus release is 4 REST requests, plus the job id lookup', async () => {
    // Uncontended: nobody else wrote the lock in the last second (a busier lock is let settle
    // first, which costs a read).
    const pair = async (ctx, inputs = {}) => {
      settle();
      const start = lastSeq();
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'deploy', ...inputs }, context: ctx });
      const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy' }, context: ctx });
      assert.equal(a.outputs.result, 'acquired');
      assert.equal(r.outputs.result, 'released');
      return [requestsSince(start).map((q) => `${q.method} ${q.path.split('?')[0].replace(/^\/repos\/octo\/app\//, '')} ${q.status}`), a];
    };
    await pair(jobContext({ runId: 500, job: 'deploy' }), { 'record-job-id': 'false' }); // the state branch and a fresh config record exist
    const [bare] = await pair(jobContext({ runId: 502, job: 'deploy' }), { 'record-job-id': 'false' });
    assert.deepEqual(
      bare,
      ['GET contents/locks/deploy.json 200', 'PUT contents/locks/deploy.json 200', 'GET contents/locks/deploy.json 200', 'PUT contents/locks/deploy.json 200'],
      'read + compare-and-swap write, twice; the config is fresh in the state',
    );
    // By default acquire first asks the Actions API for this job's numeric id (one read).
    const ctx = jobContext({ runId: 503, job: 'deploy' });
    const [jobId] = await emu.actions.startRun(503, { jobs: [{ name: 'deploy', runnerName: ctx.RUNNER_NAME }] });
    const [looked, a] = await pair(ctx);
    assert.deepEqual(looked, ['GET actions/runs/503/attempts/1/jobs 200', ...bare]);
    assert.match(a.stdout, new RegExp(`recorded job id ${jobId} \\("deploy" on runner`));
  });

  test('the fence only grows across holdings', async () => {
    const fences = [];
    for (let i = 0; i < 3; i++) {
      const ctx = jobContext({ runId: 600 + i });
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'fences' }, context: ctx });
      fences.push(Number(a.outputs.fence));
      await runAction('release', { apiUrl: api(), inputs: { lock: 'fences' }, context: ctx });
    }
    assert.deepEqual(fences, [1, 2, 3]);
  });

  test('release when acquire never ran is a confirmed noop', async () => {
    const ctx = jobContext({ runId: 503 });
    const seq = lastSeq();
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy' }, context: ctx });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.outputs.result, 'noop');
    assert.equal(r.outputs.released, 'false');
    assert.equal(writesSince(seq).length, 1, 'absence confirmed by one compare-and-swap write');
  });

  test('release of a lock that has no state file confirms it with a create-only write', async () => {
    const seq = lastSeq();
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'never-used' }, context: jobContext({ runId: 504 }) });
    assert.equal(r.outputs.result, 'noop');
    assert.deepEqual(writesSince(seq).map((q) => `${q.method} ${q.status}`), ['PUT 201']);
    const state = await stateOf('never-used');
    assert.deepEqual([state.holders, state.queue], [[], []]);
  });

  test('release with no state branch at all creates it and confirms the absence (a late create of an acquire is then refused)', async () => {
    const seq = lastSeq();
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy', 'state-branch': 'no-such-branch' }, context: jobContext({ runId: 504 }) });
    assert.equal(r.outputs.result, 'noop');
    // The confirming state rides in the branch's first commit: tree, commit, ref, and no PUT.
    assert.deepEqual(requestsSince(seq).map((q) => `${q.method} ${q.status}`), ['GET 404', 'POST 201', 'POST 201', 'POST 201']);
    const state = JSON.parse(await emu.readFile('no-such-branch', 'locks/deploy.json'));
    assert.deepEqual([state.revision, state.holders, state.queue, state.lastChange.action], [1, [], [], 'release-check']);
    // An acquire's create that was still on its way is refused now, as a create of an existing file.
    const late = await fetch(`${api()}/repos/octo/app/contents/locks/deploy.json`, {
      method: 'PUT',
      headers: { authorization: 'token test-token', 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'late create', branch: 'no-such-branch', content: Buffer.from('{}').toString('base64') }),
    });
    assert.equal(late.status, 422);
  });

  test('matrix cells with their own suffix hold separately; re-running acquire returns the same holding', async () => {
    const cell = (i) => jobContext({ runId: 505, job: 'test', runner: `runner-${i}` });
    const a0 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix', 'holder-suffix': 'linux: 0' }, context: cell(0) });
    const a1 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix', 'holder-suffix': 'linux: 1' }, context: cell(1) });
    assert.equal(a0.outputs['holder-id'], 'octo/app:505:test:linux: 0');
    assert.equal(a1.outputs['holder-id'], 'octo/app:505:test:linux: 1');
    assert.notEqual(a0.outputs.fence, a1.outputs.fence);
    const again = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix', 'holder-suffix': 'linux: 0' }, context: cell(0) });
    assert.equal(again.outputs.result, 'acquired');
    assert.equal(again.outputs.fence, a0.outputs.fence, 'same holding, not a second slot');
    // A sibling cell that forgot its suffix is refused instead of sharing a holding.
    const b0 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix2' }, context: cell(0) });
    assert.equal(b0.outputs.result, 'acquired');
    const b1 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix2' }, context: cell(1) });
    assert.notEqual(b1.code, 0);
    assert.equal(b1.outputs['error-code'], 'holder-collision');
    assert.match(b1.stdout, /holder-suffix/);
    // Its release, run if: always() as the README asks, leaves the other cell's holding (its
    // runner tells them apart); that cell's own release frees it.
    const r1 = await runAction('release', { apiUrl: api(), inputs: { lock: 'matrix2' }, context: cell(1), env: b1.exported });
    assert.equal(r1.code, 0, r1.stdout);
    assert.equal(r1.outputs.result, 'noop');
    assert.match(r1.stdout, /another job of this run attempt \(runner "runner-0"\)/);
    assert.deepEqual((await stateOf('matrix2')).holders.map((h) => h.run.runnerName), ['runner-0']);
    const r0 = await runAction('release', { apiUrl: api(), inputs: { lock: 'matrix2' }, context: cell(0), env: b0.exported });
    assert.equal(r0.outputs.result, 'released', r0.stdout);
    assert.deepEqual((await stateOf('matrix2')).holders, []);
  });

  test('matrix cells on self-hosted runners of one name are told apart by their check run ids', async () => {
    // Two cells of one run attempt, both on a runner called `shared` (a repository and an
    // organization runner may have the same name), neither with a holder-suffix.
    const ctx = jobContext({ runId: 507, job: 'test', runner: 'shared' });
    const [idA, idB] = await emu.actions.startRun(507, {
      jobs: [
        { name: 'test (linux)', runnerName: 'shared' },
        { name: 'test (mac)', runnerName: 'shared' },
      ],
    });
    const seq = lastSeq();
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix3' }, context: ctx, checkRunId: idA });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const asked = requestsSince(seq).filter((q) => q.path.includes('/actions/'));
    assert.deepEqual(asked.map((q) => `${q.method} ${q.path} ${q.status}`), [`GET /repos/octo/app/actions/jobs/${idA} 200`], 'one request, for this job');
    assert.match(a.stdout, new RegExp(`recorded job id ${idA} \\("test \\(linux\\)", from this job's check run id\\)`));
    assert.equal((await stateOf('matrix3')).holders[0].run.jobId, idA);
    // The same cell acquiring again holds what it holds.
    const again = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix3' }, context: ctx, checkRunId: idA });
    assert.equal(again.outputs.result, 'acquired');
    assert.equal(again.outputs.fence, a.outputs.fence);
    // The sibling is refused, not let share the holding.
    const before = lastSeq();
    const b = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'matrix3' }, context: ctx, checkRunId: idB });
    assert.notEqual(b.code, 0);
    assert.equal(b.outputs['error-code'], 'holder-collision');
    assert.match(b.stdout, new RegExp(`job ${idA}, this is job ${idB}`));
    assert.deepEqual(writesSince(before), [], 'refused before any write');
    assert.equal((await stateOf('matrix3')).holders.length, 1);
  });

  test('a check run id GitHub knows no job of falls back to the job list by runner name', async () => {
    const ctx = jobContext({ runId: 508, job: 'test', runner: 'runner-508' });
    const [id] = await emu.actions.startRun(508, { jobs: [{ name: 'test', runnerName: 'runner-508' }] });
    const seq = lastSeq();
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'fallback' }, context: ctx, checkRunId: 999_999_999 });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const asked = requestsSince(seq).filter((q) => q.path.includes('/actions/'));
    assert.deepEqual(
      asked.map((q) => `${q.method} ${q.path.split('?')[0]} ${q.status}`),
      ['GET /repos/octo/app/actions/jobs/999999999 404', 'GET /repos/octo/app/actions/runs/508/attempts/1/jobs 200'],
    );
    assert.match(a.stdout, /GitHub knows no job of this job's check run id .*; looking the job up by runner name instead/);
    assert.equal((await stateOf('fallback')).holders[0].run.jobId, id);
    await runAction('release', { apiUrl: api(), inputs: { lock: 'fallback' }, context: ctx });
  });

  test('a rerun takes over the holding its first attempt left, and an explicit holder-id releases it', async () => {
    const first = jobContext({ runId: 506, runAttempt: 1 });
    const a1 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'rerun' }, context: first });
    const second = jobContext({ runId: 506, runAttempt: 2, runner: 'another-runner' });
    const a2 = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'rerun' }, context: second });
    assert.equal(a2.outputs.result, 'acquired');
    assert.ok(Number(a2.outputs.fence) > Number(a1.outputs.fence), 'a takeover gets a new fence');
    assert.equal((await stateOf('rerun')).holders.length, 1);
    // The first attempt's late release must not remove the second attempt's holding.
    const late = await runAction('release', { apiUrl: api(), inputs: { lock: 'rerun' }, context: first });
    assert.equal(late.outputs.result, 'noop');
    assert.equal((await stateOf('rerun')).holders.length, 1);
    const r = await runAction('release', {
      apiUrl: api(),
      inputs: { lock: 'rerun', 'holder-id': a2.outputs['holder-id'] },
      context: { ...second, GITHUB_JOB: 'cleanup' },
    });
    assert.equal(r.outputs.result, 'released');
  });
});

describe('waiting', { timeout: 60_000 }, () => {
  test('a full lock: timeout-minutes 0 tries once and writes nothing; a waiter that is killed is cleaned by release', async () => {
    const holders = [jobContext({ runId: 700 }), jobContext({ runId: 701 })];
    for (const ctx of holders) {
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'full' }, context: ctx });
      assert.equal(a.outputs.result, 'acquired');
    }
    const seq = lastSeq();
    const once = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'full', 'timeout-minutes': '0' }, context: jobContext({ runId: 702 }) });
    assert.equal(once.code, 0);
    assert.equal(once.outputs.acquired, 'false');
    assert.equal(once.outputs.result, 'timeout');
    assert.equal(writesSince(seq).length, 0);

    const controller = new AbortController();
    const waiterCtx = jobContext({ runId: 703 });
    const waiter = runAction('acquire', { apiUrl: api(), inputs: { lock: 'full', 'poll-seconds': '1' }, context: waiterCtx, signal: controller.signal });
    for (let i = 0; i < 100 && !(await stateOf('full')).queue.length; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await stateOf('full')).queue[0].holderId, 'octo/app:703:build');
    controller.abort('SIGKILL');
    await waiter.catch(() => {});
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'full' }, context: waiterCtx });
    assert.equal(r.outputs.result, 'queue-cleaned');
    assert.equal(r.outputs.released, 'false');
    assert.deepEqual((await stateOf('full')).queue, []);
  });

  test('a waiter is admitted when a holder releases, and logs who holds while it waits', async () => {
    const holder = jobContext({ runId: 710 });
    await runAction('acquire', { apiUrl: api(), inputs: { lock: 'handoff', 'holder-suffix': 'x' }, context: holder });
    const waiterCtx = jobContext({ runId: 711 });
    const waiter = runAction('acquire', { apiUrl: api(), inputs: { lock: 'handoff', 'poll-seconds': '1' }, context: waiterCtx });
    for (let i = 0; i < 100 && !(await stateOf('handoff')).queue.length; i++) await new Promise((r) => setTimeout(r, 50));
    settle(); // the waiter's enqueue is then not recent: the release writes without waiting for the lock to settle
    await runAction('release', { apiUrl: api(), inputs: { lock: 'handoff', 'holder-suffix': 'x' }, context: holder });
    const w = await waiter;
    assert.equal(w.code, 0, w.stderr);
    assert.equal(w.outputs.result, 'acquired');
    assert.equal(w.outputs['queue-position'], '1');
    assert.match(w.stdout, /waiting for handoff: position 1 of 1 in the queue, 1\/1 slots held by octo\/app:710:build:x \(fence 1, since .*https:\/\/github.com\/octo\/app\/actions\/runs\/710\/attempts\/1\)/);
    assert.match(w.stdout, /next poll at/);
  });
});

describe('bad input: an error that names the input, a failing step, no write', { timeout: 60_000 }, () => {
  const cases = [
    ['lock', { lock: 'team/deploy' }, /\[lock\].*must match \[A-Za-z0-9\._-\]\{1,80\}/],
    ['holder-suffix', { lock: 'deploy', 'holder-suffix': 'a\nb' }, /\[holder-suffix\].*line break/],
    ['holder-suffix', { lock: 'deploy', 'holder-suffix': 'a ' }, /\[holder-suffix\].*whitespace/],
    ['timeout-minutes', { lock: 'deploy', 'timeout-minutes': '1.5' }, /\[timeout-minutes\].*whole number/],
    ['poll-seconds', { lock: 'deploy', 'poll-seconds': '0' }, /\[poll-seconds\].*from 1 to 600/],
    ['state-branch', { lock: 'deploy', 'state-branch': 'a..b' }, /\[state-branch\]/],
  ];
  for (const [input, inputs, message] of cases) {
    test(`${input}: ${JSON.stringify(inputs[input])}`, async () => {
      const seq = lastSeq();
      const a = await runAction('acquire', { apiUrl: api(), inputs, context: jobContext({ runId: 800 }) });
      assert.equal(a.code, 1);
      assert.match(a.stdout, new RegExp(`::error::.*${message.source}`));
      assert.equal(a.outputs['error-code'], 'invalid-input');
      assert.equal(a.outputs.acquired, 'false', 'a yes-or-no output says no, never nothing');
      assert.equal(requestsSince(seq).length, 0, 'nothing was sent');
    });
  }

  test('renew and release refused on their inputs say renewed=false and released=false', async () => {
    const renew = await runAction('renew', { apiUrl: api(), inputs: { lock: 'bad name!', nonce: 'x' }, context: jobContext({ runId: 801 }) });
    assert.equal(renew.outputs['error-code'], 'invalid-input');
    assert.equal(renew.outputs.renewed, 'false');
    const release = await runAction('release', { apiUrl: api(), inputs: { lock: 'bad name!' }, context: jobContext({ runId: 801 }) });
    assert.equal(release.outputs['error-code'], 'invalid-input');
    assert.equal(release.outputs.released, 'false');
  });

  // Each lease rule, broken on its own (the other keys are the defaults): acquire fails naming
  // the rule, after reading the config and before writing anything.
  const leaseRules = [
    [{ ttlSeconds: 20 }, 'the lease (ttl) must be at least 30 s'],
    [{ ttlSeconds: 900, maxTtlSeconds: 600 }, 'the lease (ttl) must not exceed the ceiling (maxTtl)'],
    [{ ttlSeconds: 900, maxTtlSeconds: 700000 }, 'the ceiling (maxTtl) must be at most a week'],
    [{ renewSeconds: 500 }, 'the renew interval must be at least 10 s and at most half the lease (ttl)'],
    [{ graceSeconds: 1000 }, 'the grace must be at most the lease (ttl) and at most an hour'],
    [{ skewSeconds: 601 }, 'the skew tolerance must be at most 10 minutes'],
    [{ minRemainingSeconds: 300 }, 'the minimum remaining time must be shorter than the renew interval'],
    [{ ttlSeconds: 120, renewSeconds: 60, minRemainingSeconds: 50, skewSeconds: 0 }, 'a renewal at the renew tick'],
  ];
  for (const [lease, rule] of leaseRules) {
    test(`lease rule: ${rule}`, async () => {
      const lock = `badlease-${Object.keys(lease).join('-')}-${Object.values(lease).join('-')}`;
      await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1, lease }));
      const seq = lastSeq();
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock, 'record-job-id': 'false' }, context: jobContext({ runId: 802 }) });
      assert.equal(a.code, 1);
      assert.equal(a.outputs['error-code'], 'config-invalid');
      assert.ok(a.stdout.includes(`"lease": ${rule}`), a.stdout);
      assert.equal(writesSince(seq).length, 0, 'nothing written');
    });
  }
  for (const bad of ['0', '10081', 'ten']) {
    test(`lease-minutes: ${bad} is refused before any request`, async () => {
      const seq = lastSeq();
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'deploy', 'lease-minutes': bad }, context: jobContext({ runId: 803 }) });
      assert.equal(a.outputs['error-code'], 'invalid-input');
      assert.match(a.stdout, /\[lease-minutes\].*from 1 to 10080/);
      assert.equal(requestsSince(seq).length, 0, 'nothing was sent');
    });
  }

  test('a capacity config out of range fails acquire before any write', async () => {
    await emu.writeFile(emu.defaultBranch, 'locks/badcfg.config.json', '{"capacity": 65}\n');
    const seq = lastSeq();
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'badcfg' }, context: jobContext({ runId: 801 }) });
    assert.equal(a.code, 1);
    assert.equal(a.outputs['error-code'], 'config-invalid');
    assert.match(a.stdout, /locks\/badcfg.config.json: "capacity" must be an integer from 1 to 64 \(got 65\)/);
    assert.equal(writesSince(seq).length, 0);
  });

  test('release reports and ignores an out-of-range deadline', async () => {
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy', 'release-deadline-seconds': '5' }, context: jobContext({ runId: 802 }) });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /::warning::input `release-deadline-seconds` must be 0 or a whole number from 30 to 3600 \(got "5"\); using 120/);
  });

  test('the token is masked before an input error can echo it (acquire, guard)', async () => {
    // A token of no credential shape (the core blanks those itself), echoed by the lock's rule.
    const token = 'plain-secret-value-42';
    for (const name of ['acquire', 'guard']) {
      const own = name === 'guard' ? { nonce: '0123456789abcdef', command: 'true' } : {};
      const r = await runAction(name, { apiUrl: api(), token, inputs: { lock: `bad lock ${token}`, ...own }, context: jobContext({ runId: 803 }) });
      assert.equal(r.code, 1, r.stdout);
      const lines = r.stdout.split('\n');
      const mask = lines.indexOf(`::add-mask::${token}`);
      const echoed = lines.findIndex((l) => l.includes(token) && !l.startsWith('::add-mask::'));
      assert.ok(echoed >= 0, `${name}: the error echoes the value: ${r.stdout}`);
      assert.ok(mask >= 0 && mask < echoed, `${name}: the token is masked before it is echoed:\n${r.stdout}`);
    }
  });

  test('a refused token fails with the status and a hint, and writes nothing', async () => {
    const seq = lastSeq();
    emu.faults.add({ method: 'GET', times: Infinity, action: { status: 403, body: { message: 'Resource not accessible by integration' } } });
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'deploy' }, context: jobContext({ runId: 803 }) });
    assert.equal(a.code, 1);
    assert.equal(a.outputs['error-code'], 'refused');
    assert.match(a.stdout, /403 Resource not accessible by integration.*contents: write/);
    assert.equal(writesSince(seq).length, 0);
  });
});

describe('faults', { timeout: 60_000 }, () => {
  test('a release whose write lands but whose answer is lost reports released after reading back, with no second write', async () => {
    const ctx = jobContext({ runId: 900 });
    await runAction('acquire', { apiUrl: api(), inputs: { lock: 'lost-ack' }, context: ctx });
    const seq = lastSeq();
    const rule = emu.faults.add({ method: 'PUT', path: /lost-ack/, action: { applyThen: 'reset' } });
    const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'lost-ack' }, context: ctx });
    assert.equal(rule.fired, 1);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.outputs.result, 'released');
    assert.equal(writesSince(seq).length, 1, 'exactly one write');
    assert.deepEqual((await stateOf('lost-ack')).holders, []);
  });

  test('an acquire whose write lands behind a 502 finds its own nonce and holds once', async () => {
    const ctx = jobContext({ runId: 901 });
    emu.faults.add({ method: 'PUT', path: /lost-502/, action: { applyThen: { status: 502 } } });
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'lost-502' }, context: ctx });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const state = await stateOf('lost-502');
    assert.equal(state.holders.length, 1);
    assert.equal(state.holders[0].nonce, a.outputs.nonce);
  });

  test('a state branch whose rules refuse every write: acquire fails refused after a few writes on the same version, naming GitHub\'s answer, and changes nothing', async () => {
    // GitHub answers a write that a ruleset refuses 409, as it answers a stale sha; the reads
    // in between show the same version every time, so no newer version is what refused it.
    const ctx = jobContext({ runId: 903 });
    const warm = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'ruled' }, context: ctx });
    await runAction('release', { apiUrl: api(), inputs: { lock: 'ruled' }, context: ctx, env: warm.exported });
    settle();
    const before = await stateOf('ruled');
    const seq = lastSeq();
    const rule = emu.faults.add({
      method: 'PUT',
      path: /ruled\.json$/,
      times: Infinity,
      action: { status: 409, body: { message: 'Repository rule violations found\n\nCannot update this protected ref.\n\n', status: '409' } },
    });
    const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'ruled' }, context: jobContext({ runId: 904 }) });
    assert.equal(a.code, 1, a.stdout);
    assert.equal(a.outputs['error-code'], 'refused');
    assert.match(a.stdout, /409 Repository rule violations found.*4 times in a row on version [0-9a-f]{40}.*ruleset or branch protection on branch leasehold-state/s);
    assert.equal(rule.fired, 4, 'four writes, not the sixty a conflict budget allows');
    assert.equal(writesSince(seq).length, 4);
    assert.deepEqual(await stateOf('ruled'), before);
  });

  test('stale reads after a write are never acted on', async () => {
    const ctx = jobContext({ runId: 902 });
    emu.staleReads({ path: /stale/, ms: 2500 });
    try {
      const a = await runAction('acquire', { apiUrl: api(), inputs: { lock: 'stale' }, context: ctx });
      assert.equal(a.outputs.result, 'acquired');
      const r = await runAction('release', { apiUrl: api(), inputs: { lock: 'stale' }, context: ctx });
      assert.equal(r.outputs.result, 'released', r.stdout);
      assert.deepEqual((await stateOf('stale')).holders, []);
    } finally {
      emu.staleReads(null);
    }
  });
});

describe('status', { timeout: 60_000 }, () => {
  test('reports capacity, holders and queue without writing', async () => {
    const holder = jobContext({ runId: 950 });
    await runAction('acquire', { apiUrl: api(), inputs: { lock: 'deploy' }, context: holder });
    const seq = lastSeq();
    const s = await runAction('status', { apiUrl: api(), inputs: { lock: 'deploy' }, context: jobContext({ runId: 951 }) });
    assert.equal(s.code, 0, s.stdout);
    assert.equal(s.outputs.result, 'status');
    assert.equal(s.outputs.capacity, '2');
    assert.equal(s.outputs.holders, '1');
    assert.equal(s.outputs.waiting, '0');
    assert.equal(JSON.parse(s.outputs.state).holders[0].holderId, 'octo/app:950:build');
    assert.match(s.summary, /### leasehold: status of `deploy`/);
    assert.equal(writesSince(seq).length, 0);
    await runAction('release', { apiUrl: api(), inputs: { lock: 'deploy' }, context: holder });
  });
});
