// `leasehold claims <verb>`: per-item claims on git refs. Each verb is a core operation
// (`claim`, `claim-renew`, …): this module turns flags into the core's inputs, reads the
// --config file (the core parses and checks its text), runs the operation and prints the one
// result document the core builds. `claims guard` runs a command under a claim with the core's
// guard machine; its documents go to stderr (stdout is the command's).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { FORWARDED, guard } from './guard.mjs';
import { context, credential, KNOBS, logger, parseFlags, print, shellQuote, Usage, warningMessage } from './cli-common.mjs';

const COMMON = ['repository', 'config', ...KNOBS];
const ENVIRONMENT = `Common: --repository owner/name (default GITHUB_REPOSITORY), --config FILE (the reviewed
claims config: lease policy per namespace; default: the built-in lease),
--api-max-attempts N, --api-retry-base-ms N, --api-retry-max-ms N, --help.
Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB …) recorded in the claim when present.
Output: one JSON document on stdout (schema, command, status, exitCode, action, claim, next,
error); the exit code is the document's, from the one exit-code table.`;

/** The claims verbs: the core operation, the flags, the usage text. */
const VERBS = {
  claim: {
    kind: 'claim',
    strings: ['namespace', 'key', 'run-id-prefix', 'run-id'],
    multiple: ['set'],
    booleans: ['no-takeover', 'dry-run'],
    usage: `claims claim --namespace NS --key K [--run-id-prefix P] [--no-takeover] [--set k=v]… [--dry-run]
Claims one item: absent or released → acquired; held past expiry and grace → taken-over (with
--no-takeover: expired, 11, naming the oid a takeover needs); held and live → contended (10,
with eligibleAt); this job's own → already-held (10). The run id (P-<nonce>) is generated here:
--run-id is refused.`,
  },
  takeover: {
    kind: 'claim-takeover',
    strings: ['namespace', 'key', 'supersedes', 'run-id-prefix', 'run-id'],
    multiple: ['set'],
    booleans: ['dry-run'],
    usage: `claims takeover --namespace NS --key K --supersedes OID [--run-id-prefix P] [--set k=v]… [--dry-run]
Takes an expired holding over, only if the ref is still at OID (the oid claim --no-takeover printed).`,
  },
  renew: {
    kind: 'claim-renew',
    strings: ['namespace', 'key', 'token', 'run-id', 'repository-id', 'prior', 'clock-offset'],
    multiple: ['set'],
    booleans: ['if-due', 'dry-run'],
    usage: `claims renew --namespace NS --key K --token OID --run-id ID [--if-due] [--set k=v]… [--dry-run]
             [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]]
Renews this run's holding: a new version, a new token (read it from the document's next), its
expiry moved, never past the ceiling (at the ceiling: stale, 16). --if-due writes only once
renewAfter has passed (else not-due, 0). --repository-id and --prior, as the last document's
next line prints them, save the read; --clock-offset (printed beside them) is GitHub's clock as
the last command measured it, so the lease is stamped by GitHub's time before any answer.`,
  },
  release: {
    kind: 'claim-release',
    strings: ['namespace', 'key', 'token', 'run-id', 'repository-id', 'prior', 'clock-offset'],
    booleans: ['dry-run'],
    usage: `claims release --namespace NS --key K --token OID --run-id ID [--dry-run] [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]]
Releases this run's holding (writes a released version; never deletes the ref). A repeat is
already-released (0); a token one or more renewals old is stale (16), naming the current one.`,
  },
  verify: {
    kind: 'claim-verify',
    strings: ['namespace', 'key', 'token', 'run-id'],
    booleans: ['dry-run'],
    usage: `claims verify --namespace NS --key K --token OID --run-id ID
Reads only: held (0); inside the last minRemaining before the expiry (the ceiling, once the
expiry reaches it) renew-required (15);
an older token of this run's stale (16); another run's lost (13); released or absent not-held (14).`,
  },
  read: {
    kind: 'claim-read',
    strings: ['namespace', 'key'],
    booleans: ['dry-run'],
    usage: `claims read --namespace NS --key K
The claim as it is (ok, 0): its token and payload, or no token when the ref does not exist.`,
  },
  list: {
    kind: 'claim-list',
    strings: ['namespace'],
    booleans: ['stale', 'dry-run'],
    usage: `claims list --namespace NS [--stale]
Every claim of the namespace, every page read. --stale: only the holdings a claim would take
over (past their expiry, grace and skew), status expired.`,
  },
  adopt: {
    kind: 'claim-adopt',
    strings: ['namespace', 'key', 'run-id', 'candidate'],
    booleans: ['dry-run'],
    usage: `claims adopt --namespace NS --key K --run-id ID [--candidate OID]
After an unknown outcome (12): proves from the head's payload (its run id) whether the write was
this run's: adopted (0) with the token, else lost (13). Run it as the failed document printed it.`,
  },
  'family claim': {
    kind: 'claim-family-claim',
    strings: ['namespace', 'keys', 'run-id-prefix', 'run-id'],
    multiple: ['set'],
    booleans: ['dry-run'],
    usage: `claims family claim --namespace NS --keys K1,K2,… [--run-id-prefix P] [--set k=v]… [--dry-run]
Claims up to 20 keys of one namespace in one updateRefs call: all of them or none
(family-aborted, 10, when one is held by another run).`,
  },
  'family renew': {
    kind: 'claim-family-renew',
    strings: ['namespace', 'keys', 'tokens', 'run-id'],
    multiple: ['set'],
    booleans: ['if-due', 'dry-run'],
    usage: `claims family renew --namespace NS --keys K1,K2,… --tokens T1,T2,… --run-id ID [--if-due] [--set k=v]… [--dry-run]
Renews a family in one updateRefs call, every member or none (tokens in the order of the keys;
each rotates: read them from the document's next). --if-due writes once any member is due. A
member lost, released or stale decides for the family (lost 13, not-held 14, stale 16).`,
  },
  'family release': {
    kind: 'claim-family-release',
    strings: ['namespace', 'keys', 'tokens', 'run-id'],
    booleans: ['dry-run'],
    usage: `claims family release --namespace NS --keys K1,K2,… --tokens T1,T2,… --run-id ID [--dry-run]
Releases a family in one updateRefs call (tokens in the order of the keys): every member still
this run's at its token. A member taken over (not-held, 14) or renewed since (stale, 16) is named
and decides the status; the others are released all the same.`,
  },
  guard: {
    kind: 'claim-renew',
    strings: ['namespace', 'key', 'token', 'keys', 'tokens', 'run-id', 'repository-id', 'prior', 'clock-offset', 'kill-grace-seconds'],
    booleans: ['dry-run'],
    child: true,
    usage: `claims guard --namespace NS (--key K --token OID | --keys K1,K2,… --tokens T1,T2,…) --run-id ID
             [--kill-grace-seconds N] [--repository-id ID --prior JSON [--clock-offset LOW,HIGH]] -- command [args…]
Verifies the claim (or the family: --keys and --tokens, as family claim printed them) with a
renewal, runs the command (no shell, its own process group, no
credential in its environment), renews on the lease's schedule (each renewal rotates the token;
the guard keeps the current one) and stops the group (SIGTERM, SIGKILL after the kill grace)
when the claim is proven lost or the local deadline passes unproven. A family is renewed in one
updateRefs call, every member together; any member lost stops the command. Its documents go to stderr
(guard-start, then guard-exit or guard-refused; the last one's next carries the current token);
stdout is the command's. Exit: the command's own code (128 + n: signal n; 127: it could not
start); 13 lost or local deadline (the document's reason says which); 14 not held at start;
2 usage. A command's own code can collide with these: read the document.`,
  },
};

/** `claims family claim` → the verb's name and the rest of the words. */
function verbOf(argv) {
  if (argv[0] === 'family' && ['claim', 'release', 'renew'].includes(argv[1])) return [`family ${argv[1]}`, argv.slice(2)];
  return [argv[0], argv.slice(1)];
}

/** The invocation the `next` lines start with: this node and this script, quoted. */
const invocation = () => [process.execPath, resolve(process.argv[1])].map(shellQuote).join(' ');

/** The core's inputs from the flags: the config file's text, booleans as "true". */
function inputsOf(values, env) {
  const inputs = { ...context(env), invocation: invocation() };
  for (const [name, value] of Object.entries(values)) {
    if (name === 'help' || name === 'kill-grace-seconds') continue;
    if (name === 'config') {
      const path = resolve(value);
      try {
        inputs.config = readFileSync(path, 'utf8');
      } catch (error) {
        throw Object.assign(new Error(`--config ${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`), { code: 'invalid-config', path });
      }
      inputs['config-path'] = path;
    } else if (value === true) inputs[name] = 'true';
    else if (Array.isArray(value)) inputs[name] = value.join('\n');
    else inputs[name] = value;
  }
  return inputs;
}

export function helpText() {
  return Object.entries(VERBS)
    .map(([, v]) => `  leasehold ${v.usage.split('\n')[0]}`)
    .join('\n');
}

/** The `claims` command of the CLI. */
export const CLAIMS_COMMAND = {
  summary: 'per-item claims on git refs: claim, renew, release, verify, read, list, takeover, adopt, family claim|renew|release, guard',
  usage: `leasehold claims <verb> [flags]   (leasehold claims <verb> --help for one)

${helpText()}

${ENVIRONMENT}`,
  verbs: VERBS,
  verbOf,
  /** The document's `command`: `claims <verb>`. */
  commandName: (argv) => `claims ${verbOf(argv)[0] ?? ''}`.trim(),
  async run({ core, argv, env }) {
    const [name, rest] = verbOf(argv);
    const verb = VERBS[name];
    if (!verb) throw new Usage(`unknown claims verb ${JSON.stringify(argv.slice(0, 2).join(' '))} (known: ${Object.keys(VERBS).join(', ')})`);
    const { values, child } = parseFlags(rest, { strings: [...COMMON, ...verb.strings], multiple: verb.multiple ?? [], booleans: verb.booleans ?? [], child: verb.child });
    if (values.help) {
      process.stdout.write(`usage: leasehold ${verb.usage}\n\n${ENVIRONMENT}\n`);
      return 0;
    }
    if (name === 'guard') return claimsGuard({ core, values, child, env });
    const inputs = inputsOf(values, env);
    const op = new core.Operation(verb.kind, inputs, undefined); // every input checked before anything is sent
    try {
      for (const w of op.plan.warnings) logger.warning(warningMessage(w));
      const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: op.plan.repository });
      // Ctrl-C, a kill, a closed terminal: the core writes nothing more (a release goes on) and
      // the document says what landed. Each is heard once; a second one ends the process.
      const cancel = new AbortController();
      const onSignal = () => cancel.abort();
      for (const s of FORWARDED) process.once(s, onSignal);
      try {
        const outcome = await runOperation({ op, perform, logger, cancel: cancel.signal });
        const doc = core.resultDocument(`claims ${name}`, outcome);
        print(doc);
        return doc.exitCode;
      } finally {
        for (const s of FORWARDED) process.off(s, onSignal);
      }
    } finally {
      op.free?.();
    }
  },
};

/** `claims guard`: the core's guard machine around claim renewals; what it prints is the core's
 *  (`GuardReport`), on stderr. */
async function claimsGuard({ core, values, child, env }) {
  if (values['dry-run']) throw new Usage('claims guard has no --dry-run: it runs the command');
  if (child.length === 0) throw new Usage('claims guard needs a command after --');
  // A family's renewals renew every member in one updateRefs call. Every input is checked before
  // anything is sent, the renewals' and the guard's own (a family's guard takes no --key).
  const family = values.keys !== undefined || values.tokens !== undefined;
  const report = new core.GuardReport(family ? 'claim-family-renew' : 'claim-renew', inputsOf(values, env));
  const machine = new core.Guard(values['kill-grace-seconds'] ? { 'kill-grace-seconds': values['kill-grace-seconds'] } : {});
  const { plan } = report;
  for (const w of plan.warnings) logger.warning(warningMessage(w));
  const token = credential(env);
  const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: plan.repository });
  const { exitCode } = await guard({ core, machine, report, argv: child, perform, emit: (doc) => print(doc, process.stderr), logger, secrets: [token] });
  return exitCode;
}
