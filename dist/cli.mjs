import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  CONTEXT,
  apiBaseUrl,
  checkGuardInputs,
  createTransport,
  guard,
  runOperation
} from "./shared-ZYBR2UAM.mjs";
import {
  loadCore
} from "./shared-CYILUAGI.mjs";

// actions/lib/cli.mjs
var FLAGS = ["lock", "repository", "state-branch", "holder-id", "holder-suffix", "nonce", "kill-grace-seconds", "scan-deadline-seconds", "api-max-attempts", "api-retry-base-ms", "api-retry-max-ms"];
function parseArgs(args) {
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
  if (!["guard", "renew", "reap"].includes(verb)) throw usage(`unknown command ${JSON.stringify(verb ?? "")}`);
  const { inputs, command } = parseArgs(rest);
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
