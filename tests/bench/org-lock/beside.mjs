// The org build lock (Ambiguous-Interactive/ambiguous-organization-build-lock, the public code
// issue #15 compares leasehold with) and leasehold, on the same machine, one after the other:
// the 8-job workload of tests/bench/workloads.mjs (WORKLOADS.eight: 8 jobs from 3 repositories,
// a fresh lock of capacity 2, each holding 1 s, polling every 2 s, started 50 ms apart, GitHub's
// limits on). Its code is not part of this repository: fetch it yourself and name its checkout.
//
//   node tests/bench/org-lock/beside.mjs --src DIR [--runs N]     (npm run bench:org-lock -- --src DIR)
//
// The org build lock runs unchanged. Its acquire refuses callers outside its organization by
// environment and inputs alone (its lock name, lock repository, state branch and
// GITHUB_REPOSITORY_OWNER_ID), so the emulated repositories are named as its own. It only
// authenticates as a GitHub App, so app-auth.mjs answers the two GitHub App routes the emulator
// lacks (checking the JWT as GitHub does) and forwards the rest. Each job runs its
// acquire-build-lock action, holds 1 s, then its release-build-lock action, as the runner runs a
// node action. Its capacity is `{"maxHolders": 2}` in its config file (no state branch: a fresh
// lock, as leasehold's `{"capacity": 2}`); its `poll-seconds` is 2 (it adds 0-666 ms of jitter).
// Its requests are counted as leasehold's are (everything the emulator answered) and, beside
// that, with the two GitHub App requests each of its processes makes.
import crypto from 'node:crypto';
import { join } from 'node:path';
import { startEmulator } from '../../emulator/emulator.mjs';
import { runAction as runStep } from '../../helpers/action-runner.mjs';
import { WORKLOADS, describeRun, fmt, median, runWorkload, tally } from '../workloads.mjs';
import { startAppAuth } from './app-auth.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SRC = arg('src');
const OWNER = 'Ambiguous-Interactive';
const OWNER_ID = '212056428';
const LOCK_REPO = 'ambiguous-organization-build-lock';
const LOCK = 'wallstop-organization-builds';
const W = WORKLOADS.eight;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** One of its actions (`.github/actions/<name>` of its checkout), run as the runner runs it. */
const runAction = (name, options) => runStep(name, { ...options, actionDir: join(SRC, '.github/actions', name) });

function jobContext(i) {
  const repo = `repo-${i % W.repos}`;
  const runId = 5000 + i;
  return {
    GITHUB_REPOSITORY: `${OWNER}/${repo}`,
    GITHUB_REPOSITORY_OWNER: OWNER,
    GITHUB_REPOSITORY_OWNER_ID: OWNER_ID,
    GITHUB_REPOSITORY_ID: String(900000 + (i % W.repos)),
    GITHUB_RUN_ID: String(runId),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_WORKFLOW: 'build',
    GITHUB_JOB: 'build',
    GITHUB_EVENT_NAME: 'push',
    RUNNER_NAME: `runner-${runId}-build`,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_ACTIONS: 'true',
    CI: 'true',
  };
}

export async function runOnce() {
  const emu = await startEmulator({
    owner: OWNER,
    repo: LOCK_REPO,
    files: { [`locks/${LOCK}.config.json`]: `{"maxHolders": ${W.capacity}}\n` },
    limits: { primaryPerHour: 5000, contentPerMinute: 80, contentPerHour: 500 },
  });
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const appId = '123456';
  const front = await startAppAuth({ upstream: emu.url, appId, publicKey, owner: OWNER, repo: LOCK_REPO });
  const appEnv = { BUILD_LOCK_APP_ID: appId, BUILD_LOCK_APP_PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }) };
  try {
    const base = { 'lock-name': LOCK };
    const from = emu.log.length;
    const t0 = Date.now();
    const jobs = await Promise.all(
      Array.from({ length: W.jobs }, async (_, i) => {
        const context = jobContext(i);
        await sleep(i * W.gapMs);
        const started = Date.now();
        const a = await runAction('acquire-build-lock', {
          apiUrl: front.url,
          inputs: { ...base, 'runner-id': context.RUNNER_NAME, 'poll-seconds': String(W.poll), 'timeout-minutes': '30' },
          context,
          env: appEnv,
        });
        const acquiredAt = Date.now();
        await sleep(W.holdMs);
        const r = await runAction('release-build-lock', {
          apiUrl: front.url,
          inputs: {
            ...base,
            'runner-id': context.RUNNER_NAME,
            'holder-id': a.outputs['holder-id'] ?? '',
            'resource-cleanup-status': 'confirmed',
            'resource-health': 'healthy',
            'resource-reason': 'cleanup-confirmed',
          },
          context,
          env: appEnv,
        });
        return { started, acquiredAt, a, r };
      }),
    );
    const wall = (Date.now() - t0) / 1000;
    const failed = jobs.filter((j) => j.a.code !== 0 || j.a.outputs.acquired !== 'true' || j.r.code !== 0 || j.r.outputs.released !== 'true');
    for (const j of failed) console.error('FAILED job:', j.a.code, j.a.outputs, j.r.code, j.r.outputs, j.a.stderr.slice(-500), j.r.stderr.slice(-500));
    const log = emu.log.slice(from);
    return {
      failed: failed.length,
      ...tally(log),
      appAuthRequests: front.log.length,
      total: log.length + front.log.length,
      wall,
      acquireMedian: median(jobs.map((j) => j.acquiredAt - j.started)) / 1000,
    };
  } finally {
    await front.close();
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!SRC) {
    console.error('usage: node tests/bench/org-lock/beside.mjs --src DIR [--runs N] (DIR: a checkout of the org build lock)');
    process.exit(2);
  }
  const runs = Number(arg('runs', 4));
  console.log(`${WORKLOADS.eight.name}; node ${process.version}; ${runs} runs of each, interleaved`);
  const rows = { org: [], leasehold: [] };
  for (let k = 1; k <= runs; k++) {
    const o = await runOnce();
    rows.org.push(o);
    console.log(
      `org build lock ${k}: ${o.failed ? `${o.failed} JOBS FAILED; ` : ''}${o.requests} requests (${o.conflicts} conflicts, ${o.notModified} answered 304, ${o.limited} refused 403/429; ` +
        `${o.total} with its ${o.appAuthRequests} GitHub App requests); wall ${fmt(o.wall)} s; acquire median ${fmt(o.acquireMedian, 2)} s`,
    );
    const l = await runWorkload(WORKLOADS.eight);
    rows.leasehold.push(l);
    console.log(`leasehold      ${k}: ${describeRun(l)}`);
  }
  const range = (xs) => `${fmt(Math.min(...xs), 2)}-${fmt(Math.max(...xs), 2)}`;
  const org = { requests: median(rows.org.map((r) => r.requests)), all: median(rows.org.map((r) => r.total)), wall: median(rows.org.map((r) => r.wall)) };
  const lh = { requests: median(rows.leasehold.map((r) => r.requests)), wall: median(rows.leasehold.map((r) => r.wall)) };
  console.log(`medians: requests ${lh.requests} against ${org.requests} (${fmt(lh.requests / org.requests, 2)}×; ${fmt(lh.requests / org.all, 2)}× of its ${org.all} with GitHub App requests), wall ${fmt(lh.wall)} s against ${fmt(org.wall)} s (${fmt(lh.wall / org.wall, 2)}×)`);
  console.log(`run by run: requests ${range(rows.leasehold.map((r, i) => r.requests / rows.org[i].requests))}×, wall ${range(rows.leasehold.map((r, i) => r.wall / rows.org[i].wall))}×`);
}
