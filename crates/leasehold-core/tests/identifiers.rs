//! Every lock operation refuses a credential-shaped identifier before its first request: the
//! error names the input and the rule, and never carries the value. (The shapes are
//! `wire/secrets.rs`; the rule is applied by `input/`.)

mod common;

use common::{entropy, raw_inputs};
use leasehold_core::{Error, Operation, OperationKind};

/// `ghp_` and 36 letters: the shape of a GitHub personal access token.
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";

fn inputs(pairs: &[(&str, &str)]) -> leasehold_core::RawInputs {
    raw_inputs(
        &[
            ("lock", "deploy"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "build"),
            ("RUNNER_NAME", "r1"),
            ("nonce", "00000000000000aa"),
        ],
        pairs,
    )
}

#[test]
fn every_lock_identifier_refuses_a_credential_before_any_request() {
    let entropy = entropy(1, "00000000000000aa");
    let suffixed = format!("octo/app:77:build:{TOKEN}");
    let url = format!("https://{TOKEN}@github.example");
    let cases: Vec<(OperationKind, &str, &str)> = vec![
        (OperationKind::Acquire, "holder-suffix", TOKEN),
        (OperationKind::Acquire, "lock", TOKEN),
        (OperationKind::Acquire, "state-branch", TOKEN),
        (
            OperationKind::Acquire,
            "repository",
            "octo/ghp_abcdefghijklmnop",
        ),
        (OperationKind::Acquire, "GITHUB_JOB", TOKEN),
        (OperationKind::Acquire, "RUNNER_NAME", TOKEN),
        (OperationKind::Acquire, "GITHUB_SERVER_URL", &url),
        (OperationKind::Release, "holder-id", &suffixed),
        (OperationKind::Release, "holder-suffix", TOKEN),
        (OperationKind::Renew, "holder-id", &suffixed),
        (OperationKind::Renew, "lock", TOKEN),
        (OperationKind::Status, "lock", TOKEN),
        (OperationKind::Reap, "lock", TOKEN),
        (OperationKind::Reap, "GITHUB_JOB", TOKEN),
        (OperationKind::Cleanup, "holder-suffix", TOKEN),
    ];
    for (kind, input, value) in cases {
        let err = Operation::new(kind, &inputs(&[(input, value)]), &entropy)
            .err()
            .unwrap_or_else(|| panic!("{kind:?} took {input} = a credential"));
        let Error::Input(e) = err else {
            panic!("{kind:?} {input}: {err:?}")
        };
        assert_eq!(e.input, input, "{kind:?}");
        assert!(e.rule.contains("credential"), "{kind:?} {input}: {e}");
        assert!(e.value.is_empty(), "{kind:?} {input}: {e}");
        assert!(!e.to_string().contains("ghp_abc"), "{kind:?} {input}: {e}");
    }
}
