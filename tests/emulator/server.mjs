// The emulator's HTTP server. One Emulator holds the hosted repositories, the fault rules, the
// rate limits and the request time limit. Each request is matched against the fault rules,
// then authenticated, rate limited, routed (the repository itself, then contents.mjs,
// git-data.mjs, actions.mjs) and answered, a conditional GET with 304; every exchange is
// handed to the recorders. Comments cite GitHub's behaviour as
// docs/github-semantics.md#<anchor>.

import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { appendFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { actionsRoute } from './actions.mjs';
import { DEFAULT_FAULT_MESSAGES, DOCS } from './constants.mjs';
import { contentsRoute } from './contents.mjs';
import { Faults, conflictReply, faultReply } from './faults.mjs';
import { gitDataRoute } from './git-data.mjs';
import { issuesRoute } from './issues.mjs';
import { pullsRoute } from './pulls.mjs';
import { Identities, usersRoute } from './users.mjs';
import { graphqlRoute, graphqlServerError } from './graphql.mjs';
import { definedOnly, sha1, sleep } from './helpers.mjs';
import { cacheHeaders, etagMatches, fail, readBody, reply, safeDecode, serialize } from './http.mjs';
import { RateLimiter, SecondaryLimiter } from './rate-limits.mjs';
import { Repo } from './repository.mjs';

/** A handler result meaning "drop the connection" (TCP reset, no HTTP answer). */
const RESET = Symbol('reset');
const KILLED = Symbol('killed');

/** Thrown at a checkpoint by a request killed at the time limit whose work is dropped. */
class KilledRequest extends Error {
  constructor() {
    super('request killed at the time limit');
  }
}

/** A request body as recorded in an exchange: parsed JSON, { $text } or { $raw } (base64),
 *  or null when empty. */
function decodeBody(buf, contentType) {
  if (!buf?.length) return null;
  const text = buf.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return Buffer.from(text, 'utf8').equals(buf) ? { $text: text, contentType: contentType ?? null } : { $raw: buf.toString('base64') };
  }
}

/** The script that runs this emulator (a test file), named in exchanges. */
const SOURCE = process.argv[1] ? path.relative(process.cwd(), process.argv[1]) : null;

/** A recorder appending each exchange as one JSON line to DIR/exchanges-<pid>.jsonl
 *  (LEASEHOLD_CONFORMANCE_DIR; tests/conformance/report.mjs validates such a directory). */
function recordTo(dir) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `exchanges-${process.pid}.jsonl`);
  return (exchange) => appendFileSync(file, JSON.stringify(exchange) + '\n');
}

function requestId() {
  const h = (n) => crypto.randomBytes(n).toString('hex').toUpperCase();
  return `${h(2)}:${h(2)}:${h(3)}:${h(3)}:${h(4)}`;
}

// ---------------------------------------------------------------------------------------
// The emulator
// ---------------------------------------------------------------------------------------

export class Emulator {
  constructor(options) {
    this.options = options;
    this.now = options.now ?? (() => Date.now());
    this.tokens = options.tokens ? new Set(options.tokens) : null;
    this.identities = new Identities(this); // who each token acts as (users.mjs)
    this.requestHooks = []; // onRequest(fn): called with each request before it is processed
    this.repos = new Map(); // lowercased "owner/repo" -> Repo (GitHub names are case-insensitive)
    this.runIds = new Map(); // workflow run id -> Repo (run ids are unique across GitHub)
    this.log = [];
    this.seq = 0;
    this.stale = null;
    this.inflight = new Set();
    this.abort = new AbortController();
    this.closing = new Promise((r) => this.abort.signal.addEventListener('abort', r, { once: true }));
    this.faults = new Faults(this.closing);
    this.faults.staleReads = (cfg) => this.staleReads(cfg);
    this.rate = new RateLimiter(options.limits?.primaryPerHour ?? options.rateLimit ?? 5000, this.now);
    // GraphQL's own primary budget, in points (docs/github-semantics.md#rate-limits): 1,000 an
    // hour, as for the GITHUB_TOKEN leasehold's claims run with; limits.graphqlPerHour sets it.
    this.graphqlRate = new RateLimiter(options.limits?.graphqlPerHour ?? 1000, this.now, 'graphql');
    this.secondary = new SecondaryLimiter(options.limits ?? {}, this.now);
    this.url = null;
    this.id = crypto.randomBytes(4).toString('hex');
    this.timeLimit = null;
    this.setTimeLimit({ ms: options.timeLimitMs ?? 0, answer: options.timeLimitAnswer, work: options.killedWork });
    // Exchange recorders: options.onExchange, and LEASEHOLD_CONFORMANCE_DIR (see recordTo()).
    this.recorders = [];
    if (typeof options.onExchange === 'function') this.recorders.push(options.onExchange);
    const dir = process.env.LEASEHOLD_CONFORMANCE_DIR;
    if (dir && options.record !== false) this.recorders.push(recordTo(dir));
  }

  /** The request time limit (docs/github-semantics.md#request-time-limit: GitHub kills a
   *  request that runs over 10 s; the outcome of a write is then unknown). `ms` null/0 turns
   *  it off. answer: a status (default 502 "Server Error", as GitHub's gateway answers a
   *  backend timeout) or 'reset'. work: 'finish' (default: the killed request's work goes on
   *  and a write lands after the client was told it failed) or 'drop' (the work stops before
   *  it moves any ref: nothing is applied). */
  setTimeLimit(cfg = {}) {
    const { ms, answer, work } = { ms: 10_000, answer: 502, work: 'finish', ...this.timeLimit, ...definedOnly(cfg) };
    if (ms != null && !(ms >= 0)) throw new TypeError('timeLimit ms must be >= 0');
    if (answer !== 'reset' && !(Number.isInteger(answer) && answer >= 500 && answer <= 599)) {
      throw new TypeError("timeLimit answer must be a 5xx status or 'reset'");
    }
    if (!['finish', 'drop'].includes(work)) throw new TypeError("timeLimit work must be 'finish' or 'drop'");
    this.timeLimit = { ms: ms || null, answer, work };
  }

  /** staleReads({ path?: string|RegExp, ms }) : for `ms` after each successful write to a
   *  matching file (matched against the repo path, e.g. "locks/a.json", or the request path
   *  "/repos/o/r/contents/locks/a.json"), contents GETs by branch return the version the
   *  write replaced (404 if the write created the file). staleReads(null) turns it off.
   *  Only writes made while it is on open a window (docs/github-semantics.md#stale-reads). */
  staleReads(cfg) {
    if (cfg == null) {
      this.stale = null;
      for (const repo of this.repos.values()) repo.staleWindows.clear();
      return;
    }
    if (!(cfg.ms > 0)) throw new TypeError('staleReads needs ms > 0');
    this.stale = { path: cfg.path, ms: cfg.ms };
  }

  async init() {
    const o = this.options;
    this.ownsDir = !o.dir;
    this.baseDir = o.dir ? path.resolve(o.dir) : await fs.mkdtemp(path.join(os.tmpdir(), 'leasehold-emu-'));
    this.tmpDir = path.join(this.baseDir, '.tmp');
    await fs.mkdir(this.tmpDir, { recursive: true });
    const primary = await this.createRepo(o.owner, o.repo, o.defaultBranch, o.files);
    this.primary = this.repos.get(`${o.owner}/${o.repo}`.toLowerCase());
    this.gitDir = primary.gitDir;

    this.server = http.createServer((req, res) => this.onRequest(req, res));
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(o.port, o.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address();
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    this.url = `http://${host}:${addr.port}`;
  }

  async createRepo(owner, name, defaultBranch = 'main', files = {}) {
    const ok = /^[A-Za-z0-9_.-]+$/;
    if (!ok.test(owner) || !ok.test(name)) throw new Error(`bad owner/repo: ${owner}/${name}`);
    const key = `${owner}/${name}`.toLowerCase();
    if (this.repos.has(key)) throw new Error(`repository ${owner}/${name} already exists`);
    const gitDir = path.join(this.baseDir, owner, `${name}.git`);
    const repo = new Repo(this, { owner, name, defaultBranch, gitDir, private: this.options.private });
    await repo.init(files);
    this.repos.set(key, repo);
    return repo.handle();
  }

  repo(owner, name) {
    return this.repos.get(`${owner}/${name}`.toLowerCase())?.handle() ?? null;
  }

  async close() {
    if (this.closed) return this.closed;
    this.closed = (async () => {
      this.abort.abort(); // releases held requests, cuts latency sleeps
      this.faults.clear();
      const stopped = new Promise((r) => this.server.close(() => r()));
      this.server.closeAllConnections?.();
      await stopped;
      await Promise.allSettled([...this.inflight]);
      if (this.ownsDir) await fs.rm(this.baseDir, { recursive: true, force: true });
      else await fs.rm(this.tmpDir, { recursive: true, force: true });
      // Conformance: every exchange against GitHub's OpenAPI description. A difference not
      // listed in tests/conformance/deviations.mjs rejects close(), naming it.
      this.checker?.finish();
    })();
    return this.closed;
  }

  // ---- HTTP plumbing ---------------------------------------------------------------------

  onRequest(req, res) {
    const p = this.handleRequest(req, res);
    this.inflight.add(p);
    p.finally(() => this.inflight.delete(p));
  }

  async handleRequest(req, res) {
    const t0 = performance.now();
    const startedAt = Date.now();
    const u = new URL(req.url, 'http://emulator');
    const entry = {
      seq: ++this.seq,
      method: req.method,
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      status: null,
      ms: null,
      fault: null,
    };
    this.log.push(entry);
    const ctx = { req, res, url: u, method: req.method, entry, id: requestId(), hooks: {}, token: null, answer: null };
    ctx.hooks.checkpoint = () => {
      if (ctx.killed && this.timeLimit.work === 'drop') throw new KilledRequest();
    };
    try {
      ctx.rawBody = await readBody(req);
      // Test hooks (onRequest): they see the request before GitHub would act on it.
      for (const hook of this.requestHooks) await hook({ method: req.method, path: u.pathname, query: Object.fromEntries(u.searchParams), body: decodeBody(ctx.rawBody, req.headers['content-type']) });
      const rule = this.faults.take(req.method, u.pathname);
      if (rule) entry.fault = rule.name;
      const a = rule?.action;
      switch (rule?.kind) {
        case undefined:
          return this.answer(ctx, await this.timed(ctx, () => this.process(ctx)));
        case 'reset': // the request never reaches "GitHub"
          return this.resetSocket(ctx);
        case 'status': // answered by the "edge", nothing applied
          return this.send(ctx, faultReply(this, ctx, a));
        case 'conflict':
          return this.send(ctx, await conflictReply(this, ctx));
        case 'applyThen': {
          // The request is applied for real, then the client is lied to: the outcome of the
          // write is unknown to it (docs/github-semantics.md#request-time-limit).
          const real = await this.process(ctx);
          entry.applied = real.status;
          if (a.applyThen === 'reset') return this.resetSocket(ctx);
          return this.send(ctx, faultReply(this, ctx, a.applyThen));
        }
        case 'latencyMs':
        case 'pause': {
          const wait = () =>
            rule.kind === 'pause'
              ? rule.hold({ method: req.method, path: u.pathname, seq: entry.seq, token: this.tokenOf(req) })
              : sleep(a.latencyMs, this.abort.signal);
          const work = async () => {
            if (rule.at === 'afterApply') {
              // The write lands; only its answer waits.
              const real = await this.process(ctx);
              entry.applied = real.status;
              await wait();
              return this.abort.signal.aborted ? RESET : real;
            }
            if (rule.at === 'request') await wait();
            else ctx.hooks.beforeRefUpdate = wait;
            if (this.abort.signal.aborted) return RESET;
            ctx.hooks.checkpoint();
            return this.process(ctx);
          };
          return this.answer(ctx, await this.timed(ctx, work));
        }
      }
    } catch (e) {
      if (!this.abort.signal.aborted) console.error('[emulator]', e);
      this.send(ctx, fail(500, 'Server Error'));
    } finally {
      entry.ms = Math.round((performance.now() - t0) * 10) / 10;
      this.emitExchange(ctx, startedAt, entry.ms);
    }
  }

  /** Sends a reply, or resets the connection for RESET. */
  answer(ctx, result) {
    return result === RESET ? this.resetSocket(ctx) : this.send(ctx, result);
  }

  /** Runs `work` under the request time limit. Past the limit the client gets the kill
   *  answer at once; the work goes on (its outcome is recorded as entry.applied) or, with
   *  work 'drop', stops at its next checkpoint before any ref moves. */
  async timed(ctx, work) {
    const limit = this.timeLimit;
    const running = Promise.resolve().then(work);
    if (!limit.ms) return running;
    let timer;
    const expired = new Promise((resolve) => {
      timer = setTimeout(resolve, limit.ms, KILLED);
      timer.unref?.();
    });
    const first = await Promise.race([running, expired]);
    clearTimeout(timer);
    if (first !== KILLED) return first;
    ctx.killed = true;
    ctx.entry.fault = ctx.entry.fault ? `${ctx.entry.fault}+killed` : 'killed';
    const tail = running.then(
      (r) => (ctx.entry.applied = r === RESET ? null : r.status),
      (e) => {
        if (!(e instanceof KilledRequest) && !this.abort.signal.aborted) console.error('[emulator]', e);
        ctx.entry.applied = e instanceof KilledRequest ? 'dropped' : 'error';
      },
    );
    this.inflight.add(tail);
    tail.finally(() => this.inflight.delete(tail));
    if (limit.answer === 'reset') return RESET;
    const killed = ctx.url.pathname === '/graphql' ? graphqlServerError(limit.answer, ctx.id) : fail(limit.answer, 'Server Error', DOCS.timeouts);
    return this.withRateHeaders(ctx, killed);
  }

  /** The primary limit a request counts against: GraphQL's points or REST's requests. */
  limiterFor(ctx) {
    return ctx.url.pathname === '/graphql' ? this.graphqlRate : this.rate;
  }

  withRateHeaders(ctx, result) {
    const token = this.tokenOf(ctx.req);
    if (token) result.headers = { ...this.limiterFor(ctx).headers(token), ...result.headers };
    return result;
  }

  /** Hands the finished exchange to every recorder (never lets a recorder break a test). */
  emitExchange(ctx, startedAt, ms) {
    if (!this.recorders.length) return;
    const { req, entry } = ctx;
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) {
      headers[k] = k === 'authorization' ? String(v).replace(/^(\s*\S+\s+).*$/, '$1[redacted]') : v;
    }
    const exchange = {
      source: SOURCE,
      emulator: this.id,
      seq: entry.seq,
      startedAt,
      ms,
      method: req.method,
      path: ctx.url.pathname,
      query: [...ctx.url.searchParams],
      requestHeaders: headers,
      requestBody: decodeBody(ctx.rawBody, req.headers['content-type']),
      status: ctx.answer ? ctx.answer.status : null,
      responseHeaders: ctx.answer ? ctx.answer.headers : null,
      responseBody: ctx.answer ? ctx.answer.body : null,
      fault: entry.fault,
      reset: ctx.answer === null,
    };
    for (const record of this.recorders) {
      try {
        record(exchange);
      } catch (e) {
        console.error('[emulator] exchange recorder failed:', e);
      }
    }
  }

  resetSocket(ctx) {
    ctx.entry.status = null;
    const s = ctx.req.socket;
    // resetAndDestroy sends a TCP RST: the client sees ECONNRESET, like a dropped connection.
    if (typeof s.resetAndDestroy === 'function' && s._handle) s.resetAndDestroy();
    else s.destroy();
  }

  tokenOf(req) {
    const m = /^\s*(?:token|bearer)\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return null;
    if (this.tokens && !this.tokens.has(m[1])) return null;
    return m[1];
  }

  /** Authentication, rate limit, routing, conditional GET. Returns a reply. */
  async process(ctx) {
    const { req } = ctx;
    const m = /^\s*(?:token|bearer)\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return fail(401, 'Requires authentication', DOCS.root);
    if (this.tokens && !this.tokens.has(m[1])) return fail(401, 'Bad credentials', DOCS.root);
    const token = (ctx.token = m[1]);

    if (ctx.url.pathname === '/rate_limit' && req.method === 'GET') {
      // Does not count against the limit (as on GitHub).
      const body = this.rate.body(token, this.graphqlRate);
      const etag = `W/"${sha1(serialize(body))}"`;
      if (etagMatches(req.headers['if-none-match'], etag)) {
        return this.withRate(ctx, reply(304, null, { etag, ...cacheHeaders() }), false);
      }
      return this.withRate(ctx, reply(200, body, { etag }), false);
    }

    // GraphQL (graphql.mjs): its own budget in points, its own answers, no conditional GET.
    if (ctx.url.pathname === '/graphql') {
      if (req.method !== 'POST') return fail(404, 'Not Found', DOCS.root);
      const result = await graphqlRoute(this, ctx);
      result.headers = { ...this.graphqlRate.headers(token), ...result.headers };
      return result;
    }

    if (this.rate.peek(token).remaining === 0) {
      return this.withRate(
        ctx,
        fail(
          403,
          `API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID ${ctx.id}.`,
          DOCS.rateLimit,
        ),
        false,
      );
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const wait = this.secondary.admit(token);
      if (wait !== null) {
        const refused = fail(403, DEFAULT_FAULT_MESSAGES[403].replace('{id}', ctx.id), DOCS.secondary);
        refused.headers = { ...refused.headers, 'retry-after': String(wait) };
        return this.withRate(ctx, refused, false);
      }
    }

    let result = await this.route(ctx);

    // Successful writes carry an ETag and the same cache headers as reads (recorded on PUT
    // contents, POST and PATCH git/refs: @octokit/fixtures create-file, git-refs).
    if (req.method !== 'GET' && result.status >= 200 && result.status < 300 && result.body && !Buffer.isBuffer(result.body)) {
      result.headers = { etag: `"${crypto.createHash('sha256').update(serialize(result.body)).digest('hex')}"`, ...cacheHeaders(), ...result.headers };
    }

    // Conditional GET: a matching If-None-Match answers 304 with no body, and a 304 does not
    // count against the primary rate limit (docs/github-semantics.md#conditional-reads).
    if (req.method === 'GET' && result.status === 200) {
      const etag = result.etag ?? `W/"${sha1(serialize(result.body))}"`;
      result.headers = { ...result.headers, etag };
      if (etagMatches(req.headers['if-none-match'], etag)) {
        return this.withRate(ctx, reply(304, null, { etag, ...cacheHeaders() }), false);
      }
    }
    return this.withRate(ctx, result, true);
  }

  withRate(ctx, result, count) {
    if (count) this.rate.consume(ctx.token);
    result.headers = { ...this.rate.headers(ctx.token), ...result.headers };
    return result;
  }

  send(ctx, result) {
    const { res, entry } = ctx;
    entry.status = result.status;
    const body =
      result.body == null ? null : Buffer.isBuffer(result.body) ? result.body : Buffer.from(serialize(result.body));
    const headers = {
      date: new Date(this.now()).toUTCString(),
      'x-github-request-id': ctx.id,
      'x-github-api-version-selected': '2022-11-28',
      'x-github-media-type': 'github.v3; format=json',
      'x-content-type-options': 'nosniff',
      ...(body && !Buffer.isBuffer(result.body) ? { 'content-type': 'application/json; charset=utf-8' } : {}),
      // Cache headers on successful reads only (recorded: a 404 or 422 carries none).
      ...(ctx.method === 'GET' && ((result.status >= 200 && result.status < 300) || result.status === 304) ? cacheHeaders() : {}),
      ...result.headers,
    };
    if (body && result.status !== 304) headers['content-length'] = String(body.length);
    // What the emulator answered, for the exchange recorders (also when the client is gone).
    ctx.answer = {
      status: result.status,
      headers,
      body: result.status === 304 || result.body == null ? null : Buffer.isBuffer(result.body) ? { $raw: result.body.toString('base64') } : result.body,
    };
    if (res.destroyed || res.headersSent) return;
    res.sendDate = false; // the date header above comes from the emulator's clock
    res.writeHead(result.status, headers);
    res.end(result.status === 304 ? undefined : body ?? undefined);
  }

  // ---- routes ----------------------------------------------------------------------------

  async route(ctx) {
    const { method } = ctx;
    const p = ctx.url.pathname;
    const account = usersRoute(ctx, this);
    if (account !== undefined) return account;
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(p);
    if (!m) return fail(404, 'Not Found', DOCS.root);
    const repo = this.repos.get(`${safeDecode(m[1])}/${safeDecode(m[2])}`.toLowerCase());
    if (!repo) return fail(404, 'Not Found', DOCS.repo);
    const sub = m[3] ?? '';

    if (sub === '' || sub === '/') {
      return method === 'GET' ? reply(200, repo.body()) : fail(404, 'Not Found', DOCS.root);
    }

    for (const section of [contentsRoute, gitDataRoute, actionsRoute, issuesRoute, pullsRoute]) {
      const answer = section(ctx, repo, sub);
      if (answer !== undefined) return answer;
    }
    return fail(404, 'Not Found', DOCS.root);
  }
}
