//! Slot allocation end to end through `Operation::step` against a small in-memory model of
//! GitHub's refs (`matching-refs` paginated by a `Link` header, `POST git/refs` create-if-absent,
//! `GET git/ref`), with faults injected on the ref create.

mod common;

use std::collections::BTreeMap;

use common::{http, raw_inputs};
use leasehold_core::{
    result_document, Call, Command, Entropy, Event, Operation, OperationKind, Outcome, RefEntry,
    Reply, Status,
};

const T0: u64 = 1_800_000_000_000;
const PREFIX_REF: &str = "refs/leasehold/slots/accounts/acct";

#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    /// Create the ref, then answer 502 (GitHub's 10 s kill after the work was done).
    ApplyThen502,
    /// Answer 502 without creating it.
    Lose502,
    /// Answer 502 without creating it, after another allocation created the same ref.
    OtherThen502,
    /// The connection failed before the request left.
    NotSent,
    /// 403 without any rate-limit signal.
    Forbidden,
}

struct Git {
    refs: BTreeMap<String, String>,
    /// Refs a page (`None`: every ref in one answer, as GitHub has been seen to do).
    page_size: Option<usize>,
    /// Break the `Link` header: name a next page without a page number.
    opaque_next: bool,
    /// Refs created by "someone else" just before our create of that ref is answered.
    race: Vec<String>,
    faults: Vec<Fault>,
    next: u64,
    requests: Vec<String>,
}

fn oid(n: u64) -> String {
    format!("{n:040x}")
}

impl Git {
    fn with_slots(numbers: &[u64]) -> Self {
        let mut g = Git {
            refs: BTreeMap::new(),
            page_size: None,
            opaque_next: false,
            race: Vec::new(),
            faults: Vec::new(),
            next: 1_000,
            requests: Vec::new(),
        };
        for n in numbers {
            g.other(&format!("{PREFIX_REF}{n:02}"));
        }
        // Refs that share the prefix but are not its slots.
        g.other("refs/leasehold/slots/accounts/acct-old99");
        g.other("refs/leasehold/slots/accounts/acctx77");
        g
    }

    /// Someone else's slot ref.
    fn other(&mut self, name: &str) {
        self.next += 1;
        self.refs.insert(name.into(), oid(self.next));
    }

    fn answer(&mut self, call: &Call) -> Reply {
        self.requests.push(call.name().into());
        match call {
            Call::ListMatchingRefs { prefix, page } => {
                let all: Vec<RefEntry> = self
                    .refs
                    .iter()
                    .filter(|(k, _)| k.starts_with(prefix.as_str()))
                    .map(|(k, v)| RefEntry {
                        ref_name: k.clone(),
                        sha: v.clone(),
                    })
                    .collect();
                let size = self.page_size.unwrap_or(usize::MAX);
                let from = (*page as usize - 1).saturating_mul(size).min(all.len());
                let to = from.saturating_add(size).min(all.len());
                let next = (to < all.len()).then(|| {
                    if self.opaque_next {
                        "https://api.github.com/repositories/1/git/matching-refs/x?after=abc".into()
                    } else {
                        format!(
                            "https://api.github.com/repositories/1/git/matching-refs/x?page={}",
                            page + 1
                        )
                    }
                });
                Reply::Refs {
                    refs: all[from..to].to_vec(),
                    next,
                    date: None,
                }
            }
            Call::CreateTree { .. } | Call::CreateCommit { .. } => {
                self.next += 1;
                Reply::Created {
                    sha: oid(self.next),
                }
            }
            Call::CreateRef { ref_name, sha } => {
                if let Some(i) = self.race.iter().position(|r| r == ref_name) {
                    self.race.remove(i);
                    self.other(ref_name);
                }
                let fault = if self.faults.is_empty() {
                    None
                } else {
                    Some(self.faults.remove(0))
                };
                match fault {
                    Some(Fault::NotSent) => {
                        return Reply::Transport {
                            sent: false,
                            message: "ECONNREFUSED".into(),
                        }
                    }
                    Some(Fault::Forbidden) => {
                        return http(403, "Resource not accessible by integration")
                    }
                    Some(Fault::OtherThen502) => {
                        self.other(ref_name);
                        return http(502, "Server Error");
                    }
                    Some(Fault::Lose502) => return http(502, "Server Error"),
                    Some(Fault::ApplyThen502) | None => {}
                }
                if self.refs.contains_key(ref_name) {
                    return http(422, "Reference already exists");
                }
                self.refs.insert(ref_name.clone(), sha.clone());
                if fault == Some(Fault::ApplyThen502) {
                    return http(502, "Server Error");
                }
                Reply::Created { sha: sha.clone() }
            }
            Call::GetRef { ref_name } => match self.refs.get(ref_name) {
                Some(sha) => Reply::GitRef {
                    ref_name: ref_name.clone(),
                    sha: sha.clone(),
                    date: None,
                },
                None => http(404, "Not Found"),
            },
            other => panic!("slot allocation sent {}", other.name()),
        }
    }

    fn count(&self, name: &str) -> usize {
        self.requests.iter().filter(|r| *r == name).count()
    }
}

fn inputs(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    raw_inputs(
        &[
            ("repository", "octo/registry"),
            ("namespace", "accounts"),
            ("prefix", "acct"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "enrol"),
        ],
        extra,
    )
}

fn entropy() -> Entropy {
    common::entropy(7, "00112233445566778899aabbccddeeff")
}

/// Runs one allocation to its end (bounded), answering from `git`.
fn allocate(git: &mut Git, extra: &[(&str, &str)]) -> Outcome {
    let (mut op, plan) =
        Operation::new(OperationKind::SlotAllocate, &inputs(extra), &entropy()).expect("inputs");
    assert_eq!(plan.lock, "accounts/acct");
    let mut now = T0;
    let mut step = op.step(Event::Start { now }).unwrap();
    for _ in 0..2_000 {
        match step.command {
            Command::Finish { outcome } => return *outcome,
            Command::Sleep { until_ms, .. } => {
                assert!(until_ms >= now, "a sleep into the past");
                now = until_ms;
                step = op.step(Event::Timer { now }).unwrap();
            }
            Command::Request { call, .. } => {
                let reply = git.answer(&call);
                now += 10;
                step = op.step(Event::Reply { now, reply }).unwrap();
            }
        }
    }
    panic!("the allocation did not finish within 2,000 steps");
}

fn slot(o: &Outcome) -> &leasehold_core::SlotReport {
    o.slots.as_ref().expect("a slot report")
}

#[test]
fn allocates_one_past_the_highest_and_the_ref_points_at_its_own_record() {
    let mut git = Git::with_slots(&[1, 2]);
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Allocated);
    assert_eq!(s.number, Some(3));
    assert_eq!(s.name.as_deref(), Some("acct03"));
    assert_eq!(
        s.ref_name.as_deref(),
        Some("refs/leasehold/slots/accounts/acct03")
    );
    assert_eq!(
        git.refs.get("refs/leasehold/slots/accounts/acct03"),
        s.commit.as_ref()
    );
    assert_eq!(s.highest, Some(2));
    // One listing page, a tree, a commit and one create.
    assert_eq!(o.stats.requests, 4);
    let doc = result_document("slots allocate", &o);
    assert_eq!(doc["schema"], "leasehold-result/1");
    assert_eq!(doc["status"], "allocated");
    assert_eq!(doc["exitCode"], 0);
    assert_eq!(doc["slot"]["number"], 3);
    assert_eq!(doc["slot"]["ref"], "refs/leasehold/slots/accounts/acct03");
    assert!(doc["slot"].get("status").is_none());
}

#[test]
fn an_empty_namespace_starts_at_01() {
    let mut git = Git::with_slots(&[]);
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).name.as_deref(), Some("acct01"));
}

#[test]
fn a_number_taken_after_the_listing_moves_on_to_the_next() {
    let mut git = Git::with_slots(&[1, 2]);
    // Two others create 03 and 04 between our listing and our creates.
    git.race = vec![format!("{PREFIX_REF}03"), format!("{PREFIX_REF}04")];
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Allocated);
    assert_eq!(s.number, Some(5));
    assert_eq!(s.taken, vec![3, 4]);
    assert_eq!(git.count("createRef"), 3);
    // One record serves every number tried.
    assert_eq!(git.count("createCommit"), 1);
}

#[test]
fn a_paginated_listing_is_read_to_its_end() {
    let numbers: Vec<u64> = (1..=250).collect();
    let mut git = Git::with_slots(&numbers);
    git.page_size = Some(100);
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.highest, Some(250));
    assert_eq!(s.name.as_deref(), Some("acct251"));
    assert_eq!(git.count("listMatchingRefs"), 3);
    assert_eq!(git.count("createRef"), 1, "no number was found taken");
}

#[test]
fn a_next_page_that_cannot_be_followed_stops_before_any_write() {
    let numbers: Vec<u64> = (1..=150).collect();
    let mut git = Git::with_slots(&numbers);
    git.page_size = Some(100);
    git.opaque_next = true;
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Stale);
    assert_eq!(s.number, None);
    assert_eq!(git.count("createTree") + git.count("createRef"), 0);
}

/// A listing longer than leasehold reads (100 pages) is not read to its end: no number is proven
/// free, and retrying cannot help, so it is `stale` (16), not `transport`'s "retry later".
#[test]
fn a_listing_past_the_page_limit_is_stale_and_writes_nothing() {
    let numbers: Vec<u64> = (1..=1_010).collect();
    let mut git = Git::with_slots(&numbers);
    git.page_size = Some(10);
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Stale);
    assert_eq!(s.number, None);
    assert_eq!(git.count("listMatchingRefs"), 100);
    assert_eq!(git.count("createTree") + git.count("createRef"), 0);
}

#[test]
fn the_maximum_is_taken_over_gaps() {
    let mut git = Git::with_slots(&[1, 2, 5]);
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).name.as_deref(), Some("acct06"));
}

#[test]
fn a_slot_deleted_below_the_highest_is_never_reissued() {
    let mut git = Git::with_slots(&[1, 2, 3, 4, 5]);
    git.refs.remove(&format!("{PREFIX_REF}03"));
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).number, Some(6));
    assert!(!git.refs.contains_key(&format!("{PREFIX_REF}03")));
}

#[test]
fn a_lost_answer_to_a_create_that_landed_is_read_back_as_ours() {
    let mut git = Git::with_slots(&[1]);
    git.faults = vec![Fault::ApplyThen502];
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Allocated);
    assert!(s.read_back);
    assert_eq!(s.number, Some(2));
    assert_eq!(
        git.count("createRef"),
        1,
        "an unknown create is never re-sent"
    );
    assert_eq!(git.count("getRef"), 1);
}

#[test]
fn a_lost_answer_with_another_allocation_there_moves_on() {
    let mut git = Git::with_slots(&[1]);
    git.faults = vec![Fault::OtherThen502];
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Allocated);
    assert!(!s.read_back);
    assert_eq!(s.taken, vec![2]);
    assert_eq!(s.number, Some(3));
    assert_eq!(git.refs.get(&format!("{PREFIX_REF}03")), s.commit.as_ref());
    assert_ne!(git.refs.get(&format!("{PREFIX_REF}02")), s.commit.as_ref());
}

#[test]
fn a_lost_answer_with_no_ref_there_is_an_unknown_outcome() {
    let mut git = Git::with_slots(&[1]);
    git.faults = vec![Fault::Lose502];
    let o = allocate(&mut git, &[]);
    let s = slot(&o);
    assert_eq!(s.status, Status::UnknownOutcome);
    assert_eq!(s.status.exit_code(), 12);
    // The number whose create may still land, and the commit it would point at.
    assert_eq!(s.number, Some(2));
    assert!(s.commit.is_some());
    assert_eq!(git.count("createRef"), 1, "never re-sent");
    assert!(!o.success);
    assert_eq!(result_document("slots allocate", &o)["exitCode"], 12);
}

#[test]
fn other_create_failures_stop_by_the_exit_table() {
    let mut git = Git::with_slots(&[1]);
    git.faults = vec![Fault::NotSent];
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).status, Status::Transport);
    assert_eq!(slot(&o).number, None);
    assert_eq!(git.count("createRef"), 1, "a failed create is not retried");

    let mut git = Git::with_slots(&[1]);
    git.faults = vec![Fault::Forbidden];
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).status, Status::Permission);
    assert_eq!(slot(&o).status.exit_code(), 21);
}

#[test]
fn dry_run_lists_and_writes_nothing() {
    let mut git = Git::with_slots(&[1, 2, 5]);
    let before = git.refs.clone();
    let o = allocate(&mut git, &[("dry-run", "true")]);
    let s = slot(&o);
    assert_eq!(s.status, Status::Allocated);
    assert!(s.dry_run);
    assert_eq!(s.number, Some(6));
    assert_eq!(git.requests, vec!["listMatchingRefs"]);
    assert_eq!(git.refs, before);
}

#[test]
fn bad_inputs_are_refused_before_any_request() {
    let cases: &[(&str, &str)] = &[
        ("namespace", "a/b"),
        ("namespace", ".hidden"),
        ("namespace", "a..b"),
        ("namespace", &"n".repeat(101)),
        ("namespace", "ghp_abcdef"),
        ("prefix", "v1"),
        ("prefix", "a b"),
        ("prefix", "ghp_"),
        ("prefix", ""),
        ("repository", "not-a-repo"),
        ("dry-run", "maybe"),
    ];
    for (input, value) in cases {
        let err = Operation::new(
            OperationKind::SlotAllocate,
            &inputs(&[(input, value)]),
            &entropy(),
        )
        .err()
        .unwrap_or_else(|| panic!("{input}={value:?} was accepted"));
        assert_eq!(err.code(), "invalid-input", "{input}={value:?}");
        assert!(
            !err.to_string().contains("ghp_abcdef"),
            "the value is never echoed"
        );
    }
}

#[test]
fn numbers_taken_past_the_attempt_bound_stop_contended() {
    let mut git = Git::with_slots(&[1]);
    git.race = (2..=200).map(|n| format!("{PREFIX_REF}{n:02}")).collect();
    let o = allocate(&mut git, &[]);
    assert_eq!(slot(&o).status, Status::Contended);
    assert_eq!(
        git.count("createRef") as u32,
        leasehold_core::limits::SLOT_MAX_ATTEMPTS
    );
}
