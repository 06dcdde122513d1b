// Local emulator of the slice of GitHub's REST API that leasehold uses, backed by
// a real bare git repository (one per owner/repo). This file is its entry: startEmulator()
// and the command line; the emulator itself is split by what it models:
//   server.mjs       the HTTP server: faults, authentication, rate limits, routing, answers
//   repository.mjs   one hosted repository: a bare git repository, its description
//   contents.mjs     the contents API (GET, PUT, DELETE contents)
//   git-data.mjs     the git data API (refs, trees, commits)
//   actions.mjs      GitHub Actions: workflow runs and jobs as tests script them, their routes
//   graphql.mjs      POST /graphql: the repository id, ref reads, refs listing, updateRefs
//   faults.mjs       fault injection (faults.add()) and the answers a fault sends
//   rate-limits.mjs  the primary and secondary rate limits
//   git.mjs, http.mjs, helpers.mjs, constants.mjs   git plumbing, HTTP helpers, the rest
//   cli.mjs          the command line
//
// Node.js 20 built-ins and the `git` binary only, except POST /graphql, which loads the dev
// dependencies `graphql` and `@octokit/graphql-schema` on its first request.
//
// GitHub behaviour copied here is described in docs/github-semantics.md; comments cite its
// sections as docs/github-semantics.md#<anchor>. Where GitHub's behaviour is surprising the
// code says so.
//
// Usage (in-process):
//   import { startEmulator } from './emulator.mjs';
//   const emu = await startEmulator({ files: { 'locks/a.json': '{}' } });
//   process.env.GITHUB_API_URL = emu.url; ...; await emu.close();
//
// GitHub Actions (read-only routes: GET actions/runs/{id}, .../attempts/{n}, .../attempts/{n}/jobs,
// actions/jobs/{id}). Tests script what GitHub would report, on `repo.actions` of a repository
// handle (createRepo(), repo(); the emulator's own `actions` is its first repository's):
//   await actions.startRun(runId, { jobs: [{ name, status?, conclusion?, runnerName?, labels?,
//        steps? }], status?: 'in_progress', name?, path?, event?, headBranch?, headSha? })
//                                  -> [jobId, ...]  attempt 1; run ids are the test's choice
//   actions.rerun(runId, { jobs?, status? }) -> [jobId, ...]  attempt n+1 (jobs default to the
//        previous attempt's names); throws while the latest attempt is not completed
//   actions.setJob(jobId, { status, conclusion?, runnerName? })  a completed job stays so
//   actions.setAttemptStatus(runId, attempt, status)  queued, waiting, in_progress...
//   actions.complete(runId, attempt, conclusion, { jobConclusion? })  the attempt and all its
//        unfinished jobs
// A job's status defaults to in_progress (on a runner, named "GitHub Actions <id>") in an
// in_progress attempt, else queued (no runner).
// A run's status is its attempt's, set by the test: it does not follow the jobs by itself.
// Illegal moves (a completed job or attempt changed, a conclusion before completion) throw.
//
// Issues, comments and pull requests (issues.mjs, pulls.mjs, users.mjs): a repository handle's
// `issues` (create({ title, body, token }) -> number, comment(number, body, { token }) -> id,
// commentAs(number, body, { login, type, app }) -> id, edit(commentId, body), setState(number,
// state), get(number), list(), comments(number)) and `pulls` (open({ headSha, headRef, token })
// -> number, push(number, sha), close(number, { merged }), reopen(number), head(number)).
// A token acts as `github-actions[bot]` (an installation token: GET /user is 403) unless
// identities.set(token, { login, type, app }) says otherwise.
//
// Conformance: under `node --test` every emulator hands each request and answer to
// tests/conformance/ (loaded only then), which checks them against GitHub's OpenAPI
// description of api.github.com; close() rejects on a difference not listed in
// tests/conformance/deviations.mjs. Requests running over the time limit (GitHub: 10 s) are
// killed: see setTimeLimit().
//
// Usage (CLI):
//   node tests/emulator/emulator.mjs --port 8080 [--owner o --repo r --branch main
//        --dir DIR --token T ...]      prints the URL, serves until SIGINT/SIGTERM.

import fs from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { parseArgs, serve } from './cli.mjs';
import { Emulator } from './server.mjs';

// ---------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------

/**
 * Whether an emulator checks its exchanges against GitHub's OpenAPI description
 * (tests/conformance/): the `conformance` option if given, else LEASEHOLD_CONFORMANCE=1/0,
 * else on exactly when running under `node --test` (the runner sets NODE_TEST_CONTEXT in each
 * test file's process). The demo and the CLI outside tests never load it.
 */
function conformanceMode(option) {
  if (option === true || option === false) return option;
  const env = process.env.LEASEHOLD_CONFORMANCE;
  if (env === '1' || env === '0') return env === '1';
  return Boolean(process.env.NODE_TEST_CONTEXT);
}

/**
 * Starts an emulator. Resolves to:
 *   { url, gitDir, log, faults, readFile(branch, path), history(branch, path),
 *     head(branch), writeFile(branch, path, content|null, message?), actions, staleReads(cfg),
 *     createRepo(owner, repo, defaultBranch?, files?), repo(owner, repo), now(), close() }
 * options: { owner='octo', repo='locks', defaultBranch='main', files={}, port=0,
 *   host='127.0.0.1', tokens=null, dir=null, private=false, rateLimit=5000,
 *   limits={ graphqlPerHour=1000 (GraphQL points), contentPerMinute, contentPerHour },
 *   now=Date.now (clock for commit dates, Date headers, rate windows, stale windows),
 *   timeLimitMs=10000, timeLimitAnswer=502|'reset', killedWork='finish'|'drop' (GitHub's
 *   request time limit; see setTimeLimit), onExchange=null (called with every
 *   { method, path, query, requestHeaders, requestBody, status, responseHeaders,
 *   responseBody, ... } the emulator handles; LEASEHOLD_CONFORMANCE_DIR=dir also appends
 *   them to dir/exchanges-<pid>.jsonl unless record: false), conformance (see
 *   conformanceMode: true/false forces the check on or off for this emulator) }
 */
export async function startEmulator(options = {}) {
  const opts = {
    owner: 'octo',
    repo: 'locks',
    defaultBranch: 'main',
    files: {},
    port: 0,
    host: '127.0.0.1',
    tokens: null,
    dir: null,
    private: false,
    rateLimit: 5000,
    now: null,
    timeLimitMs: 10_000,
    timeLimitAnswer: 502,
    killedWork: 'finish',
    onExchange: null,
    conformance: undefined,
    ...options,
  };
  const emu = new Emulator(opts);
  if (conformanceMode(opts.conformance)) {
    // Dev-only: the validator and GitHub's description are dev dependencies, loaded only here.
    const { createChecker } = await import('../conformance/checker.mjs');
    emu.checker = createChecker(`emulator ${emu.id}`);
    emu.recorders.push((exchange) => emu.checker.record(exchange));
  }
  try {
    await emu.init();
  } catch (e) {
    if (emu.server?.listening) emu.server.close();
    if (emu.ownsDir && emu.baseDir) await fs.rm(emu.baseDir, { recursive: true, force: true });
    throw e;
  }
  const primary = emu.primary.handle();
  return {
    url: emu.url,
    gitDir: emu.gitDir,
    owner: primary.owner,
    repo: primary.repo,
    defaultBranch: primary.defaultBranch,
    log: emu.log,
    faults: emu.faults,
    /** Secondary-limit bookkeeping: `refused` counts the requests it turned away. */
    secondary: emu.secondary,
    readFile: (branch, p) => primary.readFile(branch, p),
    history: (branch, p) => primary.history(branch, p),
    head: (branch) => primary.head(branch),
    writeFile: (branch, p, content, message) => primary.writeFile(branch, p, content, message),
    actions: primary.actions,
    staleReads: (cfg) => emu.staleReads(cfg),
    setTimeLimit: (cfg) => emu.setTimeLimit(cfg),
    createRepo: (owner, repo, defaultBranch, files) => emu.createRepo(owner, repo, defaultBranch, files),
    repo: (owner, repo) => emu.repo(owner, repo),
    now: () => emu.now(),
    conformance: emu.checker ?? null,
    /** Who each token acts as: identities.set(token, { login, type: 'User'|'Bot', app }). */
    identities: emu.identities.handle(),
    /** onRequest(fn): fn({ method, path, query, body }) runs before each request is processed
     *  (a test's hook: push to a pull request as an admitting write arrives); returns a remover. */
    onRequest: (fn) => {
      emu.requestHooks.push(fn);
      return () => emu.requestHooks.splice(emu.requestHooks.indexOf(fn), 1);
    },
    close: () => emu.close(),
  };
}

// ---------------------------------------------------------------------------------------
// CLI (cli.mjs): when this file is run rather than imported
// ---------------------------------------------------------------------------------------

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) serve(await startEmulator(parseArgs(process.argv.slice(2))));
