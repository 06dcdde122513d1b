// actions/claim run as the runner runs it (INPUT_* variables, GITHUB_OUTPUT): claim, renew,
// verify and release one item, a contended claim failing its step with exit-code 10, and a bad
// operation refused before anything is sent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';
import { refHistory } from './helpers/claims-cli.mjs';

let emu;
let workspace;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'README.md': 'app\n' }, limits: { graphqlPerHour: 100_000 } });
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
