//! The shapes of the documents leasehold keeps on GitHub: the lock state (`locks/<lock>.json` on
//! the state branch) and what it records of the reviewed config. Plain data, as written; what a
//! document means, how it is read and checked, lives in `store/`; who is admitted, in
//! `admission/`; the default numbers of a lease, in `policy/`.
//!
//! Operators read these files, so they are plain, pretty-printed JSON with readable times.
//! Unknown fields are refused: rewriting would drop them.

use serde::Serialize;

use super::lifecycle::ReservationKind;
use super::pool::{PoolBooks, PoolConfig, PoolRequest, Seat};
use super::time::{self, Millis};
use super::words::{ChangeAction, RemovalReason};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockState {
    pub schema: u64,
    pub lock: String,
    /// Incremented by every write, so no two versions of the file have the same content (and
    /// so the same blob sha): a compare-and-swap on the sha can never be fooled by a state
    /// that went away and came back (ABA).
    pub revision: u64,
    /// The last fence handed out. Only ever increases over the lock's life.
    pub fence: u64,
    /// The capacity last read from the reviewed config, and when; lets acquire skip the config
    /// read while it is fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigRecord>,
    pub holders: Vec<Holder>,
    pub queue: Vec<QueueEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change: Option<Change>,
    /// A pool's books (usage readings, backoffs, affinity marks); absent on a plain lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolBooks>,
    /// Schema 2: the slots kept after their holders left (cooldowns, quarantines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<Reservation>,
    /// Schema 2: the lock's one incident, while it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident: Option<Incident>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigRecord {
    pub capacity: u32,
    /// The lease policy the config sets, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeasePolicy>,
    /// Blob sha of the config file, or absent when there was no config file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    #[serde(with = "time::rfc3339")]
    pub read_at: Millis,
    /// The pool the config declares (`resources`); absent on a plain lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolConfig>,
    /// The lifecycle the config turns on (`lifecycle`); absent when it is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<LifecycleConfig>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Holder {
    pub holder_id: String,
    /// Unique per claim: tells this acquire's holding from any other with the same holder id.
    pub nonce: String,
    /// Fencing token: strictly increasing in admission order over the lock's life.
    pub fence: u64,
    pub run: RunIdentity,
    #[serde(with = "time::rfc3339")]
    pub acquired_at: Millis,
    /// After this (plus the lock's grace and skew tolerance, by GitHub's clock) any job may
    /// remove the holding. A renewal moves it, never past `ceilingAt`.
    #[serde(with = "time::rfc3339")]
    pub expires_at: Millis,
    /// The lease a renewal grants.
    pub lease_ms: u64,
    /// The hard ceiling: `acquiredAt` plus the lock's maximum lease.
    #[serde(with = "time::rfc3339")]
    pub ceiling_at: Millis,
    /// When the job that holds it made its claim (enqueued, or took the holding over): its job
    /// was running then. The reaper does not take a job that completed before it for this
    /// holding's job.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::rfc3339_opt"
    )]
    pub claimed_at: Option<Millis>,
    /// The resource and partition a pool's holding took; absent on a plain lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<Seat>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueEntry {
    pub holder_id: String,
    pub nonce: String,
    pub run: RunIdentity,
    /// The lease this waiter asked for, so whoever admits it can set `expiresAt`.
    pub lease_ms: u64,
    #[serde(with = "time::rfc3339")]
    pub enqueued_at: Millis,
    /// When the job that waits made its claim (enqueued, or took the entry over).
    #[serde(with = "time::rfc3339")]
    pub last_seen_at: Millis,
    /// What a pool's waiter asks for; absent on a plain lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolRequest>,
}

/// Who wrote the current version, and why: for the operator reading the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Change {
    #[serde(with = "time::rfc3339")]
    pub at: Millis,
    pub by: String,
    pub action: ChangeAction,
    /// Holdings this change removed because their lease had run out, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Removal>,
}

/// A holding removed by somebody other than its holder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Removal {
    pub holder_id: String,
    pub fence: u64,
    #[serde(with = "time::rfc3339")]
    pub expires_at: Millis,
    pub reason: RemovalReason,
}

/// Where a holder comes from. Recorded in the state so an operator (and later, the reaper) can
/// find the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunIdentity {
    pub repository: String,
    pub run_id: u64,
    pub run_attempt: u32,
    pub job: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub runner_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// The job's numeric id in the Actions API, when acquire could identify it (by its check
    /// run id, or as the one active job of this name on this runner); the reaper then judges
    /// the job rather than the run, and acquire tells matrix cells apart by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<u64>,
}

/// A lease policy, in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct LeasePolicy {
    /// How long a holding (or a renewal) lasts.
    pub ttl_ms: Millis,
    /// How often a guard renews.
    pub renew_ms: Millis,
    /// How long past `expiresAt` a holding still stands before another job may remove it.
    pub grace_ms: Millis,
    /// The hard ceiling: no renewal reaches past `acquiredAt + maxTtl`.
    pub max_ttl_ms: Millis,
    /// The clock disagreement tolerated between any two jobs (after correcting by GitHub's clock).
    pub skew_ms: Millis,
    /// The holder stops its work when less than this is left of its lease without a proven renewal.
    pub min_remaining_ms: Millis,
    /// Whether the reaper renews a holding whose job it proved still running (within the
    /// ceiling), so an unguarded holder that is alive keeps its slot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reaper_renews: bool,
}

/// The reviewed `lifecycle` block, as the state records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LifecycleConfig {
    pub cooldown_seconds: u64,
    /// Words a `reason` may be beside the built-in ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// A slot kept after its holder left. Its `id` never changes; a recovered quarantine becomes a
/// new cooldown with an id of its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reservation {
    pub id: String,
    pub kind: ReservationKind,
    /// The holder that left it, with the fence its holding had.
    pub holder_id: String,
    pub fence: u64,
    /// The run (and, in it, the runner) that held the resource.
    pub run: RunIdentity,
    /// When it was made, by GitHub's clock.
    #[serde(with = "time::rfc3339")]
    pub at: Millis,
    /// A cooldown's end: the slot is free after it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::rfc3339_opt"
    )]
    pub ends_at: Option<Millis>,
    /// The report's reason word, when it gave a valid one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What made it (`release`, `expired`, `cleanup`, `reaper`, `recover`, `reclaim`).
    pub by: String,
}

/// The lock's one incident: a holder reported its resource blocked. No one is admitted while
/// it stands; holders finish. Only an operator's `recover-incident` ends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Incident {
    pub id: String,
    pub holder_id: String,
    pub fence: u64,
    pub run: RunIdentity,
    #[serde(with = "time::rfc3339")]
    pub at: Millis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
