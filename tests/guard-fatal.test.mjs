// The guard (actions/lib/guard.mjs, run in this process against the built core) when something
// throws instead of answering: a renewal whose transport throws is a failed renewal of unknown
// outcome, so the command runs on to the local deadline and is then stopped, whole group and
// all; an error of the guard itself stops the group (SIGTERM, SIGKILL after the kill grace)
// before it is rethrown. Either way no process the command started outlives the guard.
//
// The clock is virtual once the command's grandchild is up: every wait of the guard then ends at
// once, so the local deadline and the kill grace pass without the test waiting for them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { guard } from '../actions/lib/guard.mjs';
import { createTransport } from '../actions/lib/github.mjs';
import { loadCore } from '../dist/leasehold-core.mjs';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

const POLICY = { ttlSeconds: 30, renewSeconds: 10, graceSeconds: 0, maxTtlSeconds: 3600, skewSeconds: 0, minRemainingSeconds: 3 };
const core = loadCore();
let emu;
let seq = 0;
let scratch;

before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-guard-fatal-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const waitFor = async (what, ms = 10_000) => {
  for (let i = 0; i < ms / 50; i++) {
    if (what()) return true;
    await sleep(50);
  }
  return what();
};

/** Whether a process is still running (a zombie, dead but not yet reaped, is not). */
const alive = (pid) => {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A fresh lock with the short lease policy, held by a new job: the guard's inputs. */
async function held() {
  const lock = `fatal-${++seq}`;
  await emu.writeFile(emu.defaultBranch, `locks/${lock}.config.json`, JSON.stringify({ capacity: 1, lease: POLICY }));
  const context = jobContext({ runId: 9000 + seq });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock }, context });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  return { ...context, lock, 'holder-id': a.outputs['holder-id'], nonce: a.outputs.nonce, 'kill-grace-seconds': '1' };
}

/** The real clock until `open` resolves; from then on every wait ends at once, at its end. */
function gatedClock(open) {
  let offset = 0;
  let opened = false;
  open.then(() => (opened = true));
  const now = () => Date.now() + offset;
  return {
    now,
    sleepUntil: async (at, signal) => {
      if (!opened) {
        await Promise.race([open, new Promise((r) => signal?.addEventListener('abort', r, { once: true }))]);
      }
      await sleep(1);
      if (!signal?.aborted && at > now()) offset += at - now();
    },
  };
}

/**
 * A command whose direct child starts a grandchild that ignores SIGTERM (same process group);
 * the direct child ends on SIGTERM. Returns { argv, pidFile }: the grandchild writes its pid.
 */
function family() {
  const pidFile = join(scratch, `grandchild-${seq}`);
  const grandchild = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`;
  const direct = `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'ignore' }); setInterval(() => {}, 1000);`;
  return { argv: [process.execPath, '-e', direct], pidFile };
}

const quiet = () => {
  const lines = [];
  const log = (level) => (text) => lines.push(`${level}: ${text}`);
  return { lines, logger: { debug: () => {}, info: log('info'), warning: log('warning') } };
};

describe('guard: what throws stops the group', { concurrency: 2, timeout: 60_000 }, () => {
  test("a renewal whose transport throws is a failed renewal: the command runs to the local deadline, then its whole group is stopped", async () => {
    const inputs = await held();
    const { argv, pidFile } = family();
    const transport = createTransport({ baseUrl: emu.url, token: 'test-token', repository: 'octo/app' });
    const emitted = [];
    let thrown = 0;
    // The verification is answered; once the command has started, every request throws.
    const perform = async (command) => {
      if (emitted.length === 0) return transport(command);
      thrown += 1;
      throw new Error('socket closed by the peer');
    };
    const grandchildUp = waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8'));
    const { lines, logger } = quiet();
    let pid = null;
    try {
      const result = await guard({ core, machine: new core.Guard(inputs), report: new core.GuardReport('renew', inputs), argv, perform, emit: (d) => emitted.push(d), logger, clock: gatedClock(grandchildUp), env: { PATH: process.env.PATH } });
      pid = Number(readFileSync(pidFile, 'utf8'));
      assert.ok(thrown > 0, 'a renewal threw');
      assert.deepEqual(result, { exitCode: 13, reason: 'deadline' }, lines.join('\n'));
      assert.deepEqual(emitted.map((d) => d.event), ['guard-start', 'guard-exit']);
      assert.equal(emitted[0].pid > 0, true);
      assert.ok(!alive(emitted[0].pid), 'the direct child is gone');
      assert.ok(await waitFor(() => !alive(pid), 3_000), 'the grandchild that ignores SIGTERM was killed');
      assert.ok(lines.some((l) => /unknown/.test(l)), `the failed renewal is named of unknown outcome:\n${lines.join('\n')}`);
    } finally {
      pid ??= existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : null;
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      if (emitted[0]?.pid && alive(emitted[0].pid)) process.kill(emitted[0].pid, 'SIGKILL');
    }
  });

  test("an error of the guard itself stops the command's whole group before it is rethrown", async () => {
    const inputs = await held();
    const { argv, pidFile } = family();
    const perform = createTransport({ baseUrl: emu.url, token: 'test-token', repository: 'octo/app' });
    const grandchildUp = waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8'));
    // The real machine, but its step refuses the first timer after the command started (as a
    // protocol error would).
    const real = new core.Guard(inputs);
    const machine = {
      get settings() {
        return real.settings;
      },
      step(event) {
        if (event.kind === 'timer-fired') throw Object.assign(new Error('the guard machine refused timer-fired'), { code: 'protocol' });
        return real.step(event);
      },
    };
    const emitted = [];
    const { logger } = quiet();
    let pid = null;
    try {
      await assert.rejects(
        guard({ core, machine, report: new core.GuardReport('renew', inputs), argv, perform, emit: (d) => emitted.push(d), logger, clock: gatedClock(grandchildUp), env: { PATH: process.env.PATH } }),
        /refused timer-fired/,
      );
      pid = Number(readFileSync(pidFile, 'utf8'));
      assert.equal(emitted[0]?.event, 'guard-start');
      assert.ok(await waitFor(() => !alive(emitted[0].pid), 3_000), 'the direct child is gone');
      assert.ok(await waitFor(() => !alive(pid), 3_000), 'the grandchild that ignores SIGTERM was killed');
    } finally {
      pid ??= existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : null;
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      if (emitted[0]?.pid && alive(emitted[0].pid)) process.kill(emitted[0].pid, 'SIGKILL');
    }
  });
});
