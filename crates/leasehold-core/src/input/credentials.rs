//! Identifiers are never credentials. Every identifier leasehold writes into a document or
//! prints in a report (run ids and their prefixes, metadata values, keys, namespaces, holder
//! suffixes and ids, lock names, every string of a claims config) is refused when it carries
//! the shape of a credential, before any request. The error names the input and the rule and
//! never echoes the value.

use crate::wire::{credential_shape, InputError};

/// Refuses `value` for `input` when it carries a credential shape. The value is not echoed.
pub fn refuse_credential(input: &str, value: &str) -> Result<(), InputError> {
    match credential_shape(value) {
        None => Ok(()),
        Some(shape) => Err(InputError {
            input: input.into(),
            rule: format!("must not carry a credential: it has the shape of {shape}"),
            value: String::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_refused_without_echoing_it() {
        let secrets = [
            "ghp_abcdefghijklmnop",
            "gho_abc",
            "ghu_abc",
            "ghs_abc",
            "ghr_abc",
            "github_pat_11ABC",
            "sk-ant-api03-xyz",
            "sk-proj-abcdefghijklmnop",
            "xoxa-1",
            "xoxb-123-456",
            "xoxp-1",
            "xoxr-1",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "prefix ghp_abc",
            "token=ghs_abc",
            "run-AKIAIOSFODNN7EXAMPLE",
        ];
        for s in secrets {
            let e = refuse_credential("run-id", s).expect_err(s);
            assert_eq!(e.input, "run-id");
            assert!(e.value.is_empty(), "{s}");
            assert!(!e.to_string().contains(s), "{e}");
            assert!(e.rule.contains("credential"), "{e}");
        }
    }

    #[test]
    fn near_misses_are_accepted() {
        for ok in [
            "sweep-42",
            "task-sk-1",
            "sk-short",
            "ghp",
            "ghp_",
            "ask-me",
            "desk-3",
            "xoxz-1",
            "xox-1",
            "AKIA",
            "AKIAshort",
            "AKIAIOSFODNN7EXAMPl",
            "-----BEGIN CERTIFICATE-----",
            "github_pat",
            "my-ghs",
            "issue-4312",
        ] {
            assert!(refuse_credential("key", ok).is_ok(), "{ok}");
        }
    }
}

/// Every lock operation refuses a credential-shaped identifier before its first request: the
/// error names the input and the rule, and never carries the value.
#[cfg(test)]
mod lock_inputs {
    use crate::ops::{Operation, OperationKind};
    use crate::wire::Error;
    use crate::Entropy;

    /// `ghp_` and 36 letters: the shape of a GitHub personal access token.
    const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";

    fn inputs(pairs: &[(&str, &str)]) -> crate::RawInputs {
        let mut m: crate::RawInputs = [
            ("lock", "deploy"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "build"),
            ("RUNNER_NAME", "r1"),
            ("nonce", "00000000000000aa"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in pairs {
            m.insert(k.to_string(), v.to_string());
        }
        m
    }

    #[test]
    fn every_lock_identifier_refuses_a_credential_before_any_request() {
        let entropy = Entropy {
            seed: 1,
            nonce: "00000000000000aa".into(),
        };
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
}
