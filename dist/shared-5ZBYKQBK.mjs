import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);

// actions/lib/constants.mjs
var KNOBS = ["api-max-attempts", "api-retry-base-ms", "api-retry-max-ms"];
var INPUTS = {
  acquire: ["lock", "repository", "state-branch", "token", "holder-suffix", "timeout-minutes", "poll-seconds", "lease-minutes", "release-on-exit", "record-job-id", ...KNOBS],
  release: ["lock", "repository", "state-branch", "token", "holder-suffix", "holder-id", "release-deadline-seconds", ...KNOBS],
  status: ["lock", "repository", "state-branch", "token"],
  renew: ["lock", "repository", "state-branch", "token", "holder-suffix", "holder-id", "nonce", "if-due", ...KNOBS],
  reap: ["lock", "repository", "state-branch", "token", "scan-deadline-seconds", ...KNOBS],
  guard: ["lock", "repository", "state-branch", "token", "holder-suffix", "holder-id", "nonce", "kill-grace-seconds"],
  claim: ["operation", "namespace", "key", "claim-token", "run-id", "run-id-prefix", "no-takeover", "if-due", "metadata", "config", "dry-run", "repository", "token", "holder-suffix"]
};
var OUTPUTS = {
  acquire: ["acquired", "result", "holder-id", "fence", "nonce", "wait-ms", "queue-position", "error-code"],
  release: ["released", "result", "holder-id", "error-code"],
  status: ["capacity", "holders", "waiting", "fence", "state", "result", "error-code"],
  renew: ["renewed", "result", "expires-at", "holder-id", "error-code"],
  reap: ["result", "removed", "renewed", "kept", "report", "error-code"],
  claim: ["token", "run-id", "status", "expires-at", "exit-code", "result"]
};
var CONTEXT = ["GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "RUNNER_NAME", "GITHUB_SERVER_URL"];
var inputEnvName = (name) => `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;

// actions/lib/input-error.mjs
var ENVIRONMENT_NAME = /^[A-Z][A-Z0-9_]*$/;
var actionInput = (name) => `input \`${name}\``;
var cliFlag = (name) => `--${name}`;
function named(name, nameOf) {
  return ENVIRONMENT_NAME.test(name) ? `environment variable ${name}` : nameOf(name);
}
function describeInputError(error, nameOf) {
  if (error.code !== "invalid-input" || !error.input || !error.rule) return error.message;
  return `${named(error.input, nameOf)} ${error.rule}${error.value ? ` (got ${JSON.stringify(error.value)})` : ""}`;
}
function describeInputWarning(warning, nameOf) {
  const match = /^`([^`]+)`/.exec(warning);
  return match ? `${named(match[1], nameOf)}${warning.slice(match[0].length)}` : warning;
}

export {
  INPUTS,
  OUTPUTS,
  CONTEXT,
  inputEnvName,
  actionInput,
  cliFlag,
  describeInputError,
  describeInputWarning
};
