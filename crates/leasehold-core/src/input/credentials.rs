//! Identifiers are never credentials. Every identifier leasehold writes into a document or
//! prints in a report (run ids and their prefixes, metadata values, keys, namespaces, holder
//! suffixes and ids, lock names, every string of a claims config) is refused when it carries
//! the shape of a credential, before any request. The error names the input and the rule and
//! never echoes the value.

use crate::wire::InputError;

/// The shapes: a prefix, how many token characters (`[A-Za-z0-9_-]`) must follow it at least,
/// and the name the rule gives it. `sk-` alone is common in ordinary names (`task-sk-1`), so it
/// counts only followed by a key-length body.
const PREFIXES: &[(&str, usize, &str)] = &[
    ("ghp_", 1, "a GitHub personal access token (ghp_)"),
    ("gho_", 1, "a GitHub OAuth token (gho_)"),
    ("ghu_", 1, "a GitHub user-to-server token (ghu_)"),
    ("ghs_", 1, "a GitHub server-to-server token (ghs_)"),
    ("ghr_", 1, "a GitHub refresh token (ghr_)"),
    (
        "github_pat_",
        1,
        "a GitHub fine-grained token (github_pat_)",
    ),
    ("sk-ant-", 1, "an Anthropic API key (sk-ant-)"),
    (
        "sk-",
        16,
        "an API secret key (sk- and 16 or more key characters)",
    ),
    ("xoxa-", 1, "a Slack token (xoxa-)"),
    ("xoxb-", 1, "a Slack token (xoxb-)"),
    ("xoxp-", 1, "a Slack token (xoxp-)"),
    ("xoxr-", 1, "a Slack token (xoxr-)"),
];

/// The credential shape `value` carries, anywhere in it, if any.
pub fn credential_shape(value: &str) -> Option<&'static str> {
    let token_char = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-');
    for (prefix, min_body, name) in PREFIXES {
        // A shape counts at the start or after a character that cannot be part of a word of
        // it: `task-sk-1` is not a key, `x sk-1` or `token=ghp_x` is.
        let mut from = 0;
        while let Some(i) = value[from..].find(prefix) {
            let at = from + i;
            let boundary = at == 0 || !value.as_bytes()[at - 1].is_ascii_alphanumeric();
            let body = value.as_bytes()[at + prefix.len()..]
                .iter()
                .take_while(|b| token_char(b))
                .count();
            if boundary && body >= *min_body {
                return Some(name);
            }
            from = at + prefix.len();
        }
    }
    let bytes = value.as_bytes();
    for i in 0..bytes.len() {
        if bytes[i..].starts_with(b"AKIA")
            && bytes.len() >= i + 20
            && bytes[i + 4..i + 20]
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            return Some("an AWS access key id (AKIA + 16 capitals or digits)");
        }
    }
    if value.contains("-----BEGIN") && value.contains("PRIVATE KEY") {
        return Some("a PEM private key header");
    }
    None
}

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
