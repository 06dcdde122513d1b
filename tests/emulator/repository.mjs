// One hosted repository: a real bare git repository (contents are commits, refs are refs,
// a branch moves by compare-and-swap as on GitHub), its workflow runs (RepoActions), how GitHub
// describes it (GET /repos/{owner}/{repo}), and the test helpers that read and write it
// straight from git. Comments cite GitHub's behaviour as docs/github-semantics.md#<anchor>.

import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { RepoActions } from './actions.mjs';
import { RepoIssues } from './issues.mjs';
import { pullsHandle } from './pulls.mjs';
import { DEFAULT_IDENTITY, SHA_RE, ZERO_SHA } from './constants.mjs';
import { GitError, TreeConflict, git, gitDate, runGit } from './git.mjs';
import { encodePath, isoSeconds, matchPattern, newId, nodeId, safeRefName, sleep, validRepoPath } from './helpers.mjs';

// The fields of a repository that workflow runs carry (minimal-repository), in GitHub's order.
const MINIMAL_REPOSITORY_KEYS = [
  'id', 'node_id', 'name', 'full_name', 'private', 'owner', 'html_url', 'description', 'fork', 'url',
  'forks_url', 'keys_url', 'collaborators_url', 'teams_url', 'hooks_url', 'issue_events_url', 'events_url',
  'assignees_url', 'branches_url', 'tags_url', 'blobs_url', 'git_tags_url', 'git_refs_url', 'trees_url',
  'statuses_url', 'languages_url', 'stargazers_url', 'contributors_url', 'subscribers_url', 'subscription_url',
  'commits_url', 'git_commits_url', 'comments_url', 'issue_comment_url', 'contents_url', 'compare_url',
  'merges_url', 'archive_url', 'downloads_url', 'issues_url', 'pulls_url', 'milestones_url',
  'notifications_url', 'labels_url', 'releases_url', 'deployments_url',
];

/** A user as GitHub describes one (simple-user). */
export function userBody(api, login, id, type = 'User') {
  // A bot's login has brackets (github-actions[bot]): escaped in its URLs, as GitHub does.
  const name = encodeURIComponent(login);
  const u = `${api}/users/${name}`;
  return {
    login,
    id,
    node_id: nodeId('U', login),
    avatar_url: `${api}/avatars/${name}`,
    gravatar_id: '',
    url: u,
    html_url: `${api}/${name}`,
    followers_url: `${u}/followers`,
    following_url: `${u}/following{/other_user}`,
    gists_url: `${u}/gists{/gist_id}`,
    starred_url: `${u}/starred{/owner}{/repo}`,
    subscriptions_url: `${u}/subscriptions`,
    organizations_url: `${u}/orgs`,
    repos_url: `${u}/repos`,
    events_url: `${u}/events{/privacy}`,
    received_events_url: `${u}/received_events`,
    type,
    user_view_type: 'public',
    site_admin: false,
  };
}

export class Repo {
  constructor(emu, { owner, name, defaultBranch, gitDir, private: priv }) {
    this.emu = emu;
    this.owner = owner;
    this.name = name;
    this.fullName = `${owner}/${name}`;
    this.defaultBranch = defaultBranch;
    this.gitDir = gitDir;
    this.private = priv;
    this.id = newId();
    this.ownerId = newId();
    this.createdAt = isoSeconds(emu.now());
    this.pushedAt = this.createdAt;
    // `${branch}\0${path}` -> { until, prev: {sha,size}|null } for staleReads().
    this.staleWindows = new Map();
    // Workflow runs and jobs, as tests script them.
    this.actions = new RepoActions(this);
    // Issues, comments and pull requests, as tests and requests write them.
    this.issues = new RepoIssues(this);
  }

  /** Makes the bare repository, with a single initial commit holding `files` (like
   *  "Initialize this repository"), unless one is there already: reusing an existing bare
   *  repository (CLI with --dir) keeps its history. */
  async init(files) {
    const { gitDir, defaultBranch } = this;
    const exists = await fs.access(path.join(gitDir, 'HEAD')).then(() => true, () => false);
    if (!exists) {
      await fs.mkdir(gitDir, { recursive: true });
      await git(gitDir, ['init', '--bare', '-q', `--initial-branch=${defaultBranch}`]);
      await git(gitDir, ['config', 'gc.auto', '0']);
      const idx = this.tmpIndex();
      try {
        let info = '';
        for (const [p, content] of Object.entries(files ?? {})) {
          if (!validRepoPath(p)) throw new Error(`bad file path: ${p}`);
          const blob = await git(gitDir, ['hash-object', '-w', '--stdin'], { input: Buffer.from(content) });
          info += `100644 ${blob}\t${p}\0`;
        }
        if (info) {
          await git(gitDir, ['update-index', '--add', '-z', '--index-info'], {
            input: info,
            env: { GIT_INDEX_FILE: idx },
          });
        }
        const tree = await git(gitDir, ['write-tree'], { env: { GIT_INDEX_FILE: idx } });
        const date = gitDate(this.emu.now());
        const commit = await git(gitDir, ['commit-tree', tree, '-F', '-'], {
          input: 'Initial commit',
          env: {
            GIT_AUTHOR_NAME: DEFAULT_IDENTITY.name,
            GIT_AUTHOR_EMAIL: DEFAULT_IDENTITY.email,
            GIT_AUTHOR_DATE: date,
            GIT_COMMITTER_NAME: DEFAULT_IDENTITY.name,
            GIT_COMMITTER_EMAIL: DEFAULT_IDENTITY.email,
            GIT_COMMITTER_DATE: date,
          },
        });
        await git(gitDir, ['update-ref', `refs/heads/${defaultBranch}`, commit, ZERO_SHA]);
      } finally {
        await fs.rm(idx, { force: true });
      }
    }
  }

  git(args, opts) {
    return git(this.gitDir, args, opts);
  }

  tmpIndex() {
    return path.join(this.emu.tmpDir, `index-${crypto.randomUUID()}`);
  }

  /** Commit sha at refs/heads/<branch>, or null. */
  async branchHead(branch) {
    if (!safeRefName(branch)) return null;
    const r = await runGit(this.gitDir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  async revParseCommit(rev) {
    const r = await runGit(this.gitDir, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /** Resolves a contents `ref` (branch, tag, refs/..., or commit sha) to
   *  { commit, branch } (branch null unless the ref named a branch), or null. */
  async resolveRef(ref) {
    if (!safeRefName(ref)) return null;
    let commit = await this.branchHead(ref);
    if (commit) return { commit, branch: ref };
    if (ref.startsWith('refs/')) {
      commit = await this.revParseCommit(ref);
      if (commit) {
        return { commit, branch: ref.startsWith('refs/heads/') ? ref.slice(11) : null };
      }
      return null;
    }
    commit = await this.revParseCommit(`refs/tags/${ref}`);
    if (commit) return { commit, branch: null };
    if (/^[0-9a-f]{7,40}$/i.test(ref)) {
      commit = await this.revParseCommit(ref.toLowerCase());
      if (commit) return { commit, branch: null };
    }
    return null;
  }

  /** Parses `git ls-tree -l -z` output into [{ mode, type, sha, size, path }]. */
  static parseLsTree(buf) {
    const entries = [];
    for (const rec of buf.toString('utf8').split('\0')) {
      if (!rec) continue;
      const tab = rec.indexOf('\t');
      const [mode, type, sha, size] = rec.slice(0, tab).split(/\s+/);
      entries.push({ mode, type, sha, size: size === '-' ? 0 : Number(size), path: rec.slice(tab + 1) });
    }
    return entries;
  }

  /** The tree entry at `p` in `commit` ({ mode, type: blob|tree|commit, sha, size }), or null. */
  async entry(commit, p) {
    const r = await runGit(this.gitDir, ['ls-tree', '-l', '-z', commit, '--', p]);
    if (r.code !== 0) return null;
    return Repo.parseLsTree(r.stdout).find((e) => e.path === p) ?? null;
  }

  /** Entries of the directory `dir` ('' = root) in `commit`. */
  async list(commit, dir) {
    const args = ['ls-tree', '-l', '-z', commit];
    if (dir) args.push('--', `${dir}/`);
    return Repo.parseLsTree((await runGit(this.gitDir, args)).stdout);
  }

  async blob(sha) {
    const r = await runGit(this.gitDir, ['cat-file', 'blob', sha]);
    if (r.code !== 0) throw new GitError(['cat-file', 'blob', sha], r.code, r.stderr);
    return r.stdout;
  }

  /** All refs: [{ ref, sha, type }]. Repositories here are tiny, so list and filter. */
  async refs() {
    const out = await this.git(['for-each-ref', '--format=%(refname) %(objectname) %(objecttype)']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref, sha, type] = line.split(' ');
        return { ref, sha, type };
      });
  }

  async objectType(sha) {
    const r = await runGit(this.gitDir, ['cat-file', '-t', sha]);
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /** Types of many objects in one git call: Map sha -> 'blob'|'tree'|'commit'|'tag'|null. */
  async objectTypes(shas) {
    const list = [...new Set(shas)].filter((s) => SHA_RE.test(s));
    const types = new Map(list.map((s) => [s, null]));
    if (!list.length) return types;
    const out = await this.git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      input: list.join('\n') + '\n',
    });
    for (const line of out.split('\n')) {
      const [sha, type] = line.split(' ');
      if (types.has(sha) && type !== 'missing') types.set(sha, type);
    }
    return types;
  }

  /** The commit `sha` as { sha, tree, parents, author, committer ({ name, email, ms }),
   *  message }, or null if it is not a commit. */
  async readCommit(sha) {
    if (!SHA_RE.test(sha)) return null;
    const r = await runGit(this.gitDir, ['cat-file', 'commit', sha]);
    if (r.code !== 0) return null;
    const text = r.stdout.toString('utf8');
    const end = text.indexOf('\n\n');
    const head = end === -1 ? text : text.slice(0, end);
    const c = { sha, tree: null, parents: [], author: null, committer: null };
    const person = (v) => {
      const m = /^(.*) <(.*)> (-?\d+) [+-]\d{4}$/.exec(v);
      return m ? { name: m[1], email: m[2], ms: Number(m[3]) * 1000 } : { name: '', email: '', ms: 0 };
    };
    for (const line of head.split('\n')) {
      const sp = line.indexOf(' ');
      const [key, value] = [line.slice(0, sp), line.slice(sp + 1)];
      if (key === 'tree') c.tree = value;
      else if (key === 'parent') c.parents.push(value);
      else if (key === 'author') c.author = person(value);
      else if (key === 'committer') c.committer = person(value);
    }
    c.message = end === -1 ? '' : text.slice(end + 2);
    return c;
  }

  /**
   * Builds a tree the way POST /git/trees does: start from `base` (a tree sha, or null for
   * an empty tree), then apply `changes` in order, each { path, value } where value is
   * { mode, type, sha } or null (delete the path). Intermediate trees of nested paths are
   * created as needed; a subtree left empty by deletions disappears, as on GitHub (an empty
   * tree stays only when an entry names it by sha).
   *
   * Only the directories on changed paths are read (ls-tree) and rewritten (mktree).
   * Returns the new tree sha, or null if the result is empty. Throws TreeConflict when a
   * path runs through a file ("a/b" where "a" is a blob).
   */
  async buildTree(base, changes) {
    const load = async (node) => {
      if (node.entries) return;
      node.entries = new Map();
      if (!node.sha) return;
      const out = (await runGit(this.gitDir, ['ls-tree', '-z', node.sha])).stdout.toString('utf8');
      for (const rec of out.split('\0')) {
        if (!rec) continue;
        const tab = rec.indexOf('\t');
        const [mode, type, sha] = rec.slice(0, tab).split(' ');
        node.entries.set(rec.slice(tab + 1), { mode, type, sha });
      }
    };
    const root = { sha: base, entries: null, dirty: false };
    for (const { path: p, value } of changes) {
      const segs = p.split('/');
      const leaf = segs.pop();
      let node = root;
      let reachable = true;
      for (const name of segs) {
        await load(node);
        let e = node.entries.get(name);
        if (!e || e.type !== 'tree') {
          if (value === null) {
            reachable = false; // deleting below a missing directory: nothing to do
            break;
          }
          if (e) throw new TreeConflict(p);
          e = { mode: '040000', type: 'tree', sha: null };
          node.entries.set(name, e);
        }
        e.node ??= { sha: e.sha, entries: null, dirty: false };
        node.dirty = true;
        node = e.node;
      }
      if (!reachable) continue;
      await load(node);
      if (value === null) node.entries.delete(leaf);
      else node.entries.set(leaf, { ...value });
      node.dirty = true;
    }
    const write = async (node) => {
      if (!node.dirty) return node.sha;
      let input = '';
      for (const [name, e] of node.entries) {
        const sha = e.node ? await write(e.node) : e.sha;
        if (sha === null) continue; // emptied subtree
        input += `${e.mode} ${e.type} ${sha}\t${name}\0`;
      }
      if (!input) return null;
      // --missing: gitlinks name commits of other repositories; every other sha was checked.
      return this.git(['mktree', '-z', '--missing'], { input });
    };
    return write(root);
  }

  /**
   * Makes one real commit on `branch` changing one path, starting from `head` (the branch
   * head the caller read at the start of its request), then moves the branch with a
   * compare-and-swap. `blob` is the new blob sha, or null to delete the path.
   *
   * There is deliberately no lock around this: two requests may both start from the same
   * head, and the second `update-ref` then fails with "is at X but expected Y", which is
   * exactly what GitHub answers (docs/github-semantics.md#many-files-on-one-branch).
   *
   * Returns { ok: true, commit, tree } or { ok: false, current } (current: the branch head
   * that won, or null if the branch vanished). Throws GitError when the tree cannot be built
   * (for example a file/directory clash).
   */
  async commitChange({ branch, head, path: p, blob, message, author, committer, hooks }) {
    const idx = this.tmpIndex();
    const idxEnv = { GIT_INDEX_FILE: idx };
    let tree;
    let commit;
    try {
      await this.git(['read-tree', head], { env: idxEnv });
      if (blob) {
        await this.git(['update-index', '--add', '--cacheinfo', '100644', blob, p], { env: idxEnv });
      } else {
        // --force-remove needs a work tree; an --index-info line with mode 0 removes the
        // path from a bare repository's temporary index.
        await this.git(['update-index', '-z', '--index-info'], {
          input: `0 ${ZERO_SHA}\t${p}\0`,
          env: idxEnv,
        });
      }
      tree = await this.git(['write-tree'], { env: idxEnv });
      commit = await this.git(['commit-tree', tree, '-p', head, '-F', '-'], {
        input: message,
        env: {
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_AUTHOR_DATE: gitDate(author.ms),
          GIT_COMMITTER_NAME: committer.name,
          GIT_COMMITTER_EMAIL: committer.email,
          GIT_COMMITTER_DATE: gitDate(committer.ms),
        },
      });
    } finally {
      await fs.rm(idx, { force: true });
      await fs.rm(`${idx}.lock`, { force: true });
    }

    // Test hook: a fault rule can hold or delay the request here, after it has read the
    // head and built its commit but before it moves the branch. That makes the
    // "is at X but expected Y" race deterministic in tests.
    if (hooks?.beforeRefUpdate) await hooks.beforeRefUpdate();
    // A request killed at the time limit whose work is dropped stops here: nothing applied.
    hooks?.checkpoint?.();

    const moved = await this.casRef(`refs/heads/${branch}`, commit, head);
    if (!moved.ok) return moved;
    this.pushedAt = isoSeconds(this.emu.now());
    return { ok: true, commit, tree };
  }

  /** `git update-ref ref new old`, retrying while another writer holds the ref's lock file
   *  (the CAS itself is decided under the lock). old = ZERO_SHA means "must not exist".
   *  Returns { ok: true } or { ok: false, current, reason }. */
  async casRef(ref, next, old) {
    for (let attempt = 0; ; attempt++) {
      const r = await runGit(this.gitDir, ['update-ref', ref, next, old]);
      if (r.code === 0) return { ok: true };
      const moved = /is at ([0-9a-f]{40}) but expected ([0-9a-f]{40})/.exec(r.stderr);
      if (moved) return { ok: false, current: moved[1], reason: 'moved' };
      if (/reference already exists/.test(r.stderr)) return { ok: false, current: null, reason: 'exists' };
      if (/unable to resolve reference|reference is missing/.test(r.stderr)) {
        return { ok: false, current: null, reason: 'missing' };
      }
      if (/exists; cannot create|cannot process .* and .* at the same time/.test(r.stderr)) {
        return { ok: false, current: null, reason: 'clash' };
      }
      if (/Unable to create .*\.lock.*File exists/s.test(r.stderr) && attempt < 200) {
        await sleep(2 + Math.random() * 8);
        continue;
      }
      throw new GitError(['update-ref', ref, next, old], r.code, r.stderr);
    }
  }

  /** Records a successful contents write for staleReads(). */
  noteWrite(branch, p, prev) {
    const cfg = this.emu.stale;
    const key = `${branch}\0${p}`;
    if (cfg && matchPattern(cfg.path, p, this.contentsUrlPath(p))) {
      this.staleWindows.set(key, { until: this.emu.now() + cfg.ms, prev });
    } else {
      this.staleWindows.delete(key);
    }
  }

  /** The previous version ({sha,size} or null = absent) if a stale window is open for this
   *  branch/path, else undefined. */
  staleVersion(branch, p) {
    if (!this.emu.stale) return undefined;
    const w = this.staleWindows.get(`${branch}\0${p}`);
    if (!w) return undefined;
    if (this.emu.now() >= w.until) {
      this.staleWindows.delete(`${branch}\0${p}`);
      return undefined;
    }
    return w.prev;
  }

  contentsUrlPath(p) {
    return `/repos/${this.owner}/${this.name}/contents/${encodePath(p)}`;
  }

  // ---- how GitHub describes it ---------------------------------------------------------

  /** The owner, as GitHub describes a user (simple-user). */
  ownerBody() {
    return userBody(this.emu.url, this.owner, this.ownerId);
  }

  // GET /repos/{o}/{r}: a full-repository object, every field GitHub's description requires,
  // in the order GitHub sends them (as recorded in @octokit/fixtures, get-repository).
  body() {
    const api = this.emu.url;
    const full = this.fullName;
    const r = `${api}/repos/${full}`;
    return {
      id: this.id,
      node_id: nodeId('R', full),
      name: this.name,
      full_name: full,
      private: this.private,
      owner: this.ownerBody(),
      html_url: `${api}/${full}`,
      description: null,
      fork: false,
      url: r,
      forks_url: `${r}/forks`,
      keys_url: `${r}/keys{/key_id}`,
      collaborators_url: `${r}/collaborators{/collaborator}`,
      teams_url: `${r}/teams`,
      hooks_url: `${r}/hooks`,
      issue_events_url: `${r}/issues/events{/number}`,
      events_url: `${r}/events`,
      assignees_url: `${r}/assignees{/user}`,
      branches_url: `${r}/branches{/branch}`,
      tags_url: `${r}/tags`,
      blobs_url: `${r}/git/blobs{/sha}`,
      git_tags_url: `${r}/git/tags{/sha}`,
      git_refs_url: `${r}/git/refs{/sha}`,
      trees_url: `${r}/git/trees{/sha}`,
      statuses_url: `${r}/statuses/{sha}`,
      languages_url: `${r}/languages`,
      stargazers_url: `${r}/stargazers`,
      contributors_url: `${r}/contributors`,
      subscribers_url: `${r}/subscribers`,
      subscription_url: `${r}/subscription`,
      commits_url: `${r}/commits{/sha}`,
      git_commits_url: `${r}/git/commits{/sha}`,
      comments_url: `${r}/comments{/number}`,
      issue_comment_url: `${r}/issues/comments{/number}`,
      contents_url: `${r}/contents/{+path}`,
      compare_url: `${r}/compare/{base}...{head}`,
      merges_url: `${r}/merges`,
      archive_url: `${r}/{archive_format}{/ref}`,
      downloads_url: `${r}/downloads`,
      issues_url: `${r}/issues{/number}`,
      pulls_url: `${r}/pulls{/number}`,
      milestones_url: `${r}/milestones{/number}`,
      notifications_url: `${r}/notifications{?since,all,participating}`,
      labels_url: `${r}/labels{/name}`,
      releases_url: `${r}/releases{/id}`,
      deployments_url: `${r}/deployments`,
      created_at: this.createdAt,
      updated_at: this.pushedAt,
      pushed_at: this.pushedAt,
      git_url: `${api.replace(/^https?:/, 'git:')}/${full}.git`,
      ssh_url: `git@${new URL(api).host}:${full}.git`,
      clone_url: `${api}/${full}.git`,
      svn_url: `${api}/${full}`,
      homepage: null,
      size: 0,
      stargazers_count: 0,
      watchers_count: 0,
      language: null,
      has_issues: true,
      has_projects: true,
      has_downloads: true,
      has_wiki: true,
      has_pages: false,
      has_discussions: false,
      forks_count: 0,
      mirror_url: null,
      archived: false,
      disabled: false,
      open_issues_count: 0,
      license: null,
      allow_forking: true,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: this.private ? 'private' : 'public',
      forks: 0,
      open_issues: 0,
      watchers: 0,
      default_branch: this.defaultBranch,
      permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
      // Shown to a token with admin rights, as this one has.
      temp_clone_token: '',
      allow_squash_merge: true,
      allow_merge_commit: true,
      allow_rebase_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: false,
      allow_update_branch: false,
      use_squash_pr_title_as_default: false,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  // The repository as workflow runs show it (minimal-repository): these fields of the full
  // object, in the order GitHub sends them.
  minimalBody() {
    const full = this.body();
    return Object.fromEntries(MINIMAL_REPOSITORY_KEYS.map((k) => [k, full[k]]));
  }

  // ---- test helpers (straight from git, no HTTP) --------------------------------------

  async readFile(branch, p) {
    const head = await this.branchHead(branch ?? this.defaultBranch);
    if (!head) return null;
    const e = await this.entry(head, p);
    if (!e || e.type !== 'blob') return null;
    return (await this.blob(e.sha)).toString('utf8');
  }

  async history(branch, p) {
    branch ??= this.defaultBranch;
    if (!(await this.branchHead(branch))) return [];
    const out = await this.git(['log', '--reverse', '--format=%H', `refs/heads/${branch}`, '--', p]);
    const result = [];
    for (const commit of out.split('\n').filter(Boolean)) {
      const r = await runGit(this.gitDir, ['show', `${commit}:${p}`]);
      result.push({ commit, content: r.code === 0 ? r.stdout.toString('utf8') : null });
    }
    return result;
  }

  /** Commits `content` (string|Buffer, or null to delete) at `p` on `branch` directly,
   *  as another writer would; retries on a branch race. Returns the commit sha. */
  async writeFile(branch, p, content, message = `update ${p}`) {
    branch ??= this.defaultBranch;
    for (;;) {
      const head = await this.branchHead(branch);
      if (!head) throw new Error(`branch ${branch} not found`);
      const prevEntry = await this.entry(head, p);
      const blob =
        content == null
          ? null
          : await this.git(['hash-object', '-w', '--stdin'], { input: Buffer.from(content) });
      const ms = this.emu.now();
      const id = { ...DEFAULT_IDENTITY, ms };
      const r = await this.commitChange({ branch, head, path: p, blob, message, author: id, committer: id });
      if (r.ok) {
        this.noteWrite(branch, p, prevEntry ? { sha: prevEntry.sha, size: prevEntry.size } : null);
        return r.commit;
      }
      if (r.reason === 'missing') throw new Error(`branch ${branch} vanished`);
    }
  }

  handle() {
    return {
      owner: this.owner,
      repo: this.name,
      defaultBranch: this.defaultBranch,
      gitDir: this.gitDir,
      readFile: (branch, p) => this.readFile(branch, p),
      history: (branch, p) => this.history(branch, p),
      head: (branch) => this.branchHead(branch ?? this.defaultBranch),
      writeFile: (branch, p, content, message) => this.writeFile(branch, p, content, message),
      actions: this.actions.handle(),
      issues: this.issues.handle(),
      pulls: (this._pulls ??= pullsHandle(this)),
    };
  }
}
