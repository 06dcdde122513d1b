// The bundles run by a harness this project did not write: GitHub's @github/local-action
// (`local-action run <action dir> <entrypoint> <.env file>`), against the emulator. It reads
// the action's action.yml, loads the .env file into the environment as the runner would set
// it, imports the entrypoint and calls its run(). The entrypoints in
// tests/conformance/local-action/ only import the committed bundles in dist/.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { parseCommandFile, ROOT } from './helpers/action-runner.mjs';

const BIN = path.join(ROOT, 'node_modules', '@github', 'local-action', 'bin', 'local-action.js');
let emu;
let dir;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'locks/la.config.json': '{"capacity": 1}\n' } });
  dir = mkdtempSync(path.join(tmpdir(), 'leasehold-local-action-'));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await emu.close();
});

/** Runs actions/<name> under local-action with `env` as its .env file; resolves to
 *  { code, stdout, outputs }. Bounded: killed after 90 s. */
function localAction(name, env) {
  const files = { GITHUB_OUTPUT: path.join(dir, `${name}.output`), GITHUB_STATE: path.join(dir, `${name}.state`), GITHUB_STEP_SUMMARY: path.join(dir, `${name}.summary`) };
  for (const f of Object.values(files)) writeFileSync(f, '');
  const dotenv = path.join(dir, `${name}.env`);
  writeFileSync(dotenv, Object.entries({ ...env, ...files }).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  const entry = path.relative(path.join(ROOT, 'actions', name), path.join(ROOT, 'tests', 'conformance', 'local-action', `${name}.mjs`));
  return new Promise((resolve, reject) => {
    // A clean environment: nothing of this test process leaks in (the .env file is the step's).
    const child = spawn(process.execPath, [BIN, 'run', `actions/${name}`, entry, dotenv], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out, outputs: parseCommandFile(readFileSync(files.GITHUB_OUTPUT, 'utf8')), summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8') }));
  });
}

const step = (inputs) => ({
  // Every input as the runner passes it (INPUT_<NAME>, defaults filled in from action.yml).
  ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
  GITHUB_API_URL: emu.url,
  GITHUB_REPOSITORY: 'octo/app',
  GITHUB_RUN_ID: '9100',
  GITHUB_RUN_ATTEMPT: '1',
  GITHUB_JOB: 'deploy',
  RUNNER_NAME: 'local-action',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_ACTIONS: 'true',
});

test('@github/local-action runs the acquire and release bundles against the emulator', { timeout: 200_000 }, async (t) => {
  const common = { lock: 'la', repository: '', 'state-branch': 'leasehold-state', token: 'test-token', 'holder-suffix': '' };
  const acquired = await localAction('acquire', step({ ...common, 'timeout-minutes': '1', 'poll-seconds': '1', 'lease-minutes': '60' }));
  assert.equal(acquired.code, 0, acquired.stdout);
  assert.match(acquired.stdout, /Running Action/, 'local-action ran it');
  assert.match(acquired.stdout, /leasehold acquire la: acquired/);
  assert.equal(acquired.outputs.acquired, 'true');
  assert.equal(acquired.outputs['holder-id'], 'octo/app:9100:deploy');
  assert.equal(acquired.outputs.fence, '1');
  assert.match(acquired.summary, /leasehold: acquired `la`/);
  let state = JSON.parse(await emu.readFile('leasehold-state', 'locks/la.json'));
  assert.deepEqual(state.holders.map((h) => h.holderId), ['octo/app:9100:deploy']);

  const released = await localAction('release', step({ ...common, 'holder-id': '', 'release-deadline-seconds': '120' }));
  assert.equal(released.code, 0, released.stdout);
  assert.match(released.stdout, /Running Action/);
  assert.equal(released.outputs.released, 'true');
  assert.equal(released.outputs.result, 'released');
  state = JSON.parse(await emu.readFile('leasehold-state', 'locks/la.json'));
  assert.deepEqual(state.holders, []);
  t.diagnostic(`local-action ${JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@github', 'local-action', 'package.json'), 'utf8')).version}: acquire and release ran from dist/ in ${emu.log.length} requests`);
});
