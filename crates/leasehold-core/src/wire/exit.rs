//! The one exit-code table of the command line, locks and claims alike: every status word a
//! command can end with, its exit code and what the caller should do. Written once, here; the
//! README's table is this one (a test checks it), the binding exposes it, the drivers never
//! decide a code themselves.
//!
//! The coarse rule: 0 proceed; 10, 11, 14, 15 act as printed; 12 do not retry, run the printed
//! adopt; 13 stop the protected work, it is forfeit; 3, 16, 21 stop and report; 20 retry later.

use serde::{Deserialize, Serialize};

use super::words::FailureCode;

/// A command's status word (the `status` of its JSON document).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    // 0: proceed.
    Acquired,
    TakenOver,
    Renewed,
    NotDue,
    Released,
    AlreadyReleased,
    Held,
    Ok,
    Adopted,
    QueueCleaned,
    Noop,
    Skipped,
    Reaped,
    Allocated,
    // 2, 3.
    Usage,
    Config,
    // 10: skip this item this run.
    Contended,
    AlreadyHeld,
    FamilyAborted,
    Timeout,
    Cancelled,
    // 11 .. 16.
    Expired,
    UnknownOutcome,
    Lost,
    NotHeld,
    RenewRequired,
    Stale,
    // 20, 21.
    Transport,
    Permission,
}

/// Every status, in table order.
pub const ALL_STATUSES: &[Status] = &[
    Status::Acquired,
    Status::TakenOver,
    Status::Renewed,
    Status::NotDue,
    Status::Released,
    Status::AlreadyReleased,
    Status::Held,
    Status::Ok,
    Status::Adopted,
    Status::QueueCleaned,
    Status::Noop,
    Status::Skipped,
    Status::Reaped,
    Status::Allocated,
    Status::Usage,
    Status::Config,
    Status::Contended,
    Status::AlreadyHeld,
    Status::FamilyAborted,
    Status::Timeout,
    Status::Cancelled,
    Status::Expired,
    Status::UnknownOutcome,
    Status::Lost,
    Status::NotHeld,
    Status::RenewRequired,
    Status::Stale,
    Status::Transport,
    Status::Permission,
];

impl Status {
    /// The word, its exit code and the action it asks for: the table.
    pub fn row(self) -> (&'static str, i32, &'static str) {
        use Status::*;
        match self {
            Acquired => ("acquired", 0, "proceed"),
            TakenOver => ("taken-over", 0, "proceed"),
            Renewed => ("renewed", 0, "proceed"),
            NotDue => ("not-due", 0, "proceed"),
            Released => ("released", 0, "proceed"),
            AlreadyReleased => ("already-released", 0, "proceed"),
            Held => ("held", 0, "proceed"),
            Ok => ("ok", 0, "proceed"),
            Adopted => ("adopted", 0, "proceed"),
            QueueCleaned => ("queue-cleaned", 0, "proceed"),
            Noop => ("noop", 0, "proceed"),
            Skipped => ("skipped", 0, "proceed"),
            Reaped => ("reaped", 0, "proceed"),
            Allocated => ("allocated", 0, "proceed"),
            Usage => ("usage", 2, "fix the command"),
            Config => ("config", 3, "stop and report"),
            Contended => ("contended", 10, "skip this item this run"),
            AlreadyHeld => ("already-held", 10, "skip this item this run"),
            FamilyAborted => ("family-aborted", 10, "skip this family this run"),
            Timeout => ("timeout", 10, "skip this item this run"),
            Cancelled => ("cancelled", 10, "skip this item this run"),
            Expired => ("expired", 11, "run the printed takeover"),
            UnknownOutcome => ("unknown-outcome", 12, "do not retry; run the printed adopt"),
            Lost => ("lost", 13, "stop the protected work; it is forfeit"),
            NotHeld => ("not-held", 14, "renew with the printed token, or stop"),
            RenewRequired => ("renew-required", 15, "renew, then retry once"),
            Stale => ("stale", 16, "stop and report"),
            Transport => ("transport", 20, "retry later, with backoff"),
            Permission => ("permission", 21, "stop and report"),
        }
    }

    pub fn as_str(self) -> &'static str {
        self.row().0
    }

    pub fn exit_code(self) -> i32 {
        self.row().1
    }

    pub fn action(self) -> &'static str {
        self.row().2
    }

    pub fn from_word(word: &str) -> Option<Status> {
        ALL_STATUSES.iter().copied().find(|s| s.as_str() == word)
    }

    /// The status of a failure with this code.
    pub fn of_failure(code: FailureCode) -> Status {
        use FailureCode as F;
        match code {
            F::Refused | F::Refusal | F::NotFound => Status::Permission,
            F::ApiUnavailable
            | F::RequestBudget
            | F::StaleReads
            | F::RateLimited
            | F::Transient
            | F::ScanDeadline => Status::Transport,
            F::Contention => Status::Contended,
            F::ConfigInvalid => Status::Config,
            F::HolderCollision => Status::Usage,
            F::Superseded | F::Lost => Status::Lost,
            F::StateNotJson
            | F::StateNoSchema
            | F::StateNewerSchema
            | F::StateUnknownSchema
            | F::StateInvalid
            | F::StateWrongLock => Status::Stale,
        }
    }
}

/// One row of the table, as the binding and the README show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitRow {
    pub status: &'static str,
    pub exit_code: i32,
    pub action: &'static str,
}

/// The whole table, in order.
pub fn exit_table() -> Vec<ExitRow> {
    ALL_STATUSES
        .iter()
        .map(|s| ExitRow {
            status: s.as_str(),
            exit_code: s.exit_code(),
            action: s.action(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_one_word_and_the_words_round_trip() {
        let mut words = std::collections::HashSet::new();
        for s in ALL_STATUSES {
            assert!(words.insert(s.as_str()), "{} twice", s.as_str());
            assert_eq!(Status::from_word(s.as_str()), Some(*s));
            assert_eq!(
                serde_json::to_string(s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(words.len(), ALL_STATUSES.len());
    }

    #[test]
    fn the_codes_of_the_table() {
        let code = |w: &str| Status::from_word(w).unwrap().exit_code();
        let table = [
            ("acquired", 0),
            ("usage", 2),
            ("config", 3),
            ("contended", 10),
            ("expired", 11),
            ("unknown-outcome", 12),
            ("lost", 13),
            ("not-held", 14),
            ("renew-required", 15),
            ("stale", 16),
            ("transport", 20),
            ("permission", 21),
        ];
        for (w, c) in table {
            assert_eq!(code(w), c, "{w}");
        }
        // Every code is one of the table's.
        for s in ALL_STATUSES {
            assert!(
                [0, 2, 3, 10, 11, 12, 13, 14, 15, 16, 20, 21].contains(&s.exit_code()),
                "{s:?}"
            );
        }
    }

    #[test]
    fn every_failure_code_and_lock_result_maps() {
        for code in FailureCode::ALL {
            let s = Status::of_failure(*code);
            assert_ne!(s.exit_code(), 0, "{code}");
        }
    }
}
