// Checks one GraphQL exchange (POST /graphql, as the emulator records it) against GitHub's
// published GraphQL schema (npm @octokit/graphql-schema, a dev dependency, with the `graphql`
// package): the document the test sent must be valid, or the emulator must have refused it
// as GitHub does (200 with `errors[]` and no data); and the `data` of every answer must have
// the shape the document's selection asks for, with the schema's types: every selected field
// present and nothing else, non-null fields not null, scalars of their type, abstract types
// resolved through the fragments selected on them. Answers other than 200 must be GitHub's
// (docs/github-semantics.md#graphql-errors).
//
// Kept apart from the emulator's own executor (tests/emulator/graphql.mjs): this file builds
// its own copy of the schema and never asks the emulator what it meant.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const GRAPHQL_SCHEMA_PACKAGE = '@octokit/graphql-schema';

let cached = null;

/** { g (the graphql package), schema, version }, loaded once per process, synchronously. */
export function loadGraphqlSchema() {
  if (cached) return cached;
  const g = require('graphql');
  const dir = path.dirname(fileURLToPath(import.meta.resolve(GRAPHQL_SCHEMA_PACKAGE)));
  const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  const schema = g.buildClientSchema(JSON.parse(readFileSync(path.join(dir, 'schema.json'), 'utf8')));
  cached = { g, schema, version };
  return cached;
}

const problem = (rule, where, field, message) => ({ rule, where, field, message });
const header = (h, name) => (h && h[name] !== undefined ? String(h[name]) : undefined);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** How each of GitHub's custom scalars looks on the wire; anything not listed is a string. */
const SCALARS = {
  Int: (v) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31,
  Float: (v) => typeof v === 'number' && Number.isFinite(v),
  String: (v) => typeof v === 'string',
  Boolean: (v) => typeof v === 'boolean',
  ID: (v) => typeof v === 'string',
  GitObjectID: (v) => typeof v === 'string' && /^[0-9a-f]{40}$/.test(v),
  DateTime: (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)),
};

/**
 * Validates one /graphql exchange. Returns what validateExchange returns:
 * { operation, answered, problems, allowed, refused }. operation is
 * "graphql <query|mutation> <root fields>" for the figures.
 */
export function validateGraphqlExchange(ex) {
  const { g, schema } = loadGraphqlSchema();
  const problems = [];
  const answered = ex.status !== null && ex.status !== undefined;
  const out = (operation, refused = false) => ({ operation, answered, problems, allowed: [], refused });
  const body = ex.responseBody;
  const errorsOf = () => (isObject(body) && Array.isArray(body.errors) ? body.errors : []);
  // A refusal as GitHub refuses a bad document: 200, errors, no data.
  const refusedAsGitHub = () => answered && ex.status === 200 && errorsOf().length > 0 && (body.data === undefined || body.data === null);

  if (ex.method !== 'POST') {
    if (answered && ex.status !== 404) problems.push(problem('graphql-method', 'response', ex.method, `GitHub serves GraphQL on POST only; the emulator answered ${ex.status}`));
    return out('graphql (not POST)');
  }

  // ---- the request: a valid document, valid variables ---------------------------------------
  const req = ex.requestBody;
  const requestProblems = [];
  let operation = null;
  let doc = null;
  let variables = {};
  if (!isObject(req) || typeof req.query !== 'string') {
    requestProblems.push(problem('graphql-request', 'request body', '(root)', 'is not { query: string, variables? }'));
  } else {
    try {
      doc = g.parse(req.query);
    } catch (e) {
      requestProblems.push(problem('graphql-document', 'request query', '(document)', `does not parse: ${e.message}`));
    }
    if (doc) {
      for (const e of g.validate(schema, doc)) {
        requestProblems.push(problem('graphql-document', 'request query', at(e), `${e.message} (GitHub's schema, @octokit/graphql-schema)`));
      }
    }
    if (doc && !requestProblems.length) {
      operation = g.getOperationAST(doc, req.operationName || null);
      if (!operation) requestProblems.push(problem('graphql-document', 'request query', '(operation)', 'names no single operation to run'));
      else {
        const coerced = g.getVariableValues(schema, operation.variableDefinitions ?? [], req.variables ?? {});
        if (coerced.errors) for (const e of coerced.errors) requestProblems.push(problem('graphql-variables', 'request variables', at(e), e.message));
        else variables = coerced.coerced;
      }
    }
  }
  const name = operation ? `graphql ${operation.operation} ${rootFields(operation)}` : null;
  if (requestProblems.length) {
    if (refusedAsGitHub()) return out(name, true);
    for (const p of requestProblems) problems.push({ ...p, message: `${p.message}; yet the emulator ${answered ? `answered ${ex.status} with data` : 'took it (no answer)'}` });
    return out(name);
  }
  if (!answered) return out(name);

  // ---- the answer ---------------------------------------------------------------------------
  const h = ex.responseHeaders ?? {};
  if (ex.status !== 401 && header(h, 'x-ratelimit-resource') !== 'graphql') {
    problems.push(problem('graphql-rate-headers', `response ${ex.status} header`, 'x-ratelimit-resource', `is "${header(h, 'x-ratelimit-resource')}", GraphQL answers count against the graphql resource`));
  }
  if (ex.status !== 200) {
    checkOtherStatus(ex, problems);
    return out(name);
  }
  if (!isObject(body)) {
    problems.push(problem('graphql-response', 'response 200 body', '(root)', 'is not a JSON object'));
    return out(name);
  }
  for (const k of Object.keys(body)) if (!['data', 'errors', 'extensions'].includes(k)) problems.push(problem('graphql-response', 'response 200 body', k, 'is not a key of a GraphQL answer'));
  if (body.errors !== undefined) checkErrors(body.errors, problems);
  // A field the emulator does not serve: GitHub would have answered it.
  errorsOf().forEach((e, i) => {
    if (e?.type === 'EMULATOR_UNSUPPORTED') problems.push(problem('graphql-unsupported', 'response 200 body', `errors/${i}`, e.message));
  });
  if (body.data === undefined || body.data === null) {
    if (!errorsOf().length) problems.push(problem('graphql-response', 'response 200 body', 'data', 'is absent or null without errors'));
    return out(name);
  }
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const ctx = { g, schema, fragments: fragmentsOf(doc), variables, problems };
  checkObject(ctx, root, body.data, [operation.selectionSet], 'data');
  return out(name);
}

const at = (e) => (e.locations?.length ? `line ${e.locations[0].line}, column ${e.locations[0].column}` : '(document)');
const rootFields = (operation) => [...new Set(operation.selectionSet.selections.filter((s) => s.kind === 'Field').map((s) => s.name.value))].join(',');
const fragmentsOf = (doc) => Object.fromEntries(doc.definitions.filter((d) => d.kind === 'FragmentDefinition').map((d) => [d.name.value, d]));

function checkErrors(errors, problems) {
  if (!Array.isArray(errors) || !errors.length) {
    problems.push(problem('graphql-response', 'response 200 body', 'errors', 'is present but not a non-empty array'));
    return;
  }
  errors.forEach((e, i) => {
    const where = `errors/${i}`;
    if (!isObject(e) || typeof e.message !== 'string') return problems.push(problem('graphql-response', 'response 200 body', where, 'has no string message'));
    if (e.locations !== undefined && !(Array.isArray(e.locations) && e.locations.every((l) => Number.isInteger(l?.line) && Number.isInteger(l?.column)))) {
      problems.push(problem('graphql-response', 'response 200 body', `${where}/locations`, 'is not a list of { line, column }'));
    }
    if (e.path !== undefined && !(Array.isArray(e.path) && e.path.every((k) => typeof k === 'string' || Number.isInteger(k)))) {
      problems.push(problem('graphql-response', 'response 200 body', `${where}/path`, 'is not a list of keys and indices'));
    }
    if (e.type !== undefined && typeof e.type !== 'string') problems.push(problem('graphql-response', 'response 200 body', `${where}/type`, 'is not a string'));
  });
}

/** Non-200 answers of the GraphQL endpoint (docs/github-semantics.md#graphql-errors). */
function checkOtherStatus(ex, problems) {
  const body = ex.responseBody;
  const h = ex.responseHeaders ?? {};
  const where = `response ${ex.status}`;
  if (ex.status === 401 || ex.status === 400) {
    if (!isObject(body) || typeof body.message !== 'string') problems.push(problem('graphql-status', `${where} body`, 'message', 'a client error carries a message'));
  } else if (ex.status === 403 || ex.status === 429) {
    // The secondary limit (the primary one is a 200 with RATE_LIMITED).
    if (header(h, 'retry-after') === undefined && header(h, 'x-ratelimit-remaining') !== '0') {
      problems.push(problem('rate-limit-signal', `${where} header`, 'retry-after', 'a rate-limit answer needs retry-after, or x-ratelimit-remaining 0'));
    }
  } else if (ex.status === 502 || ex.status === 504 || ex.status === 500 || ex.status === 503) {
    const shaped = isObject(body) && (typeof body.message === 'string' || (Array.isArray(body.errors) && body.errors.every((e) => typeof e?.message === 'string')));
    if (body !== null && !shaped) problems.push(problem('graphql-status', `${where} body`, '(root)', 'a server error carries a message or errors[]'));
  } else {
    problems.push(problem('graphql-status', where, 'status', `GitHub's GraphQL endpoint is not known to answer ${ex.status}`));
  }
}

/** Whether a fragment on `condition` applies to the concrete type. */
function applies(ctx, condition, concrete) {
  if (!condition || condition === concrete.name) return true;
  const t = ctx.schema.getType(condition);
  return Boolean(t) && ctx.g.isAbstractType(t) && ctx.schema.isSubType(t, concrete);
}

/** Response key -> { def, nodes } for `concrete` over the given selection sets. */
function collect(ctx, concrete, selectionSets) {
  const fields = new Map();
  const walk = (set, seen) => {
    for (const sel of set?.selections ?? []) {
      if (skipped(ctx, sel)) continue;
      if (sel.kind === 'Field') {
        const key = sel.alias?.value ?? sel.name.value;
        if (!fields.has(key)) fields.set(key, { name: sel.name.value, nodes: [] });
        fields.get(key).nodes.push(sel);
      } else if (sel.kind === 'InlineFragment') {
        if (applies(ctx, sel.typeCondition?.name.value, concrete)) walk(sel.selectionSet, seen);
      } else if (sel.kind === 'FragmentSpread') {
        const f = ctx.fragments[sel.name.value];
        if (f && !seen.has(f) && applies(ctx, f.typeCondition.name.value, concrete)) walk(f.selectionSet, new Set([...seen, f]));
      }
    }
  };
  for (const set of selectionSets) walk(set, new Set());
  return fields;
}

function skipped(ctx, sel) {
  for (const d of sel.directives ?? []) {
    const def = d.name.value === 'skip' ? ctx.g.GraphQLSkipDirective : d.name.value === 'include' ? ctx.g.GraphQLIncludeDirective : null;
    if (!def) continue;
    const v = ctx.g.getDirectiveValues(def, sel, ctx.variables)?.if;
    if ((def === ctx.g.GraphQLSkipDirective && v === true) || (def === ctx.g.GraphQLIncludeDirective && v === false)) return true;
  }
  return false;
}

/** Checks `value` against `type` (a GraphQL output type) at `where` (a JSON-pointer-ish path). */
function checkValue(ctx, type, value, selectionSets, where) {
  const g = ctx.g;
  if (g.isNonNullType(type)) {
    if (value === null || value === undefined) return ctx.problems.push(problem('graphql-data', 'response 200 data', where, `is null, but the schema declares it ${type} (non-null)`));
    return checkValue(ctx, type.ofType, value, selectionSets, where);
  }
  if (value === null) return;
  if (g.isListType(type)) {
    if (!Array.isArray(value)) return ctx.problems.push(problem('graphql-data', 'response 200 data', where, `is not a list (${type})`));
    value.forEach((item, i) => checkValue(ctx, type.ofType, item, selectionSets, `${where}/${i}`));
    return;
  }
  if (g.isEnumType(type)) {
    if (!type.getValues().some((v) => v.name === value)) ctx.problems.push(problem('graphql-data', 'response 200 data', where, `${JSON.stringify(value)} is not a value of the enum ${type}`));
    return;
  }
  if (g.isScalarType(type)) {
    const test = SCALARS[type.name] ?? ((v) => typeof v === 'string');
    if (!test(value)) ctx.problems.push(problem('graphql-data', 'response 200 data', where, `${JSON.stringify(value)} is not a ${type.name}`));
    return;
  }
  checkObject(ctx, type, value, selectionSets, where);
}

/** An object of `type` (object, interface or union): its keys are exactly the fields the
 *  selection asks of one of its possible concrete types. */
function checkObject(ctx, type, value, selectionSets, where) {
  if (!isObject(value)) return ctx.problems.push(problem('graphql-data', 'response 200 data', where, `is not an object (${type})`));
  let candidates = ctx.g.isAbstractType(type) ? [...ctx.schema.getPossibleTypes(type)] : [type];
  if (typeof value.__typename === 'string') candidates = candidates.filter((t) => t.name === value.__typename);
  const keys = Object.keys(value).sort().join(',');
  const fitting = candidates.map((t) => ({ t, fields: collect(ctx, t, selectionSets) })).filter(({ fields }) => [...fields.keys()].sort().join(',') === keys);
  if (!fitting.length) {
    const asked = candidates.length === 1 ? [...collect(ctx, candidates[0], selectionSets).keys()] : null;
    const detail = asked ? `asked for [${asked.join(', ')}]` : `fits none of ${candidates.map(String).join(', ')}`;
    return ctx.problems.push(problem('graphql-data', 'response 200 data', where, `has keys [${Object.keys(value).join(', ')}]; the selection on ${type} ${detail}`));
  }
  // Of several concrete types the keys fit, the value must fit one in full.
  let best = null;
  for (const { t, fields } of fitting) {
    const sub = { ...ctx, problems: [] };
    for (const [key, { name, nodes }] of fields) {
      if (name === '__typename') {
        if (value[key] !== t.name) sub.problems.push(problem('graphql-data', 'response 200 data', `${where}/${key}`, `is ${JSON.stringify(value[key])}, not ${t.name}`));
        continue;
      }
      const def = t.getFields()[name];
      checkValue(sub, def.type, value[key], nodes.map((n) => n.selectionSet).filter(Boolean), `${where}/${key}`);
    }
    if (!best || sub.problems.length < best.length) best = sub.problems;
    if (!best.length) break;
  }
  ctx.problems.push(...best);
}
