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

/** Turns a thrown octokit error into a reply. */
export function replyFromError(error) {
  const response = error?.response;
  if (response && typeof response.status === 'number') {
    if (response.status === 304) return { kind: 'notModified' };
    const data = response.data;
    const message = typeof data === 'object' && data && typeof data.message === 'string' ? data.message : String(error.message ?? '');
    return {
      kind: 'http',
      status: response.status,
      message,
      retryAfter: header(response.headers, 'retry-after'),
      ratelimitRemaining: intHeader(response.headers, 'x-ratelimit-remaining'),
      ratelimitReset: intHeader(response.headers, 'x-ratelimit-reset'),
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

/** GITHUB_API_URL (github.com, GitHub Enterprise Server, or an emulator), without a final slash. */
export const apiBaseUrl = (env = process.env) => (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');

/**
 * createTransport({ baseUrl, token, repository }) → perform(command) → Promise<reply>.
 * `baseUrl` is GITHUB_API_URL (github.com, GitHub Enterprise Server, or an emulator).
 */
export function createTransport({ baseUrl, token, repository, userAgent = 'leasehold' }) {
  const octokit = new Octokit({ auth: token, baseUrl, userAgent });
  const [owner, repo] = repository.split('/');
  const base = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

  async function send(route, params, timeoutMs) {
    return octokit.request(route, { ...params, request: { signal: AbortSignal.timeout(timeoutMs) } });
  }

  const handlers = {
    async readFile(c) {
      const headers = c.ifNoneMatch ? { 'if-none-match': c.ifNoneMatch } : {};
      const params = { headers };
      if (c.ref) params.ref = c.ref;
      const { data, headers: h } = await send(`GET ${base}/contents/${encodePath(c.path)}`, params, c.timeoutMs);
      if (typeof data !== 'object' || data === null) throw new TypeError('empty or unreadable body');
      if (Array.isArray(data) || data.type !== 'file' || data.encoding !== 'base64') {
        return { kind: 'http', status: 422, message: `${c.path} is not a file leasehold can read (type ${data?.type ?? 'list'})` };
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
      return { kind: 'created', sha: data.sha };
    },
    async createCommit(c) {
      const { data } = await send(`POST ${base}/git/commits`, { message: c.message, tree: c.tree, parents: [] }, c.timeoutMs);
      return { kind: 'created', sha: data.sha };
    },
    async createBranch(c) {
      const { data } = await send(`POST ${base}/git/refs`, { ref: `refs/heads/${c.branch}`, sha: c.sha }, c.timeoutMs);
      return { kind: 'created', sha: data.object.sha };
    },
  };

  return async function perform(command) {
    const handler = handlers[command.kind];
    if (!handler) throw new Error(`leasehold driver: unknown request command ${command.kind}`);
    try {
      return await handler(command);
    } catch (error) {
      // A success whose body could not be read (cut off by a reset or the time limit: octokit
      // then hands over an empty body) is an answer that never fully arrived.
      if (error instanceof TypeError && !error.response) {
        return { kind: 'transport', sent: true, message: `the answer could not be read: ${error.message}` };
      }
      return replyFromError(error);
    }
  };
}
