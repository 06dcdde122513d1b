// Fault injection: rules tests add with faults.add() (an error status, a reset connection,
// latency, a request held until released, a lost branch race, or the real work done and the
// client told otherwise), and the answers the server sends when one fires. The server asks
// Faults.take() which rule, if any, fires for each request.

import crypto from 'node:crypto';
import { DEFAULT_FAULT_MESSAGES, DOCS, ZERO_SHA } from './constants.mjs';
import { graphqlServerError } from './graphql.mjs';
import { matchPattern } from './helpers.mjs';
import { errorBody, fail, lowerKeys, reply, safeDecode } from './http.mjs';

const ACTION_KINDS = ['status', 'applyThen', 'reset', 'latencyMs', 'pause', 'conflict'];

class FaultRule {
  constructor(spec, closing) {
    const { method, path: p, skip = 0, times = 1, action, name } = spec ?? {};
    if (!action || typeof action !== 'object') throw new TypeError('fault rule needs an action');
    const kinds = ACTION_KINDS.filter((k) => action[k] !== undefined && action[k] !== false);
    if (kinds.length !== 1) {
      throw new TypeError(`fault action needs exactly one of ${ACTION_KINDS.join(', ')}`);
    }
    this.kind = kinds[0];
    if (this.kind === 'applyThen' && action.applyThen !== 'reset' && !action.applyThen?.status) {
      throw new TypeError("applyThen must be 'reset' or { status }");
    }
    const at = action.at ?? 'request';
    if (!['request', 'beforeRefUpdate', 'afterApply'].includes(at)) throw new TypeError(`bad 'at': ${at}`);
    if (at !== 'request' && !['latencyMs', 'pause'].includes(this.kind)) {
      throw new TypeError("'at' applies only to latencyMs and pause");
    }
    this.at = at;
    this.method = method?.toUpperCase();
    this.path = p;
    this.skip = skip;
    this.times = times;
    this.action = action;
    this.name = name ?? FaultRule.defaultName(this.kind, action);
    this.fired = 0;
    this.seen = 0;
    // pause gate
    this._closing = closing;
    this._released = false;
    this.paused = new Promise((r) => (this._onPaused = r));
    this._releasedP = new Promise((r) => (this._onRelease = r));
  }

  static defaultName(kind, a) {
    switch (kind) {
      case 'status':
        return `status:${a.status}`;
      case 'applyThen':
        return a.applyThen === 'reset' ? 'applyThen:reset' : `applyThen:${a.applyThen.status}`;
      case 'latencyMs':
        return `latency:${a.latencyMs}`;
      default:
        return kind;
    }
  }

  matches(method, p) {
    if (this.fired >= this.times) return false;
    if (this.method && this.method !== method) return false;
    // A conflict is a branch race: it only makes sense for contents writes.
    if (this.kind === 'conflict' && method !== 'PUT' && method !== 'DELETE') return false;
    return matchPattern(this.path, p);
  }

  /** Holds the calling request until release() (or emulator close). */
  async hold(info) {
    this._onPaused(info);
    if (!this._released) await Promise.race([this._releasedP, this._closing]);
  }

  /** Lets every held (and any future) request of this rule continue. */
  release() {
    this._released = true;
    this._onRelease();
  }
}

export class Faults {
  constructor(closing) {
    this._closing = closing;
    this.rules = [];
  }

  /**
   * add({ method?, path?: string|RegExp, skip?: n, times?: n (default 1, Infinity ok),
   *       name?, action }) -> rule handle { fired, paused (Promise), release(), remove() }
   * Actions: { status, headers?, body? } | { applyThen: { status, headers?, body? } | 'reset' }
   *        | { reset: true } | { latencyMs, at?: 'request'|'beforeRefUpdate' }
   *        | { pause: true, at?: 'request'|'beforeRefUpdate'|'afterApply' } | { conflict: true }
   * `at: 'afterApply'` does the request's real work first and holds only its answer: the write
   * has landed and the client does not know yet (a test can kill the client right then).
   * `paused` resolves with { method, path, seq, token } (token: the request's credential, so a
   * test that gives each client its own can tell which one is held).
   * Rules are tried in insertion order; the first one that matches and has not used up its
   * skip count fires. A rule that lets a request pass because of `skip` does not stop later
   * rules from firing on it.
   */
  add(spec) {
    const rule = new FaultRule(spec, this._closing);
    rule.remove = () => {
      this.rules = this.rules.filter((r) => r !== rule);
      rule.release();
    };
    this.rules.push(rule);
    return rule;
  }

  /** staleReads({ path?, ms }) | staleReads(null): see Emulator. Installed by the emulator. */
  staleReads() {}

  clear() {
    for (const r of this.rules) r.release();
    this.rules = [];
  }

  /** Finds the rule firing for this request and counts it. */
  take(method, p) {
    for (const rule of this.rules) {
      if (!rule.matches(method, p)) continue;
      rule.seen++;
      if (rule.seen <= rule.skip) continue;
      rule.fired++;
      return rule;
    }
    return null;
  }
}

/** The answer of a `status` fault (or of `applyThen` after the real work): GitHub's wording
 *  for the status unless the rule gives a body, the token's rate-limit headers. */
export function faultReply(emu, ctx, a) {
  const status = a.status;
  const token = emu.tokenOf(ctx.req);
  const headers = { ...(token ? emu.limiterFor(ctx).headers(token) : {}) };
  let body = a.body;
  if (body === undefined && ctx.url.pathname === '/graphql' && status >= 500) {
    body = graphqlServerError(status, ctx.id).body;
  } else if (body === undefined) {
    let msg = (DEFAULT_FAULT_MESSAGES[status] ?? 'Error').replace('{id}', ctx.id);
    let doc = DOCS.root;
    if (status === 403 || status === 429) {
      const primary = String(a.headers?.['x-ratelimit-remaining']) === '0';
      if (primary) {
        msg = `API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID ${ctx.id}.`;
        doc = DOCS.rateLimit;
      } else {
        // Secondary rate limit: GitHub sends retry-after. Default kept short (1 s) so client
        // tests that honour it stay fast; set headers: { 'retry-after': '60' } for realism.
        headers['retry-after'] = '1';
        doc = DOCS.secondary;
      }
    }
    body = errorBody(status, msg, doc);
  }
  Object.assign(headers, lowerKeys(a.headers ?? {}));
  return reply(status, body, headers);
}

/** The answer of a `conflict` fault: a branch race lost, nothing applied. */
export async function conflictReply(emu, ctx) {
  // As if another write on the branch had landed between this request's read of the head
  // and its ref update: "is at <winner> but expected <head>". Nothing is applied.
  let head = ZERO_SHA;
  const m = /^\/repos\/([^/]+)\/([^/]+)\//.exec(ctx.url.pathname);
  const repo = m && emu.repos.get(`${safeDecode(m[1])}/${safeDecode(m[2])}`.toLowerCase());
  if (repo) {
    let branch = repo.defaultBranch;
    try {
      const b = JSON.parse(ctx.rawBody.toString('utf8') || '{}').branch;
      if (typeof b === 'string' && b) branch = b;
    } catch {}
    head = (await repo.branchHead(branch)) ?? ZERO_SHA;
  }
  const winner = crypto.randomBytes(20).toString('hex');
  return emu.withRateHeaders(ctx, fail(409, `is at ${winner} but expected ${head}`, DOCS.putContent));
}
