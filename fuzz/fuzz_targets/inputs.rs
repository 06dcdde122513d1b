//! The input reader, through every operation's constructor: whatever strings a workflow gives,
//! `Operation::new` never panics, answers only with a typed error, never echoes a credential
//! (in the error, the plan or the first request), and never lets a credential-shaped
//! identifier through into what it would send.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use leasehold_core::{credential_shape, Entropy, Error, Event, Operation, OperationKind};
use libfuzzer_sys::fuzz_target;

/// Every input name an operation reads.
const NAMES: &[&str] = &[
    "GITHUB_JOB",
    "GITHUB_REPOSITORY",
    "GITHUB_RUN_ATTEMPT",
    "GITHUB_RUN_ID",
    "GITHUB_SERVER_URL",
    "RUNNER_NAME",
    "api-max-attempts",
    "api-retry-base-ms",
    "api-retry-max-ms",
    "candidate",
    "cleanup",
    "config",
    "config-path",
    "dry-run",
    "holder-id",
    "holder-suffix",
    "id",
    "if-due",
    "invocation",
    "key",
    "keys",
    "kill-grace-seconds",
    "kind",
    "lease",
    "lease-minutes",
    "lock",
    "min-revision",
    "name",
    "namespace",
    "namespaces",
    "no-takeover",
    "nodes",
    "nonce",
    "poll-seconds",
    "prefix",
    "prior",
    "record-job-id",
    "refs",
    "release-deadline-seconds",
    "release-on-exit",
    "repository",
    "repository-id",
    "run-id",
    "run-id-prefix",
    "scan-seconds",
    "schema",
    "set",
    "stale",
    "state-branch",
    "supersedes",
    "timeout-minutes",
    "token",
    "tokens",
];

/// Values worth trying beside arbitrary text: valid ones (so that the reader gets past its
/// first checks) and credential shapes.
const VALUES: &[&str] = &[
    "deploy",
    "octo/app",
    "77",
    "1",
    "0",
    "build",
    "true",
    "false",
    "octo/app:77:build",
    "octo/app:77:build:cell-1",
    "00000000000000aa",
    "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "github_pat_11ABCDEFG",
    "sk-ant-api03-abc",
    "xoxb-1-2",
    "AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN RSA PRIVATE KEY-----",
    "a,b,c",
    "k=v",
    "leasehold-state",
    "https://github.com",
    "",
    " ",
    "\n",
];

const KINDS: &[OperationKind] = &[
    OperationKind::Acquire,
    OperationKind::Release,
    OperationKind::Cleanup,
    OperationKind::Renew,
    OperationKind::Status,
    OperationKind::Reap,
    OperationKind::Claim,
    OperationKind::ClaimTakeover,
    OperationKind::ClaimRenew,
    OperationKind::ClaimRelease,
    OperationKind::ClaimVerify,
    OperationKind::ClaimRead,
    OperationKind::ClaimAdopt,
    OperationKind::ClaimFamilyClaim,
    OperationKind::ClaimFamilyRelease,
    OperationKind::ClaimList,
    OperationKind::SlotAllocate,
];

fn value(u: &mut Unstructured) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => String::arbitrary(u)?,
        1 => format!("{}{}", u.choose(VALUES)?, String::arbitrary(u)?),
        _ => u.choose(VALUES)?.to_string(),
    })
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let kind = *u.choose(KINDS)?;
    let mut inputs = BTreeMap::new();
    // Mostly a valid run context, so the operation-specific inputs are reached.
    if u.ratio(3, 4)? {
        for (k, v) in [
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "build"),
            ("lock", "deploy"),
            ("namespace", "deploy"),
            ("key", "k"),
            ("prefix", "acct"),
            ("nonce", "00000000000000aa"),
        ] {
            inputs.insert(k.to_string(), v.to_string());
        }
    }
    for _ in 0..u.int_in_range(0..=8)? {
        let name = u.choose(NAMES)?.to_string();
        inputs.insert(name, value(u)?);
    }
    let nonce = if u.ratio(7, 8)? {
        format!("{:016x}", u64::arbitrary(u)?)
    } else {
        String::arbitrary(u)?
    };
    let entropy = Entropy {
        seed: u64::arbitrary(u)?,
        nonce,
    };
    let shaped: Vec<&String> = inputs
        .values()
        .filter(|v| credential_shape(v).is_some())
        .collect();
    match Operation::new(kind, &inputs, &entropy) {
        Err(Error::Input(e)) => {
            assert!(credential_shape(&e.value).is_none(), "{e:?}");
            let text = e.to_string();
            assert!(
                credential_shape(&text).is_none(),
                "the error carries a credential: {text}"
            );
            for v in &shaped {
                // Another input's credential may appear inside this input's own value only
                // where it is no credential shape (after a letter or digit: `oxoxb-1-2`).
                assert!(
                    !text.contains(v.as_str()) || e.value.contains(v.as_str()),
                    "the error echoes a credential: {text}"
                );
            }
            assert!(!e.input.is_empty(), "an input error names its input");
        }
        Err(Error::Config(_)) => {}
        Err(Error::Protocol(p)) => panic!("a protocol error before any event: {p:?}"),
        Ok((mut op, plan)) => {
            for field in [
                &plan.lock,
                &plan.holder_id,
                &plan.repository,
                &plan.state_branch,
            ] {
                assert!(
                    credential_shape(field).is_none(),
                    "a credential-shaped identifier was accepted: {plan:?}"
                );
            }
            let step = op
                .step(Event::Start {
                    now: u.int_in_range(0..=leasehold_core::time::LATEST)?,
                })
                .expect("start is always accepted first");
            let first = serde_json::to_string(&step.command).expect("commands serialize");
            assert!(
                credential_shape(&first).is_none(),
                "the first command carries a credential: {first}"
            );
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
