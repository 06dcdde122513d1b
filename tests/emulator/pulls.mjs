// Pull requests: their heads and states as tests script them (the issue half lives in
// issues.mjs, one numbering), and GET pulls/{n}. Comments cite GitHub's behaviour as
// docs/github-semantics.md#<anchor>.
//
// docs/github-semantics.md#pull-request-head: `head.sha` is the commit the pull request's
// branch points at now, and changes on every push to it; `state` is open or closed, and a merged
// pull request is closed with `merged: true`.

import { DOCS, SHA_RE } from './constants.mjs';
import { nodeId } from './helpers.mjs';
import { fail, reply } from './http.mjs';

const positive = (s) => (typeof s === 'string' && /^[1-9]\d{0,15}$/.test(s) ? Number(s) : null);

/** The scripting API tests get (repo.pulls). */
export function pullsHandle(repo) {
  const issues = repo.issues;
  const pull = (number) => {
    const it = issues.get(number);
    if (!it.pull) throw new Error(`#${number} of ${repo.fullName} is an issue, not a pull request`);
    return it;
  };
  const checkSha = (sha) => {
    if (!SHA_RE.test(sha ?? '')) throw new TypeError(`a head is a 40-hex commit sha, not ${sha}`);
  };
  return Object.freeze({
    /** Opens a pull request from `headRef` at `headSha`: its number. */
    open: ({ title = 'A change', headRef = 'feature', headSha, baseRef = repo.defaultBranch, token } = {}) => {
      checkSha(headSha);
      return issues.add({ title, identity: repo.emu.identities.of(token ?? null), pull: { headRef, headSha, baseRef, merged: false, mergedAt: null } }).number;
    },
    /** A push to the pull request's branch: its head moves to `headSha`. */
    push: (number, headSha) => {
      checkSha(headSha);
      const it = pull(number);
      it.pull.headSha = headSha;
      it.updatedAt = issues.now();
    },
    close: (number, { merged = false } = {}) => {
      const it = pull(number);
      issues.setState(number, 'closed');
      if (merged) {
        it.pull.merged = true;
        it.pull.mergedAt = it.closedAt;
      }
    },
    reopen: (number) => issues.setState(pull(number).number, 'open'),
    head: (number) => pull(number).pull.headSha,
  });
}

/** GET pulls/{n} under /repos/{owner}/{repo}: a reply, or undefined for any other path. */
export function pullsRoute(ctx, repo, sub) {
  const r = /^\/pulls\/([^/]+)\/?$/.exec(sub);
  if (!r) return undefined;
  if (ctx.method !== 'GET') return undefined;
  const it = repo.issues.items.get(positive(r[1]));
  if (!it?.pull) return fail(404, 'Not Found', DOCS.getPull);
  return reply(200, pullBody(repo, it));
}

function pullBody(repo, it) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const u = `${api}/repos/${full}/pulls/${it.number}`;
  const html = `${api}/${full}/pull/${it.number}`;
  const issue = `${api}/repos/${full}/issues/${it.number}`;
  const user = repo.emu.identities.user(it.identity);
  const owner = repo.ownerBody();
  const p = it.pull;
  const side = (ref, sha) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: owner, repo: repo.body() });
  const link = (href) => ({ href });
  return {
    url: u,
    id: it.id,
    node_id: nodeId('PR', `${full}#${it.number}`),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issue,
    commits_url: `${u}/commits`,
    review_comments_url: `${u}/comments`,
    review_comment_url: `${api}/repos/${full}/pulls/comments{/number}`,
    comments_url: `${issue}/comments`,
    statuses_url: `${api}/repos/${full}/statuses/${p.headSha}`,
    number: it.number,
    state: it.state,
    locked: false,
    title: it.title,
    user,
    body: it.body,
    labels: [],
    milestone: null,
    active_lock_reason: null,
    created_at: it.createdAt,
    updated_at: it.updatedAt,
    closed_at: it.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: side(p.headRef, p.headSha),
    base: side(p.baseRef, p.headSha),
    _links: {
      self: link(u),
      html: link(html),
      issue: link(issue),
      comments: link(`${issue}/comments`),
      review_comments: link(`${u}/comments`),
      review_comment: link(`${api}/repos/${full}/pulls/comments{/number}`),
      commits: link(`${u}/commits`),
      statuses: link(`${api}/repos/${full}/statuses/${p.headSha}`),
    },
    author_association: it.identity.type === 'Bot' ? 'NONE' : 'OWNER',
    auto_merge: null,
    draft: false,
    merged: p.merged,
    mergeable: null,
    rebaseable: null,
    mergeable_state: 'unknown',
    merged_by: p.merged ? owner : null,
    comments: [...repo.issues.comments.values()].filter((c) => c.number === it.number).length,
    review_comments: 0,
    maintainer_can_modify: false,
    commits: 1,
    additions: 1,
    deletions: 0,
    changed_files: 1,
  };
}
