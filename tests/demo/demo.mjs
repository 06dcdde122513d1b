// The main job, locally: a GitHub emulator (a real git repository behind GitHub's REST API)
// and several jobs from different repositories contending for one capacity-2 lock through the
// real action bundles in dist/, exactly as the runner would run them. Prints who held the lock
// when, the request count, and checks the lock's whole history. Needs no install.
//
//   node tests/demo/demo.mjs [--jobs N] [--capacity C]
import { startEmulator } from '../emulator/emulator.mjs';
import { jobContext, runAction } from '../helpers/action-runner.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const JOBS = arg('jobs', 6);
const CAPACITY = arg('capacity', 2);
const LOCK = 'build-seats';
const REPOS = ['octo/web', 'octo/api', 'octo/mobile'];

const emu = await startEmulator({
  owner: 'octo',
  repo: 'locks',
  files: { [`locks/${LOCK}.config.json`]: `{"capacity": ${CAPACITY}}\n` },
});
const t0 = Date.now();
const clock = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
console.log(`leasehold demo: ${JOBS} jobs from ${REPOS.length} repositories share lock "${LOCK}" (capacity ${CAPACITY})`);
console.log(`GitHub emulator at ${emu.url}, lock repository octo/locks, state branch leasehold-state\n`);

async function job(i) {
  const repository = REPOS[i % REPOS.length];
  const context = jobContext({ repository, runId: 4100 + i, job: 'build' });
  const name = `${repository}#${4100 + i}`.padEnd(16);
  await sleep(i * 150);
  console.log(`${clock()}  ${name} acquire…`);
  // The demo's consumer repositories have no Actions runs in the emulator: no job id to look up.
  const inputs = { lock: LOCK, repository: 'octo/locks', 'poll-seconds': '2', 'timeout-minutes': '10', 'record-job-id': 'false' };
  const a = await runAction('acquire', { apiUrl: emu.url, inputs, context });
  if (a.outputs.acquired !== 'true') {
    console.log(`${clock()}  ${name} FAILED to acquire: ${a.outputs.result} ${a.outputs['error-code']}\n${a.stdout}`);
    return null;
  }
  const waited = (Number(a.outputs['wait-ms']) / 1000).toFixed(1);
  const position = a.outputs['queue-position'] === '0' ? 'no wait' : `queue position ${a.outputs['queue-position']}, waited ${waited}s`;
  console.log(`${clock()}  ${name} HOLDS fence ${a.outputs.fence} (${position})`);
  const start = Date.now() - t0;
  await sleep(1200 + ((i * 433) % 1500)); // the protected work
  const end = Date.now() - t0;
  // The runner hands what acquire exported (GITHUB_ENV) to the job's later steps: release
  // writes on the version acquire left.
  const r = await runAction('release', { apiUrl: emu.url, inputs: { lock: LOCK, repository: 'octo/locks' }, context, env: a.exported });
  console.log(`${clock()}  ${name} release: ${r.outputs.result}`);
  return { name, fence: Number(a.outputs.fence), start, end };
}

let exitCode = 0;
try {
  const jobs = (await Promise.all(Array.from({ length: JOBS }, (_, i) => job(i)))).filter(Boolean);

  // Who held when, drawn from the jobs' own view.
  const total = Math.max(...jobs.map((j) => j.end));
  const width = 60;
  console.log(`\nwho held the lock when (each column ≈ ${(total / width / 1000).toFixed(2)}s):`);
  for (const j of jobs.sort((a, b) => a.fence - b.fence)) {
    const from = Math.floor((j.start / total) * width);
    const to = Math.max(from + 1, Math.floor((j.end / total) * width));
    console.log(`  fence ${String(j.fence).padStart(2)}  ${j.name} |${' '.repeat(from)}${'█'.repeat(to - from)}${' '.repeat(width - to)}|`);
  }

  // The lock's history, commit by commit, from the emulator's git repository.
  const history = await emu.repo('octo', 'locks').history('leasehold-state', `locks/${LOCK}.json`);
  let maxHolders = 0;
  let lastFence = 0;
  const problems = [];
  for (const { commit, content } of history) {
    const state = JSON.parse(content);
    maxHolders = Math.max(maxHolders, state.holders.length);
    if (state.holders.length > CAPACITY) problems.push(`${commit.slice(0, 7)} has ${state.holders.length} holders`);
    for (const h of state.holders) {
      if (h.fence > lastFence) lastFence = h.fence;
    }
  }
  const final = JSON.parse(history.at(-1).content);
  if (final.holders.length || final.queue.length) problems.push('the final state is not empty');

  const byMethod = {};
  for (const r of emu.log) byMethod[`${r.method} ${r.status}`] = (byMethod[`${r.method} ${r.status}`] ?? 0) + 1;
  console.log(`\n${history.length} commits on leasehold-state; at most ${maxHolders} holders at once (capacity ${CAPACITY}); last fence ${lastFence}`);
  console.log(`${emu.log.length} REST requests in all (${(emu.log.length / JOBS).toFixed(1)} per job): ${Object.entries(byMethod).map(([k, v]) => `${v}× ${k}`).join(', ')}`);
  if (jobs.length !== JOBS || problems.length) {
    console.log(`\nPROBLEMS: ${problems.join('; ') || `${JOBS - jobs.length} jobs failed`}`);
    exitCode = 1;
  } else {
    console.log('\nevery job held the lock exactly once, never more than capacity at a time, and nothing was left behind');
  }
} finally {
  await emu.close();
}
process.exitCode = exitCode;
