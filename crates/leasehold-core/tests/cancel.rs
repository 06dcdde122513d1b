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

/// An operation outside the engine hears a cancel an answer brought where the driver would have
/// told it, at its next sleep: an answer that leads to another request (here the next read; for a
/// post whose answer was lost, its read-back) is followed first.
#[test]
fn an_operation_outside_the_engine_hears_a_cancelled_answer_at_its_next_sleep() {
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
    let Command::Request { call, .. } = step.command else {
        panic!("the next read is sent: {:?}", step.command)
    };
    assert!(matches!(call, Call::ListWorkflowRuns { .. }), "{call:?}");
    // A 502: the audit would sleep to retry; it hears the cancel there instead, and stops.
    let step = audit
        .step(Event::Reply {
            now: NOW + 20,
            reply: Reply::Http {
                status: 502,
                message: String::new(),
                retry_after: None,
                ratelimit_remaining: None,
                ratelimit_reset: None,
                date: None,
            },
        })
        .unwrap();
    let Command::Finish { outcome } = step.command else {
        panic!("it sleeps on: {:?}", step.command)
    };
    assert!(!outcome.success);
    assert!(
        outcome.error.unwrap().message.contains("cancelled"),
        "it heard the cancel"
    );
}

fn http(status: u16) -> Reply {
    Reply::Http {
        status,
        message: String::new(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    }
}

/// A reap of several locks: the driver tells the cancel once, to the lock being reaped then. A
/// cancel that came with the answer finishing one lock is told to each lock after it at its first
/// sleep, where the driver would have told it: the sleep is cut short, not slept.
#[test]
fn a_reap_of_several_locks_tells_each_later_lock_the_cancel_at_its_first_sleep() {
    let mut reap = op(
        OperationKind::Reap,
        &[
            ("lock", "a, b"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "900"),
            ("GITHUB_JOB", "reap"),
        ],
    );
    let mut step = reap.step(Event::Start { now: NOW }).unwrap();
    let mut now = NOW;
    let mut cancelled_sent = false;
    for _ in 0..20 {
        let call = match &step.command {
            Command::Request { call, .. } => call.clone(),
            Command::Sleep { .. } if cancelled_sent => panic!("lock b slept after the cancel"),
            other => panic!("unexpected {other:?}"),
        };
        now += 10;
        match &call {
            Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                step = reap
                    .step(Event::Reply {
                        now,
                        reply: http(404),
                    })
                    .unwrap();
            }
            // Lock a has no state: its reap ends with this answer, which comes as cancelled.
            Call::ReadFile { path, .. } if path.ends_with("/a.json") => {
                cancelled_sent = true;
                step = reap
                    .step(Event::CancelledReply {
                        now,
                        reply: http(404),
                    })
                    .unwrap();
            }
            // Lock b's read fails: a retry it would sleep for.
            Call::ReadFile { path, .. } if path.ends_with("/b.json") => {
                step = reap
                    .step(Event::Reply {
                        now,
                        reply: http(502),
                    })
                    .unwrap();
                if let Command::Request { .. } | Command::Finish { .. } = step.command {
                    return;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("did not get to lock b");
}
