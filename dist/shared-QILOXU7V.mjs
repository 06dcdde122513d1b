import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  CONTEXT,
  cliFlag,
  describeInputError,
  describeInputWarning
} from "./shared-HRSGTLVH.mjs";

// actions/lib/cli-common.mjs
import { parseArgs } from "node:util";
var Usage = class extends Error {
  constructor(message, code = "usage") {
    super(message);
    this.usage = true;
    this.code = code;
  }
};
var KNOBS = ["api-max-attempts", "api-retry-base-ms", "api-retry-max-ms"];
function parseFlags(argv, { strings = [], multiple = [], booleans = [], child = false, positionals: operands = false }) {
  const at = argv.indexOf("--");
  const own = child && at >= 0 ? argv.slice(0, at) : argv;
  const options = { help: { type: "boolean" } };
  for (const name of strings) options[name] = { type: "string" };
  for (const name of multiple) options[name] = { type: "string", multiple: true };
  for (const name of booleans) options[name] = { type: "boolean" };
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({ args: own, options, strict: true, allowPositionals: operands }));
  } catch (error) {
    throw new Usage(error.message.replace(/\. To specify a positional argument.*$/s, ""));
  }
  return { values, positionals, child: child && at >= 0 ? argv.slice(at + 1) : [] };
}
function credential(env = process.env) {
  const token = (env.LEASEHOLD_TOKEN || env.GITHUB_TOKEN || "").trim();
  if (!token) throw new Usage("set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can write the repository", "no-token");
  return token;
}
function context(env = process.env) {
  const out = {};
  for (const name of CONTEXT) if (env[name]) out[name] = env[name];
  return out;
}
var logger = {
  debug: (t) => process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : void 0,
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`)
};
var print = (doc, stream = process.stdout) => stream.write(`${JSON.stringify(doc)}
`);
var errorMessage = (error) => describeInputError(error, cliFlag);
var warningMessage = (warning) => describeInputWarning(warning, cliFlag);
function refusal(core, command, error) {
  const status = error.usage || error.code === "invalid-input" ? "usage" : "config";
  const code = error.usage ? error.code : error.code ?? "internal";
  const doc = core.refusalDocument(command, status, code, errorMessage(error));
  if (error.input) doc.error.input = error.input;
  if (error.path) doc.error.path = error.path;
  return doc;
}
function shellQuote(word) {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

export {
  Usage,
  KNOBS,
  parseFlags,
  credential,
  context,
  logger,
  print,
  warningMessage,
  refusal,
  shellQuote
};
