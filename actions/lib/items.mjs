// Receipts, pull-request heads and alerts: actions/receipt, actions/check-head, actions/audit
// and their command-line verbs (`receipt check|post`, `check-head`, `audit`). Every decision
// (which receipt counts, whether a head moved on, whether to open, update or close the alert
// issue, the exit code) is the core's (ops/receipt.rs, ops/head.rs, ops/audit.rs); this file
// reads the inputs, performs the core's requests and writes its one document as outputs or on
// stdout.
import * as actions from '@actions/core';
import { context, credential, KNOBS, logger as cliLogger, print, warningMessage as cliWarning } from './cli-common.mjs';
import { CONTEXT, INPUTS, inputEnvName, OUTPUTS } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { errorMessage, warningMessage } from './run.mjs';
import { loadCore } from './wasm.mjs';

const RECEIPT_KINDS = { check: 'receipt-check', post: 'receipt-post' };

/** The outputs of one result document, by action. */
function outputsOf(name, doc) {
  const r = doc.report ?? {};
  const common = { status: doc.status, 'exit-code': String(doc.exitCode), detail: r.detail ?? doc.error?.message ?? '', result: JSON.stringify(doc) };
  switch (name) {
    case 'receipt':
      return {
        ...common,
        skip: r.skip === true ? 'true' : 'false',
        reason: r.reason ?? doc.error?.code ?? '',
        identity: r.identity ?? '',
        'comment-id': r.comment ? String(r.comment) : '',
        warnings: (r.warnings ?? []).join('\n'),
      };
    case 'check-head':
      return { ...common, result: r.reason ?? doc.status, 'head-sha': r.headSha ?? '', document: JSON.stringify(doc) };
    default:
      return { ...common, issue: r.number ? String(r.number) : '', problem: r.problem ?? '' };
  }
}

/** The raw inputs of action `name` as the core reads them. */
function actionInputs(name, env, token) {
  const raw = {};
  for (const input of INPUTS[name]) {
    if (['token', 'job-token', 'operation'].includes(input)) continue;
    const value = env[inputEnvName(input)];
    if (value !== undefined && value !== '') raw[input] = value;
  }
  for (const v of CONTEXT) if (env[v]) raw[v] = env[v];
  // A fact, not a decision: whether the token given is this job's own (github.token). The core
  // decides what that means for the identity (ops/identity.rs).
  const jobToken = (env[inputEnvName('job-token')] ?? '').trim();
  if (jobToken) raw['job-token'] = jobToken === token ? 'true' : 'false';
  return raw;
}

/** Runs action `name` (receipt, check-head, audit) from the step's inputs. */
export async function runItemAction(name, env = process.env) {
  const core = loadCore();
  // Masked before any input is read, so no message printed after can show them.
  const token = (env[inputEnvName('token')] ?? '').trim();
  if (token) actions.setSecret(token);
  const jobToken = (env[inputEnvName('job-token')] ?? '').trim();
  if (jobToken) actions.setSecret(jobToken);
  const operation = (env[inputEnvName('operation')] ?? '').trim();
  const command = name === 'receipt' ? `receipt ${operation}` : name;
  let op;
  let doc;
  try {
    const kind = name === 'receipt' ? RECEIPT_KINDS[operation] : name;
    if (!kind) throw Object.assign(new Error(`input \`operation\` must be check or post (got ${JSON.stringify(operation)})`), { code: 'invalid-input' });
    op = new core.Operation(kind, actionInputs(name, env, token), undefined); // every input checked first
    for (const w of op.plan.warnings) actions.warning(warningMessage(w));
    if (!token) throw Object.assign(new Error('input `token` is required'), { code: 'invalid-input', input: 'token' });
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: op.plan.repository });
    const logger = { debug: (t) => actions.debug(t), info: (t) => actions.info(t), warning: (t) => actions.warning(t) };
    const outcome = await runOperation({ op, perform, logger });
    doc = core.resultDocument(command, outcome);
    for (const w of doc.report?.warnings ?? []) actions.warning(`leasehold ${command}: ${w}`);
    actions.info(`leasehold ${command}: ${doc.status} (${doc.report?.reason ?? ''})${doc.report?.detail ? `: ${doc.report.detail}` : ''}`);
    const outputs = outputsOf(name, doc);
    for (const o of OUTPUTS[name]) actions.setOutput(o, outputs[o] ?? '');
    // A receipt never fails the step (check: skip or do the work; post: without a receipt the
    // next run does the work). check-head fails unless the head is current; audit on a failed or
    // ambiguous read or write.
    if (name !== 'receipt' && !outcome.success) actions.setFailed(`leasehold ${command}: ${doc.status}${doc.report?.detail ? `: ${doc.report.detail}` : ''}`);
  } catch (error) {
    doc = core.refusalDocument(command, error.code ?? 'internal', errorMessage(error));
    const outputs = outputsOf(name, doc);
    for (const o of OUTPUTS[name]) actions.setOutput(o, outputs[o] ?? '');
    actions.setFailed(`leasehold ${command}: ${errorMessage(error)}`);
  } finally {
    op?.free?.();
  }
}

// ---- the command line ----------------------------------------------------------------

const ENVIRONMENT = `Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, GITHUB_REPOSITORY,
GITHUB_RUN_ID.`;

/** Raw inputs for the core from parsed flags: strings as given, booleans as "true". */
function flagInputs(values, env) {
  const inputs = { ...context(env) };
  for (const [name, value] of Object.entries(values)) {
    if (name === 'help') continue;
    if (value === true) inputs[name] = 'true';
    else if (typeof value === 'string') inputs[name] = value;
  }
  return inputs;
}

async function once(core, kind, command, inputs, env) {
  const op = new core.Operation(kind, inputs, undefined); // every input checked before anything is sent
  try {
    for (const w of op.plan.warnings) cliLogger.warning(cliWarning(w));
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: op.plan.repository });
    const outcome = await runOperation({ op, perform, logger: cliLogger });
    const doc = core.resultDocument(command, outcome);
    for (const w of doc.report?.warnings ?? []) cliLogger.warning(w);
    print(doc);
    return doc.exitCode;
  } finally {
    op.free?.();
  }
}

const RECEIPT_FLAGS = ['repository', 'number', 'run-id', 'head-sha', 'runs', 'heads', 'job-status', 'app-logins', ...KNOBS];

export const ITEM_COMMANDS = {
  receipt: {
    summary: 'post this run\'s receipt after a success, or check whether a receipt lets this run skip',
    flags: { strings: RECEIPT_FLAGS, booleans: ['job-token'] },
    usage: `leasehold receipt check --number N [--run-id ID] [--head-sha SHA] [--app-logins L,…]
                [--job-token] [--repository owner/name]
       leasehold receipt post --number N (--runs ID,… | --heads SHA,…) --job-status success
                [--run-id ID] [--app-logins L,…] [--job-token] [--repository owner/name]

check: reads the comments of issue or pull request N (100 a page, at most 10 pages) and says
skip only when a receipt names this run (or head), was written by the identity the token acts
as, not an App identity in --app-logins, and was never edited: status receipted (exit 10, skip
the work). Anything else is no-receipt (exit 0, do the work) with a warning naming why.
post: after an outright success (--job-status success; any other status, or none, is
not-posted), once per run, a comment naming exactly the runs or heads this run absorbed (posted,
already-posted; not-posted is a warning, exit 0).
--job-token says the token is the job's own GITHUB_TOKEN (GET /user refuses it; its login is
github-actions[bot]). Prints one result document.
${ENVIRONMENT}`,
    verbWords: Object.keys(RECEIPT_KINDS),
    run: ({ core, values, env, verb }) => once(core, RECEIPT_KINDS[verb], `receipt ${verb}`, flagInputs(values, env), env),
  },
  'check-head': {
    summary: 'check that a pull request is still open at the head a job was started for (30 s)',
    flags: { strings: ['repository', 'pull-request', 'expected-head-sha', ...KNOBS] },
    usage: `leasehold check-head --pull-request N --expected-head-sha SHA [--repository owner/name]

Reads pull request N (retrying within 30 s in all): current (exit 0) when it is open at SHA;
superseded (exit 10) when it closed or its head moved on; unverified-head (exit 17) when it
could not be read. Prints one result document.
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'check-head', 'check-head', flagInputs(values, env), env),
  },
  audit: {
    summary: 'keep one alert issue for a problem (reaper-delivery): open, update, close',
    flags: { strings: ['check', 'repository', 'workflow-repository', 'workflow', 'max-age-minutes', 'max-running-minutes', ...KNOBS], booleans: ['job-token'] },
    usage: `leasehold audit [--check reaper-delivery] [--workflow reap.yml] [--max-age-minutes 30]
                [--max-running-minutes 15] [--workflow-repository owner/name] [--job-token]
                [--repository owner/name]

reaper-delivery: the latest scheduled run of the reap workflow is older than the limit, ended
other than success, or has run too long. Keeps one open issue in --repository for it, found by
a hidden marker and by the token's own login (never by title): opened, updated when its body
changes, unchanged otherwise, closed when the problem clears; noop when there is nothing to do.
A failed or ambiguous read touches no issue and fails (ambiguous exit 16, transport 20,
permission 21). (incident is not available yet: it needs lifecycle incidents.)
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'audit', 'audit', flagInputs(values, env), env),
  },
};
