// The lock verbs of the command line: guard, renew, reap. Each prints the core's result
// document (renew, reap) or the guard's documents, and exits with the code of the core's one
// exit-code table.
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { checkGuardInputs, guard } from './guard.mjs';
import { context, credential, KNOBS, logger, parseFlags, print, Usage, warningMessage } from './cli-common.mjs';

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

async function once(core, kind, inputs, env) {
  const op = new core.Operation(kind, inputs, undefined); // every input checked before anything is sent
  try {
    const plan = op.plan;
    for (const w of plan.warnings) logger.warning(warningMessage(w));
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: plan.repository });
    const outcome = await runOperation({ op, perform, logger });
    const doc = core.resultDocument(kind, outcome);
    print(doc);
    return doc.exitCode;
  } finally {
    op.free?.();
  }
}

export const LOCK_COMMANDS = {
  renew: {
    summary: 'extend a lock holding\'s lease (one document: renewed, not-due, lost…)',
    flags: { strings: [...IDENTITY, ...KNOBS], booleans: ['if-due'] },
    usage: `leasehold renew --lock L --nonce N [--if-due] [--repository owner/name] [--state-branch B]
                [--holder-id ID | --holder-suffix S] [--api-max-attempts N …]

Extends this claim's lease (the holding acquire made, told by its nonce), never past its
ceiling. --if-due writes only once the renewal is due. Prints one result document; exits by the
exit-code table (0 renewed or not-due, 13 lost, 20 transport, …).
${ENVIRONMENT}`,
    run: ({ core, values, env }) => once(core, 'renew', inputsOf(values, env), env),
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
      const { plan, machine } = checkGuardInputs(core, inputs); // every input checked before anything is sent
      for (const w of plan.warnings) logger.warning(warningMessage(w));
      const token = credential(env);
      const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: plan.repository });
      const { exitCode } = await guard({ core, machine, inputs, argv: child, perform, emit: (doc) => print(doc), logger, secrets: [token] });
      return exitCode;
    },
  },
};
