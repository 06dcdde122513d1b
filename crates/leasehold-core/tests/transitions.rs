//! Illegal transitions are typed errors: an answer of the wrong kind for what was sent is a
//! `ProtocolError`, never taken as a success.

use std::collections::BTreeMap;

use leasehold_core::{
    limits, Call, Command, Entropy, Error, Event, FailureCode, Operation, OperationKind, Reply,
    Status,
};
use leasehold_github_model::GitHub;
use serde_json::json;

const T0: u64 = 1_800_000_000_000;

fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Runs `kind` against the model until `is_write` matches a call, answers that call with
/// `wrong` instead, and returns what the operation made of it.
fn answer_write_wrongly(
    kind: OperationKind,
    pairs: &[(&str, &str)],
    is_write: impl Fn(&Call) -> bool,
    wrong: Reply,
) -> Result<(), Error> {
    let entropy = Entropy {
        seed: 3,
        nonce: "0123456789abcdef".into(),
    };
    let (mut op, _) = Operation::new(kind, &inputs(pairs), &entropy).expect("inputs");
    let mut gh = GitHub::new("main");
    // The state branch exists (on first use the state rides in the branch's first commit, and
    // no file write is sent).
    gh.add_branch("leasehold-state");
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let mut now = T0;
    for _ in 0..100 {
        match step.command {
            Command::Request { ref call, .. } if is_write(call) => {
                return op
                    .step(Event::Reply {
                        now,
                        reply: wrong.clone(),
                    })
                    .map(|_| ());
            }
            Command::Request { .. } => {
                let reply = gh.answer(&step.command, now).reply;
                step = op.step(Event::Reply { now, reply }).unwrap();
            }
            Command::Sleep { until_ms, .. } => {
                now = now.max(until_ms);
                step = op.step(Event::Timer { now }).unwrap();
            }
            Command::Finish { outcome } => panic!("finished before its write: {outcome:?}"),
        }
    }
    panic!("never wrote")
}

#[test]
fn a_file_write_answered_by_graphql_is_a_protocol_error() {
    let r = answer_write_wrongly(
        OperationKind::Acquire,
        &[
            ("lock", "deploy"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "7"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "build"),
        ],
        |c| matches!(c, Call::WriteFile { .. }),
        Reply::Graphql {
            data_absent: false,
            data: Some(json!({})),
            errors: Vec::new(),
            retry_after: None,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date: None,
        },
    );
    assert!(
        matches!(r, Err(Error::Protocol(_))),
        "a WriteFile answered by GraphQL: {r:?}"
    );
}

#[test]
fn a_ref_update_answered_as_a_file_write_is_a_protocol_error() {
    let r = answer_write_wrongly(
        OperationKind::Claim,
        &[
            ("repository", "octo/app"),
            ("namespace", "deploy"),
            ("key", "k"),
        ],
        |c| matches!(c, Call::Graphql { document, .. } if document.starts_with("mutation")),
        Reply::Written {
            sha: "f".repeat(40),
            date: None,
        },
    );
    assert!(
        matches!(r, Err(Error::Protocol(_))),
        "an updateRefs answered as a file write: {r:?}"
    );
}

fn list_op() -> Operation {
    let entropy = Entropy {
        seed: 3,
        nonce: "0123456789abcdef".into(),
    };
    let pairs = inputs(&[("repository", "octo/app"), ("namespace", "deploy")]);
    Operation::new(OperationKind::ClaimList, &pairs, &entropy)
        .expect("inputs")
        .0
}

#[test]
fn list_refuses_a_timer_while_a_page_is_awaited_and_a_reply_nothing_asked_for() {
    let mut op = list_op();
    let reply = |gh: &mut GitHub, c: &Command| gh.answer(c, T0).reply;
    let mut gh = GitHub::new("main");
    // A reply before anything was asked.
    let early = Reply::Graphql {
        data_absent: false,
        data: Some(json!({})),
        errors: Vec::new(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    };
    assert!(matches!(
        op.step(Event::Reply {
            now: T0,
            reply: early
        }),
        Err(Error::Protocol(_))
    ));
    let first = op.step(Event::Start { now: T0 }).unwrap().command;
    assert!(matches!(first, Command::Request { .. }));
    // A timer while the page is awaited: no second request.
    assert!(matches!(
        op.step(Event::Timer { now: T0 + 1 }),
        Err(Error::Protocol(_))
    ));
    // The awaited answer is still taken; then the list is done.
    let page = reply(&mut gh, &first);
    let done = op
        .step(Event::Reply {
            now: T0,
            reply: page,
        })
        .unwrap()
        .command;
    assert!(matches!(done, Command::Finish { .. }), "{done:?}");
}

#[test]
fn list_refuses_a_reply_while_sleeping_before_a_retry() {
    let mut op = list_op();
    let first = op.step(Event::Start { now: T0 }).unwrap().command;
    assert!(matches!(first, Command::Request { .. }));
    let bad_gateway = Reply::Http {
        status: 502,
        message: "Bad Gateway".into(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    };
    let sleep = op
        .step(Event::Reply {
            now: T0,
            reply: bad_gateway.clone(),
        })
        .unwrap()
        .command;
    assert!(matches!(sleep, Command::Sleep { .. }), "{sleep:?}");
    assert!(matches!(
        op.step(Event::Reply {
            now: T0,
            reply: bad_gateway
        }),
        Err(Error::Protocol(_))
    ));
}

#[test]
fn a_cancelled_list_is_cancelled() {
    let mut op = list_op();
    let _ = op.step(Event::Start { now: T0 }).unwrap();
    let Command::Finish { outcome } = op.step(Event::Cancel { now: T0 }).unwrap().command else {
        panic!("a cancel finishes the list")
    };
    assert_eq!(Status::of_outcome(&outcome), Status::Cancelled);
}

#[test]
fn a_list_that_never_ends_stops_at_the_request_backstop() {
    let mut op = list_op();
    let mut command = op.step(Event::Start { now: T0 }).unwrap().command;
    let endless = Reply::Graphql {
        data_absent: false,
        data: Some(json!({"repository": {"id": "R_1", "refs": {
            "nodes": [],
            "pageInfo": {"hasNextPage": true, "endCursor": "again"}
        }}})),
        errors: Vec::new(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    };
    let mut sent = 0u32;
    while let Command::Request { .. } = command {
        sent += 1;
        assert!(sent <= limits::MAX_REQUESTS, "no backstop");
        command = op
            .step(Event::Reply {
                now: T0,
                reply: endless.clone(),
            })
            .unwrap()
            .command;
    }
    assert_eq!(sent, limits::MAX_REQUESTS);
    let Command::Finish { outcome } = command else {
        panic!("finished: {command:?}")
    };
    assert_eq!(outcome.error.unwrap().code, FailureCode::RequestBudget);
}
