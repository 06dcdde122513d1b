//! The shapes of credentials, written once. Nothing that crosses a boundary may carry one: an
//! input error never echoes a credential-shaped value ([`super::InputError::new`] blanks it), and
//! the input reader refuses identifiers of these shapes before any request
//! (`input/credentials.rs`).

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
