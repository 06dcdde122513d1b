// The action's entry: read inputs the way the runner passes them, run the operation, and
// write outputs, the job summary and the exit code.
import * as core from '@actions/core';
import { CONTEXT, INPUTS, inputEnvName, OUTPUTS } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { createTransport } from './github.mjs';
import { finalLine, outputsFor, summaryFor } from './report.mjs';
import { loadCore } from './wasm.mjs';

/** Raw inputs as the core reads them: untrimmed input values plus run context. */
export function collectInputs(kind, env = process.env) {
  const raw = {};
  for (const name of INPUTS[kind]) {
    if (name === 'token') continue;
    const value = env[inputEnvName(name)];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  for (const name of CONTEXT) {
    if (env[name]) raw[name] = env[name];
  }
  return raw;
}

const logger = {
  debug: (text) => core.debug(text),
  info: (text) => core.info(text),
  warning: (text) => core.warning(text),
};

export async function run(kind) {
  let op;
  try {
    const { Operation, version } = loadCore();
    op = new Operation(kind, collectInputs(kind), undefined);
    const plan = op.plan;
    const token = process.env[inputEnvName('token')] ?? '';
    if (!token.trim()) throw Object.assign(new Error('input `token` is required'), { code: 'invalid-input', input: 'token' });
    core.setSecret(token.trim());
    for (const warning of plan.warnings) core.warning(warning);
    core.info(`leasehold ${version}: ${kind} ${plan.lock} in ${plan.repository} (branch ${plan.stateBranch}) as ${plan.holderId}`);
    const perform = createTransport({
      baseUrl: (process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, ''),
      token: token.trim(),
      repository: plan.repository,
    });
    const outcome = await runOperation({ op, perform, logger });
    const outputs = outputsFor(kind, outcome);
    for (const name of OUTPUTS[kind]) core.setOutput(name, outputs[name] ?? '');
    core.info(finalLine(kind, outcome));
    if (process.env.GITHUB_STEP_SUMMARY) {
      try {
        await core.summary.addRaw(summaryFor(kind, outcome, plan)).write();
      } catch (error) {
        core.warning(`could not write the job summary: ${error.message}`);
      }
    }
    if (!outcome.success) core.setFailed(`leasehold ${kind} ${outcome.result}: ${outcome.error?.message ?? ''}`.trim());
  } catch (error) {
    // Bad input (or a broken core) is reported before anything was sent.
    const where = error.input ? ` [${error.input}]` : '';
    core.setOutput('result', 'failed');
    core.setOutput('error-code', error.code ?? 'internal');
    core.setFailed(`leasehold ${kind}${where}: ${error.message}`);
  } finally {
    op?.free?.();
  }
}
