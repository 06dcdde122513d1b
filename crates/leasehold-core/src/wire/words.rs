//! The stable words leasehold writes: failure codes, answer classes, why a holding was removed,
//! why a change was made, what the reaper concluded. Each is a closed enum whose spelling is
//! written once, in the table of its declaration, and is the same in JSON, in logs and in the
//! state document.
//!
//! Words that are also *read back* from the state document (a removal's reason, a change's
//! action) keep any word this version does not know as `Other`, unchanged: a state written by
//! another version of leasehold is judged by its holders and queue, never refused for a word in
//! its history.

/// Declares a word enum: its variants with their spelling, `as_str`, `Display` and serde as a
/// plain string. `open` adds an `Other(String)` variant that keeps unknown words when reading.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $name {
            /// Every word, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $word, )+ }
            }

            pub fn from_word(word: &str) -> Option<Self> {
                match word { $( $word => Some($name::$variant), )+ _ => None }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = <String as ::serde::Deserialize>::deserialize(d)?;
                $name::from_word(&word).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        concat!("unknown ", stringify!($name), " {:?}"),
                        word
                    ))
                })
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident open { $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A word this version does not write (from another version's document), kept as is.
            Other(String),
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                match self { $( $name::$variant => $word, )+ $name::Other(word) => word }
            }

            pub fn from_word(word: &str) -> Self {
                match word { $( $word => $name::$variant, )+ other => $name::Other(other.into()) }
            }
        }

        impl From<&str> for $name {
            fn from(word: &str) -> Self {
                $name::from_word(word)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Ok($name::from_word(&<String as ::serde::Deserialize>::deserialize(d)?))
            }
        }
    };
}

pub(crate) use words;

words! {
    /// Why an operation failed (`outcome.error.code`, and the `error-code` output).
    pub enum FailureCode {
        /// GitHub refused a request (permission, configuration, not found): retrying cannot help.
        Refused = "refused",
        /// GitHub stayed unavailable past the retry budget.
        ApiUnavailable = "api-unavailable",
        /// The backstop on requests per operation was reached.
        RequestBudget = "request-budget",
        /// Compare-and-swap conflicts past their budget.
        Contention = "contention",
        /// GitHub kept answering with a version older than one already seen.
        StaleReads = "stale-reads",
        /// The lock's config file is present but invalid.
        ConfigInvalid = "config-invalid",
        /// Another job of the same run attempt uses the same holder id.
        HolderCollision = "holder-collision",
        /// The holder id belongs to a newer run attempt.
        Superseded = "superseded",
        /// renew: this claim no longer holds (proven).
        Lost = "lost",
        /// reap: the scan deadline passed with entries unchecked.
        ScanDeadline = "scan-deadline",
        /// GitHub rate-limited the requests (a reap's questions; a lookup's answer).
        RateLimited = "rate-limited",
        /// An Actions API question failed transiently past its attempts.
        Transient = "transient",
        /// An Actions API question was refused.
        Refusal = "refusal",
        /// An Actions API question was answered 404.
        NotFound = "not-found",
        /// The state document is not JSON.
        StateNotJson = "state-not-json",
        /// The state document has no integer `schema`.
        StateNoSchema = "state-no-schema",
        /// The state document was written with a newer schema.
        StateNewerSchema = "state-newer-schema",
        /// The state document has a schema this version never wrote.
        StateUnknownSchema = "state-unknown-schema",
        /// The state document breaks its schema's rules.
        StateInvalid = "state-invalid",
        /// The state document is for another lock.
        StateWrongLock = "state-wrong-lock",
        /// The pull request's head moved on (a push) or the pull request closed.
        HeadMoved = "head-moved",
        /// The pull request's head could not be read within the budget.
        HeadUnverified = "head-unverified",
        /// A read that must name one thing named several (two alert issues with one marker).
        Ambiguous = "ambiguous",
        /// acquire: the lock's queue is full (its entry count, or the document's size, is at the
        /// limit GitHub's contents API can serve): nothing was written.
        QueueFull = "queue-full",
        /// acquire: the config turns the lifecycle on while the lock is busy (schema 1 with
        /// holders or waiters): nothing was written; it turns on once the lock is idle.
        LifecycleActivationBusy = "lifecycle-activation-busy",
        /// acquire: the config has no `lifecycle` while the lock keeps reservations or an
        /// incident: nothing was written.
        LifecycleDowngrade = "lifecycle-downgrade",
        /// acquire: the lock's incident stands; this claim's queue entry was removed.
        Incident = "incident",
        /// acquire: the lock's incident stands and the removal of this claim's queue entry could
        /// not be confirmed.
        IncidentCleanupFailed = "incident-cleanup-failed",
        /// recover: no reservation with this id, or it is not a quarantine.
        NoSuchReservation = "no-such-reservation",
        /// recover-incident: no incident stands, or it has another id.
        NoSuchIncident = "no-such-incident",
        /// recover, recover-incident: the operator's confirmation input is not `true`.
        Unconfirmed = "unconfirmed",
        /// An input that only GitHub's clock can judge (report-usage's `observed-at` ahead of
        /// it), refused after the state was read: nothing was written. An input refused before
        /// any request is a refusal of the same word.
        InvalidInput = "invalid-input",
    }
}

words! {
    /// What a failed answer meant (`outcome.error.class`), as the classification named it.
    pub enum AnswerClass {
        Conflict = "conflict",
        NotFound = "not-found",
        AlreadyExists = "already-exists",
        Refusal = "refusal",
        RateLimited = "rate-limited",
        Transient = "transient",
        UnknownOutcome = "unknown-outcome",
    }
}

impl FailureCode {
    /// The code of an Actions API question that ended without an answer of this class.
    pub fn unanswered(class: AnswerClass) -> Self {
        match class {
            AnswerClass::RateLimited => FailureCode::RateLimited,
            AnswerClass::Transient | AnswerClass::UnknownOutcome => FailureCode::Transient,
            AnswerClass::NotFound => FailureCode::NotFound,
            AnswerClass::Refusal | AnswerClass::Conflict | AnswerClass::AlreadyExists => {
                FailureCode::Refusal
            }
        }
    }
}

words! {
    /// Why a holding was removed by somebody other than its holder (in `lastChange.removed`).
    pub enum RemovalReason open {
        /// Its lease ran out (past grace and skew, by GitHub's clock) and was not renewed.
        LeaseExpired = "lease-expired",
        /// The Actions API says its run attempt completed.
        RunCompleted = "run-completed",
        /// The Actions API says its job completed.
        JobCompleted = "job-completed",
        /// A later run attempt of its job took its place but could not keep its seat (under
        /// runner serialization, the new runner's slot was held): GitHub reruns only a
        /// completed run, so the earlier attempt is over.
        Rerun = "rerun",
    }
}

words! {
    /// Why a version of the state was written (`lastChange.action`, and the commit message).
    pub enum ChangeAction open {
        Acquire = "acquire",
        /// A rerun took over what its earlier attempt left.
        Adopt = "adopt",
        Enqueue = "enqueue",
        Timeout = "timeout",
        Cancel = "cancel",
        /// acquire left because its pull request's head moved on, or could not be verified.
        Superseded = "superseded",
        UnverifiedHead = "unverified-head",
        /// A compare-and-swap of the version read, to confirm an absence before timing out.
        TimeoutCheck = "timeout-check",
        CancelCheck = "cancel-check",
        Release = "release",
        LeaveQueue = "leave-queue",
        ReleaseCheck = "release-check",
        Renew = "renew",
        RenewCheck = "renew-check",
        Reap = "reap",
        /// A usage reading of a pool's resource was recorded.
        ReportUsage = "report-usage",
        /// An operator rewrote a broken state as an empty one (`leasehold repair`).
        Repair = "repair",
        /// acquire left the queue because the lock's incident stands.
        Incident = "incident",
        IncidentCheck = "incident-check",
        /// An operator turned a quarantine into a cooldown.
        Recover = "recover",
        /// An operator ended the lock's incident.
        RecoverIncident = "recover-incident",
    }
}

impl ChangeAction {
    /// Whether a write of this action joins the lock (takes a slot or a place in the queue): the
    /// writes an arriving crowd makes, which put each other off (`policy::settle`) and back off
    /// each other's conflicts. Every other write frees, keeps or repairs something.
    pub fn is_arrival(&self) -> bool {
        matches!(self, ChangeAction::Acquire | ChangeAction::Enqueue)
    }
}

words! {
    /// What the reaper concluded about one entry (`reaped[].entries[].reason`).
    pub enum ReapReason {
        RunCompleted = "run-completed",
        JobCompleted = "job-completed",
        LeaseExpired = "lease-expired",
        /// Its run attempt (or job) is queued, waiting or running.
        Active = "active",
        /// No answer proved anything.
        Unverified = "unverified",
        /// The scan ended first.
        Unchecked = "unchecked",
    }
}

impl ReapReason {
    /// The removal reason written to the state for an entry removed on this conclusion.
    pub fn removal(self) -> Option<RemovalReason> {
        match self {
            ReapReason::RunCompleted => Some(RemovalReason::RunCompleted),
            ReapReason::JobCompleted => Some(RemovalReason::JobCompleted),
            ReapReason::LeaseExpired => Some(RemovalReason::LeaseExpired),
            ReapReason::Active | ReapReason::Unverified | ReapReason::Unchecked => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_words_round_trip_and_refuse_strangers() {
        for code in FailureCode::ALL {
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<FailureCode>(&json).unwrap(), *code);
        }
        assert!(serde_json::from_str::<FailureCode>("\"nonsense\"").is_err());
        assert_eq!(ReapReason::Unchecked.to_string(), "unchecked");
    }

    #[test]
    fn open_words_keep_what_they_do_not_know() {
        let r: RemovalReason = serde_json::from_str("\"lease-expired\"").unwrap();
        assert_eq!(r, RemovalReason::LeaseExpired);
        let other: ChangeAction = serde_json::from_str("\"split\"").unwrap();
        assert_eq!(other, ChangeAction::Other("split".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"split\"");
        assert_eq!(ChangeAction::LeaveQueue.as_str(), "leave-queue");
    }
}

words! {
    /// The kind of stored document a state error is about (its messages name it).
    pub enum Stored {
        LockState = "lock state",
        Claim = "claim",
    }
}
