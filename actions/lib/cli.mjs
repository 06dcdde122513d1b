// leasehold's command line: the same core (the same wasm) as the actions.
//
//   node dist/cli.mjs guard --lock L --nonce N [options] -- command [args...]
//   node dist/cli.mjs renew --lock L --nonce N [--if-due] [options]
//   node dist/cli.mjs reap --lock L [--lock L2 ...] [--scan-deadline-seconds N] [options]
//
// Options: --repository owner/name, --state-branch B, --holder-id ID, --holder-suffix S,
// --kill-grace-seconds N (guard). Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN),
// GITHUB_API_URL, and the run context (GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT,
// GITHUB_JOB, RUNNER_NAME) that the holder id is built from.
//
// Output: JSON lines on stdout (guard: one before spawning the child, one after it exits;
// renew: the outcome); human-readable log lines on stderr.
// Exit codes: guard passes the child's own exit code through (128 + signal number when a signal
// ended it, 127 when it could not be started); 70 the holding was lost and the child was
// stopped; 71 the local deadline passed without a proven renewal and the child was stopped;
// 72 the holding could not be verified at start (the child never ran); 64 bad usage (the core's
// guard::EXIT_CODES). The child's environment carries no credential (GITHUB_TOKEN,
// LEASEHOLD_TOKEN, nor any variable holding the token's value).
// renew: 0 renewed or not due, 1 otherwise. reap: one JSON line (the verdicts), 0 when every
// entry was judged, 1 otherwise (the scan deadline passed, or GitHub refused).
import { CONTEXT } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { checkGuardInputs, guard } from './guard.mjs';
import { slots } from './slots.mjs';
import { loadCore } from './wasm.mjs';

const FLAGS = ['lock', 'repository', 'state-branch', 'holder-id', 'holder-suffix', 'nonce', 'kill-grace-seconds', 'scan-deadline-seconds', 'api-max-attempts', 'api-retry-base-ms', 'api-retry-max-ms'];

function parseArgs(args) {
  const inputs = {};
  let command = [];
  let ifDue = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      command = args.slice(i + 1);
      break;
    }
    if (a === '--if-due') ifDue = true;
    else if (a === '--lock' && inputs.lock !== undefined && i + 1 < args.length) inputs.lock += `\n${args[++i]}`; // reap: several locks
    else if (a.startsWith('--') && FLAGS.includes(a.slice(2)) && i + 1 < args.length) inputs[a.slice(2)] = args[++i];
    else throw usage(`unknown or incomplete option ${JSON.stringify(a)}`);
  }
  if (ifDue) inputs['if-due'] = 'true';
  return { inputs, command };
}

/**
 * An error's message as a command-line user reads it: the core names a bad input by its own name
 * (`lock`, `GITHUB_RUN_ID`); here that is a flag or an environment variable.
 */
function errorMessage(error) {
  if (error.code !== 'invalid-input' || !error.input || !error.rule) return error.message;
  const name = FLAGS.includes(error.input) || error.input === 'if-due' ? `--${error.input}` : `environment variable ${error.input}`;
  return `${name} ${error.rule}${error.value ? ` (got ${JSON.stringify(error.value)})` : ''}`;
}

function usage(message) {
  return Object.assign(new Error(`${message}\nusage: leasehold guard --lock L --nonce N [options] -- command [args...]\n       leasehold renew --lock L --nonce N [--if-due] [options]
       leasehold reap --lock L [--lock L2 ...] [--scan-deadline-seconds N] [options]`), { usage: true });
}

const logger = {
  debug: (t) => (process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : undefined),
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`),
};
const emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

async function main(argv) {
  const [verb, ...rest] = argv;
  if (verb === 'slots') return slots(rest);
  if (!['guard', 'renew', 'reap'].includes(verb)) throw usage(`unknown command ${JSON.stringify(verb ?? '')}`);
  const { inputs, command } = parseArgs(rest);
  for (const name of CONTEXT) if (process.env[name]) inputs[name] = process.env[name];
  const token = (process.env.LEASEHOLD_TOKEN || process.env.GITHUB_TOKEN || '').trim();
  if (!token) throw usage('set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can write the lock repository');
  const core = loadCore();
  if (verb === 'reap') return reap(core, inputs, token);
  if (verb === 'guard' && command.length === 0) throw usage('guard needs a command after --');
  if (verb === 'guard' && inputs['if-due']) throw usage('--if-due is for renew: a guard renews on the lease\'s own schedule');
  // Every input is checked before anything is sent.
  const { plan, machine } = checkGuardInputs(core, inputs);
  for (const w of plan.warnings) logger.warning(w);
  const perform = createTransport({ baseUrl: apiBaseUrl(), token, repository: plan.repository });
  if (verb === 'renew') {
    const op = new core.Operation('renew', inputs, undefined);
    const outcome = await runOperation({ op, perform, logger });
    emit({ event: 'renew', result: outcome.result, lock: outcome.lock, holderId: outcome.holderId, lease: outcome.lease ?? null, error: outcome.error ?? null });
    return outcome.success ? 0 : 1;
  }
  const { exitCode } = await guard({ core, machine, inputs, argv: command, perform, emit, logger, secrets: [token] });
  return exitCode;
}

async function reap(core, inputs, token) {
  const op = new core.Operation('reap', inputs, undefined); // checks every input before anything is sent
  const plan = op.plan;
  for (const w of plan.warnings) logger.warning(w);
  const perform = createTransport({ baseUrl: apiBaseUrl(), token, repository: plan.repository });
  const outcome = await runOperation({ op, perform, logger });
  emit({ event: 'reap', result: outcome.result, locks: plan.lock, reaped: outcome.reaped ?? [], error: outcome.error ?? null, stats: outcome.stats });
  return outcome.success ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`leasehold: ${error.input ? `[${error.input}] ` : ''}${errorMessage(error)}`);
    process.exitCode = error.usage || error.code === 'invalid-input' ? loadCore().exitCodes.usage : 1;
  },
);
