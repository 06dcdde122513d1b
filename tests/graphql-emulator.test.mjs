// The emulator's GraphQL endpoint (tests/emulator/graphql.mjs) against GitHub's documented
// behaviour (docs/github-semantics.md#graphql-updaterefs, #graphql-errors,
// #graphql-pagination, #request-time-limit, #rate-limits), and the conformance check of
// GraphQL exchanges (tests/conformance/graphql.mjs). Every emulator here runs the conformance
// check (node --test), so each document sent is also validated against GitHub's schema.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateGraphqlExchange } from './conformance/graphql.mjs';
import { startEmulator } from './emulator/emulator.mjs';

const TOKEN = 'test-token';
const ZERO = '0'.repeat(40);
const NS = 'refs/leasehold/claims/ns/';

async function emulator(t, options = {}) {
  const emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'README.md': 'app\n' }, ...options });
  t.after(() => emu.close());
  const call = async (method, path, body, token = TOKEN) => {
    const res = await fetch(emu.url + path, {
      method,
      headers: { ...(token ? { authorization: `token ${token}` } : {}), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
  };
  const gql = (query, variables, token) => call('POST', '/graphql', { query, variables }, token);
  const repoId = (await gql('query { repository(owner: "octo", name: "app") { id } }')).body.data.repository.id;
  /** A commit made through the REST git data routes: a tree holding `files`, `parents`. */
  const commit = async (files, parents = [], message = 'claim') => {
    const tree = await call('POST', '/repos/octo/app/git/trees', { tree: Object.entries(files).map(([path, content]) => ({ path, mode: '100644', type: 'blob', content })) });
    assert.equal(tree.status, 201);
    const c = await call('POST', '/repos/octo/app/git/commits', { message, tree: tree.body.sha, parents });
    assert.equal(c.status, 201);
    return c.body.sha;
  };
  const restRef = async (ref) => {
    const r = await call('GET', `/repos/octo/app/git/ref/${ref.slice('refs/'.length)}`);
    return r.status === 200 ? r.body.object.sha : null;
  };
  const UPDATE = 'mutation Update($input: UpdateRefsInput!) { updateRefs(input: $input) { clientMutationId } }';
  const update = (refUpdates, extra = {}) => gql(UPDATE, { input: { repositoryId: repoId, refUpdates, ...extra } });
  return { emu, call, gql, repoId, commit, restRef, update };
}

/** Polls `check` until it is truthy: at most `n` times, 20 ms apart. */
async function eventually(check, n = 250) {
  for (let i = 0; i < n; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

describe('updateRefs (docs/github-semantics.md#graphql-updaterefs)', () => {
  test('a batch of 5 with one stale beforeOid applies none of them, and the error names the ref', async (t) => {
    const { commit, update, restRef } = await emulator(t);
    const c1 = await commit({ 'claim.json': '{"state":"held"}\n' });
    const names = [0, 1, 2, 3, 4].map((i) => `${NS}key-${i}`);
    const created = await update(names.map((name) => ({ name, beforeOid: ZERO, afterOid: c1 })));
    assert.deepEqual(created.body, { data: { updateRefs: { clientMutationId: null } } });
    const c2 = await commit({ 'claim.json': '{"state":"released"}\n' }, [c1]);
    const stale = 'f'.repeat(40);
    const r = await update(names.map((name, i) => ({ name, beforeOid: i === 3 ? stale : c1, afterOid: c2 })), { clientMutationId: 'batch' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, { updateRefs: null });
    assert.equal(r.body.errors.length, 1);
    const [e] = r.body.errors;
    assert.equal(e.type, 'STALE_DATA');
    assert.deepEqual(e.path, ['updateRefs']);
    assert.match(e.message, new RegExp(`${names[3]}.*${stale}`));
    // None applied: the REST view of the same git repository still shows c1 everywhere.
    for (const name of names) assert.equal(await restRef(name), c1, name);
    // With every beforeOid current, all five move, and REST sees them move.
    const ok = await update(names.map((name) => ({ name, beforeOid: c1, afterOid: c2 })), { clientMutationId: 'batch' });
    assert.deepEqual(ok.body, { data: { updateRefs: { clientMutationId: 'batch' } } });
    for (const name of names) assert.equal(await restRef(name), c2, name);
  });

  test('beforeOid all zeros creates only if absent', async (t) => {
    const { commit, update, restRef } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    const c2 = await commit({ 'claim.json': 'b' }, [c1]);
    assert.ok(!(await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c1 }])).body.errors);
    const again = await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c2 }]);
    assert.equal(again.body.errors[0].type, 'STALE_DATA');
    assert.match(again.body.errors[0].message, /refs\/leasehold\/claims\/ns\/k/);
    assert.equal(await restRef(`${NS}k`), c1);
    // The same all-or-none rule across kinds: a create that loses sinks the update beside it.
    const both = await update([
      { name: `${NS}other`, beforeOid: ZERO, afterOid: c1 },
      { name: `${NS}k`, beforeOid: ZERO, afterOid: c2 },
    ]);
    assert.equal(both.body.errors[0].type, 'STALE_DATA');
    assert.equal(await restRef(`${NS}other`), null);
  });

  test('a non-fast-forward update is refused without force: true, applied with it', async (t) => {
    const { commit, update, restRef } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    const c2 = await commit({ 'claim.json': 'b' }, [c1]);
    const orphan = await commit({ 'claim.json': 'c' });
    await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c2 }]);
    for (const target of [c1, orphan]) {
      const r = await update([{ name: `${NS}k`, beforeOid: c2, afterOid: target }]);
      assert.equal(r.body.errors[0].type, 'UNPROCESSABLE');
      assert.match(r.body.errors[0].message, /not a fast forward/);
      assert.equal(await restRef(`${NS}k`), c2);
    }
    // A descendant is a fast forward; force allows the rest.
    const c3 = await commit({ 'claim.json': 'd' }, [c2]);
    assert.ok(!(await update([{ name: `${NS}k`, beforeOid: c2, afterOid: c3 }])).body.errors);
    assert.ok(!(await update([{ name: `${NS}k`, beforeOid: c3, afterOid: orphan, force: true }])).body.errors);
    assert.equal(await restRef(`${NS}k`), orphan);
  });

  test('afterOid all zeros deletes the ref', async (t) => {
    const { commit, update, restRef, call } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c1 }]);
    const r = await update([{ name: `${NS}k`, beforeOid: c1, afterOid: ZERO }]);
    assert.ok(!r.body.errors, JSON.stringify(r.body));
    assert.equal(await restRef(`${NS}k`), null);
    assert.equal((await call('GET', `/repos/octo/app/git/ref/leasehold/claims/ns/k`)).status, 404);
  });

  test('refs must be fully qualified; an unknown repository id is NOT_FOUND', async (t) => {
    const { commit, update, gql } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    const short = await update([{ name: 'leasehold/claims/ns/k', beforeOid: ZERO, afterOid: c1 }]);
    assert.equal(short.body.errors[0].type, 'UNPROCESSABLE');
    assert.match(short.body.errors[0].message, /fully qualified/);
    const unknown = await gql('mutation { updateRefs(input: { repositoryId: "R_nope", refUpdates: [] }) { clientMutationId } }');
    assert.equal(unknown.body.errors[0].type, 'NOT_FOUND');
    assert.deepEqual(unknown.body.data, { updateRefs: null });
  });
});

describe('reads (docs/github-semantics.md#graphql-updaterefs)', () => {
  const READ = `query Read($owner: String!, $name: String!, $ref: String!, $path: String!) {
    repository(owner: $owner, name: $name) {
      claim: ref(qualifiedName: $ref) { ...Claim }
      missing: ref(qualifiedName: "refs/leasehold/claims/ns/none") { name }
    }
  }
  fragment Claim on Ref {
    name prefix
    target { oid ... on Commit { message tree { oid } parents(first: 1) { nodes { oid } } payload: file(path: $path) { object { ... on Blob { text } } } absent: file(path: "nope.json") { oid } } }
  }`;

  test('a ref, its commit and the payload file in its tree', async (t) => {
    const { commit, update, gql } = await emulator(t);
    const payload = '{"state":"held","holder":"run-1"}\n';
    const c1 = await commit({ 'claim.json': 'old' });
    const c2 = await commit({ 'claim.json': payload, 'meta/x.txt': 'x' }, [c1], 'claim k');
    await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c2 }]);
    const r = await gql(READ, { owner: 'octo', name: 'app', ref: `${NS}k`, path: 'claim.json' });
    assert.equal(r.status, 200);
    assert.ok(!r.body.errors, JSON.stringify(r.body.errors));
    const claim = r.body.data.repository.claim;
    assert.equal(claim.name, 'k');
    assert.equal(claim.prefix, NS);
    assert.equal(claim.target.oid, c2);
    assert.equal(claim.target.message, 'claim k');
    assert.match(claim.target.tree.oid, /^[0-9a-f]{40}$/);
    assert.deepEqual(claim.target.parents.nodes, [{ oid: c1 }]);
    assert.equal(claim.target.payload.object.text, payload);
    assert.equal(claim.target.absent, null);
    assert.equal(r.body.data.repository.missing, null);
  });

  test('listing 250 refs takes 3 pages of at most 100, chained by endCursor', async (t) => {
    const { commit, update, gql } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    const names = Array.from({ length: 250 }, (_, i) => `key-${String(i).padStart(3, '0')}`);
    assert.ok(!(await update(names.map((n) => ({ name: NS + n, beforeOid: ZERO, afterOid: c1 })))).body.errors);
    await update([{ name: 'refs/leasehold/claims/other/x', beforeOid: ZERO, afterOid: c1 }]); // another namespace: not listed
    const LIST = `query List($cursor: String) { repository(owner: "octo", name: "app") {
      refs(refPrefix: "${NS}", first: 100, after: $cursor) { totalCount pageInfo { hasNextPage endCursor } nodes { name target { oid ... on Commit { file(path: "claim.json") { object { ... on Blob { text } } } } } } } } }`;
    const seen = [];
    const pages = [];
    let cursor = null;
    for (let i = 0; i < 5; i++) {
      const r = await gql(LIST, { cursor });
      assert.ok(!r.body.errors, JSON.stringify(r.body.errors));
      const refs = r.body.data.repository.refs;
      assert.equal(refs.totalCount, 250);
      pages.push(refs.nodes.length);
      for (const n of refs.nodes) {
        seen.push(n.name);
        assert.equal(n.target.oid, c1);
        assert.equal(n.target.file.object.text, 'a');
      }
      if (!refs.pageInfo.hasNextPage) break;
      cursor = refs.pageInfo.endCursor;
      assert.equal(typeof cursor, 'string');
    }
    assert.deepEqual(pages, [100, 100, 50]);
    assert.deepEqual(seen, names);
    // More than 100 on a page is refused before anything runs, as GitHub does.
    const big = await gql(`query { repository(owner: "octo", name: "app") { refs(refPrefix: "${NS}", first: 101) { totalCount } } }`);
    assert.equal(big.status, 200);
    assert.equal(big.body.data, undefined);
    assert.equal(big.body.errors[0].type, 'EXCESSIVE_PAGINATION');
    const none = await gql(`query { repository(owner: "octo", name: "app") { refs(refPrefix: "${NS}") { totalCount } } }`);
    assert.equal(none.body.errors[0].type, 'MISSING_PAGINATION_BOUNDARIES');
  });

  test('an unknown repository is a 200 with a NOT_FOUND error', async (t) => {
    const { gql } = await emulator(t);
    const r = await gql('query { repository(owner: "octo", name: "nope") { id } }');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, { repository: null });
    assert.equal(r.body.errors[0].type, 'NOT_FOUND');
    assert.deepEqual(r.body.errors[0].path, ['repository']);
  });
});

describe('documents and authentication (docs/github-semantics.md#graphql-errors)', () => {
  test('an invalid document is a 200 with validation errors and no data, and counts as refused', async (t) => {
    const { emu, gql } = await emulator(t);
    for (const query of [
      'query { repository(owner: "octo", name: "app") { idd } }', // no such field
      'query { repository(owner: "octo") { id } }', // a required argument missing
      'query { repository(owner: "octo", name: "app") { id }', // does not parse
      'query Q($n: String!) { repository(owner: "octo", name: $n) { id } }', // a variable not given
    ]) {
      const r = await gql(query);
      assert.equal(r.status, 200, query);
      assert.equal(r.body.data, undefined, query);
      assert.ok(r.body.errors.length >= 1 && typeof r.body.errors[0].message === 'string', query);
    }
    await emu.close();
    // 1 valid (the repository id) + 4 refused, no mismatch.
    assert.equal(emu.conformance.summary.refused, 4);
    assert.equal(emu.conformance.summary.mismatches.length, 0);
  });

  test('a valid field the emulator does not serve is answered with an error naming it', async (t) => {
    const { gql } = await emulator(t, { conformance: false }); // the conformance check flags it, by design
    const r = await gql('query { repository(owner: "octo", name: "app") { id isArchived } }');
    assert.equal(r.body.errors[0].type, 'EMULATOR_UNSUPPORTED');
    assert.match(r.body.errors[0].message, /Repository\.isArchived/);
  });

  test('authenticated like the REST routes', async (t) => {
    const { gql } = await emulator(t, { tokens: [TOKEN] });
    assert.equal((await gql('query { repository(owner: "octo", name: "app") { id } }', {}, null)).status, 401);
    assert.equal((await gql('query { repository(owner: "octo", name: "app") { id } }', {}, 'wrong')).status, 401);
  });
});

describe('faults and limits', () => {
  for (const work of ['finish', 'drop']) {
    test(`a mutation killed at the time limit answers 502; its work ${work === 'finish' ? 'still lands' : 'is dropped'} (docs/github-semantics.md#request-time-limit)`, async (t) => {
      const { emu, commit, update, restRef } = await emulator(t);
      const c1 = await commit({ 'claim.json': 'a' });
      emu.setTimeLimit({ ms: 100, work });
      emu.faults.add({ path: '/graphql', action: { latencyMs: 400, at: 'beforeRefUpdate' } });
      const r = await update([{ name: `${NS}k`, beforeOid: ZERO, afterOid: c1 }]);
      assert.equal(r.status, 502);
      assert.equal(r.body.data, null);
      assert.match(r.body.errors[0].message, /timeout/);
      assert.equal(r.headers['x-ratelimit-resource'], 'graphql');
      const entry = await eventually(() => emu.log.find((e) => e.path === '/graphql' && e.applied !== undefined));
      assert.ok(entry, 'the killed request settled');
      assert.equal(await restRef(`${NS}k`), work === 'finish' ? c1 : null);
    });
  }

  test('a 502 after the mutation was applied (applyThen), and one before it (status)', async (t) => {
    const { emu, commit, update, restRef } = await emulator(t);
    const c1 = await commit({ 'claim.json': 'a' });
    emu.faults.add({ path: '/graphql', action: { applyThen: { status: 502 } } });
    assert.equal((await update([{ name: `${NS}a`, beforeOid: ZERO, afterOid: c1 }])).status, 502);
    assert.equal(await restRef(`${NS}a`), c1);
    emu.faults.add({ path: '/graphql', action: { status: 502 } });
    assert.equal((await update([{ name: `${NS}b`, beforeOid: ZERO, afterOid: c1 }])).status, 502);
    assert.equal(await restRef(`${NS}b`), null);
  });

  test('the primary limit is GraphQL points of its own: a 200 with RATE_LIMITED once spent (docs/github-semantics.md#rate-limits)', async (t) => {
    const { gql, call, update, commit } = await emulator(t, { limits: { graphqlPerHour: 4 } });
    const c1 = await commit({ 'claim.json': 'a' }); // REST: not GraphQL points
    // The emulator's setup spent 1 point (the repository id); a query costs 1, a mutation 1.
    const q = await gql('query { repository(owner: "octo", name: "app") { id } }');
    assert.equal(q.headers['x-ratelimit-resource'], 'graphql');
    assert.equal(q.headers['x-ratelimit-limit'], '4');
    assert.equal(q.headers['x-ratelimit-used'], '2');
    assert.ok(!(await update([{ name: `${NS}a`, beforeOid: ZERO, afterOid: c1 }])).body.errors);
    assert.ok(!(await gql('query { repository(owner: "octo", name: "app") { id } }')).body.errors);
    const limited = await update([{ name: `${NS}b`, beforeOid: ZERO, afterOid: c1 }]);
    assert.equal(limited.status, 200);
    assert.equal(limited.body.data, undefined);
    assert.equal(limited.body.errors[0].type, 'RATE_LIMITED');
    assert.match(limited.body.errors[0].message, /rate limit exceeded/i);
    assert.equal(limited.headers['x-ratelimit-remaining'], '0');
    assert.ok(Number(limited.headers['x-ratelimit-reset']) > 0);
    assert.equal((await call('GET', '/repos/octo/app/git/ref/leasehold/claims/ns/b')).status, 404, 'not applied');
    // REST keeps its own budget; /rate_limit reports both.
    const rl = await call('GET', '/rate_limit');
    assert.deepEqual([rl.body.resources.graphql.limit, rl.body.resources.graphql.remaining], [4, 0]);
    assert.ok(rl.body.resources.core.remaining > 0);
  });

  test('mutations count against the secondary content-creating limit, queries do not: 403 with retry-after', async (t) => {
    const { gql, update, commit, restRef } = await emulator(t, { limits: { contentPerMinute: 4 } });
    const c1 = await commit({ 'claim.json': 'a' }); // 2 content-creating REST requests
    for (let i = 0; i < 3; i++) assert.equal((await gql('query { repository(owner: "octo", name: "app") { id } }')).status, 200);
    assert.ok(!(await update([{ name: `${NS}a`, beforeOid: ZERO, afterOid: c1 }])).body.errors);
    assert.ok(!(await update([{ name: `${NS}b`, beforeOid: ZERO, afterOid: c1 }])).body.errors);
    const refused = await update([{ name: `${NS}c`, beforeOid: ZERO, afterOid: c1 }]);
    assert.equal(refused.status, 403);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.match(refused.body.message, /secondary rate limit/);
    assert.equal(await restRef(`${NS}c`), null);
  });
});

describe('the conformance check of GraphQL exchanges (tests/conformance/graphql.mjs)', () => {
  const exchange = (query, responseBody, extra = {}) => ({
    method: 'POST',
    path: '/graphql',
    requestBody: { query, variables: extra.variables },
    status: extra.status ?? 200,
    responseHeaders: { 'x-ratelimit-resource': 'graphql', 'content-type': 'application/json; charset=utf-8' },
    responseBody,
  });
  const Q = 'query { repository(owner: "o", name: "r") { id ref(qualifiedName: "refs/x/y") { name target { oid ... on Commit { message } } } } }';
  const oid = 'a'.repeat(40);

  test('a response that fits the selection passes', () => {
    const r = validateGraphqlExchange(exchange(Q, { data: { repository: { id: 'R_1', ref: { name: 'y', target: { oid, message: 'm' } } } } }));
    assert.deepEqual(r.problems, []);
    assert.equal(r.operation, 'graphql query repository');
    // A Tree target has no `message`: the inline fragment does not apply to it.
    assert.deepEqual(validateGraphqlExchange(exchange(Q, { data: { repository: { id: 'R_1', ref: { name: 'y', target: { oid } } } } })).problems, []);
  });

  test('a mismatch names the field', () => {
    const cases = [
      [{ data: { repository: { id: 'R_1', ref: { name: null, target: null } } } }, 'data/repository/ref/name', /non-null/],
      [{ data: { repository: { id: 'R_1', ref: { name: 'y', target: { oid: 'xyz', message: 'm' } } } } }, 'data/repository/ref/target/oid', /GitObjectID/],
      [{ data: { repository: { id: 'R_1' } } }, 'data/repository', /keys/],
      [{ data: { repository: { id: 7, ref: null } } }, 'data/repository/id', /ID/],
      [{ data: { repository: { id: 'R_1', ref: null, extra: 1 } } }, 'data/repository', /keys/],
    ];
    for (const [body, field, message] of cases) {
      const [p] = validateGraphqlExchange(exchange(Q, body)).problems;
      assert.ok(p, JSON.stringify(body));
      assert.equal(p.field, field);
      assert.match(p.message, message);
    }
  });

  test('an invalid document is fine only when refused as GitHub refuses it', () => {
    const bad = 'query { repository(owner: "o", name: "r") { nope } }';
    assert.equal(validateGraphqlExchange(exchange(bad, { errors: [{ message: 'x' }] })).refused, true);
    const accepted = validateGraphqlExchange(exchange(bad, { data: { repository: { nope: 1 } } }));
    assert.equal(accepted.problems[0].rule, 'graphql-document');
    assert.match(accepted.problems[0].message, /nope/);
  });
});
