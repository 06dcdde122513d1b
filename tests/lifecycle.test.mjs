// The lifecycle after release (docs/lifecycle.md), process by process against the emulator:
// the acquire, release and recover actions as the runner runs them, and every commit the state
// branch ever had read back.
// - a confirmed cleanup starts a cooldown: the next waiter is admitted no earlier than its end,
//   woken by it rather than by its (long) poll;
// - an unknown cleanup quarantines the slot: a waiter on another runner times out, one on the
//   runner that left it reclaims it;
// - a blocked report raises the incident: holders finish, a new acquire fails `incident` and
//   never joins the queue, recover-incident ends it (a wrong id or no confirmation writes
//   nothing), recover turns a quarantine into a cooldown;
// - an acquire meeting the incident with its queue entry in, whose removal is answered 502 and
//   whose reads then fail, finishes `incident-cleanup-failed` (the entry is left for the reaper);
// - a schema-1 state is migrated on the next write; activation on a busy lock and a config
//   dropping `lifecycle` while reservations stand are refused, writing nothing;
// - every invalid report degrades to a quarantine, fails the step and leaves nothing of the
//   rejected value in any commit or in the step's log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const lifecycle = (cooldownSeconds, capacity = 1) => `${JSON.stringify({ capacity, lifecycle: { cooldownSeconds } })}\n`;
let emu;

before(async () => {
  emu = await startEmulator({
    owner: 'octo',
    repo: 'locks',
    files: {
      'locks/cool.config.json': lifecycle(4),
      'locks/quar.config.json': lifecycle(1),
      'locks/inc.config.json': lifecycle(1, 2),
      'locks/mig.config.json': lifecycle(1),
      'locks/busy.config.json': lifecycle(1),
      'locks/down.config.json': lifecycle(1),
      'locks/bad.config.json': lifecycle(1, 8),
      'locks/plain.config.json': '{"capacity": 1}\n',
      'locks/post.config.json': lifecycle(1),
    },
  });
});
after(() => emu.close());

let runs = 8000;
const ctx = (runner) => {
  runs += 1;
  return jobContext({ repository: 'octo/app', runId: runs, job: 'build', runner: runner ?? `runner-${runs}` });
};
const base = (lock) => ({ lock, repository: 'octo/locks', 'record-job-id': 'false' });
const acquire = (lock, context, extra = {}) => runAction('acquire', { apiUrl: emu.url, inputs: { ...base(lock), 'timeout-minutes': '1', 'poll-seconds': '1', ...extra }, context });
const release = (lock, context, report = {}) => runAction('release', { apiUrl: emu.url, inputs: { ...base(lock), ...report }, context });
const recover = (lock, inputs) => runAction('recover', { apiUrl: emu.url, inputs: { lock, repository: 'octo/locks', ...inputs }, context: ctx() });
const states = async (lock) => (await emu.history('leasehold-state', `locks/${lock}.json`)).map((h) => JSON.parse(h.content));
const current = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));
const log = (r) => r.stdout + r.stderr;

test('a confirmed cleanup starts a cooldown: the next waiter is admitted at its end, not before and not a poll later', async () => {
  const a = ctx();
  assert.equal((await acquire('cool', a)).outputs.acquired, 'true');
  const r = await release('cool', a, { cleanup: 'confirmed', health: 'healthy', reason: 'completed' });
  assert.equal(r.code, 0, log(r));
  assert.equal(r.outputs['cleanup-result'], 'cooldown-started');
  const cooldown = (await current('cool')).reservations[0];
  assert.equal(cooldown.kind, 'cooldown');
  assert.equal(r.outputs['reservation-id'], cooldown.id);
  assert.equal(cooldown.reason, 'completed');
  assert.equal(Date.parse(cooldown.endsAt) - Date.parse(cooldown.at), 4000);
  // The waiter polls every 10 minutes: only the cooldown's end can wake it within the minute.
  const b = await acquire('cool', ctx(), { 'poll-seconds': '600', 'timeout-minutes': '5' });
  assert.equal(b.outputs.acquired, 'true', log(b));
  assert.ok(Number(b.outputs['wait-ms']) < 60_000, `woken by the cooldown's end, not its 600 s poll: waited ${b.outputs['wait-ms']} ms`);
  const holding = (await current('cool')).holders.find((h) => h.holderId === b.outputs['holder-id']);
  assert.ok(Date.parse(holding.acquiredAt) >= Date.parse(cooldown.endsAt), `admitted at ${holding.acquiredAt}, the cooldown ends at ${cooldown.endsAt}`);
  for (const s of await states('cool')) {
    assert.ok(s.holders.length + (s.reservations ?? []).length <= 1, `revision ${s.revision}: holders and reservations within capacity`);
  }
  await release('cool', jobContext({ repository: 'octo/app', runId: Number(b.outputs['holder-id'].split(':')[1]), job: 'build' }), { cleanup: 'confirmed' });
});

test('an unknown cleanup quarantines: a waiter on another runner times out, one on the same runner reclaims it', async () => {
  const a = ctx('shared-runner');
  assert.equal((await acquire('quar', a)).outputs.acquired, 'true');
  const r = await release('quar', a, { cleanup: 'unknown' });
  assert.equal(r.code, 0, log(r));
  assert.equal(r.outputs['cleanup-result'], 'quarantined');
  const q = (await current('quar')).reservations[0];
  assert.equal(q.kind, 'quarantine');
  assert.equal(q.run.runnerName, 'shared-runner');
  const other = await acquire('quar', ctx('another-runner'), { 'timeout-minutes': '0' });
  assert.equal(other.outputs.result, 'timeout', log(other));
  const same = await acquire('quar', ctx('shared-runner'), { 'timeout-minutes': '0' });
  assert.equal(same.outputs.acquired, 'true', log(same));
  const after = await current('quar');
  assert.deepEqual(after.reservations ?? [], [], 'the quarantine was taken over');
  assert.deepEqual(after.holders.map((h) => h.holderId), [same.outputs['holder-id']]);
  // A release without any report (as the post step's cleanup) quarantines too.
  const last = await release('quar', jobContext({ repository: 'octo/app', runId: Number(same.outputs['holder-id'].split(':')[1]), job: 'build', runner: 'shared-runner' }));
  assert.equal(last.outputs['cleanup-result'], 'quarantined');
});

test("acquire's post step on a job that never released quarantines the slot and says so, with the id recover needs", async () => {
  const a = ctx();
  const main = await acquire('post', a);
  assert.equal(main.outputs.acquired, 'true', log(main));
  const post = await runAction('acquire', { apiUrl: emu.url, inputs: { ...base('post'), 'timeout-minutes': '1', 'poll-seconds': '1' }, context: a, phase: 'post', state: main.state });
  const q = (await current('post')).reservations[0];
  assert.equal(q.kind, 'quarantine');
  assert.match(log(post), new RegExp(`quarantined as ${q.id} \\(recover it with reservation-id ${q.id}`));
});

test('a blocked report raises the incident; a new acquire fails without queueing; recover-incident ends it', async () => {
  const a = ctx();
  const b = ctx();
  assert.equal((await acquire('inc', a)).outputs.acquired, 'true');
  assert.equal((await acquire('inc', b)).outputs.acquired, 'true');
  const blocked = await release('inc', a, { cleanup: 'unknown', health: 'blocked', reason: 'account-blocked' });
  assert.equal(blocked.code, 0, log(blocked));
  assert.equal(blocked.outputs['cleanup-result'], 'incident');
  const incident = (await current('inc')).incident;
  assert.equal(blocked.outputs['incident-id'], incident.id);
  const quarantine = blocked.outputs['reservation-id'];

  const c = ctx();
  const refused = await acquire('inc', c, { 'timeout-minutes': '5' });
  assert.notEqual(refused.code, 0, 'the step fails');
  assert.equal(refused.outputs.acquired, 'false');
  assert.equal(refused.outputs.result, 'incident');
  assert.equal(refused.outputs['incident-id'], incident.id);
  for (const s of await states('inc')) {
    assert.ok(!s.queue.some((e) => e.holderId.includes(`:${runs}:`)), `revision ${s.revision}: the refused acquire never queued`);
  }
  // The holder admitted before it finishes.
  const fine = await release('inc', b, { cleanup: 'confirmed' });
  assert.equal(fine.outputs['cleanup-result'], 'cooldown-started');

  // Fail closed, nothing written: no confirmation; a wrong id; a quarantine id that is not one.
  const before = (await states('inc')).length;
  const unconfirmed = await recover('inc', { operation: 'recover-incident' });
  assert.equal(unconfirmed.outputs['error-code'], 'unconfirmed');
  const wrong = await recover('inc', { operation: 'recover-incident', 'incident-id': 'inc-incident-1', confirmed: 'true' });
  assert.equal(wrong.outputs['error-code'], 'no-such-incident');
  const notQuarantine = await recover('inc', { operation: 'recover', 'reservation-id': 'q999', 'resource-safe': 'true' });
  assert.equal(notQuarantine.outputs['error-code'], 'no-such-reservation');
  for (const r of [unconfirmed, wrong, notQuarantine]) assert.notEqual(r.code, 0);
  assert.equal((await states('inc')).length, before, 'nothing was written');

  const ended = await recover('inc', { operation: 'recover-incident', confirmed: 'true' });
  assert.equal(ended.code, 0, log(ended));
  assert.equal(ended.outputs.result, 'incident-recovered');
  assert.equal(ended.outputs['incident-id'], incident.id);
  assert.equal((await current('inc')).incident, undefined);
  const again = await recover('inc', { operation: 'recover-incident', confirmed: 'true' });
  assert.equal(again.outputs['error-code'], 'no-such-incident', 'no incident left');

  const recovered = await recover('inc', { operation: 'recover', 'reservation-id': quarantine, 'resource-safe': 'true' });
  assert.equal(recovered.outputs.result, 'recovered', log(recovered));
  const kept = (await current('inc')).reservations.find((r) => r.id === recovered.outputs['reservation-id']);
  assert.equal(kept.kind, 'cooldown', 'a recovered quarantine becomes a cooldown, never freed outright');
  const d = await acquire('inc', ctx());
  assert.equal(d.outputs.acquired, 'true', log(d));
});

test('a schema-1 state is migrated on the next write; activation on a busy lock writes nothing', async () => {
  const idle = { schema: 1, lock: 'mig', revision: 3, fence: 5, holders: [], queue: [] };
  await emu.writeFile('leasehold-state', 'locks/mig.json', `${JSON.stringify(idle, null, 2)}\n`);
  const a = await acquire('mig', ctx());
  assert.equal(a.outputs.acquired, 'true', log(a));
  assert.equal(a.outputs.fence, '6', 'fences go on from the schema-1 state');
  const after = await current('mig');
  assert.equal(after.schema, 2);
  assert.equal(after.config.lifecycle.cooldownSeconds, 1);

  const busy = {
    schema: 1, lock: 'busy', revision: 2, fence: 1, queue: [],
    holders: [{ holderId: 'octo/app:1:build', nonce: 'n1', fence: 1, run: { repository: 'octo/app', runId: 1, runAttempt: 1, job: 'build' }, acquiredAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 3_600_000).toISOString(), leaseMs: 3_600_000, ceilingAt: new Date(Date.now() + 3_600_000).toISOString() }],
  };
  await emu.writeFile('leasehold-state', 'locks/busy.json', `${JSON.stringify(busy, null, 2)}\n`);
  const before = (await states('busy')).length;
  const refused = await acquire('busy', ctx());
  assert.notEqual(refused.code, 0);
  assert.equal(refused.outputs['error-code'], 'lifecycle-activation-busy', log(refused));
  assert.equal((await states('busy')).length, before, 'nothing was written');
  assert.equal((await current('busy')).schema, 1);
});

test('a config dropping lifecycle while reservations stand is refused', async () => {
  const a = ctx();
  assert.equal((await acquire('down', a)).outputs.acquired, 'true');
  assert.equal((await release('down', a, { cleanup: 'unknown' })).outputs['cleanup-result'], 'quarantined');
  await emu.writeFile(emu.defaultBranch, 'locks/down.config.json', '{"capacity": 1}\n');
  // The state's record of the config is fresh for a while (acquire reads the config again only
  // once it is not): age it, as time would.
  const aged = await current('down');
  aged.config.readAt = new Date(Date.now() - 3_600_000).toISOString();
  aged.revision += 1;
  await emu.writeFile('leasehold-state', 'locks/down.json', `${JSON.stringify(aged, null, 2)}\n`);
  const before = (await states('down')).length;
  const refused = await acquire('down', ctx());
  assert.notEqual(refused.code, 0);
  assert.equal(refused.outputs['error-code'], 'lifecycle-downgrade', log(refused));
  assert.equal((await states('down')).length, before, 'nothing was written');
  assert.equal((await current('down')).reservations.length, 1, 'the quarantine stands');
});

describe('an invalid report degrades to a quarantine, fails the step and stores nothing of it', () => {
  const SECRET = 'ghp_' + 'Z'.repeat(36);
  const CASES = {
    'confirmed but blocked': [{ cleanup: 'confirmed', health: 'blocked' }, 'confirmed-blocked-contradiction', 'blocked'],
    'an unknown cleanup word': [{ cleanup: 'mostly-done' }, 'invalid-cleanup', 'mostly-done'],
    'an unknown health word': [{ cleanup: 'confirmed', health: 'so-so' }, 'invalid-health', 'so-so'],
    'an unknown reason': [{ cleanup: 'confirmed', reason: 'gremlins' }, 'invalid-reason', 'gremlins'],
    'a reason shaped like a credential': [{ cleanup: 'confirmed', reason: SECRET }, 'credential-shape', SECRET],
    'a cleanup shaped like a credential': [{ cleanup: SECRET }, 'credential-shape', SECRET],
  };
  for (const [name, [report, code, rejected]] of Object.entries(CASES)) {
    test(name, async () => {
      const a = ctx();
      assert.equal((await acquire('bad', a)).outputs.acquired, 'true');
      const r = await release('bad', a, report);
      assert.notEqual(r.code, 0, 'the step fails');
      assert.equal(r.outputs.released, 'true', 'the holder was released all the same');
      assert.equal(r.outputs['report-degraded'], 'true');
      assert.equal(r.outputs['report-validation-error'], code);
      assert.equal(r.outputs['cleanup-result'], 'quarantined');
      const q = (await current('bad')).reservations.find((x) => x.id === r.outputs['reservation-id']);
      assert.equal(q.kind, 'quarantine');
      assert.equal(q.reason, undefined, 'no reason of a rejected report is kept');
      if (rejected !== 'blocked') {
        for (const h of await emu.history('leasehold-state', 'locks/bad.json')) assert.ok(!h.content.includes(rejected), `commit ${h.commit} holds the rejected value`);
        assert.ok(!log(r).includes(rejected), 'the step log never shows the rejected value');
        assert.ok(!r.summary.includes(rejected), 'nor the job summary');
      }
      assert.equal((await current('bad')).incident, undefined, 'a contradictory report raises no incident');
    });
  }
});

test('without lifecycle a release frees the slot as before, and the state stays schema 1', async () => {
  const a = ctx();
  assert.equal((await acquire('plain', a)).outputs.acquired, 'true');
  const r = await release('plain', a, { cleanup: 'unknown' });
  assert.equal(r.code, 0, log(r));
  assert.equal(r.outputs['cleanup-result'], 'released');
  const s = await current('plain');
  assert.equal(s.schema, 1);
  assert.deepEqual(s.holders, []);
  assert.equal('reservations' in s, false);
});

test('the reaper quarantines a dead holder, recovers an aged quarantine of a finished run as a cooldown, and recovers nothing during an incident', async () => {
  const iso = (ms) => new Date(ms).toISOString();
  const now = Date.now();
  const run = (runId) => ({ repository: 'octo/locks', runId, runAttempt: 1, job: 'build', runnerName: `runner-${runId}` });
  for (const id of [8901, 8902, 8911, 8912]) {
    await emu.actions.startRun(id, { jobs: [{ name: 'build', runnerName: `runner-${id}` }] });
    await emu.actions.complete(id, 1, 'success');
  }
  const stateWith = (lock, holderRun, quarantineRun, incident) => ({
    schema: 2, lock, revision: 4, fence: 2, queue: [],
    config: { capacity: 2, readAt: iso(now), lifecycle: { cooldownSeconds: 1 } },
    holders: [{ holderId: `octo/locks:${holderRun}:build`, nonce: 'n2', fence: 2, run: run(holderRun), acquiredAt: iso(now - 60_000), expiresAt: iso(now + 3_600_000), leaseMs: 3_600_000, ceilingAt: iso(now + 3_600_000) }],
    reservations: [{ id: 'q1', kind: 'quarantine', holderId: `octo/locks:${quarantineRun}:build`, fence: 1, run: run(quarantineRun), at: iso(now - 7 * 3_600_000), by: 'release' }],
    ...(incident ? { incident: { id: `${lock}-incident-3`, holderId: `octo/locks:${quarantineRun}:build`, fence: 1, run: run(quarantineRun), at: iso(now - 7 * 3_600_000) } } : {}),
  });
  for (const [lock, holderRun, quarantineRun, incident] of [['reaped', 8901, 8902, false], ['reaped-incident', 8911, 8912, true]]) {
    await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, lifecycle(1, 2));
    await emu.writeFile('leasehold-state', `locks/${lock}.json`, `${JSON.stringify(stateWith(lock, holderRun, quarantineRun, incident), null, 2)}\n`);
    const r = await runAction('reap', { apiUrl: emu.url, inputs: { lock, repository: 'octo/locks' }, context: ctx() });
    assert.equal(r.code, 0, log(r));
    const s = await current(lock);
    assert.deepEqual(s.holders, [], `${lock}: the dead holder was removed`);
    const kinds = Object.fromEntries(s.reservations.map((x) => [x.id, x.kind]));
    assert.equal(kinds.q2, 'quarantine', `${lock}: the dead holder's slot is quarantined, not freed`);
    if (incident) {
      assert.equal(kinds.q1, 'quarantine', 'nothing is recovered while the incident stands');
      assert.ok(s.incident);
    } else {
      assert.equal(kinds.c1, 'cooldown', 'the aged quarantine of a finished run became a cooldown');
      assert.equal(kinds.q1, undefined);
    }
  }
});

test('an acquire meeting the incident whose queue removal cannot be confirmed (502, then 503s) fails incident-cleanup-failed', async () => {
  const iso = (ms) => new Date(ms).toISOString();
  const now = Date.now();
  const c = ctx('runner-clean');
  const me = `octo/app:${runs}:build`;
  const state = {
    schema: 2, lock: 'clean', revision: 4, fence: 2, holders: [],
    config: { capacity: 1, readAt: iso(now), lifecycle: { cooldownSeconds: 1 } },
    queue: [{ holderId: me, nonce: 'aaaaaaaaaaaaaaaa', run: { repository: 'octo/app', runId: runs, runAttempt: 1, job: 'build', runnerName: 'runner-clean' }, leaseMs: 3_600_000, enqueuedAt: iso(now - 5000), lastSeenAt: iso(now - 5000) }],
    incident: { id: 'clean-incident-3', holderId: 'octo/web:5:ship', fence: 1, run: { repository: 'octo/web', runId: 5, runAttempt: 1, job: 'ship' }, at: iso(now - 60_000), reason: 'account-blocked' },
  };
  await emu.writeFile(emu.defaultBranch, 'locks/clean.config.json', lifecycle(1));
  await emu.writeFile('leasehold-state', 'locks/clean.json', `${JSON.stringify(state, null, 2)}\n`);
  const path = '/repos/octo/locks/contents/locks/clean.json';
  const put = emu.faults.add({ method: 'PUT', path, action: { status: 502 } });
  const gets = emu.faults.add({ method: 'GET', path, skip: 1, times: 1000, action: { status: 503 } });
  try {
    const r = await acquire('clean', c, { 'timeout-minutes': '1' });
    assert.equal(put.fired, 1, 'the removal was written once, answered 502');
    assert.ok(gets.fired >= 1, 'and read back, answered 503');
    assert.notEqual(r.code, 0, 'the step fails');
    assert.equal(r.outputs.result, 'incident-cleanup-failed', log(r));
    assert.equal(r.outputs.acquired, 'false');
    assert.equal(r.outputs['error-code'], 'incident-cleanup-failed', log(r));
  } finally {
    emu.faults.clear();
  }
  // The 502 was not applied: the entry is still there for the reaper (or a rerun) to remove.
  assert.deepEqual((await current('clean')).queue.map((e) => e.holderId), [me]);
});
