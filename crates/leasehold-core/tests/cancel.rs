//! A cancel that comes while a request is in flight (`cancelledReply`): the operation hears the
//! answer as cancelled. Before, the driver could tell the core of a cancel only at a sleep, so an
//! answer that ended the operation (an acquire's admitting write) lost the cancel: the job,
//! being cancelled, finished `acquired` and kept the slot.
use std::collections::BTreeMap;

use leasehold_core::{Call, Command, Entropy, Event, Operation, OperationKind, Reply, ResultWord};

const NOW: u64 = 1_800_000_000_000;
const FREE: &str = "{\"schema\": 1, \"lock\": \"deploy\", \"revision\": 1, \"fence\": 0, \"holders\": [], \"queue\": []}\n";

fn op(kind: OperationKind, pairs: &[(&str, &str)]) -> Operation {
    let inputs: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let entropy = Entropy {
        seed: 3,
        nonce: "00000000000000ee".into(),
    };
    Operation::new(kind, &inputs, &entropy).expect("inputs").0
}

fn acquire() -> Operation {
    op(
        OperationKind::Acquire,
        &[
            ("lock", "deploy"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "deploy"),
            ("record-job-id", "false"),
        ],
    )
}

/// Drives an acquire on a free lock of capacity 1; the first write's answer comes as
/// `cancelled(reply)`. Returns the result and every write's holders.
fn admitted_as(cancelled: bool) -> (ResultWord, Vec<usize>) {
    let mut op = acquire();
    let mut current = FREE.to_string();
    let mut writes = Vec::new();
    let mut now = NOW;
    let mut step = op.step(Event::Start { now }).unwrap();
    for _ in 0..100 {
        let call = match step.command {
            Command::Finish { outcome } => return (outcome.result, writes),
            Command::Sleep { until_ms, .. } => {
                now = now.max(until_ms);
                step = op.step(Event::Timer { now }).unwrap();
                continue;
            }
            Command::Request { call, .. } => call,
        };
        now += 10;
        let reply = match &call {
            Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                Reply::file("c1", "{\"capacity\": 1}\n")
            }
            Call::ReadFile { .. } => Reply::file(&format!("s{}", writes.len()), &current),
            Call::WriteFile { content, .. } => {
                current = content.clone();
                let v: serde_json::Value = serde_json::from_str(content).unwrap();
                writes.push(v["holders"].as_array().unwrap().len());
                Reply::Written {
                    sha: format!("s{}", writes.len()),
                    date: None,
                }
            }
            other => panic!("unexpected {other:?}"),
        };
        let first_write = matches!(call, Call::WriteFile { .. }) && writes.len() == 1;
        step = if cancelled && first_write {
            op.step(Event::CancelledReply { now, reply }).unwrap()
        } else {
            op.step(Event::Reply { now, reply }).unwrap()
        };
    }
    panic!("did not finish")
}

#[test]
fn an_admitting_write_answered_once_the_job_is_cancelled_gives_the_slot_back() {
    assert_eq!(admitted_as(false), (ResultWord::Acquired, vec![1]));
    let (result, writes) = admitted_as(true);
    assert_eq!(result, ResultWord::Cancelled);
    assert_eq!(writes, [1, 0], "admitted, then the slot given back");
}

#[test]
fn an_operation_that_stops_on_cancel_stops_after_a_cancelled_answer() {
    let mut audit = op(OperationKind::Audit, &[("GITHUB_REPOSITORY", "octo/app")]);
    let step = audit.step(Event::Start { now: NOW }).unwrap();
    assert!(matches!(step.command, Command::Request { .. }));
    let reply = Reply::User {
        login: "leasehold-bot".into(),
        account_type: "Bot".into(),
        date: None,
    };
    let step = audit
        .step(Event::CancelledReply {
            now: NOW + 10,
            reply,
        })
        .unwrap();
    let Command::Finish { outcome } = step.command else {
        panic!("it goes on: {:?}", step.command)
    };
    assert!(!outcome.success);
    assert!(
        outcome.error.unwrap().message.contains("cancelled"),
        "it heard the cancel"
    );
}
