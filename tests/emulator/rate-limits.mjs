// GitHub's rate limits as the emulator applies them, per token: the primary hourly limit
// (the x-ratelimit-* headers, GET /rate_limit) and the secondary limits on content-generating
// requests. Comments cite GitHub's behaviour as docs/github-semantics.md#<anchor>.

// ---------------------------------------------------------------------------------------
// Primary rate limit: a per-token hourly window (docs/github-semantics.md#rate-limits).
// ---------------------------------------------------------------------------------------

export class RateLimiter {
  /** resource: 'core' (REST, one per request) or 'graphql' (its own budget, in points). */
  constructor(limit, now, resource = 'core') {
    this.limit = limit;
    this.now = now;
    this.resource = resource;
    this.windows = new Map();
  }

  _window(token) {
    const nowS = Math.floor(this.now() / 1000);
    let w = this.windows.get(token);
    if (!w || nowS >= w.reset) {
      w = { used: 0, reset: nowS + 3600 };
      this.windows.set(token, w);
    }
    return w;
  }

  peek(token) {
    const w = this._window(token);
    return { limit: this.limit, used: w.used, remaining: Math.max(0, this.limit - w.used), reset: w.reset };
  }

  consume(token, points = 1) {
    const w = this._window(token);
    w.used = Math.min(this.limit, w.used + points);
  }

  /** GET /rate_limit's body. The core limit and, given `graphql` (the GraphQL budget), that
   *  one are counted; the others are reported full, as for a fresh token. */
  body(token, graphql = null) {
    const s = this.peek(token);
    const core = { limit: s.limit, used: s.used, remaining: s.remaining, reset: s.reset };
    const fresh = (limit) => ({ limit, used: 0, remaining: limit, reset: s.reset });
    const g = graphql ? graphql.peek(token) : null;
    return {
      resources: { core, search: fresh(30), graphql: g ? { limit: g.limit, used: g.used, remaining: g.remaining, reset: g.reset } : fresh(5000), integration_manifest: fresh(5000), code_search: fresh(10) },
      rate: core,
    };
  }

  headers(token) {
    const s = this.peek(token);
    return {
      'x-ratelimit-limit': String(s.limit),
      'x-ratelimit-remaining': String(s.remaining),
      'x-ratelimit-used': String(s.used),
      'x-ratelimit-reset': String(s.reset),
      'x-ratelimit-resource': this.resource,
    };
  }
}

// ---------------------------------------------------------------------------------------
// Secondary rate limits on content-generating requests, 80 a minute and 500 an hour
// (docs/github-semantics.md#rate-limits): per token, sliding windows. Off unless
// options.limits sets them. Past a limit: 403 with retry-after, the request not applied.
// ---------------------------------------------------------------------------------------

export class SecondaryLimiter {
  constructor({ contentPerMinute = Infinity, contentPerHour = Infinity } = {}, now) {
    this.windows = [
      { ms: 60_000, limit: contentPerMinute },
      { ms: 3_600_000, limit: contentPerHour },
    ];
    this.now = now;
    this.stamps = new Map(); // token -> times of accepted content-generating requests
    this.refused = 0;
  }

  /** null when the request may go ahead (and counts it); else the seconds to wait. */
  admit(token) {
    const now = this.now();
    const stamps = (this.stamps.get(token) ?? []).filter((t) => t > now - 3_600_000);
    this.stamps.set(token, stamps);
    for (const w of this.windows) {
      const inWindow = stamps.filter((t) => t > now - w.ms);
      if (inWindow.length >= w.limit) {
        this.refused++;
        return Math.max(1, Math.ceil((inWindow[0] + w.ms - now) / 1000));
      }
    }
    stamps.push(now);
    return null;
  }
}
