// actions/claim run as the runner runs it (INPUT_* variables, GITHUB_OUTPUT): claim, renew,
// verify and release one item, a contended claim failing its step with exit-code 10, a bad
// operation or an input of another operation refused before anything is sent, takeover, read and
// adopt, and the `next` lines of a step's result run in a later bash step as the README shows.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, ROOT, runAction } from './helpers/action-runner.mjs';
import { refHistory, runCli, runProcess } from './helpers/claims-cli.mjs';

let emu;
let workspace;
let offset = 0; // GitHub's clock, ahead of this machine's by this much (a lease run out)
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'README.md': 'app\n' }, now: () => Date.now() + offset, limits: { graphqlPerHour: 100_000 } });
  workspace = mkdtempSync(join(tmpdir(), 'leasehold-claim-action-'));
  writeFileSync(join(workspace, 'claims.json'), JSON.stringify({ namespaces: { deploys: { lease: { ttlSeconds: 600, renewSeconds: 200, graceSeconds: 60, maxTtlSeconds: 1800, skewSeconds: 0, minRemainingSeconds: 60 } } } }));
});
after(async () => {
  await emu.close();
  rmSync(workspace, { recursive: true, force: true });
});

const step = (inputs, runId = 5000) => runAction('claim', { apiUrl: emu.url, inputs: { namespace: 'deploys', key: 'prod', config: 'claims.json', ...inputs }, context: jobContext({ runId }), env: { GITHUB_WORKSPACE: workspace } });

test('claim, renew, verify, release through the outputs; a second job is contended (exit-code 10, the step fails)', async () => {
  const c = await step({ operation: 'claim', metadata: 'sha=abc123\nenv=prod' });
  assert.equal(c.code, 0, c.stdout);
  assert.equal(c.outputs.status, 'acquired');
  assert.equal(c.outputs['exit-code'], '0');
  assert.match(c.outputs.token, /^[0-9a-f]{40}$/);
  const doc = JSON.parse(c.outputs.result);
  assert.equal(doc.claim.items[0].payload.metadata.sha, 'abc123');
  assert.equal(Date.parse(c.outputs['expires-at']) - Date.parse(doc.claim.items[0].payload.lease.claimedAt), 600_000, 'the config file\'s lease');
  assert.equal(doc.claim.items[0].payload.run.runId, 5000, 'the job recorded');

  const other = await step({ operation: 'claim' }, 5001);
  assert.equal(other.code, 1);
  assert.equal(other.outputs.status, 'contended');
  assert.equal(other.outputs['exit-code'], '10');

  const held = { 'claim-token': c.outputs.token, 'run-id': c.outputs['run-id'] };
  const r = await step({ operation: 'renew', ...held });
  assert.equal(r.outputs.status, 'renewed', r.stdout);
  assert.notEqual(r.outputs.token, c.outputs.token);
  const v = await step({ operation: 'verify', 'claim-token': r.outputs.token, 'run-id': c.outputs['run-id'] });
  assert.equal(v.outputs.status, 'held', v.stdout);
  const dry = await step({ operation: 'release', 'claim-token': r.outputs.token, 'run-id': c.outputs['run-id'], 'dry-run': 'true' });
  assert.equal(dry.outputs.status, 'released');
  assert.equal(refHistory(emu, 'deploys', 'prod').length, 2, 'the dry run wrote nothing');
  const rel = await step({ operation: 'release', 'claim-token': r.outputs.token, 'run-id': c.outputs['run-id'] });
  assert.equal(rel.code, 0, rel.stdout);
  assert.equal(rel.outputs.status, 'released');
  assert.equal(rel.outputs['expires-at'], '');
  assert.deepEqual(refHistory(emu, 'deploys', 'prod').map((x) => x.payload.state), ['held', 'held', 'released']);
});

test('the token is masked before an input error can echo it', async () => {
  // A token of no credential shape (the core blanks those itself), echoed by the key's rule.
  const token = 'plain-secret-value-43';
  const r = await runAction('claim', { apiUrl: emu.url, token, inputs: { operation: 'claim', namespace: 'deploys', key: `bad key ${token}`, config: 'claims.json' }, context: jobContext({ runId: 5900 }), env: { GITHUB_WORKSPACE: workspace } });
  assert.equal(r.outputs.status, 'usage', r.stdout);
  const lines = r.stdout.split('\n');
  const mask = lines.indexOf(`::add-mask::${token}`);
  const echoed = lines.findIndex((l) => l.includes(token) && !l.startsWith('::add-mask::'));
  assert.ok(echoed >= 0, `the error echoes the value: ${r.stdout}`);
  assert.ok(mask >= 0 && mask < echoed, `the token is masked before it is echoed:\n${r.stdout}`);
});

test('a bad operation or a missing input is refused before anything is sent (usage, exit-code 2)', async () => {
  const from = emu.log.length;
  const bad = await step({ operation: 'steal' });
  assert.equal(bad.code, 1);
  assert.equal(bad.outputs.status, 'usage');
  assert.equal(bad.outputs['exit-code'], '2');
  const noToken = await step({ operation: 'renew', 'run-id': 'run-1' });
  assert.equal(noToken.outputs.status, 'usage');
  assert.match(noToken.stdout, /token/);
  assert.equal(emu.log.length, from);
});

test('a job cancelled mid-claim: before the write nothing is written (cancelled, 10); after it the outputs carry the token the release step gives back', async () => {
  const cancelled = (key, runId, rule) => {
    let child;
    const held = emu.faults.add({ method: 'POST', path: '/graphql', ...rule, action: { pause: true, ...rule.action } });
    const run = runAction('claim', { apiUrl: emu.url, inputs: { namespace: 'deploys', key, config: 'claims.json', operation: 'claim' }, context: jobContext({ runId }), env: { GITHUB_WORKSPACE: workspace }, onSpawn: (c) => (child = c) });
    return held.paused.then(() => {
      // The runner's SIGINT, with the request in flight; then GitHub answers.
      child.kill('SIGINT');
      setTimeout(() => held.remove(), 200);
      return run;
    });
  };
  const early = await cancelled('cancel-early', 5100, { action: { at: 'request' } });
  assert.equal(early.outputs.status, 'cancelled', early.stdout);
  assert.equal(early.outputs['exit-code'], '10');
  assert.equal(early.outputs.token, '');
  assert.deepEqual(refHistory(emu, 'deploys', 'cancel-early'), [], 'nothing written');

  // The mutation landed, its answer held: the claim is reported with its token.
  const late = await cancelled('cancel-late', 5101, { skip: 1, action: { at: 'afterApply' } });
  assert.equal(late.outputs.status, 'acquired', late.stdout);
  assert.match(late.outputs.token, /^[0-9a-f]{40}$/);
  const given = await runAction('claim', { apiUrl: emu.url, inputs: { namespace: 'deploys', key: 'cancel-late', config: 'claims.json', operation: 'release', 'claim-token': late.outputs.token, 'run-id': late.outputs['run-id'] }, context: jobContext({ runId: 5101 }), env: { GITHUB_WORKSPACE: workspace } });
  assert.equal(given.outputs.status, 'released', given.stdout);
});

/** A `next` line run as the README's later step runs it: bash, the line passed through `env`
 *  (stdin closed: bash would take a socket for a remote shell and read ~/.bashrc). */
const laterStep = (script, env) => runProcess('bash', ['-c', script], { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token', ...env });

test('takeover from the expired step\'s token, read, and inputs of another operation refused by name with nothing sent', async () => {
  const c = await step({ operation: 'claim', key: 'expiring' }, 5200);
  assert.equal(c.outputs.status, 'acquired', c.stdout);
  offset = 700_000; // past the config's 600 s expiry and 60 s grace
  try {
    const e = await step({ operation: 'claim', key: 'expiring', 'no-takeover': 'true' }, 5201);
    assert.equal(e.outputs.status, 'expired', e.stdout);
    assert.equal(e.outputs['exit-code'], '11');
    assert.equal(e.outputs.token, c.outputs.token, 'the expired holding\'s token, for supersedes');

    const from = emu.log.length;
    for (const [inputs, input] of [
      [{ operation: 'claim', key: 'expiring', supersedes: e.outputs.token }, 'supersedes'],
      [{ operation: 'renew', key: 'expiring', 'claim-token': c.outputs.token, 'run-id': c.outputs['run-id'], candidate: c.outputs.token }, 'candidate'],
      [{ operation: 'release', key: 'expiring', 'claim-token': c.outputs.token, 'run-id': c.outputs['run-id'], metadata: 'sha=abc' }, 'set'],
      [{ operation: 'read', key: 'expiring', 'claim-token': c.outputs.token }, 'token'],
      [{ operation: 'takeover', key: 'expiring' }, 'supersedes'],
    ]) {
      const r = await step(inputs, 5201);
      assert.equal(r.outputs.status, 'usage', `${inputs.operation} with ${input}: ${r.stdout}`);
      assert.equal(r.outputs['exit-code'], '2');
      assert.match(r.stdout, new RegExp(`\\b${input}\\b`), r.stdout);
    }
    assert.equal(emu.log.length, from, 'nothing sent');

    const t = await step({ operation: 'takeover', key: 'expiring', supersedes: e.outputs.token, metadata: 'by=takeover' }, 5201);
    assert.equal(t.code, 0, t.stdout);
    assert.equal(t.outputs.status, 'taken-over');
    assert.notEqual(t.outputs.token, c.outputs.token);
    assert.match(t.outputs['run-id'], /^run-/);
    assert.notEqual(t.outputs['run-id'], c.outputs['run-id']);
    const history = refHistory(emu, 'deploys', 'expiring');
    assert.equal(history.at(-1).payload.supersedes, c.outputs.token);
    assert.equal(history.at(-1).payload.metadata.by, 'takeover');

    // The same takeover again: the item is held (live) by the takeover's run, nothing is written.
    const again = await step({ operation: 'takeover', key: 'expiring', supersedes: e.outputs.token }, 5202);
    assert.equal(again.outputs.status, 'contended', again.stdout);
    assert.equal(again.outputs['exit-code'], '10');
    assert.equal(refHistory(emu, 'deploys', 'expiring').length, history.length);

    const read = await step({ operation: 'read', key: 'expiring' }, 5203);
    assert.equal(read.code, 0, read.stdout);
    assert.equal(read.outputs.status, 'ok');
    assert.equal(read.outputs.token, t.outputs.token);
    assert.equal(read.outputs['run-id'], '', 'another run\'s run id is no output of a read');
    assert.equal(JSON.parse(read.outputs.result).claim.items[0].payload.runId, t.outputs['run-id']);
    assert.equal(read.outputs['expires-at'], t.outputs['expires-at']);
    const absent = await step({ operation: 'read', key: 'never-claimed' }, 5203);
    assert.equal(absent.outputs.status, 'ok', absent.stdout);
    assert.equal(absent.outputs.token, '');
  } finally {
    offset = 0;
  }
});

test('adopt after an unknown outcome: this run\'s write is adopted with its token; another run id is lost (13)', async () => {
  // The claim's update applied and answered 502, its read-backs too: unknown-outcome (12).
  const rule = emu.faults.add({ method: 'POST', path: '/graphql', skip: 1, times: Infinity, action: { applyThen: { status: 502 } } });
  let u;
  try {
    u = await runCli(emu, ['claims', 'claim', '--namespace', 'deploys', '--key', 'doubt', '--api-max-attempts', '2', '--api-retry-base-ms', '10', '--api-retry-max-ms', '20']);
  } finally {
    rule.remove();
  }
  assert.equal(u.doc.status, 'unknown-outcome', u.stdout);
  const candidate = u.doc.claim.items[0].candidate;
  const head = refHistory(emu, 'deploys', 'doubt');
  assert.equal(head.length, 1, 'the write landed');

  const other = await step({ operation: 'adopt', key: 'doubt', 'run-id': 'run-someone-else', ...(candidate ? { candidate } : {}) }, 5300);
  assert.equal(other.outputs.status, 'lost', other.stdout);
  assert.equal(other.outputs['exit-code'], '13');
  const adopted = await step({ operation: 'adopt', key: 'doubt', 'run-id': u.doc.claim.runId, ...(candidate ? { candidate } : {}) }, 5300);
  assert.equal(adopted.code, 0, adopted.stdout);
  assert.equal(adopted.outputs.status, 'adopted');
  assert.equal(adopted.outputs.token, head[0].oid);
  assert.equal(adopted.outputs['run-id'], u.doc.claim.runId);
  assert.equal(refHistory(emu, 'deploys', 'doubt').length, 1, 'adopt reads only');
});

test('the next lines run in a later bash step as the README shows: the guard with the command in its place, then the release its exit document names; next.release as printed', async () => {
  const g = await step({ operation: 'claim', key: 'guarded' }, 5400);
  assert.equal(g.outputs.status, 'acquired', g.stdout);
  const guard = JSON.parse(g.outputs.result).next.guard;
  assert.ok(guard.startsWith(`${process.execPath} `), guard);
  assert.match(guard, /dist\/cli\.mjs claims guard /);
  assert.ok(guard.includes(`--config=${join(workspace, 'claims.json')}`) || guard.includes(`--config ${join(workspace, 'claims.json')}`), `the config by its absolute path: ${guard}`);
  // The README's step, word for word (the work a command that prints and succeeds).
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = readme.match(/        run: \|\n((?: {10}.*\n)+)/)?.[1];
  assert.ok(block?.includes('eval "${GUARD% -- *} -- ./work-on-issue.sh"'), 'the README\'s guard step');
  const script = block.replace(/^ {10}/gm, '').replace('./work-on-issue.sh', "sh -c 'echo worked-under-the-claim'");
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-guard-step-'));
  try {
    const ran = await laterStep(`cd '${dir}' && ${script}`, { GUARD: guard });
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    assert.match(ran.stdout, /worked-under-the-claim/);
    // The command's line, then the release's document.
    const last = JSON.parse(ran.stdout.trim().split('\n').at(-1));
    assert.equal(last.status, 'released', `the release the guard's exit document named:\n${ran.stdout}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const states = refHistory(emu, 'deploys', 'guarded').map((x) => `${x.payload.state} ${x.payload.action}`);
  assert.deepEqual(states.slice(0, 2), ['held acquire', 'held renew'], 'the guard verified with a renewal');
  assert.equal(states.at(-1), 'released release', 'given back with the token the guard renewed last');

  const c = await step({ operation: 'claim', key: 'released-later' }, 5401);
  const release = await laterStep('cd / && eval "$RELEASE"', { RELEASE: JSON.parse(c.outputs.result).next.release });
  assert.equal(release.code, 0, `${release.stdout}\n${release.stderr}`);
  assert.equal(release.doc.status, 'released');
  assert.deepEqual(refHistory(emu, 'deploys', 'released-later').map((x) => x.payload.state), ['held', 'released']);
});
