import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  apiBaseUrl,
  checkGuardInputs,
  createTransport,
  guard,
  mermaidGantt,
  runOperation
} from "./shared-MUMZVIIX.mjs";
import {
  debug,
  info,
  saveState,
  setFailed,
  setOutput,
  setSecret,
  summary,
  warning
} from "./shared-V7GRIPFJ.mjs";
import {
  CONTEXT,
  INPUTS,
  OUTPUTS,
  actionInput,
  describeInputError,
  describeInputWarning,
  inputEnvName
} from "./shared-5ZBYKQBK.mjs";
import {
  loadCore
} from "./shared-BFD3RWKA.mjs";

// actions/lib/report.mjs
var iso = (value) => value ? String(value).replace("T", " ").replace(/\.\d+Z$/, "Z") : "";
function outputsFor(kind, outcome) {
  const text = (value) => value === void 0 || value === null ? "" : String(value);
  const error = text(outcome.error?.code);
  if (kind === "acquire") {
    return {
      acquired: text(outcome.acquired ?? false),
      result: outcome.result,
      "holder-id": outcome.holderId,
      fence: text(outcome.fence),
      nonce: text(outcome.nonce),
      "wait-ms": text(outcome.waitMs),
      "queue-position": text(outcome.queuePosition),
      "error-code": error
    };
  }
  if (kind === "renew") {
    return {
      renewed: text(outcome.result === "renewed"),
      result: outcome.result,
      "expires-at": outcome.lease ? new Date(outcome.lease.expiresAt).toISOString() : "",
      "holder-id": outcome.holderId,
      "error-code": error
    };
  }
  if (kind === "reap") {
    const entries = (outcome.reaped ?? []).flatMap((r) => r.entries);
    const count = (action) => String(entries.filter((e) => e.action === action).length);
    return {
      result: outcome.result,
      removed: count("removed"),
      renewed: count("renewed"),
      kept: count("kept"),
      report: JSON.stringify(outcome.reaped ?? []),
      "error-code": error
    };
  }
  if (kind === "status") {
    const state = outcome.state;
    return {
      capacity: text(outcome.capacity),
      holders: text(state?.holders.length ?? 0),
      waiting: text(state?.queue.length ?? 0),
      fence: text(state?.fence ?? 0),
      state: state ? JSON.stringify(state) : "",
      result: outcome.result,
      "error-code": error
    };
  }
  return {
    released: text(outcome.released ?? false),
    result: outcome.result,
    "holder-id": outcome.holderId,
    "error-code": error
  };
}
function runLink(run2) {
  const job = run2?.jobId ? `, job ${run2.jobId}` : "";
  if (!run2?.url) return `${run2?.repository ?? ""} run ${run2?.runId ?? ""}${job}`;
  return `<a href="${run2.url}">${run2.repository} #${run2.runId} (attempt ${run2.runAttempt}${job})</a>`;
}
var escapeCell = (text) => String(text ?? "").replace(/[&<>|]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;" })[c]);
function summaryFor(kind, outcome, plan, now = Date.now()) {
  const lines = [];
  const state = outcome.state;
  const headline = {
    acquired: `acquired \`${outcome.lock}\` with fence ${outcome.fence}`,
    timeout: `timed out waiting for \`${outcome.lock}\``,
    released: `released \`${outcome.lock}\``,
    "queue-cleaned": `left the queue of \`${outcome.lock}\` (never held it)`,
    noop: `nothing to release in \`${outcome.lock}\``,
    status: `status of \`${outcome.lock}\``,
    renewed: `renewed \`${outcome.lock}\`${outcome.lease ? ` until ${iso(new Date(outcome.lease.expiresAt).toISOString())}` : ""}`,
    "not-due": `renewal of \`${outcome.lock}\` not due yet`,
    lost: `lost \`${outcome.lock}\``,
    reaped: `reaped \`${outcome.lock}\``,
    "release-unrecorded": `released \`${outcome.lock}\`, but the lock state could not be updated`,
    failed: `${kind} of \`${outcome.lock}\` failed`
  }[outcome.result] ?? `${kind}: ${outcome.result}`;
  lines.push(`### leasehold: ${headline}`, "");
  const who = outcome.holderId ? `${kind === "reap" ? "Reaper" : "Holder"} \`${escapeCell(outcome.holderId)}\` \xB7 ` : "";
  lines.push(`${who}lock repository \`${plan.repository}\` \xB7 state branch \`${plan.stateBranch}\``, "");
  if (outcome.error) {
    lines.push(`> [!CAUTION]`, `> \`${outcome.error.code}\`: ${escapeCell(outcome.error.message)}`, "");
  }
  if (kind === "acquire" && outcome.waitMs !== void 0) {
    const position = outcome.queuePosition ? `, queue position ${outcome.queuePosition} at enqueue` : "";
    lines.push(`Waited ${(outcome.waitMs / 1e3).toFixed(1)} s${position}.`, "");
  }
  if (state) {
    const capacity = outcome.capacity ?? state.config?.capacity ?? "?";
    lines.push(`**Holders** (${state.holders.length} of capacity ${capacity}, fence counter ${state.fence})`, "");
    if (state.holders.length === 0) lines.push("_none_", "");
    else {
      lines.push("| fence | holder | since | lease until | run |", "| ---: | --- | --- | --- | --- |");
      for (const h of state.holders) {
        lines.push(`| ${h.fence} | \`${escapeCell(h.holderId)}\` | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
      }
      lines.push("");
    }
    lines.push(`**Queue** (${state.queue.length} waiting)`, "");
    if (state.queue.length === 0) lines.push("_empty_", "");
    else {
      lines.push("| # | holder | waiting since | run |", "| ---: | --- | --- | --- |");
      state.queue.forEach((q, i) => lines.push(`| ${i + 1} | \`${escapeCell(q.holderId)}\` | ${iso(q.enqueuedAt)} | ${runLink(q.run)} |`));
      lines.push("");
    }
    lines.push("**Timeline** (UTC; a holding the last change ended shows no start: the state does not keep it)", "", "```mermaid", mermaidGantt(state, now, { title: `who held ${outcome.lock}` }), "```", "");
  }
  if (kind === "reap") lines.push(...reapTables(outcome));
  const s = outcome.stats;
  lines.push(
    `<sub>${s.requests} requests (${s.reads} reads, ${s.notModified} not modified, ${s.writes} writes), ${s.conflicts} conflicts, ${s.retries} retries, ${s.rateLimitWaits} rate-limit waits, ${s.polls} polls${s.lookups ? `, ${s.lookups} Actions API lookups` : ""}</sub>`,
    ""
  );
  return lines.join("\n");
}
var ACTION_ORDER = { removed: 0, renewed: 1, kept: 2 };
function reapTables(outcome) {
  const lines = [];
  for (const r of outcome.reaped ?? []) {
    const n = (a) => r.entries.filter((e) => e.action === a).length;
    lines.push(`**\`${r.lock}\`**: ${n("removed")} removed, ${n("renewed")} renewed, ${n("kept")} kept`, "");
    if (r.entries.length === 0) {
      lines.push("_no holders and no queue_", "");
      continue;
    }
    lines.push("| action | reason | holder | where | run | evidence |", "| --- | --- | --- | --- | --- | --- |");
    const sorted = [...r.entries].sort((a, b) => ACTION_ORDER[a.action] - ACTION_ORDER[b.action]);
    for (const e of sorted) {
      const where = e.place === "holding" ? `holding (fence ${e.fence})` : "queue";
      lines.push(`| ${e.action} | ${e.reason} | \`${escapeCell(e.holderId)}\` | ${where} | ${runLink(e.run)} | ${escapeCell(e.detail)} |`);
    }
    lines.push("");
  }
  return lines;
}
function finalLine(kind, outcome) {
  const s = outcome.stats;
  const detail = outcome.error ? `: ${outcome.error.code}: ${outcome.error.message}` : "";
  return `leasehold ${kind} ${outcome.lock}: ${outcome.result}${detail} (${s.requests} requests, ${s.writes} writes, ${s.conflicts} conflicts)`;
}

// actions/lib/run.mjs
var errorMessage = (error) => describeInputError(error, actionInput);
var warningMessage = (warning2) => describeInputWarning(warning2, actionInput);
function collectInputs(kind, env = process.env) {
  const raw = {};
  for (const name of INPUTS[kind]) {
    if (name === "token") continue;
    const value = env[inputEnvName(name)];
    if (value !== void 0 && value !== "") raw[name] = value;
  }
  for (const name of CONTEXT) {
    if (env[name]) raw[name] = env[name];
  }
  return raw;
}
var logger = {
  debug: (text) => debug(text),
  info: (text) => info(text),
  warning: (text) => warning(text)
};
async function withCancellation(body) {
  const controller = new AbortController();
  const onSignal = (signal) => {
    if (!controller.signal.aborted) info(`received ${signal}`);
    controller.abort(signal);
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);
  try {
    return await body(controller.signal);
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}
function transportFor(plan, token) {
  return createTransport({
    baseUrl: apiBaseUrl(),
    token,
    repository: plan.repository
  });
}
function maskedToken() {
  const token = (process.env[inputEnvName("token")] ?? "").trim();
  if (token) setSecret(token);
  return token;
}
function requireToken(token) {
  if (!token) throw Object.assign(new Error("input `token` is required"), { code: "invalid-input", input: "token" });
  return token;
}
async function run(kind) {
  if (kind === "acquire" && process.env.STATE_isPost === "true") return post();
  let op;
  try {
    const token = maskedToken();
    const { Operation, version } = loadCore();
    op = new Operation(kind, collectInputs(kind), void 0);
    const plan = op.plan;
    requireToken(token);
    for (const warning2 of plan.warnings) warning(warningMessage(warning2));
    info(`leasehold ${version}: ${kind} ${plan.lock} in ${plan.repository} (branch ${plan.stateBranch}) as ${plan.holderId}`);
    if (kind === "acquire") {
      saveState("isPost", "true");
      saveState("holder-id", plan.holderId);
      saveState("nonce", plan.nonce);
    }
    const perform = transportFor(plan, token);
    const outcome = await withCancellation((cancel) => runOperation({ op, perform, logger, cancel }));
    if (kind === "acquire") {
      saveState("result", outcome.result);
      if (outcome.state) saveState("revision", String(outcome.state.revision));
    }
    const outputs = outputsFor(kind, outcome);
    for (const name of OUTPUTS[kind]) setOutput(name, outputs[name] ?? "");
    info(finalLine(kind, outcome));
    if (process.env.GITHUB_STEP_SUMMARY) {
      try {
        await summary.addRaw(summaryFor(kind, outcome, plan)).write();
      } catch (error) {
        warning(`could not write the job summary: ${error.message}`);
      }
    }
    if (!outcome.success) setFailed(`leasehold ${kind} ${outcome.result}: ${outcome.error?.message ?? ""}`.trim());
  } catch (error) {
    const where = error.input ? ` [${error.input}]` : "";
    setOutput("result", "failed");
    setOutput("error-code", error.code ?? "internal");
    setFailed(`leasehold ${kind}${where}: ${errorMessage(error)}`);
  } finally {
    op?.free?.();
  }
}
async function post() {
  let op;
  try {
    const holderId = process.env["STATE_holder-id"];
    const nonce = process.env.STATE_nonce;
    if (!holderId || !nonce) return info("leasehold post: acquire did not start; nothing to clean up");
    const token = maskedToken();
    const { Operation } = loadCore();
    const inputs = { ...collectInputs("acquire"), "holder-id": holderId, nonce };
    if (process.env.STATE_revision) inputs["min-revision"] = process.env.STATE_revision;
    op = new Operation("cleanup", inputs, void 0);
    const plan = op.plan;
    for (const warning2 of plan.warnings) warning(warningMessage(warning2));
    const perform = transportFor(plan, requireToken(token));
    const outcome = await runOperation({ op, perform, logger });
    const said = {
      skipped: "release-on-exit is false; leaving the lock as it is",
      released: "released the lock this job still held (no release step removed it)",
      "queue-cleaned": "removed this job's queue entry",
      noop: "nothing left to clean up"
    }[outcome.result];
    if (said) info(`leasehold post ${plan.lock}: ${said}`);
    else warning(`leasehold post ${plan.lock}: could not clean up (${outcome.result}: ${outcome.error?.message ?? ""}); the release step or the lease must free it`);
  } catch (error) {
    warning(`leasehold post: cleanup skipped: ${error.message}`);
  } finally {
    op?.free?.();
  }
}
async function runGuard() {
  try {
    const token = maskedToken();
    const core_ = loadCore();
    const inputs = collectInputs("guard");
    const { plan, machine } = checkGuardInputs(core_, inputs);
    const argv = (process.env[inputEnvName("command")] ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
    if (argv.length === 0) throw Object.assign(new Error("input `command` is required: the program and its arguments, one per line"), { code: "invalid-input", input: "command" });
    for (const warning2 of plan.warnings) warning(warningMessage(warning2));
    requireToken(token);
    const perform = transportFor(plan, token);
    const emit = (obj) => info(JSON.stringify(obj));
    const { exitCode, reason } = await guard({ core: core_, machine, inputs, argv, perform, emit, logger, secrets: [token] });
    setOutput("exit-code", String(exitCode));
    setOutput("result", reason);
    if (exitCode !== 0) setFailed(`leasehold guard: ${reason} (exit code ${exitCode})`);
  } catch (error) {
    const where = error.input ? ` [${error.input}]` : "";
    setOutput("result", "failed");
    setFailed(`leasehold guard${where}: ${errorMessage(error)}`);
  }
}

export {
  errorMessage,
  warningMessage,
  run,
  runGuard
};
