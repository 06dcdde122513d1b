//! The `next` lines (the commands to run next, carrying the current token, each word POSIX
//! single-quoted where it needs it, so a line runs as printed) and the one result document a
//! command prints.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::ClaimSettings;
use crate::wire::{value_of, ClaimReport, ClaimState, Outcome, Status};

/// The result document's schema.
pub const RESULT_SCHEMA: &str = "leasehold-result/1";

/// A word as the shell must see it: bare when it is plainly safe, else single-quoted.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        word.into()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn line(s: &ClaimSettings, verb: &str, args: &[(&str, &str)]) -> String {
    let mut words: Vec<String> = vec![s.invocation.clone(), "claims".into()];
    words.extend(verb.split(' ').map(String::from));
    let mut push = |flag: &str, value: &str| {
        // A value that starts with a dash (a negative clock offset) is joined to its flag, as
        // the command line's parser asks of it.
        if value.starts_with('-') {
            words.push(format!("--{flag}={}", shell_quote(value)));
            return;
        }
        words.push(format!("--{flag}"));
        if !value.is_empty() {
            words.push(shell_quote(value));
        }
    };
    push("repository", &s.repository);
    if let Some(c) = &s.config_path {
        push("config", c);
    }
    for (f, v) in args {
        push(f, v);
    }
    words.join(" ")
}

/// The report with its `next` lines.
pub fn with_next(mut r: ClaimReport, s: &ClaimSettings) -> ClaimReport {
    let mut next = BTreeMap::new();
    let ns = s.namespace.clone();
    let repo_id = r.repository_id.clone().unwrap_or_default();
    let family = s.verb.family();
    let held_by_us: Vec<_> = r
        .items
        .iter()
        .filter(|i| {
            i.payload
                .as_ref()
                .is_some_and(|p| p.run_id == s.run_id && p.state == ClaimState::Held)
        })
        .collect();
    match r.status {
        Status::UnknownOutcome => {
            for i in &r.items {
                let mut args = vec![
                    ("namespace", ns.as_str()),
                    ("key", i.key.as_str()),
                    ("run-id", s.run_id.as_str()),
                ];
                if let Some(c) = &i.candidate {
                    args.push(("candidate", c));
                }
                next.insert(format!("adopt {}", i.key), line(s, "adopt", &args));
            }
            if let [i] = r.items.as_slice() {
                let l = next.remove(&format!("adopt {}", i.key)).unwrap_or_default();
                next.insert("adopt".into(), l);
            }
        }
        Status::Expired => {
            if let Some(i) = r.items.first() {
                let t = i.token.clone().unwrap_or_default();
                next.insert(
                    "takeover".into(),
                    line(
                        s,
                        "takeover",
                        &[("namespace", &ns), ("key", &i.key), ("supersedes", &t)],
                    ),
                );
            }
        }
        _ if family && held_by_us.len() == r.items.len() && !r.items.is_empty() && !s.dry_run => {
            let keys: Vec<&str> = r.items.iter().map(|i| i.key.as_str()).collect();
            let tokens: Vec<String> = r
                .items
                .iter()
                .map(|i| i.token.clone().unwrap_or_default())
                .collect();
            let (keys, tokens) = (keys.join(","), tokens.join(","));
            let base = [
                ("namespace", ns.as_str()),
                ("keys", keys.as_str()),
                ("tokens", tokens.as_str()),
                ("run-id", s.run_id.as_str()),
            ];
            let mut renew = base.to_vec();
            renew.push(("if-due", ""));
            next.insert("renew".into(), line(s, "family renew", &renew));
            next.insert("release".into(), line(s, "family release", &base));
            next.insert(
                "guard".into(),
                format!("{} -- <command…>", line(s, "guard", &base)),
            );
        }
        _ if !family && held_by_us.len() == 1 && !s.dry_run => {
            let i = held_by_us[0];
            let t = i.token.clone().unwrap_or_default();
            let prior = i
                .payload
                .as_ref()
                .map(|p| serde_json::to_string(p).expect("payload serializes"))
                .unwrap_or_default();
            let base = [
                ("namespace", ns.as_str()),
                ("key", i.key.as_str()),
                ("token", t.as_str()),
                ("run-id", s.run_id.as_str()),
            ];
            let clock = r.clock.map(|c| c.input()).unwrap_or_default();
            let mut fast: Vec<(&str, &str)> = base.to_vec();
            if !repo_id.is_empty() {
                fast.push(("repository-id", &repo_id));
                fast.push(("prior", &prior));
                if !clock.is_empty() {
                    fast.push(("clock-offset", &clock));
                }
            }
            let mut renew = fast.clone();
            renew.push(("if-due", ""));
            next.insert("renew".into(), line(s, "renew", &renew));
            next.insert("release".into(), line(s, "release", &fast));
            next.insert("verify".into(), line(s, "verify", &base));
            next.insert(
                "guard".into(),
                format!("{} -- <command…>", line(s, "guard", &base)),
            );
        }
        _ => {}
    }
    r.next = next;
    r
}

/// The one JSON document a command prints: `schema`, `command`, `status`, `exitCode`, what it
/// asks the caller to do, then the claim (or the lock outcome) and `next`.
pub fn result_document(command: &str, outcome: &Outcome) -> Value {
    let status = Status::of_outcome(outcome);
    let mut doc = json!({
        "schema": RESULT_SCHEMA,
        "command": command,
        "status": status.as_str(),
        "exitCode": status.exit_code(),
        "action": status.action(),
    });
    if let Some(slot) = &outcome.slots {
        let mut s = value_of(slot).expect("report serializes");
        if let Some(o) = s.as_object_mut() {
            o.remove("status");
        }
        doc["slot"] = s;
        doc["next"] = json!({});
        doc["error"] = match &outcome.error {
            Some(e) => value_of(e).expect("error serializes"),
            None => Value::Null,
        };
        return doc;
    }
    if let Some(report) = &outcome.report {
        let mut r = value_of(report).expect("report serializes");
        if let Some(o) = r.as_object_mut() {
            o.remove("status");
        }
        doc["report"] = r;
        doc["stats"] = value_of(&outcome.stats).expect("stats serialize");
        doc["next"] = json!({});
        doc["error"] = match &outcome.error {
            Some(e) => value_of(e).expect("error serializes"),
            None => Value::Null,
        };
        return doc;
    }
    match &outcome.claims {
        Some(r) => {
            let mut claims = value_of(r).expect("report serializes");
            let next = claims
                .as_object_mut()
                .and_then(|o| o.remove("next"))
                .unwrap_or(Value::Null);
            if let Some(o) = claims.as_object_mut() {
                o.remove("status");
            }
            doc["claim"] = claims;
            doc["next"] = next;
        }
        None => {
            doc["outcome"] = value_of(outcome).expect("outcome serializes");
            doc["next"] = json!({});
        }
    }
    doc["error"] = match &outcome.error {
        Some(e) => value_of(e).expect("error serializes"),
        None => Value::Null,
    };
    doc
}

/// The document of a command refused before it started: its status by the refusal's code
/// ([`Status::of_refusal`]: bad usage or input `usage`, a bad config and anything else `config`).
pub fn refusal_document(command: &str, code: &str, message: &str) -> Value {
    ended_before_work(
        command,
        Status::of_refusal(code),
        json!({ "code": code, "message": message }),
    )
}

/// The one document `validate` prints for its files' verdicts (each `{file, valid, problem?:
/// {rule, message, line, column}}`, in the order checked): `ok` (0) when every file is valid,
/// else `config` (3), its message naming each broken file as `file:line:column: rule: message`.
pub fn validate_document(files: Value) -> Value {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let list = files.as_array().map(Vec::as_slice).unwrap_or_default();
    let bad: Vec<String> = list
        .iter()
        .filter(|v| v["valid"] != Value::Bool(true))
        .map(|v| {
            let p = &v["problem"];
            format!(
                "{}:{}:{}: {}: {}",
                text(&v["file"]),
                p["line"],
                p["column"],
                text(&p["rule"]),
                text(&p["message"])
            )
        })
        .collect();
    let mut doc = if bad.is_empty() {
        ended_before_work("validate", Status::Ok, Value::Null)
    } else {
        let message = format!(
            "{} of {} config files break a rule: {}",
            bad.len(),
            list.len(),
            bad.join("; ")
        );
        refusal_document("validate", "config-invalid", &message)
    };
    doc["files"] = files;
    doc
}

/// A document with no work done: a refusal, or validate's verdicts.
fn ended_before_work(command: &str, status: Status, error: Value) -> Value {
    json!({
        "schema": RESULT_SCHEMA,
        "command": command,
        "status": status.as_str(),
        "exitCode": status.exit_code(),
        "action": status.action(),
        "next": {},
        "error": error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_takes_its_status_from_its_code() {
        for (code, status, exit) in [
            ("usage", "usage", 2),
            ("invalid-input", "usage", 2),
            ("no-token", "usage", 2),
            ("unreadable", "usage", 2),
            ("invalid-config", "config", 3),
            ("config-invalid", "config", 3),
            ("protocol", "config", 3),
            ("internal", "config", 3),
        ] {
            let doc = refusal_document("claim", code, "why");
            assert_eq!(
                (doc["status"].as_str(), doc["exitCode"].as_i64()),
                (Some(status), Some(exit)),
                "{code}"
            );
            assert_eq!(doc["error"], json!({"code": code, "message": "why"}));
        }
    }

    #[test]
    fn validate_is_ok_only_when_every_file_is_valid() {
        let good = json!({"file": "a.json", "valid": true, "capacity": 2});
        let doc = validate_document(json!([good]));
        assert_eq!(
            (doc["status"].as_str(), doc["exitCode"].as_i64()),
            (Some("ok"), Some(0))
        );
        assert_eq!(doc["error"], Value::Null);
        assert_eq!(doc["files"][0]["capacity"], 2);
        let bad = json!({"file": "b.json", "valid": false, "problem": {"rule": "capacity", "message": "must be 1 to 64", "line": 1, "column": 14}});
        let doc = validate_document(json!([good, bad]));
        assert_eq!(
            (doc["status"].as_str(), doc["exitCode"].as_i64()),
            (Some("config"), Some(3))
        );
        assert_eq!(doc["error"]["code"], "config-invalid");
        assert_eq!(
            doc["error"]["message"],
            "1 of 2 config files break a rule: b.json:1:14: capacity: must be 1 to 64"
        );
    }

    #[test]
    fn a_release_left_unrecorded_says_to_release_again_not_to_adopt() {
        let o = Outcome::new(
            crate::wire::ResultWord::ReleaseUnrecorded,
            false,
            "deploy",
            "o/r:1:j",
        );
        let doc = result_document("release", &o);
        assert_eq!(doc["status"], "release-unrecorded");
        assert_eq!(doc["exitCode"], 12);
        assert!(
            doc["action"].as_str().unwrap().contains("release again"),
            "{doc}"
        );
    }

    #[test]
    fn quoting_runs_as_printed() {
        assert_eq!(shell_quote("abc-1.2"), "abc-1.2");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
    }
}
