// Turns a finished outcome into step outputs, log lines and a job summary. Presentation only.
import { SHOWN_WAITERS, mermaidGantt } from './timeline.mjs';

const iso = (value) => (value ? String(value).replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

/** The step outputs for an operation's outcome, as strings keyed by output name. */
export function outputsFor(kind, outcome) {
  const text = (value) => (value === undefined || value === null ? '' : String(value));
  const error = text(outcome.error?.code);
  if (kind === 'acquire') {
    return {
      acquired: text(outcome.acquired ?? false),
      result: outcome.result,
      'holder-id': outcome.holderId,
      fence: text(outcome.fence),
      nonce: text(outcome.nonce),
      'wait-ms': text(outcome.waitMs),
      'queue-position': text(outcome.queuePosition),
      'error-code': error,
      resource: text(outcome.resource),
      'resource-tags': (outcome.resourceTags ?? []).join(','),
      'incident-id': text(outcome.lifecycle?.incidentId),
    };
  }
  if (kind === 'recover') {
    return {
      result: outcome.result,
      'reservation-id': text(outcome.lifecycle?.reservationId),
      'incident-id': text(outcome.lifecycle?.incidentId),
      'error-code': error,
    };
  }
  if (kind === 'renew') {
    return {
      renewed: text(outcome.result === 'renewed'),
      result: outcome.result,
      'expires-at': outcome.lease ? new Date(outcome.lease.expiresAt).toISOString() : '',
      'holder-id': outcome.holderId,
      'error-code': error,
    };
  }
  if (kind === 'reap') {
    const entries = (outcome.reaped ?? []).flatMap((r) => r.entries);
    const count = (action) => String(entries.filter((e) => e.action === action).length);
    return {
      result: outcome.result,
      removed: count('removed'),
      renewed: count('renewed'),
      kept: count('kept'),
      report: JSON.stringify(outcome.reaped ?? []),
      'error-code': error,
    };
  }
  if (kind === 'report-usage') {
    return { result: outcome.result, resource: text(outcome.resource), 'error-code': error };
  }
  if (kind === 'status') {
    const state = outcome.state;
    return {
      capacity: text(outcome.capacity),
      holders: text(state?.holders.length ?? 0),
      waiting: text(state?.queue.length ?? 0),
      fence: text(state?.fence ?? 0),
      state: state ? JSON.stringify(state) : '',
      result: outcome.result,
      'error-code': error,
    };
  }
  // Without the lifecycle the cleanup result is the release's own result word.
  const plain = ['released', 'queue-cleaned', 'noop', 'release-unrecorded'].includes(outcome.result) ? outcome.result : '';
  return {
    released: text(outcome.released ?? false),
    result: outcome.result,
    'holder-id': outcome.holderId,
    'error-code': error,
    'cleanup-result': text(outcome.lifecycle?.cleanupResult ?? plain),
    'reservation-id': text(outcome.lifecycle?.reservationId),
    'incident-id': text(outcome.lifecycle?.incidentId),
    'report-degraded': text(outcome.lifecycle?.reportDegraded ?? false),
    'report-validation-error': text(outcome.lifecycle?.reportCode),
  };
}

// Plain text (not a code span) that others wrote: HTML and Markdown's own punctuation (links,
// images, emphasis, code) as character references, so it reads as written and renders nothing.
export const escapeText = (text) => String(text ?? '').replace(/[\r\n]+/g, ' ').replace(/[&<>|[\]()!*_~`\\#]/g, (c) => `&#${c.charCodeAt(0)};`);
// An identifier others wrote, as code: a Markdown code span when it holds only the characters
// leasehold's identifiers are made of, else an HTML <code> element around its escaped text (a
// backtick would end the span, and a code span shows character references as they are).
export const code = (text) => {
  const t = String(text ?? '');
  return /^[A-Za-z0-9._:/@+=,-]*$/.test(t) ? `\`${t}\`` : `<code>${escapeText(t)}</code>`;
};

/**
 * A holder's run, linked. What the state says is another consumer's writing: its text is
 * escaped, and its url is a link only when it is a plain http(s) address (no quote, space or
 * angle bracket to break out of the attribute).
 */
function runLink(run) {
  const job = run?.jobId ? `, job ${escapeText(run.jobId)}` : '';
  const url = typeof run?.url === 'string' && /^https?:\/\/[^\s"'<>`|]+$/.test(run.url) ? run.url : null;
  if (!url) return `${escapeText(run?.repository)} run ${escapeText(run?.runId)}${job}`;
  return `<a href="${url.replace(/&/g, '&amp;')}">${escapeText(run.repository)} #${escapeText(run.runId)} (attempt ${escapeText(run.runAttempt)}${job})</a>`;
}

/**
 * A job summary in GitHub-flavoured Markdown/HTML: the headline, holders and queue, and a
 * Mermaid gantt of who held the lock when (GitHub draws ```mermaid blocks), `now` (ms) being
 * where current holdings end.
 */
export function summaryFor(kind, outcome, plan, now = Date.now()) {
  const lines = [];
  const state = outcome.state;
  const headline = {
    acquired: `acquired \`${outcome.lock}\` with fence ${outcome.fence}`,
    timeout: `timed out waiting for \`${outcome.lock}\``,
    released: `released \`${outcome.lock}\``,
    'queue-cleaned': `left the queue of \`${outcome.lock}\` (never held it)`,
    noop: `nothing to release in \`${outcome.lock}\``,
    status: `status of \`${outcome.lock}\``,
    renewed: `renewed \`${outcome.lock}\`${outcome.lease ? ` until ${iso(new Date(outcome.lease.expiresAt).toISOString())}` : ''}`,
    'not-due': `renewal of \`${outcome.lock}\` not due yet`,
    lost: `lost \`${outcome.lock}\``,
    reaped: `reaped \`${outcome.lock}\``,
    'release-unrecorded': `released \`${outcome.lock}\`, but the lock state could not be updated`,
    failed: `${kind} of \`${outcome.lock}\` failed`,
    superseded: `left \`${outcome.lock}\`: the pull request moved on`,
    'unverified-head': `left \`${outcome.lock}\`: the pull request's head could not be verified`,
    incident: `not admitted to \`${outcome.lock}\`: its incident \`${outcome.lifecycle?.incidentId ?? ''}\` stands`,
    recovered: `recovered a quarantine of \`${outcome.lock}\` as the cooldown \`${outcome.lifecycle?.reservationId ?? ''}\``,
    'incident-recovered': `ended the incident \`${outcome.lifecycle?.incidentId ?? ''}\` of \`${outcome.lock}\``,
  }[outcome.result] ?? `${kind}: ${outcome.result}`;
  lines.push(`### leasehold: ${headline}`, '');
  const who = outcome.holderId ? `${kind === 'reap' ? 'Reaper' : 'Holder'} ${code(outcome.holderId)} · ` : '';
  lines.push(`${who}lock repository \`${plan.repository}\` · state branch \`${plan.stateBranch}\``, '');
  if (outcome.error) {
    lines.push(`> [!CAUTION]`, `> \`${outcome.error.code}\`: ${escapeText(outcome.error.message)}`, '');
  }
  if (kind === 'acquire' && outcome.waitMs !== undefined) {
    const position = outcome.queuePosition ? `, queue position ${outcome.queuePosition} at enqueue` : '';
    lines.push(`Waited ${(outcome.waitMs / 1000).toFixed(1)} s${position}.`, '');
  }
  if (state) {
    const capacity = outcome.capacity ?? state.config?.capacity ?? '?';
    lines.push(`**Holders** (${state.holders.length} of capacity ${capacity}, fence counter ${state.fence})`, '');
    if (state.holders.length === 0) lines.push('_none_', '');
    else if (state.config?.pool) lines.push(...poolHolders(state));
    else {
      lines.push('| fence | holder | since | lease until | run |', '| ---: | --- | --- | --- | --- |');
      for (const h of state.holders) {
        lines.push(`| ${h.fence} | ${code(h.holderId)} | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
      }
      lines.push('');
    }
    if (state.incident) {
      lines.push('> [!WARNING]', `> Incident ${code(state.incident.id)} since ${iso(state.incident.at)}, raised by ${code(state.incident.holderId)}: nobody is admitted until an operator runs recover-incident.`, '');
    }
    if (state.reservations?.length) {
      lines.push(`**Reservations** (${state.reservations.length}, each keeping a slot)`, '', '| id | kind | left by | since | until | run |', '| --- | --- | --- | --- | --- | --- |');
      for (const r of state.reservations) {
        lines.push(`| ${code(r.id)} | ${r.kind} | ${code(r.holderId)} | ${iso(r.at)} | ${r.endsAt ? iso(r.endsAt) : 'recovered'} | ${runLink(r.run)} |`);
      }
      lines.push('');
    }
    lines.push(`**Queue** (${state.queue.length} waiting)`, '');
    if (state.queue.length === 0) lines.push('_empty_', '');
    else {
      lines.push('| # | holder | waiting since | run |', '| ---: | --- | --- | --- |');
      state.queue.slice(0, SHOWN_WAITERS).forEach((q, i) => lines.push(`| ${i + 1} | ${code(q.holderId)} | ${iso(q.enqueuedAt)} | ${runLink(q.run)} |`));
      const more = state.queue.length - SHOWN_WAITERS;
      if (more > 0) lines.push('', `_… and ${more} more waiting after these (the state file \`locks/${outcome.lock}.json\` on \`${plan.stateBranch}\` lists every one)._`);
      lines.push('');
    }
    lines.push('**Timeline** (UTC; a holding the last change ended shows no start: the state does not keep it)', '', '```mermaid', mermaidGantt(state, now, { title: `who held ${outcome.lock}` }), '```', '');
  }
  if (kind === 'reap') lines.push(...reapTables(outcome));
  const s = outcome.stats;
  lines.push(
    `<sub>${s.requests} requests (${s.reads} reads, ${s.notModified} not modified, ${s.writes} writes), ` +
      `${s.conflicts} conflicts, ${s.retries} retries, ${s.rateLimitWaits} rate-limit waits, ${s.polls} polls` +
      `${s.lookups ? `, ${s.lookups} Actions API lookups` : ''}</sub>`,
    '',
  );
  return lines.join('\n');
}

const ACTION_ORDER = { removed: 0, recovered: 1, renewed: 2, kept: 3 };

/** The reaper's verdicts, one table per lock: what was removed or renewed, then what was kept. */
function reapTables(outcome) {
  const lines = [];
  for (const r of outcome.reaped ?? []) {
    const n = (a) => r.entries.filter((e) => e.action === a).length;
    lines.push(`**\`${r.lock}\`**: ${n('removed')} removed, ${n('renewed')} renewed, ${n('kept')} kept`, '');
    if (r.entries.length === 0) {
      lines.push('_no holders and no queue_', '');
      continue;
    }
    lines.push('| action | reason | holder | where | run | evidence |', '| --- | --- | --- | --- | --- | --- |');
    // Every removal, recovery and renewal is listed; of what was kept, the first SHOWN_WAITERS.
    const order = (e) => ACTION_ORDER[e.action] ?? 0;
    const sorted = [...r.entries].sort((a, b) => order(a) - order(b));
    let kept = 0;
    const shown = sorted.filter((e) => e.action !== 'kept' || kept++ < SHOWN_WAITERS);
    for (const e of shown) {
      const where = e.place === 'holding' ? `holding (fence ${e.fence})` : 'queue';
      lines.push(`| ${e.action} | ${e.reason} | ${code(e.holderId)} | ${where} | ${runLink(e.run)} | ${escapeText(e.detail)} |`);
    }
    if (shown.length < sorted.length) lines.push('', `_… and ${sorted.length - shown.length} more kept._`);
    lines.push('');
  }
  return lines;
}

/** One line for the log at the end. */
export function finalLine(kind, outcome) {
  const s = outcome.stats;
  const detail = outcome.error ? `: ${outcome.error.code}: ${outcome.error.message}` : '';
  const l = outcome.lifecycle;
  const lifecycle = l?.cleanupResult || l?.reportDegraded
    ? ` [${[l.cleanupResult, l.reservationId, l.incidentId && `incident ${l.incidentId}`, l.reportDegraded && `report degraded: ${l.reportCode}`].filter(Boolean).join(', ')}]`
    : '';
  return `leasehold ${kind} ${outcome.lock}: ${outcome.result}${lifecycle}${detail} (${s.requests} requests, ${s.writes} writes, ${s.conflicts} conflicts)`;
}

/** A pool's holdings, per resource (its cap, then each holding with its partition). */
function poolHolders(state) {
  const lines = ['| resource | held | fence | holder | partition | since | lease until | run |', '| --- | ---: | ---: | --- | --- | --- | --- | --- |'];
  for (const r of state.config.pool.resources) {
    const mine = state.holders.filter((h) => h.pool?.resource === r.name);
    if (mine.length === 0) lines.push(`| ${code(r.name)} | 0/${r.capacity} | | | | | | |`);
    for (const h of mine) {
      const partition = h.pool?.partition ? h.pool.partition.map(escapeText).join(', ') : '';
      lines.push(`| ${code(r.name)} | ${mine.length}/${r.capacity} | ${h.fence} | ${code(h.holderId)} | ${partition} | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
    }
  }
  const elsewhere = state.holders.filter((h) => !state.config.pool.resources.some((r) => r.name === h.pool?.resource));
  for (const h of elsewhere) lines.push(`| _${escapeText(h.pool?.resource ?? 'none')}_ | | ${h.fence} | ${code(h.holderId)} | | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
  lines.push('');
  return lines;
}
