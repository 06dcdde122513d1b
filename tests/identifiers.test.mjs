// Credential-shaped identifiers are refused before any request, through the built bundles as
// the runner runs them: a holder suffix or a lock name of the shape `ghp_` + 36 letters makes the
// acquire action and the command line fail with an error that names the input and the rule,
// never echoes the value, and sends nothing (the emulator's request log stays empty).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';

const TOKEN = `ghp_${'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'}`;
let emu;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
});
after(async () => {
  await emu.close();
});

function cli(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

for (const [input, value] of [
  ['holder-suffix', TOKEN],
  ['lock', TOKEN],
]) {
  test(`the acquire action refuses a credential-shaped ${input} before any request`, async () => {
    assert.equal(TOKEN.length, 40);
    const before = emu.log.length;
    const inputs = { lock: 'deploy', [input]: value };
    const r = await runAction('acquire', { apiUrl: emu.url, inputs, context: jobContext({ runId: 4100 }) });
    assert.notEqual(r.code, 0, r.stderr);
    const said = r.stdout + r.stderr + r.summary + JSON.stringify(r.outputs);
    assert.match(said, new RegExp(`input \`${input}\` must not carry a credential`));
    assert.ok(!said.includes(TOKEN) && !said.includes('ghp_abc'), said);
    assert.equal(emu.log.length, before, 'nothing was sent');
  });

  test(`the command line refuses a credential-shaped --${input} before any request`, async () => {
    const before = emu.log.length;
    const flags = { lock: 'deploy', nonce: '00000000000000aa', [input]: value };
    const args = ['renew', ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, v])];
    const r = await cli(args, { ...jobContext({ runId: 4101 }), GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token' });
    const doc = JSON.parse(r.stdout.trim().split('\n').at(-1));
    assert.equal(doc.status, 'usage');
    assert.equal(r.code, doc.exitCode);
    assert.equal(r.code, 2);
    assert.match(JSON.stringify(doc) + r.stderr, new RegExp(`--${input} must not carry a credential`));
    assert.ok(!(r.stdout + r.stderr).includes('ghp_abc'), r.stdout + r.stderr);
    assert.equal(emu.log.length, before, 'nothing was sent');
  });
}
