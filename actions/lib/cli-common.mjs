// What every command of the command line shares: strict argument parsing (node:util's
// parseArgs), the credential from the environment, the logger, and the one JSON document a
// command prints, refusals included. Nothing here decides an exit code: a document's
// `exitCode` comes from the core's one table.
import { parseArgs } from 'node:util';
import { CONTEXT } from './constants.mjs';
import { cliFlag, describeInputError, describeInputWarning } from './input-error.mjs';

/** A command line the CLI refuses before the core sees it: a `usage` document. */
export class Usage extends Error {
  constructor(message, code = 'usage') {
    super(message);
    this.usage = true;
    this.code = code;
  }
}

/** The retry knobs every command that talks to GitHub takes. */
export const KNOBS = ['api-max-attempts', 'api-retry-base-ms', 'api-retry-max-ms'];

/**
 * Parses `argv` strictly: `strings` and `multiple` take a value, `booleans` none, anything else
 * is a usage error; `--help` is always known. With `child`, the words after the first `--` are
 * the command to run; with `positionals`, bare words are operands (files). Returns
 * { values, child, positionals }.
 */
export function parseFlags(argv, { strings = [], multiple = [], booleans = [], child = false, positionals: operands = false }) {
  const at = argv.indexOf('--');
  const own = child && at >= 0 ? argv.slice(0, at) : argv;
  const options = { help: { type: 'boolean' } };
  for (const name of strings) options[name] = { type: 'string' };
  for (const name of multiple) options[name] = { type: 'string', multiple: true };
  for (const name of booleans) options[name] = { type: 'boolean' };
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({ args: own, options, strict: true, allowPositionals: operands }));
  } catch (error) {
    throw new Usage(error.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  return { values, positionals, child: child && at >= 0 ? argv.slice(at + 1) : [] };
}

/** The credential: LEASEHOLD_TOKEN, else GITHUB_TOKEN. */
export function credential(env = process.env) {
  const token = (env.LEASEHOLD_TOKEN || env.GITHUB_TOKEN || '').trim();
  if (!token) throw new Usage('set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can write the repository', 'no-token');
  return token;
}

/** The run context the core reads (the holder id, a claim's `run`), from the environment. */
export function context(env = process.env) {
  const out = {};
  for (const name of CONTEXT) if (env[name]) out[name] = env[name];
  return out;
}

export const logger = {
  debug: (t) => (process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : undefined),
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`),
};

/** Writes one JSON document (one line) to `stream`. */
export const print = (doc, stream = process.stdout) => stream.write(`${JSON.stringify(doc)}\n`);

/** An error's message as a command-line user reads it: its input named as a flag. */
export const errorMessage = (error) => describeInputError(error, cliFlag);

/** A plan's warning as a command-line user reads it. */
export const warningMessage = (warning) => describeInputWarning(warning, cliFlag);

/**
 * The document of a command refused before it ran; its status is the core's, by the error's
 * code (bad usage or input `usage` (2), a bad config file and anything else `config` (3)).
 */
export function refusal(core, command, error) {
  const doc = core.refusalDocument(command, error.code ?? 'internal', errorMessage(error));
  if (error.input) doc.error.input = error.input;
  if (error.path) doc.error.path = error.path;
  return doc;
}

/** A word as a POSIX shell must see it (as the core quotes its `next` lines). */
export function shellQuote(word) {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
