//! The cleanup command of `actions/cleanup`: its settings, and what its end says about the
//! resource. Its run (when it is stopped, which signal goes to it) is `cleanup_run`'s; the report
//! [`classify`] makes of how it ended is what the release in the same step records.
//!
//! | how the command ended | cleanup | health | reason |
//! | --- | --- | --- | --- |
//! | exit 0 | confirmed | healthy | `completed` |
//! | exit `blocked-exit-code` | unknown | blocked | `account-blocked` |
//! | any other exit | unknown | healthy | `failed` |
//! | stopped at `timeout-seconds` | unknown | healthy | `timeout` |
//! | ended by a signal | unknown | healthy | `cancelled` |
//! | could not start | unknown | healthy | `failed` |
//!
//! The reasons are words every lifecycle allows (its built-in list), so a lock's config never
//! has to extend its list for them.
//!
//! Only an exit of 0 proves anything; everything else leaves the resource unproven, so the slot
//! is quarantined rather than handed on. A blocked resource is never "confirmed": the two
//! contradict each other.

use serde::Serialize;

use crate::input::{RawInputs, Reader};
use crate::policy::limits::{
    BLOCKED_EXIT_CODES, CANCELLED_CLEANUP_TIMEOUT_SECONDS, CLEANUP_COMMAND_TIMEOUT_SECONDS,
    KILL_GRACE_SECONDS,
};
use crate::wire::time::Millis;
use crate::wire::words;
use crate::wire::{CleanupStatus, Health, InputError};

/// The cleanup command's own inputs (the release's are the release operation's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandSettings {
    /// `command`: the program and its arguments, one per line (trimmed, blank lines dropped).
    pub argv: Vec<String>,
    /// `timeout-seconds`, in milliseconds: the command is stopped this long after it started
    /// (at most [`CANCELLED_CLEANUP_TIMEOUT_SECONDS`] in a cancelled job).
    pub timeout_ms: Millis,
    /// The job was cancelled (`job-status`): the deadline was shortened to fit GitHub's 5
    /// minutes, from `timeout-seconds` as given (in milliseconds) when it did.
    pub cancelled_from_ms: Option<Millis>,
    /// `kill-grace-seconds`, in milliseconds: SIGTERM at the deadline, SIGKILL this much later.
    pub kill_grace_ms: Millis,
    /// `blocked-exit-code`: the exit code that means "the resource is blocked", if any.
    pub blocked_exit_code: Option<i32>,
}

impl CommandSettings {
    /// Reads `command` (required), `timeout-seconds` (1 to 3600, default 300),
    /// `kill-grace-seconds` (1 to 300, default 10), `blocked-exit-code` (1 to 127, unset by
    /// default) and `job-status` (`cancelled` shortens the deadline to
    /// [`CANCELLED_CLEANUP_TIMEOUT_SECONDS`]; any other word, or none, leaves it). An error names
    /// the input.
    pub fn parse(inputs: &RawInputs) -> Result<Self, InputError> {
        let r = Reader::new(inputs);
        let argv: Vec<String> = r
            .get("command")
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if argv.is_empty() {
            return Err(InputError::new(
                "command",
                "is required: the program and its arguments, one per line",
                "",
            ));
        }
        let (default, min, max) = CLEANUP_COMMAND_TIMEOUT_SECONDS;
        let timeout_s = r.int("timeout-seconds", default, min, max)?;
        let (default, min, max) = KILL_GRACE_SECONDS;
        let grace_s = r.int("kill-grace-seconds", default, min, max)?;
        let (min, max) = BLOCKED_EXIT_CODES;
        let blocked_exit_code = match r.get("blocked-exit-code") {
            None => None,
            Some(_) => Some(r.int("blocked-exit-code", min, min, max)? as i32),
        };
        let cancelled = r.get("job-status").map(str::trim) == Some("cancelled");
        let cut = cancelled && timeout_s > CANCELLED_CLEANUP_TIMEOUT_SECONDS;
        Ok(CommandSettings {
            argv,
            timeout_ms: if cut {
                CANCELLED_CLEANUP_TIMEOUT_SECONDS
            } else {
                timeout_s
            } * 1_000,
            cancelled_from_ms: cut.then_some(timeout_s * 1_000),
            kill_grace_ms: grace_s * 1_000,
            blocked_exit_code,
        })
    }
}

/// How the cleanup command ended (`cleanup_run` tells).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CommandEnd {
    /// It exited with `code` by itself.
    Exited { code: i32 },
    /// A signal ended it before its deadline (the job was cancelled, or someone killed it).
    Signalled { signal: String },
    /// It was still running at `timeout-seconds` and was stopped.
    TimedOut,
    /// It could not be started.
    SpawnFailed { message: String },
}

words! {
    /// Why: `reason` of the release report.
    pub enum CleanupReason {
        /// The command exited 0.
        Completed = "completed",
        /// It exited with the blocked code: the resource (or its account) is blocked.
        Blocked = "account-blocked",
        /// It exited with another code, or could not start.
        Failed = "failed",
        /// It was stopped at its deadline.
        Timeout = "timeout",
        /// A signal ended it (the job was cancelled).
        Cancelled = "cancelled",
    }
}

/// The release report a cleanup command's end makes: the release inputs `cleanup`, `health`
/// and `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CleanupReport {
    pub cleanup: CleanupStatus,
    pub health: Health,
    pub reason: CleanupReason,
}

/// What the command's end says about the resource (the table at the top of this file).
pub fn classify(settings: &CommandSettings, end: &CommandEnd) -> CleanupReport {
    let unknown = |reason| CleanupReport {
        cleanup: CleanupStatus::Unknown,
        health: Health::Healthy,
        reason,
    };
    match end {
        CommandEnd::Exited { code: 0 } => CleanupReport {
            cleanup: CleanupStatus::Confirmed,
            health: Health::Healthy,
            reason: CleanupReason::Completed,
        },
        CommandEnd::Exited { code } if Some(*code) == settings.blocked_exit_code => CleanupReport {
            cleanup: CleanupStatus::Unknown,
            health: Health::Blocked,
            reason: CleanupReason::Blocked,
        },
        CommandEnd::Exited { .. } => unknown(CleanupReason::Failed),
        CommandEnd::TimedOut => unknown(CleanupReason::Timeout),
        CommandEnd::Signalled { .. } => unknown(CleanupReason::Cancelled),
        CommandEnd::SpawnFailed { .. } => unknown(CleanupReason::Failed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(pairs: &[(&str, &str)]) -> RawInputs {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn settings(blocked: Option<i32>) -> CommandSettings {
        CommandSettings {
            argv: vec!["true".into()],
            timeout_ms: 1_000,
            cancelled_from_ms: None,
            kill_grace_ms: 1_000,
            blocked_exit_code: blocked,
        }
    }

    #[test]
    fn reads_the_command_one_argument_per_line_and_the_defaults() {
        let s = CommandSettings::parse(&inputs(&[("command", "  seat \nreturn\n\n --all  \n")]))
            .unwrap();
        assert_eq!(s.argv, ["seat", "return", "--all"]);
        assert_eq!(s.timeout_ms, 300_000);
        assert_eq!(s.kill_grace_ms, 10_000);
        let kill_after = |nth| crate::ops::guard::signal_kill_after(nth, s.kill_grace_ms);
        assert_eq!((kill_after(1), kill_after(2)), (7_000, 1_000));
        assert_eq!(s.blocked_exit_code, None);
    }

    #[test]
    fn a_cancelled_jobs_command_gets_at_most_two_minutes() {
        let with = |pairs: &[(&str, &str)]| CommandSettings::parse(&inputs(pairs)).unwrap();
        let s = with(&[("command", "x"), ("job-status", "cancelled")]);
        assert_eq!(
            (s.timeout_ms, s.cancelled_from_ms),
            (120_000, Some(300_000))
        );
        let s = with(&[
            ("command", "x"),
            ("job-status", "cancelled"),
            ("timeout-seconds", "60"),
        ]);
        assert_eq!((s.timeout_ms, s.cancelled_from_ms), (60_000, None));
        for status in ["success", "failure", ""] {
            let s = with(&[("command", "x"), ("job-status", status)]);
            assert_eq!(
                (s.timeout_ms, s.cancelled_from_ms),
                (300_000, None),
                "{status}"
            );
        }
    }

    #[test]
    fn bad_inputs_are_named() {
        let err =
            |pairs: &[(&str, &str)]| CommandSettings::parse(&inputs(pairs)).unwrap_err().input;
        assert_eq!(err(&[("command", " \n \n")]), "command");
        assert_eq!(
            err(&[("command", "x"), ("timeout-seconds", "0")]),
            "timeout-seconds"
        );
        assert_eq!(
            err(&[("command", "x"), ("timeout-seconds", "3601")]),
            "timeout-seconds"
        );
        assert_eq!(
            err(&[("command", "x"), ("kill-grace-seconds", "0")]),
            "kill-grace-seconds"
        );
        for bad in ["0", "128", "-1", "2x"] {
            assert_eq!(
                err(&[("command", "x"), ("blocked-exit-code", bad)]),
                "blocked-exit-code",
                "{bad}"
            );
        }
        let s = CommandSettings::parse(&inputs(&[("command", "x"), ("blocked-exit-code", "42")]))
            .unwrap();
        assert_eq!(s.blocked_exit_code, Some(42));
    }

    #[test]
    fn only_exit_zero_confirms() {
        let s = settings(Some(42));
        let c = classify(&s, &CommandEnd::Exited { code: 0 });
        assert_eq!(
            (c.cleanup, c.health, c.reason),
            (
                CleanupStatus::Confirmed,
                Health::Healthy,
                CleanupReason::Completed
            )
        );
        let others = [
            (CommandEnd::Exited { code: 1 }, CleanupReason::Failed),
            (CommandEnd::Exited { code: 41 }, CleanupReason::Failed),
            (CommandEnd::TimedOut, CleanupReason::Timeout),
            (
                CommandEnd::Signalled {
                    signal: "SIGINT".into(),
                },
                CleanupReason::Cancelled,
            ),
            (
                CommandEnd::SpawnFailed {
                    message: "ENOENT".into(),
                },
                CleanupReason::Failed,
            ),
        ];
        for (end, reason) in others {
            let c = classify(&s, &end);
            assert_eq!(
                (c.cleanup, c.health, c.reason),
                (CleanupStatus::Unknown, Health::Healthy, reason),
                "{end:?}"
            );
        }
    }

    #[test]
    fn the_blocked_code_reports_blocked_and_never_confirmed() {
        let c = classify(&settings(Some(42)), &CommandEnd::Exited { code: 42 });
        assert_eq!(
            (c.cleanup, c.health, c.reason),
            (
                CleanupStatus::Unknown,
                Health::Blocked,
                CleanupReason::Blocked
            )
        );
        // Without a blocked code, 42 is just a failure.
        let c = classify(&settings(None), &CommandEnd::Exited { code: 42 });
        assert_eq!(
            (c.cleanup, c.health),
            (CleanupStatus::Unknown, Health::Healthy)
        );
    }
}
