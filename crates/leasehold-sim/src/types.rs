//! The small shared vocabulary at the bottom of the crate: names of the simulated repository,
//! the seed's start instant, client ids, the invariants and their violations, and the few states
//! that both the clients and the checker name (a client's step, its work, what a write's answer
//! proved). Every other module may use this one; it uses none of them.

use leasehold_core::time::Millis;
use leasehold_core::Reply;

/// Real (GitHub's) time at which every simulation starts: 2027-01-15.
pub const T0: Millis = 1_800_000_000_000;
pub const LOCK: &str = "sim";
pub const BRANCH: &str = "leasehold-state";
pub const REPOSITORY: &str = "octo/app";
/// Job ids in the Actions API: each job attempt gets `JOB_ID_BASE + its client index`.
pub const JOB_ID_BASE: u64 = 20_000_000_000;

/// A client (one job attempt, or one reaper run): its index in the order clients were made.
pub type ClientId = usize;
/// A logical state write of a core (the driver may send it more than once): its index.
pub type WriteId = usize;
/// A committed version of the state file: its index in the history.
pub type VersionId = usize;

/// Simulated time since the seed began, as the trace prints it.
pub fn fmt_t(t: Millis) -> String {
    let rel = t.saturating_sub(T0);
    format!("{}.{:03}s", rel / 1_000, rel % 1_000)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Invariant {
    /// 0: every committed version is a well-formed state whose revision is one more than the
    /// version it replaced, with each holder id at most once.
    Structure,
    /// 1: no committed state has more holders than capacity.
    Capacity,
    /// 2: fences unique and strictly increasing in admission order.
    Fences,
    /// 3: every write a client saw succeed is in the history; none it saw fail is.
    WriteViews,
    /// 4: no client acts on a holding, a renewal, a loss or a removal that is not in the
    /// history.
    ActsOnHistory,
    /// 5: a client that believes it holds (until the deadline of its last proven lease) is in the
    /// committed holders, and its guarded work stops by that deadline.
    Belief,
    /// 6: no slot leaks once faults stop (an abandoned one is freed by expiry).
    Liveness,
    /// 7: FIFO admission.
    Fifo,
    /// 8: no hot loop: no client sends more than
    /// [`RATE_LIMIT_REQUESTS`](crate::checker::RATE_LIMIT_REQUESTS) requests in any
    /// [`RATE_WINDOW_MS`](crate::checker::RATE_WINDOW_MS) of simulated time.
    RequestRate,
    /// 9: no operation plans a write on a version older than one it has already been shown (it
    /// never acts on a stale read).
    MonotonicView,
    /// 10: the reaper removes an entry only on proof: its attempt (job) completed in GitHub's
    /// view before the write was sent, or its lease ran out by GitHub's true clock (so for an
    /// acquire's expiry too), and never one GitHub told it was running.
    ReaperProof,
    /// 11: a holding the reaper renews stays within its ceiling, on an answer that its attempt
    /// (job) was in progress.
    ReaperRenewal,
    /// 12: at most one live owner per claim key: no two agents' beliefs on a key overlap, and
    /// no belief outlives a move of its key by another agent.
    ClaimOwner,
    /// 13: a claim key's token chain is unbroken: each move replaces the head it names, with a
    /// commit whose parent is that head.
    ClaimChain,
    /// 14: an `updateRefs` whose answer was unknown is never sent again as is without a read.
    ClaimResend,
    /// 15: a family's `updateRefs` moves all the refs it names or none.
    ClaimFamily,
    /// 16: a claim guard's work stops by the local deadline of the last lease its guard proved,
    /// never runs at or past its claim's expiry, and is gone within its kill grace of a proven
    /// loss (a paused agent: its kill grace on resuming).
    ClaimGuardWork,
    /// 17: no resource of a pool ever has more holdings than its capacity.
    PoolCap,
    /// 18: no two holdings of a pool whose reserving partitions intersect.
    PoolPartition,
    /// 19: no repository holds more of a pool than its `maxConcurrent`.
    PoolConsumer,
    /// 20: each admission to a pool is the resource its precedence table names.
    PoolChoice,
    /// 21: once faults stop, no live waiter fits a free slot of a pool for longer than a poll.
    PoolIdle,
    /// 22: under the lifecycle, holders and reservations together never exceed the capacity.
    LifecycleCapacity,
    /// 23: nobody is admitted while the lock's incident stands.
    IncidentAdmission,
    /// 24: a quarantine leaves only by recovery (turned into a cooldown), by a reclaim on its own
    /// runner, or by the reaper's proof that its run is over.
    QuarantineRelease,
    /// 25: a cooldown frees its slot no earlier than its end, by GitHub's clock.
    CooldownEnd,
    /// 26: an operator's recovery does only what it was told and confirmed: a quarantine it
    /// names becomes a cooldown of the same holding, an incident ends only by a confirmed
    /// recover-incident, and a recovery that must be refused commits nothing.
    OperatorRecovery,
    /// 27: under a pool's runner serialization, no two holdings whose runs name one runner.
    PoolRunner,
    /// 28: an acquire told of the job's cancel (at a sleep, or with the answer of a request in
    /// flight) never finishes `acquired`.
    CancelHeard,
    /// 29: a release (or cleanup) that removes its own holding while someone waits hands the
    /// freed slot on in the same write, unless it asked for the config and could not renew its
    /// record of the capacity.
    Handoff,
    /// The core refused an event the driver fed it (a driver or core bug).
    Protocol,
}

impl Invariant {
    pub fn label(self) -> &'static str {
        match self {
            Invariant::Structure => "0 structure",
            Invariant::Capacity => "1 capacity",
            Invariant::Fences => "2 fences",
            Invariant::WriteViews => "3 write views",
            Invariant::ActsOnHistory => "4 acts on history",
            Invariant::Belief => "5 holder belief",
            Invariant::Liveness => "6 liveness",
            Invariant::Fifo => "7 fifo",
            Invariant::RequestRate => "8 request rate",
            Invariant::MonotonicView => "9 monotonic view",
            Invariant::ReaperProof => "10 reaper proof",
            Invariant::ReaperRenewal => "11 reaper renewal",
            Invariant::ClaimOwner => "12 claim owner",
            Invariant::ClaimChain => "13 claim token chain",
            Invariant::ClaimResend => "14 claim unknown not re-sent",
            Invariant::ClaimFamily => "15 claim family whole",
            Invariant::ClaimGuardWork => "16 claim guard work",
            Invariant::PoolCap => "17 pool resource cap",
            Invariant::PoolPartition => "18 pool partitions",
            Invariant::PoolConsumer => "19 pool consumer limit",
            Invariant::PoolChoice => "20 pool choice",
            Invariant::PoolIdle => "21 pool idle slot",
            Invariant::LifecycleCapacity => "22 lifecycle capacity",
            Invariant::IncidentAdmission => "23 no admission in an incident",
            Invariant::QuarantineRelease => "24 quarantine release",
            Invariant::CooldownEnd => "25 cooldown end",
            Invariant::OperatorRecovery => "26 operator recovery",
            Invariant::PoolRunner => "27 pool one slot a runner",
            Invariant::CancelHeard => "28 a cancel is heard",
            Invariant::Handoff => "29 release hands the slot on",
            Invariant::Protocol => "protocol",
        }
    }
}

/// A broken invariant, and the message naming what broke it.
pub type Breach = (Invariant, String);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub seed: u64,
    pub invariant: Invariant,
    /// Simulated ms since the seed began.
    pub at: Millis,
    pub message: String,
}

impl Violation {
    pub fn line(&self) -> String {
        format!(
            "VIOLATION seed {} invariant {} at {}: {}",
            self.seed,
            self.invariant.label(),
            fmt_t(T0 + self.at),
            self.message
        )
    }
}

/// The step a client is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    NotStarted,
    Acquire,
    /// The guarded work step: the guard verifies the holding, runs the work and renews.
    Hold,
    Release,
    /// Acquire's post step.
    Cleanup,
    /// A reaper run's one step: the `reap` operation.
    Reap,
    Done,
}

/// The work's process group under a guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    NotStarted,
    Running,
    /// The guard sent SIGTERM; the work is gone by the kill grace.
    Stopping,
    /// The work has exited (checked against its deadline then); the guard may still be waiting
    /// for the kill grace's SIGKILL or a renewal's outcome.
    Gone,
}

/// What the answer a driver fed its core for a write proves about that write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fed {
    /// `written` with this sha.
    Success(String),
    /// An answer that proves the write was not applied (4xx, or never sent).
    Definite(String),
    /// 5xx, a reset or a timeout: it may or may not have been applied.
    Unknown,
}

impl Fed {
    pub fn of(reply: &Reply) -> Fed {
        match reply {
            Reply::Written { sha, .. } => Fed::Success(sha.clone()),
            Reply::Transport { sent: false, .. } => Fed::Definite("not sent".into()),
            Reply::Transport { sent: true, .. } => Fed::Unknown,
            Reply::Http { status, .. } if *status >= 500 => Fed::Unknown,
            Reply::Http { status, .. } => Fed::Definite(format!("HTTP {status}")),
            other => Fed::Definite(format!("{other:?}")),
        }
    }
}

/// An Actions API answer a reaper's core was fed: about which attempt (or job), what it said,
/// and when GitHub answered.
#[derive(Clone, Debug)]
pub struct Told {
    pub run_id: u64,
    pub attempt: u32,
    /// Set when the question was about a job (`getJob`).
    pub job_id: Option<u64>,
    pub status: String,
    pub at: Millis,
}
