//! Thin wasm-bindgen binding of `leasehold-core`. No logic lives here: values cross as JSON text
//! (actions/lib/wasm.mjs stringifies what it passes and parses what it gets back), entropy is
//! drawn with `getrandom` and handed to the core as an argument, and every error reaches
//! JavaScript as an `Error` with a stable `code` (and, for bad input, the `input` and `rule`).
//!
//! JSON text rather than JavaScript objects, for size: every value is read through a
//! `serde_json::Value`, as the core reads its documents, so the wasm holds one copy of each
//! type's deserializer instead of a second one for JavaScript objects (serde-wasm-bindgen's);
//! values are written with `serde_json` (compact; the pretty writer the core writes states with
//! would save another 10 KB but makes every answer larger).

use leasehold_core::{Entropy, Error, Event, Operation as CoreOperation, OperationKind, RawInputs};
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::prelude::*;

fn to_json<T: Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| js_error("internal", &e.to_string(), &[]))
}

fn from_json<T: DeserializeOwned>(what: &str, text: &str) -> Result<T, JsValue> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| bad_argument(what, e))?;
    leasehold_core::from_value(value).map_err(|e| bad_argument(what, e))
}

fn js_error(code: &str, message: &str, fields: &[(&str, &str)]) -> JsValue {
    let err = js_sys::Error::new(message);
    let set =
        |k: &str, v: &str| js_sys::Reflect::set(&err, &JsValue::from_str(k), &JsValue::from_str(v));
    let _ = set("code", code);
    for (k, v) in fields {
        let _ = set(k, v);
    }
    err.into()
}

fn core_error(e: &Error) -> JsValue {
    match e {
        Error::Input(i) => js_error(
            e.code(),
            &e.to_string(),
            &[("input", &i.input), ("rule", &i.rule), ("value", &i.value)],
        ),
        Error::Protocol(_) => js_error(e.code(), &e.to_string(), &[]),
        Error::Config(c) => js_error(
            e.code(),
            &e.to_string(),
            &[("path", &c.path), ("rule", &c.rule)],
        ),
    }
}

fn bad_argument(what: &str, e: impl std::fmt::Display) -> JsValue {
    js_error("invalid-argument", &format!("{what}: {e}"), &[])
}

/// Draws the entropy an operation needs from the platform's secure random source.
fn draw_entropy() -> Result<Entropy, JsValue> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| js_error("entropy", &e.to_string(), &[]))?;
    let seed = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) >> 11; // a safe JS integer
    let nonce = bytes[8..].iter().map(|b| format!("{b:02x}")).collect();
    Ok(Entropy { seed, nonce })
}

/// One lock operation (acquire, release or status) as a state machine.
#[wasm_bindgen]
pub struct Operation {
    inner: CoreOperation,
    plan: String,
}

#[wasm_bindgen]
impl Operation {
    /// `new Operation(kind, inputs, entropy)`, each JSON text: `kind` is an operation's name
    /// ("acquire", "release", "status", ...); `inputs` maps input names and context variables to
    /// strings; `entropy` (`{seed, nonce}`) is for tests that replay a run, `null` draws it here.
    #[wasm_bindgen(constructor)]
    pub fn new(kind: &str, inputs: &str, entropy: &str) -> Result<Operation, JsValue> {
        let kind: OperationKind = from_json("kind", kind)?;
        let inputs: RawInputs = from_json("inputs", inputs)?;
        let entropy = match from_json::<Option<Entropy>>("entropy", entropy)? {
            Some(entropy) => entropy,
            None => draw_entropy()?,
        };
        let (inner, plan) =
            CoreOperation::new(kind, &inputs, &entropy).map_err(|e| core_error(&e))?;
        Ok(Operation {
            inner,
            plan: to_json(&plan)?,
        })
    }

    /// Where requests go and what the inputs resolved to: `{kind, lock, repository,
    /// stateBranch, holderId, warnings}`.
    #[wasm_bindgen(getter)]
    pub fn plan(&self) -> String {
        self.plan.clone()
    }

    /// Feeds one event (`{kind: "start"|"reply"|"timer", now, reply?}`) and returns the next
    /// step: `{command: {kind, ...}, log?: [{level, text}]}`.
    pub fn step(&mut self, event: &str) -> Result<String, JsValue> {
        let event: Event = from_json("event", event)?;
        let step = self.inner.step(event).map_err(|e| core_error(&e))?;
        to_json(&step)
    }
}

/// A guard's loop as a state machine: `new Guard(inputs)` reads `kill-grace-seconds` (an error
/// names it); `step(event)` takes `{kind: "started"|"verified"|"renewal-ended"|"timer-fired"|
/// "child-exited"|"signal-received", now, ...}` and returns `{commands: [{kind, ...}], log?}`.
#[wasm_bindgen]
pub struct Guard {
    inner: leasehold_core::guard::Guard,
}

#[wasm_bindgen]
impl Guard {
    #[wasm_bindgen(constructor)]
    pub fn new(inputs: &str) -> Result<Guard, JsValue> {
        let inputs: RawInputs = from_json("inputs", inputs)?;
        let inner = leasehold_core::guard::Guard::new(&inputs).map_err(|e| core_error(&e))?;
        Ok(Guard { inner })
    }

    /// The guard's settings: `{killGraceMs}`.
    #[wasm_bindgen(getter)]
    pub fn settings(&self) -> Result<String, JsValue> {
        to_json(self.inner.settings())
    }

    pub fn step(&mut self, event: &str) -> Result<String, JsValue> {
        let event: leasehold_core::guard::GuardEvent = from_json("event", event)?;
        let step = self.inner.step(event).map_err(|e| core_error(&e))?;
        to_json(&step)
    }
}

/// What a guard says and renews with: `new GuardReport(kind, inputs)` checks the inputs of the
/// renewals (`renew`, `claim-renew` or `claim-family-renew`; an error names the input). Each
/// renewal runs `kind` on `inputs` as they are then; `heard(verified, outcome)` takes its
/// outcome (a claim's token rotates); `unfinished(why)` is the outcome of one whose driver threw;
/// `startDocument(pid, argv, lease)` and `finishDocument(finish)` are the guard's documents.
#[wasm_bindgen]
pub struct GuardReport {
    inner: leasehold_core::guard_report::GuardReport,
}

#[wasm_bindgen]
impl GuardReport {
    #[wasm_bindgen(constructor)]
    pub fn new(kind: &str, inputs: &str) -> Result<GuardReport, JsValue> {
        let kind: OperationKind = from_json("kind", kind)?;
        let inputs: RawInputs = from_json("inputs", inputs)?;
        let inner = leasehold_core::guard_report::GuardReport::new(kind, inputs, &draw_entropy()?)
            .map_err(|e| core_error(&e))?;
        Ok(GuardReport { inner })
    }

    /// The operation each renewal runs.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> Result<String, JsValue> {
        to_json(&self.inner.kind())
    }

    /// The renewals' plan: `{kind, lock, repository, stateBranch, holderId, warnings}`.
    #[wasm_bindgen(getter)]
    pub fn plan(&self) -> Result<String, JsValue> {
        to_json(self.inner.plan())
    }

    /// The inputs the next renewal runs on.
    #[wasm_bindgen(getter)]
    pub fn inputs(&self) -> Result<String, JsValue> {
        to_json(self.inner.inputs())
    }

    pub fn heard(&mut self, verified: bool, outcome: &str) -> Result<(), JsValue> {
        let outcome: leasehold_core::Outcome = from_json("outcome", outcome)?;
        self.inner.heard(verified, &outcome);
        Ok(())
    }

    pub fn unfinished(&self, why: &str) -> Result<String, JsValue> {
        to_json(&self.inner.unfinished(why))
    }

    #[wasm_bindgen(js_name = startDocument)]
    pub fn start_document(
        &self,
        pid: Option<u32>,
        argv: &str,
        lease: &str,
    ) -> Result<String, JsValue> {
        let argv: Vec<String> = from_json("argv", argv)?;
        let lease: leasehold_core::LeaseView = from_json("lease", lease)?;
        to_json(&self.inner.start_document(pid, &argv, &lease))
    }

    #[wasm_bindgen(js_name = finishDocument)]
    pub fn finish_document(&self, finish: &str) -> Result<String, JsValue> {
        let finish: leasehold_core::guard::Finish = from_json("finish", finish)?;
        to_json(&self.inner.finish_document(&finish))
    }
}

/// The guard's exit codes: `{usage, lost, deadline, notHeld, spawnFailed, signalBase}`.
#[wasm_bindgen(js_name = guardExitCodes)]
pub fn guard_exit_codes() -> Result<String, JsValue> {
    to_json(&leasehold_core::guard::EXIT_CODES)
}

/// The cleanup command's run (`actions/cleanup`) as a state machine: `new CleanupRun(inputs)`
/// reads `command`, `timeout-seconds`, `kill-grace-seconds`, `blocked-exit-code` and
/// `job-status` (an error names the input); `step(event)` takes `{kind: "started"|"timer-fired"|"child-exited"|
/// "signal-received", now, ...}` and returns `{commands: [{kind, ...}], log?}`, the last command
/// `{kind: "finish", end, report: {cleanup, health, reason}}`.
#[wasm_bindgen]
pub struct CleanupRun {
    inner: leasehold_core::cleanup_run::CleanupRun,
}

#[wasm_bindgen]
impl CleanupRun {
    #[wasm_bindgen(constructor)]
    pub fn new(inputs: &str) -> Result<CleanupRun, JsValue> {
        let inputs: RawInputs = from_json("inputs", inputs)?;
        let inner = leasehold_core::cleanup_run::CleanupRun::new(&inputs)
            .map_err(|e| core_error(&Error::Input(e)))?;
        Ok(CleanupRun { inner })
    }

    /// The command's settings: `{argv, timeoutMs, cancelledFromMs, killGraceMs,
    /// blockedExitCode}`.
    #[wasm_bindgen(getter)]
    pub fn settings(&self) -> Result<String, JsValue> {
        to_json(self.inner.settings())
    }

    pub fn step(&mut self, event: &str) -> Result<String, JsValue> {
        let event: leasehold_core::cleanup_run::CleanupEvent = from_json("event", event)?;
        let step = self.inner.step(event).map_err(|e| core_error(&e))?;
        to_json(&step)
    }
}

/// The one exit-code table: `[{status, exitCode, action}]`, in table order.
#[wasm_bindgen(js_name = exitTable)]
pub fn exit_table() -> Result<String, JsValue> {
    to_json(&leasehold_core::exit_table())
}

/// The one result document a command prints, for a finished operation's outcome.
#[wasm_bindgen(js_name = resultDocument)]
pub fn result_document(command: &str, outcome: &str) -> Result<String, JsValue> {
    let outcome: leasehold_core::Outcome = from_json("outcome", outcome)?;
    to_json(&leasehold_core::result_document(command, &outcome))
}

/// The document of a command refused before it ran: its status (`usage` or `config`) by `code`,
/// the core's rule.
#[wasm_bindgen(js_name = refusalDocument)]
pub fn refusal_document(command: &str, code: &str, message: &str) -> Result<String, JsValue> {
    to_json(&leasehold_core::refusal_document(command, code, message))
}

/// The document `validate` prints for its files' verdicts (`[{file, valid, problem?}]`).
#[wasm_bindgen(js_name = validateDocument)]
pub fn validate_document(files: &str) -> Result<String, JsValue> {
    let files: serde_json::Value = from_json("files", files)?;
    to_json(&leasehold_core::validate_document(files))
}

/// What actions/validate is asked to check (`{files?, changed-only?}` as the step's inputs
/// give them): `{patterns, changedOnly}`, or an input error naming `files` or `changed-only`.
#[wasm_bindgen(js_name = validateSettings)]
pub fn validate_settings(inputs: &str) -> Result<String, JsValue> {
    let inputs: RawInputs = from_json("inputs", inputs)?;
    let settings = leasehold_core::ValidateSettings::parse(&inputs)
        .map_err(|e| core_error(&Error::Input(e)))?;
    to_json(&settings)
}

/// The credential shape `value` carries anywhere in it (the core's one list), if any: the name
/// of the shape, never the value. For tests and scanners that must agree with the core.
#[wasm_bindgen(js_name = credentialShape)]
pub fn credential_shape(value: &str) -> Option<String> {
    leasehold_core::credential_shape(value).map(str::to_string)
}

/// The version of the core, for logs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// What the core makes of a lock's config file (`locks/<lock>.config.json`), by the rules
/// acquire reads it with: `{valid, capacity?, lease?, problem?: {rule, message, pointer,
/// line?, column?}}`.
#[wasm_bindgen(js_name = checkConfig)]
pub fn check_config(text: &str) -> Result<String, JsValue> {
    to_json(&leasehold_core::config_verdict(text))
}

/// For benchmarks only (no action calls it): a pool's admission on a state parsed once, the
/// core's [`leasehold_core::PoolPass`]. `new PoolBench(lock, stateText, configPath,
/// configText)`; `admit(now)` runs one admission pass on a copy of the state and returns how
/// many it admitted; `copy()` makes that copy alone. It times nothing itself.
#[wasm_bindgen]
pub struct PoolBench {
    inner: leasehold_core::PoolPass,
}

#[wasm_bindgen]
impl PoolBench {
    #[wasm_bindgen(constructor)]
    pub fn new(
        lock: &str,
        state_text: &str,
        config_path: &str,
        config_text: &str,
    ) -> Result<PoolBench, JsValue> {
        leasehold_core::PoolPass::new(lock, state_text, config_path, config_text)
            .map(|inner| PoolBench { inner })
            .map_err(|e| js_error("invalid-argument", &e, &[]))
    }

    /// One admission pass at `now` (ms): the number of waiters it admitted.
    pub fn admit(&self, now: f64) -> usize {
        self.inner.admit(now as leasehold_core::Millis).len()
    }

    /// The copy of the state `admit` starts from, alone: the queue's length.
    pub fn copy(&self) -> usize {
        self.inner.copy()
    }
}
