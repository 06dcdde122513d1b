// A job summary of a long queue stays readable and within what GitHub takes: a step's summary
// is at most 1 MiB, and GitHub's Mermaid renderer refuses a diagram over 50,000 characters
// (Mermaid's maxTextSize). The summary lists the first waiters (table and gantt) and counts the
// rest; the reaper's table lists every removal and renewal, and the first of what it kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summaryFor } from '../actions/lib/report.mjs';
import { SHOWN_WAITERS } from '../actions/lib/timeline.mjs';

const MERMAID_MAX_TEXT = 50_000;
const STEP_SUMMARY_MAX = 1024 * 1024;
const NOW = Date.parse('2026-12-02T12:00:00Z');
const at = (s) => new Date(NOW - s * 1000).toISOString();
const run = (n) => ({ repository: 'octo-org/a-repository-with-a-long-name', runId: 9_000_000_000 + n, runAttempt: 1, job: 'build', runnerName: `runner-${n}`, url: `https://github.com/octo-org/a-repository-with-a-long-name/actions/runs/${9_000_000_000 + n}/attempts/1`, jobId: 50_000_000_000 + n });
const holderId = (n) => `octo-org/a-repository-with-a-long-name:${9_000_000_000 + n}:build:matrix-cell-${'x'.repeat(40)}-${n}`;
const plan = { repository: 'octo-org/locks', stateBranch: 'leasehold-state' };
const stats = { requests: 3, reads: 1, notModified: 0, writes: 2, conflicts: 0, retries: 0, rateLimitWaits: 0, polls: 0 };

function state(waiters) {
  return {
    schema: 1,
    lock: 'seats',
    revision: 5000,
    fence: 4000,
    config: { capacity: 2 },
    holders: [1, 2].map((n) => ({ holderId: holderId(n), nonce: `n${n}`, fence: 3998 + n, run: run(n), acquiredAt: at(600), expiresAt: at(-600), leaseMs: 1_200_000, ceilingAt: at(-6000) })),
    queue: Array.from({ length: waiters }, (_, i) => ({ holderId: holderId(100 + i), nonce: `q${i}`, run: run(100 + i), enqueuedAt: at(500 - i * 0.1) })),
  };
}
const mermaidOf = (summary) => summary.match(/```mermaid\n([\s\S]*?)\n```/)[1];
const queueRows = (summary) => summary.split('**Queue**')[1].split('**Timeline**')[0].split('\n').filter((l) => /^\| \d+ \| `/.test(l));

test('a queue of 1,000 waiters: the first ones listed and drawn, the rest counted, within GitHub\'s limits', () => {
  const summary = summaryFor('acquire', { lock: 'seats', result: 'timeout', state: state(1000), stats, holderId: holderId(7) }, plan, NOW);
  assert.ok(Buffer.byteLength(summary) < STEP_SUMMARY_MAX / 4, `${Buffer.byteLength(summary)} bytes`);
  assert.equal(queueRows(summary).length, SHOWN_WAITERS);
  assert.match(summary, /\*\*Queue\*\* \(1000 waiting\)/);
  assert.match(summary, new RegExp(`_… and ${1000 - SHOWN_WAITERS} more waiting after these \\(the state file \`locks/seats.json\` on \`leasehold-state\` lists every one\\)\\._`));
  const gantt = mermaidOf(summary);
  assert.ok(gantt.length < MERMAID_MAX_TEXT, `${gantt.length} characters of Mermaid`);
  assert.match(gantt, new RegExp(`section queue, first ${SHOWN_WAITERS} of 1000\n`));
  assert.equal(gantt.split('\n').filter((l) => /:q\d+, /.test(l)).length, SHOWN_WAITERS);
  // A queue that fits is listed whole, under its plain section name.
  const short = summaryFor('status', { lock: 'seats', result: 'status', state: state(SHOWN_WAITERS), stats }, plan, NOW);
  assert.equal(queueRows(short).length, SHOWN_WAITERS);
  assert.doesNotMatch(short, /more waiting/);
  assert.match(mermaidOf(short), /section queue\n/);
});

test('a full lock of the longest ids: 64 holders, 64 more just removed, 1,000 waiters', () => {
  // The longest holder id the core accepts: a repository of a 100-character owner and name, a
  // 100-character job id, a 200-character suffix (policy/limits.rs).
  const repo = `${'o'.repeat(100)}/${'r'.repeat(100)}`;
  const longId = (n) => `${repo}:${9_000_000_000 + n}:${'j'.repeat(100)}:${String(n).padStart(200, 's')}`;
  const st = state(1000);
  const holder = (n) => ({ ...st.holders[0], holderId: longId(n), fence: 3000 + n, run: { ...run(n), repository: repo } });
  st.config.capacity = 64;
  st.holders = Array.from({ length: 64 }, (_, i) => holder(i));
  st.queue = st.queue.map((q, i) => ({ ...q, holderId: longId(1000 + i) }));
  st.lastChange = { at: at(1), by: longId(5000), action: 'acquire', removed: Array.from({ length: 64 }, (_, i) => ({ holderId: longId(2000 + i), fence: 2000 + i, reason: 'lease-expired' })) };
  const summary = summaryFor('status', { lock: 'seats', result: 'status', state: st, stats }, plan, NOW);
  const gantt = mermaidOf(summary);
  assert.ok(gantt.length < MERMAID_MAX_TEXT, `${gantt.length} characters of Mermaid`);
  assert.equal(gantt.split('\n').filter((l) => /:(active, |done, )?[hq]\d+, /.test(l)).length, 64 + 64 + SHOWN_WAITERS);
  assert.match(gantt, /…/, 'long names are cut');
  assert.ok(Buffer.byteLength(summary) < STEP_SUMMARY_MAX / 2, `${Buffer.byteLength(summary)} bytes`);
  assert.ok(summary.includes(longId(63)), 'the holders table gives each id whole');
});

test("the reaper's table lists every removal, recovery and renewal, and the first of what it kept", () => {
  const entry = (n, action) => ({ action, reason: action === 'kept' ? 'active' : 'job-completed', holderId: holderId(n), place: 'queue', run: run(n), detail: `job ${50_000_000_000 + n} is in_progress` });
  const entries = [...Array.from({ length: 1000 }, (_, i) => entry(100 + i, 'kept')), entry(3, 'removed'), entry(4, 'renewed'), entry(6, 'recovered'), entry(5, 'removed')];
  const outcome = { lock: 'seats', result: 'reaped', stats, holderId: 'octo-org/locks:1:reap', reaped: [{ lock: 'seats', entries }] };
  const summary = summaryFor('reap', outcome, plan, NOW);
  const rows = summary.split('\n').filter((l) => /^\| (removed|recovered|renewed|kept) \|/.test(l));
  assert.deepEqual(rows.map((l) => l.split(' | ')[0]).slice(0, 4), ['| removed', '| removed', '| recovered', '| renewed'], 'kept comes last');
  assert.equal(rows.filter((l) => l.startsWith('| kept')).length, SHOWN_WAITERS);
  assert.match(summary, /\*\*`seats`\*\*: 2 removed, 1 renewed, 1000 kept/);
  assert.equal(rows.length, 4 + SHOWN_WAITERS);
  assert.match(summary, new RegExp(`_… and ${1000 - SHOWN_WAITERS} more kept\\._`));
  assert.ok(Buffer.byteLength(summary) < STEP_SUMMARY_MAX / 4);
});

test("what another consumer wrote in the state (a run's url and repository) is escaped in the summary, and a url that is no plain http(s) address is no link", () => {
  const st = state(1);
  st.holders[0].run = { ...run(1), url: '"><img src=https://x.example/t.png>', repository: '<b>octo</b>/app' };
  st.holders[1].run = { ...run(2), url: 'javascript:alert(1)', repository: '![x](https://x.example/t.png) [click](https://x.example)' };
  st.queue[0].run = { ...run(100), url: 'https://github.com/octo/app/actions/runs/1?a=1&b=2' };
  const summary = summaryFor('status', { lock: 'seats', result: 'status', state: st, stats }, plan, NOW);
  assert.doesNotMatch(summary, /<img|<b>|href="javascript:|!\[x\]\(|\[click\]\(/);
  assert.match(summary, /&#33;&#91;x&#93;&#40;/, 'Markdown of others is shown, not rendered');
  // An identifier with a backtick cannot end its code span: it is an HTML <code> element.
  const st2 = state(0);
  st2.holders[0].holderId = 'octo/app:1:build`[click](https://x.example)`';
  const second = summaryFor('status', { lock: 'seats', result: 'status', state: st2, stats }, plan, NOW);
  // (The gantt's labels are Mermaid's, not Markdown: nothing there renders as a link.)
  assert.doesNotMatch(second.replace(/```mermaid[\s\S]*?```/g, ''), /\[click\]\(/);
  assert.match(second, /<code>octo\/app:1:build&#96;&#91;click/);
  // A line break in what GitHub said stays in its callout.
  const failed = summaryFor('status', { lock: 'seats', result: 'failed', state: st2, stats, error: { code: 'refused', message: 'first\n# heading' } }, plan, NOW);
  assert.doesNotMatch(failed, /^# heading/m);
  assert.match(summary, /&#60;b&#62;octo&#60;\/b&#62;\/app run 9000000001/);
  assert.match(summary, /<a href="https:\/\/github\.com\/octo\/app\/actions\/runs\/1\?a=1&amp;b=2">/);
});
