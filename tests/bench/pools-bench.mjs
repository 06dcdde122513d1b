// Resource pools: what the choice costs in the core (in wasm, as the actions run it) and what a
// pool lock costs in requests. `node tests/bench/pools-bench.mjs` (`npm run bench:pools`);
// nothing here is asserted by a test, the figures are printed with their conditions.
//
// 1. The core's choice: an acquire's plan on a pool of 50 resources, 64 holders and 1,000
//    waiters (the largest queue a lock holds), fed as the driver feeds it (the state's text in,
//    the next command out: parsing, admission and rendering included).
// 2. The admission pass alone, in wasm, on a state parsed once (`PoolBench`, a bench-only
//    binding of the core's `PoolPass`): many passes, each on a fresh copy of the parsed state,
//    and the copy alone, so the pass is told apart from parsing and copying.
// 3. Requests per uncontended acquire + release on a pool lock and on a plain lock, against the
//    GitHub emulator, each a real action process.
import { join } from 'node:path';
import { startEmulator } from '../emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from '../helpers/action-runner.mjs';

const out = (line) => console.log(line);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const T = 1800000000000;
const iso = (ms) => new Date(ms).toISOString();
const RUNS = 30;

const { loadBench, loadCore } = await import(join(ROOT, 'dist/leasehold-core.mjs'));
const { Operation } = loadCore();
const { PoolBench } = loadBench();
const PASSES = 1000;
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

const RESOURCES = Array.from({ length: 50 }, (_, i) => ({ name: `acct-${i}`, capacity: i < 14 ? 2 : 1, tags: [`provider-${i % 5}`, `tier-${i % 3}`] }));
const run = (i) => ({ repository: `octo/repo-${i % 7}`, runId: 10000 + i, runAttempt: 1, job: 'build', runnerName: `runner-${i}` });

/** A pool state: `holders` holdings spread over the resources, `waiters` queue entries whose
 * requests prefer, require and partition; the config recorded fresh. */
function poolState(holders, waiters, { freeFor } = {}) {
  const seats = [];
  for (const r of RESOURCES) for (let k = 0; k < r.capacity; k++) seats.push(r.name);
  const holding = Array.from({ length: holders }, (_, i) => ({
    holderId: `octo/repo-${i % 7}:${10000 + i}:build`, nonce: `${i}`.padStart(16, '0'), fence: i + 1, run: run(i),
    acquiredAt: iso(T - 60000), expiresAt: iso(T + 3600000), leaseMs: 3600000, ceilingAt: iso(T + 7200000),
    pool: { resource: seats[i], partition: [`area-${i % 9}`] },
  }));
  const queue = Array.from({ length: waiters }, (_, i) => {
    const last = i === waiters - 1;
    return {
      holderId: `octo/repo-${i % 7}:${20000 + i}:build`, nonce: `${20000 + i}`.padStart(16, '0'), run: { ...run(20000 + i) },
      leaseMs: 3600000, enqueuedAt: iso(T - 50000 + i), lastSeenAt: iso(T - 50000 + i),
      pool: { prefer: last && freeFor ? [freeFor] : [`provider-${i % 5}`, `tier-${i % 3}`], requires: last && freeFor ? [] : [`tier-${i % 3}`], partition: last ? ['free-area'] : [`area-${i % 9}`], affinity: `key-${i % 40}` },
    };
  });
  return {
    schema: 1, lock: 'pool', revision: 10, fence: holders,
    config: { capacity: 64, readAt: iso(T - 1000), pool: { resources: RESOURCES, affinitySeconds: 300, nonReservingAtoms: ['docs'] } },
    holders: holding, queue,
    pool: { affinity: Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`key-${k}`, { resource: RESOURCES[k].name, at: iso(T - 10000) }])) },
  };
}

function timePlan(state, label, baseline, kind = 'acquire') {
  const content = `${JSON.stringify(state, null, 2)}\n`;
  const inputs = { lock: 'pool', GITHUB_REPOSITORY: 'octo/app', GITHUB_RUN_ID: '1', GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'j', 'timeout-minutes': '0', prefer: 'provider-1', partition: 'area-1' };
  if (kind === 'status') for (const k of ['timeout-minutes', 'prefer', 'partition']) delete inputs[k];
  const times = [];
  let command;
  for (let i = 0; i < RUNS; i++) {
    const op = new Operation(kind, inputs, { seed: 1, nonce: '00000000000000aa' });
    op.step({ kind: 'start', now: T });
    const t = process.hrtime.bigint();
    command = op.step({ kind: 'reply', now: T + 10, reply: { kind: 'file', sha: 's', content } }).command;
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    op.free?.();
  }
  const m = median(times);
  const extra = baseline === undefined ? '' : `; less reading the same state (status) ${(m - baseline).toFixed(2)} ms`;
  out(`  ${label}: median ${m.toFixed(2)} ms, min ${Math.min(...times).toFixed(2)} ms over ${RUNS} plans (state ${(content.length / 1024).toFixed(0)} KiB; next command ${command.kind})${extra}`);
  return m;
}

/** The same state as a plain lock's: no pool fields, FIFO of capacity 64. */
function plainOf(state) {
  const strip = ({ pool, ...rest }) => rest;
  return { ...strip(state), config: { capacity: 64, readAt: state.config.readAt }, holders: state.holders.map(strip), queue: state.queue.map(strip) };
}

out('the core\'s choice, in wasm (an acquire\'s plan on the state\'s text: parse, admission, render)');
// 64 holders fill every in-flight slot: the scan stops at once.
const full = poolState(64, 1000);
timePlan(plainOf(full), 'for scale, a plain lock of capacity 64 (FIFO), 64 holders, 1,000 waiters');
timePlan(full, '50 resources, 64 holders (full), 1,000 waiters', timePlan(full, 'status on it (reading the same state, no admission)', undefined, 'status'));
// 63 holders and one free seat that only the last of the 1,000 waiters may take: every waiter's
// choice runs over the 50 resources first (the worst case of a scan).
const worst = poolState(63, 1000, { freeFor: RESOURCES[49].name });
worst.holders = worst.holders.filter((h) => h.pool.resource !== RESOURCES[49].name).concat(worst.holders.filter((h) => h.pool.resource === RESOURCES[49].name).slice(1));
timePlan(worst, '50 resources, 63 holders, one free seat for the last of 1,000 waiters (every waiter judged)', timePlan(worst, 'status on it', undefined, 'status'));

/** The pool's config file, as the state records it. */
const CONFIG = `${JSON.stringify({ resources: Object.fromEntries(RESOURCES.map((r) => [r.name, { capacity: r.capacity, tags: r.tags }])), affinitySeconds: 300, nonReservingAtoms: ['docs'] })}\n`;

function timePass(state, label) {
  const bench = new PoolBench('pool', `${JSON.stringify(state, null, 2)}\n`, 'locks/pool.config.json', CONFIG);
  const time = (f) => {
    const xs = [];
    let last;
    for (let i = 0; i < PASSES; i++) {
      const t = process.hrtime.bigint();
      last = f();
      xs.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return { xs, last };
  };
  for (let i = 0; i < 50; i++) bench.admit(T + 10); // warm up
  const pass = time(() => bench.admit(T + 10));
  const copy = time(() => bench.copy());
  const f = (x) => x.toFixed(3);
  out(`  ${label}: copy + pass median ${f(median(pass.xs))} ms, p95 ${f(p95(pass.xs))} ms; the copy alone median ${f(median(copy.xs))} ms, p95 ${f(p95(copy.xs))} ms; the pass less the copy ${f(median(pass.xs) - median(copy.xs))} ms (${PASSES} passes, ${pass.last} admitted each)`);
  bench.free?.();
}

out('');
out(`the admission pass alone, in wasm, on a state parsed once (PoolBench; ${PASSES} passes each)`);
timePass(full, '50 resources, 64 holders (full), 1,000 waiters');
timePass(worst, '50 resources, 63 holders, one free seat for the last of 1,000 waiters (every waiter judged)');

const emu = await startEmulator({
  owner: 'octo',
  repo: 'locks',
  files: {
    'locks/pool.config.json': `${JSON.stringify({ resources: { a: { capacity: 1, tags: ['x'] }, b: { capacity: 2, tags: ['y'] } } })}\n`,
    'locks/plain.config.json': '{"capacity": 2}\n',
  },
});
try {
  const cycle = async (lock, runId, extra = {}) => {
    const context = jobContext({ repository: 'octo/app', runId });
    const from = emu.log.length;
    const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock, repository: 'octo/locks', 'record-job-id': 'false', ...extra }, context });
    // Release gets what acquire exported (GITHUB_ENV), as a later step of the same job does.
    const r = await runAction('release', { apiUrl: emu.url, inputs: { lock, repository: 'octo/locks' }, context, env: a.exported });
    if (a.outputs.result !== 'acquired' || r.outputs.result !== 'released') throw new Error(`cycle failed: ${a.stdout}${r.stdout}`);
    const log = emu.log.slice(from);
    return { requests: log.length, writes: log.filter((q) => q.method !== 'GET').length, resource: a.outputs.resource };
  };
  out('');
  for (const [lock, extra] of [['plain', {}], ['pool', { prefer: 'y', partition: 'db' }]]) {
    await cycle(lock, 1); // first use: the state file is created
    const warm = [];
    for (let i = 0; i < 5; i++) {
      await sleep(1100); // uncontended: nobody wrote the lock in the last second
      warm.push(await cycle(lock, 100 + i, extra));
    }
    const r = warm.map((w) => w.requests);
    out(`uncontended acquire + release on a ${lock} lock: ${median(r)} requests (${warm[0].writes} writes) in the steady state, over ${warm.length} cycles${warm[0].resource ? ` (granted ${warm[0].resource})` : ''}`);
  }
} finally {
  await emu.close();
}
