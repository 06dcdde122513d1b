// `leasehold slots allocate`: the next never-recycled slot number of a namespace and prefix,
// allocated by creating refs/leasehold/slots/<namespace>/<prefix><NN>. Every decision (the
// listing, the number, what an answer means, the exit code) is the core's (ops/slots.rs); this
// file reads the command line, performs the core's requests and prints its one document.
//
//   node dist/cli.mjs slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]
//
// stdout: exactly one JSON document ({schema, command, status, exitCode, action, slot, next,
// error}); stderr: log lines. Exit code: the document's exitCode (the core's exit table).
import { parseArgs } from 'node:util';
import { CONTEXT } from './constants.mjs';
import { runOperation } from './driver.mjs';
import { apiBaseUrl, createTransport } from './github.mjs';
import { loadCore } from './wasm.mjs';

const COMMAND = 'slots allocate';

const USAGE_LINE = 'leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]';

export const SLOTS_USAGE = `usage: leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]

Allocates the next number of a namespace and prefix by creating
refs/leasehold/slots/<namespace>/<prefix><NN> (first writer wins): NN is one past the highest
number of the whole listing, zero-padded to two digits at least. A number is never re-issued
and a slot ref is never deleted.

  --namespace N     [A-Za-z0-9._-]{1,100}
  --prefix P        [A-Za-z0-9._-]{1,64}, not ending in a digit
  --repository R    owner/name holding the refs (default: GITHUB_REPOSITORY)
  --dry-run         read the listing, print the number that would be tried first, write nothing
  --help            this text

Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL.
stdout: one JSON document; exit code: its exitCode (0 allocated, 2 usage, 10 contended,
12 unknown outcome, 16 stale, 20 transport, 21 permission).`;

const OPTIONS = {
  namespace: { type: 'string' },
  prefix: { type: 'string' },
  repository: { type: 'string' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean' },
};

const log = {
  debug: (t) => (process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : undefined),
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`),
};

function print(doc) {
  process.stdout.write(`${JSON.stringify(doc)}\n`);
  return doc.exitCode;
}

/** A refusal before anything is sent: `usage` (2) or `config` (3), by the core's rule for `code`. */
function refuse(code, message) {
  console.error(`leasehold: ${message}`);
  return print(loadCore().refusalDocument(COMMAND, code, message));
}

/** An input error as a command-line user reads it: the flag, or the environment variable. */
function inputMessage(e) {
  if (!e.input || !e.rule) return e.message;
  const name = Object.hasOwn(OPTIONS, e.input) ? `--${e.input}` : `environment variable ${e.input}`;
  return `${name} ${e.rule}${e.value ? ` (got ${JSON.stringify(e.value)})` : ''}`;
}

/** `slots <verb> …`: resolves to the exit code. */
export async function slots(argv, env = process.env) {
  const core = loadCore();
  const [verb, ...rest] = argv;
  if (verb !== 'allocate') {
    if (verb === '--help' || verb === 'help') return console.log(SLOTS_USAGE), 0;
    return refuse('invalid-input', `unknown slots command ${JSON.stringify(verb ?? '')}\n${SLOTS_USAGE}`);
  }
  let values;
  try {
    ({ values } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (e) {
    return refuse('invalid-input', `${e.message}\n${SLOTS_USAGE}`);
  }
  if (values.help) return console.log(SLOTS_USAGE), 0;
  const inputs = {};
  for (const k of ['namespace', 'prefix', 'repository']) if (values[k] !== undefined) inputs[k] = values[k];
  if (values['dry-run']) inputs['dry-run'] = 'true';
  for (const name of CONTEXT) if (env[name]) inputs[name] = env[name];
  let op;
  try {
    op = new core.Operation('slot-allocate', inputs, undefined); // every input checked; nothing sent yet
  } catch (e) {
    if (e.code === 'invalid-input') return refuse(e.code, inputMessage(e));
    throw e;
  }
  for (const w of op.plan.warnings) log.warning(w);
  const token = (env.LEASEHOLD_TOKEN || env.GITHUB_TOKEN || '').trim();
  if (!token) return refuse('invalid-input', 'set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can create refs in the repository');
  const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: op.plan.repository });
  const outcome = await runOperation({ op, perform, logger: log });
  const doc = core.resultDocument(COMMAND, outcome);
  log.info(`leasehold: ${doc.status}${doc.slot?.detail ? `: ${doc.slot.detail}` : ''}`);
  return print(doc);
}

/** The `slots` entry of the command table (cli.mjs): it reads its own flags. */
export const SLOTS_COMMAND = {
  summary: 'allocate the next never-recycled slot number of a namespace and prefix',
  usage: USAGE_LINE,
  run: ({ argv, env }) => slots(argv, env),
};
