// Checks one emulator exchange (a request and the emulator's answer, as the emulator records
// them: see onExchange in tests/emulator/emulator.mjs) against GitHub's OpenAPI description,
// and a whole set of them into a summary. Every way the emulator may differ from the
// description is in ./deviations.mjs; nothing else is let through.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadSpec } from './openapi.mjs';
import { DEVIATIONS } from './deviations.mjs';
import { validateGraphqlExchange } from './graphql.mjs';

const header = (h, name) => {
  if (!h) return undefined;
  const v = h[name] ?? h[name.toLowerCase()];
  return v === undefined ? undefined : String(v);
};

/** The "where" of a problem, for messages: request path/query/body, response status/body/header. */
function problem(rule, where, field, message) {
  return { rule, where, field, message };
}

/** ajv errors as problems, at most `max`: for a oneOf, the errors of the branch that came
 *  closest first (the fewest errors from one component schema), then the deepest. */
function schemaProblems(rule, where, errors, max = 4) {
  const component = (e) => /^gh#\/components\/schemas\/([^/]+)\//.exec(e.schemaPath)?.[1] ?? '';
  const size = new Map();
  for (const e of errors) size.set(component(e), (size.get(component(e)) ?? 0) + 1);
  const depth = (e) => e.instancePath.split('/').length;
  const sorted = [...errors].sort((a, b) => (a.keyword === 'oneOf') - (b.keyword === 'oneOf') || size.get(component(a)) - size.get(component(b)) || depth(b) - depth(a));
  const seen = new Set();
  const out = [];
  for (const e of sorted) {
    const field = e.instancePath || '(root)';
    const text = `${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`;
    const key = `${field} ${text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...problem(rule, where, field, `${text} (schema rule "${e.keyword}" at ${e.schemaPath})`), keyword: e.keyword, params: e.params });
    if (out.length >= max) break;
  }
  return out;
}

function coerce(value, schema) {
  const type = schema?.type;
  if (type === 'integer' && /^-?\d+$/.test(value)) return Number(value);
  if (type === 'number' && value !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function decodePathParam(raw) {
  try {
    return raw.split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}

/**
 * Validates one exchange (against `deviations`, by default the list in ./deviations.mjs).
 * Returns { operation, answered, problems, allowed, refused }:
 * operation: the operationId (or a deviation's pseudo-operation, or null); problems: the
 * mismatches ({ rule, where, field, message }); allowed: ids of the deviations that let a
 * difference through; refused: true when the request broke the description and the
 * emulator refused it (as GitHub does).
 */
export function validateExchange(ex, deviations = DEVIATIONS) {
  // GraphQL: against GitHub's published GraphQL schema, not the OpenAPI description.
  if (ex.path === '/graphql') return validateGraphqlExchange(ex);
  const api = loadSpec();
  const problems = [];
  const allowed = [];
  const answered = ex.status !== null && ex.status !== undefined;
  const raise = (p) => {
    const d = deviations.find((dev) => dev.relaxes.includes(p.rule) && dev.applies(ex, p));
    if (d) allowed.push(d.id);
    else problems.push(p);
    return d ?? null;
  };

  const found = api.match(ex.method, ex.path);
  let operation = found?.op.id ?? null;
  const requestProblems = [];

  if (!found) {
    const d = raise(problem('operation', 'request', `${ex.method} ${ex.path}`, 'no documented operation has this method and path'));
    if (!d) return { operation: null, answered, problems, allowed, refused: false };
    operation = d.operation ?? null;
    if (answered && d.schema) {
      const validate = api.compile(`deviation:${d.id}`, d.schema);
      if (!validate(ex.responseBody)) problems.push(...schemaProblems('response-body', `response ${ex.status} body (${d.id})`, validate.errors));
    }
    checkHeaders(ex, null, null, raise);
    return { operation, answered, problems, allowed, refused: false };
  }

  const { op, params } = found;

  // ---- the request -----------------------------------------------------------------------
  for (const p of op.parameters.filter((x) => x.in === 'path')) {
    const value = decodePathParam(params[p.name] ?? '');
    if (value === null) {
      requestProblems.push(problem('path-param', 'request path', p.name, 'is not valid percent-encoding'));
      continue;
    }
    const v = api.compile(`${op.id}:path:${p.name}`, p.schema ?? {});
    if (!v(coerce(value, p.schema))) requestProblems.push(...schemaProblems('path-param', `request path parameter ${p.name}`, v.errors));
  }
  const queryParams = new Map(op.parameters.filter((x) => x.in === 'query').map((x) => [x.name, x]));
  for (const [name, value] of ex.query ?? []) {
    const p = queryParams.get(name);
    if (!p) {
      requestProblems.push(problem('query-param', 'request query', name, 'is not a documented query parameter of this operation'));
      continue;
    }
    const v = api.compile(`${op.id}:query:${name}`, p.schema ?? {});
    if (!v(coerce(value, p.schema))) requestProblems.push(...schemaProblems('query-param', `request query parameter ${name}`, v.errors));
  }
  for (const p of queryParams.values()) {
    if (p.required && !(ex.query ?? []).some(([n]) => n === p.name)) {
      requestProblems.push(problem('query-param', 'request query', p.name, 'is required'));
    }
  }
  const rb = op.op.requestBody ? api.deref(op.op.requestBody) : null;
  const body = ex.requestBody;
  if (rb) {
    const schema = rb.content?.['application/json']?.schema;
    if (body === null || body === undefined) {
      if (rb.required) requestProblems.push(problem('request-body', 'request body', '(root)', 'is required'));
    } else if (body && typeof body === 'object' && ('$text' in body || '$raw' in body) && Object.keys(body).length <= 2) {
      requestProblems.push(problem('request-body', 'request body', '(root)', 'is not JSON'));
    } else if (schema) {
      const v = api.compile(`${op.id}:body`, schema);
      if (!v(body)) requestProblems.push(...schemaProblems('request-body', 'request body', v.errors));
    }
  } else if (body !== null && body !== undefined) {
    requestProblems.push(problem('request-body', 'request body', '(root)', 'this operation takes no request body'));
  }

  // A request the description forbids is fine as long as the emulator refused it, as GitHub
  // would: it is the emulator accepting one that makes tests measure fiction.
  const refused = requestProblems.length > 0 && answered && ex.status >= 400;
  if (requestProblems.length && !refused) {
    for (const p of requestProblems) {
      raise({ ...p, message: `${p.message}; yet the emulator ${answered ? `answered ${ex.status}` : 'took it (no answer)'}` });
    }
  }

  if (!answered) return { operation, answered, problems, allowed, refused };

  // ---- the answer ------------------------------------------------------------------------
  const documented = op.op.responses[String(ex.status)] ?? op.op.responses[`${String(ex.status)[0]}XX`] ?? op.op.responses.default;
  let response = documented ? api.deref(documented) : null;
  let bodySchema;
  let bodyKey;
  if (response) {
    const contentType = (header(ex.responseHeaders, 'content-type') ?? '').split(';')[0].trim();
    const content = response.content ?? null;
    if (content) {
      const media = content[contentType] ? contentType : content['application/json'] ? 'application/json' : Object.keys(content)[0];
      bodySchema = content[media]?.schema;
      bodyKey = `${op.id}:${ex.status}:${media}`;
      if (contentType && !content[contentType] && ex.responseBody !== null) {
        raise(problem('content-type', `response ${ex.status} header`, 'content-type', `"${contentType}" is not a documented media type (${Object.keys(content).join(', ')})`));
        bodySchema = undefined;
      }
    }
  } else {
    const d = raise(problem('status', `response ${ex.status}`, 'status', `${ex.status} is not a documented answer of ${op.id} (${Object.keys(op.op.responses).join(', ')})`));
    if (d?.schema) {
      bodySchema = d.schema;
      bodyKey = `deviation:${d.id}`;
    }
  }

  if (ex.status === 204 || ex.status === 304) {
    if (ex.responseBody !== null && ex.responseBody !== undefined) {
      raise(problem('response-body', `response ${ex.status} body`, '(root)', 'must be empty'));
    }
  } else if (bodySchema) {
    if (ex.responseBody === null || ex.responseBody === undefined) {
      raise(problem('response-body', `response ${ex.status} body`, '(root)', 'is empty but the description documents a body'));
    } else {
      const v = api.compile(bodyKey, bodySchema);
      if (!v(ex.responseBody)) {
        for (const p of schemaProblems('response-body', `response ${ex.status} body`, v.errors)) raise(p);
      }
    }
  }
  checkHeaders(ex, op, response, raise);
  checkSemantics(ex, op, raise);
  return { operation, answered, problems, allowed, refused };
}

/** Headers GitHub documents: per operation (Location…), rate limits on every authenticated
 *  answer, the rate-limit signals, ETags on GETs, JSON content types. */
function checkHeaders(ex, op, response, raise) {
  if (ex.status === null || ex.status === undefined) return;
  const h = ex.responseHeaders ?? {};
  for (const [name, spec] of Object.entries(response?.headers ?? {})) {
    if (name.toLowerCase() === 'link') continue; // only on paginated answers
    if (header(h, name.toLowerCase()) === undefined) {
      raise(problem('response-header', `response ${ex.status} header`, name, `is documented for ${op.id} ${ex.status} but missing`));
    }
  }
  // docs/github-semantics.md#rate-limit-signals: every authenticated answer carries the
  // x-ratelimit-* headers (GitHub REST docs, "Checking the status of your rate limit").
  const authenticated = !!header(ex.requestHeaders, 'authorization');
  if (authenticated && ex.status !== 401) {
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-used', 'x-ratelimit-reset']) {
      const v = header(h, name);
      if (v === undefined || !/^\d+$/.test(v)) {
        raise(problem('rate-limit-headers', `response ${ex.status} header`, name, v === undefined ? 'is missing' : `"${v}" is not an integer`));
      }
    }
    if (header(h, 'x-ratelimit-resource') === undefined) {
      raise(problem('rate-limit-headers', `response ${ex.status} header`, 'x-ratelimit-resource', 'is missing'));
    }
  }
  // A rate-limit answer says when to come back: retry-after, or remaining 0 and a reset.
  const message = String(ex.responseBody?.message ?? '');
  if (ex.status === 429 || (ex.status === 403 && /rate limit/i.test(message))) {
    const retryAfter = header(h, 'retry-after');
    const primary = header(h, 'x-ratelimit-remaining') === '0' && /^\d+$/.test(header(h, 'x-ratelimit-reset') ?? '');
    if (retryAfter === undefined && !primary) {
      raise(problem('rate-limit-signal', `response ${ex.status} header`, 'retry-after', 'a rate-limit answer needs retry-after, or x-ratelimit-remaining 0 with x-ratelimit-reset'));
    }
    if (retryAfter !== undefined && !/^\d+$/.test(retryAfter) && Number.isNaN(Date.parse(retryAfter))) {
      raise(problem('rate-limit-signal', `response ${ex.status} header`, 'retry-after', `"${retryAfter}" is neither delta-seconds nor an HTTP date`));
    }
  }
  // Conditional requests (REST best practices): GETs answer with an ETag; 304 repeats it.
  if (ex.method === 'GET' && (ex.status === 200 || ex.status === 304) && !header(h, 'etag')) {
    raise(problem('etag', `response ${ex.status} header`, 'etag', 'a GET answer carries an ETag'));
  }
  if (ex.responseBody && typeof ex.responseBody === 'object' && !('$raw' in ex.responseBody)) {
    const ct = header(h, 'content-type') ?? '';
    if (!/^application\/json\b/.test(ct)) raise(problem('content-type', `response ${ex.status} header`, 'content-type', `"${ct}" for a JSON body`));
  }
}

/**
 * What an operation's description says that one exchange can show, beyond its schemas.
 * Each rule names its source; ./deviations.mjs relaxes the ones GitHub is observed to break.
 */
function checkSemantics(ex, op, raise) {
  const body = ex.requestBody && typeof ex.requestBody === 'object' ? ex.requestBody : {};
  // repos/create-or-update-file-contents: "`sha`: Required if you are updating a file. The
  // blob SHA of the file being replaced." A sha names a file that exists, so a write that
  // carries one updates (200) or conflicts (409); it does not create (201).
  if (op.id === 'repos/create-or-update-file-contents' && ex.status === 201 && typeof body.sha === 'string') {
    raise(problem('sha-names-existing-file', 'response 201', 'sha', 'a write that names the sha of the file it replaces answered 201 Created'));
  }
  // 409 on a contents write: the description's conflict is about the file written (its sha);
  // "is at X but expected Y" is the branch moving under the request.
  if (
    (op.id === 'repos/create-or-update-file-contents' || op.id === 'repos/delete-file') &&
    ex.status === 409 &&
    /^is at [0-9a-f]{40} but expected [0-9a-f]{40}$/.test(String(ex.responseBody?.message ?? ''))
  ) {
    raise(problem('conflict-is-about-the-file', 'response 409 body', 'message', 'a 409 for a branch that moved, not for the file written'));
  }
  // A read answers with the current version. The emulator marks the reads it serves stale.
  if (op.id === 'repos/get-content' && /staleRead/.test(ex.fault ?? '')) {
    raise(problem('read-is-current', `response ${ex.status}`, 'sha', 'a read served the version a write had replaced'));
  }
}

/** Reads every exchange recorded under `dir` (LEASEHOLD_CONFORMANCE_DIR). */
export function readExchanges(dir) {
  const out = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) if (line.trim()) out.push(JSON.parse(line));
  }
  return out;
}

/** Validates many exchanges. Returns a summary with counts and every mismatch, described. */
export function validateAll(exchanges, deviations = DEVIATIONS) {
  const summary = {
    specVersion: loadSpec().version,
    requests: 0,
    pairs: 0,
    resets: 0,
    refused: 0,
    operations: new Map(), // operationId -> pairs
    deviations: new Map(), // deviation id -> uses
    sources: new Map(), // test file -> exchanges
    mismatches: [],
  };
  for (const ex of exchanges) {
    summary.requests++;
    const r = validateExchange(ex, deviations);
    if (r.answered) summary.pairs++;
    else summary.resets++;
    if (r.refused) summary.refused++;
    if (r.operation) summary.operations.set(r.operation, (summary.operations.get(r.operation) ?? 0) + 1);
    for (const id of r.allowed) summary.deviations.set(id, (summary.deviations.get(id) ?? 0) + 1);
    summary.sources.set(ex.source ?? '(in-process)', (summary.sources.get(ex.source ?? '(in-process)') ?? 0) + 1);
    for (const p of r.problems) summary.mismatches.push({ ...p, exchange: ex, operation: r.operation, text: describe(ex, r.operation, p) });
  }
  return summary;
}

export function describe(ex, operation, p) {
  const where = `${ex.source ?? 'in-process'} request #${ex.seq}`;
  return `${ex.method} ${ex.path} -> ${ex.status ?? 'no answer'} [${operation ?? 'no documented operation'}] ${p.where}: ${p.field}: ${p.message} (rule ${p.rule}; ${where})`;
}
