// Secret scan: every JavaScript action (acquire with its post step, release, renew, status, reap,
// guard, claim, report-usage, receipt, check-head, audit, cleanup, recover, validate; actions/run
// is a composite of the acquire, guard, cleanup and release bundles) run as the runner runs it,
// and every CLI verb (renew, guard, reap, every claims verb, slots, each --help), against the emulator with a recognisable token (`ghs_` + 36 characters
// drawn for this run). Then everything leasehold wrote is scanned: every object of the emulated
// repository (every commit of the state branch and of every claim and slot ref: file contents,
// paths, commit messages), GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY, GITHUB_ENV,
// GITHUB_PATH and any other file a step left in its directory, stdout and stderr, the environment
// the guarded child saw (it dumps `env` to a file), and the bodies, paths and headers of every
// request the emulator received (the Authorization header carries the token by design: the
// emulator's recorder redacts it, and it is not scanned). Expected: the token 0 times, and 0
// credential shapes, by the core's own list (`credentialShape` of the wasm binding). The one
// line allowed to name the token is `::add-mask::<token>` on stdout: the runner command that
// masks it, never shown in a log.
//
// How to check that this test can fail (done when it was written: 12 artefacts with the token,
// 12 with a credential shape, the scan failed): make the actions leak the token, rebuild the
// bundles, run this file, restore. In actions/lib/run.mjs, in maskedToken(), after
// `core.setSecret(token)`, add `if (token) core.summary.addRaw(`t ${token}`).write();` (or a
// `console.log(token)`); then `node .ci/bundle.mjs && node --test tests/secret-scan.test.mjs`
// fails naming the GITHUB_STEP_SUMMARY (or stdout) of every action step; `git checkout actions
// dist` (and removing the new dist/shared-*.mjs) restores it. Likewise the guard's filter: with
// `childEnv` in actions/lib/guard.mjs returning `{ ...env }`, the three guarded children's
// environments carry the token and the scan fails naming them; with the cleanup command spawned
// with `env: { ...env }` in actions/lib/cleanup.mjs, it fails naming "actions/cleanup: the guarded
// child's environment" (checked the same way when cleanup joined the scan).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadCore } from '../dist/leasehold-core.mjs';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';
import { runCli } from './helpers/claims-cli.mjs';

const { credentialShape } = loadCore();
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN = `ghs_${[...randomBytes(36)].map((b) => ALNUM[b % ALNUM.length]).join('')}`;
const MASK_LINE = `::add-mask::${TOKEN}`;

let emu;
let scratch;
const exchanges = [];
/** Everything leasehold wrote, as { where, text }. */
const written = [];
let dumps = 0;

before(async () => {
  emu = await startEmulator({
    owner: 'octo',
    repo: 'app',
    files: {
      'README.md': 'app\n',
      'locks/scan.config.json': '{"capacity": 2}\n',
      'locks/scan-pool.config.json': '{"resources": {"acct-1": {"capacity": 2, "tags": ["model"]}}}\n',
      'locks/scan-life.config.json': '{"capacity": 1, "lifecycle": {"cooldownSeconds": 600}}\n',
    },
    limits: { graphqlPerHour: 1_000_000 },
    onExchange: (e) => exchanges.push(e),
  });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-secret-scan-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Records what a process wrote: its stdout (the runner's mask command aside), stderr, files. */
function keep(where, r) {
  const masks = r.stdout.split('\n').filter((l) => l === MASK_LINE).length;
  written.push({ where: `${where}: stdout`, text: r.stdout.split('\n').filter((l) => l !== MASK_LINE).join('\n') });
  written.push({ where: `${where}: stderr`, text: r.stderr });
  for (const [name, text] of Object.entries(r.files ?? {})) written.push({ where: `${where}: ${name}`, text });
  return masks;
}

/** An action step with the token, GITHUB_ENV and GITHUB_PATH files of its own; kept. */
async function step(where, name, opts) {
  const dir = mkdtempSync(join(scratch, 'env-'));
  const env = { GITHUB_ENV: join(dir, 'env'), GITHUB_PATH: join(dir, 'path'), ...opts.env };
  writeFileSync(env.GITHUB_ENV, '');
  writeFileSync(env.GITHUB_PATH, '');
  const r = await runAction(name, { apiUrl: emu.url, token: TOKEN, ...opts, env });
  r.masks = keep(`actions/${name} ${where}`, r);
  written.push({ where: `actions/${name} ${where}: GITHUB_ENV`, text: readFileSync(env.GITHUB_ENV, 'utf8') });
  written.push({ where: `actions/${name} ${where}: GITHUB_PATH`, text: readFileSync(env.GITHUB_PATH, 'utf8') });
  return r;
}

/** The commands the CLI ran for real here (not only their --help), by their first word. */
const exercised = new Set();

/** A CLI process with the token in GITHUB_TOKEN and a job's context; kept. */
async function cli(where, args, context = jobContext({ runId: 7900 })) {
  const r = await runCli(emu, args, { token: TOKEN, env: context });
  keep(`cli ${where}`, r);
  if (!args.includes('--help')) exercised.add(args[0]);
  return r;
}

/** A command that dumps the environment it was given to a file, for the guard to run. */
function envDump() {
  const file = join(scratch, `child-env-${++dumps}`);
  return { file, argv: ['sh', '-c', `env > '${file}'`] };
}
function keepDump(where, file) {
  assert.ok(existsSync(file), `${where}: the guarded command ran`);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^PATH=/m, `${where}: the dump is an environment`);
  written.push({ where: `${where}: the guarded child's environment`, text });
}

async function runningJob(runId, job = 'build') {
  const context = jobContext({ runId, job });
  await emu.actions.startRun(runId, { jobs: [{ name: job, runnerName: context.RUNNER_NAME }] });
  return context;
}

describe('secret scan', { timeout: 300_000 }, () => {
  test('every action, run as the runner runs it, with the token', async () => {
    const lock = 'scan';
    const ctx = await runningJob(7001);
    const a = await step('main', 'acquire', { inputs: { lock }, context: ctx });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    assert.ok(a.masks >= 1, 'the token reached the step, and was masked');
    const renew = await step('', 'renew', { inputs: { lock, nonce: a.outputs.nonce }, context: ctx });
    assert.equal(renew.outputs.result, 'renewed', renew.stdout);
    const status = await step('', 'status', { inputs: { lock }, context: ctx });
    assert.equal(status.outputs.result, 'status', status.stdout);
    const dump = envDump();
    const guard = await step('', 'guard', { inputs: { lock, nonce: a.outputs.nonce, command: dump.argv.join('\n') }, context: ctx });
    assert.equal(guard.outputs['exit-code'], '0', guard.stdout);
    keepDump('actions/guard', dump.file);
    const post = await step('post', 'acquire', { inputs: { lock }, context: ctx, phase: 'post', state: a.state });
    assert.equal(post.code, 0, post.stdout);
    assert.match(post.stdout, /released/);

    const ctx2 = await runningJob(7002);
    const b = await step('main', 'acquire', { inputs: { lock, 'holder-suffix': 'cell 1' }, context: ctx2 });
    assert.equal(b.outputs.result, 'acquired', b.stdout);
    const rel = await step('', 'release', { inputs: { lock, 'holder-suffix': 'cell 1' }, context: ctx2 });
    assert.equal(rel.outputs.result, 'released', rel.stdout);

    // A holder whose job ended without a release: the reaper proves it and frees it.
    const ctx3 = await runningJob(7003);
    const dead = await step('main', 'acquire', { inputs: { lock }, context: ctx3 });
    assert.equal(dead.outputs.result, 'acquired', dead.stdout);
    await emu.actions.complete(7003, 1, 'failure');
    const reap = await step('', 'reap', { inputs: { lock }, context: ctx });
    assert.equal(reap.outputs.result, 'reaped', reap.stdout);
    assert.equal(reap.outputs.removed, '1');

    // The claim action: claim, renew, verify, release.
    const claim = (inputs) => step(inputs.operation, 'claim', { inputs: { namespace: 'scan', key: 'prod', ...inputs }, context: ctx, env: { GITHUB_WORKSPACE: scratch } });
    const c = await claim({ operation: 'claim', metadata: 'sha=abc123' });
    assert.equal(c.outputs.status, 'acquired', c.stdout);
    const held = { 'run-id': c.outputs['run-id'] };
    const cr = await claim({ operation: 'renew', 'claim-token': c.outputs.token, ...held });
    assert.equal(cr.outputs.status, 'renewed', cr.stdout);
    const cv = await claim({ operation: 'verify', 'claim-token': cr.outputs.token, ...held });
    assert.equal(cv.outputs.status, 'held', cv.stdout);
    const cx = await claim({ operation: 'release', 'claim-token': cr.outputs.token, ...held });
    assert.equal(cx.outputs.status, 'released', cx.stdout);

    // A pool: acquire a resource, report its usage, release it rate-limited.
    const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const reading = () => ({ resource: 'acct-1', used: '0.25', 'window-start': iso(Date.now() - 3_600_000), 'reset-at': iso(Date.now() + 3_600_000), 'observed-at': iso(Date.now() - 1000) });
    const pctx = await runningJob(7060);
    const pa = await step('main', 'acquire', { inputs: { lock: 'scan-pool', prefer: 'model', 'release-on-exit': 'false' }, context: pctx });
    assert.equal(pa.outputs.resource, 'acct-1', pa.stdout);
    const usage = await step('', 'report-usage', { inputs: { lock: 'scan-pool', ...reading() }, context: pctx });
    assert.equal(usage.outputs.result, 'recorded', usage.stdout);
    const pr0 = await step('', 'release', { inputs: { lock: 'scan-pool', outcome: 'rate-limited' }, context: pctx });
    assert.equal(pr0.outputs.result, 'released', pr0.stdout);

    // Receipts, the pull-request head and the alert issue: a pull request run 7001 worked on.
    const repo = emu.repo('octo', 'app');
    const pr = repo.pulls.open({ headSha: 'a'.repeat(40) });
    const posted = await step('post', 'receipt', { inputs: { operation: 'post', number: String(pr), runs: '7002', 'job-token': TOKEN }, context: ctx });
    assert.equal(posted.outputs.status, 'posted', posted.stdout);
    const check = await step('check', 'receipt', { inputs: { operation: 'check', number: String(pr), 'job-token': TOKEN }, context: jobContext({ runId: 7002 }) });
    assert.equal(check.outputs.skip, 'true', check.stdout);
    const head = await step('', 'check-head', { inputs: { 'pull-request': String(pr), 'expected-head-sha': 'a'.repeat(40) }, context: ctx });
    assert.equal(head.outputs.status, 'current', head.stdout);
    await emu.actions.startRun(7050, { path: '.github/workflows/reap.yml', event: 'schedule', status: 'in_progress' });
    emu.actions.complete(7050, 1, 'failure');
    const audit = await step('', 'audit', { inputs: { 'job-token': TOKEN }, context: ctx });
    assert.equal(audit.outputs.status, 'opened', audit.stdout);

    // The lifecycle: cleanup runs its command (whose environment is kept) and reports a failure,
    // which quarantines the slot; recover turns the quarantine into a cooldown.
    const lctx = await runningJob(7070);
    const la = await step('main', 'acquire', { inputs: { lock: 'scan-life', 'release-on-exit': 'false' }, context: lctx });
    assert.equal(la.outputs.result, 'acquired', la.stdout);
    const cdump = envDump();
    const failing = ['sh', '-c', `env > '${cdump.file}'; exit 3`].join('\n');
    const cleaned = await step('', 'cleanup', { inputs: { lock: 'scan-life', command: failing }, context: lctx });
    assert.equal(cleaned.outputs['cleanup-result'], 'quarantined', cleaned.stdout);
    keepDump('actions/cleanup', cdump.file);
    const recovered = await step('', 'recover', { inputs: { operation: 'recover', lock: 'scan-life', 'reservation-id': cleaned.outputs['reservation-id'], 'resource-safe': 'true' }, context: lctx });
    assert.equal(recovered.outputs.result, 'recovered', recovered.stdout);
    // validate reads the workspace only; run with the token anyway, as a workflow might.
    const workspace = mkdtempSync(join(scratch, 'workspace-'));
    mkdirSync(join(workspace, 'locks'));
    writeFileSync(join(workspace, 'locks', 'ok.config.json'), '{"capacity": 2}\n');
    const validated = await step('', 'validate', { inputs: { files: 'locks/*.config.json' }, context: ctx, env: { GITHUB_WORKSPACE: workspace } });
    assert.equal(validated.code, 0, validated.stdout + validated.stderr);

    // Refusals and failures write messages too: an identifier of the token's shape, and a GitHub
    // that answers every request with a 500.
    const refused = await step('credential-shaped suffix', 'acquire', { inputs: { lock, 'holder-suffix': TOKEN }, context: jobContext({ runId: 7004 }) });
    assert.notEqual(refused.outputs.result, 'acquired', refused.stdout);
    const badLock = await step('credential-shaped lock', 'release', { inputs: { lock: TOKEN }, context: jobContext({ runId: 7004 }) });
    assert.notEqual(badLock.outputs.result, 'released', badLock.stdout);
    const badClaim = await step('credential-shaped metadata', 'claim', { inputs: { operation: 'claim', namespace: 'scan', key: 'k2', metadata: `note=${TOKEN}` }, context: jobContext({ runId: 7004 }), env: { GITHUB_WORKSPACE: scratch } });
    assert.notEqual(badClaim.outputs.status, 'acquired', badClaim.stdout);
    const down = emu.faults.add({ times: Infinity, action: { status: 500 } });
    try {
      const failed = await step('GitHub down', 'acquire', { inputs: { lock, 'api-max-attempts': '2', 'api-retry-base-ms': '50' }, context: jobContext({ runId: 7005 }) });
      assert.equal(failed.outputs.result, 'failed', failed.stdout);
    } finally {
      down.remove();
    }
  });

  test('every CLI verb, with the token in GITHUB_TOKEN', async () => {
    const lock = 'scan-cli';
    const ctx = await runningJob(7101);
    const a = await step('main', 'acquire', { inputs: { lock }, context: ctx });
    assert.equal(a.outputs.result, 'acquired', a.stdout);
    const renew = await cli('renew', ['renew', '--lock', lock, '--nonce', a.outputs.nonce, '--repository', 'octo/app'], ctx);
    assert.equal(renew.doc?.status, 'renewed', renew.stdout + renew.stderr);
    const dump = envDump();
    const guard = await cli('guard', ['guard', '--lock', lock, '--nonce', a.outputs.nonce, '--repository', 'octo/app', '--', ...dump.argv], ctx);
    assert.equal(guard.code, 0, guard.stdout + guard.stderr);
    keepDump('cli guard', dump.file);
    await emu.actions.complete(7101, 1, 'failure');
    const reap = await cli('reap', ['reap', '--lock', lock, '--repository', 'octo/app'], ctx);
    assert.equal(reap.doc?.status, 'reaped', reap.stdout + reap.stderr);

    const claims = (verb, ...args) => cli(`claims ${verb}`, ['claims', ...verb.split(' '), '--namespace', 'scan-cli', ...args], ctx);
    const c = await claims('claim', '--key', 'k', '--set', 'sha=abc');
    assert.equal(c.doc?.status, 'acquired', c.stdout + c.stderr);
    const { token, runId } = { token: c.doc.claim.items[0].token, runId: c.doc.claim.items[0].payload.run.runId };
    const held = ['--key', 'k', '--run-id', String(c.doc.claim.items[0].payload.runId ?? runId)];
    const renewed = await claims('renew', ...held, '--token', token);
    const t2 = renewed.doc?.claim?.items?.[0]?.token ?? token;
    await claims('verify', ...held, '--token', t2);
    await claims('read', '--key', 'k');
    await claims('list');
    await claims('list', '--stale');
    await claims('takeover', '--key', 'k', '--supersedes', t2);
    await claims('adopt', ...held);
    const cdump = envDump();
    const cg = await claims('guard', ...held, '--token', t2, '--', ...cdump.argv);
    if (cg.code === 0) keepDump('cli claims guard', cdump.file);
    // The guard renewed (each renewal rotates the token): release with the current one.
    const current = (await claims('read', '--key', 'k')).doc?.claim?.items?.[0]?.token ?? t2;
    const released = await claims('release', ...held, '--token', current);
    assert.equal(released.code, 0, released.stdout + released.stderr);
    const fam = await claims('family claim', '--keys', 'f1,f2');
    assert.equal(fam.doc?.status, 'acquired', fam.stdout + fam.stderr);
    const items = fam.doc.claim.items;
    await claims('family release', '--keys', 'f1,f2', '--tokens', items.map((i) => i.token).join(','), '--run-id', String(items[0].payload.runId ?? items[0].payload.run.runId));
    const slot = await cli('slots allocate', ['slots', 'allocate', '--namespace', 'scan', '--prefix', 'acct', '--repository', 'octo/app'], ctx);
    assert.equal(slot.doc?.status, 'allocated', slot.stdout + slot.stderr);
    await cli('slots allocate --dry-run', ['slots', 'allocate', '--namespace', 'scan', '--prefix', 'acct', '--repository', 'octo/app', '--dry-run'], ctx);

    // The lock verbs of the command line: acquire, status, release; validate on a config file.
    const cctx = await runningJob(7102);
    const ca = await cli('acquire', ['acquire', '--lock', lock, '--repository', 'octo/app'], cctx);
    assert.equal(ca.doc?.status, 'acquired', ca.stdout + ca.stderr);
    const cs = await cli('status', ['status', '--lock', lock, '--repository', 'octo/app', '--json'], cctx);
    assert.equal(cs.code, 0, cs.stdout + cs.stderr);
    const cr = await cli('release', ['release', '--lock', lock, '--repository', 'octo/app'], cctx);
    assert.equal(cr.doc?.status, 'released', cr.stdout + cr.stderr);
    const cfg = join(scratch, 'scan.config.json');
    writeFileSync(cfg, `{"capacity": 2, "note": "${TOKEN}"}\n`);
    const cv = await cli('validate', ['validate', cfg]);
    assert.equal(cv.code, 3, `validate refuses the unknown key: ${cv.stdout + cv.stderr}`);

    // An operator's repair of a state broken by hand: the dry run, then the rewrite.
    await emu.writeFile('leasehold-state', `locks/${lock}.json`, '{ "broken": ');
    const dry = await cli('repair', ['repair', '--lock', lock, '--repository', 'octo/app'], ctx);
    assert.equal(dry.doc?.status, 'would-repair', dry.stdout + dry.stderr);
    const fixed = await cli('repair --confirm', ['repair', '--lock', lock, '--repository', 'octo/app', '--confirm'], ctx);
    assert.equal(fixed.doc?.status, 'repaired', fixed.stdout + fixed.stderr);

    // An operator's recovery: this lock has no incident, so it is refused and nothing written.
    const rv = await cli('recover', ['recover', '--operation', 'recover-incident', '--lock', lock, '--repository', 'octo/app', '--confirmed'], ctx);
    assert.equal(rv.doc?.status, 'recover-refused', rv.stdout + rv.stderr);

    // A pool's usage reading from the command line.
    const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const ru = await cli('report-usage', ['report-usage', '--lock', 'scan-pool', '--repository', 'octo/app', '--resource', 'acct-1', '--used', '0.5', '--window-start', iso(Date.now() - 3_600_000), '--reset-at', iso(Date.now() + 3_600_000), '--observed-at', iso(Date.now())], ctx);
    assert.equal(ru.code, 0, ru.stdout + ru.stderr);

    // Receipts, the pull-request head and the alert issue from the command line.
    const pr = emu.repo('octo', 'app').pulls.open({ headSha: 'b'.repeat(40) });
    const rp = await cli('receipt post', ['receipt', 'post', '--number', String(pr), '--runs', '7103', '--job-token', '--job-status', 'success', '--repository', 'octo/app'], ctx);
    assert.equal(rp.doc?.status, 'posted', rp.stdout + rp.stderr);
    const rc = await cli('receipt check', ['receipt', 'check', '--number', String(pr), '--job-token', '--repository', 'octo/app'], jobContext({ runId: 7103 }));
    assert.equal(rc.doc?.status, 'receipted', rc.stdout + rc.stderr);
    const ch = await cli('check-head', ['check-head', '--pull-request', String(pr), '--expected-head-sha', 'c'.repeat(40), '--repository', 'octo/app'], ctx);
    assert.equal(ch.doc?.status, 'superseded', ch.stdout + ch.stderr);
    const au = await cli('audit', ['audit', '--job-token', '--repository', 'octo/app'], ctx);
    assert.ok([0, 16].includes(au.code), au.stdout + au.stderr);

    // Every verb's help, and a refusal that could echo a value.
    const help = await cli('--help', ['--help']);
    // Every command the CLI lists is run for real above, not only its help: a new verb joins the
    // scan or this fails.
    const listed = [...help.stdout.split('\nClaims verbs:')[0].matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]);
    assert.ok(listed.length >= 9, `the help lists the commands: ${listed}`);
    assert.deepEqual(listed.filter((c) => !exercised.has(c)), [], 'every listed command is scanned');
    const verbs = ['renew', 'reap', 'guard', 'slots', 'claims', ...[...help.stdout.matchAll(/^ {2}claims (.+)$/gm)].map((m) => `claims ${m[1].trim()}`)];
    assert.ok(verbs.length >= 14, `the help lists the claims verbs: ${verbs}`);
    for (const verb of verbs) await cli(`${verb} --help`, [...verb.split(' '), '--help']);
    await claims('claim', '--key', TOKEN);
    await claims('claim', '--key', 'k3', '--set', `note=${TOKEN}`);
    await cli('renew credential-shaped holder id', ['renew', '--lock', lock, '--nonce', a.outputs.nonce, '--repository', 'octo/app', '--holder-id', `octo/app:1:${TOKEN}`], ctx);
    await cli('slots credential-shaped namespace', ['slots', 'allocate', '--namespace', TOKEN, '--prefix', 'acct', '--repository', 'octo/app'], ctx);
  });

  test('nothing leasehold wrote carries the token or a credential shape', () => {
    // The scanner itself: it finds the token and every shape of the core's list.
    for (const sample of [TOKEN, 'ghp_x', 'gho_x', 'ghu_x', 'ghr_x', 'github_pat_x', 'sk-ant-x', `sk-${'a'.repeat(16)}`, 'xoxb-1', 'AKIAIOSFODNN7EXAMPLE', '-----BEGIN RSA PRIVATE KEY-----']) {
      assert.ok(credentialShape(`x ${sample}`), `the core's list knows ${sample.slice(0, 6)}…`);
    }
    // Every object of the repository: blobs (every version of every file), commits (messages),
    // trees by their paths, tags.
    const git = (args, input) => execFileSync('git', ['--git-dir', emu.gitDir, ...args], { input, maxBuffer: 1 << 28 });
    const objects = git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)']).toString().trim().split('\n').map((l) => l.split(' '));
    const texts = objects.filter(([, type]) => type !== 'tree').map(([oid]) => oid);
    for (const oid of texts) written.push({ where: `git object ${oid}`, text: git(['cat-file', '-p', oid]).toString('utf8') });
    written.push({ where: 'git paths', text: git(['rev-list', '--all', '--objects']).toString('utf8') });
    written.push({ where: 'git refs', text: git(['for-each-ref']).toString('utf8') });
    const commits = objects.filter(([, type]) => type === 'commit').length;
    assert.ok(commits >= 15, `the runs wrote the state branch and refs (${commits} commits)`);
    // Every request the emulator received: path, query, headers (the Authorization header is
    // the credential itself and redacted by the recorder), body, and any base64 content in it.
    for (const x of exchanges) {
      const where = `request #${x.seq} ${x.method} ${x.path}`;
      written.push({ where, text: JSON.stringify([x.path, x.query, { ...x.requestHeaders, authorization: undefined }, x.requestBody]) });
      const content = x.requestBody?.content;
      if (typeof content === 'string') written.push({ where: `${where} (content, decoded)`, text: Buffer.from(content, 'base64').toString('utf8') });
    }
    const tokenHits = written.filter((w) => w.text.includes(TOKEN)).map((w) => w.where);
    const shapeHits = written.flatMap((w) => {
      const shape = w.text.split('\n').map((line) => credentialShape(line)).find(Boolean);
      return shape ? [`${w.where}: ${shape}`] : [];
    });
    const bytes = written.reduce((n, w) => n + w.text.length, 0);
    console.log(`secret scan: ${written.length} artefacts (${bytes} characters; ${objects.length} git objects, ${exchanges.length} requests, ${dumps} child environments): ${tokenHits.length} with the token, ${shapeHits.length} with a credential shape`);
    assert.deepEqual(tokenHits, [], 'the token appears nowhere leasehold wrote');
    assert.deepEqual(shapeHits, [], 'no credential shape appears anywhere leasehold wrote');
  });
});
