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

#[test]
fn a_tolerated_bad_value_is_warned_about_without_echoing_a_credential() {
    // Knobs that a bad value never makes fatal: the warning names the input, and echoes the
    // value only when it has no credential's shape.
    let entropy = entropy(1, "00000000000000aa");
    let cases = [
        (OperationKind::Acquire, "check-run-id"),
        (OperationKind::Acquire, "api-retry-base-ms"),
        (OperationKind::Release, "release-deadline-seconds"),
        (OperationKind::Release, "api-max-attempts"),
    ];
    for (kind, input) in cases {
        let pairs = [(input, TOKEN), ("record-job-id", "true")];
        let (_, plan) = Operation::new(kind, &inputs(&pairs), &entropy)
            .unwrap_or_else(|e| panic!("{kind:?} {input}: {e:?}"));
        let warned: Vec<&String> = plan.warnings.iter().filter(|w| w.contains(input)).collect();
        assert_eq!(warned.len(), 1, "{kind:?} {input}: {:?}", plan.warnings);
        assert!(
            !warned[0].contains("ghp_"),
            "{kind:?} {input}: {}",
            warned[0]
        );
        // An ordinary bad value is echoed, so the user sees what was wrong.
        let pairs = [(input, "ten"), ("record-job-id", "true")];
        let (_, plan) = Operation::new(kind, &inputs(&pairs), &entropy).unwrap();
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.contains(input) && w.contains("(got \"ten\")")),
            "{kind:?} {input}: {:?}",
            plan.warnings
        );
    }
}
