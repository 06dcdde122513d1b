import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  CONTEXT,
  apiBaseUrl,
  checkGuardInputs,
  createTransport,
  guard,
  runOperation
} from "./shared-SXIAN3UU.mjs";
import {
  loadCore,
  refusalDocument,
  resultDocument
} from "./shared-PGCUYKP6.mjs";

// actions/lib/slots.mjs
import { parseArgs } from "node:util";
var COMMAND = "slots allocate";
var SLOTS_USAGE = `usage: leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]

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
var OPTIONS = {
  namespace: { type: "string" },
  prefix: { type: "string" },
  repository: { type: "string" },
  "dry-run": { type: "boolean" },
  help: { type: "boolean" }
};
var log = {
  debug: (t) => process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : void 0,
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`)
};
function print(doc) {
  process.stdout.write(`${JSON.stringify(doc)}
`);
  return doc.exitCode;
}
function refuse(status, code, message) {
  console.error(`leasehold: ${message}`);
  return print(refusalDocument(COMMAND, status, code, message));
}
function inputMessage(e) {
  if (!e.input || !e.rule) return e.message;
  const name = Object.hasOwn(OPTIONS, e.input) ? `--${e.input}` : `environment variable ${e.input}`;
  return `${name} ${e.rule}${e.value ? ` (got ${JSON.stringify(e.value)})` : ""}`;
}
async function slots(argv, env = process.env) {
  const core = loadCore();
  const [verb, ...rest] = argv;
  if (verb !== "allocate") {
    if (verb === "--help" || verb === "help") return console.log(SLOTS_USAGE), 0;
    return refuse("usage", "invalid-input", `unknown slots command ${JSON.stringify(verb ?? "")}
${SLOTS_USAGE}`);
  }
  let values;
  try {
    ({ values } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (e) {
    return refuse("usage", "invalid-input", `${e.message}
${SLOTS_USAGE}`);
  }
  if (values.help) return console.log(SLOTS_USAGE), 0;
  const inputs = {};
  for (const k of ["namespace", "prefix", "repository"]) if (values[k] !== void 0) inputs[k] = values[k];
  if (values["dry-run"]) inputs["dry-run"] = "true";
  for (const name of CONTEXT) if (env[name]) inputs[name] = env[name];
  let op;
  try {
    op = new core.Operation("slot-allocate", inputs, void 0);
  } catch (e) {
    if (e.code === "invalid-input") return refuse("usage", e.code, inputMessage(e));
    if (e.code === "config-invalid") return refuse("config", e.code, e.message);
    throw e;
  }
  for (const w of op.plan.warnings) log.warning(w);
  const token = (env.LEASEHOLD_TOKEN || env.GITHUB_TOKEN || "").trim();
  if (!token) return refuse("usage", "invalid-input", "set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can create refs in the repository");
  const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: op.plan.repository });
  const outcome = await runOperation({ op, perform, logger: log });
  const doc = resultDocument(COMMAND, outcome);
  log.info(`leasehold: ${doc.status}${doc.slot?.detail ? `: ${doc.slot.detail}` : ""}`);
  return print(doc);
}

// actions/lib/cli.mjs
var FLAGS = ["lock", "repository", "state-branch", "holder-id", "holder-suffix", "nonce", "kill-grace-seconds", "scan-deadline-seconds", "api-max-attempts", "api-retry-base-ms", "api-retry-max-ms"];
function parseArgs2(args) {
  const inputs = {};
  let command = [];
  let ifDue = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      command = args.slice(i + 1);
      break;
    }
    if (a === "--if-due") ifDue = true;
    else if (a === "--lock" && inputs.lock !== void 0 && i + 1 < args.length) inputs.lock += `
${args[++i]}`;
    else if (a.startsWith("--") && FLAGS.includes(a.slice(2)) && i + 1 < args.length) inputs[a.slice(2)] = args[++i];
    else throw usage(`unknown or incomplete option ${JSON.stringify(a)}`);
  }
  if (ifDue) inputs["if-due"] = "true";
  return { inputs, command };
}
function errorMessage(error) {
  if (error.code !== "invalid-input" || !error.input || !error.rule) return error.message;
  const name = FLAGS.includes(error.input) || error.input === "if-due" ? `--${error.input}` : `environment variable ${error.input}`;
  return `${name} ${error.rule}${error.value ? ` (got ${JSON.stringify(error.value)})` : ""}`;
}
function usage(message) {
  return Object.assign(new Error(`${message}
usage: leasehold guard --lock L --nonce N [options] -- command [args...]
       leasehold renew --lock L --nonce N [--if-due] [options]
       leasehold reap --lock L [--lock L2 ...] [--scan-deadline-seconds N] [options]`), { usage: true });
}
var logger = {
  debug: (t) => process.env.LEASEHOLD_DEBUG ? console.error(`debug: ${t}`) : void 0,
  info: (t) => console.error(t),
  warning: (t) => console.error(`warning: ${t}`)
};
var emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}
`);
async function main(argv) {
  const [verb, ...rest] = argv;
  if (verb === "slots") return slots(rest);
  if (!["guard", "renew", "reap"].includes(verb)) throw usage(`unknown command ${JSON.stringify(verb ?? "")}`);
  const { inputs, command } = parseArgs2(rest);
  for (const name of CONTEXT) if (process.env[name]) inputs[name] = process.env[name];
  const token = (process.env.LEASEHOLD_TOKEN || process.env.GITHUB_TOKEN || "").trim();
  if (!token) throw usage("set GITHUB_TOKEN (or LEASEHOLD_TOKEN) to a token that can write the lock repository");
  const core = loadCore();
  if (verb === "reap") return reap(core, inputs, token);
  if (verb === "guard" && command.length === 0) throw usage("guard needs a command after --");
  if (verb === "guard" && inputs["if-due"]) throw usage("--if-due is for renew: a guard renews on the lease's own schedule");
  const { plan, machine } = checkGuardInputs(core, inputs);
  for (const w of plan.warnings) logger.warning(w);
  const perform = createTransport({ baseUrl: apiBaseUrl(), token, repository: plan.repository });
  if (verb === "renew") {
    const op = new core.Operation("renew", inputs, void 0);
    const outcome = await runOperation({ op, perform, logger });
    emit({ event: "renew", result: outcome.result, lock: outcome.lock, holderId: outcome.holderId, lease: outcome.lease ?? null, error: outcome.error ?? null });
    return outcome.success ? 0 : 1;
  }
  const { exitCode } = await guard({ core, machine, inputs, argv: command, perform, emit, logger, secrets: [token] });
  return exitCode;
}
async function reap(core, inputs, token) {
  const op = new core.Operation("reap", inputs, void 0);
  const plan = op.plan;
  for (const w of plan.warnings) logger.warning(w);
  const perform = createTransport({ baseUrl: apiBaseUrl(), token, repository: plan.repository });
  const outcome = await runOperation({ op, perform, logger });
  emit({ event: "reap", result: outcome.result, locks: plan.lock, reaped: outcome.reaped ?? [], error: outcome.error ?? null, stats: outcome.stats });
  return outcome.success ? 0 : 1;
}
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`leasehold: ${error.input ? `[${error.input}] ` : ""}${errorMessage(error)}`);
    process.exitCode = error.usage || error.code === "invalid-input" ? loadCore().exitCodes.usage : 1;
  }
);
