//! Every number leasehold decides by, in one place, each with what it is and why it has that
//! value. The tables built from them live beside: lease defaults and rules in `lease.rs`, retry
//! defaults and budgets in `retry.rs`, the classification of GitHub's answers in `classify.rs`,
//! poll spacing in `poll.rs`.

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
/// The longest wait after secondary limits in a row without `retry-after` (a minute, doubling
/// per limit: 1, 2, 4, 8, 16 minutes): GitHub asks for exponentially longer waits; a job held
/// longer than that is better failed with the reason.
pub const SECONDARY_MAX_WAIT_MS: Millis = 16 * 60_000;

/// The `date` header's resolution: GitHub's clock at an answer lies within this after it.
pub const DATE_RESOLUTION_MS: Millis = 1_000;

// --- Retry defaults (a request that failed transiently) ----------------------------------------

/// Attempts at one request, at most: five spread over the backoff outlast a brief outage.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// The first backoff (full jitter up to it, doubling per attempt): about GitHub's write spacing.
pub const DEFAULT_RETRY_BASE_MS: Millis = 1_000;
/// The longest backoff: half a minute keeps a waiting runner responsive.
pub const DEFAULT_RETRY_CAP_MS: Millis = 30_000;
/// The longest `retry-after` waited for within the attempt budget: a minute, GitHub's own advice.
pub const DEFAULT_SERVER_CEILING_MS: Millis = 60_000;
/// How long a streak of 401s may last before it is a refusal: a fresh token takes seconds to
/// become valid everywhere.
pub const DEFAULT_AUTH_GRACE_MS: Millis = 10_000;

// --- Lease policies ----------------------------------------------------------------------------

/// A minute, in milliseconds.
pub const MINUTE: Millis = 60_000;

/// Unconfigured lease: as long as a hosted-runner job may run (6 hours).
pub const UNCONFIGURED_TTL_MS: Millis = 6 * 60 * MINUTE;
/// Unconfigured renew interval: a third of the lease.
pub const UNCONFIGURED_RENEW_MS: Millis = 2 * 60 * MINUTE;
/// Unconfigured grace after expiry before a holding may be taken.
pub const UNCONFIGURED_GRACE_MS: Millis = 2 * MINUTE;
/// Unconfigured skew tolerance between judges' clocks.
pub const UNCONFIGURED_SKEW_MS: Millis = MINUTE;
/// Unconfigured time left at which the holder stops (its local deadline).
pub const UNCONFIGURED_MIN_REMAINING_MS: Millis = 5 * MINUTE;
/// The ceiling of any lease, renewals included: a week ([`MAX_LEASE_MINUTES`]).
pub const MAX_LEASE_CEILING_MS: Millis = MAX_LEASE_MINUTES * MINUTE;
/// Guarded lease: 15 minutes, renewed every 5 (one token keeps about 41 holders alive under
/// GitHub's 500 content-generating requests an hour).
pub const GUARDED_TTL_MS: Millis = 15 * MINUTE;
/// Guarded renew interval.
pub const GUARDED_RENEW_MS: Millis = 5 * MINUTE;
/// Guarded grace after expiry.
pub const GUARDED_GRACE_MS: Millis = MINUTE;
/// Guarded ceiling: a hosted job's 6 hours and half an hour to spare.
pub const GUARDED_MAX_TTL_MS: Millis = 6 * 60 * MINUTE + 30 * MINUTE;
/// Guarded skew tolerance.
pub const GUARDED_SKEW_MS: Millis = 30_000;
/// Guarded time left at which the holder stops.
pub const GUARDED_MIN_REMAINING_MS: Millis = 2 * MINUTE;
/// The shortest lease a policy may set: shorter leaves no room for a renewal's request.
pub const MIN_TTL_MS: Millis = 30_000;
/// The shortest renew interval: more often would spend the write budget on renewals.
pub const MIN_RENEW_MS: Millis = 10_000;
/// The longest grace: past an hour a dead holder blocks too long.
pub const MAX_GRACE_MS: Millis = 60 * MINUTE;
/// The largest skew tolerance: clocks further apart than this are broken, not skewed.
pub const MAX_SKEW_MS: Millis = 10 * MINUTE;

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
/// File writes in a row refused as conflicts while every one was planned on the same version,
/// read again after each refusal, before the refusal is taken for what it is: no newer version
/// exists, so something other than a compare-and-swap (a ruleset or a branch protection on the
/// state branch) refuses the write. More than one, so a read served from a lagging copy for a
/// moment is not mistaken for it.
pub const MAX_CONFLICTS_ON_ONE_VERSION: u32 = 4;
/// Backoff after a compare-and-swap conflict: full jitter up to this, doubling per conflict in
/// a row (at most [`CONFLICT_BACKOFF_MAX_DOUBLINGS`] times), up to [`CONFLICT_BACKOFF_CAP_MS`].
pub const CONFLICT_BACKOFF_MS: Millis = 2_000;
/// A write that is no arrival (a release, a renewal, a timeout) contends with the lock's other
/// holdings and with arrivals, which back off on their own: its conflict backoff starts at
/// [`CONFLICT_BACKOFF_MS`] scaled by the holdings, full from this many on (a matrix of 40
/// releasing together backs off as before; two holders of a capacity-2 lock start at a quarter).
pub const CONFLICT_BACKOFF_FULL_CROWD: usize = 8;
/// Doublings of the conflict backoff, at most (2 s · 2⁶ is past the cap anyway).
pub const CONFLICT_BACKOFF_MAX_DOUBLINGS: u32 = 6;
/// The longest conflict backoff: contenders spread over half a minute stay under 80 writes a
/// minute without holding a runner long.
pub const CONFLICT_BACKOFF_CAP_MS: Millis = 30_000;

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
/// The shortest poll interval of a waiter next in line while a release is due: it learns of its
/// admission within about this of the release, its reads conditional (a 304 costs nothing of
/// the primary limit). Twice a second: the next waiters of a lock of capacity 1 or 2 then reach
/// [`HANDOFF_POLLS_PER_SECOND`] together, and one waiter stays at 120 reads a minute.
pub const HANDOFF_POLL_MS: Millis = 500;
/// Those quick polls of all the next waiters of one lock together, at most this many a second:
/// a lock of large capacity spaces them further (four a second is 240 points a minute of the
/// 900 GitHub allows a REST endpoint).
pub const HANDOFF_POLLS_PER_SECOND: u64 = 4;
/// A waiter behind the next `capacity` polls at most once per this times its group's rank (the
/// second group every 2 s, the third every 3 s…): the groups behind of a capacity-2 lock poll
/// about 3.4 times a second together when all their admissions are due, less than its heads.
pub const QUEUE_POLL_MS: Millis = 1_000;
/// Hold times a waiter remembers (those it saw end), to tell when the next release is due.
pub const HOLD_SAMPLES: usize = 8;
/// Without hold times, a waiter next in line polls about this fraction of the time the oldest
/// holding has lasted (so the handoff latency is about a tenth of the hold), between
/// [`HANDOFF_POLL_MS`] and `poll-seconds`.
pub const HELD_POLL_DIVISOR: u64 = 10;
/// A waiter next in line wakes this long after the first instant a holding may be taken (the
/// `date` header has a resolution of a second).
pub const TAKEABLE_WAKE_MARGIN_MS: Millis = 1_000;

/// A version of the state is carried to the job's later steps (acquire's, for release) in an
/// environment variable named this and the lock's name.
pub const CARRY_ENV_PREFIX: &str = "LEASEHOLD_CARRY_";
/// The largest state carried: the variable is in the environment of every later step of the
/// job, and Linux refuses to start a process with one environment string over 128 KiB. A lock
/// of a few dozen entries fits; a larger one is read by release instead, as without a carry.
pub const CARRY_MAX_BYTES: usize = 32 * 1024;

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

// --- Names -------------------------------------------------------------------------------------

/// The longest lock name: it becomes a file name and part of a holder id.
pub const MAX_LOCK_NAME: usize = 80;
/// The longest owner or repository name part (GitHub's own limit is lower).
pub const MAX_REPOSITORY_PART: usize = 100;
/// The longest state branch name: well within git's and a URL's limits.
pub const MAX_BRANCH: usize = 200;
/// The longest holder-id suffix (characters): it is logged and stored in every holding.
pub const MAX_SUFFIX: usize = 200;
/// The longest workflow job id accepted.
pub const MAX_JOB_ID: usize = 100;
/// The longest claims namespace or key: it becomes part of a ref name.
pub const MAX_CLAIM_NAME: usize = 100;
/// The most keys in one family: they are written in one `updateRefs`.
pub const MAX_FAMILY: usize = 20;

// --- guard -------------------------------------------------------------------------------------

/// The shortest wait before the guard retries a renewal that failed.
pub const GUARD_RETRY_FLOOR_MS: Millis = 5_000;
/// After a failed renewal the guard retries after 1/this of the renew interval (or the floor):
/// soon, and well before the deadline.
pub const GUARD_RETRY_DIVISOR: Millis = 10;
/// `kill-grace-seconds`: its default and range (whole seconds): the runner itself allows 10 s.
pub const KILL_GRACE_SECONDS: (u64, u64, u64) = (10, 1, 300);
/// A signal the guard receives (the runner cancelling the job: SIGINT, then SIGTERM 7.5 s
/// later, then 2.5 s after that the runner kills the guard's process, not its child's group) is
/// passed to the child's group, and SIGKILL follows this long after it (or the kill grace, if
/// shorter), so the command never outlives the guard and the release after it.
pub const SIGNAL_KILL_GRACE_MS: Millis = 7_000;
/// A second signal (the runner's SIGTERM) brings that SIGKILL to this long after it.
pub const SECOND_SIGNAL_KILL_MS: Millis = 1_000;

// --- the cleanup command (actions/cleanup) ------------------------------------------------------

/// `timeout-seconds` of a cleanup command: its default and range (whole seconds). Five minutes
/// returns a licence or resets a device; an hour is the most a step should spend before it
/// releases, since the slot stays taken (and unproven) while the command runs.
pub const CLEANUP_COMMAND_TIMEOUT_SECONDS: (u64, u64, u64) = (300, 1, 3600);
/// A cleanup command of a cancelled job runs at most this long: GitHub force-stops a cancelled
/// job 5 minutes after the cancel, and the guard's stop (its kill grace, 10 s by default), this
/// deadline, its kill grace and the release's two minutes must fit in them, with room for the
/// processes to start (docs/github-semantics.md#cancellation).
pub const CANCELLED_CLEANUP_TIMEOUT_SECONDS: u64 = 120;
/// `blocked-exit-code`: the exit codes a cleanup command may reserve for "the resource is
/// blocked". 0 is success and 128 and above are how a shell reports a signal, so neither can
/// mean blocked.
pub const BLOCKED_EXIT_CODES: (u64, u64) = (1, 127);

/// Pages of comments a receipt check or post reads (100 comments each): the common case is one
/// page; an item with more than this many comments is not scanned to its end and the check
/// fails open (does the work) rather than spend its budget listing.
pub const RECEIPT_MAX_PAGES: u32 = 10;
/// The whole budget of a standalone pull-request head check (`check-head`): a job that wants
/// to stop before it even queues must not wait long on GitHub to learn it.
pub const CHECK_HEAD_BUDGET_MS: Millis = 30_000;
/// Pages of open issues an audit reads (100 each) to find its alert issue; past them the read
/// is ambiguous and the audit fails without touching any issue.
pub const AUDIT_MAX_PAGES: u32 = 10;
/// reaper-delivery: the latest scheduled reap run may be at most this old (GitHub's schedule
/// delivery is best effort: a five-minute cron is often late, rarely by half an hour).
pub const DEFAULT_REAPER_MAX_AGE_MINUTES: u64 = 30;
/// reaper-delivery: a reap run still running after this long is stuck.
pub const DEFAULT_REAPER_MAX_RUNNING_MINUTES: u64 = 15;
/// The largest either limit may be set to (a week).
pub const MAX_AUDIT_MINUTES: u64 = 10_080;
// --- resource pools ----------------------------------------------------------------------------

/// The most resources a pool declares: each is scanned for every waiter, in one write.
pub const MAX_RESOURCES: usize = 64;
/// The longest resource name, tag, partition atom or affinity key: each is written in the state
/// and in outputs.
pub const MAX_POOL_WORD: usize = 64;
/// The most tags on one resource, entries in one `prefer` or `requires`, atoms in one
/// partition or in `nonReservingAtoms`.
pub const MAX_POOL_LIST: usize = 32;
/// The longest `affinitySeconds`: a day (prompt caches last minutes).
pub const MAX_AFFINITY_SECONDS: u64 = 86_400;
/// The partition atom that names the global set: it intersects every partition.
pub const GLOBAL_PARTITION: &str = "*";
/// A usage reading older than this (by its own `observedAt`) is stale: never spare capacity.
pub const USAGE_STALE_MS: Millis = 45 * MINUTE;
/// A reading observed further than this in the future is not trusted either.
pub const USAGE_FUTURE_MS: Millis = 5 * MINUTE;
/// A resource whose reading leaves less than this of its window unused (basis points) is
/// exhausted.
pub const USAGE_HEADROOM_MARGIN_BP: u32 = 200;
/// A rate-limited resource backs off this long after its first hit without a hint…
pub const BACKOFF_BASE_MS: Millis = 15 * MINUTE;
/// …doubling per consecutive hit, up to this.
pub const BACKOFF_CAP_MS: Millis = 5 * 60 * MINUTE;

/// The longest cooldown a lifecycle may set (`lifecycle.cooldownSeconds`): a day, as an
/// affinity's. A resource that needs longer to recover is better quarantined and recovered.
pub const MAX_COOLDOWN_SECONDS: u64 = 86_400;

/// The most a waiter's wake-up at a cooldown's end is spread by (a uniform jitter from the
/// seeded generator), so the waiters of one lock do not all read at the same instant.
pub const COOLDOWN_WAKE_JITTER_MS: u64 = 1_000;
