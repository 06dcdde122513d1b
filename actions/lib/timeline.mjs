// Who held a lock when, from its state and the state's lastChange: as a Mermaid gantt for job
// summaries, and as text bars for a terminal. Presentation only: it reads a state, decides
// nothing.
//
// What the state records: each current holding's `acquiredAt` (it runs to now), each waiter's
// `enqueuedAt`, and in `lastChange` the holdings the last write ended (its writer's own release,
// or the expired ones it removed), with when it ended them but not when they began: those bars
// start at the chart's left edge and say so.

/**
 * The bars of a state's timeline at `now` (ms): { holdings, queue, start, end }, each bar
 * { label, start, end, open (runs to now), startKnown, fence? }, holdings by fence.
 */
export function timelineOf(state, now) {
  const ms = (t) => (t === undefined || t === null ? undefined : Date.parse(t));
  const change = state?.lastChange;
  const changedAt = ms(change?.at);
  const holders = (state?.holders ?? []).map((h) => ({
    label: `fence ${h.fence} ${h.holderId}`,
    fence: h.fence,
    holderId: h.holderId,
    start: ms(h.acquiredAt),
    end: now,
    open: true,
    startKnown: true,
  }));
  const ended = [];
  if (change && changedAt !== undefined) {
    for (const r of change.removed ?? []) {
      ended.push({ label: `fence ${r.fence} ${r.holderId} (removed: ${r.reason})`, fence: r.fence, holderId: r.holderId, end: changedAt, open: false, startKnown: false });
    }
    // A release ends its writer's holding (a release that only left the queue is `leave-queue`).
    const released = change.action === 'release' && !holders.some((h) => h.holderId === change.by) && !ended.some((e) => e.holderId === change.by);
    if (released) {
      ended.push({ label: `${change.by} (released)`, holderId: change.by, end: changedAt, open: false, startKnown: false });
    }
  }
  const queue = (state?.queue ?? []).map((q, i) => ({
    label: `#${i + 1} ${q.holderId}`,
    holderId: q.holderId,
    start: ms(q.enqueuedAt),
    end: now,
    open: true,
    startKnown: true,
  }));
  const known = [...holders, ...queue].map((b) => b.start).filter((t) => t !== undefined);
  const ends = [...ended.map((e) => e.end), now];
  // With nothing but ended holdings, show the minute before their end.
  const start = Math.min(...known, ...ends.map((t) => t - 60_000));
  for (const e of ended) e.start = Math.min(start, e.end);
  const holdings = [...ended, ...holders].sort((a, b) => (a.fence ?? 0) - (b.fence ?? 0));
  return { holdings, queue, start, end: Math.max(now, ...ends) };
}

/** How many waiters a job summary lists (its table and its gantt); the rest are counted. */
export const SHOWN_WAITERS = 50;

/** The longest task name drawn: a holder id may be 400 characters, a bar's label is a glance. */
const TASK_NAME_MAX = 80;

/** Text Mermaid reads as a task's name: no `:` (it ends the name), `#` or `;`, one line, at
 *  most TASK_NAME_MAX characters (the tables beside it give every id whole). */
const taskName = (text) => {
  const name = String(text).replace(/[:;#]/g, ' ').replace(/\s+/g, ' ').trim();
  return name.length > TASK_NAME_MAX ? `${name.slice(0, TASK_NAME_MAX - 1)}…` : name;
};

/**
 * A Mermaid gantt of the timeline: section "holdings" (one bar per holding, current ones
 * marked active and running to now), section "queue" (one bar per waiter). Times are ms
 * timestamps (`dateFormat x`), shown in UTC by GitHub's renderer.
 */
export function mermaidGantt(state, now, { title } = {}) {
  const t = timelineOf(state, now);
  const lines = ['gantt', `  title ${taskName(title ?? `who held ${state?.lock ?? 'the lock'}`)}`, '  dateFormat x', '  axisFormat %H:%M:%S'];
  const bar = (b, tag, id) => {
    const suffix = b.open ? ' → now' : b.startKnown ? '' : ' (start not recorded)';
    const end = Math.max(b.end, b.start + 1);
    return `  ${taskName(b.label)}${suffix} :${tag ? `${tag}, ` : ''}${id}, ${b.start}, ${end}`;
  };
  lines.push('  section holdings');
  if (t.holdings.length === 0) lines.push(`  no holdings :milestone, none, ${now}, ${now}`);
  t.holdings.forEach((b, i) => lines.push(bar(b, b.open ? 'active' : 'done', `h${i}`)));
  if (t.queue.length > 0) {
    // A long queue is cut: GitHub's renderer refuses a diagram past Mermaid's text limit.
    const shown = t.queue.slice(0, SHOWN_WAITERS);
    lines.push(shown.length < t.queue.length ? `  section queue, first ${shown.length} of ${t.queue.length}` : '  section queue');
    shown.forEach((b, i) => lines.push(bar(b, '', `q${i}`)));
  }
  return lines.join('\n');
}

const clock = (t) => new Date(t).toISOString().slice(11, 19);

/** The timeline as text bars, `width` columns wide, for a terminal. */
export function textTimeline(state, now, width = 48) {
  const t = timelineOf(state, now);
  const rows = [...t.holdings.map((b) => ['held', b]), ...t.queue.map((b) => ['queue', b])];
  if (rows.length === 0) return ['  (nothing held, nobody waiting)'];
  const span = Math.max(1, t.end - t.start);
  const col = (ms) => Math.min(width - 1, Math.floor(((ms - t.start) / span) * width));
  const labelWidth = Math.min(60, Math.max(...rows.map(([, b]) => b.label.length)));
  const lines = [`  ${''.padEnd(6)}${''.padEnd(labelWidth)}  ${clock(t.start)}${clock(t.end).padStart(width - 8)}`];
  for (const [kind, b] of rows) {
    const from = b.startKnown ? col(b.start) : 0;
    const to = Math.max(from, col(b.end));
    const fill = kind === 'held' ? '█' : '░';
    const cells = ' '.repeat(from) + (b.startKnown ? '' : '…') + fill.repeat(Math.max(1, to - from + 1 - (b.startKnown ? 0 : 1)));
    const note = b.open ? ' now' : b.startKnown ? '' : ` ended ${clock(b.end)}`;
    lines.push(`  ${kind.padEnd(6)}${b.label.slice(0, labelWidth).padEnd(labelWidth)} |${cells.padEnd(width)}|${note}`);
  }
  return lines;
}
