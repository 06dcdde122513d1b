import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  CONTEXT,
  INPUTS,
  OUTPUTS,
  actionInput,
  debug,
  describeInputError,
  describeInputWarning,
  info,
  inputEnvName,
  saveState,
  setFailed,
  setOutput,
  setSecret,
  summary,
  warning
} from "./shared-HRSGTLVH.mjs";
import {
  loadCore
} from "./shared-QYZQB6T6.mjs";

// actions/lib/driver.mjs
var systemClock = {
  now: () => Date.now(),
  sleepUntil: (ms, signal) => new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms - Date.now()));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  })
};
function describe(command) {
  switch (command.kind) {
    case "readFile":
      return `GET contents/${command.path}${command.ref ? `?ref=${command.ref}` : ""}${command.ifNoneMatch ? " (if-none-match)" : ""}`;
    case "writeFile":
      return `PUT contents/${command.path} on ${command.branch}${command.sha ? ` (sha ${command.sha.slice(0, 7)})` : " (create)"}`;
    case "createTree":
      return "POST git/trees";
    case "createCommit":
      return "POST git/commits";
    case "createBranch":
      return `POST git/refs refs/heads/${command.branch}`;
    case "createRef":
      return `POST git/refs ${command.ref}`;
    case "getRef":
      return `GET git/ref/${command.ref}`;
    case "listMatchingRefs":
      return `GET git/matching-refs/${command.prefix}${command.page > 1 ? `?page=${command.page}` : ""}`;
    case "getRunAttempt":
      return `GET actions/runs/${command.runId}/attempts/${command.attempt} in ${command.repository}`;
    case "getJob":
      return `GET actions/jobs/${command.jobId} in ${command.repository}`;
    case "listJobs":
      return `GET actions/runs/${command.runId}/attempts/${command.attempt}/jobs in ${command.repository}`;
    case "getViewer":
      return "GET /user";
    case "listComments":
      return `GET issues/${command.number}/comments${command.page > 1 ? `?page=${command.page}` : ""} in ${command.repository}`;
    case "createComment":
      return `POST issues/${command.number}/comments in ${command.repository}`;
    case "getPullRequest":
      return `GET pulls/${command.number} in ${command.repository}`;
    case "listWorkflowRuns":
      return `GET actions/workflows/${command.workflow}/runs?event=${command.event} in ${command.repository}`;
    case "listIssues":
      return `GET issues${command.page > 1 ? `?page=${command.page}` : ""} in ${command.repository}`;
    case "createIssue":
      return `POST issues in ${command.repository}`;
    case "updateIssue":
      return `PATCH issues/${command.number} in ${command.repository}`;
    default:
      return command.kind;
  }
}
function describeReply(reply) {
  switch (reply.kind) {
    case "http":
      return `${reply.status} ${reply.message ?? ""}`.trim();
    case "transport":
      return `no answer (${reply.sent ? "may have been sent" : "not sent"}): ${reply.message}`;
    case "notModified":
      return "304 not modified";
    case "run":
      return `run ${reply.runId} attempt ${reply.runAttempt}: ${reply.status}${reply.conclusion ? ` (${reply.conclusion})` : ""}`;
    case "job":
      return `job ${reply.id} (${reply.name}): ${reply.status}${reply.conclusion ? ` (${reply.conclusion})` : ""}${reply.runnerName ? ` on ${reply.runnerName}` : ""}`;
    case "jobs":
      return `${reply.jobs.length} of ${reply.totalCount} jobs${reply.jobs.length ? ": " : ""}${reply.jobs.slice(0, 5).map((j) => `${j.name} ${j.status}`).join(", ")}${reply.jobs.length > 5 ? ", \u2026" : ""}`;
    default:
      return reply.kind;
  }
}
async function runOperation({ op, perform, clock: clock2 = systemClock, logger: logger2, cancel }) {
  let step = op.step({ kind: "start", now: clock2.now() });
  let told = false;
  for (; ; ) {
    for (const line of step.log ?? []) logger2[line.level](line.text);
    const command = step.command;
    if (command.kind === "finish") return command.outcome;
    if (command.kind === "sleep") {
      if (!cancel?.aborted || told) await clock2.sleepUntil(command.untilMs, told ? void 0 : cancel);
      if (cancel?.aborted && !told) {
        told = true;
        logger2.info("cancellation received: leaving the lock before exiting");
        step = op.step({ kind: "cancel", now: clock2.now() });
      } else {
        step = op.step({ kind: "timer", now: clock2.now() });
      }
      continue;
    }
    const reply = await perform(command);
    logger2.debug(`${describe(command)} \u2192 ${describeReply(reply)}`);
    step = op.step({ kind: "reply", now: clock2.now(), reply });
  }
}

// actions/lib/cleanup.mjs
import { spawn as spawn2 } from "node:child_process";

// actions/lib/guard.mjs
import { spawn, spawnSync } from "node:child_process";
import { constants } from "node:os";
var FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];
var CREDENTIAL_NAMES = /* @__PURE__ */ new Set([
  "INPUT_TOKEN",
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "LEASEHOLD_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_URL",
  "ACTIONS_RUNTIME_URL",
  "ACTIONS_RESULTS_URL"
]);
function processTree({ platform = process.platform, kill = (pid, signal) => process.kill(pid, signal), run: run2 = spawnSync, logger: logger2 } = {}) {
  if (platform === "win32") {
    return {
      spawnOptions: { detached: false, windowsHide: true },
      signal(pid, signal) {
        const force = signal === "SIGKILL";
        const args = force ? ["/T", "/F", "/PID", String(pid)] : ["/T", "/PID", String(pid)];
        const r = run2("taskkill", args, { stdio: ["ignore", "pipe", "pipe"], windowsHide: true, encoding: "utf8" });
        if (!r.error && (r.status === 0 || r.status === 128)) return;
        const why = `taskkill ${args.join(" ")} failed: ${r.error?.message ?? `exit ${r.status}: ${String(r.stderr ?? "").trim()}`}`;
        if (force) logger2?.warning(`leasehold guard: ${why}`);
        else logger2?.info(`leasehold guard: ${why}; the tree is ended by force after the kill grace`);
      }
    };
  }
  return {
    spawnOptions: { detached: true },
    signal(pid, signal) {
      try {
        kill(-pid, signal);
      } catch (error) {
        if (error.code !== "ESRCH") logger2?.warning(`leasehold guard: could not send ${signal} to the command's process group ${pid}: ${error.message}`);
      }
    }
  };
}
function checkGuardInputs(core, inputs) {
  const probe = new core.Operation("renew", inputs, void 0);
  const plan = probe.plan;
  probe.free?.();
  return { plan, machine: new core.Guard(inputs) };
}
var GITHUB_TOKEN_SHAPE = /(?:^|[^A-Za-z0-9])(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_)[A-Za-z0-9_-]/;
function childEnv(env, secrets) {
  const values = secrets.map((s) => (s ?? "").trim()).filter(Boolean);
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    const text = String(value);
    if (CREDENTIAL_NAMES.has(name) || values.some((s) => text.includes(s)) || GITHUB_TOKEN_SHAPE.test(text)) continue;
    out[name] = value;
  }
  return out;
}
function unfinishedRenewal(plan, error) {
  const stats = { requests: 0, reads: 0, writes: 0, notModified: 0, conflicts: 0, retries: 0, rateLimitWaits: 0, staleReads: 0, polls: 0, lookups: 0 };
  return {
    result: "failed",
    success: false,
    lock: plan?.lock ?? "",
    holderId: plan?.holderId ?? "",
    error: { code: "api-unavailable", class: "unknown-outcome", message: `the renewal did not finish (${error?.message ?? error}); whether its last request reached GitHub is unknown` },
    stats
  };
}
function childExit(code, signal) {
  if (signal) return { kind: "signalled", signal, number: constants.signals[signal] ?? 0 };
  return { kind: "exited", code: code ?? 0 };
}
function childFields(child) {
  return {
    childExitCode: child?.kind === "exited" ? child.code : null,
    childSignal: child?.kind === "signalled" ? child.signal : null,
    error: child?.kind === "spawn-failed" ? child.message : null
  };
}
var GUARD_SCHEMA = "leasehold-result/1";
var LOCK_DOCUMENTS = {
  start: ({ first, pid, argv, lease }) => ({
    schema: GUARD_SCHEMA,
    command: "guard",
    event: "guard-start",
    lock: first.lock,
    holderId: first.holderId,
    fence: first.fence ?? null,
    pid,
    argv,
    expiresAt: new Date(lease.expiresAt).toISOString(),
    localDeadline: new Date(lease.localDeadline).toISOString()
  }),
  refused: ({ first, finish }) => ({
    schema: GUARD_SCHEMA,
    command: "guard",
    event: "guard-refused",
    reason: finish.reason,
    exitCode: finish.exitCode,
    lock: first.lock,
    holderId: first.holderId,
    result: first.result,
    error: first.error ?? null
  }),
  exit: ({ finish, child }) => ({
    schema: GUARD_SCHEMA,
    command: "guard",
    event: "guard-exit",
    reason: finish.reason,
    exitCode: finish.exitCode,
    ...child,
    renewals: finish.renewals
  })
};
async function guard({ core, machine, inputs, argv, perform, emit, logger: logger2, clock: clock2 = systemClock, env = process.env, secrets = [], renewKind = "renew", onRenewal = () => {
}, documents = LOCK_DOCUMENTS, tree = processTree({ logger: logger2 }) }) {
  const events = [];
  let wake = null;
  let fatal = null;
  const push = (event) => {
    events.push(event);
    wake?.();
  };
  let first = null;
  let child = null;
  let timer = null;
  const disarm = () => timer?.abort();
  const arm = (at) => {
    disarm();
    const controller = timer = new AbortController();
    clock2.sleepUntil(at, controller.signal).then(() => {
      if (!controller.signal.aborted) push({ kind: "timer-fired", now: clock2.now() });
    });
  };
  let last = null;
  const renew = (kind) => {
    const op = new core.Operation(renewKind, inputs, void 0);
    const plan = op.plan;
    runOperation({ op, perform, logger: logger2, clock: clock2 }).catch((error) => unfinishedRenewal(plan, error)).then((outcome) => {
      if (kind === "verified") first = outcome;
      last = outcome;
      onRenewal(outcome);
      push({ kind, now: clock2.now(), outcome });
    }).catch((error) => {
      fatal = error;
      wake?.();
    }).finally(() => op.free?.());
  };
  const forward = (signal) => push({ kind: "signal-received", now: clock2.now(), signal });
  const group = (signal) => {
    if (child?.pid) tree.signal(child.pid, signal);
  };
  const start = (lease) => {
    child = spawn(argv[0], argv.slice(1), { stdio: "inherit", ...tree.spawnOptions, env: childEnv(env, secrets) });
    let ended = false;
    child.on("exit", (code, signal) => {
      if (!ended) push({ kind: "child-exited", now: clock2.now(), exit: childExit(code, signal) });
      ended = true;
    });
    child.on("error", (error) => {
      if (!ended) push({ kind: "child-exited", now: clock2.now(), exit: { kind: "spawn-failed", message: error.message } });
      ended = true;
    });
    for (const s of FORWARDED) process.on(s, forward);
    emit(documents.start({ first, pid: child.pid ?? null, argv, lease }));
  };
  const stopGroup = async () => {
    if (!child?.pid) return;
    group("SIGTERM");
    await clock2.sleepUntil(clock2.now() + killGraceMs);
    group("SIGKILL");
  };
  const { killGraceMs } = machine.settings;
  try {
    let step = machine.step({ kind: "started", now: clock2.now() });
    for (; ; ) {
      for (const line of step.log ?? []) logger2[line.level](`leasehold guard: ${line.text}`);
      for (const command of step.commands) {
        switch (command.kind) {
          case "verify":
            renew("verified");
            break;
          case "renew":
            renew("renewal-ended");
            break;
          case "spawn":
            start(command.lease);
            break;
          case "wait-until":
            arm(command.at);
            break;
          case "signal":
            group(command.signal);
            break;
          case "finish": {
            const { exitCode, reason } = command;
            if (reason === "not-held") emit(documents.refused({ first, finish: command }));
            else emit(documents.exit({ finish: command, child: childFields(command.child), last }));
            return { exitCode, reason };
          }
          default:
            throw new Error(`leasehold guard: unknown command ${command.kind}`);
        }
      }
      while (events.length === 0 && !fatal) await new Promise((resolve) => wake = resolve);
      wake = null;
      if (fatal) throw fatal;
      step = machine.step(events.shift());
    }
  } catch (error) {
    logger2.warning(`leasehold guard: stopping the command's process group after an error of the guard: ${error.message}`);
    await stopGroup();
    throw error;
  } finally {
    disarm();
    for (const s of FORWARDED) process.off(s, forward);
  }
}

// actions/lib/cleanup.mjs
function runCleanupCommand({ settings, env = process.env, secrets = [], tree = processTree(), clock: clock2 = systemClock, logger: logger2, signals = process, cancelled = null }) {
  const { argv, timeoutMs, killGraceMs } = settings;
  if (cancelled) {
    logger2?.warning(`leasehold cleanup: ${cancelled} was received before the cleanup command started; it does not run`);
    return Promise.resolve({ kind: "signalled", signal: cancelled });
  }
  return new Promise((resolve) => {
    const timer = new AbortController();
    const grace = new AbortController();
    let timedOut = false;
    let ended = false;
    let child;
    const group = (signal) => {
      if (child?.pid) tree.signal(child.pid, signal);
    };
    const forward = (signal) => {
      logger2?.info(`leasehold cleanup: received ${signal}; passing it on to the cleanup command`);
      group(signal);
    };
    const finish = (end) => {
      if (ended) return;
      ended = true;
      timer.abort();
      grace.abort();
      for (const s of FORWARDED) signals.off(s, forward);
      if (timedOut) group("SIGKILL");
      resolve(timedOut ? { kind: "timed-out" } : end);
    };
    try {
      child = spawn2(argv[0], argv.slice(1), { stdio: "inherit", ...tree.spawnOptions, env: childEnv(env, secrets) });
    } catch (error) {
      resolve({ kind: "spawn-failed", message: error.message });
      return;
    }
    for (const s of FORWARDED) signals.on(s, forward);
    child.on("exit", (code, signal) => finish(signal ? { kind: "signalled", signal } : { kind: "exited", code: code ?? 0 }));
    child.on("error", (error) => finish({ kind: "spawn-failed", message: error.message }));
    const deadline = clock2.now() + timeoutMs;
    clock2.sleepUntil(deadline, timer.signal).then(() => {
      if (timer.signal.aborted || ended) return;
      timedOut = true;
      logger2?.warning(`leasehold cleanup: the cleanup command is still running after ${timeoutMs / 1e3} s; stopping it (SIGTERM, SIGKILL after ${killGraceMs / 1e3} s)`);
      group("SIGTERM");
      clock2.sleepUntil(clock2.now() + killGraceMs, grace.signal).then(() => {
        if (!ended) group("SIGKILL");
      });
    });
  });
}
function describeEnd(end) {
  switch (end.kind) {
    case "exited":
      return `exited with ${end.code}`;
    case "signalled":
      return `was ended by ${end.signal}`;
    case "timed-out":
      return "was stopped at its deadline";
    default:
      return `could not start (${end.message})`;
  }
}
var exitCodeOf = (end) => end.kind === "exited" ? String(end.code) : "";

// node_modules/universal-user-agent/index.js
function getUserAgent() {
  if (typeof navigator === "object" && "userAgent" in navigator) {
    return navigator.userAgent;
  }
  if (typeof process === "object" && process.version !== void 0) {
    return `Node.js/${process.version.substr(1)} (${process.platform}; ${process.arch})`;
  }
  return "<environment undetectable>";
}

// node_modules/before-after-hook/lib/register.js
function register(state, name, method, options) {
  if (typeof method !== "function") {
    throw new Error("method for before hook must be a function");
  }
  if (!options) {
    options = {};
  }
  if (Array.isArray(name)) {
    return name.reverse().reduce((callback, name2) => {
      return register.bind(null, state, name2, callback, options);
    }, method)();
  }
  return Promise.resolve().then(() => {
    if (!state.registry[name]) {
      return method(options);
    }
    return state.registry[name].reduce((method2, registered) => {
      return registered.hook.bind(null, method2, options);
    }, method)();
  });
}

// node_modules/before-after-hook/lib/add.js
function addHook(state, kind, name, hook2) {
  const orig = hook2;
  if (!state.registry[name]) {
    state.registry[name] = [];
  }
  if (kind === "before") {
    hook2 = (method, options) => {
      return Promise.resolve().then(orig.bind(null, options)).then(method.bind(null, options));
    };
  }
  if (kind === "after") {
    hook2 = (method, options) => {
      let result;
      return Promise.resolve().then(method.bind(null, options)).then((result_) => {
        result = result_;
        return orig(result, options);
      }).then(() => {
        return result;
      });
    };
  }
  if (kind === "error") {
    hook2 = (method, options) => {
      return Promise.resolve().then(method.bind(null, options)).catch((error) => {
        return orig(error, options);
      });
    };
  }
  state.registry[name].push({
    hook: hook2,
    orig
  });
}

// node_modules/before-after-hook/lib/remove.js
function removeHook(state, name, method) {
  if (!state.registry[name]) {
    return;
  }
  const index = state.registry[name].map((registered) => {
    return registered.orig;
  }).indexOf(method);
  if (index === -1) {
    return;
  }
  state.registry[name].splice(index, 1);
}

// node_modules/before-after-hook/index.js
var bind = Function.bind;
var bindable = bind.bind(bind);
function bindApi(hook2, state, name) {
  const removeHookRef = bindable(removeHook, null).apply(
    null,
    name ? [state, name] : [state]
  );
  hook2.api = { remove: removeHookRef };
  hook2.remove = removeHookRef;
  ["before", "error", "after", "wrap"].forEach((kind) => {
    const args = name ? [state, kind, name] : [state, kind];
    hook2[kind] = hook2.api[kind] = bindable(addHook, null).apply(null, args);
  });
}
function Singular() {
  const singularHookName = /* @__PURE__ */ Symbol("Singular");
  const singularHookState = {
    registry: {}
  };
  const singularHook = register.bind(null, singularHookState, singularHookName);
  bindApi(singularHook, singularHookState, singularHookName);
  return singularHook;
}
function Collection() {
  const state = {
    registry: {}
  };
  const hook2 = register.bind(null, state);
  bindApi(hook2, state);
  return hook2;
}
var before_after_hook_default = { Singular, Collection };

// node_modules/@octokit/endpoint/dist-bundle/index.js
var VERSION = "0.0.0-development";
var userAgent = `octokit-endpoint.js/${VERSION} ${getUserAgent()}`;
var DEFAULTS = {
  method: "GET",
  baseUrl: "https://api.github.com",
  headers: {
    accept: "application/vnd.github.v3+json",
    "user-agent": userAgent
  },
  mediaType: {
    format: ""
  }
};
function lowercaseKeys(object) {
  if (!object) {
    return {};
  }
  return Object.keys(object).reduce((newObj, key) => {
    newObj[key.toLowerCase()] = object[key];
    return newObj;
  }, {});
}
function isPlainObject(value) {
  if (typeof value !== "object" || value === null) return false;
  if (Object.prototype.toString.call(value) !== "[object Object]") return false;
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return true;
  const Ctor = Object.prototype.hasOwnProperty.call(proto, "constructor") && proto.constructor;
  return typeof Ctor === "function" && Ctor instanceof Ctor && Function.prototype.call(Ctor) === Function.prototype.call(value);
}
function mergeDeep(defaults, options) {
  const result = Object.assign({}, defaults);
  Object.keys(options).forEach((key) => {
    if (isPlainObject(options[key])) {
      if (!(key in defaults)) Object.assign(result, { [key]: options[key] });
      else result[key] = mergeDeep(defaults[key], options[key]);
    } else {
      Object.assign(result, { [key]: options[key] });
    }
  });
  return result;
}
function removeUndefinedProperties(obj) {
  for (const key in obj) {
    if (obj[key] === void 0) {
      delete obj[key];
    }
  }
  return obj;
}
function merge(defaults, route, options) {
  if (typeof route === "string") {
    let [method, url] = route.split(" ");
    options = Object.assign(url ? { method, url } : { url: method }, options);
  } else {
    options = Object.assign({}, route);
  }
  options.headers = lowercaseKeys(options.headers);
  removeUndefinedProperties(options);
  removeUndefinedProperties(options.headers);
  const mergedOptions = mergeDeep(defaults || {}, options);
  if (options.url === "/graphql") {
    if (defaults && defaults.mediaType.previews?.length) {
      mergedOptions.mediaType.previews = defaults.mediaType.previews.filter(
        (preview) => !mergedOptions.mediaType.previews.includes(preview)
      ).concat(mergedOptions.mediaType.previews);
    }
    mergedOptions.mediaType.previews = (mergedOptions.mediaType.previews || []).map((preview) => preview.replace(/-preview/, ""));
  }
  return mergedOptions;
}
function addQueryParameters(url, parameters) {
  const separator = /\?/.test(url) ? "&" : "?";
  const names = Object.keys(parameters);
  if (names.length === 0) {
    return url;
  }
  return url + separator + names.map((name) => {
    if (name === "q") {
      return "q=" + parameters.q.split("+").map(encodeURIComponent).join("+");
    }
    return `${name}=${encodeURIComponent(parameters[name])}`;
  }).join("&");
}
var urlVariableRegex = /\{[^{}}]+\}/g;
function removeNonChars(variableName) {
  return variableName.replace(/(?:^\W+)|(?:(?<!\W)\W+$)/g, "").split(/,/);
}
function extractUrlVariableNames(url) {
  const matches = url.match(urlVariableRegex);
  if (!matches) {
    return [];
  }
  return matches.map(removeNonChars).reduce((a, b) => a.concat(b), []);
}
function omit(object, keysToOmit) {
  const result = { __proto__: null };
  for (const key of Object.keys(object)) {
    if (keysToOmit.indexOf(key) === -1) {
      result[key] = object[key];
    }
  }
  return result;
}
function encodeReserved(str2) {
  return str2.split(/(%[0-9A-Fa-f]{2})/g).map(function(part) {
    if (!/%[0-9A-Fa-f]/.test(part)) {
      part = encodeURI(part).replace(/%5B/g, "[").replace(/%5D/g, "]");
    }
    return part;
  }).join("");
}
function encodeUnreserved(str2) {
  return encodeURIComponent(str2).replace(/[!'()*]/g, function(c) {
    return "%" + c.charCodeAt(0).toString(16).toUpperCase();
  });
}
function encodeValue(operator, value, key) {
  value = operator === "+" || operator === "#" ? encodeReserved(value) : encodeUnreserved(value);
  if (key) {
    return encodeUnreserved(key) + "=" + value;
  } else {
    return value;
  }
}
function isDefined(value) {
  return value !== void 0 && value !== null;
}
function isKeyOperator(operator) {
  return operator === ";" || operator === "&" || operator === "?";
}
function getValues(context, operator, key, modifier) {
  var value = context[key], result = [];
  if (isDefined(value) && value !== "") {
    if (typeof value === "string" || typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
      value = value.toString();
      if (modifier && modifier !== "*") {
        value = value.substring(0, parseInt(modifier, 10));
      }
      result.push(
        encodeValue(operator, value, isKeyOperator(operator) ? key : "")
      );
    } else {
      if (modifier === "*") {
        if (Array.isArray(value)) {
          value.filter(isDefined).forEach(function(value2) {
            result.push(
              encodeValue(operator, value2, isKeyOperator(operator) ? key : "")
            );
          });
        } else {
          Object.keys(value).forEach(function(k) {
            if (isDefined(value[k])) {
              result.push(encodeValue(operator, value[k], k));
            }
          });
        }
      } else {
        const tmp = [];
        if (Array.isArray(value)) {
          value.filter(isDefined).forEach(function(value2) {
            tmp.push(encodeValue(operator, value2));
          });
        } else {
          Object.keys(value).forEach(function(k) {
            if (isDefined(value[k])) {
              tmp.push(encodeUnreserved(k));
              tmp.push(encodeValue(operator, value[k].toString()));
            }
          });
        }
        if (isKeyOperator(operator)) {
          result.push(encodeUnreserved(key) + "=" + tmp.join(","));
        } else if (tmp.length !== 0) {
          result.push(tmp.join(","));
        }
      }
    }
  } else {
    if (operator === ";") {
      if (isDefined(value)) {
        result.push(encodeUnreserved(key));
      }
    } else if (value === "" && (operator === "&" || operator === "?")) {
      result.push(encodeUnreserved(key) + "=");
    } else if (value === "") {
      result.push("");
    }
  }
  return result;
}
function parseUrl(template) {
  return {
    expand: expand.bind(null, template)
  };
}
function expand(template, context) {
  var operators = ["+", "#", ".", "/", ";", "?", "&"];
  template = template.replace(
    /\{([^\{\}]+)\}|([^\{\}]+)/g,
    function(_, expression, literal) {
      if (expression) {
        let operator = "";
        const values = [];
        if (operators.indexOf(expression.charAt(0)) !== -1) {
          operator = expression.charAt(0);
          expression = expression.substr(1);
        }
        expression.split(/,/g).forEach(function(variable) {
          var tmp = /([^:\*]*)(?::(\d+)|(\*))?/.exec(variable);
          values.push(getValues(context, operator, tmp[1], tmp[2] || tmp[3]));
        });
        if (operator && operator !== "+") {
          var separator = ",";
          if (operator === "?") {
            separator = "&";
          } else if (operator !== "#") {
            separator = operator;
          }
          return (values.length !== 0 ? operator : "") + values.join(separator);
        } else {
          return values.join(",");
        }
      } else {
        return encodeReserved(literal);
      }
    }
  );
  if (template === "/") {
    return template;
  } else {
    return template.replace(/\/$/, "");
  }
}
function parse(options) {
  let method = options.method.toUpperCase();
  let url = (options.url || "/").replace(/:([a-z]\w+)/g, "{$1}");
  let headers = Object.assign({}, options.headers);
  let body;
  let parameters = omit(options, [
    "method",
    "baseUrl",
    "url",
    "headers",
    "request",
    "mediaType"
  ]);
  const urlVariableNames = extractUrlVariableNames(url);
  url = parseUrl(url).expand(parameters);
  if (!/^http/.test(url)) {
    url = options.baseUrl + url;
  }
  const omittedParameters = Object.keys(options).filter((option) => urlVariableNames.includes(option)).concat("baseUrl");
  const remainingParameters = omit(parameters, omittedParameters);
  const isBinaryRequest = /application\/octet-stream/i.test(headers.accept);
  if (!isBinaryRequest) {
    if (options.mediaType.format) {
      headers.accept = headers.accept.split(/,/).map(
        (format) => format.replace(
          /application\/vnd(\.\w+)(\.v3)?(\.\w+)?(\+json)?$/,
          `application/vnd$1$2.${options.mediaType.format}`
        )
      ).join(",");
    }
    if (url.endsWith("/graphql")) {
      if (options.mediaType.previews?.length) {
        const previewsFromAcceptHeader = headers.accept.match(/(?<![\w-])[\w-]+(?=-preview)/g) || [];
        headers.accept = previewsFromAcceptHeader.concat(options.mediaType.previews).map((preview) => {
          const format = options.mediaType.format ? `.${options.mediaType.format}` : "+json";
          return `application/vnd.github.${preview}-preview${format}`;
        }).join(",");
      }
    }
  }
  if (["GET", "HEAD"].includes(method)) {
    url = addQueryParameters(url, remainingParameters);
  } else {
    if ("data" in remainingParameters) {
      body = remainingParameters.data;
    } else {
      if (Object.keys(remainingParameters).length) {
        body = remainingParameters;
      }
    }
  }
  if (!headers["content-type"] && typeof body !== "undefined") {
    headers["content-type"] = "application/json; charset=utf-8";
  }
  if (["PATCH", "PUT"].includes(method) && typeof body === "undefined") {
    body = "";
  }
  return Object.assign(
    { method, url, headers },
    typeof body !== "undefined" ? { body } : null,
    options.request ? { request: options.request } : null
  );
}
function endpointWithDefaults(defaults, route, options) {
  return parse(merge(defaults, route, options));
}
function withDefaults(oldDefaults, newDefaults) {
  const DEFAULTS2 = merge(oldDefaults, newDefaults);
  const endpoint2 = endpointWithDefaults.bind(null, DEFAULTS2);
  return Object.assign(endpoint2, {
    DEFAULTS: DEFAULTS2,
    defaults: withDefaults.bind(null, DEFAULTS2),
    merge: merge.bind(null, DEFAULTS2),
    parse
  });
}
var endpoint = withDefaults(null, DEFAULTS);

// node_modules/content-type/dist/index.js
var SP = 32;
var HTAB = 9;
var SEMI = 59;
var EQ = 61;
var DQUOTE = 34;
var BSLASH = 92;
var COMMA = 44;
var LOWER_CASE = 1;
var OWS = 2;
var SEMI_FLAG = 4;
var COMMA_FLAG = 8;
var TOKEN_FLAG = 16;
var NON_ASCII = 65280;
var CASE_FLAGS = LOWER_CASE | NON_ASCII;
var CHAR_MAP = new Uint8Array(256);
CHAR_MAP[HTAB] |= OWS;
CHAR_MAP[SP] |= OWS;
CHAR_MAP[SEMI] |= SEMI_FLAG;
CHAR_MAP[COMMA] |= COMMA_FLAG;
for (let code = 128; code <= 255; code++) {
  CHAR_MAP[code] |= LOWER_CASE;
}
for (const char of "!#$%&'*+-.^_`|~") {
  CHAR_MAP[char.charCodeAt(0)] |= TOKEN_FLAG;
}
for (let code = 48; code <= 57; code++) {
  CHAR_MAP[code] |= TOKEN_FLAG;
}
for (let code = 65; code <= 90; code++) {
  CHAR_MAP[code] |= LOWER_CASE | TOKEN_FLAG;
}
for (let code = 97; code <= 122; code++) {
  CHAR_MAP[code] |= TOKEN_FLAG;
}
var NullObject = /* @__PURE__ */ (() => {
  const C = function() {
  };
  C.prototype = /* @__PURE__ */ Object.create(null);
  return C;
})();
function parse2(header2, options) {
  const stopFlags = SEMI_FLAG | (options?.comma === true ? COMMA_FLAG : 0);
  const len = header2.length;
  let valueStart = options?.start ?? 0;
  while ((CHAR_MAP[header2.charCodeAt(valueStart)] & OWS) !== 0) {
    valueStart++;
  }
  let index = valueStart;
  let typeFlags = 0;
  let whitespace = -1;
  let stop = options?.parameters === false ? COMMA_FLAG : 0;
  while (index < len) {
    const code = header2.charCodeAt(index);
    const flags = CHAR_MAP[code];
    if ((flags & stopFlags) !== 0) {
      stop |= flags & COMMA_FLAG;
      break;
    }
    if ((flags & OWS) !== 0) {
      if (whitespace === -1)
        whitespace = index;
    } else {
      whitespace = -1;
    }
    typeFlags |= code & NON_ASCII | flags;
    index++;
  }
  const valueEnd = whitespace === -1 ? index : whitespace;
  const value = header2.slice(valueStart, valueEnd);
  const type = (typeFlags & CASE_FLAGS) === 0 ? value : value.toLowerCase();
  if (index === len || stop !== 0) {
    return { type, index, parameters: new NullObject() };
  }
  return parseParameters(header2, type, index, len, stopFlags);
}
function parseParameters(header2, type, index, len, stopFlags) {
  const parameters = new NullObject();
  parameter: while (index < len) {
    index++;
    while ((CHAR_MAP[header2.charCodeAt(index)] & OWS) !== 0) {
      index++;
    }
    const keyStart = index;
    let keyFlags = 0;
    let keyWhitespace = -1;
    while (index < len) {
      const code = header2.charCodeAt(index);
      const flags = CHAR_MAP[code];
      if ((flags & stopFlags) !== 0) {
        if ((flags & COMMA_FLAG) !== 0)
          break parameter;
        continue parameter;
      }
      if (code === EQ) {
        const keyEnd = keyWhitespace === -1 ? index : keyWhitespace;
        const value = header2.slice(keyStart, keyEnd);
        const key = (keyFlags & CASE_FLAGS) === 0 ? value : value.toLowerCase();
        index++;
        while ((CHAR_MAP[header2.charCodeAt(index)] & OWS) !== 0) {
          index++;
        }
        if (index < len && header2.charCodeAt(index) === DQUOTE) {
          const quotedStart = ++index;
          let escaped = false;
          while (index < len) {
            const code2 = header2.charCodeAt(index);
            if (code2 === DQUOTE) {
              if (parameters[key] === void 0) {
                parameters[key] = escaped ? unescapeQuotedPairs(header2, quotedStart, index) : header2.slice(quotedStart, index);
              }
              index++;
              let stop2 = 0;
              while (index < len) {
                const code3 = header2.charCodeAt(index);
                const flags2 = CHAR_MAP[code3];
                if ((flags2 & stopFlags) !== 0) {
                  stop2 = flags2 & COMMA_FLAG;
                  break;
                }
                index++;
              }
              if (stop2 !== 0)
                break parameter;
              continue parameter;
            }
            if (code2 === BSLASH && index + 1 < len) {
              escaped = true;
              index += 2;
              continue;
            }
            index++;
          }
          continue parameter;
        }
        const valueStart = index;
        let stop = 0;
        let valueWhitespace = -1;
        while (index < len) {
          const code2 = header2.charCodeAt(index);
          const flags2 = CHAR_MAP[code2];
          if ((flags2 & stopFlags) !== 0) {
            stop = flags2 & COMMA_FLAG;
            break;
          }
          if ((flags2 & OWS) !== 0) {
            if (valueWhitespace === -1)
              valueWhitespace = index;
          } else {
            valueWhitespace = -1;
          }
          index++;
        }
        if (parameters[key] === void 0) {
          const valueEnd = valueWhitespace === -1 ? index : valueWhitespace;
          parameters[key] = header2.slice(valueStart, valueEnd);
        }
        if (stop !== 0)
          break parameter;
        continue parameter;
      }
      if ((flags & OWS) !== 0) {
        if (keyWhitespace === -1)
          keyWhitespace = index;
      } else {
        keyWhitespace = -1;
      }
      keyFlags |= code & NON_ASCII | flags;
      index++;
    }
  }
  return { type, index, parameters };
}
function unescapeQuotedPairs(str2, start, end) {
  let result = "";
  for (let index = start; index < end; index++) {
    if (str2.charCodeAt(index) === BSLASH) {
      result += str2.slice(start, index);
      start = ++index;
    }
  }
  return result + str2.slice(start, end);
}

// node_modules/json-with-bigint/json-with-bigint.js
var intRegex = /^-?\d+$/;
var noiseValue = /^-?\d+n+$/;
var originalStringify = JSON.stringify;
var originalParse = JSON.parse;
var customFormat = /^-?\d+n$/;
var bigIntsStringify = /([\[:])?"(-?\d+)n"($|\s*[,\}\]])/g;
var noiseStringify = /([\[:])?("-?\d+n+)n("$|"\s*[,\}\]])/g;
var isUnstringifiable = (val) => val === void 0 || typeof val === "function" || typeof val === "symbol";
var isRawJSON = (val) => val !== null && typeof val === "object" && val.constructor && val.constructor.name === "RawJSON";
var stringifyIteratively = (rootValue, replacer, spaceParam) => {
  let space = "";
  if (typeof spaceParam === "number") {
    space = " ".repeat(Math.min(10, Math.max(0, Math.floor(spaceParam))));
  } else if (typeof spaceParam === "string") {
    space = spaceParam.slice(0, 10);
  }
  const isFunctionReplacer = typeof replacer === "function";
  const propertyList = Array.isArray(replacer) ? new Set(replacer.map(String)) : null;
  const prepareVal = (parent, key, val) => {
    const isObject = val !== null && typeof val === "object";
    const hasToJSON = isObject && typeof val.toJSON === "function";
    if (hasToJSON) {
      val = val.toJSON(key);
    }
    const isNoise = typeof val === "string" && noiseValue.test(val);
    if (isNoise) return val + "n";
    const isBigInt = typeof val === "bigint";
    if (isBigInt) {
      const supportsRawJSON = "rawJSON" in JSON;
      if (supportsRawJSON) return JSON.rawJSON(val.toString());
      return val.toString() + "n";
    }
    if (isFunctionReplacer) {
      val = replacer.call(parent, key, val);
    }
    const isPostReplacerObject = val !== null && typeof val === "object";
    if (isPostReplacerObject) {
      const isPrimitiveWrapper = val instanceof Number || val instanceof String || val instanceof Boolean;
      if (isPrimitiveWrapper) {
        val = val.valueOf();
      }
    }
    return val;
  };
  const rootProcessed = prepareVal({ "": rootValue }, "", rootValue);
  if (isUnstringifiable(rootProcessed)) {
    return void 0;
  }
  const isRootPrimitive = rootProcessed === null || typeof rootProcessed !== "object";
  const isRootNativeRawJSON = isRawJSON(rootProcessed);
  if (isRootPrimitive || isRootNativeRawJSON) {
    return originalStringify(rootProcessed);
  }
  const chunks = [];
  let level = 0;
  const stack = [
    {
      parent: { "": rootProcessed },
      key: "",
      val: rootProcessed,
      isArray: Array.isArray(rootProcessed),
      keys: Array.isArray(rootProcessed) ? null : Object.keys(rootProcessed),
      index: 0,
      first: true
    }
  ];
  const visited = new WeakSet([rootProcessed]);
  while (stack.length > 0) {
    const node = stack[stack.length - 1];
    if (node.index === 0) {
      chunks.push(node.isArray ? "[" : "{");
      level++;
    }
    let isDone = false;
    if (node.isArray) {
      if (node.index < node.val.length) {
        if (!node.first) chunks.push(",");
        if (space) chunks.push("\n" + space.repeat(level));
        const childRaw = node.val[node.index];
        const childVal = prepareVal(node.val, String(node.index), childRaw);
        if (isUnstringifiable(childVal)) {
          chunks.push("null");
          node.first = false;
          node.index++;
        } else {
          const isComplexObject = childVal !== null && typeof childVal === "object";
          const isNativeRaw = isRawJSON(childVal);
          if (isComplexObject && !isNativeRaw) {
            if (visited.has(childVal)) {
              throw new TypeError("Converting circular structure to JSON");
            }
            visited.add(childVal);
            stack.push({
              parent: node.val,
              key: String(node.index),
              val: childVal,
              isArray: Array.isArray(childVal),
              keys: Array.isArray(childVal) ? null : Object.keys(childVal),
              index: 0,
              first: true
            });
            node.first = false;
            node.index++;
          } else {
            chunks.push(originalStringify(childVal));
            node.first = false;
            node.index++;
          }
        }
      } else {
        isDone = true;
      }
    } else {
      while (node.index < node.keys.length) {
        const k = node.keys[node.index++];
        const isFilteredOutByArray = propertyList && !propertyList.has(k);
        if (isFilteredOutByArray) continue;
        const childRaw = node.val[k];
        const childVal = prepareVal(node.val, k, childRaw);
        if (isUnstringifiable(childVal)) continue;
        if (!node.first) chunks.push(",");
        if (space) {
          chunks.push("\n" + space.repeat(level) + originalStringify(k) + ": ");
        } else {
          chunks.push(originalStringify(k) + ":");
        }
        const isComplexObject = childVal !== null && typeof childVal === "object";
        const isNativeRaw = isRawJSON(childVal);
        if (isComplexObject && !isNativeRaw) {
          if (visited.has(childVal)) {
            throw new TypeError("Converting circular structure to JSON");
          }
          visited.add(childVal);
          stack.push({
            parent: node.val,
            key: k,
            val: childVal,
            isArray: Array.isArray(childVal),
            keys: Array.isArray(childVal) ? null : Object.keys(childVal),
            index: 0,
            first: true
          });
          node.first = false;
          break;
        } else {
          chunks.push(originalStringify(childVal));
          node.first = false;
        }
      }
      const isNodeFullyProcessed = node.index >= node.keys.length && stack[stack.length - 1] === node;
      if (isNodeFullyProcessed) {
        isDone = true;
      }
    }
    if (isDone) {
      level--;
      if (!node.first && space) chunks.push("\n" + space.repeat(level));
      chunks.push(node.isArray ? "]" : "}");
      visited.delete(node.val);
      stack.pop();
    }
  }
  return chunks.join("");
};
var JSONStringify = (value, replacer, space) => {
  try {
    const supportsRawJSON = "rawJSON" in JSON;
    if (supportsRawJSON) {
      return originalStringify(
        value,
        (key, val) => {
          if (typeof val === "bigint") return JSON.rawJSON(val.toString());
          const hasFunctionReplacer = typeof replacer === "function";
          if (hasFunctionReplacer) return replacer(key, val);
          const isKeyInArrayReplacer = Array.isArray(replacer) && replacer.includes(key);
          if (isKeyInArrayReplacer) return val;
          return val;
        },
        space
      );
    }
    if (!value) return originalStringify(value, replacer, space);
    const convertedToCustomJSON = originalStringify(
      value,
      (key, val) => {
        const isNoise = typeof val === "string" && noiseValue.test(val);
        if (isNoise) return val.toString() + "n";
        if (typeof val === "bigint") return val.toString() + "n";
        const hasFunctionReplacer = typeof replacer === "function";
        if (hasFunctionReplacer) return replacer(key, val);
        const isKeyInArrayReplacer = Array.isArray(replacer) && replacer.includes(key);
        if (isKeyInArrayReplacer) return val;
        return val;
      },
      space
    );
    const processedJSON = convertedToCustomJSON.replace(
      bigIntsStringify,
      "$1$2$3"
    );
    const denoisedJSON = processedJSON.replace(noiseStringify, "$1$2$3");
    return denoisedJSON;
  } catch (error) {
    if (error instanceof RangeError) {
      const convertedJSON = stringifyIteratively(value, replacer, space);
      if (convertedJSON === void 0) return void 0;
      const supportsRawJSON = "rawJSON" in JSON;
      if (supportsRawJSON) return convertedJSON;
      const processedJSON = convertedJSON.replace(bigIntsStringify, "$1$2$3");
      return processedJSON.replace(noiseStringify, "$1$2$3");
    }
    throw error;
  }
};
var featureCache = /* @__PURE__ */ new Map();
var isContextSourceSupported = () => {
  const parseFingerprint = JSON.parse.toString();
  if (featureCache.has(parseFingerprint)) {
    return featureCache.get(parseFingerprint);
  }
  try {
    const result = JSON.parse(
      "1",
      (_, __, context) => !!context?.source && context.source === "1"
    );
    featureCache.set(parseFingerprint, result);
    return result;
  } catch {
    featureCache.set(parseFingerprint, false);
    return false;
  }
};
var convertMarkedBigIntsReviver = (key, value, context, userReviver) => {
  const isCustomFormatBigInt = typeof value === "string" && customFormat.test(value);
  if (isCustomFormatBigInt) return BigInt(value.slice(0, -1));
  const isNoiseValue = typeof value === "string" && noiseValue.test(value);
  if (isNoiseValue) return value.slice(0, -1);
  const hasUserReviver = typeof userReviver === "function";
  if (!hasUserReviver) return value;
  return userReviver(key, value, context);
};
var JSONParseV2 = (text, reviver) => {
  return JSON.parse(text, (key, value, context) => {
    const isNumber = typeof value === "number";
    const isOutOfBounds = value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER;
    const isBigNumber = isNumber && isOutOfBounds;
    const isInt = context && intRegex.test(context.source);
    const isBigInt = isBigNumber && isInt;
    if (isBigInt) return BigInt(context.source);
    const hasCustomReviver = typeof reviver === "function";
    if (!hasCustomReviver) return value;
    return reviver(key, value, context);
  });
};
var MAX_INT = Number.MAX_SAFE_INTEGER.toString();
var MAX_DIGITS = MAX_INT.length;
var stringsOrLargeNumbers = /"(?:[^"\\]|\\.)*"|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/g;
var noiseValueWithQuotes = /^"-?\d+n+"$/;
var applyReviverIteratively = (parsed, userReviver) => {
  const rootHolder = { "": parsed };
  const stack = [{ parent: rootHolder, key: "", visited: false }];
  while (stack.length > 0) {
    const node = stack[stack.length - 1];
    if (!node.visited) {
      node.visited = true;
      const value = node.parent[node.key];
      const isComplexObject = value !== null && typeof value === "object";
      if (isComplexObject) {
        const keys = Object.keys(value);
        for (let i = keys.length - 1; i >= 0; i--) {
          stack.push({ parent: value, key: keys[i], visited: false });
        }
      }
    } else {
      const { parent, key } = node;
      let value = parent[key];
      if (typeof value === "string") {
        const isCustomFormatBigInt = customFormat.test(value);
        if (isCustomFormatBigInt) {
          value = BigInt(value.slice(0, -1));
        } else {
          const isNoise = noiseValue.test(value);
          if (isNoise) value = value.slice(0, -1);
        }
      }
      const hasUserReviver = typeof userReviver === "function";
      if (hasUserReviver) {
        value = userReviver.call(parent, key, value);
      }
      const isDeleted = value === void 0;
      if (isDeleted) {
        delete parent[key];
      } else {
        parent[key] = value;
      }
      stack.pop();
    }
  }
  return rootHolder[""];
};
var serializeBigInts = (text) => {
  return text.replace(
    stringsOrLargeNumbers,
    (match, digits, fractional, exponential) => {
      const isString = match[0] === '"';
      const isNoise = isString && noiseValueWithQuotes.test(match);
      if (isNoise) return match.substring(0, match.length - 1) + 'n"';
      const hasFractionalOrExponential = fractional || exponential;
      const isLessThanMaxSafeInt = digits && (digits.length < MAX_DIGITS || digits.length === MAX_DIGITS && digits <= MAX_INT);
      const isStandardValue = isString || hasFractionalOrExponential || isLessThanMaxSafeInt;
      if (isStandardValue) return match;
      return '"' + match + 'n"';
    }
  );
};
var JSONParse = (text, reviver) => {
  if (!text) return originalParse(text, reviver);
  try {
    if (isContextSourceSupported()) return JSONParseV2(text, reviver);
    const serializedData = serializeBigInts(text);
    return originalParse(
      serializedData,
      (key, value, context) => convertMarkedBigIntsReviver(key, value, context, reviver)
    );
  } catch (error) {
    if (error instanceof RangeError) {
      const serializedData = serializeBigInts(text);
      const parsed = originalParse(serializedData);
      return applyReviverIteratively(parsed, reviver);
    }
    throw error;
  }
};

// node_modules/@octokit/request-error/dist-src/index.js
var RequestError = class extends Error {
  name;
  /**
   * http status code
   */
  status;
  /**
   * Request options that lead to the error.
   */
  request;
  /**
   * Response object if a response was received
   */
  response;
  constructor(message, statusCode, options) {
    super(message, { cause: options.cause });
    this.name = "HttpError";
    this.status = Number.parseInt(statusCode);
    if (Number.isNaN(this.status)) {
      this.status = 0;
    }
    if ("response" in options) {
      this.response = options.response;
    }
    const requestCopy = Object.assign({}, options.request);
    if (options.request.headers.authorization) {
      requestCopy.headers = Object.assign({}, options.request.headers, {
        authorization: options.request.headers.authorization.replace(
          /(?<! ) .*$/,
          " [REDACTED]"
        )
      });
    }
    requestCopy.url = requestCopy.url.replace(/\bclient_secret=\w+/g, "client_secret=[REDACTED]").replace(/\baccess_token=\w+/g, "access_token=[REDACTED]");
    this.request = requestCopy;
  }
};

// node_modules/@octokit/request/dist-bundle/index.js
var VERSION2 = "10.0.16";
var defaults_default = {
  headers: {
    "user-agent": `octokit-request.js/${VERSION2} ${getUserAgent()}`
  }
};
function isPlainObject2(value) {
  if (typeof value !== "object" || value === null) return false;
  if (Object.prototype.toString.call(value) !== "[object Object]") return false;
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return true;
  const Ctor = Object.prototype.hasOwnProperty.call(proto, "constructor") && proto.constructor;
  return typeof Ctor === "function" && Ctor instanceof Ctor && Function.prototype.call(Ctor) === Function.prototype.call(value);
}
var noop = () => "";
async function fetchWrapper(requestOptions) {
  const fetch = requestOptions.request?.fetch || globalThis.fetch;
  if (!fetch) {
    throw new Error(
      "fetch is not set. Please pass a fetch implementation as new Octokit({ request: { fetch }}). Learn more at https://github.com/octokit/octokit.js/#fetch-missing"
    );
  }
  const log = requestOptions.request?.log || console;
  const parseSuccessResponseBody = requestOptions.request?.parseSuccessResponseBody !== false;
  const body = isPlainObject2(requestOptions.body) || Array.isArray(requestOptions.body) ? JSONStringify(requestOptions.body) : requestOptions.body;
  const requestHeaders = Object.fromEntries(
    Object.entries(requestOptions.headers).map(([name, value]) => [
      name,
      String(value)
    ])
  );
  let fetchResponse;
  try {
    fetchResponse = await fetch(requestOptions.url, {
      method: requestOptions.method,
      body,
      redirect: requestOptions.request?.redirect,
      headers: requestHeaders,
      signal: requestOptions.request?.signal,
      // duplex must be set if request.body is ReadableStream or Async Iterables.
      // See https://fetch.spec.whatwg.org/#dom-requestinit-duplex.
      ...requestOptions.body && { duplex: "half" }
    });
  } catch (error) {
    let message = "Unknown Error";
    if (error instanceof Error) {
      if (error.name === "AbortError") {
        error.status = 500;
        throw error;
      }
      message = error.message;
      if (error.name === "TypeError" && "cause" in error) {
        if (error.cause instanceof Error) {
          message = error.cause.message;
        } else if (typeof error.cause === "string") {
          message = error.cause;
        }
      }
    }
    const requestError = new RequestError(message, 500, {
      request: requestOptions
    });
    requestError.cause = error;
    throw requestError;
  }
  const status = fetchResponse.status;
  const url = fetchResponse.url;
  const responseHeaders = {};
  for (const [key, value] of fetchResponse.headers) {
    responseHeaders[key] = value;
  }
  const octokitResponse = {
    url,
    status,
    headers: responseHeaders,
    data: ""
  };
  if ("deprecation" in responseHeaders) {
    const matches = responseHeaders.link && responseHeaders.link.match(/<([^<>]+)>; rel="deprecation"/);
    const deprecationLink = matches && matches.pop();
    log.warn(
      `[@octokit/request] "${requestOptions.method} ${requestOptions.url}" is deprecated. It is scheduled to be removed on ${responseHeaders.sunset}${deprecationLink ? `. See ${deprecationLink}` : ""}`
    );
  }
  if (status === 204 || status === 205) {
    return octokitResponse;
  }
  if (requestOptions.method === "HEAD") {
    if (status < 400) {
      return octokitResponse;
    }
    throw new RequestError(fetchResponse.statusText, status, {
      response: octokitResponse,
      request: requestOptions
    });
  }
  if (status === 304) {
    octokitResponse.data = await getResponseData(fetchResponse);
    throw new RequestError("Not modified", status, {
      response: octokitResponse,
      request: requestOptions
    });
  }
  if (status >= 400) {
    octokitResponse.data = await getResponseData(fetchResponse);
    throw new RequestError(toErrorMessage(octokitResponse.data), status, {
      response: octokitResponse,
      request: requestOptions
    });
  }
  octokitResponse.data = parseSuccessResponseBody ? await getResponseData(fetchResponse) : fetchResponse.body;
  return octokitResponse;
}
async function getResponseData(response) {
  const contentType = response.headers.get("content-type");
  if (!contentType) {
    return response.text().catch(noop);
  }
  const mimetype = parse2(contentType);
  if (isJSONResponse(mimetype)) {
    let text = "";
    try {
      text = await response.text();
      return JSONParse(text);
    } catch (err) {
      return text;
    }
  } else if (mimetype.type.startsWith("text/") || // `application/octet-stream` is the canonical "arbitrary binary" type
  // (RFC 2046) and must never be decoded as text, even when the response
  // carries a (misleading) `charset=utf-8` parameter — see #751.
  mimetype.parameters.charset?.toLowerCase() === "utf-8" && mimetype.type !== "application/octet-stream") {
    return response.text().catch(noop);
  } else {
    return response.arrayBuffer().catch(
      /* v8 ignore next -- @preserve */
      () => new ArrayBuffer(0)
    );
  }
}
function isJSONResponse(mimetype) {
  return mimetype.type === "application/json" || mimetype.type === "application/scim+json";
}
function toErrorMessage(data) {
  if (typeof data === "string") {
    return data;
  }
  if (data instanceof ArrayBuffer) {
    return "Unknown error";
  }
  if (typeof data === "object" && data !== null && "message" in data) {
    const objectData = data;
    const suffix = "documentation_url" in objectData ? ` - ${objectData.documentation_url}` : "";
    return Array.isArray(objectData.errors) ? `${objectData.message}: ${objectData.errors.map((v) => JSON.stringify(v)).join(", ")}${suffix}` : `${objectData.message}${suffix}`;
  }
  return `Unknown error: ${JSON.stringify(data)}`;
}
function withDefaults2(oldEndpoint, newDefaults) {
  const endpoint2 = oldEndpoint.defaults(newDefaults);
  const newApi = function(route, parameters) {
    const endpointOptions = endpoint2.merge(route, parameters);
    if (!endpointOptions.request || !endpointOptions.request.hook) {
      return fetchWrapper(endpoint2.parse(endpointOptions));
    }
    const request2 = (route2, parameters2) => {
      return fetchWrapper(
        endpoint2.parse(endpoint2.merge(route2, parameters2))
      );
    };
    Object.assign(request2, {
      endpoint: endpoint2,
      defaults: withDefaults2.bind(null, endpoint2)
    });
    return endpointOptions.request.hook(request2, endpointOptions);
  };
  return Object.assign(newApi, {
    endpoint: endpoint2,
    defaults: withDefaults2.bind(null, endpoint2)
  });
}
var request = withDefaults2(endpoint, defaults_default);

// node_modules/@octokit/graphql/dist-bundle/index.js
var VERSION3 = "0.0.0-development";
function _buildMessageForResponseErrors(data) {
  return `Request failed due to following response errors:
` + data.errors.map((e) => ` - ${e.message}`).join("\n");
}
var GraphqlResponseError = class extends Error {
  constructor(request2, headers, response) {
    super(_buildMessageForResponseErrors(response));
    this.request = request2;
    this.headers = headers;
    this.response = response;
    this.errors = response.errors;
    this.data = response.data;
    if (Error.captureStackTrace) {
      Error.captureStackTrace(this, this.constructor);
    }
  }
  request;
  headers;
  response;
  name = "GraphqlResponseError";
  errors;
  data;
};
var NON_VARIABLE_OPTIONS = [
  "method",
  "baseUrl",
  "url",
  "headers",
  "request",
  "query",
  "mediaType",
  "operationName"
];
var FORBIDDEN_VARIABLE_OPTIONS = ["query", "method", "url"];
var GHES_V3_SUFFIX_REGEX = /\/api\/v3\/?$/;
function graphql(request2, query, options) {
  if (options) {
    if (typeof query === "string" && "query" in options) {
      return Promise.reject(
        new Error(`[@octokit/graphql] "query" cannot be used as variable name`)
      );
    }
    for (const key in options) {
      if (!FORBIDDEN_VARIABLE_OPTIONS.includes(key)) continue;
      return Promise.reject(
        new Error(
          `[@octokit/graphql] "${key}" cannot be used as variable name`
        )
      );
    }
  }
  const parsedOptions = typeof query === "string" ? Object.assign({ query }, options) : query;
  const requestOptions = Object.keys(
    parsedOptions
  ).reduce((result, key) => {
    if (NON_VARIABLE_OPTIONS.includes(key)) {
      result[key] = parsedOptions[key];
      return result;
    }
    if (!result.variables) {
      result.variables = {};
    }
    result.variables[key] = parsedOptions[key];
    return result;
  }, {});
  const baseUrl = parsedOptions.baseUrl || request2.endpoint.DEFAULTS.baseUrl;
  if (GHES_V3_SUFFIX_REGEX.test(baseUrl)) {
    requestOptions.url = baseUrl.replace(GHES_V3_SUFFIX_REGEX, "/api/graphql");
  }
  return request2(requestOptions).then((response) => {
    if (response.data.errors) {
      const headers = {};
      for (const key of Object.keys(response.headers)) {
        headers[key] = response.headers[key];
      }
      throw new GraphqlResponseError(
        requestOptions,
        headers,
        response.data
      );
    }
    return response.data.data;
  });
}
function withDefaults3(request2, newDefaults) {
  const newRequest = request2.defaults(newDefaults);
  const newApi = (query, options) => {
    return graphql(newRequest, query, options);
  };
  return Object.assign(newApi, {
    defaults: withDefaults3.bind(null, newRequest),
    endpoint: newRequest.endpoint
  });
}
var graphql2 = withDefaults3(request, {
  headers: {
    "user-agent": `octokit-graphql.js/${VERSION3} ${getUserAgent()}`
  },
  method: "POST",
  url: "/graphql"
});
function withCustomRequest(customRequest) {
  return withDefaults3(customRequest, {
    method: "POST",
    url: "/graphql"
  });
}

// node_modules/@octokit/auth-token/dist-bundle/index.js
var b64url = "(?:[a-zA-Z0-9_-]+)";
var sep = "\\.";
var jwtRE = new RegExp(`^${b64url}${sep}${b64url}${sep}${b64url}$`);
var isJWT = jwtRE.test.bind(jwtRE);
async function auth(token) {
  const isApp = isJWT(token);
  const isInstallation = token.startsWith("v1.") || token.startsWith("ghs_");
  const isUserToServer = token.startsWith("ghu_");
  const tokenType = isApp ? "app" : isInstallation ? "installation" : isUserToServer ? "user-to-server" : "oauth";
  return {
    type: "token",
    token,
    tokenType
  };
}
function withAuthorizationPrefix(token) {
  if (token.split(/\./).length === 3) {
    return `bearer ${token}`;
  }
  return `token ${token}`;
}
async function hook(token, request2, route, parameters) {
  const endpoint2 = request2.endpoint.merge(
    route,
    parameters
  );
  endpoint2.headers.authorization = withAuthorizationPrefix(token);
  return request2(endpoint2);
}
var createTokenAuth = function createTokenAuth2(token) {
  if (!token) {
    throw new Error("[@octokit/auth-token] No token passed to createTokenAuth");
  }
  if (typeof token !== "string") {
    throw new Error(
      "[@octokit/auth-token] Token passed to createTokenAuth is not a string"
    );
  }
  token = token.replace(/^(token|bearer) +/i, "");
  return Object.assign(auth.bind(null, token), {
    hook: hook.bind(null, token)
  });
};

// node_modules/@octokit/core/dist-src/version.js
var VERSION4 = "7.0.8";

// node_modules/@octokit/core/dist-src/index.js
var noop2 = () => {
};
var consoleWarn = console.warn.bind(console);
var consoleError = console.error.bind(console);
function createLogger(logger2 = {}) {
  if (typeof logger2.debug !== "function") {
    logger2.debug = noop2;
  }
  if (typeof logger2.info !== "function") {
    logger2.info = noop2;
  }
  if (typeof logger2.warn !== "function") {
    logger2.warn = consoleWarn;
  }
  if (typeof logger2.error !== "function") {
    logger2.error = consoleError;
  }
  return logger2;
}
var userAgentTrail = `octokit-core.js/${VERSION4} ${getUserAgent()}`;
var Octokit = class {
  static VERSION = VERSION4;
  static defaults(defaults) {
    const OctokitWithDefaults = class extends this {
      constructor(...args) {
        const options = args[0] || {};
        if (typeof defaults === "function") {
          super(defaults(options));
          return;
        }
        super(
          Object.assign(
            {},
            defaults,
            options,
            options.userAgent && defaults.userAgent ? {
              userAgent: `${options.userAgent} ${defaults.userAgent}`
            } : null
          )
        );
      }
    };
    return OctokitWithDefaults;
  }
  static plugins = [];
  /**
   * Attach a plugin (or many) to your Octokit instance.
   *
   * @example
   * const API = Octokit.plugin(plugin1, plugin2, plugin3, ...)
   */
  static plugin(...newPlugins) {
    const currentPlugins = this.plugins;
    const NewOctokit = class extends this {
      static plugins = currentPlugins.concat(
        newPlugins.filter((plugin) => !currentPlugins.includes(plugin))
      );
    };
    return NewOctokit;
  }
  constructor(options = {}) {
    const hook2 = new before_after_hook_default.Collection();
    const requestDefaults = {
      baseUrl: request.endpoint.DEFAULTS.baseUrl,
      headers: {},
      request: Object.assign({}, options.request, {
        // @ts-ignore internal usage only, no need to type
        hook: hook2.bind(null, "request")
      }),
      mediaType: {
        previews: [],
        format: ""
      }
    };
    requestDefaults.headers["user-agent"] = options.userAgent ? `${options.userAgent} ${userAgentTrail}` : userAgentTrail;
    if (options.baseUrl) {
      requestDefaults.baseUrl = options.baseUrl;
    }
    if (options.previews) {
      requestDefaults.mediaType.previews = options.previews;
    }
    if (options.timeZone) {
      requestDefaults.headers["time-zone"] = options.timeZone;
    }
    this.request = request.defaults(requestDefaults);
    this.graphql = withCustomRequest(this.request).defaults(requestDefaults);
    this.log = createLogger(options.log);
    this.hook = hook2;
    if (!options.authStrategy) {
      if (!options.auth) {
        this.auth = async () => ({
          type: "unauthenticated"
        });
      } else {
        const auth2 = createTokenAuth(options.auth);
        hook2.wrap("request", auth2.hook);
        this.auth = auth2;
      }
    } else {
      const { authStrategy, ...otherOptions } = options;
      const auth2 = authStrategy(
        Object.assign(
          {
            request: this.request,
            log: this.log,
            // we pass the current octokit instance as well as its constructor options
            // to allow for authentication strategies that return a new octokit instance
            // that shares the same internal state as the current one. The original
            // requirement for this was the "event-octokit" authentication strategy
            // of https://github.com/probot/octokit-auth-probot.
            octokit: this,
            octokitOptions: otherOptions
          },
          options.auth
        )
      );
      hook2.wrap("request", auth2.hook);
      this.auth = auth2;
    }
    const classConstructor = this.constructor;
    for (let i = 0; i < classConstructor.plugins.length; ++i) {
      Object.assign(this, classConstructor.plugins[i](this, options));
    }
  }
  // assigned during constructor
  request;
  graphql;
  log;
  hook;
  // TODO: type `octokit.auth` based on passed options.authStrategy
  auth;
};

// actions/lib/github.mjs
var NOT_SENT = /* @__PURE__ */ new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ERR_INVALID_URL"]);
var encodePath = (path) => path.split("/").map(encodeURIComponent).join("/");
function header(headers, name) {
  const value = headers?.[name];
  return value === void 0 || value === null ? null : String(value);
}
function intHeader(headers, name) {
  const value = header(headers, name);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}
function replyFromError(error) {
  const response = error?.response;
  if (response && typeof response.status === "number") {
    if (response.status === 304) return { kind: "notModified" };
    const data = response.data;
    const message2 = typeof data === "object" && data && typeof data.message === "string" ? data.message : String(error.message ?? "");
    return {
      kind: "http",
      status: response.status,
      message: message2,
      retryAfter: header(response.headers, "retry-after"),
      ratelimitRemaining: intHeader(response.headers, "x-ratelimit-remaining"),
      ratelimitReset: intHeader(response.headers, "x-ratelimit-reset"),
      date: header(response.headers, "date")
    };
  }
  let cause = error;
  let code = null;
  for (let i = 0; cause && i < 5; i++) {
    if (typeof cause.code === "string") {
      code = cause.code;
      break;
    }
    cause = cause.cause;
  }
  let aborted = false;
  for (let c = error, i = 0; c && i < 5; c = c.cause, i++) {
    if (c.name === "AbortError" || c.name === "TimeoutError") aborted = true;
  }
  const message = aborted ? "request timed out and was aborted" : `${code ?? ""} ${error?.message ?? error}`.trim();
  return { kind: "transport", sent: aborted || !NOT_SENT.has(code), message };
}
var BadCommand = class extends Error {
};
function repoPath(repository, kind) {
  const parts = typeof repository === "string" ? repository.split("/") : [];
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new BadCommand(`leasehold driver: ${kind} needs repository "owner/name", not ${JSON.stringify(repository)}`);
  return `/repos/${encodeURIComponent(parts[0])}/${encodeURIComponent(parts[1])}`;
}
function idOf(value, name, kind) {
  if (!Number.isSafeInteger(value) || value <= 0) throw new BadCommand(`leasehold driver: ${kind} needs a positive integer ${name}, not ${JSON.stringify(value)}`);
  return value;
}
function int(data, key) {
  if (!Number.isSafeInteger(data?.[key])) throw new TypeError(`no integer ${key} in the body`);
  return data[key];
}
function str(data, key) {
  if (typeof data?.[key] !== "string") throw new TypeError(`no string ${key} in the body`);
  return data[key];
}
function strOrNull(data, key) {
  if (data?.[key] !== null && typeof data?.[key] !== "string") throw new TypeError(`no ${key} (a string or null) in the body`);
  return data[key];
}
function refPath(ref, kind) {
  if (typeof ref !== "string" || !ref.startsWith("refs/") || ref.length <= 5) throw new BadCommand(`leasehold driver: ${kind} needs a full ref name "refs/\u2026", not ${JSON.stringify(ref)}`);
  return encodePath(ref.slice(5));
}
function linkNext(link) {
  if (typeof link !== "string") return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(m[2])) return m[1];
  }
  return null;
}
var apiBaseUrl = (env = process.env) => (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
function createTransport({ baseUrl, token, repository, userAgent: userAgent2 = "leasehold" }) {
  const octokit = new Octokit({ auth: token, baseUrl, userAgent: userAgent2 });
  const base = repoPath(repository, "the transport");
  async function send(route, params, timeoutMs) {
    return octokit.request(route, { ...params, request: { signal: AbortSignal.timeout(timeoutMs) } });
  }
  const handlers = {
    async readFile(c) {
      const headers = c.ifNoneMatch ? { "if-none-match": c.ifNoneMatch } : {};
      const params = { headers };
      if (c.ref) params.ref = c.ref;
      const { data, headers: h } = await send(`GET ${base}/contents/${encodePath(c.path)}`, params, c.timeoutMs);
      if (typeof data !== "object" || data === null) throw new TypeError("empty or unreadable body");
      if (!Array.isArray(data) && data.type === "file" && data.encoding === "none") {
        const raw = await send(`GET ${base}/contents/${encodePath(c.path)}`, { ...params, headers: { accept: "application/vnd.github.raw" } }, c.timeoutMs);
        const text = typeof raw.data === "string" ? raw.data : Buffer.from(raw.data ?? "").toString("utf8");
        return { kind: "file", sha: data.sha, content: text, etag: h.etag ?? null, date: h.date ?? null };
      }
      if (Array.isArray(data) || data.type !== "file" || data.encoding !== "base64") {
        return { kind: "http", status: 422, message: `${c.path} is not a file leasehold can read (type ${data?.type ?? "list"})` };
      }
      return { kind: "file", sha: data.sha, content: Buffer.from(data.content, "base64").toString("utf8"), etag: h.etag ?? null, date: h.date ?? null };
    },
    async writeFile(c) {
      const body = { message: c.message, content: Buffer.from(c.content, "utf8").toString("base64"), branch: c.branch };
      if (c.sha) body.sha = c.sha;
      const { data, headers: h } = await send(`PUT ${base}/contents/${encodePath(c.path)}`, body, c.timeoutMs);
      if (typeof data?.content?.sha !== "string") throw new TypeError("empty or unreadable body");
      return { kind: "written", sha: data.content.sha, date: h.date ?? null };
    },
    async createTree(c) {
      const tree = c.files.map((f) => ({ path: f.path, mode: "100644", type: "blob", content: f.content }));
      const { data } = await send(`POST ${base}/git/trees`, { tree }, c.timeoutMs);
      return { kind: "created", sha: data.sha };
    },
    async createCommit(c) {
      const { data } = await send(`POST ${base}/git/commits`, { message: c.message, tree: c.tree, parents: c.parents ?? [] }, c.timeoutMs);
      return { kind: "created", sha: data.sha };
    },
    async createBranch(c) {
      const { data } = await send(`POST ${base}/git/refs`, { ref: `refs/heads/${c.branch}`, sha: c.sha }, c.timeoutMs);
      return { kind: "created", sha: data.object.sha };
    },
    async createRef(c) {
      refPath(c.ref, c.kind);
      const { data } = await send(`POST ${base}/git/refs`, { ref: c.ref, sha: c.sha }, c.timeoutMs);
      return { kind: "created", sha: str(data?.object, "sha") };
    },
    async getRef(c) {
      const { data, headers: h } = await send(`GET ${base}/git/ref/${refPath(c.ref, c.kind)}`, {}, c.timeoutMs);
      return { kind: "gitRef", ref: str(data, "ref"), sha: str(data?.object, "sha"), date: h.date ?? null };
    },
    // Page 1 is asked without `page` (GitHub's description documents no query parameter for
    // this route); the next page is the one the answer's Link header names.
    async listMatchingRefs(c) {
      const params = c.page > 1 ? { page: idOf(c.page, "page", c.kind) } : {};
      const { data, headers: h } = await send(`GET ${base}/git/matching-refs/${refPath(c.prefix, c.kind)}`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError("no array of refs in the body");
      return {
        kind: "refs",
        refs: data.map((r) => ({ ref: str(r, "ref"), sha: str(r?.object, "sha") })),
        next: linkNext(h.link),
        date: h.date ?? null
      };
    },
    // The commits of a branch that changed one file (repair reads a state's history), 100 a
    // page; the next page is the one the answer's Link header names.
    async listCommits(c) {
      const params = { sha: c.branch, path: c.path, per_page: 100, page: idOf(c.page, "page", c.kind) };
      const { data, headers: h } = await send(`GET ${base}/commits`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError("no array of commits in the body");
      return { kind: "commits", shas: data.map((x) => str(x, "sha")), next: linkNext(h.link), date: h.date ?? null };
    },
    // GraphQL (claims): the document and variables exactly as the core wrote them. A 200 is
    // `graphql` with GitHub's data and errors as they came (a 200 with errors[] is classified
    // by the core, not here); any other status is `http`, as for REST.
    async graphql(c) {
      const { data, headers: h } = await send("POST /graphql", { query: c.document, variables: c.variables ?? {} }, c.timeoutMs);
      if (typeof data !== "object" || data === null) throw new TypeError("empty or unreadable body");
      return { kind: "graphql", data: data.data ?? null, errors: Array.isArray(data.errors) ? data.errors.map((e) => ({ type: typeof e?.type === "string" ? e.type : null, message: String(e?.message ?? "") })) : [], date: h.date ?? null };
    },
    // The Actions reads name their own repository: the consumer's run lives in another
    // repository than the lock's state.
    async getRunAttempt(c) {
      const run2 = `${repoPath(c.repository, c.kind)}/actions/runs/${idOf(c.runId, "runId", c.kind)}/attempts/${idOf(c.attempt, "attempt", c.kind)}`;
      const { data, headers: h } = await send(`GET ${run2}`, { exclude_pull_requests: true }, c.timeoutMs);
      return {
        kind: "run",
        runId: int(data, "id"),
        runAttempt: int(data, "run_attempt"),
        status: str(data, "status"),
        conclusion: strOrNull(data, "conclusion"),
        date: h.date ?? null
      };
    },
    async getJob(c) {
      const job = `${repoPath(c.repository, c.kind)}/actions/jobs/${idOf(c.jobId, "jobId", c.kind)}`;
      const { data, headers: h } = await send(`GET ${job}`, {}, c.timeoutMs);
      return {
        kind: "job",
        id: int(data, "id"),
        runId: int(data, "run_id"),
        // Not required by GitHub's description of a job.
        runAttempt: Number.isInteger(data.run_attempt) ? data.run_attempt : null,
        name: str(data, "name"),
        status: str(data, "status"),
        conclusion: strOrNull(data, "conclusion"),
        runnerName: strOrNull(data, "runner_name"),
        completedAt: strOrNull(data, "completed_at"),
        date: h.date ?? null
      };
    },
    async listJobs(c) {
      const jobs = `${repoPath(c.repository, c.kind)}/actions/runs/${idOf(c.runId, "runId", c.kind)}/attempts/${idOf(c.attempt, "attempt", c.kind)}/jobs`;
      const { data, headers: h } = await send(`GET ${jobs}`, { per_page: 100 }, c.timeoutMs);
      if (!Array.isArray(data?.jobs)) throw new TypeError("no jobs array in the body");
      return {
        kind: "jobs",
        totalCount: int(data, "total_count"),
        jobs: data.jobs.map((j) => ({
          id: int(j, "id"),
          name: str(j, "name"),
          status: str(j, "status"),
          conclusion: strOrNull(j, "conclusion"),
          runnerName: strOrNull(j, "runner_name")
        })),
        date: h.date ?? null
      };
    },
    // Issues, comments, pull requests, workflow runs and the token's identity (receipts,
    // check-head, audit). Each names its own repository.
    async getViewer(c) {
      const { data, headers: h } = await send("GET /user", {}, c.timeoutMs);
      return { kind: "user", login: str(data, "login"), type: str(data, "type"), date: h.date ?? null };
    },
    // 100 a page (GitHub's largest); page 1 is asked without `page`, the next is the Link
    // header's.
    async listComments(c) {
      const params = { per_page: 100 };
      if (c.page > 1) params.page = idOf(c.page, "page", c.kind);
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, "number", c.kind)}/comments`;
      const { data, headers: h } = await send(`GET ${path}`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError("no array of comments in the body");
      return {
        kind: "comments",
        comments: data.map((m) => ({
          id: int(m, "id"),
          login: str(m?.user, "login"),
          userType: str(m?.user, "type"),
          app: typeof m?.performed_via_github_app?.slug === "string" ? m.performed_via_github_app.slug : null,
          createdAt: str(m, "created_at"),
          updatedAt: str(m, "updated_at"),
          body: typeof m.body === "string" ? m.body : ""
        })),
        next: linkNext(h.link),
        date: h.date ?? null
      };
    },
    async createComment(c) {
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, "number", c.kind)}/comments`;
      const { data, headers: h } = await send(`POST ${path}`, { body: c.body }, c.timeoutMs);
      return { kind: "posted", id: int(data, "id"), number: null, url: typeof data.html_url === "string" ? data.html_url : "", date: h.date ?? null };
    },
    async getPullRequest(c) {
      const path = `${repoPath(c.repository, c.kind)}/pulls/${idOf(c.number, "number", c.kind)}`;
      const { data, headers: h } = await send(`GET ${path}`, {}, c.timeoutMs);
      return { kind: "pullRequest", number: int(data, "number"), headSha: str(data?.head, "sha"), state: str(data, "state"), merged: data.merged === true, date: h.date ?? null };
    },
    async listWorkflowRuns(c) {
      if (typeof c.workflow !== "string" || !c.workflow || c.workflow.includes("/")) throw new BadCommand(`leasehold driver: ${c.kind} needs a workflow file name or id, not ${JSON.stringify(c.workflow)}`);
      const path = `${repoPath(c.repository, c.kind)}/actions/workflows/${encodeURIComponent(c.workflow)}/runs`;
      const { data, headers: h } = await send(`GET ${path}`, { event: c.event, per_page: 1, exclude_pull_requests: true }, c.timeoutMs);
      if (!Array.isArray(data?.workflow_runs)) throw new TypeError("no workflow_runs array in the body");
      return {
        kind: "workflowRuns",
        totalCount: int(data, "total_count"),
        runs: data.workflow_runs.map((r) => ({
          id: int(r, "id"),
          status: str(r, "status"),
          conclusion: strOrNull(r, "conclusion"),
          createdAt: str(r, "created_at"),
          runStartedAt: typeof r.run_started_at === "string" ? r.run_started_at : null,
          updatedAt: str(r, "updated_at"),
          htmlUrl: str(r, "html_url")
        })),
        date: h.date ?? null
      };
    },
    async listIssues(c) {
      const params = { state: "open", per_page: 100 };
      if (c.page > 1) params.page = idOf(c.page, "page", c.kind);
      const { data, headers: h } = await send(`GET ${repoPath(c.repository, c.kind)}/issues`, params, c.timeoutMs);
      if (!Array.isArray(data)) throw new TypeError("no array of issues in the body");
      return {
        kind: "issues",
        issues: data.map((i) => ({
          number: int(i, "number"),
          login: str(i?.user, "login"),
          title: str(i, "title"),
          body: typeof i.body === "string" ? i.body : "",
          state: str(i, "state"),
          pullRequest: typeof i.pull_request === "object" && i.pull_request !== null
        })),
        next: linkNext(h.link),
        date: h.date ?? null
      };
    },
    async createIssue(c) {
      const { data, headers: h } = await send(`POST ${repoPath(c.repository, c.kind)}/issues`, { title: c.title, body: c.body }, c.timeoutMs);
      return { kind: "posted", id: int(data, "id"), number: int(data, "number"), url: str(data, "html_url"), date: h.date ?? null };
    },
    async updateIssue(c) {
      const body = {};
      if (typeof c.body === "string") body.body = c.body;
      if (typeof c.state === "string") body.state = c.state;
      const path = `${repoPath(c.repository, c.kind)}/issues/${idOf(c.number, "number", c.kind)}`;
      const { data, headers: h } = await send(`PATCH ${path}`, body, c.timeoutMs);
      return { kind: "posted", id: int(data, "id"), number: int(data, "number"), url: str(data, "html_url"), date: h.date ?? null };
    }
  };
  return async function perform(command) {
    const handler = handlers[command.kind];
    if (!handler) throw new Error(`leasehold driver: unknown request command ${command.kind}`);
    try {
      return await handler(command);
    } catch (error) {
      if (error instanceof BadCommand) throw error;
      if (error instanceof TypeError && !error.response) {
        return { kind: "transport", sent: true, message: `the answer could not be read: ${error.message}` };
      }
      return replyFromError(error);
    }
  };
}

// actions/lib/timeline.mjs
function timelineOf(state, now) {
  const ms = (t) => t === void 0 || t === null ? void 0 : Date.parse(t);
  const change = state?.lastChange;
  const changedAt = ms(change?.at);
  const holders = (state?.holders ?? []).map((h) => ({
    label: `fence ${h.fence} ${h.holderId}`,
    fence: h.fence,
    holderId: h.holderId,
    start: ms(h.acquiredAt),
    end: now,
    open: true,
    startKnown: true
  }));
  const ended = [];
  if (change && changedAt !== void 0) {
    for (const r of change.removed ?? []) {
      ended.push({ label: `fence ${r.fence} ${r.holderId} (removed: ${r.reason})`, fence: r.fence, holderId: r.holderId, end: changedAt, open: false, startKnown: false });
    }
    const released = change.action === "release" && !holders.some((h) => h.holderId === change.by) && !ended.some((e) => e.holderId === change.by);
    if (released) {
      ended.push({ label: `${change.by} (released)`, holderId: change.by, end: changedAt, open: false, startKnown: false });
    }
  }
  const queue = (state?.queue ?? []).map((q, i) => ({
    label: `#${i + 1} ${q.holderId}`,
    holderId: q.holderId,
    start: ms(q.enqueuedAt),
    end: now,
    open: true,
    startKnown: true
  }));
  const known = [...holders, ...queue].map((b) => b.start).filter((t) => t !== void 0);
  const ends = [...ended.map((e) => e.end), now];
  const start = Math.min(...known, ...ends.map((t) => t - 6e4));
  for (const e of ended) e.start = Math.min(start, e.end);
  const holdings = [...ended, ...holders].sort((a, b) => (a.fence ?? 0) - (b.fence ?? 0));
  return { holdings, queue, start, end: Math.max(now, ...ends) };
}
var taskName = (text) => String(text).replace(/[:;#]/g, " ").replace(/\s+/g, " ").trim();
function mermaidGantt(state, now, { title } = {}) {
  const t = timelineOf(state, now);
  const lines = ["gantt", `  title ${taskName(title ?? `who held ${state?.lock ?? "the lock"}`)}`, "  dateFormat x", "  axisFormat %H:%M:%S"];
  const bar = (b, tag, id) => {
    const suffix = b.open ? " \u2192 now" : b.startKnown ? "" : " (start not recorded)";
    const end = Math.max(b.end, b.start + 1);
    return `  ${taskName(b.label + suffix)} :${tag ? `${tag}, ` : ""}${id}, ${b.start}, ${end}`;
  };
  lines.push("  section holdings");
  if (t.holdings.length === 0) lines.push(`  no holdings :milestone, none, ${now}, ${now}`);
  t.holdings.forEach((b, i) => lines.push(bar(b, b.open ? "active" : "done", `h${i}`)));
  if (t.queue.length > 0) {
    lines.push("  section queue");
    t.queue.forEach((b, i) => lines.push(bar(b, "", `q${i}`)));
  }
  return lines.join("\n");
}
var clock = (t) => new Date(t).toISOString().slice(11, 19);
function textTimeline(state, now, width = 48) {
  const t = timelineOf(state, now);
  const rows = [...t.holdings.map((b) => ["held", b]), ...t.queue.map((b) => ["queue", b])];
  if (rows.length === 0) return ["  (nothing held, nobody waiting)"];
  const span = Math.max(1, t.end - t.start);
  const col = (ms) => Math.min(width - 1, Math.floor((ms - t.start) / span * width));
  const labelWidth = Math.min(60, Math.max(...rows.map(([, b]) => b.label.length)));
  const lines = [`  ${"".padEnd(6)}${"".padEnd(labelWidth)}  ${clock(t.start)}${clock(t.end).padStart(width - 8)}`];
  for (const [kind, b] of rows) {
    const from = b.startKnown ? col(b.start) : 0;
    const to = Math.max(from, col(b.end));
    const fill = kind === "held" ? "\u2588" : "\u2591";
    const cells = " ".repeat(from) + (b.startKnown ? "" : "\u2026") + fill.repeat(Math.max(1, to - from + 1 - (b.startKnown ? 0 : 1)));
    const note = b.open ? " now" : b.startKnown ? "" : ` ended ${clock(b.end)}`;
    lines.push(`  ${kind.padEnd(6)}${b.label.slice(0, labelWidth).padEnd(labelWidth)} |${cells.padEnd(width)}|${note}`);
  }
  return lines;
}

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
      "error-code": error,
      resource: text(outcome.resource),
      "resource-tags": (outcome.resourceTags ?? []).join(","),
      "incident-id": text(outcome.lifecycle?.incidentId)
    };
  }
  if (kind === "recover") {
    return {
      result: outcome.result,
      "reservation-id": text(outcome.lifecycle?.reservationId),
      "incident-id": text(outcome.lifecycle?.incidentId),
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
  if (kind === "report-usage") {
    return { result: outcome.result, resource: text(outcome.resource), "error-code": error };
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
  const plain = ["released", "queue-cleaned", "noop", "release-unrecorded"].includes(outcome.result) ? outcome.result : "";
  return {
    released: text(outcome.released ?? false),
    result: outcome.result,
    "holder-id": outcome.holderId,
    "error-code": error,
    "cleanup-result": text(outcome.lifecycle?.cleanupResult ?? plain),
    "reservation-id": text(outcome.lifecycle?.reservationId),
    "incident-id": text(outcome.lifecycle?.incidentId),
    "report-degraded": text(outcome.lifecycle?.reportDegraded ?? false),
    "report-validation-error": text(outcome.lifecycle?.reportCode)
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
    failed: `${kind} of \`${outcome.lock}\` failed`,
    superseded: `left \`${outcome.lock}\`: the pull request moved on`,
    "unverified-head": `left \`${outcome.lock}\`: the pull request's head could not be verified`,
    incident: `not admitted to \`${outcome.lock}\`: its incident \`${outcome.lifecycle?.incidentId ?? ""}\` stands`,
    recovered: `recovered a quarantine of \`${outcome.lock}\` as the cooldown \`${outcome.lifecycle?.reservationId ?? ""}\``,
    "incident-recovered": `ended the incident \`${outcome.lifecycle?.incidentId ?? ""}\` of \`${outcome.lock}\``
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
    else if (state.config?.pool) lines.push(...poolHolders(state));
    else {
      lines.push("| fence | holder | since | lease until | run |", "| ---: | --- | --- | --- | --- |");
      for (const h of state.holders) {
        lines.push(`| ${h.fence} | \`${escapeCell(h.holderId)}\` | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
      }
      lines.push("");
    }
    if (state.incident) {
      lines.push("> [!WARNING]", `> Incident \`${escapeCell(state.incident.id)}\` since ${iso(state.incident.at)}, raised by \`${escapeCell(state.incident.holderId)}\`: nobody is admitted until an operator runs recover-incident.`, "");
    }
    if (state.reservations?.length) {
      lines.push(`**Reservations** (${state.reservations.length}, each keeping a slot)`, "", "| id | kind | left by | since | until | run |", "| --- | --- | --- | --- | --- | --- |");
      for (const r of state.reservations) {
        lines.push(`| \`${escapeCell(r.id)}\` | ${r.kind} | \`${escapeCell(r.holderId)}\` | ${iso(r.at)} | ${r.endsAt ? iso(r.endsAt) : "recovered"} | ${runLink(r.run)} |`);
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
  const l = outcome.lifecycle;
  const lifecycle = l?.cleanupResult || l?.reportDegraded ? ` [${[l.cleanupResult, l.reservationId, l.incidentId && `incident ${l.incidentId}`, l.reportDegraded && `report degraded: ${l.reportCode}`].filter(Boolean).join(", ")}]` : "";
  return `leasehold ${kind} ${outcome.lock}: ${outcome.result}${lifecycle}${detail} (${s.requests} requests, ${s.writes} writes, ${s.conflicts} conflicts)`;
}
function poolHolders(state) {
  const lines = ["| resource | held | fence | holder | partition | since | lease until | run |", "| --- | ---: | ---: | --- | --- | --- | --- | --- |"];
  for (const r of state.config.pool.resources) {
    const mine = state.holders.filter((h) => h.pool?.resource === r.name);
    if (mine.length === 0) lines.push(`| \`${escapeCell(r.name)}\` | 0/${r.capacity} | | | | | | |`);
    for (const h of mine) {
      const partition = h.pool?.partition ? h.pool.partition.map(escapeCell).join(", ") : "";
      lines.push(`| \`${escapeCell(r.name)}\` | ${mine.length}/${r.capacity} | ${h.fence} | \`${escapeCell(h.holderId)}\` | ${partition} | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
    }
  }
  const elsewhere = state.holders.filter((h) => !state.config.pool.resources.some((r) => r.name === h.pool?.resource));
  for (const h of elsewhere) lines.push(`| _${escapeCell(h.pool?.resource ?? "none")}_ | | ${h.fence} | \`${escapeCell(h.holderId)}\` | | ${iso(h.acquiredAt)} | ${iso(h.expiresAt)} | ${runLink(h.run)} |`);
  lines.push("");
  return lines;
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
async function run(kind, { opKind = kind, before } = {}) {
  if (kind === "acquire" && process.env.STATE_isPost === "true") return post();
  let op;
  try {
    const token = maskedToken();
    const loaded = loadCore();
    const { Operation, version } = loaded;
    const inputs = collectInputs(kind);
    op = new Operation(opKind, inputs, void 0);
    let plan = op.plan;
    requireToken(token);
    if (before) {
      const added = await before(loaded, inputs);
      op.free?.();
      op = new Operation(opKind, { ...inputs, ...added }, void 0);
      plan = op.plan;
    }
    for (const warning2 of plan.warnings) warning(warningMessage(warning2));
    info(`leasehold ${version}: ${opKind} ${plan.lock} in ${plan.repository} (branch ${plan.stateBranch}) as ${plan.holderId}`);
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
async function runCleanup() {
  let cancelled = null;
  const early = (signal) => cancelled ??= signal;
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, early);
  try {
    await run("cleanup", { opKind: "release", before: (loaded, inputs) => cleanupReport(loaded, inputs, () => cancelled) });
  } finally {
    for (const s of signals) process.off(s, early);
  }
}
async function cleanupReport(loaded, inputs, cancelled) {
  const settings = loaded.cleanupCommand(inputs);
  info(`leasehold cleanup: running ${JSON.stringify(settings.argv)} (deadline ${settings.timeoutMs / 1e3} s)`);
  const end = await runCleanupCommand({ settings, logger, secrets: [process.env[inputEnvName("token")] ?? ""], cancelled: cancelled() });
  const report = loaded.classifyCleanup(settings, end);
  info(`leasehold cleanup: the command ${describeEnd(end)}: cleanup ${report.cleanup}, health ${report.health}, reason ${report.reason}`);
  setOutput("command-exit-code", exitCodeOf(end));
  setOutput("command-result", end.kind);
  return { cleanup: report.cleanup, health: report.health, reason: report.reason };
}

export {
  runOperation,
  checkGuardInputs,
  GUARD_SCHEMA,
  guard,
  apiBaseUrl,
  createTransport,
  textTimeline,
  errorMessage,
  warningMessage,
  run,
  runGuard,
  runCleanup
};
/*! Bundled license information:

content-type/dist/index.js:
  (*!
   * content-type
   * Copyright(c) 2015 Douglas Christopher Wilson
   * MIT Licensed
   *)

@octokit/request-error/dist-src/index.js:
  (* v8 ignore else -- @preserve -- Bug with vitest coverage where it sees an else branch that doesn't exist *)

@octokit/request/dist-bundle/index.js:
  (* v8 ignore next -- @preserve *)
  (* v8 ignore else -- @preserve *)

@octokit/graphql/dist-bundle/index.js:
  (* v8 ignore if -- @preserve *)
*/
