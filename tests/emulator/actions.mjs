// GitHub Actions: workflow runs, their attempts and jobs, as tests script them (RepoActions,
// one per repository), and the read-only REST routes that report them: GET actions/runs/{id},
// .../attempts/{n}, .../attempts/{n}/jobs, actions/jobs/{id}. Comments cite GitHub's
// behaviour as docs/github-semantics.md#<anchor>.

import { DOCS } from './constants.mjs';
import { definedOnly, isoSeconds, newId, nodeId } from './helpers.mjs';
import { fail, linkHeader, reply } from './http.mjs';

// docs/github-semantics.md#actions-runs. A run's status and conclusion are those of one
// attempt; a re-run adds an attempt under the same run id.
const RUN_STATUSES = ['requested', 'queued', 'pending', 'waiting', 'in_progress', 'completed'];
const RUN_CONCLUSIONS = ['success', 'failure', 'neutral', 'cancelled', 'skipped', 'timed_out', 'action_required', 'stale', 'startup_failure'];
// A job takes the statuses of a run but fewer conclusions (GitHub's job schema: no stale, no
// startup_failure, which only a whole run can end with).
const JOB_STATUSES = RUN_STATUSES;
const JOB_CONCLUSIONS = ['success', 'failure', 'neutral', 'cancelled', 'skipped', 'timed_out', 'action_required'];

const positiveInt = (v) => Number.isSafeInteger(v) && v > 0;

/** A positive integer id from a path or query parameter ("7"), or null. */
const idParam = (s) => (typeof s === 'string' && /^[1-9]\d{0,15}$/.test(s) && positiveInt(Number(s)) ? Number(s) : null);

/**
 * The workflow runs of one repository. Nothing here runs anything: a test says what GitHub
 * would report (a run started, a job moved on, an attempt finished) and the REST routes
 * answer from it. Run ids are the test's choice (they stand for GITHUB_RUN_ID) and, as on
 * GitHub, unique across every repository of the emulator; job ids are handed out here.
 *
 * A run's status does not follow its jobs by itself: on GitHub the run completes a moment
 * after its last job does, and a test says when with complete().
 */
export class RepoActions {
  constructor(repo) {
    this.repo = repo;
    this.runs = new Map(); // run id -> run
    this.jobs = new Map(); // job id -> job
    this.workflowIds = new Map(); // workflow path -> id
    this.runNumber = 0;
  }

  now() {
    return isoSeconds(this.repo.emu.now());
  }

  run(runId) {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no workflow run ${runId} in ${this.repo.fullName}`);
    return run;
  }

  attempt(runId, number) {
    const run = this.run(runId);
    const a = run.attempts[number - 1];
    if (!a) throw new Error(`workflow run ${runId} has no attempt ${number}`);
    return a;
  }

  static checkKeys(o, known, what) {
    const unknown = Object.keys(o ?? {}).filter((k) => !known.includes(k));
    if (unknown.length) throw new TypeError(`${what}: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`);
  }

  static checkStatus(status, conclusion, statuses, conclusions, what) {
    if (!statuses.includes(status)) throw new TypeError(`${what}: status must be one of ${statuses.join(', ')}, not ${status}`);
    if (status === 'completed') {
      if (!conclusions.includes(conclusion)) throw new TypeError(`${what}: a completed one needs a conclusion among ${conclusions.join(', ')}, not ${conclusion}`);
    } else if (conclusion != null) {
      throw new TypeError(`${what}: only a completed one has a conclusion (status ${status}, conclusion ${conclusion})`);
    }
  }

  /** Starts run `runId` (attempt 1). Async: the head commit is read from git. */
  async startRun(runId, { status = 'in_progress', jobs = [], name = 'CI', path: workflowPath = '.github/workflows/ci.yml', event = 'push', headBranch, headSha } = {}) {
    if (!positiveInt(runId)) throw new TypeError(`run id must be a positive integer, not ${runId}`);
    headBranch ??= this.repo.defaultBranch;
    headSha ??= await this.repo.branchHead(headBranch);
    if (!headSha) throw new Error(`branch ${headBranch} not found in ${this.repo.fullName}`);
    const commit = await this.repo.readCommit(headSha);
    const owners = this.repo.emu.runIds;
    if (owners.has(runId)) throw new Error(`run id ${runId} is already taken (in ${owners.get(runId).fullName}); GitHub's run ids are unique`);
    if (!this.workflowIds.has(workflowPath)) this.workflowIds.set(workflowPath, newId());
    const run = {
      id: runId,
      number: ++this.runNumber,
      workflowId: this.workflowIds.get(workflowPath),
      checkSuiteId: newId(),
      name,
      path: workflowPath,
      event,
      headBranch,
      headSha,
      headCommit: commit,
      createdAt: this.now(),
      attempts: [],
    };
    const ids = this.addAttempt(run, status, jobs);
    owners.set(runId, this.repo);
    this.runs.set(runId, run);
    return ids;
  }

  /** Re-runs `runId`: attempt n+1. GitHub refuses while the latest attempt is not completed. */
  rerun(runId, { status = 'in_progress', jobs } = {}) {
    const run = this.run(runId);
    const latest = run.attempts.at(-1);
    if (latest.status !== 'completed') {
      throw new Error(`workflow run ${runId} attempt ${latest.number} is ${latest.status}: GitHub re-runs only a completed run`);
    }
    jobs ??= latest.jobs.map((id) => ({ name: this.jobs.get(id).name, labels: this.jobs.get(id).labels }));
    return this.addAttempt(run, status, jobs);
  }

  addAttempt(run, status, jobs) {
    const number = run.attempts.length + 1;
    const what = `workflow run ${run.id} attempt ${number}`;
    RepoActions.checkStatus(status, null, RUN_STATUSES.filter((s) => s !== 'completed'), [], what);
    // Check every job before creating any.
    if (!Array.isArray(jobs)) throw new TypeError(`${what}: jobs must be an array`);
    const specs = jobs.map((spec, i) => {
      if (typeof spec?.name !== 'string' || !spec.name) throw new TypeError(`${what}: job ${i} needs a name`);
      RepoActions.checkKeys(spec, ['name', 'status', 'conclusion', 'runnerName', 'labels', 'steps'], `${what} job ${spec.name}`);
      const s = { status: status === 'in_progress' ? 'in_progress' : 'queued', conclusion: null, labels: ['ubuntu-latest'], ...definedOnly(spec) };
      RepoActions.checkStatus(s.status, s.conclusion, JOB_STATUSES, JOB_CONCLUSIONS, `${what} job ${spec.name}`);
      return s;
    });
    const now = this.now();
    const attempt = { number, status, conclusion: null, startedAt: now, updatedAt: now, jobs: [] };
    for (const spec of specs) {
      const job = {
        id: newId(),
        runId: run.id,
        attempt: number,
        name: spec.name,
        status: 'queued',
        conclusion: null,
        labels: spec.labels,
        steps: spec.steps ?? null,
        runnerName: null,
        runnerId: null,
        createdAt: now,
        startedAt: now, // GitHub gives a queued job its creation time here
        completedAt: null,
      };
      this.moveJob(job, spec);
      this.jobs.set(job.id, job);
      attempt.jobs.push(job.id);
    }
    run.attempts.push(attempt);
    return [...attempt.jobs];
  }

  /** A job moves on: { status, conclusion?, runnerName? }. A completed job stays so. */
  setJob(jobId, change = {}) {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`no job ${jobId} in ${this.repo.fullName}`);
    const attempt = this.attempt(job.runId, job.attempt);
    const what = `job ${jobId} (${job.name})`;
    if (attempt.status === 'completed') throw new Error(`${what}: its attempt ${job.attempt} of run ${job.runId} is completed`);
    if (job.status === 'completed') throw new Error(`${what} is completed already`);
    RepoActions.checkKeys(change, ['status', 'conclusion', 'runnerName'], what);
    const next = { status: job.status, conclusion: null, ...definedOnly(change) };
    RepoActions.checkStatus(next.status, next.conclusion, JOB_STATUSES, JOB_CONCLUSIONS, what);
    this.moveJob(job, next);
    attempt.updatedAt = this.now();
  }

  moveJob(job, { status, conclusion = null, runnerName }) {
    const now = this.now();
    const started = status === 'in_progress' || (status === 'completed' && conclusion !== 'skipped' && conclusion !== 'cancelled');
    if (status === 'in_progress' && job.status !== 'in_progress') job.startedAt = now;
    if (runnerName !== undefined) {
      job.runnerName = runnerName;
      job.runnerId = runnerName === null ? null : newId();
    } else if (started && job.runnerName === null) {
      job.runnerId = newId();
      job.runnerName = `GitHub Actions ${job.runnerId}`;
    }
    job.status = status;
    job.conclusion = conclusion;
    if (status === 'completed') job.completedAt = now;
  }

  /** The attempt moves on without finishing (queued -> in_progress, waiting, ...). */
  setAttemptStatus(runId, number, status) {
    const attempt = this.attempt(runId, number);
    const what = `workflow run ${runId} attempt ${number}`;
    if (attempt.status === 'completed') throw new Error(`${what} is completed already`);
    RepoActions.checkStatus(status, null, RUN_STATUSES.filter((s) => s !== 'completed'), [], `${what} (finish it with complete())`);
    if (status === 'in_progress' && attempt.status !== 'in_progress') attempt.startedAt = this.now();
    attempt.status = status;
    attempt.updatedAt = this.now();
  }

  /** The attempt finishes with `conclusion`; its unfinished jobs finish too, with
   *  `jobConclusion` (default: the run's conclusion when a job can have it, else cancelled). */
  complete(runId, number, conclusion, { jobConclusion } = {}) {
    const attempt = this.attempt(runId, number);
    const what = `workflow run ${runId} attempt ${number}`;
    if (attempt.status === 'completed') throw new Error(`${what} is completed already`);
    RepoActions.checkStatus('completed', conclusion, RUN_STATUSES, RUN_CONCLUSIONS, what);
    jobConclusion ??= JOB_CONCLUSIONS.includes(conclusion) ? conclusion : 'cancelled';
    RepoActions.checkStatus('completed', jobConclusion, JOB_STATUSES, JOB_CONCLUSIONS, `${what} jobConclusion`);
    for (const id of attempt.jobs) {
      const job = this.jobs.get(id);
      if (job.status !== 'completed') this.moveJob(job, { status: 'completed', conclusion: jobConclusion });
    }
    attempt.status = 'completed';
    attempt.conclusion = conclusion;
    attempt.updatedAt = this.now();
  }

  /** The scripting API tests get (repo.actions): see the header comment of emulator.mjs. */
  handle() {
    return (this._handle ??= Object.freeze({
      startRun: (runId, options) => this.startRun(runId, options),
      rerun: (runId, options) => this.rerun(runId, options),
      setJob: (jobId, change) => this.setJob(jobId, change),
      setAttemptStatus: (runId, attempt, status) => this.setAttemptStatus(runId, attempt, status),
      complete: (runId, attempt, conclusion, options) => this.complete(runId, attempt, conclusion, options),
    }));
  }
}

// ---- the REST routes ----------------------------------------------------------------

/** The Actions routes under /repos/{owner}/{repo} (read-only; tests script the runs): a
 *  reply, or undefined when `sub` is none of them. */
export function actionsRoute(ctx, repo, sub) {
  const { method } = ctx;
  let r;
  if ((r = /^\/actions\/runs\/([^/]+)(?:\/attempts\/([^/]+))?\/?$/.exec(sub)) && method === 'GET') {
    return getRun(repo, r[1], r[2]);
  }
  if ((r = /^\/actions\/runs\/([^/]+)\/attempts\/([^/]+)\/jobs\/?$/.exec(sub)) && method === 'GET') {
    return listAttemptJobs(ctx, repo, r[1], r[2]);
  }
  if ((r = /^\/actions\/jobs\/([^/]+)\/?$/.exec(sub)) && method === 'GET') return getJob(repo, r[1]);
  if ((r = /^\/actions\/workflows\/([^/]+)\/runs\/?$/.exec(sub)) && method === 'GET') return listWorkflowRuns(ctx, repo, r[1]);
  return undefined;
}

/** Run `run` as of attempt `n` (workflow-run). */
function runBody(repo, run, n) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const a = run.attempts[n - 1];
  const r = `${api}/repos/${full}/actions/runs/${run.id}`;
  const c = run.headCommit;
  const actor = repo.ownerBody();
  const minimal = repo.minimalBody();
  return {
    id: run.id,
    name: run.name,
    node_id: nodeId('WFR', `${full}:${run.id}`),
    check_suite_id: run.checkSuiteId,
    check_suite_node_id: nodeId('CS', `${full}:${run.checkSuiteId}`),
    head_branch: run.headBranch,
    head_sha: run.headSha,
    path: run.path,
    display_title: c ? c.message.split('\n')[0] : run.name,
    run_number: run.number,
    event: run.event,
    status: a.status,
    conclusion: a.conclusion,
    workflow_id: run.workflowId,
    url: r,
    html_url: `${api}/${full}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: run.createdAt,
    updated_at: a.updatedAt,
    actor,
    run_attempt: n,
    referenced_workflows: [],
    run_started_at: a.startedAt,
    triggering_actor: actor,
    jobs_url: `${r}/jobs`,
    logs_url: `${r}/logs`,
    check_suite_url: `${api}/repos/${full}/check-suites/${run.checkSuiteId}`,
    artifacts_url: `${r}/artifacts`,
    cancel_url: `${r}/cancel`,
    rerun_url: `${r}/rerun`,
    previous_attempt_url: n > 1 ? `${r}/attempts/${n - 1}` : null,
    workflow_url: `${api}/repos/${full}/actions/workflows/${run.workflowId}`,
    head_commit: c && {
      id: c.sha,
      tree_id: c.tree,
      message: c.message.replace(/\n$/, ''),
      timestamp: isoSeconds(c.committer.ms),
      author: { name: c.author.name, email: c.author.email },
      committer: { name: c.committer.name, email: c.committer.email },
    },
    repository: minimal,
    head_repository: minimal,
  };
}

/** One job (job). Steps are made up from its status unless the test gave some. */
function jobBody(repo, job) {
  const api = repo.emu.url;
  const full = repo.fullName;
  const run = repo.actions.runs.get(job.runId);
  const ran = job.runnerName !== null;
  const done = job.status === 'completed';
  const steps =
    job.steps ??
    (!ran
      ? []
      : [
          { name: 'Set up job', status: 'completed', conclusion: 'success', number: 1, started_at: job.startedAt, completed_at: job.startedAt },
          { name: `Run ${job.name}`, status: done ? 'completed' : 'in_progress', conclusion: done ? job.conclusion : null, number: 2, started_at: job.startedAt, completed_at: done ? job.completedAt : null },
          ...(done ? [{ name: 'Complete job', status: 'completed', conclusion: 'success', number: 3, started_at: job.completedAt, completed_at: job.completedAt }] : []),
        ]);
  return {
    id: job.id,
    run_id: run.id,
    workflow_name: run.name,
    head_branch: run.headBranch,
    run_url: `${api}/repos/${full}/actions/runs/${run.id}`,
    run_attempt: job.attempt,
    node_id: nodeId('CR', `${full}:${job.id}`),
    head_sha: run.headSha,
    url: `${api}/repos/${full}/actions/jobs/${job.id}`,
    html_url: `${api}/${full}/actions/runs/${run.id}/job/${job.id}`,
    status: job.status,
    conclusion: job.conclusion,
    created_at: job.createdAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    name: job.name,
    steps,
    check_run_url: `${api}/repos/${full}/check-runs/${job.id}`,
    labels: job.labels,
    runner_id: job.runnerId,
    runner_name: job.runnerName,
    // GitHub-hosted runners belong to the group "GitHub Actions", id 0.
    runner_group_id: ran ? 0 : null,
    runner_group_name: ran ? 'GitHub Actions' : null,
  };
}

// GET /actions/runs/{run_id}: the run as of its LATEST attempt (finished only when completed
// for that attempt: docs/github-semantics.md#actions-runs).
// GET /actions/runs/{run_id}/attempts/{n}: as of attempt n. Unknown run or attempt: 404.
function getRun(repo, rawRunId, rawAttempt) {
  const doc = rawAttempt === undefined ? DOCS.getRun : DOCS.getRunAttempt;
  const run = repo.actions.runs.get(idParam(rawRunId));
  if (!run) return fail(404, 'Not Found', doc);
  const n = rawAttempt === undefined ? run.attempts.length : idParam(rawAttempt);
  if (!run.attempts[n - 1]) return fail(404, 'Not Found', doc);
  return reply(200, runBody(repo, run, n));
}

// GET /actions/runs/{run_id}/attempts/{n}/jobs?per_page=&page=: in creation order, paged
// like every GitHub list (per_page 30 by default, 100 at most; a Link header when there is
// another page).
function listAttemptJobs(ctx, repo, rawRunId, rawAttempt) {
  const doc = DOCS.listJobsForAttempt;
  const run = repo.actions.runs.get(idParam(rawRunId));
  const attempt = run?.attempts[idParam(rawAttempt) - 1];
  if (!attempt) return fail(404, 'Not Found', doc);
  const q = ctx.url.searchParams;
  const perPage = Math.min(100, idParam(q.get('per_page')) ?? 30);
  const page = idParam(q.get('page')) ?? 1;
  const ids = attempt.jobs;
  const jobs = ids.slice((page - 1) * perPage, page * perPage).map((id) => jobBody(repo, repo.actions.jobs.get(id)));
  const link = linkHeader(repo.emu.url, ctx.url, page, Math.max(1, Math.ceil(ids.length / perPage)));
  return reply(200, { total_count: ids.length, jobs }, link ? { link } : {});
}

// GET /actions/jobs/{job_id}: a job of this repository's runs, any attempt.
function getJob(repo, rawJobId) {
  const job = repo.actions.jobs.get(idParam(rawJobId));
  if (!job) return fail(404, 'Not Found', DOCS.getJob);
  return reply(200, jobBody(repo, job));
}

// GET /actions/workflows/{workflow_id}/runs?event=&status=&per_page=&page=: the runs of one
// workflow, named by its id or its file name (`reap.yml`), newest first, as of each run's latest
// attempt (docs/github-semantics.md#workflow-runs-listing). `status` filters by a status or a
// conclusion. An unknown workflow is 404.
function listWorkflowRuns(ctx, repo, rawWorkflow) {
  const doc = DOCS.listWorkflowRuns;
  const name = decodeURIComponent(rawWorkflow);
  const byId = idParam(name);
  const runs = [...repo.actions.runs.values()].filter((run) => (byId !== null ? run.workflowId === byId : run.path.split('/').at(-1) === name));
  const known = byId !== null ? [...repo.actions.workflowIds.values()].includes(byId) : [...repo.actions.workflowIds.keys()].some((p) => p.split('/').at(-1) === name);
  if (!known) return fail(404, 'Not Found', doc);
  const q = ctx.url.searchParams;
  const event = q.get('event');
  const status = q.get('status');
  const latest = (run) => run.attempts.at(-1);
  const chosen = runs
    .filter((run) => !event || run.event === event)
    .filter((run) => !status || latest(run).status === status || latest(run).conclusion === status)
    .sort((a, b) => b.id - a.id);
  const perPage = Math.min(100, idParam(q.get('per_page')) ?? 30);
  const page = idParam(q.get('page')) ?? 1;
  const items = chosen.slice((page - 1) * perPage, page * perPage).map((run) => runBody(repo, run, run.attempts.length));
  const link = linkHeader(repo.emu.url, ctx.url, page, Math.max(1, Math.ceil(chosen.length / perPage)));
  return reply(200, { total_count: chosen.length, workflow_runs: items }, link ? { link } : {});
}
