#!/usr/bin/env node
import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  ITEM_COMMANDS
} from "./shared-JX4YOV63.mjs";
import {
  GUARD_SCHEMA,
  apiBaseUrl,
  checkGuardInputs,
  createTransport,
  guard,
  runOperation,
  textTimeline
} from "./shared-VI6VWKXP.mjs";
import {
  VALIDATE_COMMAND
} from "./shared-QLVO3UML.mjs";
import {
  KNOBS,
  Usage,
  context,
  credential,
  logger,
  parseFlags,
  print,
  refusal,
  shellQuote,
  warningMessage
} from "./shared-QILOXU7V.mjs";
import {
  CONTEXT,
  INPUTS
} from "./shared-HRSGTLVH.mjs";
import {
  loadCore
} from "./shared-QYZQB6T6.mjs";

// actions/lib/claims.mjs
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
var COMMON = ["repository", "config", "holder-suffix", ...KNOBS];
var ENVIRONMENT = `Common: --repository owner/name (default GITHUB_REPOSITORY), --config FILE (the reviewed
claims config: lease policy per namespace; default: the built-in lease), --holder-suffix S,
--api-max-attempts N, --api-retry-base-ms N, --api-retry-max-ms N, --help.
Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB \u2026) recorded in the claim when present.
Output: one JSON document on stdout (schema, command, status, exitCode, action, claim, next,
error); the exit code is the document's, from the one exit-code table.`;
var VERBS = {
  claim: {
    kind: "claim",
    strings: ["namespace", "key", "run-id-prefix", "run-id"],
    multiple: ["set"],
    booleans: ["no-takeover", "dry-run"],
    usage: `claims claim --namespace NS --key K [--run-id-prefix P] [--no-takeover] [--set k=v]\u2026 [--dry-run]
Claims one item: absent or released \u2192 acquired; held past expiry and grace \u2192 taken-over (with
--no-takeover: expired, 11, naming the oid a takeover needs); held and live \u2192 contended (10,
with eligibleAt); this job's own \u2192 already-held (10). The run id (P-<nonce>) is generated here:
--run-id is refused.`
  },
  takeover: {
    kind: "claim-takeover",
    strings: ["namespace", "key", "supersedes", "run-id-prefix", "run-id"],
    multiple: ["set"],
    booleans: ["dry-run"],
    usage: `claims takeover --namespace NS --key K --supersedes OID [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Takes an expired holding over, only if the ref is still at OID (the oid claim --no-takeover printed).`
  },
  renew: {
    kind: "claim-renew",
    strings: ["namespace", "key", "token", "run-id", "repository-id", "prior"],
    multiple: ["set"],
    booleans: ["if-due", "dry-run"],
    usage: `claims renew --namespace NS --key K --token OID --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
             [--repository-id ID --prior JSON]
Renews this run's holding: a new version, a new token (read it from the document's next), its
expiry moved, never past the ceiling (at the ceiling: stale, 16). --if-due writes only once
renewAfter has passed (else not-due, 0). --repository-id and --prior, as the last document's
next line prints them, save the read.`
  },
  release: {
    kind: "claim-release",
    strings: ["namespace", "key", "token", "run-id", "repository-id", "prior"],
    booleans: ["dry-run"],
    usage: `claims release --namespace NS --key K --token OID --run-id ID [--dry-run] [--repository-id ID --prior JSON]
Releases this run's holding (writes a released version; never deletes the ref). A repeat is
already-released (0); a token one or more renewals old is stale (16), naming the current one.`
  },
  verify: {
    kind: "claim-verify",
    strings: ["namespace", "key", "token", "run-id"],
    booleans: ["dry-run"],
    usage: `claims verify --namespace NS --key K --token OID --run-id ID
Reads only: held (0); inside the last minRemaining before the ceiling renew-required (15);
an older token of this run's stale (16); another run's lost (13); released or absent not-held (14).`
  },
  read: {
    kind: "claim-read",
    strings: ["namespace", "key"],
    booleans: ["dry-run"],
    usage: `claims read --namespace NS --key K
The claim as it is (ok, 0): its token and payload, or no token when the ref does not exist.`
  },
  list: {
    kind: "claim-list",
    strings: ["namespace"],
    booleans: ["stale", "dry-run"],
    usage: `claims list --namespace NS [--stale]
Every claim of the namespace, every page read. --stale: only holdings past their expiry.`
  },
  adopt: {
    kind: "claim-adopt",
    strings: ["namespace", "key", "run-id", "candidate"],
    booleans: ["dry-run"],
    usage: `claims adopt --namespace NS --key K --run-id ID [--candidate OID]
After an unknown outcome (12): proves from the head's payload (its run id) whether the write was
this run's: adopted (0) with the token, else lost (13). Run it as the failed document printed it.`
  },
  "family claim": {
    kind: "claim-family-claim",
    strings: ["namespace", "keys", "run-id-prefix", "run-id"],
    multiple: ["set"],
    booleans: ["dry-run"],
    usage: `claims family claim --namespace NS --keys K1,K2,\u2026 [--run-id-prefix P] [--set k=v]\u2026 [--dry-run]
Claims up to 20 keys of one namespace in one updateRefs call: all of them or none
(family-aborted, 10, when one is held by another run).`
  },
  "family renew": {
    kind: "claim-family-renew",
    strings: ["namespace", "keys", "tokens", "run-id"],
    multiple: ["set"],
    booleans: ["if-due", "dry-run"],
    usage: `claims family renew --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--if-due] [--set k=v]\u2026 [--dry-run]
Renews a family in one updateRefs call, every member or none (tokens in the order of the keys;
each rotates: read them from the document's next). --if-due writes once any member is due. A
member lost, released or stale decides for the family (lost 13, not-held 14, stale 16).`
  },
  "family release": {
    kind: "claim-family-release",
    strings: ["namespace", "keys", "tokens", "run-id"],
    booleans: ["dry-run"],
    usage: `claims family release --namespace NS --keys K1,K2,\u2026 --tokens T1,T2,\u2026 --run-id ID [--dry-run]
Releases a family in one updateRefs call (tokens in the order of the keys).`
  },
  guard: {
    kind: "claim-renew",
    strings: ["namespace", "key", "token", "keys", "tokens", "run-id", "repository-id", "prior", "kill-grace-seconds"],
    booleans: ["dry-run"],
    child: true,
    usage: `claims guard --namespace NS (--key K --token OID | --keys K1,K2,\u2026 --tokens T1,T2,\u2026) --run-id ID
             [--kill-grace-seconds N] [--repository-id ID --prior JSON] -- command [args\u2026]
Verifies the claim (or the family: --keys and --tokens, as family claim printed them) with a
renewal, runs the command (no shell, its own process group, no
credential in its environment), renews on the lease's schedule (each renewal rotates the token;
the guard keeps the current one) and stops the group (SIGTERM, SIGKILL after the kill grace)
when the claim is proven lost or the local deadline passes unproven. A family is renewed in one
updateRefs call, every member together; any member lost stops the command. Its documents go to stderr
(guard-start, then guard-exit or guard-refused; the last one's next carries the current token);
stdout is the command's. Exit: the command's own code (128 + n: signal n; 127: it could not
start); 13 lost or local deadline (the document's reason says which); 14 not held at start;
2 usage. A command's own code can collide with these: read the document.`
  }
};
function verbOf(argv) {
  if (argv[0] === "family" && ["claim", "release", "renew"].includes(argv[1])) return [`family ${argv[1]}`, argv.slice(2)];
  return [argv[0], argv.slice(1)];
}
var invocation = () => [process.execPath, resolve(process.argv[1])].map(shellQuote).join(" ");
function inputsOf(values, env) {
  const inputs = { ...context(env), invocation: invocation() };
  for (const [name, value] of Object.entries(values)) {
    if (name === "help" || name === "kill-grace-seconds") continue;
    if (name === "config") {
      const path = resolve(value);
      try {
        inputs.config = readFileSync(path, "utf8");
      } catch (error) {
        throw Object.assign(new Error(`--config ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`), { code: "invalid-config", path });
      }
      inputs["config-path"] = path;
    } else if (value === true) inputs[name] = "true";
    else if (Array.isArray(value)) inputs[name] = value.join("\n");
    else inputs[name] = value;
  }
  return inputs;
}
function helpText() {
  return Object.entries(VERBS).map(([, v]) => `  leasehold ${v.usage.split("\n")[0]}`).join("\n");
}
var CLAIMS_COMMAND = {
  summary: "per-item claims on git refs: claim, renew, release, verify, read, list, takeover, adopt, family claim|renew|release, guard",
  usage: `leasehold claims <verb> [flags]   (leasehold claims <verb> --help for one)

${helpText()}

${ENVIRONMENT}`,
  verbs: VERBS,
  verbOf,
  /** The document's `command`: `claims <verb>`. */
  commandName: (argv) => `claims ${verbOf(argv)[0] ?? ""}`.trim(),
  async run({ core, argv, env }) {
    const [name, rest] = verbOf(argv);
    const verb = VERBS[name];
    if (!verb) throw new Usage(`unknown claims verb ${JSON.stringify(argv.slice(0, 2).join(" "))} (known: ${Object.keys(VERBS).join(", ")})`);
    const { values, child } = parseFlags(rest, { strings: [...COMMON, ...verb.strings], multiple: verb.multiple ?? [], booleans: verb.booleans ?? [], child: verb.child });
    if (values.help) {
      process.stdout.write(`usage: leasehold ${verb.usage}

${ENVIRONMENT}
`);
      return 0;
    }
    if (name === "guard") return claimsGuard({ core, values, child, env });
    const inputs = inputsOf(values, env);
    const op = new core.Operation(verb.kind, inputs, void 0);
    try {
      for (const w of op.plan.warnings) logger.warning(warningMessage(w));
      const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: op.plan.repository });
      const outcome = await runOperation({ op, perform, logger });
      const doc = core.resultDocument(`claims ${name}`, outcome);
      print(doc);
      return doc.exitCode;
    } finally {
      op.free?.();
    }
  }
};
async function claimsGuard({ core, values, child, env }) {
  if (values["dry-run"]) throw new Usage("claims guard has no --dry-run: it runs the command");
  if (child.length === 0) throw new Usage("claims guard needs a command after --");
  const family = values.keys !== void 0 || values.tokens !== void 0;
  if (family && (values.key !== void 0 || values.token !== void 0)) throw new Usage("claims guard takes --key and --token, or --keys and --tokens (a family), not both");
  if (family && (values.prior !== void 0 || values["repository-id"] !== void 0)) throw new Usage("claims guard of a family reads its members: --prior and --repository-id are for one key");
  const renewKind = family ? "claim-family-renew" : "claim-renew";
  const inputs = inputsOf(values, env);
  const probe = new core.Operation(renewKind, inputs, void 0);
  const plan = probe.plan;
  probe.free?.();
  const machine = new core.Guard(values["kill-grace-seconds"] ? { "kill-grace-seconds": values["kill-grace-seconds"] } : {});
  for (const w of plan.warnings) logger.warning(warningMessage(w));
  const token = credential(env);
  const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: plan.repository });
  const command = "claims guard";
  let current = null;
  const tokens = () => family ? inputs.tokens.split(",") : inputs.token;
  const onRenewal = (outcome) => {
    const report = outcome.claims;
    const items = report?.items ?? [];
    if (report?.status !== "renewed" || items.length === 0 || items.some((i) => !i.token)) return;
    if (family) inputs.tokens = items.map((i) => i.token).join(",");
    else {
      inputs.token = items[0].token;
      if (items[0].payload) inputs.prior = JSON.stringify(items[0].payload);
      if (report.repositoryId) inputs["repository-id"] = report.repositoryId;
    }
    current = core.resultDocument(family ? "claims family renew" : "claims renew", outcome);
  };
  const documents = {
    start: ({ pid, argv, lease }) => ({
      schema: GUARD_SCHEMA,
      command,
      event: "guard-start",
      status: "held",
      pid,
      argv,
      [family ? "tokens" : "token"]: tokens(),
      expiresAt: new Date(lease.expiresAt).toISOString(),
      localDeadline: new Date(lease.localDeadline).toISOString(),
      claim: current?.claim ?? null
    }),
    refused: ({ first, finish }) => {
      const verification = core.resultDocument(family ? "claims family renew" : "claims renew", first);
      return {
        schema: GUARD_SCHEMA,
        command,
        event: "guard-refused",
        status: "not-held",
        exitCode: finish.exitCode,
        reason: finish.reason,
        action: "the command never ran; see verification",
        verification,
        next: verification.next,
        error: verification.error
      };
    },
    exit: ({ finish, child: ended }) => ({
      schema: GUARD_SCHEMA,
      command,
      event: "guard-exit",
      status: finish.reason === "lost" || finish.reason === "deadline" ? "lost" : finish.reason,
      exitCode: finish.exitCode,
      reason: finish.reason,
      ...ended,
      renewals: finish.renewals,
      [family ? "tokens" : "token"]: tokens(),
      claim: current?.claim ?? null,
      next: finish.reason === "child-exited" || finish.reason === "spawn-failed" ? current?.next ?? {} : {}
    })
  };
  const { exitCode } = await guard({
    core,
    machine,
    inputs,
    argv: child,
    perform,
    emit: (doc) => print(doc, process.stderr),
    logger,
    secrets: [token],
    renewKind,
    onRenewal,
    documents
  });
  return exitCode;
}

// actions/lib/status-view.mjs
var ago = (from, now) => {
  const s = Math.max(0, Math.round((now - Date.parse(from)) / 1e3));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${(s / 3600).toFixed(1)}h`;
};
var clock = (t) => t ? String(t).replace("T", " ").replace(/\.\d+Z$/, "Z") : "";
function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => `  ${r.map((c, i) => String(c).padEnd(widths[i])).join("  ")}`.trimEnd();
  return [line(header), ...rows.map(line)];
}
function statusView(doc, plan, now) {
  const o = doc.outcome ?? {};
  const lines = [`lock ${plan.lock} in ${plan.repository} (state branch ${plan.stateBranch})`];
  if (doc.exitCode !== 0 || !o.state) {
    lines.push(`  ${doc.status} (exit ${doc.exitCode}, ${doc.action})${doc.error ? `: ${doc.error.code}: ${doc.error.message}` : ""}`);
    if (!o.state && doc.exitCode === 0) lines.push("  never used: no state yet (nothing held, nobody waiting)");
    return `${lines.join("\n")}
`;
  }
  const s = o.state;
  lines.push(`  ${s.holders.length} of capacity ${o.capacity ?? s.config?.capacity ?? "?"} held \xB7 ${s.queue.length} waiting \xB7 last fence ${s.fence} \xB7 revision ${s.revision}`);
  if (s.lastChange) lines.push(`  last change: ${s.lastChange.action} by ${s.lastChange.by} at ${clock(s.lastChange.at)}`);
  lines.push("", "Holders");
  if (s.holders.length === 0) lines.push("  none");
  else {
    const rows = s.holders.map((h) => [h.fence, h.holderId, `${clock(h.acquiredAt)} (${ago(h.acquiredAt, now)} ago)`, clock(h.expiresAt), h.run?.url ?? ""]);
    lines.push(...table(["fence", "holder", "since", "lease until", "run"], rows));
  }
  lines.push("", "Queue");
  if (s.queue.length === 0) lines.push("  empty");
  else {
    const rows = s.queue.map((q, i) => [i + 1, q.holderId, `${clock(q.enqueuedAt)} (${ago(q.enqueuedAt, now)} ago)`, q.run?.url ?? ""]);
    lines.push(...table(["#", "holder", "waiting since", "run"], rows));
  }
  lines.push("", "Timeline (UTC)", ...textTimeline(s, now));
  return `${lines.join("\n")}
`;
}

// actions/lib/lock-cli.mjs
var IDENTITY = ["lock", "repository", "state-branch", "holder-id", "holder-suffix", "nonce"];
var ENVIRONMENT2 = `Environment: GITHUB_TOKEN (or LEASEHOLD_TOKEN), GITHUB_API_URL, and the run context
(GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB, RUNNER_NAME) the holder id
is built from.`;
function inputsOf2(values, env) {
  const inputs = { ...context(env) };
  for (const [name, value] of Object.entries(values)) {
    if (name === "help") continue;
    if (value === true) inputs[name] = "true";
    else if (Array.isArray(value)) inputs[name] = value.join("\n");
    else if (typeof value === "string") inputs[name] = value;
  }
  return inputs;
}
async function once(core, kind, inputs, env, show) {
  const op = new core.Operation(kind, inputs, void 0);
  try {
    const plan = op.plan;
    for (const w of plan.warnings) logger.warning(warningMessage(w));
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token: credential(env), repository: plan.repository });
    const cancel = new AbortController();
    const onSignal = () => cancel.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      const outcome = await runOperation({ op, perform, logger, cancel: cancel.signal });
      const doc = core.resultDocument(kind, outcome);
      if (show) process.stdout.write(show(doc, plan));
      else print(doc);
      return doc.exitCode;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  } finally {
    op.free?.();
  }
}
var flagsOf = (kind, skip = []) => INPUTS[kind].filter((n) => n !== "token" && !skip.includes(n));
var LOCK_COMMANDS = {
  acquire: {
    summary: "take a slot of a lock, waiting in its queue (one document: acquired, timeout, \u2026)",
    flags: { strings: flagsOf("acquire", ["release-on-exit"]) },
    usage: `leasehold acquire --lock L [--timeout-minutes N] [--poll-seconds N] [--lease-minutes N]
                  [--record-job-id true|false] [--repository owner/name] [--state-branch B]
                  [--holder-suffix S] [--api-max-attempts N \u2026]

Takes a slot, waiting in the lock's queue up to --timeout-minutes (0 tries once); SIGINT or
SIGTERM while waiting leaves the queue (cancelled). The flags are the acquire action's inputs
(README "acquire inputs"); there is no post step here: release yourself (or let the lease run
out). Prints one result document (outcome.fence, outcome.nonce for renew and guard); exits by
the table (0 acquired, 10 timeout or cancelled, 3 a broken config, 20 transport, \u2026).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "acquire", inputsOf2(values, env), env)
  },
  release: {
    summary: "give a lock slot back, or leave its queue (released, queue-cleaned, noop)",
    flags: { strings: flagsOf("release") },
    usage: `leasehold release --lock L [--holder-id ID | --holder-suffix S] [--release-deadline-seconds N]
                  [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]

Removes exactly this holder's holding or queue entry (the holder id is built from the run context
as acquire built it, or given). Idempotent. Prints one result document; exits by the table
(0 released, queue-cleaned or noop; 12 the state could not be updated in time, \u2026).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "release", inputsOf2(values, env), env)
  },
  status: {
    summary: "show a lock: holders, queue and timeline (JSON when piped or with --json)",
    flags: { strings: flagsOf("status"), booleans: ["json", "human"] },
    usage: `leasehold status --lock L [--json | --human] [--repository owner/name] [--state-branch B]

Reads the lock without changing it. At a terminal it prints its holders, queue and a timeline
of who held it when; piped, or with --json, the one result document (outcome.state is the
state); --human prints the terminal view anywhere. Exits by the table (0, 16 a state it cannot
read, 21 refused, \u2026).
${ENVIRONMENT2}`,
    run({ core, values, env }) {
      if (values.json && values.human) throw new Usage("--json and --human exclude each other");
      const human = values.human || !values.json && process.stdout.isTTY;
      const { json: _j, human: _h, ...rest } = values;
      return once(core, "status", inputsOf2(rest, env), env, human ? (doc, plan) => statusView(doc, plan, Date.now()) : void 0);
    }
  },
  renew: {
    summary: "extend a lock holding's lease (one document: renewed, not-due, lost\u2026)",
    flags: { strings: [...IDENTITY, "outcome", "retry-at", ...KNOBS], booleans: ["if-due"] },
    usage: `leasehold renew --lock L --nonce N [--if-due] [--repository owner/name] [--state-branch B]
                [--holder-id ID | --holder-suffix S] [--outcome success|rate-limited [--retry-at T]]
                [--api-max-attempts N \u2026]

Extends this claim's lease (the holding acquire made, told by its nonce), never past its
ceiling. --if-due writes only once the renewal is due. On a pool, --outcome says how the work on
the granted resource goes: rate-limited backs the resource off (until --retry-at, else 15 minutes
doubling per consecutive hit, up to 5 hours), success resets it. Prints one result document; exits by the
exit-code table (0 renewed or not-due, 13 lost, 20 transport, \u2026).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "renew", inputsOf2(values, env), env)
  },
  "report-usage": {
    summary: "record a usage reading of one resource of a pool (used fraction, window, observed at, status)",
    flags: { strings: ["lock", "repository", "state-branch", "resource", "used", "window-start", "reset-at", "observed-at", "status", ...KNOBS] },
    usage: `leasehold report-usage --lock L --resource R --used F --window-start T --reset-at T
                --observed-at T [--status allowed|throttled|rejected] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Records a usage reading of resource R of pool L: the used fraction F of its window (0 to 1), the
window's start and reset, and when it was observed (times in UTC, YYYY-MM-DDTHH:MM:SSZ). An
older reading never replaces a newer one (noop); a reading observed over 45 minutes ago, or of a
window that has reset, counts for nothing. Prints one result document; exits by the exit-code
table (0 recorded or noop, 3 the lock is not a pool or declares no such resource, 20 transport).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "report-usage", inputsOf2(values, env), env)
  },
  recover: {
    summary: "an operator's recovery: a quarantine becomes a cooldown, or the lock's incident ends (nothing written on a wrong id)",
    flags: { strings: flagsOf("recover", ["resource-safe", "confirmed"]), booleans: ["resource-safe", "confirmed"] },
    usage: `leasehold recover --operation recover --lock L --reservation-id ID --resource-safe
                [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]
leasehold recover --operation recover-incident --lock L [--incident-id ID] --confirmed
                [--repository owner/name] [--state-branch B] [--api-max-attempts N \u2026]

For an operator (docs/lifecycle.md). recover: once you checked the resource is clean, the
quarantine with exactly this id becomes a cooldown of the lock's cooldownSeconds (it is never
freed outright). recover-incident: once the incident's cause is resolved, the lock's incident
ends (the one with --incident-id, or, omitted, the one standing when the state is read; its id
is compared again before the write). Without --resource-safe or --confirmed, with a wrong id or
no incident, nothing is written. Prints one result document; exits by the exit-code table (0
recovered or incident-recovered, 22 refused, 20 transport, 21 permission).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "recover", inputsOf2(values, env), env)
  },
  reap: {
    summary: "free what dead jobs left in one or more locks, proven from the Actions API",
    flags: { strings: ["repository", "state-branch", "scan-deadline-seconds", ...KNOBS], multiple: ["lock"] },
    usage: `leasehold reap --lock L [--lock L2 \u2026] [--scan-deadline-seconds N] [--repository owner/name]
                [--state-branch B] [--api-max-attempts N \u2026]

Removes holdings and queue entries whose run attempt (or job) the Actions API proves over. Prints
one result document (its outcome.reaped lists every verdict); exits 0 when every entry was
judged, else by the table (20: the scan deadline passed; 21: GitHub refused).
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "reap", inputsOf2(values, env), env)
  },
  repair: {
    summary: "rewrite a broken lock state as a valid empty one, fences kept increasing (dry run without --confirm)",
    flags: { strings: ["lock", "repository", "state-branch", ...KNOBS], booleans: ["confirm"] },
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
${ENVIRONMENT2}`,
    run: ({ core, values, env }) => once(core, "repair", inputsOf2(values, env), env)
  },
  guard: {
    summary: "run a command under a lock holding, renewing it, stopping the command if it is lost",
    flags: { strings: [...IDENTITY, "kill-grace-seconds", ...KNOBS], child: true },
    usage: `leasehold guard --lock L --nonce N [--kill-grace-seconds N] [--repository owner/name]
                [--state-branch B] [--holder-id ID | --holder-suffix S] -- command [args\u2026]

Verifies the holding with a renewal, runs the command (no shell, its own process group), renews
on the lease's schedule and stops the group (SIGTERM, SIGKILL after the kill grace) when the
holding is proven lost or the local deadline passes unproven. Prints a guard-start line before
the command runs and a guard-exit (or guard-refused) line at the end, on stdout beside the
command's own output. Exit: the command's own code (128 + n when signal n ended it, 127 when it
could not start); 13 lost or the local deadline passed (the line's reason says which); 14 the
holding could not be verified (the command never ran); 2 usage. The command's environment
carries no credential.
${ENVIRONMENT2}`,
    async run({ core, values, child, env }) {
      if (child.length === 0) throw new Usage("guard needs a command after --");
      const inputs = inputsOf2(values, env);
      const { plan, machine } = checkGuardInputs(core, inputs);
      for (const w of plan.warnings) logger.warning(warningMessage(w));
      const token = credential(env);
      const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: plan.repository });
      const { exitCode } = await guard({ core, machine, inputs, argv: child, perform, emit: (doc) => print(doc), logger, secrets: [token] });
      return exitCode;
    }
  }
};

// actions/lib/slots.mjs
import { parseArgs } from "node:util";
var COMMAND = "slots allocate";
var USAGE_LINE = "leasehold slots allocate --namespace N --prefix P [--repository owner/name] [--dry-run]";
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
function print2(doc) {
  process.stdout.write(`${JSON.stringify(doc)}
`);
  return doc.exitCode;
}
function refuse(status, code, message) {
  console.error(`leasehold: ${message}`);
  return print2(loadCore().refusalDocument(COMMAND, status, code, message));
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
  const doc = core.resultDocument(COMMAND, outcome);
  log.info(`leasehold: ${doc.status}${doc.slot?.detail ? `: ${doc.slot.detail}` : ""}`);
  return print2(doc);
}
var SLOTS_COMMAND = {
  summary: "allocate the next never-recycled slot number of a namespace and prefix",
  usage: USAGE_LINE,
  run: ({ argv, env }) => slots(argv, env)
};

// actions/lib/cli.mjs
var COMMANDS = {
  ...LOCK_COMMANDS,
  claims: CLAIMS_COMMAND,
  slots: SLOTS_COMMAND,
  validate: VALIDATE_COMMAND,
  ...ITEM_COMMANDS
};
function overview(core) {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  const claims = Object.keys(CLAIMS_COMMAND.verbs).map((v) => `  claims ${v}`);
  const table2 = core.exitTable.map((r) => `  ${String(r.exitCode).padStart(2)}  ${r.status.padEnd(16)} ${r.action}`);
  return `usage: leasehold <command> [flags]   (node dist/cli.mjs \u2026; <command> --help for one)

Commands:
${lines.join("\n")}

Claims verbs:
${claims.join("\n")}

Exit codes (one table for every command):
${table2.join("\n")}
`;
}
async function main(argv, env) {
  const core = loadCore();
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(overview(core));
    return 0;
  }
  const command = COMMANDS[name];
  const docName = name === "claims" ? CLAIMS_COMMAND.commandName(rest) : command?.verbWords && command.verbWords.includes(rest[0]) ? `${name} ${rest[0]}` : name ?? "";
  try {
    if (!command) throw new Usage(`unknown command ${JSON.stringify(name ?? "")} (known: ${Object.keys(COMMANDS).join(", ")}; --help lists them)`);
    if (name === "claims" && rest[0] === "--help") {
      process.stdout.write(`usage: ${command.usage}
`);
      return 0;
    }
    if (name === "claims" && rest.length === 0) throw new Usage("claims needs a verb (leasehold claims --help lists them)");
    if (command.verbWords) {
      const [verb, ...flags] = rest;
      if (verb === "--help" || verb === "-h") {
        process.stdout.write(`usage: ${command.usage}
`);
        return 0;
      }
      if (!command.verbWords.includes(verb)) throw new Usage(`${name} needs a verb: ${command.verbWords.join(" | ")} (${name} --help)`);
      const { values } = parseFlags(flags, command.flags);
      if (values.help) {
        process.stdout.write(`usage: ${command.usage}
`);
        return 0;
      }
      return await command.run({ core, values, env, verb });
    }
    if (command.flags) {
      const { values, child, positionals } = parseFlags(rest, command.flags);
      if (values.help) {
        process.stdout.write(`usage: ${command.usage}
`);
        return 0;
      }
      return await command.run({ core, values, child, positionals, env });
    }
    return await command.run({ core, argv: rest, env });
  } catch (error) {
    if (!error.usage && !error.code) logger.warning(error.stack ?? String(error));
    const doc = refusal(core, docName, error);
    print(doc);
    return doc.exitCode;
  }
}
main(process.argv.slice(2), process.env).then((code) => {
  process.exitCode = code;
});
