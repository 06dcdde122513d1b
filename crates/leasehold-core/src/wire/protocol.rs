//! What crosses between the core and its driver. The driver feeds [`Event`]s; the core answers
//! each with one [`Step`]: exactly one [`Command`] to perform next, plus log lines to print.
//! All of it is plain serde data, camelCase in JSON, tagged by `kind`.

use serde::{Deserialize, Serialize};

use crate::store::lock::LockState;
use crate::wire::time::Millis;

/// An event the driver feeds to an operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Event {
    /// The operation begins. Exactly once, first.
    Start { now: Millis },
    /// The answer to the request the last command asked for.
    Reply { now: Millis, reply: Reply },
    /// The time the last `sleep` command named has come.
    Timer { now: Millis },
    /// The job is being cancelled (the runner sent SIGINT or SIGTERM). Fed instead of `timer`
    /// while sleeping; the operation then leaves what it joined and finishes quickly.
    Cancel { now: Millis },
}

/// One answer from GitHub, normalized by the driver. Success shapes depend on the request;
/// anything else is `http` (an HTTP answer that was not a success) or `transport` (no answer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Reply {
    /// `readFile` found the file (200). `content` is the decoded text.
    File {
        sha: String,
        content: String,
        #[serde(default)]
        etag: Option<String>,
        /// The `date` header: GitHub's clock, for judging leases.
        #[serde(default)]
        date: Option<String>,
    },
    /// `readFile` with `ifNoneMatch`: unchanged (304).
    NotModified,
    /// `writeFile` succeeded (200 or 201): the new blob sha of the file.
    Written {
        sha: String,
        #[serde(default)]
        date: Option<String>,
    },
    /// `createTree`, `createCommit` or `createBranch` succeeded: the new object's sha.
    Created { sha: String },
    /// An HTTP answer that is not a success (including 404 and 409), with the facts that matter.
    #[serde(rename_all = "camelCase")]
    Http {
        status: u16,
        #[serde(default)]
        message: String,
        /// Raw `retry-after` header (delta-seconds or an HTTP date).
        #[serde(default)]
        retry_after: Option<String>,
        /// `x-ratelimit-remaining`.
        #[serde(default)]
        ratelimit_remaining: Option<u64>,
        /// `x-ratelimit-reset`, epoch seconds.
        #[serde(default)]
        ratelimit_reset: Option<u64>,
        /// The `date` header.
        #[serde(default)]
        date: Option<String>,
    },
    /// `getRunAttempt` succeeded: the run attempt's `status` and `conclusion`.
    #[serde(rename_all = "camelCase")]
    Run {
        run_id: u64,
        run_attempt: u32,
        status: String,
        #[serde(default)]
        conclusion: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `getJob` succeeded.
    #[serde(rename_all = "camelCase")]
    Job {
        id: u64,
        run_id: u64,
        /// Not every answer carries it (GitHub's description does not require it).
        #[serde(default)]
        run_attempt: Option<u32>,
        #[serde(default)]
        name: String,
        status: String,
        #[serde(default)]
        conclusion: Option<String>,
        #[serde(default)]
        runner_name: Option<String>,
        /// RFC 3339, once completed.
        #[serde(default)]
        completed_at: Option<String>,
        #[serde(default)]
        date: Option<String>,
    },
    /// `listJobs` succeeded: the first page (up to 100 jobs) of the attempt's jobs.
    #[serde(rename_all = "camelCase")]
    Jobs {
        total_count: u64,
        jobs: Vec<JobSummary>,
        #[serde(default)]
        date: Option<String>,
    },
    /// No HTTP answer. `sent: false` when the request certainly never left (DNS failure,
    /// connection refused); `true` when it may have reached GitHub (reset, timeout, abort).
    Transport { sent: bool, message: String },
}

/// One job of a run attempt, as `listJobs` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub runner_name: Option<String>,
}

/// One file in a new tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeFile {
    pub path: String,
    pub content: String,
}

/// What the driver must do next. Every request carries its own time limit (`timeoutMs`): the
/// driver aborts it then and answers `transport { sent: true }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Command {
    /// `GET /repos/{repository}/contents/{path}?ref={ref}`; no `ref` means the default branch.
    /// With `ifNoneMatch`, send `If-None-Match` and expect `notModified` on 304.
    #[serde(rename_all = "camelCase")]
    ReadFile {
        path: String,
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none", default)]
        git_ref: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        if_none_match: Option<String>,
        timeout_ms: Millis,
    },
    /// `PUT /repos/{repository}/contents/{path}` with `branch`, the content (base64-encode it)
    /// and, when present, the `sha` precondition.
    #[serde(rename_all = "camelCase")]
    WriteFile {
        path: String,
        branch: String,
        content: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        sha: Option<String>,
        message: String,
        timeout_ms: Millis,
    },
    /// `POST /repos/{repository}/git/trees` with these files (mode 100644, no base tree).
    #[serde(rename_all = "camelCase")]
    CreateTree {
        files: Vec<TreeFile>,
        timeout_ms: Millis,
    },
    /// `POST /repos/{repository}/git/commits` with this tree and no parents.
    #[serde(rename_all = "camelCase")]
    CreateCommit {
        message: String,
        tree: String,
        timeout_ms: Millis,
    },
    /// `POST /repos/{repository}/git/refs` for `refs/heads/{branch}` at `sha`.
    #[serde(rename_all = "camelCase")]
    CreateBranch {
        branch: String,
        sha: String,
        timeout_ms: Millis,
    },
    /// `GET /repos/{repository}/actions/runs/{runId}/attempts/{attempt}` (Actions API, on the
    /// repository the run belongs to, not the lock repository). Answer `run`.
    #[serde(rename_all = "camelCase")]
    GetRunAttempt {
        repository: String,
        run_id: u64,
        attempt: u32,
        timeout_ms: Millis,
    },
    /// `GET /repos/{repository}/actions/jobs/{jobId}`. Answer `job`.
    #[serde(rename_all = "camelCase")]
    GetJob {
        repository: String,
        job_id: u64,
        timeout_ms: Millis,
    },
    /// `GET /repos/{repository}/actions/runs/{runId}/attempts/{attempt}/jobs?per_page=100`, the
    /// first page only. Answer `jobs`.
    #[serde(rename_all = "camelCase")]
    ListJobs {
        repository: String,
        run_id: u64,
        attempt: u32,
        timeout_ms: Millis,
    },
    /// Feed `timer` at (or after) `untilMs`.
    #[serde(rename_all = "camelCase")]
    Sleep {
        until_ms: Millis,
        reason: SleepReason,
    },
    /// The operation is over: write the outputs and exit.
    Finish { outcome: Box<Outcome> },
}

impl Command {
    pub fn is_request(&self) -> bool {
        !matches!(self, Command::Sleep { .. } | Command::Finish { .. })
    }

    /// A stable name for logs and protocol errors.
    pub fn name(&self) -> &'static str {
        match self {
            Command::ReadFile { .. } => "readFile",
            Command::WriteFile { .. } => "writeFile",
            Command::CreateTree { .. } => "createTree",
            Command::CreateCommit { .. } => "createCommit",
            Command::CreateBranch { .. } => "createBranch",
            Command::GetRunAttempt { .. } => "getRunAttempt",
            Command::GetJob { .. } => "getJob",
            Command::ListJobs { .. } => "listJobs",
            Command::Sleep { .. } => "sleep",
            Command::Finish { .. } => "finish",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SleepReason {
    /// Waiting in the queue for a slot.
    Poll,
    /// Waiting before retrying a request that failed.
    Backoff,
    /// Waiting because GitHub said so (rate limit).
    RateLimit,
    /// A short pause after repeated compare-and-swap conflicts.
    Contention,
    /// A read came back older than one already seen (a stale cache): read again shortly.
    StaleRead,
    /// Keeping this operation's writes about a second apart, as GitHub asks.
    WriteSpacing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    pub level: Level,
    pub text: String,
}

/// The core's answer to one event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub command: Command,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogLine>,
}

/// The stable result word of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultWord {
    /// acquire: this job holds a slot.
    Acquired,
    /// acquire: the timeout passed before a slot came free; the queue entry was removed.
    Timeout,
    /// acquire: the job was cancelled while waiting; the queue entry was removed.
    Cancelled,
    /// release: the holding was removed.
    Released,
    /// release: the job was only waiting; its queue entry was removed.
    QueueCleaned,
    /// release: nothing of this holder id was in the lock (confirmed against the latest state).
    Noop,
    /// release: the resource was released by the job but the lock state could not be updated
    /// within the release's budget. The record is in doubt; the step fails.
    ReleaseUnrecorded,
    /// status: the summary was read.
    Status,
    /// cleanup: switched off (`release-on-exit: false`); nothing was sent.
    Skipped,
    /// renew: the lease was extended (or is at its ceiling already).
    Renewed,
    /// renew with `if-due`: not due yet; nothing written.
    NotDue,
    /// renew: this claim no longer holds (proven).
    Lost,
    /// reap: every holder and queue entry was judged; what was proven over was removed.
    Reaped,
    /// The operation could not complete; see `error`.
    Failed,
}

impl ResultWord {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultWord::Acquired => "acquired",
            ResultWord::Timeout => "timeout",
            ResultWord::Cancelled => "cancelled",
            ResultWord::Released => "released",
            ResultWord::QueueCleaned => "queue-cleaned",
            ResultWord::Noop => "noop",
            ResultWord::ReleaseUnrecorded => "release-unrecorded",
            ResultWord::Status => "status",
            ResultWord::Skipped => "skipped",
            ResultWord::Renewed => "renewed",
            ResultWord::NotDue => "not-due",
            ResultWord::Lost => "lost",
            ResultWord::Reaped => "reaped",
            ResultWord::Failed => "failed",
        }
    }
}

/// Why an operation failed, in data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Stable code, e.g. `refused`, `api-unavailable`, `state-newer-schema`, `config-invalid`,
    /// `holder-collision`, `contention`.
    pub code: String,
    pub message: String,
    /// The class of the last failed answer (`refusal`, `transient`, …) when one caused this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// Counters over one operation, reported at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    pub reaped: Vec<crate::ops::reap::ReapReport>,
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
        }
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

impl LeaseView {
    /// Local times come from the clock estimate's upper bound, so they are never late.
    pub fn of(
        h: &crate::store::lock::Holder,
        policy: &crate::policy::lease::LeasePolicy,
        clock: &crate::policy::lease::ClockEstimate,
    ) -> Self {
        let local_deadline = clock.local_deadline_for(policy.local_deadline(h.expires_at));
        // At the ceiling a renewal cannot extend anything: nothing is due before the deadline.
        // Due by the same estimate renew judges it with (its low bound), so a renewal sent at
        // `renewAt` is not turned away as not due yet.
        let renew_at = if h.expires_at >= h.ceiling_at {
            local_deadline
        } else {
            clock
                .local_time_of(
                    h.expires_at
                        .saturating_sub(h.lease_ms)
                        .saturating_add(policy.renew_ms_for(h.lease_ms)),
                )
                .min(local_deadline)
        };
        LeaseView {
            expires_at: h.expires_at,
            ceiling_at: h.ceiling_at,
            local_deadline,
            renew_at,
            renew_ms: policy.renew_ms_for(h.lease_ms),
            ttl_ms: h.lease_ms,
        }
    }
}
