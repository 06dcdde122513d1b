// `leasehold status` for a person at a terminal: the lock's holders, its queue and a timeline of
// who held it when, from the status command's result document. Presentation only.
import { textTimeline } from './timeline.mjs';

const ago = (from, now) => {
  const s = Math.max(0, Math.round((now - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${(s / 3600).toFixed(1)}h`;
};
const clock = (t) => (t ? String(t).replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => `  ${r.map((c, i) => String(c).padEnd(widths[i])).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The terminal view of a status result document at `now` (ms), ending in a newline. */
export function statusView(doc, plan, now) {
  const o = doc.outcome ?? {};
  const lines = [`lock ${plan.lock} in ${plan.repository} (state branch ${plan.stateBranch})`];
  if (doc.exitCode !== 0 || !o.state) {
    lines.push(`  ${doc.status} (exit ${doc.exitCode}, ${doc.action})${doc.error ? `: ${doc.error.code}: ${doc.error.message}` : ''}`);
    if (!o.state && doc.exitCode === 0) lines.push('  never used: no state yet (nothing held, nobody waiting)');
    return `${lines.join('\n')}\n`;
  }
  const s = o.state;
  lines.push(`  ${s.holders.length} of capacity ${o.capacity ?? s.config?.capacity ?? '?'} held · ${s.queue.length} waiting · last fence ${s.fence} · revision ${s.revision}`);
  if (s.lastChange) lines.push(`  last change: ${s.lastChange.action} by ${s.lastChange.by} at ${clock(s.lastChange.at)}`);
  lines.push('', 'Holders');
  if (s.holders.length === 0) lines.push('  none');
  else {
    const rows = s.holders.map((h) => [h.fence, h.holderId, `${clock(h.acquiredAt)} (${ago(h.acquiredAt, now)} ago)`, clock(h.expiresAt), h.run?.url ?? '']);
    lines.push(...table(['fence', 'holder', 'since', 'lease until', 'run'], rows));
  }
  lines.push('', 'Queue');
  if (s.queue.length === 0) lines.push('  empty');
  else {
    const rows = s.queue.map((q, i) => [i + 1, q.holderId, `${clock(q.enqueuedAt)} (${ago(q.enqueuedAt, now)} ago)`, q.run?.url ?? '']);
    lines.push(...table(['#', 'holder', 'waiting since', 'run'], rows));
  }
  lines.push('', 'Timeline (UTC)', ...textTimeline(s, now));
  return `${lines.join('\n')}\n`;
}
