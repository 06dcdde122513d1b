// GitHub's GraphQL endpoint (POST /graphql) for what leasehold's claims send: the repository
// id, one ref (its commit and a file of that commit's tree), a paginated listing of refs
// under a prefix, and the `updateRefs` mutation (several refs moved at once, all or none).
// Comments cite GitHub's behaviour as docs/github-semantics.md#<anchor>.
//
// Not a general GraphQL engine: a document is parsed and validated against GitHub's published
// schema (npm @octokit/graphql-schema, with the `graphql` package: both dev dependencies,
// loaded on the first GraphQL request only), then executed by walking its AST (aliases,
// variables, fragments and inline fragments honoured). A field the schema has but this file
// does not serve is answered with an error naming it ("the emulator does not serve
// Repository.issues"), so a test that strays outside the supported slice notices.
//
// Answer shapes (docs/github-semantics.md#graphql-errors): HTTP 200 with `errors[]` for an
// invalid document, an unknown repository (type NOT_FOUND), a stale `beforeOid` (type
// STALE_DATA), a refused update (type UNPROCESSABLE) and the primary rate limit (type
// RATE_LIMITED); the secondary limit is a 403 with retry-after, the 10 s kill a 502.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FAULT_MESSAGES, DOCS, ZERO_SHA } from './constants.mjs';
import { runGit } from './git.mjs';
import { isoSeconds, nodeId } from './helpers.mjs';

// ---------------------------------------------------------------------------------------
// GitHub's schema
// ---------------------------------------------------------------------------------------

let loaded = null;

/** { graphql (the package), schema (GitHub's, built from @octokit/graphql-schema), version }.
 *  Loaded once per process. */
export async function loadGraphql() {
  if (loaded) return loaded;
  const graphql = await import('graphql');
  const { schema: published } = await import('@octokit/graphql-schema');
  const pkgDir = path.dirname(fileURLToPath(import.meta.resolve('@octokit/graphql-schema')));
  const version = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  // The JSON form: the SDL form of this release defines two fields twice, which the
  // `graphql` package's SDL builder refuses.
  loaded = { graphql, schema: graphql.buildClientSchema(published.json), version };
  return loaded;
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/** An error a resolver answers with: its field becomes null and `errors[]` gets an entry
 *  { type, path, locations, message }. `fatal`: the whole answer is `{ errors }`, no data
 *  (GitHub's pagination-argument checks run before anything executes). */
class FieldError extends Error {
  constructor(type, message, { fatal = false } = {}) {
    super(message);
    this.type = type;
    this.fatal = fatal;
  }
}

/** A field of GitHub's schema that the emulator does not serve. */
class Unsupported extends FieldError {
  constructor(what) {
    super('EMULATOR_UNSUPPORTED', `the emulator does not serve ${what} (tests/emulator/graphql.mjs)`);
  }
}

/** [{ line, column }] of an AST node, as GraphQL errors carry them. */
function locationsOf(g, node) {
  if (!node?.loc?.source) return undefined;
  const { line, column } = g.getLocation(node.loc.source, node.loc.start);
  return [{ line, column }];
}

/** GitHub's 200-with-errors body for errors of the graphql package (syntax, validation,
 *  variables): message and locations, no data. */
function documentErrors(errors) {
  return {
    errors: errors.map((e) => {
      const out = { message: e.message };
      if (e.locations?.length) out.locations = e.locations.map(({ line, column }) => ({ line, column }));
      return out;
    }),
  };
}

/** GraphQL's answer to a request that failed on GitHub's side, or was killed at the time
 *  limit (docs/github-semantics.md#request-time-limit): a 5xx whose body is GraphQL-shaped
 *  (observed wording). */
export function graphqlServerError(status, requestId) {
  const message =
    'Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. ' +
    `Please include \`${requestId}\` when reporting this issue.`;
  return { status, body: { data: null, errors: [{ message }] }, headers: {} };
}

// ---------------------------------------------------------------------------------------
// Cost (docs/github-semantics.md#rate-limits): a query costs the number of requests its
// connections need (each connection's page counted at its `first`/`last`, times the pages
// of the connections it sits in), divided by 100 and rounded, at least 1; a mutation 1.
// ---------------------------------------------------------------------------------------

function pointsOf(g, schema, operation, fragments, variables) {
  if (operation.operation === 'mutation') return 1;
  let requests = 0;
  const walk = (selectionSet, parentType, multiplier, seen) => {
    for (const sel of selectionSet?.selections ?? []) {
      if (sel.kind === 'InlineFragment') {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parentType;
        walk(sel.selectionSet, t, multiplier, seen);
      } else if (sel.kind === 'FragmentSpread') {
        const f = fragments[sel.name.value];
        if (f && !seen.has(f)) walk(f.selectionSet, schema.getType(f.typeCondition.name.value), multiplier, new Set([...seen, f]));
      } else if (sel.kind === 'Field' && parentType?.getFields) {
        const def = parentType.getFields()[sel.name.value];
        if (!def) continue;
        const type = g.getNamedType(def.type);
        let inner = multiplier;
        if (type.name.endsWith('Connection')) {
          const args = g.getArgumentValues(def, sel, variables);
          requests += multiplier;
          inner = multiplier * (args.first ?? args.last ?? 1);
        }
        walk(sel.selectionSet, type, inner, seen);
      }
    }
  };
  walk(operation.selectionSet, operation.operation === 'query' ? schema.getQueryType() : schema.getMutationType(), 1, new Set());
  return Math.max(1, Math.round(requests / 100));
}

// ---------------------------------------------------------------------------------------
// The endpoint
// ---------------------------------------------------------------------------------------

/**
 * Answers POST /graphql (already authenticated). `emu` is the Emulator, `ctx` the request.
 * Returns a reply { status, body, headers } or, for the rate-limited paths, the same with
 * the GraphQL rate-limit headers set by the caller. Points are consumed here.
 */
export async function graphqlRoute(emu, ctx) {
  const { graphql: g, schema } = await loadGraphql();
  const ok = (body) => ({ status: 200, body, headers: {} });

  let body;
  try {
    body = JSON.parse(ctx.rawBody.toString('utf8'));
  } catch {
    return { status: 400, body: { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' }, headers: {} };
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return { status: 400, body: { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' }, headers: {} };
  }
  if (typeof body.query !== 'string' || !body.query.trim()) {
    // Observed wording: GitHub answers a body without a query with this one error.
    return ok({ errors: [{ message: 'A query attribute must be specified and must be a string.' }] });
  }

  let doc;
  try {
    doc = g.parse(body.query);
  } catch (e) {
    return ok(documentErrors([e]));
  }
  const invalid = g.validate(schema, doc);
  if (invalid.length) return ok(documentErrors(invalid));

  const operationName = typeof body.operationName === 'string' && body.operationName ? body.operationName : null;
  const operation = g.getOperationAST(doc, operationName);
  if (!operation) {
    return ok({ errors: [{ message: operationName ? `Unknown operation named "${operationName}".` : 'An operation name is required' }] });
  }
  if (operation.operation === 'subscription') return ok({ errors: [{ message: 'Subscriptions are not supported' }] });
  const rawVariables = body.variables == null ? {} : body.variables;
  if (typeof rawVariables !== 'object' || Array.isArray(rawVariables)) {
    return ok({ errors: [{ message: 'Variables are invalid JSON.' }] });
  }
  const coerced = g.getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables);
  if (coerced.errors) return ok(documentErrors(coerced.errors));
  const variables = coerced.coerced;
  const fragments = Object.fromEntries(doc.definitions.filter((d) => d.kind === 'FragmentDefinition').map((d) => [d.name.value, d]));

  // Primary limit, in points (docs/github-semantics.md#rate-limits): a call that costs more
  // than what is left is refused with a 200 and a RATE_LIMITED error, nothing executed.
  const token = ctx.token;
  const cost = pointsOf(g, schema, operation, fragments, variables);
  ctx.graphqlCost = cost;
  if (emu.graphqlRate.peek(token).remaining < cost) {
    ctx.rateLimited = true;
    return ok({ errors: [{ type: 'RATE_LIMITED', message: `API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID ${ctx.id}.` }] });
  }
  // Secondary limit: a mutation creates content and counts against the content-creating
  // limit (docs/github-semantics.md#rate-limits); answered as REST answers it.
  if (operation.operation === 'mutation') {
    const wait = emu.secondary.admit(token);
    if (wait !== null) {
      const message = DEFAULT_FAULT_MESSAGES[403].replace('{id}', ctx.id);
      return { status: 403, body: { message, documentation_url: DOCS.secondary, status: '403' }, headers: { 'retry-after': String(wait) } };
    }
  }
  emu.graphqlRate.consume(token, cost);

  const exec = new Execution(g, schema, emu, ctx, fragments, variables);
  const rootType = operation.operation === 'query' ? schema.getQueryType() : schema.getMutationType();
  let data;
  try {
    // Mutations' root fields run one after another, queries' too (GitHub's order either way).
    data = await exec.selectionSet(rootType, { __type: rootType.name }, operation.selectionSet, [], operation.operation === 'mutation');
  } catch (e) {
    if (e instanceof FieldError && e.fatal) return ok({ errors: [exec.describe(e, e.node, e.path)] });
    throw e;
  }
  const answer = { data };
  if (exec.errors.length) answer.errors = exec.errors;
  return ok(answer);
}

// ---------------------------------------------------------------------------------------
// Execution: a walk over the selection, with GitHub's objects behind resolvers
// ---------------------------------------------------------------------------------------

class Execution {
  constructor(g, schema, emu, ctx, fragments, variables) {
    Object.assign(this, { g, schema, emu, ctx, fragments, variables });
    this.errors = [];
  }

  describe(e, node, p) {
    const out = {};
    if (e.type) out.type = e.type;
    out.path = p;
    const loc = locationsOf(this.g, node);
    if (loc) out.locations = loc;
    out.message = e.message;
    return out;
  }

  /** Whether a fragment with `condition` (a type name, or none) applies to `concrete`. */
  applies(condition, concrete) {
    if (!condition) return true;
    if (condition === concrete.name) return true;
    const t = this.schema.getType(condition);
    return this.g.isAbstractType(t) && this.schema.isSubType(t, concrete);
  }

  /** GraphQL's CollectFields: response key -> [field nodes], in document order. */
  collect(concrete, selectionSet, out = new Map(), seen = new Set()) {
    for (const sel of selectionSet.selections) {
      if (!this.included(sel)) continue;
      if (sel.kind === 'Field') {
        const key = sel.alias?.value ?? sel.name.value;
        if (!out.has(key)) out.set(key, []);
        out.get(key).push(sel);
      } else if (sel.kind === 'InlineFragment') {
        if (this.applies(sel.typeCondition?.name.value, concrete)) this.collect(concrete, sel.selectionSet, out, seen);
      } else if (sel.kind === 'FragmentSpread') {
        const name = sel.name.value;
        const f = this.fragments[name];
        if (seen.has(name) || !f || !this.applies(f.typeCondition.name.value, concrete)) continue;
        seen.add(name);
        this.collect(concrete, f.selectionSet, out, seen);
      }
    }
    return out;
  }

  /** @skip / @include. */
  included(sel) {
    for (const d of sel.directives ?? []) {
      const name = d.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const { if: cond } = this.g.getDirectiveValues(name === 'skip' ? this.g.GraphQLSkipDirective : this.g.GraphQLIncludeDirective, sel, this.variables) ?? {};
      if (name === 'skip' && cond === true) return false;
      if (name === 'include' && cond === false) return false;
    }
    return true;
  }

  /** The object for `value` (whose concrete type is value.__type) at `p`. */
  async selectionSet(type, value, selectionSet, p, serial = false) {
    const concrete = this.schema.getType(value.__type);
    const fields = this.collect(concrete, selectionSet);
    const out = {};
    const run = async ([key, nodes]) => [key, await this.field(concrete, value, key, nodes, [...p, key])];
    const entries = [];
    if (serial) for (const e of fields) entries.push(await run(e));
    else entries.push(...(await Promise.all([...fields].map(run))));
    let nulled = false;
    for (const [key, v] of entries) {
      if (v === NULLED) nulled = true;
      else out[key] = v;
    }
    return nulled ? NULLED : out;
  }

  /** One field: its value completed against its type; NULLED when a non-null field came out
   *  null (its parent is then null: GraphQL's null propagation). */
  async field(parentType, parent, key, nodes, p) {
    const node = nodes[0];
    const name = node.name.value;
    if (name === '__typename') return parentType.name;
    const def = parentType.getFields()[name];
    let value;
    try {
      const resolver = RESOLVERS[parentType.name]?.[name];
      if (!resolver) throw new Unsupported(`${parentType.name}.${name}`);
      const args = this.g.getArgumentValues(def, node, this.variables);
      value = await resolver.call(this, parent, args, { node, path: p });
      return await this.complete(def.type, value, nodes, p);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      if (e.fatal) {
        e.node ??= node;
        e.path ??= p;
        throw e;
      }
      this.errors.push(this.describe(e, node, p));
      return this.g.isNonNullType(def.type) ? NULLED : null;
    }
  }

  async complete(type, value, nodes, p) {
    const g = this.g;
    if (g.isNonNullType(type)) {
      const v = await this.complete(type.ofType, value, nodes, p);
      if (v === null) throw new FieldError(undefined, `emulator bug: null for the non-null ${p.join('.')}`);
      return v === NULLED ? NULLED : v;
    }
    if (value === null || value === undefined) return null;
    if (g.isListType(type)) {
      const items = await Promise.all(value.map((item, i) => this.complete(type.ofType, item, nodes, [...p, i])));
      // A NULLED item of a nullable item type is null; of a non-null item type the list is.
      if (items.includes(NULLED)) return g.isNonNullType(type.ofType) ? NULLED : items.map((x) => (x === NULLED ? null : x));
      return items;
    }
    if (g.isLeafType(type)) return value;
    const merged = { kind: 'SelectionSet', selections: nodes.flatMap((n) => n.selectionSet?.selections ?? []) };
    const v = await this.selectionSet(type, value, merged, p);
    return v === NULLED ? null : v;
  }
}

const NULLED = Symbol('nulled');

// ---------------------------------------------------------------------------------------
// GitHub's objects. A value is { __type: <concrete type name>, ...what its fields need }.
// ---------------------------------------------------------------------------------------

/** The repository's GraphQL id: the same global id its REST description has as node_id. */
const repositoryId = (repo) => nodeId('R', repo.fullName);

function repositoryValue(repo) {
  return { __type: 'Repository', repo };
}

/** A git object by sha as its GraphQL type (Commit, Tree, Blob, Tag), or null. */
async function objectValue(repo, sha, type) {
  type ??= await repo.objectType(sha);
  const name = { commit: 'Commit', tree: 'Tree', blob: 'Blob', tag: 'Tag' }[type];
  return name ? { __type: name, repo, sha } : null;
}

/** How GitHub splits a qualified ref name into `prefix` and `name`: after refs/heads/ or
 *  refs/tags/, else after the last "/" (unrecorded for other namespaces); a listing
 *  (refs(refPrefix:)) splits after the prefix it was asked for. */
function refValue(repo, { ref, sha, type }, prefix) {
  if (prefix === undefined) {
    const known = ['refs/heads/', 'refs/tags/'].find((k) => ref.startsWith(k));
    prefix = known ?? ref.slice(0, ref.lastIndexOf('/') + 1);
  }
  return { __type: 'Ref', repo, ref, sha, type, prefix, name: ref.slice(prefix.length) };
}

const encodeCursor = (index) => Buffer.from(String(index)).toString('base64').replace(/=+$/, '');
function decodeCursor(cursor, argName) {
  const s = Buffer.from(String(cursor), 'base64').toString('utf8');
  if (!/^\d+$/.test(s)) throw new FieldError(undefined, `\`${cursor}\` does not appear to be a valid cursor.`, { fatal: true, argName });
  return Number(s);
}

/** first/last as GitHub checks them (docs/github-semantics.md#graphql-pagination). */
function pageBounds(connection, args) {
  const { first, last } = args;
  if (first == null && last == null) {
    throw new FieldError('MISSING_PAGINATION_BOUNDARIES', `You must provide a \`first\` or \`last\` value to properly paginate the \`${connection}\` connection.`, { fatal: true });
  }
  for (const [k, v] of [['first', first], ['last', last]]) {
    if (v == null) continue;
    if (v > 100) {
      throw new FieldError('EXCESSIVE_PAGINATION', `Requesting ${v} records on the \`${connection}\` connection exceeds the \`${k}\` limit of 100 records.`, { fatal: true });
    }
    if (v < 0) throw new FieldError('INVALID_PAGINATION', `\`${k}\` on the \`${connection}\` connection cannot be less than zero.`, { fatal: true });
  }
}

/** A page of `items` (0-based index cursors as base64 of the 1-based position). */
function page(items, args, toNode) {
  let start = 0;
  let end = items.length;
  if (args.after != null) start = Math.max(start, decodeCursor(args.after));
  if (args.before != null) end = Math.min(end, decodeCursor(args.before) - 1);
  if (end < start) end = start;
  let from = start;
  let to = end;
  if (args.first != null) to = Math.min(to, from + args.first);
  if (args.last != null) from = Math.max(from, to - args.last);
  const slice = items.slice(from, to).map((item, i) => ({ node: toNode(item), cursor: encodeCursor(from + i + 1) }));
  return {
    __type: null, // set by the caller
    totalCount: items.length,
    edges: slice,
    pageInfo: {
      __type: 'PageInfo',
      hasNextPage: to < end,
      hasPreviousPage: from > start,
      startCursor: slice[0]?.cursor ?? null,
      endCursor: slice.at(-1)?.cursor ?? null,
    },
  };
}

function connectionResolvers() {
  return {
    totalCount: (c) => c.totalCount,
    pageInfo: (c) => c.pageInfo,
    nodes: (c) => c.edges.map((e) => e.node),
    edges: (c) => c.edges.map((e) => ({ __type: c.edgeType, ...e })),
  };
}

const commitFields = (repo, sha) => repo.readCommit(sha);

const RESOLVERS = {
  Query: {
    async repository(_, { owner, name }) {
      const repo = this.emu.repos.get(`${owner}/${name}`.toLowerCase());
      if (!repo) throw new FieldError('NOT_FOUND', `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      return repositoryValue(repo);
    },
  },
  Mutation: {
    updateRefs(_, { input }, { node }) {
      return updateRefs.call(this, input, node);
    },
  },
  UpdateRefsPayload: {
    clientMutationId: (v) => v.clientMutationId ?? null,
  },
  Repository: {
    id: (v) => repositoryId(v.repo),
    name: (v) => v.repo.name,
    nameWithOwner: (v) => v.repo.fullName,
    async ref(v, { qualifiedName }) {
      // Fully qualified first, then the short name as a branch, then as a tag.
      const refs = await v.repo.refs();
      for (const candidate of [qualifiedName, `refs/heads/${qualifiedName}`, `refs/tags/${qualifiedName}`]) {
        const found = refs.find((r) => r.ref === candidate);
        if (found) return refValue(v.repo, found);
      }
      return null;
    },
    async refs(v, args) {
      pageBounds('refs', args);
      if (args.query != null) throw new Unsupported('Repository.refs(query:)');
      if (args.orderBy && args.orderBy.field !== 'ALPHABETICAL') throw new Unsupported(`Repository.refs(orderBy: {field: ${args.orderBy.field}})`);
      const prefix = args.refPrefix;
      // Alphabetical by name (for-each-ref's byte order), the default order (unrecorded).
      let refs = (await v.repo.refs()).filter((r) => r.ref.startsWith(prefix) && r.ref.length > prefix.length);
      refs.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
      const direction = args.orderBy?.direction ?? args.direction;
      if (direction === 'DESC') refs = refs.reverse();
      return { ...page(refs, args, (r) => refValue(v.repo, r, prefix)), __type: 'RefConnection', edgeType: 'RefEdge' };
    },
  },
  RefConnection: connectionResolvers(),
  RefEdge: { cursor: (e) => e.cursor, node: (e) => e.node },
  CommitConnection: connectionResolvers(),
  CommitEdge: { cursor: (e) => e.cursor, node: (e) => e.node },
  PageInfo: {
    hasNextPage: (p) => p.hasNextPage,
    hasPreviousPage: (p) => p.hasPreviousPage,
    startCursor: (p) => p.startCursor,
    endCursor: (p) => p.endCursor,
  },
  Ref: {
    id: (v) => nodeId('REF', `${v.repo.fullName}:${v.ref}`),
    name: (v) => v.name,
    prefix: (v) => v.prefix,
    target: (v) => objectValue(v.repo, v.sha, v.type),
    repository: (v) => repositoryValue(v.repo),
  },
  Commit: {
    ...gitObjectFields('Commit'),
    async message(v) {
      return (await commitFields(v.repo, v.sha)).message;
    },
    async tree(v) {
      return { __type: 'Tree', repo: v.repo, sha: (await commitFields(v.repo, v.sha)).tree };
    },
    async parents(v, args) {
      pageBounds('parents', args);
      const { parents } = await commitFields(v.repo, v.sha);
      return { ...page(parents, args, (sha) => ({ __type: 'Commit', repo: v.repo, sha })), __type: 'CommitConnection', edgeType: 'CommitEdge' };
    },
    async file(v, { path: p }) {
      const clean = p.replace(/^\/+|\/+$/g, '');
      if (!clean) return null;
      const e = await v.repo.entry(v.sha, clean);
      return e ? { __type: 'TreeEntry', repo: v.repo, path: clean, entry: e } : null;
    },
  },
  Tree: { ...gitObjectFields('Tree') },
  Blob: {
    ...gitObjectFields('Blob'),
    async text(v) {
      const buf = await v.repo.blob(v.sha);
      return isBinary(buf) ? null : buf.toString('utf8');
    },
    async byteSize(v) {
      return (await v.repo.blob(v.sha)).length;
    },
    async isBinary(v) {
      return isBinary(await v.repo.blob(v.sha));
    },
  },
  Tag: { ...gitObjectFields('Tag') },
  TreeEntry: {
    name: (v) => path.posix.basename(v.path),
    path: (v) => v.path,
    oid: (v) => v.entry.sha,
    type: (v) => v.entry.type,
    mode: (v) => parseInt(v.entry.mode, 8),
    size: (v) => v.entry.size,
    // A submodule's commit lives in another repository: no object here.
    object: (v) => (v.entry.type === 'commit' ? null : objectValue(v.repo, v.entry.sha, v.entry.type)),
  },
};

function gitObjectFields() {
  return {
    oid: (v) => v.sha,
    abbreviatedOid: (v) => v.sha.slice(0, 7),
    repository: (v) => repositoryValue(v.repo),
  };
}

/** GitHub's test for `Blob.text` being null: a NUL in the first 8000 bytes, as git's. */
const isBinary = (buf) => buf.subarray(0, 8000).includes(0);

// ---------------------------------------------------------------------------------------
// updateRefs (docs/github-semantics.md#graphql-updaterefs)
// ---------------------------------------------------------------------------------------

const OID_RE = /^[0-9a-fA-F]{40}$/;

/** The mutation: every update checked, then all applied in one git transaction (all or
 *  none). Errors name the ref they are about. */
async function updateRefs(input, node) {
  const emu = this.emu;
  const repo = [...emu.repos.values()].find((r) => repositoryId(r) === input.repositoryId);
  if (!repo) throw new FieldError('NOT_FOUND', `Could not resolve to a node with the global id of '${input.repositoryId}'.`);
  const updates = input.refUpdates;
  const refused = (message) => new FieldError('UNPROCESSABLE', message);
  if (!updates.length) throw refused('No ref updates were provided.'); // unrecorded wording
  const seen = new Set();
  for (const u of updates) {
    // unrecorded wordings below: GitHub's exact messages for these refusals were not found.
    if (!u.name.startsWith('refs/') || u.name.split('/').length < 3) throw refused(`Ref name "${u.name}" is not fully qualified (refs/...).`);
    const ok = (await runGit(repo.gitDir, ['check-ref-format', u.name])).code === 0;
    if (!ok) throw refused(`Ref name "${u.name}" is invalid.`);
    if (seen.has(u.name)) throw refused(`Ref "${u.name}" is updated more than once.`);
    seen.add(u.name);
    for (const k of ['afterOid', 'beforeOid']) {
      if (u[k] != null && !OID_RE.test(u[k])) throw refused(`${k} "${u[k]}" of ref "${u.name}" is not a git object id.`);
    }
  }
  const norm = updates.map((u) => ({
    name: u.name,
    after: u.afterOid.toLowerCase(),
    before: u.beforeOid == null ? null : u.beforeOid.toLowerCase(),
    force: u.force === true,
  }));
  const types = await repo.objectTypes(norm.filter((u) => u.after !== ZERO_SHA).map((u) => u.after));

  for (let attempt = 0; ; attempt++) {
    const current = new Map((await repo.refs()).map((r) => [r.ref, r.sha]));
    const lines = [];
    for (const u of norm) {
      const now = current.get(u.name) ?? null;
      if (u.before !== null && u.before !== (now ?? ZERO_SHA)) throw stale(u, now);
      if (u.after !== ZERO_SHA && types.get(u.after) !== 'commit' && types.get(u.after) !== 'tag') {
        throw refused(`Object ${u.after} for ref "${u.name}" does not exist in this repository.`);
      }
      if (u.after === ZERO_SHA) {
        if (now === null) throw refused(`Ref "${u.name}" does not exist, so it cannot be deleted.`);
        lines.push(`delete ${u.name} ${now}`);
        continue;
      }
      if (now !== null && now !== u.after && !u.force) {
        const ff = await runGit(repo.gitDir, ['merge-base', '--is-ancestor', now, u.after]);
        if (ff.code !== 0) throw refused(`Ref "${u.name}" cannot be updated to ${u.after}: the update is not a fast forward (set force: true).`);
      }
      lines.push(now === null ? `create ${u.name} ${u.after}` : `update ${u.name} ${u.after} ${now}`);
    }
    // A fault rule can hold or delay the request here (faults.mjs, at: 'beforeRefUpdate');
    // a request killed at the time limit whose work is dropped stops here, nothing applied.
    if (this.ctx.hooks.beforeRefUpdate) await this.ctx.hooks.beforeRefUpdate();
    this.ctx.hooks.checkpoint();
    // `git update-ref --stdin` locks every ref, checks every old value, then moves all or none.
    const r = await runGit(repo.gitDir, ['update-ref', '--stdin'], { input: lines.join('\n') + '\n' });
    if (r.code === 0) break;
    // Another request moved one of these refs between the read above and the transaction:
    // judge again against what is there now (bounded: the refs of a test are few).
    if (attempt < 50 && /cannot lock ref|is at|reference already exists|unable to resolve|Unable to create .*\.lock/s.test(r.stderr)) continue;
    throw refused(`The refs could not be updated: ${r.stderr.trim()}`);
  }
  repo.pushedAt = isoSeconds(emu.now());
  return { __type: 'UpdateRefsPayload', clientMutationId: input.clientMutationId ?? null };
}

/** A stale beforeOid (docs/github-semantics.md#graphql-errors): nothing applied, the error
 *  names the ref and what it expected. Wording unconfirmed (modelled on createCommitOnBranch's
 *  observed "Expected branch to point to ... but it did not. Pull and try again."). */
function stale(u, now) {
  const what = u.before === ZERO_SHA ? `not to exist, but it points to "${now}"` : now === null ? `to point to "${u.before}", but it does not exist` : `to point to "${u.before}" but it did not`;
  return new FieldError('STALE_DATA', `Expected ref "${u.name}" ${what}. Pull and try again.`);
}

