// GitHub's contents API on the hosted repository: GET, PUT and DELETE
// /repos/{owner}/{repo}/contents/{path}. A write is one real commit moved onto the branch by
// compare-and-swap (Repo.commitChange); a read may be stale for a while after a write when
// staleReads() is on. Comments cite GitHub's behaviour as docs/github-semantics.md#<anchor>.

import path from 'node:path';
import { DEFAULT_IDENTITY, DOCS } from './constants.mjs';
import { GitError } from './git.mjs';
import { commitBody } from './git-data.mjs';
import { encodePath, sha1, validRepoPath } from './helpers.mjs';
import { fail, notSupplied, parseJson, reply, safeDecode } from './http.mjs';

/** Base64 the way GitHub returns file content (Ruby's Base64.encode64): a "\n" after every
 *  60 characters and after the last line. */
/** The largest file the contents API returns inside its JSON answer (1 MB). */
const LARGE_FILE_BYTES = 1024 * 1024;

function githubBase64(buf) {
  const b64 = buf.toString('base64');
  let out = '';
  for (let i = 0; i < b64.length; i += 60) out += b64.slice(i, i + 60) + '\n';
  return out;
}

/** GitHub decodes PUT content strictly (Ruby strict_decode64): no whitespace, no missing
 *  padding. A client that sends wrapped base64 gets 422 "content is not valid Base64". */
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The contents routes under /repos/{owner}/{repo}: a reply, or undefined when `sub` is not
 *  a contents path. */
export function contentsRoute(ctx, repo, sub) {
  const { method } = ctx;
  const r = /^\/contents(?:\/(.*))?$/.exec(sub);
  if (!r) return undefined;
  const filePath = safeDecode((r[1] ?? '').replace(/\/+$/, ''));
  if (filePath === null) return fail(404, 'Not Found', DOCS.getContent);
  if (method === 'GET') return getContents(ctx, repo, filePath);
  if (method === 'PUT') return putContents(ctx, repo, filePath);
  if (method === 'DELETE') return deleteContents(ctx, repo, filePath);
  return fail(404, 'Not Found', DOCS.root);
}

function fileBody(repo, ref, p, sha, size, type = 'file') {
  const api = repo.emu.url;
  const full = repo.fullName;
  const self = `${api}/repos/${full}/contents/${encodePath(p)}?ref=${encodeURIComponent(ref)}`;
  const gitUrl =
    type === 'dir' ? `${api}/repos/${full}/git/trees/${sha}` : `${api}/repos/${full}/git/blobs/${sha}`;
  const html = `${api}/${full}/${type === 'dir' ? 'tree' : 'blob'}/${encodePath(ref)}/${encodePath(p)}`;
  return {
    name: path.posix.basename(p),
    path: p,
    sha,
    size,
    url: self,
    html_url: html,
    git_url: gitUrl,
    download_url: type === 'file' ? `${api}/_raw/${full}/${encodePath(ref)}/${encodePath(p)}` : null,
    type,
    _links: { self, git: gitUrl, html },
  };
}

// GET /repos/{o}/{r}/contents/{path}?ref=
async function getContents(ctx, repo, p) {
  const ref = ctx.url.searchParams.get('ref') || repo.defaultBranch;
  const resolved = await repo.resolveRef(ref);
  if (!resolved) return fail(404, `No commit found for the ref ${ref}`, DOCS.getContent);

  if (p === '') return dirReply(repo, ref, resolved.commit, '');
  if (!validRepoPath(p)) return fail(404, 'Not Found', DOCS.getContent);
  let entry = await repo.entry(resolved.commit, p);

  // GitHub's caches may serve the version a recent write replaced, with its sha and etag
  // (docs/github-semantics.md#stale-reads). Reads by commit sha are never stale.
  if (resolved.branch && entry?.type !== 'tree') {
    const prev = repo.staleVersion(resolved.branch, p);
    if (prev !== undefined) {
      entry = prev && { type: 'blob', sha: prev.sha, size: prev.size };
      ctx.entry.fault ??= 'staleRead';
    }
  }
  if (!entry) return fail(404, 'Not Found', DOCS.getContent);
  if (entry.type === 'tree') return dirReply(repo, ref, resolved.commit, p);
  if (entry.type !== 'blob') return fail(404, 'Not Found', DOCS.getContent);

  const data = await repo.blob(entry.sha);
  const etag = `"${sha1(p + entry.sha)}"`;
  const accept = String(ctx.req.headers.accept ?? '');
  if (/application\/vnd\.github(?:\.v3)?\.raw/.test(accept)) {
    // The media type asked for comes back (recorded: Accept application/vnd.github.v3.raw is
    // answered "application/vnd.github.v3.raw; charset=utf-8", @octokit/fixtures get-content).
    const type = /application\/vnd\.github\.v3\.raw/.test(accept) ? 'application/vnd.github.v3.raw' : 'application/vnd.github.raw';
    const r = reply(200, data, { 'content-type': `${type}; charset=utf-8` });
    r.etag = etag;
    return r;
  }
  // Past 1 MB the JSON answer carries no content: `encoding: "none"`, an empty `content`; the
  // file is served raw only (docs/github-semantics.md#contents-size).
  const large = data.length > LARGE_FILE_BYTES;
  const body = {
    ...fileBody(repo, ref, p, entry.sha, data.length),
    content: large ? '' : githubBase64(data),
    encoding: large ? 'none' : 'base64',
  };
  // Reorder like GitHub: content/encoding before _links.
  const { _links, ...rest } = body;
  const r = reply(200, { ...rest, _links });
  r.etag = etag;
  return r;
}

async function dirReply(repo, ref, commit, dir) {
  const entries = await repo.list(commit, dir);
  const typeOf = (e) =>
    e.type === 'tree' ? 'dir' : e.type === 'commit' ? 'submodule' : e.mode === '120000' ? 'symlink' : 'file';
  return reply(
    200,
    entries.map((e) => fileBody(repo, ref, e.path, e.sha, e.size, typeOf(e))),
  );
}

/** author/committer from a contents write body; `now` (the emulator clock) dates them when
 *  the body does not. */
function identities(body, doc, now) {
  const parse = (who, key) => {
    if (who == null) return { value: null };
    if (typeof who !== 'object') return { error: fail(422, `Invalid request.\n\nFor 'properties/${key}', ${JSON.stringify(who)} is not an object.`, doc) };
    const missing = ['name', 'email'].filter((k) => typeof who[k] !== 'string' || !who[k]);
    if (missing.length) return { error: notSupplied(missing, doc) };
    let ms = now;
    if (who.date != null) {
      ms = Date.parse(who.date);
      if (Number.isNaN(ms)) return { error: fail(422, `Invalid request.\n\n"date" is not a valid date.`, doc) };
    }
    return { value: { name: who.name, email: who.email, ms } };
  };
  const c = parse(body.committer, 'committer');
  if (c.error) return c;
  const a = parse(body.author, 'author');
  if (a.error) return a;
  const committer = c.value ?? { ...DEFAULT_IDENTITY, ms: now };
  // GitHub: the author defaults to the committer.
  const author = a.value ?? { ...committer };
  return { author, committer };
}

// PUT /repos/{o}/{r}/contents/{path}
async function putContents(ctx, repo, p) {
  const doc = DOCS.putContent;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  for (const k of ['message', 'content', 'sha', 'branch']) {
    if (body[k] != null && typeof body[k] !== 'string') {
      return fail(422, `Invalid request.\n\nFor 'properties/${k}', ${JSON.stringify(body[k])} is not a string.`, doc);
    }
  }
  const missing = ['message', 'content'].filter((k) => body[k] == null);
  if (missing.length) return notSupplied(missing, doc);
  if (!STRICT_BASE64.test(body.content)) return fail(422, 'content is not valid Base64', doc);
  if (!validRepoPath(p)) return fail(422, `Invalid request.\n\n"path" contains a malformed path component.`, doc);
  const ids = identities(body, doc, repo.emu.now());
  if (ids.error) return ids.error;

  const branch = body.branch || repo.defaultBranch;
  // Everything below is judged against the head read now, at the start of the request.
  const head = await repo.branchHead(branch);
  if (!head) return fail(404, `Branch ${branch} not found`, doc);

  const existing = await repo.entry(head, p);
  if (existing && existing.type !== 'blob') {
    return fail(422, `Invalid request.\n\n"path" is a directory.`, doc);
  }
  if (existing) {
    if (!body.sha) return notSupplied(['sha'], doc);
    if (body.sha !== existing.sha) return fail(409, `${p} does not match ${body.sha}`, doc);
  }
  // A MISSING file is created whatever `sha` says: GitHub ignores it
  // (docs/github-semantics.md#writes-with-a-sha). So a deleted state file loses the CAS.

  const data = Buffer.from(body.content, 'base64');
  const blob = await repo.git(['hash-object', '-w', '--stdin'], { input: data });
  const change = await applyChange(ctx, repo, { branch, head, path: p, blob, message: body.message, ...ids });
  if (change.error) return change.error;
  repo.noteWrite(branch, p, existing ? { sha: existing.sha, size: existing.size } : null);
  return reply(existing ? 200 : 201, {
    content: fileBody(repo, branch, p, blob, data.length),
    commit: commitBody(repo, { sha: change.commit, tree: change.tree, parent: head, message: body.message, ...ids }),
  });
}

// DELETE /repos/{o}/{r}/contents/{path}  (message and sha required)
async function deleteContents(ctx, repo, p) {
  const doc = DOCS.deleteContent;
  const { body, error } = parseJson(ctx, doc);
  if (error) return error;
  const missing = ['message', 'sha'].filter((k) => body[k] == null || body[k] === '');
  if (missing.length) return notSupplied(missing, doc);
  const ids = identities(body, doc, repo.emu.now());
  if (ids.error) return ids.error;
  const branch = body.branch || repo.defaultBranch;
  const head = await repo.branchHead(branch);
  if (!head) return fail(404, `Branch ${branch} not found`, doc);
  const existing = validRepoPath(p) ? await repo.entry(head, p) : null;
  if (!existing || existing.type !== 'blob') return fail(404, 'Not Found', doc);
  if (body.sha !== existing.sha) return fail(409, `${p} does not match ${body.sha}`, doc);
  const change = await applyChange(ctx, repo, { branch, head, path: p, blob: null, message: body.message, ...ids });
  if (change.error) return change.error;
  repo.noteWrite(branch, p, { sha: existing.sha, size: existing.size });
  return reply(200, {
    content: null,
    commit: commitBody(repo, { sha: change.commit, tree: change.tree, parent: head, message: body.message, ...ids }),
  });
}

async function applyChange(ctx, repo, change) {
  const doc = change.blob ? DOCS.putContent : DOCS.deleteContent;
  let r;
  try {
    r = await repo.commitChange({ ...change, hooks: ctx.hooks });
  } catch (e) {
    if (e instanceof GitError) {
      // e.g. writing "a/b" where "a" is a file.
      return { error: fail(422, `Invalid request.\n\n"path" conflicts with an existing path.`, doc) };
    }
    throw e;
  }
  if (r.ok) return r;
  if (r.reason === 'missing') return { error: fail(404, `Branch ${change.branch} not found`, doc) };
  // Another commit landed on the branch since this request read the head: GitHub's answer,
  // even when the other commit touched a different file
  // (docs/github-semantics.md#many-files-on-one-branch).
  return { error: fail(409, `is at ${r.current} but expected ${change.head}`, doc) };
}
