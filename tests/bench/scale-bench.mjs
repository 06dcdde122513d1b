// npm run bench:scale: a lock at its limits, 64 holders and 1,000 queued waiters. Prints the
// state document's size against what GitHub's contents API serves (JSON with the content up to
// 1 MB; larger files raw only, up to 100 MB: docs/github-semantics.md#contents-size) and the
// time of one decision in the built wasm (parse the document, plan, render the new version),
// median and p95 over many decisions. Nothing is asserted: the refusal past the limit is
// tested (crates/leasehold-core/tests/scale.rs); speed is only measured here.
//
//   node tests/bench/scale-bench.mjs [--holders 64] [--waiters 1000] [--runs 40]
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadCore } from '../../dist/leasehold-core.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const HOLDERS = arg('holders', 64);
const WAITERS = arg('waiters', 1000);
const RUNS = arg('runs', 40);
const NOW = Date.parse('2027-01-15T12:00:00Z');
const iso = (ms) => new Date(ms).toISOString();
const MB = 1024 * 1024;

const run = (n, job) => ({ repository: 'octo/app', runId: n, runAttempt: 1, job, runnerName: `runner-${n}`, url: `https://github.com/octo/app/actions/runs/${n}/attempts/1`, jobId: n * 10 });
function state({ holders, waiters, job = 'build' }) {
  return {
    schema: 1,
    lock: 'big',
    revision: 5000,
    fence: holders + 10,
    config: { capacity: 64, readAt: iso(NOW - 1000) },
    holders: Array.from({ length: holders }, (_, i) => ({
      holderId: `octo/app:${i}:${job}`,
      nonce: i.toString(16).padStart(16, '0'),
      fence: i + 11,
      run: run(i, job),
      acquiredAt: iso(NOW - 60_000),
      expiresAt: iso(NOW + 3_600_000),
      leaseMs: 3_600_000,
      ceilingAt: iso(NOW + 6 * 3_600_000),
      claimedAt: iso(NOW - 60_000),
    })),
    queue: Array.from({ length: waiters }, (_, i) => ({
      holderId: `octo/app:${10_000 + i}:${job}`,
      nonce: (10_000 + i).toString(16).padStart(16, '0'),
      run: run(10_000 + i, job),
      leaseMs: 3_600_000,
      enqueuedAt: iso(NOW - 30_000),
      lastSeenAt: iso(NOW - 30_000),
    })),
  };
}
const text = (s) => `${JSON.stringify(s, null, 2)}\n`;
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const core = loadCore();
const inputs = (runId) => ({ lock: 'big', GITHUB_REPOSITORY: 'octo/app', GITHUB_RUN_ID: String(runId), GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'build', 'timeout-minutes': '5' });

/** One acquire's decision on `content`: from the read's answer to the next command. */
function decide(content, runId, seed) {
  const op = new core.Operation('acquire', inputs(runId), { seed, nonce: seed.toString(16).padStart(16, '0') });
  try {
    op.step({ kind: 'start', now: NOW });
    const t = performance.now();
    const step = op.step({ kind: 'reply', now: NOW + 5, reply: { kind: 'file', sha: 'a'.repeat(40), content, date: new Date(NOW).toUTCString() } });
    return { ms: performance.now() - t, step };
  } finally {
    op.free?.();
  }
}

console.log(`leasehold scale benchmark, ${new Date().toISOString().slice(0, 10)}; ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}`);
const full = text(state({ holders: HOLDERS, waiters: WAITERS }));
const bytes = Buffer.byteLength(full);
const base64 = Math.ceil(bytes / 3) * 4;
console.log(`state document, ${HOLDERS} holders and ${WAITERS} waiters: ${bytes} bytes (${(bytes / 1024).toFixed(0)} KiB; ${(bytes / (HOLDERS + WAITERS)).toFixed(0)} bytes per entry)`);
console.log(`  GitHub's contents API: JSON with content up to 1 MB (${MB} bytes): ${((100 * bytes) / MB).toFixed(0)}% of it; base64 in the answer ${base64} bytes; leasehold's own limit (MAX_STATE_BYTES) 1000000 bytes`);
const longest = text(state({ holders: HOLDERS, waiters: WAITERS, job: `j${'x'.repeat(99)}` }));
console.log(`  with 100-character job ids: ${Buffer.byteLength(longest)} bytes`);

for (const [name, waiters] of [
  ['one more waiter joins (64 held, 999 waiting)', WAITERS - 1],
  ['one more waiter is refused, queue-full (64 held, 1,000 waiting)', WAITERS],
]) {
  const content = text(state({ holders: HOLDERS, waiters }));
  const times = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    const { ms, step } = decide(content, 90_000 + i, 1 + i);
    times.push(ms);
    last = step;
  }
  const what = last.command.kind === 'finish' ? `finish ${last.command.outcome.error?.code ?? last.command.outcome.result}` : last.command.kind;
  console.log(`one decision in wasm, ${name}: median ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms over ${RUNS} (next command: ${what})`);
}
