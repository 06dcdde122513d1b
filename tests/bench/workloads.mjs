// The side-by-side workloads of `npm run bench` (issue #15): many jobs on one lock, each a real
// action process (acquire, hold, release with what acquire exported, as the runner passes a
// step's GITHUB_ENV to the job's later steps), against the emulator with GitHub's rate limits
// on. Prints requests, wall time, acquire median, handoff median/p95 and counted requests/s.
//
//   node tests/bench/workloads.mjs [eight|sixteen]
import { startEmulator } from '../emulator/emulator.mjs';
import { jobContext, runAction } from '../helpers/action-runner.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * Records when the emulator answered each request (local ms), from the moment it is called: a
 * commit's `lastChange.at` has GitHub's whole-second resolution, which would overstate a handoff
 * by up to a second. Returns `writes(path)`: when each successful write of the file at `path`
 * (a contents API path, `locks/x.json`) was answered, oldest first. The first is the creation of
 * the state branch's ref when the state rode in its first commit (the workloads' lock repository
 * has no other ref created).
 */
export function recordAnswers(emu) {
  const sent = new Map();
  const push = emu.log.push.bind(emu.log);
  emu.log.push = (entry) => {
    sent.set(entry, Date.now());
    return push(entry);
  };
  return (path) =>
    emu.log
      .filter((q) => sent.has(q) && q.status < 300 &&
        ((q.method === 'PUT' && q.path.endsWith(`/contents/${path}`)) || (q.method === 'POST' && q.path.endsWith('/git/refs'))))
      .map((q) => sent.get(q) + q.ms)
      .sort((a, b) => a - b);
}

/**
 * Handoff times (ms) from a lock's history: for each commit whose release admitted a waiter, the
 * time from that commit to the end of the admitted waiter's acquire step (`acquiredAt`: holder
 * id → local ms). The commit's time is when its write was answered (`written`: one per commit,
 * from [`recordAnswers`]) when every commit of the history is one of those writes, else its
 * `lastChange.at`.
 */
export function handoffTimes(history, acquiredAt, written = []) {
  const handoffs = [];
  const exact = written.length === history.length;
  let previous = new Set();
  for (const [k, { content }] of history.entries()) {
    const state = JSON.parse(content);
    const now = new Set(state.holders.map((h) => h.holderId));
    if (state.lastChange?.action === 'release') {
      const at = exact ? written[k] : Date.parse(state.lastChange.at);
      for (const id of now) if (!previous.has(id) && acquiredAt.has(id)) handoffs.push(acquiredAt.get(id) - at);
    }
    previous = now;
  }
  return handoffs;
}

/** What the emulator answered (a slice of its request log): every request, those counted against
 *  GitHub's primary limit (all but 304s), the 304s, the compare-and-swap conflicts and the
 *  rate-limit refusals. */
export function tally(log) {
  const notModified = log.filter((q) => q.status === 304).length;
  return {
    requests: log.length,
    counted: log.length - notModified,
    notModified,
    conflicts: log.filter((q) => q.status === 409 || q.status === 422).length,
    limited: log.filter((q) => q.status === 403 || q.status === 429).length,
  };
}

export const WORKLOADS = {
  eight: { name: '8 jobs from 3 repositories, fresh lock of capacity 2, hold 1 s, poll-seconds 2', jobs: 8, repos: 3, capacity: 2, holdMs: 1000, poll: 2, fresh: true, gapMs: 50 },
  sixteen: { name: '16 jobs from 4 repositories, capacity 2, hold 5 s, default poll-seconds (10), GitHub write limit enforced', jobs: 16, repos: 4, capacity: 2, holdMs: 5000, poll: 10, fresh: false, gapMs: 50 },
};

/** Runs one workload; `carry: false` releases without acquire's exported version. */
export async function runWorkload(w, { carry = true } = {}) {
  const emu = await startEmulator({
    owner: 'octo',
    repo: 'locks',
    files: { 'locks/shared.config.json': `{"capacity": ${w.capacity}}\n` },
    limits: { primaryPerHour: 5000, contentPerMinute: 80, contentPerHour: 500 },
  });
  const written = recordAnswers(emu);
  try {
    const inputs = { lock: 'shared', repository: 'octo/locks', 'record-job-id': 'false' };
    if (!w.fresh) {
      // A lock in use (its state branch exists): this measures contention, not first use.
      const warm = jobContext({ runId: 1 });
      const a = await runAction('acquire', { apiUrl: emu.url, inputs, context: warm });
      await runAction('release', { apiUrl: emu.url, inputs, context: warm, env: carry ? a.exported : {} });
      await sleep(1500);
    }
    const from = emu.log.length;
    const t0 = Date.now();
    const jobs = await Promise.all(
      Array.from({ length: w.jobs }, async (_, i) => {
        const context = jobContext({ repository: `octo/repo-${i % w.repos}`, runId: 5000 + i });
        await sleep(i * w.gapMs);
        const started = Date.now();
        const a = await runAction('acquire', { apiUrl: emu.url, inputs: { ...inputs, 'poll-seconds': String(w.poll), 'timeout-minutes': '30' }, context });
        const acquiredAt = Date.now();
        await sleep(w.holdMs);
        const r = await runAction('release', { apiUrl: emu.url, inputs, context, env: carry ? a.exported : {} });
        return { started, acquiredAt, a, r, holderId: a.outputs['holder-id'] };
      }),
    );
    const wall = (Date.now() - t0) / 1000;
    const failed = jobs.filter((j) => j.a.outputs.result !== 'acquired' || j.r.outputs.result !== 'released').length;
    const log = emu.log.slice(from);
    const history = await emu.repo('octo', 'locks').history('leasehold-state', 'locks/shared.json');
    const handoffs = handoffTimes(history, new Map(jobs.map((j) => [j.holderId, j.acquiredAt])), written('locks/shared.json'));
    const counts = tally(log);
    return {
      failed,
      ...counts,
      wall,
      acquireMedian: median(jobs.map((j) => j.acquiredAt - j.started)) / 1000,
      handoffMedian: median(handoffs) / 1000,
      handoffP95: percentile(handoffs, 95) / 1000,
      handoffs: handoffs.length,
      countedPerSecond: counts.counted / wall,
    };
  } finally {
    await emu.close();
  }
}

export function describeRun(r) {
  return `${r.failed ? `${r.failed} JOBS FAILED; ` : ''}${r.requests} requests (${r.counted} counted, ${r.notModified} answered 304, ${r.conflicts} conflicts, ${r.limited} refused 403/429); ` +
    `wall ${fmt(r.wall)} s; acquire median ${fmt(r.acquireMedian, 2)} s; handoff median ${fmt(r.handoffMedian, 2)} s, p95 ${fmt(r.handoffP95, 2)} s over ${r.handoffs}; ` +
    `${fmt(r.countedPerSecond, 2)} counted requests/s`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const key of process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(WORKLOADS)) {
    const r = await runWorkload(WORKLOADS[key], { carry: !process.env.NO_CARRY });
    console.log(`${WORKLOADS[key].name}: ${describeRun(r)}`);
  }
}
