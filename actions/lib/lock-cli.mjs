// The lock verbs of the command line: acquire, release, status, renew, reap, guard, report-usage, recover. Each prints
// the core's result document (the guard its own documents) and exits with the code of the
// core's one exit-code table. acquire, release and status take the flags their actions take as
// inputs (constants.mjs), so the two cannot drift apart.
import { INPUTS } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { checkGuardInputs, FORWARDED, guard } from './guard.mjs';
import { context, credential, KNOBS, logger, print, Usage, warningMessage } from './cli-common.mjs';
import { statusView } from './status-view.mjs';

const IDENTITY = ['lock', 'repository', 'state-branch', 'holder-id', 'holder-suffix', 'nonce'];
const ENVIRONMENT = `Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB, RUNNER_NAME) the holder id
is built from.`;

/** Raw inputs for the core from parsed flags: strings as given, booleans as "true". */
function inputsOf(values, env) {
  const inputs = { ...context(env) };
  for (const [name, value] of Object.entries(values)) {
    if (name === 'help') continue;
    if (value === true) inputs[name] = 'true';
    else if (Array.isArray(value)) inputs[name] = value.join('\n');
    else if (typeof value === 'string') inputs[name] = value;
  }
  return inputs;
}

/**
 * Runs one operation and prints its result document (or, with `show`, what `show(doc)` returns
 * instead); returns the document's exit code.
 */
async function once(core, kind, inputs, env, show) {
  const op = new core.Operation(kind, inputs, undefined); // every input checked before anything is sent
  try {
    const plan = op.plan;
    for (const w of plan.warnings) logger.warning(warningMessage(w));
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: plan.repository });
    // Ctrl-C, a kill, a closed terminal (SIGHUP) or Windows' Ctrl-Break: the core leaves the
    // queue (or the holding it just took) before the command exits. Each is heard once; a second
    // one ends the process as it would without leasehold.
    const cancel = new AbortController();
    const onSignal = () => cancel.abort();
    for (const s of FORWARDED) process.once(s, onSignal);
    try {
      const outcome = await runOperation({ op, perform, logger, cancel: cancel.signal });
      const doc = core.resultDocument(kind, outcome);
      if (show) process.stdout.write(show(doc, plan));
      else print(doc);
      return doc.exitCode;
    } finally {
      for (const s of FORWARDED) process.off(s, onSignal);
    }
  } finally {
    op.free?.();
  }
}

/** An action's inputs as flags: every input but the token (which comes from the environment). */
const flagsOf = (kind, skip = []) => INPUTS[kind].filter((n) => n !== 'token' && !skip.includes(n));

export const LOCK_COMMANDS = {
  acquire: {
    summary: 'take a slot of a lock, waiting in its queue (one document: acquired, timeout, …)',
    flags: { strings: flagsOf('acquire', ['release-on-exit']) },
    usage: `leasehold acquire --lock L [--timeout-minutes N] [--poll-seconds N] [--lease-minutes N]
                  [--record-job-id true|false (default false)] [--check-run-id N] [--repository owner/name]
                  [--state-branch B] [--holder-suffix S] [--api-max-attempts N …]

Takes a slot, waiting in the lock's queue up to --timeout-minutes (0 tries once); SIGINT or
SIGTERM while waiting leaves the queue (cancelled). The flags are the acquire action's inputs
(README "acquire inputs"); there is no post step here: release yourself (or let the lease run
out). Prints one result document (outcome.fence, outcome.nonce for renew and guard); exits by
the table (0 acquired, 10 timeout or cancelled, 3 a broken config, 20 transport, …).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'acquire', inputsOf(values, env), env),
  },
  release: {
    summary: 'give a lock slot back, or leave its queue (released, queue-cleaned, noop)',
    flags: { strings: flagsOf('release') },
    usage: `leasehold release --lock L [--holder-id ID | --holder-suffix S] [--release-deadline-seconds N]
                  [--check-run-id N] [--repository owner/name] [--state-branch B] [--api-max-attempts N …]

Removes exactly this holder's holding or queue entry (the holder id is built from the run context
as acquire built it, or given). Idempotent. Prints one result document; exits by the table
(0 released, queue-cleaned or noop; 12 the state could not be updated in time, …).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'release', inputsOf(values, env), env),
  },
  status: {
    summary: 'show a lock: holders, queue and timeline (JSON when piped or with --json)',
    flags: { strings: flagsOf('status'), booleans: ['json', 'human'] },
    usage: `leasehold status --lock L [--json | --human] [--repository owner/name] [--state-branch B]

Reads the lock without changing it. At a terminal it prints its holders, queue and a timeline
of who held it when; piped, or with --json, the one result document (outcome.state is the
state); --human prints the terminal view anywhere. Exits by the table (0, 16 a state it cannot
read, 21 refused, …).
${ENVIRONMENT}`,
    run({ core, values, env }) {
      if (values.json && values.human) throw new Usage('--json and --human exclude each other');
      const human = values.human || (!values.json && process.stdout.isTTY);
      const { json: _j, human: _h, ...rest } = values;
      return once(core, 'status', inputsOf(rest, env), env, human ? (doc, plan) => statusView(doc, plan, Date.now()) : undefined);
    },
  },
  renew: {
    summary: 'extend a lock holding\'s lease (one document: renewed, not-due, lost…)',
    flags: { strings: [...IDENTITY, 'outcome', 'retry-at', ...KNOBS], booleans: ['if-due'] },
    usage: `leasehold renew --lock L --nonce N [--if-due] [--repository owner/name] [--state-branch B]
                [--holder-id ID | --holder-suffix S] [--outcome success|rate-limited [--retry-at T]]
                [--api-max-attempts N …]

Extends this claim's lease (the holding acquire made, told by its nonce), never past its
ceiling. --if-due writes only once the renewal is due. On a pool, --outcome says how the work on
the granted resource goes: rate-limited backs the resource off (until --retry-at, else 15 minutes
doubling per consecutive hit, up to 5 hours), success resets it. Prints one result document; exits by the
exit-code table (0 renewed or not-due, 13 lost, 20 transport, …).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'renew', inputsOf(values, env), env),
  },
  'report-usage': {
    summary: 'record a usage reading of one resource of a pool (used fraction, window, observed at, status)',
    flags: { strings: ['lock', 'repository', 'state-branch', 'resource', 'used', 'window-start', 'reset-at', 'observed-at', 'status', ...KNOBS] },
    usage: `leasehold report-usage --lock L --resource R --used F --window-start T --reset-at T
                --observed-at T [--status allowed|throttled|rejected] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N …]

Records a usage reading of resource R of pool L: the used fraction F of its window (0 to 1), the
window's start and reset, and when it was observed (times in UTC, YYYY-MM-DDTHH:MM:SSZ). An
older reading never replaces a newer one (noop); a reading observed over 45 minutes ago, or of a
window that has reset, counts for nothing. Prints one result document; exits by the exit-code
table (0 recorded or noop, 3 the lock is not a pool or declares no such resource, 20 transport).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'report-usage', inputsOf(values, env), env),
  },
  recover: {
    summary: "an operator's recovery: a quarantine becomes a cooldown, or the lock's incident ends (nothing written on a wrong id)",
    flags: { strings: flagsOf('recover', ['resource-safe', 'confirmed']), booleans: ['resource-safe', 'confirmed'] },
    usage: `leasehold recover --operation recover --lock L --reservation-id ID --resource-safe
                [--repository owner/name] [--state-branch B] [--api-max-attempts N …]
leasehold recover --operation recover-incident --lock L [--incident-id ID] --confirmed
                [--repository owner/name] [--state-branch B] [--api-max-attempts N …]

For an operator (docs/lifecycle.md). recover: once you checked the resource is clean, the
quarantine with exactly this id becomes a cooldown of the lock's cooldownSeconds (it is never
freed outright). recover-incident: once the incident's cause is resolved, the lock's incident
ends (the one with --incident-id, or, omitted, the one standing when the state is read; its id
is compared again before the write). Without --resource-safe or --confirmed, with a wrong id or
no incident, nothing is written. Prints one result document; exits by the exit-code table (0
recovered or incident-recovered, 22 refused, 20 transport, 21 permission).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'recover', inputsOf(values, env), env),
  },
  reap: {
    summary: 'free what dead jobs left in one or more locks, proven from the Actions API',
    flags: { strings: ['repository', 'state-branch', 'scan-deadline-seconds', ...KNOBS], multiple: ['lock'] },
    usage: `leasehold reap --lock L [--lock L2 …] [--scan-deadline-seconds N] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N …]

Removes holdings and queue entries whose run attempt (or job) the Actions API proves over. Prints
one result document (its outcome.reaped lists every verdict); exits 0 when every entry was
judged, else by the table (20: the scan deadline passed; 21: GitHub refused).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'reap', inputsOf(values, env), env),
  },
  repair: {
    summary: 'rewrite a broken lock state as a valid empty one, fences kept increasing (dry run without --confirm)',
    flags: { strings: ['lock', 'repository', 'state-branch', ...KNOBS], booleans: ['confirm'] },
    usage: `leasehold repair --lock L [--confirm] [--repository owner/name] [--state-branch B]

For an operator, when a lock's state file (locks/<lock>.json on the state branch) was broken by
hand and every verb stops on it (status stale, 16). Reads the current version: valid or absent,
nothing to do (noop). Broken: lists every commit of the state branch that changed the file, reads
each version and takes the highest fence any of them handed out (a version that does not parse
is skipped and counted), and rewrites the file as an empty state whose fence counter is that
fence, so the next fence is above every fence ever handed out. Holders and waiters in the broken
file are dropped: their jobs must acquire again. Without --confirm it is a dry run: the document
(status would-repair) says what would be written, and nothing is. The write is a
compare-and-swap on the broken version: if the file changed meanwhile, nothing is written
(contended, 10). Prints one result document; exits by the exit-code table (docs/operations.md).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'repair', inputsOf(values, env), env),
  },
  guard: {
    summary: 'run a command under a lock holding, renewing it, stopping the command if it is lost',
    flags: { strings: [...IDENTITY, 'kill-grace-seconds', ...KNOBS], child: true },
    usage: `leasehold guard --lock L --nonce N [--kill-grace-seconds N] [--repository owner/name]
                [--state-branch B] [--holder-id ID | --holder-suffix S] -- command [args…]

Verifies the holding with a renewal, runs the command (no shell, its own process group), renews
on the lease's schedule and stops the group (SIGTERM, SIGKILL after the kill grace) when the
holding is proven lost or the local deadline passes unproven. Prints a guard-start line before
the command runs and a guard-exit (or guard-refused) line at the end, on stdout beside the
command's own output. Exit: the command's own code (128 + n when signal n ended it, 127 when it
could not start); 13 lost or the local deadline passed (the line's reason says which); 14 the
holding could not be verified (the command never ran); 2 usage. The command's environment
carries no credential.
${ENVIRONMENT}`,
    async run({ core, values, child, env }) {
      if (child.length === 0) throw new Usage('guard needs a command after --');
      const inputs = inputsOf(values, env);
      const { report, plan, machine } = checkGuardInputs(core, inputs); // every input checked before anything is sent
      for (const w of plan.warnings) logger.warning(warningMessage(w));
      const token = credential(env);
      const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: plan.repository });
      const { exitCode } = await guard({ core, machine, report, argv: child, perform, emit: (doc) => print(doc), logger, secrets: [token] });
      return exitCode;
    },
  },
};
