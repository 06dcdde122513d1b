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
