//! Runs the shared transcripts in `fixtures/*.json` (the same files the node tests run against
//! the built wasm): feed each event, compare each command with the expected one. Each file is
//! its own test case, named by its file name without `.json`, so one can be run alone:
//! `cargo test -p leasehold-core --test fixtures -- acquire-conflict-rereads`. A new file in
//! `fixtures/` is a new case with no code to change (they are written by `fixtures/generate.mjs`).
//!
//! A fixture: `{ name, operation, inputs, entropy, steps: [{ event, expect }] }` or, for an
//! operation that must not start, `{ name, operation, inputs, entropy, error: { code, input } }`.
//! `expect` matches partially: every key it names must match; arrays must have the same length.
//! A `contentJson` key in `expect` is matched against the command's `content` parsed as JSON.
//! A reply whose `content` is `"$lastWrite"` carries the content of the last `writeFile` command
//! (a read-back of exactly what was written). A step's `logIncludes` (a string) must be part of
//! one of the log lines of that step.

use std::path::{Path, PathBuf};

use leasehold_core::{Entropy, Event, Operation, OperationKind, RawInputs};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn matches(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                if k == "contentJson" {
                    let text = a
                        .get("content")
                        .and_then(Value::as_str)
                        .ok_or(format!("{path}: no content"))?;
                    let parsed: Value = serde_json::from_str(text)
                        .map_err(|err| format!("{path}.content: {err}"))?;
                    matches(ev, &parsed, &format!("{path}.content"))?;
                    continue;
                }
                let av = a.get(k).unwrap_or(&Value::Null);
                matches(ev, av, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} items, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .try_for_each(|(i, (ev, av))| matches(ev, av, &format!("{path}[{i}]")))
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, got {a}")),
    }
}

/// Runs one fixture file; a failure names the fixture (its `name`) and the step.
fn run_fixture(file: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let fixture: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    run_steps(&fixture)
        .map_err(|e| format!("{}\n{e}", fixture["name"].as_str().unwrap_or("")).into())
}

fn run_steps(fixture: &Value) -> Result<(), String> {
    let kind: OperationKind =
        serde_json::from_value(fixture["operation"].clone()).map_err(|e| e.to_string())?;
    let inputs: RawInputs =
        serde_json::from_value(fixture["inputs"].clone()).map_err(|e| e.to_string())?;
    let entropy: Entropy =
        serde_json::from_value(fixture["entropy"].clone()).map_err(|e| e.to_string())?;
    let created = Operation::new(kind, &inputs, &entropy);
    if let Some(want) = fixture.get("error") {
        let err = created
            .err()
            .ok_or("expected the operation to be refused")?;
        let mut got = serde_json::json!({ "code": err.code(), "message": err.to_string() });
        if let leasehold_core::Error::Input(i) = &err {
            got["input"] = Value::String(i.input.clone());
        }
        return matches(want, &got, "error");
    }
    let (mut op, _plan) = created.map_err(|e| format!("refused: {e}"))?;
    let steps = fixture["steps"].as_array().ok_or("no steps")?;
    let mut last_write: Option<String> = None;
    for (i, step) in steps.iter().enumerate() {
        let mut event_json = step["event"].clone();
        if event_json["reply"]["content"] == "$lastWrite" {
            event_json["reply"]["content"] = Value::String(
                last_write
                    .clone()
                    .ok_or(format!("step {i}: no write yet"))?,
            );
        }
        let event: Event =
            serde_json::from_value(event_json).map_err(|e| format!("step {i}: bad event: {e}"))?;
        match (op.step(event), step.get("protocolError")) {
            (Err(e), Some(_)) if e.code() == "protocol" => continue,
            (Err(e), _) => return Err(format!("step {i}: {e}")),
            (Ok(out), Some(_)) => {
                return Err(format!(
                    "step {i}: expected a protocol error, got {:?}",
                    out.command
                ))
            }
            (Ok(out), None) => {
                let actual = serde_json::to_value(&out.command).unwrap();
                if let Some(content) = actual.get("content").and_then(Value::as_str) {
                    last_write = Some(content.to_string());
                }
                matches(&step["expect"], &actual, &format!("step {i}"))?;
                if let Some(want) = step.get("logIncludes").and_then(Value::as_str) {
                    if !out.log.iter().any(|l| l.text.contains(want)) {
                        let lines: Vec<&str> = out.log.iter().map(|l| l.text.as_str()).collect();
                        return Err(format!(
                            "step {i}: no log line includes {want:?}: {lines:?}"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let count = files.len();
    let mut trials = vec![Trial::test("fixtures-present", move || {
        if count >= 5 {
            Ok(())
        } else {
            Err(format!("expected the shared fixtures, found {count}").into())
        }
    })];
    trials.extend(files.into_iter().map(|file| {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        Trial::test(name, move || run_fixture(&file))
    }));
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}
