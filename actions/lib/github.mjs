// Transport: performs one request command of the core against GitHub's REST API and
// normalizes the answer into a reply. No retries, no throttling, no interpretation beyond
// "success shape or not": what an answer means is the core's decision.
import { Octokit } from '@octokit/core';

// Errors that prove the request never left this machine.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

const encodePath = (path) => path.split('/').map(encodeURIComponent).join('/');

function header(headers, name) {
  const value = headers?.[name];
  return value === undefined || value === null ? null : String(value);
}

function intHeader(headers, name) {
  const value = header(headers, name);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

/** The rate-limit headers the core reads, of a REST failure or a GraphQL 200. */
function limitHeaders(headers) {
  return {
    retryAfter: header(headers, 'retry-after'),
    ratelimitRemaining: intHeader(headers, 'x-ratelimit-remaining'),
    ratelimitReset: intHeader(headers, 'x-ratelimit-reset'),
  };
}

/** A "Validation Failed" body's `errors[]` (GitHub: each with the `field` it is about, a `code`
 *  such as `already_exists` or `missing_field`, and sometimes a `message`), appended to its
 *  message so the core can read them: ` (ref already_exists: Reference already exists)`,
 *  ` (sha missing_field)`. Empty when there are none. */
function validationDetail(errors) {
  if (!Array.isArray(errors)) return '';
  const text = (x) => typeof x === 'string' && x;
  const parts = errors
    .map((e) => (typeof e === 'string' ? e : [[e?.field, e?.code].filter(text).join(' '), e?.message].filter(text).join(': ')))
    .filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

/** Turns a thrown octokit error into a reply. */
export function replyFromError(error) {
  const response = error?.response;
  if (response && typeof response.status === 'number') {
    // GitHub dates a 304 as any answer: GitHub's clock, kept current for a waiter that only polls.
    if (response.status === 304) return { kind: 'notModified', date: header(response.headers, 'date') };
    const data = response.data;
    const message = typeof data === 'object' && data && typeof data.message === 'string' ? data.message + validationDetail(data.errors) : String(error.message ?? '');
    return {
      kind: 'http',
      status: response.status,
      message,
      ...limitHeaders(response.headers),
      date: header(response.headers, 'date'),
    };
  }
  // No HTTP answer. Find the system error code, which fetch hides in `cause`.
  let cause = error;
  let code = null;
  for (let i = 0; cause && i < 5; i++) {
    if (typeof cause.code === 'string') { code = cause.code; break; }
    cause = cause.cause;
  }
  // A request aborted at its time limit: octokit wraps the TimeoutError (or AbortError).
  let aborted = false;
  for (let c = error, i = 0; c && i < 5; c = c.cause, i++) {
    if (c.name === 'AbortError' || c.name === 'TimeoutError') aborted = true;
  }
  const message = aborted ? 'request timed out and was aborted' : `${code ?? ''} ${error?.message ?? error}`.trim();
  return { kind: 'transport', sent: aborted || !NOT_SENT.has(code), message };
}

/** A command the driver cannot send as it stands: the core's bug, not GitHub's answer. It is
 *  thrown out of perform(), like an unknown command, never turned into a reply. */
class BadCommand extends Error {}

/** `/repos/{owner}/{name}` for a command's own `repository`. */
function repoPath(repository, kind) {
  const parts = typeof repository === 'string' ? repository.split('/') : [];
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new BadCommand(`leasehold driver: ${kind} needs repository "owner/name", not ${JSON.stringify(repository)}`);
  return `/repos/${encodeURIComponent(parts[0])}/${encodeURIComponent(parts[1])}`;
}

/** A run, attempt or job id of a command. */
function idOf(value, name, kind) {
  if (!Number.isSafeInteger(value) || value <= 0) throw new BadCommand(`leasehold driver: ${kind} needs a positive integer ${name}, not ${JSON.stringify(value)}`);
  return value;
}

// Fields of a 200 answer. A body without them is an answer that never fully arrived: the
// TypeError becomes `transport { sent: true }` (see perform).
function int(data, key) {
  if (!Number.isSafeInteger(data?.[key])) throw new TypeError(`no integer ${key} in the body`);
  return data[key];
}
function str(data, key) {
  if (typeof data?.[key] !== 'string') throw new TypeError(`no string ${key} in the body`);
  return data[key];
}
/** A field of an item's `user`, which GitHub's description lets be null (no author): '' then. */
function userField(user, key) {
  return user === null ? '' : str(user, key);
}

function strOrNull(data, key) {
  if (data?.[key] !== null && typeof data?.[key] !== 'string') throw new TypeError(`no ${key} (a string or null) in the body`);
  return data[key];
}

/** A full ref name of a command (`refs/…`) as the git data routes take it: without `refs/`. */
function refPath(ref, kind) {
  if (typeof ref !== 'string' || !ref.startsWith('refs/') || ref.length <= 5) throw new BadCommand(`leasehold driver: ${kind} needs a full ref name "refs/…", not ${JSON.stringify(ref)}`);
  return encodePath(ref.slice(5));
}

/** The target of a Link header's rel="next" (RFC 8288), as it came; null when there is none. */
export function linkNext(link) {
  if (typeof link !== 'string') return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(m[2])) return m[1];
  }
  return null;
}

/** GITHUB_API_URL (github.com, GitHub Enterprise Server, or an emulator), without a final slash. */
export const apiBaseUrl = (env = process.env) => (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');

/** The GraphQL endpoint beside a REST base URL: GitHub Enterprise Server serves REST at
 *  `https://HOST/api/v3` and GraphQL at `https://HOST/api/graphql`; github.com (and an emulator)
 *  at `{base}/graphql`. Derived from the REST URL, so the two never point at different hosts. */
export const graphqlUrlFor = (baseUrl) => `${baseUrl.replace(/\/+$/, '').replace(/\/api\/v3$/, '/api')}/graphql`;

/** What every REST request says of itself: GitHub's media type and the API version it is written to. */
const REST_HEADERS = Object.freeze({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });

/** What every GraphQL request says of itself: the media type of the schema preview GitHub lists
 *  `updateRefs` under ("Update refs preview", docs/github-semantics.md#graphql-updaterefs), so the
 *  claims' mutation is there wherever the preview is still required (an answer's format is the
 *  same either way). */
const GRAPHQL_HEADERS = Object.freeze({ accept: 'application/vnd.github.update-refs-preview+json' });

/**
 * createTransport({ baseUrl, token, repository }) → perform(command) → Promise<reply>.
 * `baseUrl` is GITHUB_API_URL (github.com, GitHub Enterprise Server, or an emulator);
 * `repository` (owner/name) holds the lock's state. The Actions reads (getRunAttempt, getJob,
 * listJobs) name their own `repository` instead.
 */
export function createTransport({ baseUrl, token, repository, userAgent = 'leasehold' }) {
  const graphqlUrl = graphqlUrlFor(baseUrl);
  const octokit = new Octokit({ auth: token, baseUrl, userAgent });
  const base = repoPath(repository, 'the transport');

  async function send(route, params, timeoutMs, request = {}) {
    // The REST API version leasehold is written to, and GitHub's media type, as GitHub's "API
    // versions" asks of every REST request (a request's own `accept`, the raw read's, wins). The
    // GraphQL endpoint has no versions.
    const rest = route.startsWith(`POST ${graphqlUrl}`) ? GRAPHQL_HEADERS : REST_HEADERS;
    return octokit.request(route, { ...params, headers: { ...rest, ...params.headers }, request: { ...request, signal: AbortSignal.timeout(timeoutMs) } });
  }

  const handlers = {
    async readFile(c) {
      const headers = c.ifNoneMatch ? { 'if-none-match': c.ifNoneMatch } : {};
      const params = { headers };
      if (c.ref) params.ref = c.ref;
      // One time limit for the read, the raw re-read below included: the core gave this command
      // `timeoutMs`, not twice that.
      const deadline = Date.now() + c.timeoutMs;
      const { data, headers: h } = await send(`GET ${base}/contents/${encodePath(c.path)}`, params, c.timeoutMs);
      if (typeof data !== 'object' || data === null) throw new TypeError('empty or unreadable body');
      // A file past 1 MB comes without its content (encoding "none"; GitHub serves it raw only,
      // docs/github-semantics.md): ask for it raw, so the core sees what is there and can say
      // what is wrong with it.
      if (!Array.isArray(data) && data.type === 'file' && data.encoding === 'none') {
        // (Should the file change between the two reads, the content is newer than the sha: a
        // write planned on it carries the older sha and is refused, 409.)
        // The raw media type as GitHub's reference names it; the body taken as it came, never
        // parsed (a JSON state file served raw is still the file's bytes).
        const raw = await send(`GET ${base}/contents/${encodePath(c.path)}`, { ...params, headers: { accept: 'application/vnd.github.raw+json' } }, Math.max(1, deadline - Date.now()), { parseSuccessResponseBody: false });
        const text = raw.data ? await new Response(raw.data).text() : '';
        return { kind: 'file', sha: data.sha, content: text, etag: h.etag ?? null, date: h.date ?? null };
      }
      // A directory (GitHub lists it), a symlink, a submodule, or a file in another encoding:
      // say what is there; what that means is the core's to decide.
      if (Array.isArray(data) || data.type !== 'file' || data.encoding !== 'base64') {
        const found = Array.isArray(data) ? 'dir' : data.type === 'file' ? `file in encoding ${data.encoding}` : String(data.type);
        return { kind: 'notAFile', found, date: h.date ?? null };
      }
      return { kind: 'file', sha: data.sha, content: Buffer.from(data.content, 'base64').toString('utf8'), etag: h.etag ?? null, date: h.date ?? null };
    },
    async writeFile(c) {
      const body = { message: c.message, content: Buffer.from(c.content, 'utf8').toString('base64'), branch: c.branch };
      if (c.sha) body.sha = c.sha;
      const { data, headers: h } = await send(`PUT ${base}/contents/${encodePath(c.path)}`, body, c.timeoutMs);
      if (typeof data?.content?.sha !== 'string') throw new TypeError('empty or unreadable body');
      return { kind: 'written', sha: data.content.sha, date: h.date ?? null };
    },
    async createTree(c) {
      const tree = c.files.map((f) => ({ path: f.path, mode: '100644', type: 'blob', content: f.content }));
      const { data } = await send(`POST ${base}/git/trees`, { tree }, c.timeoutMs);
      return { kind: 'created', sha: str(data, 'sha') };
    },
    async createCommit(c) {
      // No parents starts an orphan history (the lock state); a claim's new version names the
      // version it replaces.
      const { data } = await send(`POST ${base}/git/commits`, { message: c.message, tree: c.tree, parents: c.parents ?? [] }, c.timeoutMs);
      return { kind: 'created', sha: str(data, 'sha') };
    },
    async createBranch(c) {
      const { data } = await send(`POST ${base}/git/refs`, { ref: `refs/heads/${c.branch}`, sha: c.sha }, c.timeoutMs);
      return { kind: 'created', sha: str(data?.object, 'sha') };
    },
    async createRef(c) {
      refPath(c.ref, c.kind);
      const { data } = await send(`POST ${base}/git/refs`, { ref: c.ref, sha: c.sha }, c.timeoutMs);
      return { kind: 'created', sha: str(data?.object, 'sha') };
    },
    async getRef(c) {
      const { data, headers: h } = await send(`GET ${base}/git/ref/${refPath(c.ref, c.kind)}`, {}, c.timeoutMs);
      return { kind: 'gitRef', ref: str(data, 'ref'), sha: str(data?.object, 'sha'), date: h.date ?? null };
    },
    // Page 1 is asked without `page` (GitHub's description documents no query parameter for
    // this route); the next page is the one the answer's Link header names.
    async listMatchingRefs(c) {
      const params = c.page > 1 ? { page: idOf(c.page, 'page', c.kind) } : {};
      const { data, headers: h } = await send(`GET ${base}/git/matching-refs/${refPath(c.prefix, c.kind)}`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError('no array of refs in the body');
      return {
        kind: 'refs',
        refs: data.map((r) => ({ ref: str(r, 'ref'), sha: str(r?.object, 'sha') })),
        next: linkNext(h.link),
        date: h.date ?? null,
      };
    },
    // The commits of a branch that changed one file (repair reads a state's history), 100 a
    // page; the next page is the one the answer's Link header names.
    async listCommits(c) {
      const params = { sha: c.branch, path: c.path, per_page: 100, page: idOf(c.page, 'page', c.kind) };
      const { data, headers: h } = await send(`GET ${base}/commits`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError('no array of commits in the body');
      return { kind: 'commits', shas: data.map((x) => str(x, 'sha')), next: linkNext(h.link), date: h.date ?? null };
    },
    // GraphQL (claims): the document and variables exactly as the core wrote them. A 200 is
    // `graphql` with GitHub's data and errors as they came (a 200 with errors[] is classified
    // by the core, not here); any other status is `http`, as for REST.
    async graphql(c) {
      const { data, headers: h } = await send(`POST ${graphqlUrl}`, { query: c.document, variables: c.variables ?? {} }, c.timeoutMs);
      if (typeof data !== 'object' || data === null) throw new TypeError('empty or unreadable body');
      return {
        kind: 'graphql',
        // No `data` member at all: an error raised before the document ran (GraphQL's rule).
        dataAbsent: !Object.hasOwn(data, 'data'),
        data: data.data ?? null,
        errors: Array.isArray(data.errors) ? data.errors.map((e) => ({ type: typeof e?.type === 'string' ? e.type : null, message: String(e?.message ?? '') })) : [],
        // GitHub answers a GraphQL rate limit with 200: the core waits by these, as for REST.
        ...limitHeaders(h),
        date: h.date ?? null,
      };
    },
    // The Actions reads name their own repository: the consumer's run lives in another
    // repository than the lock's state.
    async getRunAttempt(c) {
      const run = `${repoPath(c.repository, c.kind)}/actions/runs/${idOf(c.runId, 'runId', c.kind)}/attempts/${idOf(c.attempt, 'attempt', c.kind)}`;
      const { data, headers: h } = await send(`GET ${run}`, { exclude_pull_requests: true }, c.timeoutMs);
      return {
        kind: 'run',
        runId: int(data, 'id'),
        // Neither is required by GitHub's description of a run (the route names the attempt).
        runAttempt: Number.isInteger(data.run_attempt) ? data.run_attempt : null,
        status: strOrNull(data, 'status'),
        conclusion: strOrNull(data, 'conclusion'),
        date: h.date ?? null,
      };
    },
    async getJob(c) {
      const job = `${repoPath(c.repository, c.kind)}/actions/jobs/${idOf(c.jobId, 'jobId', c.kind)}`;
      const { data, headers: h } = await send(`GET ${job}`, {}, c.timeoutMs);
      return {
        kind: 'job',
        id: int(data, 'id'),
        runId: int(data, 'run_id'),
        // Not required by GitHub's description of a job.
        runAttempt: Number.isInteger(data.run_attempt) ? data.run_attempt : null,
        name: str(data, 'name'),
        status: str(data, 'status'),
        conclusion: strOrNull(data, 'conclusion'),
        runnerName: strOrNull(data, 'runner_name'),
        completedAt: strOrNull(data, 'completed_at'),
        date: h.date ?? null,
      };
    },
    async listJobs(c) {
      const jobs = `${repoPath(c.repository, c.kind)}/actions/runs/${idOf(c.runId, 'runId', c.kind)}/attempts/${idOf(c.attempt, 'attempt', c.kind)}/jobs`;
      // The first page only, at GitHub's largest page size.
      const { data, headers: h } = await send(`GET ${jobs}`, { per_page: 100 }, c.timeoutMs);
      if (!Array.isArray(data?.jobs)) throw new TypeError('no jobs array in the body');
      return {
        kind: 'jobs',
        totalCount: int(data, 'total_count'),
        jobs: data.jobs.map((j) => ({
          id: int(j, 'id'),
          name: str(j, 'name'),
          status: str(j, 'status'),
          conclusion: strOrNull(j, 'conclusion'),
          runnerName: strOrNull(j, 'runner_name'),
        })),
        date: h.date ?? null,
      };
    },
    // Issues, comments, pull requests, workflow runs and the token's identity (receipts,
    // check-head, audit). Each names its own repository.
    async getViewer(c) {
      const { data, headers: h } = await send('GET /user', {}, c.timeoutMs);
      return { kind: 'user', login: str(data, 'login'), type: str(data, 'type'), date: h.date ?? null };
    },
    // 100 a page (GitHub's largest); page 1 is asked without `page`, the next is the Link
    // header's.
    async listComments(c) {
      const params = { per_page: 100 };
      if (c.page > 1) params.page = idOf(c.page, 'page', c.kind);
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, 'number', c.kind)}/comments`;
      const { data, headers: h } = await send(`GET ${path}`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError('no array of comments in the body');
      return {
        kind: 'comments',
        comments: data.map((m) => ({
          id: int(m, 'id'),
          login: userField(m?.user, 'login'),
          userType: userField(m?.user, 'type'),
          app: typeof m?.performed_via_github_app?.slug === 'string' ? m.performed_via_github_app.slug : null,
          createdAt: str(m, 'created_at'),
          updatedAt: str(m, 'updated_at'),
          body: typeof m.body === 'string' ? m.body : '',
        })),
        next: linkNext(h.link),
        date: h.date ?? null,
      };
    },
    async createComment(c) {
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, 'number', c.kind)}/comments`;
      const { data, headers: h } = await send(`POST ${path}`, { body: c.body }, c.timeoutMs);
      return { kind: 'posted', id: int(data, 'id'), number: null, url: typeof data.html_url === 'string' ? data.html_url : '', date: h.date ?? null };
    },
    async getPullRequest(c) {
      const path = `${repoPath(c.repository, c.kind)}/pulls/${idOf(c.number, 'number', c.kind)}`;
      const { data, headers: h } = await send(`GET ${path}`, {}, c.timeoutMs);
      return { kind: 'pullRequest', number: int(data, 'number'), headSha: str(data?.head, 'sha'), state: str(data, 'state'), merged: data.merged === true, date: h.date ?? null };
    },
    async listWorkflowRuns(c) {
      if (typeof c.workflow !== 'string' || !c.workflow || c.workflow.includes('/')) throw new BadCommand(`leasehold driver: ${c.kind} needs a workflow file name or id, not ${JSON.stringify(c.workflow)}`);
      const path = `${repoPath(c.repository, c.kind)}/actions/workflows/${encodeURIComponent(c.workflow)}/runs`;
      const { data, headers: h } = await send(`GET ${path}`, { event: c.event, per_page: 1, exclude_pull_requests: true }, c.timeoutMs);
      if (!Array.isArray(data?.workflow_runs)) throw new TypeError('no workflow_runs array in the body');
      return {
        kind: 'workflowRuns',
        totalCount: int(data, 'total_count'),
        runs: data.workflow_runs.map((r) => ({
          id: int(r, 'id'),
          status: strOrNull(r, 'status'),
          conclusion: strOrNull(r, 'conclusion'),
          createdAt: str(r, 'created_at'),
          runStartedAt: typeof r.run_started_at === 'string' ? r.run_started_at : null,
          updatedAt: str(r, 'updated_at'),
          htmlUrl: str(r, 'html_url'),
        })),
        date: h.date ?? null,
      };
    },
    async listIssues(c) {
      // Oldest first: an issue opened while the pages are read lands after them.
      const params = { state: 'open', direction: 'asc', per_page: 100 };
      if (c.page > 1) params.page = idOf(c.page, 'page', c.kind);
      const { data, headers: h } = await send(`GET ${repoPath(c.repository, c.kind)}/issues`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError('no array of issues in the body');
      return {
        kind: 'issues',
        issues: data.map((i) => ({
          number: int(i, 'number'),
          login: userField(i?.user, 'login'),
          title: str(i, 'title'),
          body: typeof i.body === 'string' ? i.body : '',
          state: str(i, 'state'),
          pullRequest: typeof i.pull_request === 'object' && i.pull_request !== null,
        })),
        next: linkNext(h.link),
        date: h.date ?? null,
      };
    },
    async createIssue(c) {
      const { data, headers: h } = await send(`POST ${repoPath(c.repository, c.kind)}/issues`, { title: c.title, body: c.body }, c.timeoutMs);
      return { kind: 'posted', id: int(data, 'id'), number: int(data, 'number'), url: str(data, 'html_url'), date: h.date ?? null };
    },
    async updateIssue(c) {
      const body = {};
      if (typeof c.body === 'string') body.body = c.body;
      if (typeof c.state === 'string') body.state = c.state;
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, 'number', c.kind)}`;
      const { data, headers: h } = await send(`PATCH ${path}`, body, c.timeoutMs);
      return { kind: 'posted', id: int(data, 'id'), number: int(data, 'number'), url: str(data, 'html_url'), date: h.date ?? null };
    },
  };

  return async function perform(command) {
    const handler = handlers[command.kind];
    if (!handler) throw new Error(`leasehold driver: unknown request command ${command.kind}`);
    try {
      return await handler(command);
    } catch (error) {
      if (error instanceof BadCommand) throw error;
      // A success whose body could not be read (cut off by a reset or the time limit: octokit
      // then hands over an empty body) is an answer that never fully arrived.
      if (error instanceof TypeError && !error.response) {
        return { kind: 'transport', sent: true, message: `the answer could not be read: ${error.message}` };
      }
      return replyFromError(error);
    }
  };
}
