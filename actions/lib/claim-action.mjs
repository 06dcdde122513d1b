// actions/claim: one claim operation (claim, renew, release, verify, takeover, adopt or read)
// from the step's inputs.
// The inputs become the core's (the claim token is the core's `token`, the metadata lines its
// `set`, the config file's text its `config`); the outputs come from the core's result
// document; the step fails when its exit code is not 0 (read `status` and `exit-code` with
// `continue-on-error: true` to branch on a contended item).
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as actions from '@actions/core';
import { CONTEXT, INPUTS, inputEnvName, OUTPUTS } from './constants.mjs';
import { shellQuote } from './cli-common.mjs';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { errorMessage, warningMessage, withCancellation } from './run.mjs';
import { loadCore } from './wasm.mjs';

const KINDS = { claim: 'claim', renew: 'claim-renew', release: 'claim-release', verify: 'claim-verify', takeover: 'claim-takeover', adopt: 'claim-adopt', read: 'claim-read' };
// Action input → the core's input name, where they differ.
const CORE_NAME = { 'claim-token': 'token', metadata: 'set' };

/** What the `next` lines start with: the runner's node and the CLI beside this bundle
 *  (dist/cli.mjs of the action's checkout, there for the rest of the job), so a later `run:`
 *  step of the job runs a line as printed, with GITHUB_TOKEN in its environment. */
const invocation = () => [process.execPath, fileURLToPath(new URL('./cli.mjs', import.meta.url))].map(shellQuote).join(' ');

function inputs(env) {
  const raw = {};
  for (const name of INPUTS.claim) {
    if (name === 'token' || name === 'operation') continue;
    const value = env[inputEnvName(name)];
    if (value === undefined || value === '') continue;
    if (name === 'config') {
      const path = isAbsolute(value) ? value : join(env.GITHUB_WORKSPACE || process.cwd(), value);
      try {
        raw.config = readFileSync(path, 'utf8');
      } catch (error) {
        throw Object.assign(new Error(`input \`config\`: ${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`), { code: 'invalid-config', input: 'config' });
      }
      // The path the file was read from: the `next` lines carry it, and a later step may run
      // in another working directory.
      raw['config-path'] = path;
    } else raw[CORE_NAME[name] ?? name] = value;
  }
  for (const name of CONTEXT) if (env[name]) raw[name] = env[name];
  raw.invocation = invocation();
  return raw;
}

function write(doc) {
  const item = doc.claim?.items?.[0];
  const held = item?.payload?.state === 'held';
  const outputs = {
    token: item?.token ?? '',
    // This run's (read names none: the holder's run id is in `result`, never an output a
    // release step would take for its own).
    'run-id': doc.claim?.runId ?? '',
    status: doc.status,
    'expires-at': held ? (item.payload.lease?.expiresAt ?? '') : '',
    'exit-code': String(doc.exitCode),
    result: JSON.stringify(doc),
  };
  for (const name of OUTPUTS.claim) actions.setOutput(name, outputs[name]);
  actions.info(`leasehold ${doc.command}: ${doc.status} (exit code ${doc.exitCode}: ${doc.action})${doc.claim?.detail ? `: ${doc.claim.detail}` : ''}`);
  if (doc.exitCode !== 0) actions.setFailed(`leasehold ${doc.command}: ${doc.status} (exit code ${doc.exitCode})${doc.error?.message ? `: ${doc.error.message}` : ''}`);
}

export async function runClaim(env = process.env) {
  const core = loadCore();
  const operation = (env[inputEnvName('operation')] ?? '').trim();
  const command = `claims ${operation}`;
  let op;
  // Masked before any input is read, so no message printed after (an input error echoing a
  // value) can show it.
  const token = (env[inputEnvName('token')] ?? '').trim();
  if (token) actions.setSecret(token);
  try {
    const kind = KINDS[operation];
    if (!kind) throw Object.assign(new Error(`input \`operation\` must be one of ${Object.keys(KINDS).join(', ')} (got ${JSON.stringify(operation)})`), { usage: true, code: 'usage' });
    op = new core.Operation(kind, inputs(env), undefined); // every input checked before anything is sent
    for (const w of op.plan.warnings) actions.warning(warningMessage(w));
    if (!token) throw Object.assign(new Error('input `token` is required'), { usage: true, code: 'no-token' });
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: op.plan.repository });
    const logger = { debug: (t) => actions.debug(t), info: (t) => actions.info(t), warning: (t) => actions.warning(t) };
    // A cancelled job (SIGINT, SIGTERM) does not kill the step mid-write: the core writes nothing
    // more (a release goes on), and what landed is reported, its token in the outputs for the
    // release step.
    const outcome = await withCancellation((cancel) => runOperation({ op, perform, logger, cancel }));
    write(core.resultDocument(command, outcome));
  } catch (error) {
    const doc = core.refusalDocument(command, error.code ?? 'internal', errorMessage(error));
    write(doc);
  } finally {
    op?.free?.();
  }
}
