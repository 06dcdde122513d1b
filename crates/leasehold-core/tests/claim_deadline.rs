//! A claim's own deadline as verify and adopt judge it (`ops/claims/inspect.rs`): on this
//! machine's clock, by the upper bound of GitHub's, as the lease view the same answer carries.
use std::collections::BTreeMap;

use leasehold_core::{Command, Entropy, Event, Operation, OperationKind, Reply, Status};

const NOW: u64 = 1_800_000_000_000; // 2027-01-15T08:00:00Z
const OID: &str = "1111111111111111111111111111111111111111";

fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn claim_payload(run_id: &str, expires: &str, renew_after: &str) -> String {
    format!(
        r#"{{"schema":1,"kind":"leasehold-claim","namespace":"deploy","key":"k","state":"held","seq":1,"runId":"{run_id}","lease":{{"claimedAt":"2027-01-15T07:50:00.000Z","expiresAt":"{expires}","renewAfter":"{renew_after}","ceilingAt":"2027-01-15T14:20:00.000Z","renewCount":0}},"action":"acquire","at":"2027-01-15T07:50:00.000Z"}}
"#
    )
}

fn ref_read(oid: &str, text: &str, date: &str) -> Reply {
    Reply::Graphql {
        data_absent: false,
        data: Some(serde_json::json!({"repository": {"id": "R_1", "r0": {
            "prefix": "refs/leasehold/claims/deploy/", "name": "k",
            "target": {"oid": oid, "file": {"object": {"text": text}}}}}})),
        errors: vec![],
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: Some(date.into()),
    }
}

/// Runs `kind` on the one claim `text`, its read sent at `sent` and answered (dated
/// 08:00:00 GMT) at `read_at`, both on this machine's clock.
fn judge(
    kind: OperationKind,
    extra: &[(&str, &str)],
    text: &str,
    sent: u64,
    read_at: u64,
) -> (Status, leasehold_core::Outcome) {
    let mut raw = inputs(&[
        ("repository", "octo/app"),
        ("namespace", "deploy"),
        ("key", "k"),
        ("run-id", "run-x"),
    ]);
    raw.extend(inputs(extra));
    let entropy = Entropy {
        seed: 1,
        nonce: "aaaaaaaaaaaaaaaa".into(),
    };
    let (mut op, _) = Operation::new(kind, &raw, &entropy).unwrap();
    let step = op.step(Event::Start { now: sent }).unwrap();
    assert!(matches!(step.command, Command::Request { .. }));
    let reply = ref_read(OID, text, "Fri, 15 Jan 2027 08:00:00 GMT");
    let step = op
        .step(Event::Reply {
            now: read_at,
            reply,
        })
        .unwrap();
    let Command::Finish { outcome } = step.command else {
        panic!("{:?}", step.command)
    };
    (Status::of_outcome(&outcome), *outcome)
}

/// A read answered late (sent ten minutes before GitHub dated it, read ten minutes after): GitHub's
/// clock may be twenty minutes on when the answer is acted on, past this run's deadline
/// (expiry 08:02:10 less the default two minutes). Verify must not say `held` then.
#[test]
fn verify_judges_its_own_deadline_by_the_upper_bound_of_githubs_clock() {
    let text = claim_payload(
        "run-x",
        "2027-01-15T08:02:10.000Z",
        "2027-01-15T07:55:00.000Z",
    );
    let (status, outcome) = judge(
        OperationKind::ClaimVerify,
        &[("token", OID)],
        &text,
        NOW - 600_000,
        NOW + 600_000,
    );
    let lease = outcome.lease.expect("a lease view");
    assert!(lease.local_deadline < NOW + 600_000);
    assert_eq!(
        status,
        Status::RenewRequired,
        "not held: the deadline may have passed"
    );
    // Answered at once, the same claim is held.
    let (status, _) = judge(
        OperationKind::ClaimVerify,
        &[("token", OID)],
        &text,
        NOW,
        NOW + 10,
    );
    assert_eq!(status, Status::Held);
}

/// Adopt proves this run's write landed; it proceeds only on a lease that has not reached its
/// deadline (`renew-required` then, as verify).
#[test]
fn adopt_proceeds_only_on_a_lease_before_its_deadline() {
    let ran_out = claim_payload(
        "run-x",
        "2027-01-15T07:00:00.000Z",
        "2027-01-15T06:50:00.000Z",
    );
    let (status, outcome) = judge(OperationKind::ClaimAdopt, &[], &ran_out, NOW, NOW + 10);
    assert_eq!(status, Status::RenewRequired);
    assert_ne!(status.exit_code(), 0);
    assert!(
        outcome.claims.unwrap().next.contains_key("renew"),
        "the renew to run is printed"
    );
    let live = claim_payload(
        "run-x",
        "2027-01-15T08:10:00.000Z",
        "2027-01-15T08:05:00.000Z",
    );
    let (status, _) = judge(OperationKind::ClaimAdopt, &[], &live, NOW, NOW + 10);
    assert_eq!(status, Status::Adopted);
}
