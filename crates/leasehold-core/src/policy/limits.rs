//! Every number leasehold decides by, in one place, each with what it is and why it has that
//! value. The tables built from them live beside: lease defaults and rules in `lease.rs`, retry
//! defaults and budgets in `retry.rs`, the classification of GitHub's answers in `classify.rs`,
//! poll spacing in `poll.rs`. (The guard's retry floor, `RETRY_FLOOR_MS`, is still in
//! `ops/guard.rs`.)

use std::ops::RangeInclusive;

use crate::wire::time::Millis;

// --- Requests -------------------------------------------------------------------------------

/// A request leasehold lets run this long before it aborts it; GitHub itself kills requests
/// after 10 s.
pub const REQUEST_TIMEOUT_MS: Millis = 15_000;
/// The shortest time limit a request is given near a retry deadline: shorter would abort
/// requests GitHub answers in the ordinary course.
pub const MIN_REQUEST_TIMEOUT_MS: Millis = 1_000;
/// A backstop on the requests of one operation, whatever else happens (a bug, a pathological
/// pile-up): past it, the operation fails with `request-budget`.
pub const MAX_REQUESTS: u32 = 10_000;
/// Attempts at one Actions API question before it counts as unanswered: a question is evidence,
/// not the lock, and must not hold up the rest.
pub const PROBE_MAX_ATTEMPTS: u32 = 3;
/// GitHub's advice when a secondary limit gives no `retry-after`: wait at least a minute.
pub const SECONDARY_DEFAULT_WAIT_MS: Millis = 60_000;

// --- Writes and compare-and-swap ------------------------------------------------------------

/// Writes of one operation are at least this far apart: GitHub asks for content-generating
/// requests to be sent serially, about a second apart, and limits them to 80 a minute.
pub const MIN_WRITE_GAP_MS: Millis = 1_000;
/// Writes put off in a row, at most, because somebody else had just written the lock: enough to
/// let a burst settle, few enough that a lock that never goes quiet is still written.
pub const MAX_BUSY_DEFERRALS: u32 = 5;
/// Consecutive compare-and-swap conflicts before giving up: only a pathological pile-up gets
/// here, since every conflict means somebody else's write landed.
pub const MAX_CONFLICTS_IN_ROW: u32 = 60;
/// Backoff after a compare-and-swap conflict: full jitter up to this, doubling per conflict in
/// a row (at most [`CONFLICT_BACKOFF_MAX_DOUBLINGS`] times), up to [`CONFLICT_BACKOFF_CAP_MS`].
pub const CONFLICT_BACKOFF_MS: Millis = 2_000;
/// Doublings of the conflict backoff, at most (2 s · 2⁶ is past the cap anyway).
pub const CONFLICT_BACKOFF_MAX_DOUBLINGS: u32 = 6;
/// The longest conflict backoff: contenders spread over half a minute stay under 80 writes a
/// minute without holding a runner long.
pub const CONFLICT_BACKOFF_CAP_MS: Millis = 30_000;
/// The first time the state branch is found missing, wait up to this long and look again, so
/// that jobs starting together on a new lock repository usually create it once.
pub const BRANCH_CREATE_SPREAD_MS: Millis = 3_000;

// --- Reads ----------------------------------------------------------------------------------

/// Re-reads allowed for stale answers, spaced [`STALE_REREAD_MS`] apart: 45 × 2 s outlasts
/// GitHub's contents cache (`max-age=60`) with room to spare.
pub const MAX_STALE_READS: u32 = 45;
/// Spacing of the re-reads after a stale answer.
pub const STALE_REREAD_MS: Millis = 2_000;

// --- Lock documents -------------------------------------------------------------------------

/// The most holders a lock may ever have (the capacity range is 1 to this).
pub const MAX_CAPACITY: u32 = 64;
/// A queue longer than this is refused as damaged. It also keeps the file well under the 1 MB
/// the contents API serves inline (an entry is about 400 bytes).
pub const MAX_QUEUE: usize = 1_000;
/// Capacity when there is no config file: a mutex, which can never over-run a resource.
pub const DEFAULT_CAPACITY: u32 = 1;
/// How long a config read stays fresh. Acquire re-reads it after this, also while waiting, so a
/// raised capacity unblocks waiters that are already queued.
pub const CONFIG_TTL_MS: Millis = 5 * 60 * 1000;
/// The branch the lock state lives on, unless `state-branch` names another.
pub const DEFAULT_STATE_BRANCH: &str = "leasehold-state";

// --- acquire ---------------------------------------------------------------------------------

/// `timeout-minutes` unset: an hour in the queue, then `timeout`.
pub const DEFAULT_TIMEOUT_MINUTES: u64 = 60;
/// `timeout-minutes` at most: a day; a runner held longer than that waiting is a mistake, not a
/// queue.
pub const MAX_TIMEOUT_MINUTES: u64 = 24 * 60;
/// `poll-seconds` unset: the head of the queue polls every 10 s.
pub const DEFAULT_POLL_SECONDS: u64 = 10;
/// `poll-seconds` accepted.
pub const POLL_SECONDS_RANGE: RangeInclusive<u64> = 1..=600;
/// `lease-minutes` at most: a week, the ceiling of any lease.
pub const MAX_LEASE_MINUTES: u64 = 7 * 24 * 60;
/// The longest a waiter far back in the queue sleeps between polls.
pub const MAX_POLL_MS: Millis = 120_000;
/// Poll jitter: up to 1/this of the interval (25%), so waiters that started together drift apart.
pub const POLL_JITTER_DIVISOR: u64 = 4;
/// A waiter next in line wakes this long after the first instant a holding may be taken (the
/// `date` header has a resolution of a second).
pub const TAKEABLE_WAKE_MARGIN_MS: Millis = 1_000;

// --- release ---------------------------------------------------------------------------------

/// `release-deadline-seconds` unset: two minutes of retries, half of them to reach the state.
pub const DEFAULT_RELEASE_DEADLINE_SECONDS: u64 = 120;
/// `release-deadline-seconds` accepted besides 0 (attempt-bounded).
pub const RELEASE_DEADLINE_SECONDS_RANGE: RangeInclusive<u64> = 30..=3600;
/// How long the post step's cleanup may retry: the explicit release step is the primary path.
pub const CLEANUP_DEADLINE_SECONDS: u64 = 30;

// --- reap ------------------------------------------------------------------------------------

/// `scan-deadline-seconds` unset: eight minutes of questions, inside a ten-minute job.
pub const DEFAULT_SCAN_SECONDS: u64 = 480;
/// `scan-deadline-seconds` accepted.
pub const SCAN_SECONDS_RANGE: RangeInclusive<u64> = 30..=3600;
/// Time left after the scan deadline for the last checkpoint write (and its read-back).
pub const REAP_WRITE_BUDGET_MS: Millis = 60_000;
/// Changes recorded per checkpoint write, at most: a partial run keeps what it proved.
pub const REAP_CHECKPOINT_EVERY: usize = 10;
/// Locks one reap may scan.
pub const MAX_REAP_LOCKS: usize = 100;
/// How recent an "active" answer must be for the reaper to renew a holding on it.
pub const RENEW_EVIDENCE_MAX_AGE_MS: Millis = 60_000;

// --- The retry knobs (`api-*` inputs) --------------------------------------------------------

/// `api-max-attempts` accepted.
pub const API_MAX_ATTEMPTS_RANGE: RangeInclusive<u64> = 1..=100;
/// `api-retry-max-ms` accepted.
pub const API_RETRY_MAX_MS_RANGE: RangeInclusive<u64> = 1_000..=300_000;
/// `api-retry-base-ms` accepted.
pub const API_RETRY_BASE_MS_RANGE: RangeInclusive<u64> = 100..=60_000;

// --- slots -----------------------------------------------------------------------------------

/// Pages of a slot listing read, at most, before the allocation stops: GitHub has been seen to
/// answer `matching-refs` with every ref at once, and documents a `Link` header for more; a
/// listing that still names a next page after this many is not trusted to end, and an
/// allocation that cannot see the whole namespace cannot prove its number free.
pub const SLOT_MAX_PAGES: u32 = 100;
/// Numbers tried, at most, in one allocation (each a create answered "Reference already
/// exists"): one more than every contender that created a slot between this allocation's
/// listing and its create; past this many, something creates slots faster than this walks.
pub const SLOT_MAX_ATTEMPTS: u32 = 64;
/// A slot number is written with at least this many digits (`acct05`), zero-padded.
pub const SLOT_MIN_DIGITS: usize = 2;
/// The highest slot number leasehold allocates (it is still read past this, to fail closed).
pub const SLOT_MAX_NUMBER: u64 = 999_999_999_999;
/// The longest slot prefix: a namespace (100) and a prefix with its number stay well inside
/// git's and GitHub's ref name limits.
pub const SLOT_MAX_PREFIX: usize = 64;
