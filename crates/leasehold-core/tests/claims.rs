//! Claims on git refs, end to end through `Operation::step` against GitHub as
//! `leasehold-github-model` has it (shared with the simulator: refs, trees, commits with
//! parents, and `updateRefs` with its compare-and-swap on `beforeOid`, fast-forward only, all
//! updates of a call or none), with faults injected on the mutation.

use std::collections::BTreeMap;

use leasehold_core::guard::{ChildExit, Finish, FinishReason};
use leasehold_core::guard_report::GuardReport;
use leasehold_core::{
    parse_payload, Call, ClaimState, Command, Entropy, Event, GraphqlError, Operation,
    OperationKind, Outcome, Reply, Status, PAYLOAD_FILE,
};
use leasehold_github_model::{GitHub, REPOSITORY_ID};
use serde_json::json;

const ZERO: &str = "0000000000000000000000000000000000000000";
const T0: u64 = 1_800_000_000_000;

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Apply the mutation, then answer 502 (GitHub's 10 s kill after the work was done).
    ApplyThen502,
    /// Answer 502 without applying.
    Lose502,
    /// Answer 200 with a RATE_LIMITED error, not applied.
    RateLimited,
    /// Answer 200 with FORBIDDEN.
    Forbidden,
    /// Answer 200 with no error and the mutation's payload null, not applied (GraphQL lets a
    /// nullable field come back null without an error).
    NullPayload,
    /// Answer 200 with a body that is no GraphQL answer (a REST-shaped message), not applied.
    NotGraphql,
    /// Answer 200 with an error in words the core does not place and `retry-after: 60`, not
    /// applied.
    LimitedRetryAfter,
    /// The same with `retry-after: 86400`: a day, past any ceiling on waits.
    LimitedRetryAfterDay,
    /// Answer 200 with an error and no `data` at all: a document refused before it ran.
    DocumentRefused,
}

/// The honest GitHub of `leasehold-github-model` (refs, trees, commits with parents, and the
/// GraphQL answers to the core's documents), with this test's faults on the mutation.
struct Git {
    gh: GitHub,
    mutations: u32,
    requests: u32,
    faults: Vec<Fault>,
    /// When each request was answered, and whether it was the mutation.
    answered_at: Vec<(u64, bool)>,
    /// GitHub's clock minus the runner's: GitHub answers (and dates) at local time + skew.
    skew: i64,
}

impl Default for Git {
    fn default() -> Self {
        Git {
            gh: GitHub::new("main"),
            mutations: 0,
            requests: 0,
            faults: Vec::new(),
            answered_at: Vec::new(),
            skew: 0,
        }
    }
}

impl Git {
    fn text_of(&self, commit: &str) -> Option<String> {
        self.gh.file_at(commit, PAYLOAD_FILE).map(String::from)
    }

    /// Every claim ref and the commit it points at.
    fn refs(&self) -> BTreeMap<String, String> {
        self.gh.ref_targets()
    }

    fn parents(&self, commit: &str) -> Vec<String> {
        self.gh.commit(commit).expect("a commit").parents.clone()
    }

    fn answer(&mut self, call: &Call, now: u64) -> Reply {
        self.requests += 1;
        let mutation =
            matches!(call, Call::Graphql { document, .. } if document.starts_with("mutation"));
        if let (true, Call::Graphql { variables, .. }) = (mutation, call) {
            self.mutations += 1;
            for u in variables["refUpdates"].as_array().unwrap() {
                assert_eq!(u["force"], false, "never forced");
                assert_ne!(u["afterOid"], ZERO, "never a zero afterOid");
            }
        }
        self.answered_at.push((now, mutation));
        let fault = if mutation && !self.faults.is_empty() {
            self.faults.remove(0)
        } else {
            Fault::None
        };
        let err = |kind: &str, message: &str| Reply::Graphql {
            data_absent: false,
            data: Some(json!({"updateRefs": null})),
            errors: vec![GraphqlError {
                kind: Some(kind.into()),
                message: message.into(),
            }],
            retry_after: None,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date: None,
        };
        match fault {
            Fault::Lose502 => return http(502),
            Fault::RateLimited => return err("RATE_LIMITED", "API rate limit exceeded"),
            Fault::Forbidden => return err("FORBIDDEN", "Resource not accessible by integration"),
            Fault::LimitedRetryAfter | Fault::LimitedRetryAfterDay => {
                return Reply::Graphql {
                    data_absent: false,
                    data: None,
                    errors: vec![GraphqlError {
                        kind: None,
                        message: "You have exceeded a secondary limit on content creation.".into(),
                    }],
                    retry_after: Some(
                        if fault == Fault::LimitedRetryAfter {
                            "60"
                        } else {
                            "86400"
                        }
                        .into(),
                    ),
                    ratelimit_remaining: None,
                    ratelimit_reset: None,
                    date: None,
                }
            }
            Fault::DocumentRefused => {
                return Reply::Graphql {
                    data_absent: true,
                    data: None,
                    errors: vec![GraphqlError {
                        kind: None,
                        message: "Field 'updateRefs' doesn't exist on type 'Mutation'".into(),
                    }],
                    retry_after: None,
                    ratelimit_remaining: None,
                    ratelimit_reset: None,
                    date: None,
                }
            }
            Fault::NullPayload | Fault::NotGraphql => {
                return Reply::Graphql {
                    data_absent: false,
                    data: (fault == Fault::NullPayload).then(|| json!({"updateRefs": null})),
                    errors: Vec::new(),
                    retry_after: None,
                    ratelimit_remaining: None,
                    ratelimit_reset: None,
                    date: None,
                }
            }
            _ => {}
        }
        let command = Command::Request {
            call: call.clone(),
            timeout_ms: 15_000,
        };
        let reply = self
            .gh
            .answer(&command, (now as i64 + self.skew) as u64)
            .reply;
        if fault == Fault::ApplyThen502 {
            return http(502);
        }
        reply
    }
}

fn http(status: u16) -> Reply {
    Reply::Http {
        status,
        message: "Bad Gateway".into(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    }
}

fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [("repository", "octo/app"), ("namespace", "deploy")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in pairs {
        m.insert(k.to_string(), v.to_string());
    }
    m
}

/// Runs one operation to its end at `now` (timers fire at once), returns the outcome.
fn run(
    git: &mut Git,
    kind: OperationKind,
    pairs: &[(&str, &str)],
    nonce: &str,
    now: u64,
) -> Outcome {
    run_on(git, kind, &inputs(pairs), nonce, now)
}

fn entropy(nonce: &str) -> Entropy {
    Entropy {
        seed: 7,
        nonce: nonce.into(),
    }
}

/// [`run`] on inputs given whole.
fn run_on(
    git: &mut Git,
    kind: OperationKind,
    inputs: &BTreeMap<String, String>,
    nonce: &str,
    now: u64,
) -> Outcome {
    let (mut op, _) = Operation::new(kind, inputs, &entropy(nonce)).expect("inputs");
    let mut step = op.step(Event::Start { now }).unwrap();
    let mut clock = now;
    for _ in 0..200 {
        match step.command {
            Command::Finish { outcome } => return *outcome,
            Command::Sleep { until_ms, .. } => {
                clock = clock.max(until_ms);
                step = op.step(Event::Timer { now: clock }).unwrap();
            }
            Command::Request { call, .. } => {
                let reply = git.answer(&call, clock);
                step = op.step(Event::Reply { now: clock, reply }).unwrap();
            }
        }
    }
    panic!("did not finish")
}

/// Claims `k` by run A at `T0` on a fresh GitHub whose mutations meet `faults` in turn.
fn claimed_under(faults: Vec<Fault>) -> (Git, Outcome) {
    let mut git = Git {
        faults,
        ..Git::default()
    };
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    (git, a)
}

fn status(o: &Outcome) -> Status {
    Status::of_outcome(o)
}

fn token(o: &Outcome) -> String {
    o.claims.as_ref().unwrap().items[0].token.clone().unwrap()
}

fn run_id(o: &Outcome) -> String {
    o.claims.as_ref().unwrap().run_id.clone()
}

const NONCE_A: &str = "aaaaaaaaaaaaaaaa";
const NONCE_B: &str = "bbbbbbbbbbbbbbbb";

#[test]
fn claim_acquires_in_four_requests_then_contends() {
    let mut git = Git::default();
    let a = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k1")],
        NONCE_A,
        T0,
    );
    assert_eq!(status(&a), Status::Acquired);
    assert_eq!(a.stats.requests, 4, "read, tree, commit, updateRefs");
    let b = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k1")],
        NONCE_B,
        T0 + 1000,
    );
    assert_eq!(status(&b), Status::Contended);
    assert_eq!(status(&b).exit_code(), 10);
    assert!(b.claims.as_ref().unwrap().items[0].eligible_at.is_some());
}

#[test]
fn an_expired_claim_is_taken_over_or_reported_expired() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let late = T0 + 3_600_000;
    let e = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k"), ("no-takeover", "true")],
        NONCE_B,
        late,
    );
    assert_eq!(status(&e), Status::Expired);
    assert_eq!(token(&e), token(&a), "names the oid a takeover needs");
    assert!(e.claims.as_ref().unwrap().next["takeover"].contains(&token(&a)));
    let t = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k")],
        NONCE_B,
        late,
    );
    assert_eq!(status(&t), Status::TakenOver);
    let p = t.claims.as_ref().unwrap().items[0].payload.clone().unwrap();
    assert_eq!(p.supersedes.as_deref(), Some(token(&a).as_str()));
    // The new commit's parent is the one it replaced: the ref's history is the token chain.
    assert_eq!(git.parents(&token(&t)), vec![token(&a)]);
}

#[test]
fn renew_rotates_the_token_without_a_read_and_clamps_to_the_ceiling() {
    let mut git = Git::default();
    let cfg = r#"{"lease": {"ttlSeconds": 600, "renewSeconds": 120, "maxTtlSeconds": 900, "minRemainingSeconds": 60, "graceSeconds": 60, "skewSeconds": 30}}"#;
    let a = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k"), ("config", cfg)],
        NONCE_A,
        T0,
    );
    let rid = run_id(&a);
    let r = a.claims.as_ref().unwrap();
    let prior = serde_json::to_string(r.items[0].payload.as_ref().unwrap()).unwrap();
    let base = |t: &str| {
        vec![
            ("key", "k".to_string()),
            ("token", t.to_string()),
            ("run-id", rid.clone()),
            ("config", cfg.to_string()),
        ]
    };
    let fast = |t: &str, p: &str| {
        let mut v = base(t);
        v.push(("repository-id", REPOSITORY_ID.into()));
        v.push(("prior", p.into()));
        v
    };
    let pairs = |v: &Vec<(&'static str, String)>| {
        v.iter().map(|(k, x)| (*k, x.clone())).collect::<Vec<_>>()
    };
    let as_ref = |v: &Vec<(&'static str, String)>| pairs(v);
    // Not due: nothing sent at all.
    let mut nd = fast(&token(&a), &prior);
    nd.push(("if-due", "true".into()));
    let nd = as_ref(&nd);
    let nd: Vec<(&str, &str)> = nd.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let o = run(&mut git, OperationKind::ClaimRenew, &nd, NONCE_B, T0 + 1000);
    assert_eq!(status(&o), Status::NotDue);
    assert_eq!(o.stats.requests, 0);
    // Due: three requests, a new token, a fast-forward.
    let f = as_ref(&fast(&token(&a), &prior));
    let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r1 = run(
        &mut git,
        OperationKind::ClaimRenew,
        &f,
        NONCE_B,
        T0 + 400_000,
    );
    assert_eq!(status(&r1), Status::Renewed);
    assert_eq!(r1.stats.requests, 3, "tree, commit, updateRefs");
    assert_ne!(token(&r1), token(&a));
    assert_eq!(git.parents(&token(&r1)), vec![token(&a)]);
    let l = r1.claims.as_ref().unwrap().items[0]
        .payload
        .as_ref()
        .unwrap()
        .lease
        .clone()
        .unwrap();
    assert_eq!(l.expires_at, T0 + 900_000, "clamped to the ceiling");
    // The old token is stale now (still ours), naming the current one.
    let b = as_ref(&base(&token(&a)));
    let b: Vec<(&str, &str)> = b.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = run(
        &mut git,
        OperationKind::ClaimRenew,
        &b,
        NONCE_B,
        T0 + 450_000,
    );
    assert_eq!(status(&s), Status::Stale);
    assert!(s.claims.as_ref().unwrap().detail.contains(&token(&r1)));
    // At the ceiling: stale, naming it.
    let c = as_ref(&base(&token(&r1)));
    let c: Vec<(&str, &str)> = c.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let at = run(
        &mut git,
        OperationKind::ClaimRenew,
        &c,
        NONCE_B,
        T0 + 500_000,
    );
    assert_eq!(status(&at), Status::Stale);
    assert!(at.claims.as_ref().unwrap().detail.contains("ceiling"));
    // verify inside the last minRemaining: renew-required.
    let v = run(
        &mut git,
        OperationKind::ClaimVerify,
        &c,
        NONCE_B,
        T0 + 850_000,
    );
    assert_eq!(status(&v), Status::RenewRequired);
    let v = run(
        &mut git,
        OperationKind::ClaimVerify,
        &c,
        NONCE_B,
        T0 + 500_000,
    );
    assert_eq!(status(&v), Status::Held);
}

fn kv(v: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    v.to_vec()
}

fn refs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, x)| (*k, x.as_str())).collect()
}

#[test]
fn release_is_idempotent_and_recognises_a_reacquire() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let rid = run_id(&a);
    let rel = kv(&[
        ("key", "k".into()),
        ("token", token(&a)),
        ("run-id", rid.clone()),
    ]);
    let r = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_B,
        T0 + 1000,
    );
    assert_eq!(status(&r), Status::Released);
    let head = git.refs()["refs/leasehold/claims/deploy/k"].clone();
    let p = parse_payload(&git.text_of(&head).unwrap(), "deploy", "k").unwrap();
    assert_eq!(
        p.state,
        ClaimState::Released,
        "a release writes a released commit"
    );
    let again = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_B,
        T0 + 2000,
    );
    assert_eq!(status(&again), Status::AlreadyReleased);
    assert_eq!(again.stats.writes, 0);
    // Another run acquires from the release; the late release is still already-released.
    let b = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k")],
        NONCE_B,
        T0 + 3000,
    );
    assert_eq!(status(&b), Status::Acquired);
    let late = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_B,
        T0 + 4000,
    );
    assert_eq!(status(&late), Status::AlreadyReleased);
    // A release by a run that does not hold it: not-held.
    let other = kv(&[
        ("key", "k".into()),
        ("token", token(&b)),
        ("run-id", "someone-else".into()),
    ]);
    assert_eq!(
        status(&run(
            &mut git,
            OperationKind::ClaimRelease,
            &refs(&other),
            NONCE_B,
            T0 + 5000
        )),
        Status::NotHeld
    );
    // Verify by the first run on its old token: lost to the other run.
    let v = run(
        &mut git,
        OperationKind::ClaimVerify,
        &refs(&rel),
        NONCE_B,
        T0 + 5000,
    );
    assert_eq!(status(&v), Status::Lost);
}

#[test]
fn a_mutation_answered_without_its_payload_is_read_back_not_taken_as_landed() {
    for fault in [Fault::NullPayload, Fault::NotGraphql] {
        let (mut git, a) = claimed_under(vec![fault]);
        assert_eq!(status(&a), Status::Acquired);
        assert_eq!(git.mutations, 2, "read back, found not applied, sent again");
        // Held only where the ref says so: another run cannot claim the key too.
        assert_eq!(
            git.refs().values().next(),
            Some(&token(&a)),
            "the ref is the token acquire reported"
        );
        let b = run(
            &mut git,
            OperationKind::Claim,
            &[("key", "k")],
            NONCE_B,
            T0 + 1_000,
        );
        assert_eq!(status(&b), Status::Contended);
    }
}

#[test]
fn a_mutation_answer_that_asks_for_a_wait_is_read_back_no_earlier() {
    let (git, a) = claimed_under(vec![Fault::LimitedRetryAfter]);
    assert_eq!(status(&a), Status::Acquired);
    let first = git.answered_at.iter().position(|(_, m)| *m).unwrap();
    let limited_at = git.answered_at[first].0;
    let next = git.answered_at[first + 1].0;
    assert!(
        next >= limited_at + 60_000,
        "the read-back waited for retry-after: {} ms",
        next - limited_at
    );
}

#[test]
fn an_unknown_outcome_is_read_back_never_resent() {
    // Applied, then 502: the read-back shows our commit; one mutation only.
    let (git, a) = claimed_under(vec![Fault::ApplyThen502]);
    assert_eq!(status(&a), Status::Acquired);
    assert_eq!(git.mutations, 1, "the mutation was not sent again");
    // Not applied, then 502: the read-back shows it absent; it plans again on that.
    let (git, a) = claimed_under(vec![Fault::Lose502]);
    assert_eq!(status(&a), Status::Acquired);
    assert_eq!(git.mutations, 2);
    // 502s past the budget: unknown outcome, with the adopt line; adopt proves it by run id.
    let mut git = Git {
        faults: vec![Fault::ApplyThen502; 1],
        ..Git::default()
    };
    git.faults.extend(vec![Fault::Lose502; 20]);
    let entropy = Entropy {
        seed: 7,
        nonce: NONCE_A.into(),
    };
    let (mut op, _) =
        Operation::new(OperationKind::Claim, &inputs(&[("key", "k")]), &entropy).unwrap();
    // Feed: read → tree → commit → updateRefs answered 502 after applying, then every later
    // read fails too (a transport that stopped answering).
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let mut clock = T0;
    let mut mutated = false;
    let outcome = loop {
        match step.command {
            Command::Finish { outcome } => break *outcome,
            Command::Sleep { until_ms, .. } => {
                clock = clock.max(until_ms);
                step = op.step(Event::Timer { now: clock }).unwrap();
            }
            Command::Request { call, .. } => {
                let reply = if mutated {
                    Reply::Transport {
                        sent: true,
                        message: "timeout".into(),
                    }
                } else {
                    git.answer(&call, clock)
                };
                if matches!(&call, Call::Graphql { document, .. } if document.starts_with("mutation"))
                {
                    mutated = true;
                }
                step = op.step(Event::Reply { now: clock, reply }).unwrap();
            }
        }
    };
    assert_eq!(status(&outcome), Status::UnknownOutcome);
    assert_eq!(status(&outcome).exit_code(), 12);
    let report = outcome.claims.as_ref().unwrap();
    assert!(
        report.next["adopt"].contains(&format!("--run-id {}", report.run_id)),
        "{:?}",
        report.next
    );
    // The candidate is the commit the lost write would have put there: here it landed.
    let candidate = report.items[0].candidate.clone().expect("a candidate");
    assert_eq!(git.refs()["refs/leasehold/claims/deploy/k"], candidate);
    assert!(
        report.next["adopt"].contains(&format!("--candidate {candidate}")),
        "{:?}",
        report.next
    );
    let rid = report.run_id.clone();
    let adopt = run(
        &mut git,
        OperationKind::ClaimAdopt,
        &[("key", "k"), ("run-id", &rid), ("candidate", &candidate)],
        NONCE_B,
        clock,
    );
    assert_eq!(status(&adopt), Status::Adopted);
    let not_ours = run(
        &mut git,
        OperationKind::ClaimAdopt,
        &[("key", "k"), ("run-id", "run-other")],
        NONCE_B,
        clock,
    );
    assert_eq!(status(&not_ours), Status::Lost);
}

#[test]
fn graphql_errors_are_classified_by_their_error() {
    let (git, a) = claimed_under(vec![Fault::Forbidden]);
    assert_eq!(status(&a), Status::Permission);
    assert_eq!(status(&a).exit_code(), 21);
    assert!(git.refs().is_empty());
    let (git, a) = claimed_under(vec![Fault::RateLimited]);
    assert_eq!(
        status(&a),
        Status::Acquired,
        "a rate-limited mutation waits and is sent again"
    );
    assert_eq!(git.mutations, 2);
}

#[test]
fn a_family_lands_whole_or_not_at_all() {
    let mut git = Git::default();
    let held = run(&mut git, OperationKind::Claim, &[("key", "c")], NONCE_B, T0);
    assert_eq!(status(&held), Status::Acquired);
    let before = git.refs();
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b,c,d,e")],
        NONCE_A,
        T0 + 1000,
    );
    assert_eq!(status(&f), Status::FamilyAborted);
    assert_eq!(git.refs(), before, "nothing of the family landed");
    assert_eq!(git.mutations, 1, "only the holder's own claim");
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b,d,e")],
        NONCE_A,
        T0 + 2000,
    );
    assert_eq!(status(&f), Status::Acquired);
    assert_eq!(git.mutations, 2, "one updateRefs for the whole family");
    assert_eq!(git.refs().len(), 5);
    let r = f.claims.as_ref().unwrap();
    let tokens: Vec<String> = r.items.iter().map(|i| i.token.clone().unwrap()).collect();
    let rel = kv(&[
        ("keys", "a,b,d,e".into()),
        ("tokens", tokens.join(",")),
        ("run-id", r.run_id.clone()),
    ]);
    let out = run(
        &mut git,
        OperationKind::ClaimFamilyRelease,
        &refs(&rel),
        NONCE_A,
        T0 + 3000,
    );
    assert_eq!(status(&out), Status::Released);
    assert_eq!(git.mutations, 3);
}

#[test]
fn dry_run_writes_nothing_and_predicts() {
    let mut git = Git::default();
    let a = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "k"), ("dry-run", "true")],
        NONCE_A,
        T0,
    );
    assert_eq!(status(&a), Status::Acquired);
    assert!(a.claims.as_ref().unwrap().dry_run);
    assert_eq!(git.mutations, 0);
    assert!(git.gh.tree_count() == 0);
}

/// `repository-id` and `prior` go together (the version a renew or release writes on needs
/// both); either alone is refused by name, never dropped.
#[test]
fn prior_and_repository_id_are_given_together_or_refused() {
    let base = [
        ("key", "k"),
        ("token", "0123456789abcdef0123456789abcdef01234567"),
        ("run-id", "run-1"),
    ];
    for (kind, extra, named, says) in [
        (
            OperationKind::ClaimRenew,
            ("repository-id", "R_1"),
            "repository-id",
            "needs prior beside it",
        ),
        (
            OperationKind::ClaimRelease,
            ("repository-id", "R_1"),
            "repository-id",
            "needs prior beside it",
        ),
        (
            OperationKind::ClaimRelease,
            ("prior", r#"{"state":"released"}"#),
            "prior",
            "",
        ),
        (
            OperationKind::ClaimRenew,
            ("clock-offset", "-20,40"),
            "clock-offset",
            "needs prior beside it",
        ),
        (
            OperationKind::ClaimRelease,
            ("clock-offset", "0,0"),
            "clock-offset",
            "needs prior beside it",
        ),
    ] {
        let mut pairs = base.to_vec();
        pairs.push(extra);
        let err = Operation::new(kind, &inputs(&pairs), &entropy(NONCE_A))
            .err()
            .expect("refused");
        let leasehold_core::Error::Input(e) = err else {
            panic!("{err:?}")
        };
        assert_eq!(e.input, named, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn inputs_are_refused_before_any_request() {
    let entropy = Entropy {
        seed: 7,
        nonce: NONCE_A.into(),
    };
    for (pairs, input) in [
        (vec![("key", "a/b")], "key"),
        (vec![("key", &"x".repeat(101)[..])], "key"),
        (vec![("key", "ghp_abcdef")], "key"),
        (
            vec![("key", "k"), ("run-id-prefix", "sk-ant-zzz")],
            "run-id-prefix",
        ),
        (vec![("key", "k"), ("set", "note=xoxb-1-2")], "set"),
        (vec![("key", "k"), ("run-id", "mine")], "run-id"),
    ] {
        let err = Operation::new(OperationKind::Claim, &inputs(&pairs), &entropy)
            .err()
            .expect("refused");
        let leasehold_core::Error::Input(e) = err else {
            panic!("{err:?}")
        };
        assert_eq!(e.input, input);
        assert!(
            !e.to_string().contains("ghp_abcdef") && !e.to_string().contains("xoxb-1-2"),
            "{e}"
        );
    }
    // An input another operation takes (actions/claim passes every input it was given) is
    // refused by name, not dropped.
    const OID: &str = "0123456789abcdef0123456789abcdef01234567";
    for (kind, pairs, input) in [
        (
            OperationKind::Claim,
            vec![("key", "k"), ("supersedes", OID)],
            "supersedes",
        ),
        (
            OperationKind::ClaimRenew,
            vec![
                ("key", "k"),
                ("token", OID),
                ("run-id", "run-1"),
                ("candidate", OID),
            ],
            "candidate",
        ),
        (
            OperationKind::ClaimRead,
            vec![("key", "k"), ("supersedes", OID)],
            "supersedes",
        ),
        (
            OperationKind::ClaimRelease,
            vec![
                ("key", "k"),
                ("token", OID),
                ("run-id", "run-1"),
                ("set", "sha=abc"),
            ],
            "set",
        ),
        (
            OperationKind::ClaimRead,
            vec![("key", "k"), ("token", OID)],
            "token",
        ),
        (
            OperationKind::ClaimRead,
            vec![("key", "k"), ("run-id", "run-1")],
            "run-id",
        ),
        (
            OperationKind::ClaimTakeover,
            vec![("key", "k"), ("supersedes", OID), ("no-takeover", "true")],
            "no-takeover",
        ),
        (
            OperationKind::ClaimRenew,
            vec![
                ("key", "k"),
                ("token", OID),
                ("run-id", "run-1"),
                ("run-id-prefix", "sweep"),
            ],
            "run-id-prefix",
        ),
        (
            OperationKind::ClaimVerify,
            vec![
                ("key", "k"),
                ("token", OID),
                ("run-id", "run-1"),
                ("repository-id", "R_1"),
            ],
            "repository-id",
        ),
    ] {
        let err = Operation::new(kind, &inputs(&pairs), &entropy)
            .err()
            .expect("refused");
        let leasehold_core::Error::Input(e) = err else {
            panic!("{err:?}")
        };
        assert_eq!(e.input, input, "{e}");
        assert!(e.to_string().contains(" only, not by "), "{e}");
    }
    let bad_config = r#"{"lease": {"ttlSeconds": 10}}"#;
    let err = Operation::new(
        OperationKind::Claim,
        &inputs(&[("key", "k"), ("config", bad_config)]),
        &entropy,
    )
    .err()
    .unwrap();
    assert!(matches!(err, leasehold_core::Error::Config(_)), "{err:?}");
    let cred_config = r#"{"namespaces": {"deploy": {"lease": {}}}, "lease": {}, "x": "ghp_abc"}"#;
    let err = Operation::new(
        OperationKind::Claim,
        &inputs(&[("key", "k"), ("config", cred_config)]),
        &entropy,
    )
    .err()
    .unwrap();
    assert!(
        matches!(err, leasehold_core::Error::Config(_)) && !err.to_string().contains("ghp_abc"),
        "{err}"
    );
}

#[test]
fn a_repeated_release_from_prior_is_already_released() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let prior = serde_json::to_string(
        a.claims.as_ref().unwrap().items[0]
            .payload
            .as_ref()
            .unwrap(),
    )
    .unwrap();
    let rel = kv(&[
        ("key", "k".into()),
        ("token", token(&a)),
        ("run-id", run_id(&a)),
        ("repository-id", REPOSITORY_ID.into()),
        ("prior", prior),
    ]);
    let first = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_B,
        T0 + 1000,
    );
    assert_eq!(status(&first), Status::Released);
    let head = git.refs()["refs/leasehold/claims/deploy/k"].clone();
    // The same command again (the same prior, planned without a read): the release is already
    // there, by this run; nothing more is written.
    let again = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_B,
        T0 + 2000,
    );
    assert_eq!(
        status(&again),
        Status::AlreadyReleased,
        "{:?}",
        again.claims
    );
    assert_eq!(git.refs()["refs/leasehold/claims/deploy/k"], head);
}

#[test]
fn a_family_renews_in_one_update_and_any_lost_member_decides() {
    let mut git = Git::default();
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b,c")],
        NONCE_A,
        T0,
    );
    assert_eq!(status(&f), Status::Acquired);
    let r = f.claims.as_ref().unwrap();
    let tokens = |o: &Outcome| -> Vec<String> {
        let r = o.claims.as_ref().unwrap();
        r.items.iter().map(|i| i.token.clone().unwrap()).collect()
    };
    let lease = f
        .lease
        .clone()
        .expect("a family held by this run has a lease");
    let renew = |t: &[String], due: bool| {
        let mut v = kv(&[
            ("keys", "a,b,c".into()),
            ("tokens", t.join(",")),
            ("run-id", r.run_id.clone()),
        ]);
        if due {
            v.push(("if-due", "true".into()));
        }
        v
    };
    let t0 = tokens(&f);
    // Not due yet: nothing written.
    let mutations = git.mutations;
    let early = run(
        &mut git,
        OperationKind::ClaimFamilyRenew,
        &refs(&renew(&t0, true)),
        NONCE_A,
        T0 + 1_000,
    );
    assert_eq!(status(&early), Status::NotDue);
    assert_eq!(git.mutations, mutations);
    // Due: every member renewed in one updateRefs, every token rotated, one lease for all.
    let at = lease.renew_at + 1_000;
    let renewed = run(
        &mut git,
        OperationKind::ClaimFamilyRenew,
        &refs(&renew(&t0, true)),
        NONCE_A,
        at,
    );
    assert_eq!(status(&renewed), Status::Renewed);
    assert_eq!(
        git.mutations,
        mutations + 1,
        "one updateRefs for the family"
    );
    let t1 = tokens(&renewed);
    assert!(
        t1.iter().zip(&t0).all(|(a, b)| a != b),
        "every token rotated"
    );
    let l1 = renewed.lease.clone().expect("the family's lease");
    assert!(l1.expires_at > lease.expires_at);
    // One member released behind the family's back (by this run, at its token): the family's
    // renewal is refused whole, and names the member.
    let rel = kv(&[
        ("key", "b".into()),
        ("token", t1[1].clone()),
        ("run-id", r.run_id.clone()),
    ]);
    let out = run(
        &mut git,
        OperationKind::ClaimRelease,
        &refs(&rel),
        NONCE_A,
        at + 1,
    );
    assert_eq!(status(&out), Status::Released);
    let before = git.refs();
    let gone = run(
        &mut git,
        OperationKind::ClaimFamilyRenew,
        &refs(&renew(&t1, false)),
        NONCE_A,
        at + 2,
    );
    assert_eq!(status(&gone), Status::NotHeld);
    assert!(gone.claims.as_ref().unwrap().detail.starts_with("b: "));
    assert!(gone.lease.is_none(), "no lease: the family is not all held");
    assert_eq!(git.refs(), before, "nothing of the family was written");
}

#[test]
fn a_stale_before_oid_is_classified_from_errors_not_the_status() {
    // A claim planned on an absent ref; another run claims the key before its updateRefs
    // arrives: GitHub answers 200 with a STALE_DATA error, which is a conflict (re-read and
    // plan again: contended), never a success because the status was 200.
    let mut git = Git::default();
    let entropy = Entropy {
        seed: 7,
        nonce: NONCE_A.into(),
    };
    let (mut op, _) =
        Operation::new(OperationKind::Claim, &inputs(&[("key", "k")]), &entropy).unwrap();
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let mut raced = false;
    let mut stale_answers = 0;
    let outcome = loop {
        match step.command {
            Command::Finish { outcome } => break *outcome,
            Command::Sleep { until_ms, .. } => {
                step = op.step(Event::Timer { now: until_ms }).unwrap();
            }
            Command::Request { call, .. } => {
                let mutation = matches!(&call, Call::Graphql { document, .. } if document.starts_with("mutation"));
                if mutation && !raced {
                    raced = true;
                    let other = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_B, T0);
                    assert_eq!(status(&other), Status::Acquired);
                }
                let reply = git.answer(&call, T0 + 10);
                if let Reply::Graphql { errors, .. } = &reply {
                    if errors
                        .iter()
                        .any(|e| e.kind.as_deref() == Some("STALE_DATA"))
                    {
                        stale_answers += 1;
                    }
                }
                step = op
                    .step(Event::Reply {
                        now: T0 + 10,
                        reply,
                    })
                    .unwrap();
            }
        }
    };
    assert_eq!(
        stale_answers, 1,
        "GitHub's answer was a 200 with STALE_DATA"
    );
    // A conflict, not an unknown outcome read back (both end contended here).
    assert_eq!(outcome.stats.conflicts, 1, "{:?}", outcome.stats);
    assert_eq!(status(&outcome), Status::Contended);
    assert_eq!(status(&outcome).exit_code(), 10);
    let history = git.refs();
    assert_eq!(history.len(), 1);
    let head = history.values().next().unwrap();
    let payload = parse_payload(&git.text_of(head).unwrap(), "deploy", "k").unwrap();
    assert_eq!(payload.state, ClaimState::Held);
    assert!(
        payload.run_id.ends_with(NONCE_B),
        "the other run's claim stands"
    );
}

/// The guard of the claim `a` holds (its token and run id), renewing as run B.
fn claim_guard(a: &Outcome) -> GuardReport {
    GuardReport::new(
        OperationKind::ClaimRenew,
        inputs(&[("key", "k"), ("token", &token(a)), ("run-id", &run_id(a))]),
        &entropy(NONCE_B),
    )
    .expect("the inputs of a claim's renewal")
}

/// One renewal of `guard` at `now`, from its inputs as they are then.
fn renewal(git: &mut Git, guard: &GuardReport, now: u64) -> Outcome {
    run_on(git, guard.kind(), &guard.inputs().clone(), NONCE_B, now)
}

/// The guard's end as the machine reports it.
fn finish(reason: FinishReason, child: Option<ChildExit>) -> Finish {
    Finish {
        exit_code: if reason == FinishReason::ChildExited {
            0
        } else {
            12
        },
        reason,
        child,
        renewals: 1,
    }
}

#[test]
fn a_claims_guard_renews_from_the_token_its_last_renewal_wrote() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let mut guard = claim_guard(&a);
    // The verification, then a renewal: each from the inputs as the last renewal left them.
    let verified = renewal(&mut git, &guard, T0 + 1_000);
    assert_eq!(status(&verified), Status::Renewed);
    guard.heard(true, &verified);
    assert_eq!(guard.inputs()["token"], token(&verified));
    assert_eq!(guard.inputs()["repository-id"], REPOSITORY_ID);
    let renewed = renewal(&mut git, &guard, T0 + 400_000);
    assert_eq!(
        status(&renewed),
        Status::Renewed,
        "not stale: the token rotated"
    );
    assert_eq!(
        renewed.stats.requests, 3,
        "no read: the payload came with the inputs"
    );
    guard.heard(false, &renewed);
    let current = token(&renewed);
    // A renewal that proves nothing leaves the token where it is.
    let stale = run_on(
        &mut git,
        guard.kind(),
        &inputs(&[("key", "k"), ("token", &token(&a)), ("run-id", &run_id(&a))]),
        NONCE_B,
        T0 + 410_000,
    );
    assert_eq!(status(&stale), Status::Stale);
    guard.heard(false, &stale);
    assert_eq!(guard.inputs()["token"], current);

    let lease = renewed.lease.clone().expect("a renewed claim's lease");
    let argv = vec!["make".to_string(), "deploy".to_string()];
    let start = guard.start_document(Some(4242), &argv, &lease);
    assert_eq!(start["event"], "guard-start");
    assert_eq!(start["command"], "claims guard");
    assert_eq!(start["status"], "held");
    assert_eq!(start["token"], current.as_str());
    assert_eq!(start["pid"], 4242);
    assert_eq!(start["argv"], json!(["make", "deploy"]));
    assert_eq!(start["claim"]["items"][0]["token"], current.as_str());

    // The command ended by itself: what to run next carries the current token.
    let exit = guard.finish_document(&finish(
        FinishReason::ChildExited,
        Some(ChildExit::Exited { code: 0 }),
    ));
    assert_eq!(
        (&exit["event"], &exit["status"], &exit["childExitCode"]),
        (&json!("guard-exit"), &json!("child-exited"), &json!(0))
    );
    assert!(exit["next"]["release"].as_str().unwrap().contains(&current));
    // Stopped (lost, or the local deadline): no next, and the status says lost.
    for reason in [FinishReason::Lost, FinishReason::Deadline] {
        let stopped = guard.finish_document(&finish(
            reason,
            Some(ChildExit::Signalled {
                signal: "SIGTERM".into(),
                number: 15,
            }),
        ));
        assert_eq!(stopped["status"], "lost");
        assert_eq!(stopped["reason"], reason.as_str());
        assert_eq!(stopped["childSignal"], "SIGTERM");
        assert_eq!(stopped["next"], json!({}));
    }
}

#[test]
fn a_claims_guard_refused_by_its_verification_says_why_and_runs_nothing() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    run(
        &mut git,
        OperationKind::ClaimRelease,
        &[("key", "k"), ("token", &token(&a)), ("run-id", &run_id(&a))],
        NONCE_A,
        T0 + 500,
    );
    let mut guard = claim_guard(&a);
    let verified = renewal(&mut git, &guard, T0 + 1_000);
    assert_ne!(status(&verified), Status::Renewed);
    guard.heard(true, &verified);
    let refused = guard.finish_document(&finish(FinishReason::NotHeld, None));
    assert_eq!(refused["event"], "guard-refused");
    assert_eq!(refused["status"], "not-held");
    assert_eq!(refused["verification"]["command"], "claims renew");
    assert_eq!(
        refused["verification"]["status"],
        status(&verified).as_str()
    );
    assert_eq!(refused["error"], refused["verification"]["error"]);
    assert!(
        refused.get("childExitCode").is_none(),
        "the command never ran"
    );
}

#[test]
fn a_family_guard_rotates_every_members_token() {
    let mut git = Git::default();
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b")],
        NONCE_A,
        T0,
    );
    let tokens = |o: &Outcome| -> Vec<String> {
        let r = o.claims.as_ref().unwrap();
        r.items.iter().map(|i| i.token.clone().unwrap()).collect()
    };
    let mut guard = GuardReport::new(
        OperationKind::ClaimFamilyRenew,
        inputs(&[
            ("keys", "a,b"),
            ("tokens", &tokens(&f).join(",")),
            ("run-id", &run_id(&f)),
        ]),
        &entropy(NONCE_B),
    )
    .unwrap();
    for (i, at) in [T0 + 1_000, T0 + 400_000].into_iter().enumerate() {
        let o = renewal(&mut git, &guard, at);
        assert_eq!(status(&o), Status::Renewed, "renewal {i}");
        guard.heard(i == 0, &o);
        assert_eq!(guard.inputs()["tokens"], tokens(&o).join(","));
    }
    let lease = f.lease.clone().unwrap();
    let start = guard.start_document(None, &["true".into()], &lease);
    assert_eq!(
        start["tokens"],
        json!(guard.inputs()["tokens"].split(',').collect::<Vec<_>>())
    );
    assert!(start.get("token").is_none());
}

#[test]
fn a_guard_renews_only_with_a_renewal() {
    for kind in [OperationKind::Claim, OperationKind::ClaimRelease] {
        let e = GuardReport::new(
            kind,
            inputs(&[("key", "k"), ("token", ZERO), ("run-id", "r")]),
            &entropy(NONCE_A),
        )
        .unwrap_err();
        assert!(e.to_string().contains("kind"), "{e}");
    }
}

#[test]
fn a_claims_guard_takes_one_claims_inputs_or_a_familys_never_both() {
    for (kind, extra, named) in [
        (OperationKind::ClaimRenew, ("keys", "a,b"), "keys"),
        (OperationKind::ClaimRenew, ("tokens", ZERO), "tokens"),
        (OperationKind::ClaimFamilyRenew, ("key", "a"), "key"),
        (OperationKind::ClaimFamilyRenew, ("prior", "{}"), "prior"),
        (
            OperationKind::ClaimFamilyRenew,
            ("repository-id", "R_1"),
            "repository-id",
        ),
    ] {
        let mut given = inputs(&[("run-id", "r1")]);
        if kind == OperationKind::ClaimRenew {
            given.extend([("key".into(), "a".into()), ("token".into(), "1".repeat(40))]);
        } else {
            given.extend([
                ("keys".into(), "a,b".into()),
                (
                    "tokens".into(),
                    format!("{},{}", "1".repeat(40), "2".repeat(40)),
                ),
            ]);
        }
        given.insert(extra.0.into(), extra.1.into());
        let e = GuardReport::new(kind, given, &entropy(NONCE_A)).unwrap_err();
        match e {
            leasehold_core::Error::Input(i) => assert_eq!(i.input, named),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn a_list_refused_401_past_the_tokens_grace_is_a_refusal_that_says_so() {
    let (mut op, _) =
        Operation::new(OperationKind::ClaimList, &inputs(&[]), &entropy(NONCE_A)).unwrap();
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let mut now = T0;
    let mut asked = 0;
    let outcome = loop {
        match step.command {
            Command::Request { .. } => {
                asked += 1;
                let reply = Reply::Http {
                    status: 401,
                    message: "Bad credentials".into(),
                    retry_after: None,
                    ratelimit_remaining: None,
                    ratelimit_reset: None,
                    date: None,
                };
                now += 100;
                step = op.step(Event::Reply { now, reply }).unwrap();
            }
            Command::Sleep { until_ms, .. } => {
                now = now.max(until_ms);
                step = op.step(Event::Timer { now }).unwrap();
            }
            Command::Finish { outcome } => break *outcome,
        }
    };
    assert!(asked > 1, "a 401 just after a token was minted is retried");
    assert_eq!(status(&outcome), Status::Permission, "{:?}", outcome.error);
    let e = outcome.error.unwrap();
    assert_eq!(e.status, Some(401));
    assert!(e.message.contains("Bad credentials"), "{}", e.message);
}

#[test]
fn a_claim_takes_no_holder_suffix_it_would_record_nowhere() {
    let e = Operation::new(
        OperationKind::Claim,
        &inputs(&[("key", "k"), ("holder-suffix", "cell-a")]),
        &entropy(NONCE_A),
    )
    .err()
    .expect("refused");
    match e {
        leasehold_core::Error::Input(i) => assert_eq!(i.input, "holder-suffix"),
        other => panic!("{other}"),
    }
}

#[test]
fn a_mutation_refused_before_it_ran_is_a_refusal_not_an_unknown_outcome() {
    let (git, a) = claimed_under(vec![Fault::DocumentRefused; 10]);
    assert_eq!(git.mutations, 1, "not rebuilt and sent again");
    assert_ne!(status(&a), Status::UnknownOutcome);
    let e = a.error.expect("an error");
    assert!(
        e.message.contains("doesn't exist"),
        "GitHub's words: {}",
        e.message
    );
    assert!(
        !a.claims.unwrap().next.contains_key("adopt"),
        "nothing to adopt"
    );
}

#[test]
fn a_mutation_answer_that_asks_for_a_wait_past_the_ceiling_is_given_up_on_not_slept() {
    let (git, a) = claimed_under(vec![Fault::LimitedRetryAfterDay]);
    assert_eq!(
        status(&a),
        Status::UnknownOutcome,
        "the write may have landed: adopt"
    );
    let last = git.answered_at.last().unwrap().0;
    assert!(last < T0 + 3_600_000, "no request a day later");
    assert_eq!(
        git.requests, 4,
        "read, tree, commit, the mutation: nothing after"
    );
}

/// A renewal planned on `prior` sends no read before it writes: without GitHub's clock it would
/// stamp the runner's. The `clock-offset` its `next` line carries (and the guard passes on)
/// stamps GitHub's time, whichever way the runner's clock is off.
#[test]
fn a_renewal_planned_on_prior_stamps_github_time_from_the_carried_clock() {
    const HOUR: i64 = 3_600_000;
    for skew in [-2 * HOUR, 10 * 60_000] {
        let mut git = Git {
            skew,
            ..Git::default()
        };
        let github = |local: u64| (local as i64 + skew) as u64;
        let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
        let r = a.claims.as_ref().unwrap();
        let clock = r.clock.expect("the claim measured GitHub's clock");
        assert!(
            clock.low_ms <= skew && skew <= clock.high_ms,
            "{clock:?} around {skew}"
        );
        let renew = &r.next["renew"];
        assert!(
            renew.contains(&format!("--clock-offset={}", clock.input()))
                || renew.contains(&format!("--clock-offset {}", clock.input())),
            "{renew}"
        );
        // The guard's renewals: the verification reads, every later one plans on prior.
        let mut guard = claim_guard(&a);
        let local = T0 + 1_000;
        let verified = renewal(&mut git, &guard, local);
        assert_eq!(status(&verified), Status::Renewed);
        guard.heard(true, &verified);
        assert_eq!(
            guard.inputs()["clock-offset"],
            verified.claims.as_ref().unwrap().clock.unwrap().input()
        );
        let local = T0 + 300_000;
        let renewed = renewal(&mut git, &guard, local);
        assert_eq!(status(&renewed), Status::Renewed);
        assert_eq!(renewed.stats.requests, 3, "planned on prior: no read");
        let lease = renewed.claims.as_ref().unwrap().items[0]
            .payload
            .as_ref()
            .unwrap()
            .lease
            .clone()
            .unwrap();
        // GitHub's now, to the `date` header's second.
        let want = github(local) + 15 * 60_000;
        assert!(
            lease.expires_at <= want && lease.expires_at + 1_000 >= want,
            "skew {skew}: expires at {} (want about {want}, the runner's clock would say {})",
            lease.expires_at,
            local + 15 * 60_000
        );
        // And the next renewal is due in the future, on the runner's clock.
        let view = renewed.lease.clone().expect("a renewed claim's lease");
        assert!(
            view.renew_at > local,
            "skew {skew}: renew at {} not after {local}",
            view.renew_at
        );
    }
    // Refused where it has no meaning (a verb that always reads first), and when malformed.
    for (kind, value) in [
        (OperationKind::ClaimVerify, "1,2"),
        (OperationKind::ClaimRenew, "2,1"),
        (OperationKind::ClaimRenew, "-5"),
        (OperationKind::ClaimRenew, "1,999999999999"),
    ] {
        let refused = Operation::new(
            kind,
            &inputs(&[
                ("key", "k"),
                ("token", &"a".repeat(40)),
                ("run-id", "run-x"),
                ("clock-offset", value),
            ]),
            &entropy(NONCE_B),
        );
        assert!(
            matches!(&refused, Err(e) if e.to_string().contains("clock-offset")),
            "{kind:?} {value}"
        );
    }
}

/// A renewal whose report names no repository id leaves the guard no version to plan its next
/// renewal on: it drops `prior` and `repository-id`, and the clock offset with them (alone it is
/// refused), so the next renewal reads first and is not refused.
#[test]
fn a_guard_left_without_prior_drops_the_clock_offset_too() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let mut guard = claim_guard(&a);
    let verified = renewal(&mut git, &guard, T0 + 1_000);
    assert_eq!(status(&verified), Status::Renewed);
    guard.heard(true, &verified);
    assert!(guard.inputs().contains_key("clock-offset"));
    let mut unnamed = renewal(&mut git, &guard, T0 + 300_000);
    assert_eq!(status(&unnamed), Status::Renewed);
    let report = unnamed.claims.as_mut().unwrap();
    assert!(report.clock.is_some());
    report.repository_id = None;
    guard.heard(true, &unnamed);
    for input in ["prior", "repository-id", "clock-offset"] {
        assert!(!guard.inputs().contains_key(input), "{input} kept");
    }
    let next = renewal(&mut git, &guard, T0 + 600_000);
    assert_eq!(status(&next), Status::Renewed, "{next:?}");
}

/// A family release with one member taken over by another run releases the members still this
/// run's (one `updateRefs`), leaves the taken one alone, and says `not-held` for the family:
/// holding the rest back would only keep them from the next claimer until their leases ran out.
#[test]
fn a_family_release_frees_what_is_still_ours_and_names_what_is_not() {
    let mut git = Git::default();
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b")],
        NONCE_A,
        T0,
    );
    assert_eq!(status(&f), Status::Acquired);
    let r = f.claims.as_ref().unwrap();
    let tokens: Vec<String> = r.items.iter().map(|i| i.token.clone().unwrap()).collect();
    // b runs out and run B takes it over (past expiry, grace and skew).
    let b = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "b")],
        NONCE_B,
        T0 + 3_600_000,
    );
    assert_eq!(status(&b), Status::TakenOver);
    let b_head = git.refs()["refs/leasehold/claims/deploy/b"].clone();
    let mutations = git.mutations;
    let rel = kv(&[
        ("keys", "a,b".into()),
        ("tokens", tokens.join(",")),
        ("run-id", r.run_id.clone()),
    ]);
    let out = run(
        &mut git,
        OperationKind::ClaimFamilyRelease,
        &refs(&rel),
        NONCE_A,
        T0 + 3_601_000,
    );
    assert_eq!(status(&out), Status::NotHeld);
    assert_eq!(git.mutations, mutations + 1, "one updateRefs, of a alone");
    let report = out.claims.as_ref().unwrap();
    let per: Vec<(String, Option<Status>)> = report
        .items
        .iter()
        .map(|i| (i.key.clone(), i.status))
        .collect();
    assert_eq!(
        per,
        vec![
            ("a".to_string(), Some(Status::Released)),
            ("b".to_string(), Some(Status::NotHeld))
        ]
    );
    assert!(report.detail.contains("released (a)"), "{}", report.detail);
    let a_now = git.refs()["refs/leasehold/claims/deploy/a"].clone();
    let a_payload = parse_payload(&git.text_of(&a_now).unwrap(), "deploy", "a").unwrap();
    assert_eq!(a_payload.state, ClaimState::Released);
    assert_eq!(
        git.refs()["refs/leasehold/claims/deploy/b"],
        b_head,
        "B's holding untouched"
    );
    // A repeat: a is already released, b still not this run's; nothing written.
    let again = run(
        &mut git,
        OperationKind::ClaimFamilyRelease,
        &refs(&rel),
        NONCE_A,
        T0 + 3_602_000,
    );
    assert_eq!(status(&again), Status::NotHeld);
    assert_eq!(git.mutations, mutations + 1);
}

/// A family release with a member renewed since (stale) listed before one taken over
/// (not-held): the member another run holds decides the family's status, as in a family renewal,
/// whatever the order of the keys; the member still this run's at its token is released.
#[test]
fn a_family_release_ranks_a_taken_member_over_a_stale_one() {
    let mut git = Git::default();
    let f = run(
        &mut git,
        OperationKind::ClaimFamilyClaim,
        &[("keys", "a,b,c")],
        NONCE_A,
        T0,
    );
    let r = f.claims.as_ref().unwrap();
    let tokens: Vec<String> = r.items.iter().map(|i| i.token.clone().unwrap()).collect();
    let renewed = run(
        &mut git,
        OperationKind::ClaimRenew,
        &refs(&kv(&[
            ("key", "a".into()),
            ("token", tokens[0].clone()),
            ("run-id", r.run_id.clone()),
        ])),
        NONCE_A,
        T0 + 1_000,
    );
    assert_eq!(status(&renewed), Status::Renewed);
    // The family's lease runs out; b alone is taken over by run B (a's renewal keeps it live).
    let b = run(
        &mut git,
        OperationKind::Claim,
        &[("key", "b")],
        NONCE_B,
        T0 + 1_200_000,
    );
    assert_eq!(status(&b), Status::TakenOver);
    let out = run(
        &mut git,
        OperationKind::ClaimFamilyRelease,
        &refs(&kv(&[
            ("keys", "a,b,c".into()),
            ("tokens", tokens.join(",")),
            ("run-id", r.run_id.clone()),
        ])),
        NONCE_A,
        T0 + 1_201_000,
    );
    let per: Vec<Option<Status>> = out
        .claims
        .as_ref()
        .unwrap()
        .items
        .iter()
        .map(|i| i.status)
        .collect();
    assert_eq!(
        per,
        vec![
            Some(Status::Stale),
            Some(Status::NotHeld),
            Some(Status::Released)
        ]
    );
    assert_eq!(status(&out), Status::NotHeld, "the taken member decides");
}

/// In a repository with no commit GitHub creates no git object and answers 409: the claim ends
/// `permission`, saying what the repository needs, having written nothing.
#[test]
fn a_claim_in_an_empty_repository_says_it_needs_a_first_commit() {
    let mut git = Git::default();
    let (mut op, _) = Operation::new(
        OperationKind::Claim,
        &inputs(&[("key", "k")]),
        &entropy(NONCE_A),
    )
    .unwrap();
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let outcome = loop {
        match step.command {
            Command::Finish { outcome } => break *outcome,
            Command::Sleep { until_ms, .. } => {
                step = op.step(Event::Timer { now: until_ms }).unwrap();
            }
            Command::Request { call, .. } => {
                let reply = match call {
                    Call::CreateTree { .. } | Call::CreateCommit { .. } => Reply::Http {
                        status: 409,
                        message: "Git Repository is empty.".into(),
                        retry_after: None,
                        ratelimit_remaining: None,
                        ratelimit_reset: None,
                        date: None,
                    },
                    _ => git.answer(&call, T0),
                };
                step = op.step(Event::Reply { now: T0, reply }).unwrap();
            }
        }
    };
    assert_eq!(status(&outcome), Status::Permission);
    let message = outcome.error.expect("a failure").message;
    assert!(message.contains("needs a first commit"), "{message}");
    assert_eq!(git.mutations, 0);
}

/// A takeover names the version it supersedes: when the ref moved on (released, renewed, taken by
/// someone else) it takes nothing and says where the ref is, not "held by another run".
#[test]
fn a_takeover_of_a_ref_that_moved_says_where_it_is() {
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let released = run(
        &mut git,
        OperationKind::ClaimRelease,
        &[("key", "k"), ("token", &token(&a)), ("run-id", &run_id(&a))],
        NONCE_A,
        T0 + 1_000,
    );
    assert_eq!(status(&released), Status::Released);
    let head = git.refs()["refs/leasehold/claims/deploy/k"].clone();
    let mutations = git.mutations;
    let t = run(
        &mut git,
        OperationKind::ClaimTakeover,
        &[("key", "k"), ("supersedes", &token(&a))],
        NONCE_B,
        T0 + 3_600_000,
    );
    assert_eq!(status(&t), Status::Contended);
    assert_eq!(git.mutations, mutations, "nothing written");
    let detail = &t.claims.as_ref().unwrap().detail;
    assert!(
        detail.contains(&format!("is at {head}, released")) && detail.contains("run claim"),
        "{detail}"
    );
}

/// Runs a claim operation whose job is cancelled with the answer to its `at`-th request (0: the
/// first): every later answer is an ordinary one.
fn claim_cancelled_at(
    git: &mut Git,
    kind: OperationKind,
    pairs: &[(&str, &str)],
    at: usize,
) -> Outcome {
    let (mut op, _) = Operation::new(kind, &inputs(pairs), &entropy(NONCE_A)).unwrap();
    let mut step = op.step(Event::Start { now: T0 }).unwrap();
    let mut n = 0;
    loop {
        match step.command {
            Command::Finish { outcome } => return *outcome,
            Command::Sleep { until_ms, .. } => {
                step = op.step(Event::Timer { now: until_ms }).unwrap();
            }
            Command::Request { call, .. } => {
                let reply = git.answer(&call, T0);
                step = if n == at {
                    op.step(Event::CancelledReply { now: T0, reply }).unwrap()
                } else {
                    op.step(Event::Reply { now: T0, reply }).unwrap()
                };
                n += 1;
            }
        }
    }
}

/// A job cancelled before a claim's write sends no write (`cancelled`, 10); one cancelled with
/// the write's answer reports what landed, with its token, so the release step can give it back.
#[test]
fn a_cancelled_claim_writes_nothing_new_and_reports_what_landed() {
    let mut git = Git::default();
    let c = claim_cancelled_at(&mut git, OperationKind::Claim, &[("key", "k")], 0);
    assert_eq!(status(&c), Status::Cancelled);
    assert_eq!(status(&c).exit_code(), 10);
    assert_eq!(git.mutations, 0, "nothing written");
    assert!(git.refs().is_empty());
    // Cancelled with the mutation's answer (read, tree, commit, updateRefs: the fourth).
    let mut git = Git::default();
    let c = claim_cancelled_at(&mut git, OperationKind::Claim, &[("key", "k")], 3);
    assert_eq!(status(&c), Status::Acquired);
    assert_eq!(git.refs()["refs/leasehold/claims/deploy/k"], token(&c));
    // A release is what gives the item back: a cancel does not stop it.
    let rel = claim_cancelled_at(
        &mut git,
        OperationKind::ClaimRelease,
        &[("key", "k"), ("token", &token(&c)), ("run-id", &run_id(&c))],
        0,
    );
    assert_eq!(status(&rel), Status::Released);
    // A renewal cancelled before its write leaves the lease as it was.
    let mut git = Git::default();
    let a = run(&mut git, OperationKind::Claim, &[("key", "k")], NONCE_A, T0);
    let head = git.refs()["refs/leasehold/claims/deploy/k"].clone();
    let r = claim_cancelled_at(
        &mut git,
        OperationKind::ClaimRenew,
        &[("key", "k"), ("token", &token(&a)), ("run-id", &run_id(&a))],
        0,
    );
    assert_eq!(status(&r), Status::Cancelled);
    assert_eq!(git.refs()["refs/leasehold/claims/deploy/k"], head);
}
