//! How an operation ends: the [`Outcome`] the driver turns into outputs, a summary and an exit
//! code, without deciding any of it.

use serde::Serialize;

use super::document::{LockState, RunIdentity};
use super::time::Millis;
use super::words::{words, AnswerClass, FailureCode, ReapReason};

words! {
    /// The stable result word of an operation.
    pub enum ResultWord {
    /// acquire: this job holds a slot.
    Acquired = "acquired",
    /// acquire: the timeout passed before a slot came free; the queue entry was removed.
    Timeout = "timeout",
    /// acquire: the job was cancelled while waiting; the queue entry was removed.
    Cancelled = "cancelled",
    /// release: the holding was removed.
    Released = "released",
    /// release: the job was only waiting; its queue entry was removed.
    QueueCleaned = "queue-cleaned",
    /// release: nothing of this holder id was in the lock (confirmed against the latest state).
    Noop = "noop",
    /// release: the resource was released by the job but the lock state could not be updated
    /// within the release's budget. The record is in doubt; the step fails.
    ReleaseUnrecorded = "release-unrecorded",
    /// status: the summary was read.
    Status = "status",
    /// cleanup: switched off (`release-on-exit: false`); nothing was sent.
    Skipped = "skipped",
    /// renew: the lease was extended (or is at its ceiling already).
    Renewed = "renewed",
    /// renew with `if-due`: not due yet; nothing written.
    NotDue = "not-due",
    /// renew: this claim no longer holds (proven).
    Lost = "lost",
    /// reap: every holder and queue entry was judged; what was proven over was removed.
    Reaped = "reaped",
    /// acquire with `pull-request`: the pull request's head moved on (or it closed); this
    /// claim's queue entry or holding was removed.
    Superseded = "superseded",
    /// acquire with `pull-request`: its head could not be read within the retry budget; this
    /// claim's queue entry or holding was removed.
    UnverifiedHead = "unverified-head",
    /// A receipt check, a receipt post, a head check or an audit finished: its report says how.
    Reported = "reported",
    /// report-usage: the reading was recorded.
    Recorded = "recorded",
    /// The operation could not complete; see `error`.
    Failed = "failed",
    /// acquire: the lock's incident stands; this claim's queue entry was removed.
    Incident = "incident",
    /// acquire: the lock's incident stands; the removal of this claim's queue entry could not
    /// be confirmed.
    IncidentCleanupFailed = "incident-cleanup-failed",
    /// recover: the quarantine became a cooldown.
    Recovered = "recovered",
    /// recover-incident: the incident was ended.
    IncidentRecovered = "incident-recovered",
    }
}

/// Why an operation failed, in data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub code: FailureCode,
    pub message: String,
    /// The class of the last failed answer (`refusal`, `transient`, …) when one caused this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<AnswerClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// Counters over one operation, reported at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Requests sent (every command that was a request).
    pub requests: u32,
    pub reads: u32,
    pub writes: u32,
    /// Reads answered 304.
    pub not_modified: u32,
    /// Compare-and-swap conflicts (409, or 422 for a file that appeared).
    pub conflicts: u32,
    /// Requests repeated after a failure.
    pub retries: u32,
    pub rate_limit_waits: u32,
    /// Reads that came back older than a version already seen.
    pub stale_reads: u32,
    pub polls: u32,
    /// Actions API requests (run attempts and jobs looked up).
    #[serde(default)]
    pub lookups: u32,
}

/// Everything an operation reports when it finishes. The driver turns it into step outputs,
/// a job summary and the exit code; it decides none of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub result: ResultWord,
    /// Whether the step succeeded (false fails the step).
    pub success: bool,
    pub lock: String,
    pub holder_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquired: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<Millis>,
    /// Waiters ahead of this job when it enqueued, plus one (0: admitted without waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    /// The last state known, for the job summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<LockState>,
    pub stats: Stats,
    /// This claim's lease, when it holds (acquire, renew): what a guard needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseView>,
    /// reap: what was judged, and what was done, lock by lock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reaped: Vec<ReapReport>,
    /// A claim operation's report (its status decides the exit code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<super::claim::ClaimReport>,
    /// A slot allocation's report (its status decides the exit code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<super::slot::SlotReport>,
    /// A receipt check's or post's, a head check's or an audit's report (its status decides
    /// the exit code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<super::receipt::ItemReport>,
    /// A pool's holding: the resource granted (acquire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The granted resource's tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_tags: Option<Vec<String>>,
    /// A repair's report (its status decides the exit code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<super::repair::RepairReport>,
    /// What a release, an acquire or a recovery did of the lifecycle, when it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<super::lifecycle::LifecycleReport>,
    /// The version of the state this step knew last, for a later step of the same job
    /// (acquire's, for release): the driver exports it as an environment variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<Carry>,
}

/// An environment variable a step leaves for the later steps of its job (`GITHUB_ENV`): its
/// name and value, both decided by the core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct Carry {
    pub name: String,
    pub value: String,
}

impl Stats {
    /// Adds another operation's counters (a reap of several locks reports their sum).
    pub fn add(&mut self, o: &Stats) {
        self.requests += o.requests;
        self.reads += o.reads;
        self.writes += o.writes;
        self.not_modified += o.not_modified;
        self.conflicts += o.conflicts;
        self.retries += o.retries;
        self.rate_limit_waits += o.rate_limit_waits;
        self.stale_reads += o.stale_reads;
        self.polls += o.polls;
        self.lookups += o.lookups;
    }
}

impl Outcome {
    /// An outcome with the fields every operation reports; the rest start empty.
    pub fn new(result: ResultWord, success: bool, lock: &str, holder_id: &str) -> Self {
        Outcome {
            result,
            success,
            lock: lock.into(),
            holder_id: holder_id.into(),
            acquired: None,
            released: None,
            fence: None,
            nonce: None,
            wait_ms: None,
            queue_position: None,
            capacity: None,
            error: None,
            state: None,
            stats: Stats::default(),
            lease: None,
            reaped: Vec::new(),
            claims: None,
            slots: None,
            report: None,
            resource: None,
            resource_tags: None,
            repair: None,
            lifecycle: None,
            carry: None,
        }
    }

    /// An outcome whose result is `word` when `ok`, else `failed`.
    pub fn settled(word: ResultWord, ok: bool, lock: &str, holder_id: &str) -> Self {
        let result = if ok { word } else { ResultWord::Failed };
        Outcome::new(result, ok, lock, holder_id)
    }

    /// This outcome, failed for `failure`.
    pub fn with_error(mut self, failure: Failure) -> Self {
        self.error = Some(failure);
        self
    }
}

/// A holding's lease as its holder must act on it. `expiresAt` and `ceilingAt` are on GitHub's
/// clock (as written in the state); `localDeadline` and `renewAt` are on the local clock, already
/// corrected by the estimated offset to GitHub's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct LeaseView {
    pub expires_at: Millis,
    pub ceiling_at: Millis,
    /// Stop the protected work by then unless a renewal is proven first.
    pub local_deadline: Millis,
    /// When a renewal is due.
    pub renew_at: Millis,
    pub renew_ms: Millis,
    pub ttl_ms: Millis,
}

impl Failure {
    /// A failure decided by the operation itself (no failed answer behind it).
    pub fn new(code: FailureCode, message: String) -> Self {
        Failure {
            code,
            message,
            class: None,
            status: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    Holding,
    Queue,
    /// A cooldown or quarantine (the lifecycle's); `holderId` is then its id.
    Reservation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "lowercase")]
pub enum ReapAction {
    Removed,
    Renewed,
    Kept,
    /// A quarantine whose run is proven over became a cooldown.
    Recovered,
}

/// One entry as the reaper judged it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct ReapEntry {
    pub holder_id: String,
    pub place: Place,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    pub run: RunIdentity,
    pub action: ReapAction,
    pub reason: ReapReason,
    /// What the evidence was, for people.
    pub detail: String,
}

/// One lock's reap.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct ReapReport {
    pub lock: String,
    /// Changes written (confirmed), then what was kept in the last version seen.
    pub entries: Vec<ReapEntry>,
}

impl super::exit::Status {
    /// The status of an operation's outcome: a claim's own status, else the lock verb's result
    /// word (a failure by its code).
    pub fn of_outcome(o: &Outcome) -> super::exit::Status {
        if let Some(claim) = &o.claims {
            return claim.status;
        }
        if let Some(slot) = &o.slots {
            return slot.status;
        }
        if let Some(report) = &o.report {
            return report.status;
        }
        if let Some(repair) = &o.repair {
            return repair.status;
        }
        if o.lifecycle.as_ref().is_some_and(|l| l.report_degraded) {
            return super::exit::Status::ReportDegraded;
        }
        match o.result {
            ResultWord::Acquired => super::exit::Status::Acquired,
            ResultWord::Timeout => super::exit::Status::Timeout,
            ResultWord::Cancelled => super::exit::Status::Cancelled,
            ResultWord::Released => super::exit::Status::Released,
            ResultWord::QueueCleaned => super::exit::Status::QueueCleaned,
            ResultWord::Noop => super::exit::Status::Noop,
            ResultWord::ReleaseUnrecorded => super::exit::Status::ReleaseUnrecorded,
            ResultWord::Status => super::exit::Status::Ok,
            ResultWord::Skipped => super::exit::Status::Skipped,
            ResultWord::Renewed => super::exit::Status::Renewed,
            ResultWord::NotDue => super::exit::Status::NotDue,
            ResultWord::Lost => super::exit::Status::Lost,
            ResultWord::Reaped => super::exit::Status::Reaped,
            ResultWord::Superseded => super::exit::Status::Superseded,
            ResultWord::UnverifiedHead => super::exit::Status::UnverifiedHead,
            ResultWord::Reported => super::exit::Status::Ok,
            ResultWord::Recorded => super::exit::Status::Ok,
            ResultWord::Incident => super::exit::Status::Incident,
            ResultWord::IncidentCleanupFailed => super::exit::Status::IncidentCleanupFailed,
            ResultWord::Recovered => super::exit::Status::Recovered,
            ResultWord::IncidentRecovered => super::exit::Status::IncidentRecovered,
            ResultWord::Failed => o
                .error
                .as_ref()
                .map_or(super::exit::Status::Transport, |e| {
                    super::exit::Status::of_failure(e.code)
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::exit::Status;

    #[test]
    fn lock_results_map_onto_the_exit_table() {
        let code = |r| Status::of_outcome(&Outcome::new(r, false, "l", "h")).exit_code();
        assert_eq!(code(ResultWord::Lost), 13);
        assert_eq!(code(ResultWord::Timeout), 10);
        assert_eq!(code(ResultWord::Acquired), 0);
        assert_eq!(code(ResultWord::ReleaseUnrecorded), 12);
        let failed = Outcome::new(ResultWord::Failed, false, "l", "h")
            .with_error(Failure::new(FailureCode::ScanDeadline, "m".into()));
        assert_eq!(Status::of_outcome(&failed).exit_code(), 20);
    }
}
