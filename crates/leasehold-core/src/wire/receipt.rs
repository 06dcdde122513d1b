//! Receipts, head checks and alerts on GitHub's issues and pull requests: the versioned block a
//! receipt comment carries (docs/receipts.md), the hidden marker of an alert issue, and the
//! report these operations finish with.

use serde::Serialize;

use super::exit::Status;

/// How a receipt block starts: an HTML comment, hidden when GitHub renders the comment.
pub const RECEIPT_OPEN: &str = "<!-- leasehold-receipt ";
/// How it ends.
pub const BLOCK_CLOSE: &str = " -->";
/// The block's format version (`v`).
pub const RECEIPT_VERSION: u32 = 1;

/// What a receipt says: run `run` (the one that posted it) absorbed these runs and heads, so a
/// run queued for any of them may skip.
///
/// Read straight from the comment's text by serde's own derive (not `Read`, which reads a
/// `Value`, where a key given twice is the last one): a receipt with a key twice is malformed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The format version, [`RECEIPT_VERSION`].
    pub v: u32,
    /// The run id that posted it.
    pub run: String,
    /// Run ids absorbed (decimal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// Head commits absorbed (40 lowercase hex digits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heads: Vec<String>,
}

/// What a comment body holds, read as a receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockRead {
    /// No receipt block: an ordinary comment.
    None,
    /// A block that cannot be read as a receipt of this version, and why.
    Malformed(String),
    Receipt(Receipt),
}

/// A run id: a positive decimal number without leading zeros.
pub fn is_run_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 20
        && s.bytes().all(|b| b.is_ascii_digit())
        && !s.starts_with('0')
        && s.parse::<u64>().is_ok()
}

/// A commit sha: 40 lowercase hex digits.
pub fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Receipt {
    /// Checks the receipt's fields; the reason it is not a receipt of this version otherwise.
    pub fn check(&self) -> Result<(), String> {
        if self.v != RECEIPT_VERSION {
            return Err(format!(
                "version {} (this leasehold reads version {RECEIPT_VERSION})",
                self.v
            ));
        }
        if !is_run_id(&self.run) {
            return Err(format!("run {:?} is not a run id", self.run));
        }
        if let Some(bad) = self.runs.iter().find(|r| !is_run_id(r)) {
            return Err(format!("absorbed run {bad:?} is not a run id"));
        }
        if let Some(bad) = self.heads.iter().find(|h| !is_sha(h)) {
            return Err(format!("absorbed head {bad:?} is not a 40-hex commit sha"));
        }
        if self.runs.is_empty() && self.heads.is_empty() {
            return Err("it names no run and no head".into());
        }
        Ok(())
    }

    /// Whether it names run `run_id` or head `head`.
    pub fn names(&self, run_id: &str, head: Option<&str>) -> bool {
        self.runs.iter().any(|r| r == run_id)
            || head.is_some_and(|h| self.heads.iter().any(|x| x == h))
    }
}

/// The comment a receipt is posted as: a line for people, then the block on a line of its own.
pub fn render_receipt(r: &Receipt) -> String {
    let mut named = Vec::new();
    if !r.runs.is_empty() {
        named.push(format!("runs {}", r.runs.join(", ")));
    }
    if !r.heads.is_empty() {
        let short: Vec<&str> = r.heads.iter().map(|h| &h[..h.len().min(12)]).collect();
        named.push(format!("heads {}", short.join(", ")));
    }
    format!(
        "leasehold receipt: run {} finished successfully and absorbed {}; runs queued for them may skip.\n\n{RECEIPT_OPEN}{}{BLOCK_CLOSE}\n",
        r.run,
        named.join(" and "),
        serde_json::to_string(r).expect("a receipt serializes"),
    )
}

/// Reads a comment body as a receipt: exactly one block, on a line of its own.
pub fn read_receipt(body: &str) -> BlockRead {
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(RECEIPT_OPEN.trim_end()))
        .collect();
    // The marker elsewhere in a line (a comment quoting it) is no block: ignored, as
    // docs/receipts.md has it.
    let line = match lines.as_slice() {
        [] => return BlockRead::None,
        [one] => *one,
        _ => return BlockRead::Malformed(format!("{} receipt blocks in one comment", lines.len())),
    };
    let Some(json) = line
        .strip_prefix(RECEIPT_OPEN)
        .and_then(|rest| rest.strip_suffix(BLOCK_CLOSE))
    else {
        return BlockRead::Malformed("the block is not closed on its line".into());
    };
    match serde_json::from_str::<Receipt>(json) {
        Err(e) => BlockRead::Malformed(format!("the block is not a receipt: {e}")),
        Ok(r) => match r.check() {
            Ok(()) => BlockRead::Receipt(r),
            Err(why) => BlockRead::Malformed(why),
        },
    }
}

/// The hidden marker of the alert issue for `problem` (`reaper-delivery`), found with its
/// author; the title is never read.
pub fn alert_marker(problem: &str) -> String {
    format!("<!-- leasehold-alert {problem} v1 -->")
}

/// What a receipt check or post, a head check or an audit reports (in
/// [`super::Outcome::report`]); its status decides the exit code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct ItemReport {
    pub status: Status,
    /// `receipt-check`, `receipt-post`, `check-head` or `audit`.
    pub operation: String,
    /// The repository of the item.
    pub repository: String,
    /// The issue or pull request (a receipt's item, the pull request checked, the alert issue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// receipt check: whether the work may be skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<bool>,
    /// A stable word saying why (docs/receipts.md lists them).
    pub reason: String,
    /// The login the token acts as, once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The receipt comment found or posted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<u64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// check-head: the head read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// audit: the problem found, in words (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Why receipts were not honoured, each naming its reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl ItemReport {
    pub fn new(operation: &str, repository: &str, status: Status, reason: &str) -> Self {
        ItemReport {
            status,
            operation: operation.into(),
            repository: repository.into(),
            number: None,
            skip: None,
            reason: reason.into(),
            identity: None,
            comment: None,
            url: String::new(),
            head_sha: None,
            problem: None,
            warnings: Vec::new(),
            detail: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> Receipt {
        Receipt {
            v: 1,
            run: "100".into(),
            runs: vec!["101".into(), "102".into()],
            heads: vec!["a".repeat(40)],
        }
    }

    #[test]
    fn a_rendered_receipt_reads_back() {
        let r = receipt();
        let body = render_receipt(&r);
        assert_eq!(read_receipt(&body), BlockRead::Receipt(r.clone()));
        assert!(r.names("101", None));
        assert!(r.names("999", Some(&"a".repeat(40))));
        assert!(!r.names("100", Some(&"b".repeat(40))));
    }

    #[test]
    fn malformed_blocks_are_named() {
        let bad = |body: &str| match read_receipt(body) {
            BlockRead::Malformed(why) => why,
            other => panic!("{other:?} for {body}"),
        };
        assert!(
            bad("<!-- leasehold-receipt {\"v\":2,\"run\":\"1\",\"runs\":[\"2\"]} -->")
                .contains("version 2")
        );
        assert!(
            bad("<!-- leasehold-receipt {\"v\":1,\"run\":\"1\",\"runs\":[\"02\"]} -->")
                .contains("not a run id")
        );
        assert!(bad("<!-- leasehold-receipt {\"v\":1,\"run\":\"1\"} -->").contains("names no run"));
        assert!(
            bad("<!-- leasehold-receipt {\"v\":1,\"run\":\"1\",\"runs\":[\"2\"],\"x\":1} -->")
                .contains("not a receipt")
        );
        assert!(
            bad("<!-- leasehold-receipt {\"v\":1,\"run\":\"1\",\"runs\":[\"2\"]}")
                .contains("not closed")
        );
        // A key given twice: which run absorbed what would be the reader's guess.
        assert!(bad(
            "<!-- leasehold-receipt {\"v\":1,\"run\":\"1\",\"run\":\"3\",\"runs\":[\"2\"]} -->"
        )
        .contains("duplicate field `run`"));
        assert_eq!(
            read_receipt("see <!-- leasehold-receipt {} -->"),
            BlockRead::None,
            "the marker inside a line is no block"
        );
        let two = format!(
            "{}\n{}",
            render_receipt(&receipt()),
            render_receipt(&receipt())
        );
        assert!(bad(&two).contains("2 receipt blocks"));
        assert_eq!(read_receipt("an ordinary comment"), BlockRead::None);
    }
}
