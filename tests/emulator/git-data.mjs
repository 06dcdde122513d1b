// GitHub's git data API on the hosted repository: refs (get, list matching, create, update,
// delete), trees (create) and commits (create, get), and how GitHub describes a commit (also
// used by contents writes). Comments cite GitHub's behaviour as
// docs/github-semantics.md#<anchor>.
//
// Checks and messages follow GitHub's as recorded against the live API by client test
// suites (PyGithub-based recordings, octokit and go-github issues). Where nothing was
// recorded the choice is marked "unrecorded".

import { DEFAULT_IDENTITY, DOCS, SHA_RE, ZERO_SHA } from './constants.mjs';
import { GitError, TreeConflict, gitDate, runGit } from './git.mjs';
import { encodePath, isoSeconds, nodeId, safeRefName, validRepoPath } from './helpers.mjs';
import { fail, linkHeader, notSupplied, parseJson, reply, safeDecode } from './http.mjs';
import { Repo } from './repository.mjs';

// The tree entry modes POST /git/trees accepts, and the object type each must point at.
const TREE_MODES = { '100644': 'blob', '100755': 'blob', '120000': 'blob', '040000': 'tree', '160000': 'commit' };

/** A JSON value as GitHub's (Ruby) schema errors print it: null is "nil". */
const rubyInspect = (v) => (v === null ? 'nil' : JSON.stringify(v));

/** The JSON-schema "date-time" format (RFC 3339): a zone is required. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The git data routes under /repos/{owner}/{repo} (refs, trees, commits): a reply, or
 *  undefined when `sub` is none of them. */
export function gitDataRoute(ctx, repo, sub) {
  const { method } = ctx;
  let r;
  if ((r = /^\/git\/ref\/(.+)$/.exec(sub)) && method === 'GET') {
    return getRef(repo, safeDecode(r[1]), false);
  }
  if ((r = /^\/git\/matching-refs\/(.*)$/.exec(sub)) && method === 'GET') {
    return matchingRefs(ctx, repo, safeDecode(r[1]));
  }
  if (/^\/git\/refs\/?$/.test(sub)) {
    if (method === 'POST') return createRef(ctx, repo);
    if (method === 'GET') return matchingRefs(ctx, repo, '');
  }
  if (/^\/commits\/?$/.test(sub) && method === 'GET') return listCommits(ctx, repo);
  if (/^\/git\/trees\/?$/.test(sub) && method === 'POST') return createTree(ctx, repo);
  if (/^\/git\/commits\/?$/.test(sub) && method === 'POST') return createCommit(ctx, repo);
  if ((r = /^\/git\/commits\/([^/]+)$/.exec(sub)) && method === 'GET') {
    return getCommit(repo, safeDecode(r[1]));
  }
  if ((r = /^\/git\/refs\/(.+)$/.exec(sub))) {
    const ref = safeDecode(r[1]);
    if (method === 'GET') return getRef(repo, ref, true);
    if (method === 'PATCH') return updateRef(ctx, repo, ref);
    if (method === 'DELETE') return deleteRef(ctx, repo, ref);
  }
  return undefined;
}

// POST /git/trees { tree: [{ path, mode, type, sha | content }], base_tree? }
async function createTree(ctx, repo) {
  const doc = DOCS.createTree;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  const bad = (message) => fail(422, message, doc);
  // A missing, empty or non-array `tree` all get the same answer (GitHub skips schema
  // validation on this route, for compatibility).
  if (!Array.isArray(body.tree) || body.tree.length === 0) return bad('Invalid tree info');

  const types = await repo.objectTypes(
    body.tree.map((e) => (typeof e?.sha === 'string' ? e.sha.toLowerCase() : '')),
  );
  // Later entries for the same path win, as in a hash keyed by path.
  const changes = [];
  for (const e of body.tree) {
    if (!e || typeof e !== 'object' || Array.isArray(e)) return bad('Invalid tree info');
    const p = String(e.path ?? '').replaceAll('\0', '');
    if (p.startsWith('/')) return bad('tree.path cannot start with a slash');
    // unrecorded: the wording for other malformed paths ("a//b", "../x", ".git/config").
    if (!validRepoPath(p)) return bad('tree.path contains a malformed path component');

    // Exactly one of the key `sha` (null or "" = delete) and a non-null `content`.
    const hasSha = Object.hasOwn(e, 'sha');
    const hasContent = e.content != null;
    if (hasSha === hasContent) {
      return bad('Must supply either tree.sha or tree.content. Request will be rejected if both are present.');
    }
    const sha = e.sha === null || e.sha === '' ? null : e.sha;
    // The sha must name an object of the entry's `type`; a submodule's commit lives in
    // another repository, so only its format is checked. `type` is checked nowhere else:
    // with `content` it is ignored and the mode decides.
    if (hasSha && sha !== null) {
      const key = typeof sha === 'string' ? sha.toLowerCase() : '';
      const ok = e.type === 'commit' ? SHA_RE.test(key) : types.get(key) === e.type;
      if (!ok) return bad(`tree.sha ${sha} is not a valid ${e.type ?? ''}`);
    }
    if (typeof e.mode !== 'string' || !TREE_MODES[e.mode]) return bad('Must supply a valid tree.mode');
    if (e.mode === '040000' && Object.hasOwn(e, 'content')) return bad('A subdirectory may not have content');
    if (hasContent && typeof e.content !== 'string') return bad('Invalid tree info'); // unrecorded

    let value = null;
    if (hasContent || sha !== null) {
      const want = TREE_MODES[e.mode];
      const key = hasContent ? null : sha.toLowerCase();
      // The mode must agree with the object: GitHub's git backend refuses a blob mode on a
      // tree, a tree mode on a blob, a submodule of the null sha or one given as content.
      const got = hasContent ? 'blob' : want === 'commit' ? (key === ZERO_SHA ? null : 'commit') : types.get(key);
      if (got !== want) return bad('GitRPC::BadObjectState');
      value = { mode: e.mode, type: want, sha: key, content: hasContent ? e.content : null };
    }
    changes.push({ path: p, value });
  }

  // base_tree: any value but null/false is looked up (so "" fails); a commit stands for its tree.
  let base = null;
  if (body.base_tree != null && body.base_tree !== false) {
    base = await resolveTreeish(repo, body.base_tree);
    if (!base) return bad('base_tree is not a valid tree oid');
  }

  for (const c of changes) {
    if (c.value?.content != null) {
      c.value.sha = await repo.git(['hash-object', '-w', '--stdin'], { input: Buffer.from(c.value.content, 'utf8') });
    }
    if (c.value) delete c.value.content;
  }
  let sha;
  try {
    sha = await repo.buildTree(base, changes);
  } catch (err) {
    // unrecorded: GitHub's answer to a path through a file ("a/b" where "a" is a blob).
    if (err instanceof TreeConflict) return bad('GitRPC::BadObjectState');
    throw err;
  }
  // GitHub answers 404 when the tree it built is empty (say, every file deleted).
  if (!sha) return fail(404, 'Not Found', doc);
  const tree = await treeBody(repo, sha);
  return reply(201, tree, { location: tree.url });
}

/** A tree sha from a base_tree value: a tree, or a commit / branch / tag (its tree). */
async function resolveTreeish(repo, v) {
  if (typeof v !== 'string' || !v) return null;
  const key = v.toLowerCase();
  if (SHA_RE.test(key)) {
    const type = await repo.objectType(key);
    if (type === 'tree') return key;
    if (type !== 'commit') return null;
    return repo.git(['rev-parse', `${key}^{tree}`]);
  }
  const resolved = await repo.resolveRef(v);
  return resolved ? repo.git(['rev-parse', `${resolved.commit}^{tree}`]) : null;
}

/** { sha, url, tree: top-level entries, truncated }, as GitHub lists a tree. */
async function treeBody(repo, sha) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const entries = Repo.parseLsTree((await runGit(repo.gitDir, ['ls-tree', '-l', '-z', sha])).stdout);
  return {
    sha,
    url: `${api}/repos/${full}/git/trees/${sha}`,
    tree: entries.map((e) => {
      const out = { path: e.path, mode: e.mode, type: e.type, sha: e.sha };
      if (e.type === 'blob') out.size = e.size;
      // A submodule entry has no url: its commit is in another repository.
      if (e.type !== 'commit') out.url = `${api}/repos/${full}/git/${e.type}s/${e.sha}`;
      return out;
    }),
    truncated: false,
  };
}

// POST /git/commits { message, tree, parents?, author?, committer? }
async function createCommit(ctx, repo) {
  const doc = DOCS.createCommit;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  const bad = (message) => fail(422, message, doc);

  // JSON-schema validation first: every problem in one "Invalid request." message.
  const problems = [];
  const missing = ['message', 'tree'].filter((k) => !Object.hasOwn(body, k));
  if (missing.length) {
    const list = missing.map((k) => `"${k}"`).join(', ');
    problems.push(`${list} ${missing.length === 1 ? "wasn't" : "weren't"} supplied.`);
  }
  for (const k of ['message', 'tree']) {
    if (Object.hasOwn(body, k) && typeof body[k] !== 'string') {
      problems.push(`For 'properties/${k}', ${rubyInspect(body[k])} is not a string.`);
    }
  }
  if (body.parents != null && !Array.isArray(body.parents)) {
    problems.push(`For 'properties/parents', ${rubyInspect(body.parents)} is not an array.`);
  }
  for (const who of ['author', 'committer']) {
    if (!Object.hasOwn(body, who)) continue;
    const v = body[who];
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      problems.push(`For 'properties/${who}', ${rubyInspect(v)} is not an object.`);
      continue;
    }
    const absent = ['name', 'email'].filter((k) => !Object.hasOwn(v, k));
    if (absent.length) {
      problems.push(`${absent.map((k) => `"${k}"`).join(', ')} ${absent.length === 1 ? "wasn't" : "weren't"} supplied.`);
    }
    for (const k of ['email', 'name', 'date']) {
      if (Object.hasOwn(v, k) && typeof v[k] !== 'string') {
        problems.push(`For 'properties/${k}', ${rubyInspect(v[k])} is not a string.`);
      }
    }
    if (typeof v.date === 'string' && !(RFC3339.test(v.date) && !Number.isNaN(Date.parse(v.date)))) {
      problems.push(`${v.date} is not a valid date-time.`);
    }
  }
  if (problems.length) return bad(`Invalid request.\n\n${problems.join('\n')}`);

  if (!SHA_RE.test(body.tree)) {
    return bad('The tree parameter must be exactly 40 characters and contain only [0-9a-f].');
  }
  const treeType = await repo.objectType(body.tree);
  if (!treeType) return bad('Tree SHA does not exist');
  if (treeType !== 'tree') return bad('Tree SHA is not a tree object');

  const parents = body.parents ?? [];
  if (!parents.every((p) => typeof p === 'string' && SHA_RE.test(p))) {
    return bad("Each SHA in the 'parents' parameter must be exactly 40 characters and contain only [0-9a-f].");
  }
  const types = await repo.objectTypes(parents);
  if (!parents.every((p) => types.get(p) === 'commit')) {
    return bad('Parent SHA does not exist or is not a commit object');
  }

  // Empty name/email pass the schema but not the model: 422 "Validation Failed" + errors.
  const errors = [];
  for (const who of ['author', 'committer']) {
    for (const k of ['name', 'email']) {
      if (body[who] && body[who][k] === '') errors.push({ resource: who, code: 'missing_field', field: k });
    }
  }
  if (errors.length) {
    return reply(422, { message: 'Validation Failed', errors, documentation_url: doc, status: '422' });
  }

  const now = repo.emu.now();
  // Dates before 1970 come back clamped to the epoch (observed).
  const actor = (v) => ({ name: v.name, email: v.email, ms: v.date ? Math.max(0, Date.parse(v.date)) : now });
  // The author defaults to the token's user, the committer to the author (the reverse of
  // the contents API). GitHub signs commits a bot makes without author or committer; this
  // emulator never signs.
  const author = body.author ? actor(body.author) : { ...DEFAULT_IDENTITY, ms: now };
  const committer = body.committer ? actor(body.committer) : author;

  const args = ['commit-tree', body.tree];
  for (const p of new Set(parents)) args.push('-p', p);
  args.push('-F', '-');
  const sha = await repo.git(args, {
    input: body.message,
    env: {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: gitDate(author.ms),
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      GIT_COMMITTER_DATE: gitDate(committer.ms),
    },
  });
  const out = commitBody(repo, await repo.readCommit(sha));
  return reply(201, out, { location: out.url });
}

// GET /git/commits/{sha}: 404 for anything that is not a commit sha (also a malformed one).
async function getCommit(repo, sha) {
  const c = sha === null ? null : await repo.readCommit(sha);
  if (!c) return fail(404, 'Not Found', DOCS.getCommit);
  return reply(200, commitBody(repo, c));
}

function refBody(repo, { ref, sha, type }) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const kind = type === 'tag' ? 'tags' : type === 'tree' ? 'trees' : type === 'blob' ? 'blobs' : 'commits';
  return {
    ref,
    node_id: nodeId('REF', `${full}:${ref}`),
    url: `${api}/repos/${full}/git/${encodePath(ref)}`,
    object: { sha, type, url: `${api}/repos/${full}/git/${kind}/${sha}` },
  };
}

// GET /git/ref/{ref} (exact) and GET /git/refs/{ref} (legacy).
async function getRef(repo, ref, legacy) {
  if (ref === null) return fail(404, 'Not Found', DOCS.getRef);
  const full = `refs/${ref}`;
  const refs = await repo.refs();
  const exact = refs.find((r) => r.ref === full);
  if (exact) return reply(200, refBody(repo, exact));
  if (legacy) {
    // Surprising legacy behaviour: GET /git/refs/{ref} with no exact match returns an ARRAY
    // of the refs whose name starts with it (refs/heads/lock -> refs/heads/lock-2, ...).
    // That is why GitHub added the singular /git/ref/{ref}; clients should use that one.
    const prefixed = refs.filter((r) => r.ref.startsWith(full));
    if (prefixed.length) return reply(200, prefixed.map((r) => refBody(repo, r)));
  }
  return fail(404, 'Not Found', DOCS.getRef);
}

// GET /git/matching-refs/{prefix}: every ref that starts with it, in one answer, as GitHub
// has been seen to answer (it ignores per_page; docs/github-semantics.md#git-refs). GitHub's
// description gives the answer a Link header, so a client must follow rel="next" when there
// is one: the emulator's `matchingRefsPageSize` option pages the answer (?page=N, a Link
// header with next/last as GitHub writes them) to test that.
async function matchingRefs(ctx, repo, prefix) {
  if (prefix === null) return fail(404, 'Not Found', DOCS.matchingRefs);
  const full = prefix ? `refs/${prefix}` : 'refs/';
  const refs = (await repo.refs()).filter((r) => r.ref.startsWith(full));
  const size = repo.emu.options.matchingRefsPageSize;
  if (!size) return reply(200, refs.map((r) => refBody(repo, r)));
  const page = Math.max(1, Number.parseInt(ctx.url.searchParams.get('page') ?? '1', 10) || 1);
  const last = Math.max(1, Math.ceil(refs.length / size));
  const link = linkHeader(repo.emu.url, ctx.url, page, last);
  const slice = refs.slice((page - 1) * size, page * size);
  return reply(200, slice.map((r) => refBody(repo, r)), link ? { link } : {});
}

// GET /commits?sha=&path=&per_page=&page= (the repository's commits, not git data; here beside
// the commits it describes): the commits reachable from `sha` (a branch, or the default
// branch) that changed `path`, newest first, `per_page` (default 30, at most 100) a page, with
// a Link header as GitHub writes it (docs/github-semantics.md#commit-history). An unknown
// branch is 404 "No commit found for SHA: …" (422 on GitHub for a malformed one; unrecorded).
async function listCommits(ctx, repo) {
  const doc = 'https://docs.github.com/rest/commits/commits#list-commits';
  const q = ctx.url.searchParams;
  const ref = q.get('sha') || repo.defaultBranch;
  const head = (await repo.resolveRef(ref))?.commit;
  if (!head) return fail(404, `No commit found for SHA: ${ref}`, doc);
  const p = q.get('path');
  const args = ['rev-list', head, ...(p ? ['--', p] : [])];
  const r = await runGit(repo.gitDir, args);
  const all = r.code === 0 ? r.stdout.toString('utf8').split('\n').filter(Boolean) : [];
  const size = Math.min(100, Math.max(1, Number.parseInt(q.get('per_page') ?? '30', 10) || 30));
  const page = Math.max(1, Number.parseInt(q.get('page') ?? '1', 10) || 1);
  const last = Math.max(1, Math.ceil(all.length / size));
  const link = linkHeader(repo.emu.url, ctx.url, page, last);
  const api = repo.emu.url;
  const full = repo.fullName;
  const body = [];
  for (const sha of all.slice((page - 1) * size, page * size)) {
    const c = await repo.readCommit(sha);
    const person = (x) => ({ name: x.name, email: x.email, date: isoSeconds(x.ms) });
    body.push({
      sha,
      node_id: nodeId('C', `${full}:${sha}`),
      commit: {
        author: person(c.author),
        committer: person(c.committer),
        message: c.message.replace(/\n$/, ''),
        tree: { sha: c.tree, url: `${api}/repos/${full}/git/trees/${c.tree}` },
        url: `${api}/repos/${full}/git/commits/${sha}`,
        comment_count: 0,
        verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
      },
      url: `${api}/repos/${full}/commits/${sha}`,
      html_url: `${api}/${full}/commit/${sha}`,
      comments_url: `${api}/repos/${full}/commits/${sha}/comments`,
      author: null,
      committer: null,
      parents: c.parents.map((x) => ({ sha: x, url: `${api}/repos/${full}/commits/${x}`, html_url: `${api}/${full}/commit/${x}` })),
    });
  }
  return reply(200, body, link ? { link } : {});
}

async function validNewRef(repo, ref) {
  if (!ref.startsWith('refs/') || ref.split('/').length < 3) return false;
  const r = await runGit(repo.gitDir, ['check-ref-format', ref]);
  return r.code === 0 && safeRefName(ref);
}

// POST /git/refs { ref, sha }: atomic create-if-absent (docs/github-semantics.md#git-refs).
async function createRef(ctx, repo) {
  const doc = DOCS.createRef;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  const missing = ['ref', 'sha'].filter((k) => body[k] == null || body[k] === '');
  if (missing.length) return notSupplied(missing, doc);
  if (typeof body.ref !== 'string' || !(await validNewRef(repo, body.ref))) {
    return fail(422, 'Reference name is invalid', doc);
  }
  const sha = String(body.sha).toLowerCase();
  const type = /^[0-9a-f]{40}$/.test(sha) ? await repo.objectType(sha) : null;
  if (!type) return fail(422, 'Object does not exist', doc);
  ctx.hooks.checkpoint();
  let r;
  try {
    r = await repo.casRef(body.ref, sha, ZERO_SHA);
  } catch (e) {
    if (e instanceof GitError) return fail(422, 'Reference update failed', doc);
    throw e;
  }
  if (!r.ok) {
    if (r.reason === 'exists' || r.reason === 'moved') return fail(422, 'Reference already exists', doc);
    return fail(422, 'Reference update failed', doc);
  }
  const out = refBody(repo, { ref: body.ref, sha, type });
  return reply(201, out, { location: out.url });
}

// PATCH /git/refs/{ref} { sha, force=false }: fast-forward only unless force. NOT a
// compare-and-swap on an expected old value: any descendant is accepted
// (docs/github-semantics.md#git-refs).
async function updateRef(ctx, repo, ref) {
  const doc = DOCS.updateRef;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  if (ref === null) return fail(422, 'Reference does not exist', doc);
  if (body.sha == null || body.sha === '') return notSupplied(['sha'], doc);
  const full = `refs/${ref}`;
  const sha = String(body.sha).toLowerCase();
  const type = /^[0-9a-f]{40}$/.test(sha) ? await repo.objectType(sha) : null;
  if (!type) return fail(422, 'Object does not exist', doc);
  for (;;) {
    const current = (await repo.refs()).find((r) => r.ref === full);
    if (!current) return fail(422, 'Reference does not exist', doc);
    if (!body.force && current.sha !== sha) {
      const ff = await runGit(repo.gitDir, ['merge-base', '--is-ancestor', current.sha, sha]);
      if (ff.code !== 0) return fail(422, 'Update is not a fast forward', doc);
    }
    ctx.hooks.checkpoint();
    let r;
    try {
      r = await repo.casRef(full, sha, current.sha);
    } catch (e) {
      if (e instanceof GitError) return fail(422, 'Reference update failed', doc);
      throw e;
    }
    if (r.ok) return reply(200, refBody(repo, { ref: full, sha, type }));
    if (r.reason === 'missing') return fail(422, 'Reference does not exist', doc);
    // The ref moved under us: judge again against the new value.
  }
}

// DELETE /git/refs/{ref}: unconditional (docs/github-semantics.md#git-refs).
async function deleteRef(ctx, repo, ref) {
  const doc = DOCS.deleteRef;
  if (ref === null) return fail(422, 'Reference does not exist', doc);
  const full = `refs/${ref}`;
  if (!(await repo.refs()).some((r) => r.ref === full)) return fail(422, 'Reference does not exist', doc);
  ctx.hooks.checkpoint();
  const r = await runGit(repo.gitDir, ['update-ref', '-d', full]);
  if (r.code !== 0) return fail(422, 'Reference does not exist', doc);
  return reply(204, null);
}
/** A git commit as GitHub describes it (contents writes, git/commits). `parents`, or the
 *  single `parent` of a contents write. */
export function commitBody(repo, { sha, tree, parent, parents = [parent], message, author, committer }) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const person = (p) => ({ name: p.name, email: p.email, date: isoSeconds(p.ms) });
  return {
    sha,
    node_id: nodeId('C', `${full}:${sha}`),
    url: `${api}/repos/${full}/git/commits/${sha}`,
    html_url: `${api}/${full}/commit/${sha}`,
    author: person(author),
    committer: person(committer),
    tree: { sha: tree, url: `${api}/repos/${full}/git/trees/${tree}` },
    message,
    parents: parents.map((p) => ({
      sha: p,
      url: `${api}/repos/${full}/git/commits/${p}`,
      html_url: `${api}/${full}/commit/${p}`,
    })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}
