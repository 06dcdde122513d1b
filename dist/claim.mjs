import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  apiBaseUrl,
  createTransport,
  errorMessage,
  runOperation,
  warningMessage
} from "./shared-VI6VWKXP.mjs";
import {
  CONTEXT,
  INPUTS,
  OUTPUTS,
  debug,
  info,
  inputEnvName,
  setFailed,
  setOutput,
  setSecret,
  warning
} from "./shared-HRSGTLVH.mjs";
import {
  loadCore
} from "./shared-QYZQB6T6.mjs";

// actions/lib/claim-action.mjs
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
var KINDS = { claim: "claim", renew: "claim-renew", release: "claim-release", verify: "claim-verify" };
var CORE_NAME = { "claim-token": "token", metadata: "set" };
function inputs(env) {
  const raw = {};
  for (const name of INPUTS.claim) {
    if (name === "token" || name === "operation") continue;
    const value = env[inputEnvName(name)];
    if (value === void 0 || value === "") continue;
    if (name === "config") {
      const path = isAbsolute(value) ? value : join(env.GITHUB_WORKSPACE || process.cwd(), value);
      try {
        raw.config = readFileSync(path, "utf8");
      } catch (error) {
        throw Object.assign(new Error(`input \`config\`: ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`), { code: "invalid-config", input: "config" });
      }
      raw["config-path"] = value;
    } else raw[CORE_NAME[name] ?? name] = value;
  }
  for (const name of CONTEXT) if (env[name]) raw[name] = env[name];
  raw.invocation = "leasehold";
  return raw;
}
function write(doc) {
  const item = doc.claim?.items?.[0];
  const held = item?.payload?.state === "held";
  const outputs = {
    token: item?.token ?? "",
    "run-id": doc.claim?.runId || item?.payload?.runId || "",
    status: doc.status,
    "expires-at": held ? item.payload.lease?.expiresAt ?? "" : "",
    "exit-code": String(doc.exitCode),
    result: JSON.stringify(doc)
  };
  for (const name of OUTPUTS.claim) setOutput(name, outputs[name]);
  info(`leasehold ${doc.command}: ${doc.status} (exit code ${doc.exitCode}: ${doc.action})${doc.claim?.detail ? `: ${doc.claim.detail}` : ""}`);
  if (doc.exitCode !== 0) setFailed(`leasehold ${doc.command}: ${doc.status} (exit code ${doc.exitCode})${doc.error?.message ? `: ${doc.error.message}` : ""}`);
}
async function runClaim(env = process.env) {
  const core = loadCore();
  const operation = (env[inputEnvName("operation")] ?? "").trim();
  const command = `claims ${operation}`;
  let op;
  const token = (env[inputEnvName("token")] ?? "").trim();
  if (token) setSecret(token);
  try {
    const kind = KINDS[operation];
    if (!kind) throw Object.assign(new Error(`input \`operation\` must be one of ${Object.keys(KINDS).join(", ")} (got ${JSON.stringify(operation)})`), { usage: true, code: "usage" });
    op = new core.Operation(kind, inputs(env), void 0);
    for (const w of op.plan.warnings) warning(warningMessage(w));
    if (!token) throw Object.assign(new Error("input `token` is required"), { usage: true, code: "no-token" });
    const perform = createTransport({ baseUrl: apiBaseUrl(env), token, repository: op.plan.repository });
    const logger = { debug: (t) => debug(t), info: (t) => info(t), warning: (t) => warning(t) };
    write(core.resultDocument(command, await runOperation({ op, perform, logger })));
  } catch (error) {
    const status = error.usage || error.code === "invalid-input" ? "usage" : "config";
    const doc = core.refusalDocument(command, status, error.code ?? "internal", errorMessage(error));
    write(doc);
  } finally {
    op?.free?.();
  }
}

// actions/claim/main.mjs
await runClaim();
