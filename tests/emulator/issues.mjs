// Issues and their comments (one repository's, RepoIssues), and the REST routes over them:
// GET/POST issues, GET/PATCH issues/{n}, GET/POST issues/{n}/comments, PATCH
// issues/comments/{id}. Pull requests share the issues' numbers (pulls.mjs keeps their heads).
// Comments cite GitHub's behaviour as docs/github-semantics.md#<anchor>.
//
// docs/github-semantics.md#issues-and-comments: an issue or comment is authored by the identity
// of the token that wrote it (`user.login`, `user.type`; an App's writes also name it in
// `performed_via_github_app`); `updated_at` starts equal to `created_at` and moves when the
// body is edited; lists are in creation order, 30 a page by default, 100 at most, with a Link
// header; the issues list holds pull requests too, each with a `pull_request` key.

import { DOCS } from './constants.mjs';
import { isoSeconds, newId, nodeId } from './helpers.mjs';
import { fail, linkHeader, parseJson, reply } from './http.mjs';

const positive = (s) => (typeof s === 'string' && /^[1-9]\d{0,15}$/.test(s) ? Number(s) : null);

const NO_REACTIONS = (url) => ({ url, total_count: 0, '+1': 0, '-1': 0, laugh: 0, confused: 0, heart: 0, hooray: 0, eyes: 0, rocket: 0 });

/** One page of `items` as GitHub pages a list (per_page 30 by default, 100 at most). */
export function page(ctx, emu, items) {
  const q = ctx.url.searchParams;
  const perPage = Math.min(100, positive(q.get('per_page')) ?? 30);
  const n = positive(q.get('page')) ?? 1;
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = linkHeader(emu.url, ctx.url, n, last);
  return { items: items.slice((n - 1) * perPage, n * perPage), headers: link ? { link } : {} };
}

export class RepoIssues {
  constructor(repo) {
    this.repo = repo;
    this.items = new Map(); // number -> issue or pull request (one numbering)
    this.comments = new Map(); // comment id -> comment
    this.lastNumber = 0;
  }

  get emu() {
    return this.repo.emu;
  }

  now() {
    return isoSeconds(this.emu.now());
  }

  /** A new issue (or the issue half of a pull request), authored by `identity`. */
  add({ title, body = null, identity, pull = null }) {
    if (typeof title !== 'string' || !title) throw new TypeError('an issue needs a title');
    const at = this.now();
    const issue = { number: ++this.lastNumber, id: newId(), title, body, identity, state: 'open', stateReason: null, createdAt: at, updatedAt: at, closedAt: null, pull };
    this.items.set(issue.number, issue);
    return issue;
  }

  get(number) {
    const it = this.items.get(number);
    if (!it) throw new Error(`no issue or pull request #${number} in ${this.repo.fullName}`);
    return it;
  }

  comment(number, body, identity) {
    const issue = this.get(number);
    if (typeof body !== 'string' || !body) throw new TypeError('a comment needs a body');
    const at = this.now();
    const c = { id: newId(), number: issue.number, body, identity, createdAt: at, updatedAt: at };
    this.comments.set(c.id, c);
    return c;
  }

  /** An edit moves `updated_at` (GitHub's clock has whole seconds: a test that edits within
   *  the second of the comment's creation passes `at` later than it). */
  edit(commentId, body, at = null) {
    const c = this.comments.get(commentId);
    if (!c) throw new Error(`no comment ${commentId} in ${this.repo.fullName}`);
    c.body = body;
    c.updatedAt = at ?? this.now();
    if (c.updatedAt === c.createdAt) c.updatedAt = isoSeconds(Date.parse(c.createdAt) + 1000);
  }

  setState(number, state, at = this.now()) {
    const it = this.get(number);
    const was = it.state;
    it.state = state;
    it.closedAt = state === 'closed' ? at : null;
    it.stateReason = state === 'closed' ? 'completed' : was === 'closed' ? 'reopened' : it.stateReason;
    it.updatedAt = at;
  }

  // ---- bodies ----

  issueBody(it) {
    const api = this.emu.url;
    const full = this.repo.fullName;
    const u = `${api}/repos/${full}/issues/${it.number}`;
    const ids = this.emu.identities;
    const comments = [...this.comments.values()].filter((c) => c.number === it.number).length;
    const body = {
      id: it.id,
      node_id: nodeId(it.pull ? 'PR' : 'I', `${full}#${it.number}`),
      url: u,
      repository_url: `${api}/repos/${full}`,
      labels_url: `${u}/labels{/name}`,
      comments_url: `${u}/comments`,
      events_url: `${u}/events`,
      html_url: `${api}/${full}/${it.pull ? 'pull' : 'issues'}/${it.number}`,
      number: it.number,
      state: it.state,
      title: it.title,
      body: it.body,
      user: ids.user(it.identity),
      labels: [],
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments,
      closed_at: it.closedAt,
      created_at: it.createdAt,
      updated_at: it.updatedAt,
      author_association: it.identity.type === 'Bot' ? 'NONE' : 'OWNER',
      reactions: NO_REACTIONS(`${u}/reactions`),
      timeline_url: `${u}/timeline`,
      performed_via_github_app: ids.app(it.identity),
    };
    // Not required by GitHub's description; null is outside its enum (OpenAPI 3.0's nullable
    // does not add null to an enum), so it is sent only when it has a value.
    if (it.stateReason) body.state_reason = it.stateReason;
    if (it.pull) {
      body.pull_request = {
        url: `${api}/repos/${full}/pulls/${it.number}`,
        html_url: `${api}/${full}/pull/${it.number}`,
        diff_url: `${api}/${full}/pull/${it.number}.diff`,
        patch_url: `${api}/${full}/pull/${it.number}.patch`,
        merged_at: it.pull.mergedAt,
      };
    }
    return body;
  }

  commentBody(c) {
    const api = this.emu.url;
    const full = this.repo.fullName;
    const u = `${api}/repos/${full}/issues/comments/${c.id}`;
    const ids = this.emu.identities;
    return {
      id: c.id,
      node_id: nodeId('IC', `${full}:${c.id}`),
      url: u,
      html_url: `${api}/${full}/issues/${c.number}#issuecomment-${c.id}`,
      body: c.body,
      user: ids.user(c.identity),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      issue_url: `${api}/repos/${full}/issues/${c.number}`,
      author_association: c.identity.type === 'Bot' ? 'NONE' : 'OWNER',
      reactions: NO_REACTIONS(`${u}/reactions`),
      performed_via_github_app: ids.app(c.identity),
    };
  }

  /** The scripting API tests get (repo.issues): see the header comment of emulator.mjs. */
  handle() {
    const as = (token) => this.emu.identities.of(token ?? null);
    return (this._handle ??= Object.freeze({
      create: ({ title, body, token } = {}) => this.add({ title, body, identity: as(token) }).number,
      comment: (number, body, { token } = {}) => this.comment(number, body, as(token)).id,
      /** A comment appears under an identity no token of the emulator has (login, type, app). */
      commentAs: (number, body, identity) => this.comment(number, body, { app: null, type: 'User', ...identity }).id,
      edit: (commentId, body) => this.edit(commentId, body),
      setState: (number, state) => this.setState(number, state),
      get: (number) => this.issueBody(this.get(number)),
      list: () => [...this.items.values()].filter((i) => !i.pull).map((i) => this.issueBody(i)),
      comments: (number) => [...this.comments.values()].filter((c) => c.number === number).map((c) => this.commentBody(c)),
    }));
  }
}

// ---- the REST routes ----------------------------------------------------------------

/** The issues routes under /repos/{owner}/{repo}: a reply (or a promise of one), or undefined
 *  when `sub` is none of them. */
export function issuesRoute(ctx, repo, sub) {
  const { method } = ctx;
  const issues = repo.issues;
  let r;
  if (/^\/issues\/?$/.test(sub)) {
    if (method === 'GET') return listIssues(ctx, issues);
    if (method === 'POST') return createIssue(ctx, issues);
    return undefined;
  }
  if ((r = /^\/issues\/comments\/([^/]+)\/?$/.exec(sub))) {
    const c = issues.comments.get(positive(r[1]));
    if (method === 'GET') return c ? reply(200, issues.commentBody(c)) : fail(404, 'Not Found', DOCS.updateComment);
    if (method === 'PATCH') return updateComment(ctx, issues, c);
    return undefined;
  }
  if ((r = /^\/issues\/([^/]+)\/comments\/?$/.exec(sub))) {
    const it = issues.items.get(positive(r[1]));
    if (!it) return fail(404, 'Not Found', method === 'POST' ? DOCS.createComment : DOCS.listComments);
    if (method === 'GET') return listComments(ctx, issues, it);
    if (method === 'POST') return createComment(ctx, issues, it);
    return undefined;
  }
  if ((r = /^\/issues\/([^/]+)\/?$/.exec(sub))) {
    const it = issues.items.get(positive(r[1]));
    if (!it) return fail(404, 'Not Found', method === 'PATCH' ? DOCS.updateIssue : DOCS.getIssue);
    if (method === 'GET') return reply(200, issues.issueBody(it));
    if (method === 'PATCH') return updateIssue(ctx, issues, it);
    return undefined;
  }
  return undefined;
}

// GET issues?state=open|closed|all&creator=&per_page=&page=: newest first (GitHub's default
// sort is `created`, direction `desc`), pull requests included.
function listIssues(ctx, issues) {
  const q = ctx.url.searchParams;
  const state = q.get('state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) return fail(422, 'Validation Failed', DOCS.listIssues);
  const creator = q.get('creator');
  const direction = q.get('direction') ?? 'desc';
  let all = [...issues.items.values()].filter((i) => state === 'all' || i.state === state);
  if (creator) all = all.filter((i) => i.identity.login.toLowerCase() === creator.toLowerCase());
  all.sort((a, b) => (direction === 'asc' ? a.number - b.number : b.number - a.number));
  const { items, headers } = page(ctx, issues.emu, all);
  return reply(200, items.map((i) => issues.issueBody(i)), headers);
}

function createIssue(ctx, issues) {
  const { body, error } = parseJson(ctx, DOCS.createIssue);
  if (error) return error;
  if (typeof body.title !== 'string' || !body.title) return fail(422, 'Validation Failed', DOCS.createIssue);
  if (body.body != null && typeof body.body !== 'string') return fail(422, 'Validation Failed', DOCS.createIssue);
  const it = issues.add({ title: body.title, body: body.body ?? null, identity: issues.emu.identities.of(ctx.token) });
  return reply(201, issues.issueBody(it), { location: `${issues.emu.url}/repos/${issues.repo.fullName}/issues/${it.number}` });
}

// PATCH issues/{n}: title, body, state (open|closed). Editing the body or the state moves
// updated_at.
function updateIssue(ctx, issues, it) {
  const { body, error } = parseJson(ctx, DOCS.updateIssue);
  if (error) return error;
  if (body.state !== undefined && !['open', 'closed'].includes(body.state)) return fail(422, 'Validation Failed', DOCS.updateIssue);
  if (body.body !== undefined && body.body !== null && typeof body.body !== 'string') return fail(422, 'Validation Failed', DOCS.updateIssue);
  if (body.title !== undefined && (typeof body.title !== 'string' || !body.title)) return fail(422, 'Validation Failed', DOCS.updateIssue);
  const at = issues.now();
  if (body.title !== undefined) it.title = body.title;
  if (body.body !== undefined) it.body = body.body;
  if (body.state !== undefined && body.state !== it.state) issues.setState(it.number, body.state, at);
  it.updatedAt = at;
  return reply(200, issues.issueBody(it));
}

// GET issues/{n}/comments?per_page=&page=&since=: oldest first.
function listComments(ctx, issues, it) {
  const since = ctx.url.searchParams.get('since');
  let all = [...issues.comments.values()].filter((c) => c.number === it.number);
  if (since) all = all.filter((c) => c.updatedAt >= since);
  const { items, headers } = page(ctx, issues.emu, all);
  return reply(200, items.map((c) => issues.commentBody(c)), headers);
}

function createComment(ctx, issues, it) {
  const { body, error } = parseJson(ctx, DOCS.createComment);
  if (error) return error;
  if (typeof body.body !== 'string' || !body.body) return fail(422, 'Validation Failed', DOCS.createComment);
  const c = issues.comment(it.number, body.body, issues.emu.identities.of(ctx.token));
  return reply(201, issues.commentBody(c), { location: `${issues.emu.url}/repos/${issues.repo.fullName}/issues/comments/${c.id}` });
}

function updateComment(ctx, issues, c) {
  if (!c) return fail(404, 'Not Found', DOCS.updateComment);
  const { body, error } = parseJson(ctx, DOCS.updateComment);
  if (error) return error;
  if (typeof body.body !== 'string' || !body.body) return fail(422, 'Validation Failed', DOCS.updateComment);
  issues.edit(c.id, body.body);
  return reply(200, issues.commentBody(c));
}
