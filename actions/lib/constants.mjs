// Names of inputs, outputs and context variables, in one place.

// Retry knobs, shared by every action that talks to GitHub.
const KNOBS = ['api-max-attempts', 'api-retry-base-ms', 'api-retry-max-ms'];

export const INPUTS = {
  acquire: ['lock', 'repository', 'state-branch', 'token', 'holder-suffix', 'timeout-minutes', 'poll-seconds', 'lease-minutes', 'release-on-exit', 'record-job-id', 'check-run-id', 'pull-request', 'expected-head-sha', 'prefer', 'requires', 'partition', 'affinity', ...KNOBS],
  release: ['lock', 'repository', 'state-branch', 'token', 'holder-suffix', 'holder-id', 'check-run-id', 'release-deadline-seconds', 'outcome', 'retry-at', 'cleanup', 'health', 'reason', ...KNOBS],
  // A release whose report is the cleanup command's (actions/cleanup).
  cleanup: ['lock', 'repository', 'state-branch', 'token', 'holder-suffix', 'holder-id', 'check-run-id', 'command', 'timeout-seconds', 'kill-grace-seconds', 'blocked-exit-code', 'job-status', 'release-deadline-seconds', 'outcome', 'retry-at', ...KNOBS],
  status: ['lock', 'repository', 'state-branch', 'token'],
  renew: ['lock', 'repository', 'state-branch', 'token', 'holder-suffix', 'holder-id', 'nonce', 'if-due', 'outcome', 'retry-at', ...KNOBS],
  reap: ['lock', 'repository', 'state-branch', 'token', 'scan-deadline-seconds', ...KNOBS],
  guard: ['lock', 'repository', 'state-branch', 'token', 'holder-suffix', 'holder-id', 'nonce', 'kill-grace-seconds'],
  'report-usage': ['lock', 'repository', 'state-branch', 'token', 'resource', 'used', 'window-start', 'reset-at', 'observed-at', 'status', ...KNOBS],
  claim: ['operation', 'namespace', 'key', 'claim-token', 'run-id', 'run-id-prefix', 'no-takeover', 'supersedes', 'candidate', 'if-due', 'metadata', 'config', 'dry-run', 'repository', 'token', 'holder-suffix'],
  receipt: ['operation', 'number', 'repository', 'run-id', 'head-sha', 'runs', 'heads', 'job-status', 'app-logins', 'token', 'job-token', ...KNOBS],
  'check-head': ['pull-request', 'expected-head-sha', 'repository', 'token', ...KNOBS],
  audit: ['check', 'repository', 'workflow-repository', 'workflow', 'max-age-minutes', 'max-running-minutes', 'token', 'job-token', ...KNOBS],
  recover: ['operation', 'lock', 'repository', 'state-branch', 'token', 'reservation-id', 'resource-safe', 'incident-id', 'confirmed', ...KNOBS],
  // actions/run's first step checks these (its own inputs, by its own names) for every later step.
  'run-check': ['lock', 'repository', 'state-branch', 'holder-suffix', 'timeout-minutes', 'poll-seconds', 'lease-minutes', 'record-job-id', 'check-run-id', 'command', 'cleanup-command', 'cleanup-timeout-seconds', 'blocked-exit-code', 'kill-grace-seconds', 'release-deadline-seconds'],
};

export const OUTPUTS = {
  acquire: ['acquired', 'result', 'holder-id', 'fence', 'nonce', 'wait-ms', 'queue-position', 'error-code', 'resource', 'resource-tags', 'incident-id'],
  release: ['released', 'result', 'holder-id', 'error-code', 'cleanup-result', 'reservation-id', 'incident-id', 'report-degraded', 'report-validation-error'],
  status: ['capacity', 'holders', 'waiting', 'fence', 'state', 'result', 'error-code'],
  renew: ['renewed', 'result', 'expires-at', 'holder-id', 'error-code'],
  reap: ['result', 'removed', 'renewed', 'kept', 'report', 'error-code'],
  'report-usage': ['result', 'resource', 'error-code'],
  claim: ['token', 'run-id', 'status', 'expires-at', 'exit-code', 'result'],
  receipt: ['skip', 'status', 'reason', 'identity', 'comment-id', 'warnings', 'detail', 'exit-code', 'result'],
  'check-head': ['result', 'head-sha', 'status', 'detail', 'exit-code', 'document'],
  audit: ['status', 'issue', 'problem', 'detail', 'exit-code', 'result'],
  recover: ['result', 'reservation-id', 'incident-id', 'error-code'],
};

// actions/cleanup's outputs are release's (its operation is a release).
OUTPUTS.cleanup = OUTPUTS.release;

// Run context the core needs, by environment variable name.
export const CONTEXT = ['GITHUB_REPOSITORY', 'GITHUB_RUN_ID', 'GITHUB_RUN_ATTEMPT', 'GITHUB_JOB', 'RUNNER_NAME', 'GITHUB_SERVER_URL'];

// How the runner names an input's environment variable.
export const inputEnvName = (name) => `INPUT_${name.replace(/ /g, '_').toUpperCase()}`;

// Environment variables a step leaves for later steps of its job start with this (the core
// names them: CARRY_ENV_PREFIX in crates/leasehold-core/src/policy/limits.rs).
export const CARRY_PREFIX = 'LEASEHOLD_CARRY_';
