//! The one exit-code table of the command line, locks and claims alike: every status word a
//! command can end with, its exit code and what the caller should do. Written once, here; the
//! README's table is this one (a test checks it), the binding exposes it, the drivers never
//! decide a code themselves.
//!
//! The coarse rule: 0 proceed; 10, 11, 14, 15 act as printed; 12 do not retry, run the printed
//! adopt; 13 stop the protected work, it is forfeit; 3, 16, 21 stop and report; 17 do not run
//! the work on an unverified pull-request head; 20 retry later; 18 the lock's incident stands,
//! 19 a cleanup report was refused, 22 a recovery was refused (docs/lifecycle.md).

use serde::Serialize;

use super::words::{words, FailureCode};

words! {
    /// A command's status word (the `status` of its JSON document), in table order.
    pub enum Status {
    // 0: proceed.
    Acquired = "acquired",
    TakenOver = "taken-over",
    Renewed = "renewed",
    NotDue = "not-due",
    Released = "released",
    AlreadyReleased = "already-released",
    Held = "held",
    Ok = "ok",
    Adopted = "adopted",
    QueueCleaned = "queue-cleaned",
    Noop = "noop",
    Skipped = "skipped",
    Reaped = "reaped",
    Allocated = "allocated",
    // 2, 3.
    Usage = "usage",
    Config = "config",
    // 10: skip this item this run.
    Contended = "contended",
    AlreadyHeld = "already-held",
    FamilyAborted = "family-aborted",
    Timeout = "timeout",
    Cancelled = "cancelled",
    // 11 .. 16.
    Expired = "expired",
    UnknownOutcome = "unknown-outcome",
    /// A lock's release whose write could not be confirmed: the holding may still stand.
    ReleaseUnrecorded = "release-unrecorded",
    Lost = "lost",
    NotHeld = "not-held",
    RenewRequired = "renew-required",
    Stale = "stale",
    // 20, 21.
    Transport = "transport",
    Permission = "permission",
    // Receipts, pull-request heads and alerts (ops/receipt.rs, ops/head.rs, ops/audit.rs).
    Receipted = "receipted",
    NoReceipt = "no-receipt",
    Posted = "posted",
    AlreadyPosted = "already-posted",
    NotPosted = "not-posted",
    Current = "current",
    Superseded = "superseded",
    UnverifiedHead = "unverified-head",
    Opened = "opened",
    Updated = "updated",
    Unchanged = "unchanged",
    Closed = "closed",
    Ambiguous = "ambiguous",
    // Appended: 10, the lock's queue is full.
    QueueFull = "queue-full",
    // Appended: 0, repair (the state was rewritten; a dry run said what it would write).
    Repaired = "repaired",
    WouldRepair = "would-repair",
    // Appended: the lifecycle after release (docs/lifecycle.md). 18 the lock's incident
    // stands; 19 a cleanup report was refused; 22 a recovery was refused (nothing written).
    Incident = "incident",
    IncidentCleanupFailed = "incident-cleanup-failed",
    ReportDegraded = "report-degraded",
    Recovered = "recovered",
    IncidentRecovered = "incident-recovered",
    RecoverRefused = "recover-refused",
    }
}

/// Every status, in table order.
pub const ALL_STATUSES: &[Status] = Status::ALL;

impl Status {
    /// The exit code and the action a status asks for: the table (the word is the enum's).
    fn code_and_action(self) -> (i32, &'static str) {
        use Status::*;
        match self {
            Acquired => (0, "proceed"),
            TakenOver => (0, "proceed"),
            Renewed => (0, "proceed"),
            NotDue => (0, "proceed"),
            Released => (0, "proceed"),
            AlreadyReleased => (0, "proceed"),
            Held => (0, "proceed"),
            Ok => (0, "proceed"),
            Adopted => (0, "proceed"),
            QueueCleaned => (0, "proceed"),
            Noop => (0, "proceed"),
            Skipped => (0, "proceed"),
            Reaped => (0, "proceed"),
            Allocated => (0, "proceed"),
            Usage => (2, "fix the command"),
            Config => (3, "stop and report"),
            Contended => (10, "skip this item this run"),
            AlreadyHeld => (10, "skip this item this run"),
            FamilyAborted => (10, "skip this family this run"),
            Timeout => (10, "skip this item this run"),
            Cancelled => (10, "skip this item this run"),
            Expired => (11, "run the printed takeover"),
            UnknownOutcome => (12, "do not retry; run the printed adopt"),
            ReleaseUnrecorded => (12, "run the release again: it removes only this claim's holding"),
            Lost => (13, "stop the protected work; it is forfeit"),
            NotHeld => (14, "renew with the printed token, or stop"),
            RenewRequired => (15, "renew, then retry once"),
            Stale => (16, "stop and report"),
            Transport => (20, "retry later, with backoff"),
            Permission => (21, "stop and report"),
            Receipted => (10, "skip this item this run"),
            NoReceipt => (0, "proceed"),
            Posted => (0, "proceed"),
            AlreadyPosted => (0, "proceed"),
            NotPosted => (0, "proceed"),
            Current => (0, "proceed"),
            Superseded => (10, "skip this item this run"),
            UnverifiedHead => (17, "stop; do not run the work on an unverified head"),
            Opened => (0, "proceed"),
            Updated => (0, "proceed"),
            Unchanged => (0, "proceed"),
            Closed => (0, "proceed"),
            Ambiguous => (16, "stop and report"),
            QueueFull => (
                10,
                "the queue is full: skip this run, or raise the capacity",
            ),
            Repaired => (0, "proceed"),
            WouldRepair => (0, "proceed (run again with --confirm to write it)"),
            Incident => (
                18,
                "stop: the lock's incident blocks admission until an operator runs recover-incident",
            ),
            IncidentCleanupFailed => (
                18,
                "stop: release this claim, and confirm it gone, before the incident is recovered",
            ),
            ReportDegraded => (
                19,
                "the cleanup report was refused: the slot is quarantined; fix the report",
            ),
            Recovered => (0, "proceed"),
            IncidentRecovered => (0, "proceed"),
            RecoverRefused => (
                22,
                "stop: nothing was written; check the id and the confirmation",
            ),
        }
    }

    /// The word, its exit code and the action it asks for: the table.
    pub fn row(self) -> (&'static str, i32, &'static str) {
        let (code, action) = self.code_and_action();
        (self.as_str(), code, action)
    }

    pub fn exit_code(self) -> i32 {
        self.code_and_action().0
    }

    pub fn action(self) -> &'static str {
        self.code_and_action().1
    }

    /// The status of a command refused before it ran, by the refusal's code: the command line
    /// or an input got wrong (`usage`, `invalid-input`, `no-token`, `unreadable`) is `usage`
    /// (2); a config file that breaks its rules (`config-invalid`, `invalid-config`), and
    /// anything else (a broken core or driver: `protocol`, `invalid-argument`, `internal`), is
    /// `config` (3): stop and report.
    pub fn of_refusal(code: &str) -> Status {
        match code {
            "usage" | "invalid-input" | "no-token" | "unreadable" => Status::Usage,
            _ => Status::Config,
        }
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
            F::QueueFull => Status::QueueFull,
            F::ConfigInvalid | F::LifecycleActivationBusy | F::LifecycleDowngrade => Status::Config,
            F::Incident => Status::Incident,
            F::IncidentCleanupFailed => Status::IncidentCleanupFailed,
            F::NoSuchReservation | F::NoSuchIncident | F::Unconfirmed => Status::RecoverRefused,
            F::HolderCollision | F::InvalidInput => Status::Usage,
            F::Superseded | F::Lost => Status::Lost,
            F::StateNotJson
            | F::StateNoSchema
            | F::StateNewerSchema
            | F::StateUnknownSchema
            | F::StateInvalid
            | F::StateWrongLock => Status::Stale,
            F::HeadMoved => Status::Superseded,
            F::HeadUnverified => Status::UnverifiedHead,
            F::Ambiguous => Status::Ambiguous,
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
            ("receipted", 10),
            ("no-receipt", 0),
            ("superseded", 10),
            ("unverified-head", 17),
            ("ambiguous", 16),
            ("transport", 20),
            ("permission", 21),
            ("incident", 18),
            ("incident-cleanup-failed", 18),
            ("report-degraded", 19),
            ("recovered", 0),
            ("recover-refused", 22),
        ];
        for (w, c) in table {
            assert_eq!(code(w), c, "{w}");
        }
        // Every code is one of the table's.
        for s in ALL_STATUSES {
            assert!(
                [0, 2, 3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]
                    .contains(&s.exit_code()),
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
