// HTTP helpers: the reply a handler returns (status, body, headers), GitHub's error bodies,
// request bodies, URL decoding, cache headers and conditional-request matching.

import { DOCS } from './constants.mjs';

/** GitHub error body: always message + documentation_url + status (a string). */
export function errorBody(status, message, doc = DOCS.root) {
  return { message, documentation_url: doc, status: String(status) };
}

/** A handler result. body: object (JSON), Buffer (raw) or null (empty). */
export function reply(status, body, headers = {}) {
  return { status, body, headers };
}

export function fail(status, message, doc) {
  return reply(status, errorBody(status, message, doc));
}

/** `"message" wasn't supplied.` / `"a", "b" weren't supplied.` as GitHub words it. */
export function notSupplied(keys, doc) {
  const list = keys.map((k) => `"${k}"`).join(', ');
  const verb = keys.length === 1 ? "wasn't" : "weren't";
  return fail(422, `Invalid request.\n\n${list} ${verb} supplied.`, doc);
}

/** Parses and checks the JSON body of a write. Returns { body } or { error: reply }. */
export function parseJson(ctx, doc) {
  const text = ctx.rawBody.toString('utf8');
  if (!text.trim()) return { body: {} };
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return { error: fail(400, 'Problems parsing JSON', doc) };
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return { error: fail(400, 'Problems parsing JSON', doc) };
  }
  return { body };
}

export function serialize(body) {
  return Buffer.isBuffer(body) ? body : JSON.stringify(body);
}

export function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function lowerKeys(h) {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

export function cacheHeaders() {
  // GitHub serves authenticated GETs with max-age=60; one reason reads can be stale.
  return { 'cache-control': 'private, max-age=60, s-maxage=60', vary: 'Accept, Authorization, Cookie, X-GitHub-OTP' };
}

/** If-None-Match: a list of etags or "*", compared weakly (W/ prefixes ignored). */
export function etagMatches(header, etag) {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const norm = (t) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => norm(t) === norm(etag));
}

/** GitHub's pagination header for `page` of `last` of the request `url`, under the API root
 *  `base`: prev, next, last, first, as each applies; null for a list that fits one page. The links keep the request's other parameters. (GitHub writes them
 *  as /repositories/{id}/...; the emulator keeps /repos/{owner}/{repo}/..., which it serves.) */
export function linkHeader(base, url, page, last) {
  const at = (n) => {
    const q = new URLSearchParams(url.searchParams);
    q.set('page', String(n));
    return `<${base}${url.pathname}?${q}>`;
  };
  const rels = [];
  if (page > 1) rels.push(`${at(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) rels.push(`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`);
  if (page > 1) rels.push(`${at(1)}; rel="first"`);
  return rels.length ? rels.join(', ') : null;
}

export function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > 100 * 1024 * 1024) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
