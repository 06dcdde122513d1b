//! One seed's world: the simulated GitHub ([`Store`]), a virtual clock, and the jobs whose
//! clients drive the real `leasehold-core` operations exactly as `actions/lib/driver.mjs` does:
//! feed `start`; perform each request command and feed its reply; sleep until `untilMs` and feed
//! `timer` (or, once, `cancel` when the job is being cancelled); stop at `finish`. A job runs
//! the steps of the documented workflow: acquire; when acquired, the protected work under a guard
//! that renews the lease (`src/guard.rs`); the release step (`if: always()`, so also after a
//! failed, timed-out or cancelled acquire, or a failed guarded step); then acquire's post step,
//! the `cleanup` operation (`post-if: always()`).
//!
//! Everything happens in a discrete-event loop ordered by (simulated time, sequence number), and
//! every random choice is drawn from the seed's [`SimRng`] in that order: a seed replays exactly.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;

use leasehold_core::limits::DEFAULT_SCAN_SECONDS;
use leasehold_core::time::Millis;
use leasehold_core::{
    Call, Command, Entropy, Event, LeasePolicy, LockState, Operation, OperationKind, Outcome,
    Reply, ResultWord, SleepReason,
};

use crate::check::{Invariant, Violation};
use crate::fault::{Fault, Profile, REQUEST_FAULTS};
use crate::guard::{Guard, GuardMode};
use crate::planted::PlantedBug;
use crate::reaper::ReaperParams;
use crate::report::Counters;
use crate::rng::SimRng;
use crate::store::{http, http_date, Store};
use leasehold_core::guard::Phase;
use leasehold_github_model::{Job, Timing};

/// Real (GitHub's) time at which every simulation starts: 2027-01-15.
pub const T0: Millis = 1_800_000_000_000;
pub const LOCK: &str = "sim";
pub const BRANCH: &str = "leasehold-state";
pub const REPOSITORY: &str = "octo/app";
/// A hard cap on events per seed, far above any settled run: a runaway seed stops here and is
/// reported as a liveness violation.
pub const MAX_EVENTS: u64 = 3_000_000;
/// Reruns start this long after the decision to rerun (an operator or an automation reacting).
pub const RERUN_DELAY_MS: (Millis, Millis) = (5_000, 60_000);
/// Leases the simulated jobs ask for (`lease-minutes`). At least 6: below the lock policy's
/// `minRemaining` (5 minutes unconfigured) the lease's local deadline falls before admission.
/// The longest pause is twice the longest lease. On a lock whose config sets a lease, most jobs
/// ask for none (the policy's ttl, 2 to 5 minutes, applies).
pub const MIN_LEASE_MINUTES: u64 = 6;
pub const MAX_LEASE_MINUTES: u64 = 8;
/// A pause lasts at least this long (and at least the job's lease), so that in the default
/// budget a resumed process meets no fault (faults stop within 4 minutes).
pub const MIN_PAUSE_MS: Millis = 6 * 60_000;
/// The longest pause: twice the longest lease.
pub const MAX_PAUSE_MS: Millis = 2 * MAX_LEASE_MINUTES * 60_000;
/// The guard's kill grace (`kill-grace-seconds`) the jobs draw from.
pub const KILL_GRACE_MS: [Millis; 4] = [1_000, 5_000, 10_000, 30_000];
/// Work lengths (the longest per seed) on a lock without and with a lease policy: with one, the
/// work often outlasts several renewals and sometimes the ceiling (`maxTtl`, up to 20 minutes).
pub const HOLD_MAX_MS: [Millis; 5] = [0, 2_000, 10_000, 30_000, 90_000];
pub const LEASED_HOLD_MAX_MS: [Millis; 4] = [30_000, 180_000, 480_000, 1_200_000];
/// The expiry sweep (a later job that comes once every job has ended with an abandoned holding
/// in the lock) starts within this long after the abandoned holdings can be taken.
pub const SWEEP_SPREAD_MS: Millis = 30_000;
/// `poll-seconds` of the jobs: 1 to 5, or 5 to 15 on a lock whose works run for minutes
/// (waiters poll all the while; the action's default is 10).
pub const MAX_POLL_SECONDS: u64 = 5;
pub const LONG_WORK_POLL_SECONDS: (u64, u64) = (5, 15);
/// An answer processed this long after GitHub sent it was held up in a paused process (no
/// request takes this long).
pub const LATE_ANSWER_MS: Millis = 20_000;
/// GitHub notices a runner that died (SIGKILL, a lost machine) this long after, and completes
/// its job attempt (`failure`); an operator's rerun cancels it first when it comes sooner.
pub const LOST_RUNNER_NOTICE_MS: (Millis, Millis) = (60_000, 600_000);
/// Job ids in the Actions API: each job attempt gets `JOB_ID_BASE + its client index`.
pub const JOB_ID_BASE: u64 = 20_000_000_000;

/// What a run of the simulation is asked to do, beyond the seed.
#[derive(Clone, Debug, Default)]
pub struct SimConfig {
    /// Jobs (workflow runs) per seed; drawn from the seed (2 to 6) when `None`.
    pub clients: Option<usize>,
    pub planted: Option<PlantedBug>,
    pub trace: bool,
    /// Faults may last up to [`LONG_FAULTS_UNTIL_MS`](crate::fault::LONG_FAULTS_UNTIL_MS),
    /// past the longest pause (`--long-faults`).
    pub long_faults: bool,
}

/// How the state branch looks when the seed begins.
#[derive(Clone, Copy, Debug)]
pub enum Start {
    NoBranch,
    EmptyBranch,
    /// A state file from earlier use: no holders, no queue, counters already advanced.
    Existing {
        revision: u64,
        fence: u64,
    },
}

/// Everything about a seed's world that is fixed before it runs.
#[derive(Clone, Debug)]
pub struct Params {
    /// The capacity in force (1 when there is no config file).
    pub capacity: u32,
    pub config_file: bool,
    /// The lease policy the config file sets (its `lease` block), if any; every drawn policy
    /// passes the core's own validation (`config::parse_config`).
    pub lease: Option<LeasePolicy>,
    pub runs: usize,
    pub start: Start,
    pub start_spread_ms: Millis,
    pub hold_max_ms: Millis,
    /// The range of `poll-seconds` the jobs use.
    pub poll_min_s: u64,
    pub poll_max_s: u64,
    pub profile: Profile,
    /// The scheduled reaper, in seeds that have one.
    pub reaper: Option<ReaperParams>,
    /// Which jobs pass `record-job-id: true` to acquire: none, every one, or about half.
    pub record_job_id: RecordJobId,
    /// Liveness bound, ms after T0: by then every job has ended and the lock is empty.
    pub bound_ms: Millis,
}

/// Which jobs record their job id (acquire's `record-job-id`), so the reaper judges their
/// entries by the job rather than by the run attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordJobId {
    None,
    All,
    Some,
}

impl Params {
    fn draw(rng: &mut SimRng, cfg: &SimConfig) -> Self {
        let leased = rng.below(2) == 0;
        let config_file = leased || rng.below(4) != 0;
        let capacity = if config_file {
            rng.between(1, 3) as u32
        } else {
            1
        };
        let lease = leased.then(|| draw_policy(rng, capacity));
        let runs = cfg.clients.unwrap_or_else(|| rng.between(2, 6) as usize);
        let start = match rng.below(10) {
            0..=2 => Start::NoBranch,
            3..=4 => Start::EmptyBranch,
            _ => Start::Existing {
                revision: rng.between(1, 500),
                fence: rng.between(0, 200),
            },
        };
        let start_spread_ms = if rng.below(4) == 0 {
            rng.between(0, 1_000)
        } else {
            rng.between(0, 60_000)
        };
        let hold_max_ms = if lease.is_some() {
            rng.pick(&LEASED_HOLD_MAX_MS)
        } else {
            rng.pick(&HOLD_MAX_MS)
        };
        let profile = Profile::draw(rng, cfg.long_faults);
        let (poll_min_s, poll_max_s) = if hold_max_ms > HOLD_MAX_MS[HOLD_MAX_MS.len() - 1] {
            LONG_WORK_POLL_SECONDS
        } else {
            (1, MAX_POLL_SECONDS)
        };
        let poll_ms = poll_max_s * 1_000;
        let grace_max = KILL_GRACE_MS[KILL_GRACE_MS.len() - 1];
        // A holding left behind is freed by a rerun (within 60 s of its crash) or, with a lease
        // policy and nobody rerunning the job, by expiry: past its lease (at most the longest a
        // job asks for, within the ceiling) plus grace and skew, within a poll of the next
        // waiter (who wakes when the holding can be taken).
        let expiry_ms = lease.as_ref().map_or(0, |p| {
            Self::longest_lease(p) + p.grace_ms + p.skew_ms + poll_ms * 5 / 4 + 10_000
        });
        let per_job =
            hold_max_ms + grace_max + 3 * poll_ms + RERUN_DELAY_MS.1.max(expiry_ms) + 30_000;
        // The expiry sweeps: abandoned waiters' entries are admitted and expire in turn, one
        // round (a sweep job: a wait of up to 30 s, an acquire, a work of up to 10 s, a release)
        // per abandoned run at most, and one for the holdings.
        let sweep_ms = if lease.is_some() {
            (runs as u64 + 1) * (expiry_ms + SWEEP_SPREAD_MS + 10_000 + grace_max + 60_000)
        } else {
            0
        };
        let mut bound_ms = profile.until.max(start_spread_ms)
            + MAX_PAUSE_MS
            + 180_000
            + 2 * runs as u64 * per_job
            + sweep_ms;
        // Drawn after everything above, so that a seed's other draws keep their order.
        let reaper = (rng.below(2) == 0).then(|| ReaperParams::draw(rng));
        let mut lease = lease;
        if let (Some(p), Some(_)) = (lease.as_mut(), &reaper) {
            // The lock's config says `"reaperRenews": true` in half the leased seeds with a reaper.
            p.reaper_renews = rng.below(2) == 0;
        }
        let record_job_id = match rng.below(3) {
            0 => RecordJobId::None,
            1 => RecordJobId::All,
            _ => RecordJobId::Some,
        };
        if let Some(r) = &reaper {
            // A crashed job nobody reruns is completed by GitHub within the lost-runner delay,
            // and its entries are reaped within the reaper's bound after that; the last reap,
            // after everything settled, ends within a reap of its tick.
            bound_ms += LOST_RUNNER_NOTICE_MS.1 + 2 * r.removal_bound_ms();
        }
        Params {
            capacity,
            config_file,
            lease,
            runs,
            start,
            start_spread_ms,
            hold_max_ms,
            poll_min_s,
            poll_max_s,
            profile,
            reaper,
            record_job_id,
            bound_ms,
        }
    }

    /// The longest lease a holding of this lock gets: the policy's ttl, or what a job asks for
    /// with `lease-minutes`, within the ceiling.
    pub fn longest_lease(p: &LeasePolicy) -> Millis {
        p.ttl_ms.max((MAX_LEASE_MINUTES * 60_000).min(p.max_ttl_ms))
    }

    /// The lock's config file, as the store serves it.
    pub fn config_text(&self) -> Option<String> {
        if !self.config_file {
            return None;
        }
        Some(match &self.lease {
            None => format!("{{\"capacity\": {}}}\n", self.capacity),
            Some(p) => format!(
                "{{\"capacity\": {}, \"lease\": {}}}\n",
                self.capacity,
                lease_block(p)
            ),
        })
    }

    pub fn describe(&self) -> String {
        let p = &self.profile;
        let active: Vec<String> = REQUEST_FAULTS
            .iter()
            .zip(p.request_ppm)
            .filter(|(_, ppm)| *ppm > 0)
            .map(|(f, ppm)| format!("{:?}={}", f, ppm))
            .collect();
        let config = match (&self.lease, self.config_file) {
            (Some(p), _) => format!("config file with lease {}", lease_block(p)),
            (None, true) => "config file, no lease".into(),
            (None, false) => "no config file".into(),
        };
        let reaper = match &self.reaper {
            Some(r) => format!(
                "reaper every {} ms (scan deadline {} s)",
                r.interval_ms, r.scan_s
            ),
            None => "no reaper".into(),
        };
        format!(
            "capacity {} ({}), {} runs, start {:?}, starts within {} ms, work up to {} ms, polls every {}-{} s; {reaper}, record-job-id {:?}; faults until +{} ms \
             [{}; not-sent={} late={} token-lag={} stale-window={}ms pause={} zombie={} crash-after-write={} \
             crash-in-flight={} crash-in-hold={} rerun-ok={} no-rerun={} actions-refused={} offset<={}ms drift<={}ppm]; liveness bound +{} ms",
            self.capacity,
            config,
            self.runs,
            self.start,
            self.start_spread_ms,
            self.hold_max_ms,
            self.poll_min_s,
            self.poll_max_s,
            self.record_job_id,
            p.until,
            active.join(" "),
            p.not_sent_ppm,
            p.late_arrival_ppm,
            p.token_lag,
            p.stale_window_ms,
            p.pause_ppm,
            p.zombie_ppm,
            p.crash_after_write_ppm,
            p.crash_in_flight_ppm,
            p.crash_in_hold_ppm,
            p.rerun_ok_ppm,
            if self.lease.is_some() || self.reaper.is_some() { p.no_rerun_ppm } else { 0 },
            p.actions_refusal_ppm,
            p.max_offset_ms,
            p.max_drift_ppm,
            self.bound_ms,
        )
    }
}

/// A lease policy for the lock's config: a ttl of 2 to 5 minutes, renewed at most every half of
/// it; a skew tolerance of 5 s to a minute, which covers the simulated clocks once the core has
/// corrected them by GitHub's `date` headers (what is left: the header's one-second resolution,
/// a request's latency, and at most 2000 ppm of drift over a lease, about a second); a grace of
/// up to a minute; `minRemaining` below the renew interval; a ceiling (`maxTtl`) of one to four
/// leases. The draw keeps every rule of `LeasePolicy::validate` and is checked by the core's own
/// config parser; a policy it refused would be drawn again (a test shows none is).
pub fn draw_policy(rng: &mut SimRng, capacity: u32) -> LeasePolicy {
    loop {
        let policy = draw_policy_once(rng);
        let text = format!(
            "{{\"capacity\": {capacity}, \"lease\": {}}}",
            lease_block(&policy)
        );
        if let Ok(config) = leasehold_core::parse_config("locks/sim.config.json", &text) {
            if config.lease.as_ref() == Some(&policy) {
                return policy;
            }
        }
    }
}

/// One draw of [`draw_policy`], not yet checked.
pub fn draw_policy_once(rng: &mut SimRng) -> LeasePolicy {
    let ttl = rng.between(120, 300);
    let skew = rng.pick(&[5, 10, 30, 60]);
    let grace = rng.pick(&[0, 10, 30, 60]);
    // RenewTickFits: renew + 15 s (a request) + skew <= ttl - minRemaining.
    let renew = rng.between(20, (ttl / 2).min(ttl - 15 - skew));
    let min_remaining = rng.between(0, (renew - 1).min(ttl - 15 - skew - renew));
    let max_ttl = ttl * rng.between(1, 4);
    let s = |secs: u64| secs * 1_000;
    LeasePolicy {
        ttl_ms: s(ttl),
        renew_ms: s(renew),
        grace_ms: s(grace),
        max_ttl_ms: s(max_ttl),
        skew_ms: s(skew),
        min_remaining_ms: s(min_remaining),
        reaper_renews: false,
    }
}

/// The `lease` block of the config file, in seconds (with `"reaperRenews": true` when set).
pub fn lease_block(p: &LeasePolicy) -> String {
    format!(
        "{{\"ttlSeconds\": {}, \"renewSeconds\": {}, \"graceSeconds\": {}, \"maxTtlSeconds\": {}, \"skewSeconds\": {}, \"minRemainingSeconds\": {}{}}}",
        p.ttl_ms / 1_000,
        p.renew_ms / 1_000,
        p.grace_ms / 1_000,
        p.max_ttl_ms / 1_000,
        p.skew_ms / 1_000,
        p.min_remaining_ms / 1_000,
        if p.reaper_renews { ", \"reaperRenews\": true" } else { "" }
    )
}

/// A client's wall clock: offset from GitHub's and drifting, read as `now` by its core.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub offset_ms: i64,
    pub drift_ppm: i64,
}

impl Clock {
    pub fn local(&self, t: Millis) -> Millis {
        let elapsed = i128::from(t - T0);
        (i128::from(t)
            + i128::from(self.offset_ms)
            + elapsed * i128::from(self.drift_ppm) / 1_000_000) as Millis
    }

    /// The first real time (from the seed's start on) at which this clock reads `target` or
    /// later, even in the past (the clock is monotonic).
    pub fn real_of(&self, target: Millis) -> Millis {
        let need = i128::from(target) - i128::from(T0) - i128::from(self.offset_ms);
        let mut t = (i128::from(T0) + need * 1_000_000 / (1_000_000 + i128::from(self.drift_ppm)))
            .max(i128::from(T0)) as Millis;
        while self.local(t) < target {
            t += 1;
        }
        while t > T0 && self.local(t - 1) >= target {
            t -= 1;
        }
        t
    }

    /// The first real time, not before `now`, at which this clock reads `target` or later.
    pub fn real_at(&self, target: Millis, now: Millis) -> Millis {
        let here = self.local(now);
        if here >= target {
            return now;
        }
        let need = i128::from(target - here);
        let mut t = (i128::from(now) + need * 1_000_000 / (1_000_000 + i128::from(self.drift_ppm)))
            as Millis;
        t = t.max(now);
        while self.local(t) < target {
            t += 1;
        }
        while t > now && self.local(t - 1) >= target {
            t -= 1;
        }
        t
    }
}

/// Per-run settings, the same for every attempt (they come from the workflow file).
#[derive(Clone, Debug)]
pub struct JobSettings {
    pub poll_s: u64,
    pub timeout_min: u64,
    /// `lease-minutes`; none: the lock's policy decides (its ttl).
    pub lease_min: Option<u64>,
    /// How long the protected work runs if nothing stops it.
    pub hold_ms: Millis,
    pub deadline_s: Option<u64>,
    /// `release-on-exit` of acquire's post step.
    pub release_on_exit: bool,
    /// How the guard starts, its kill grace (`kill-grace-seconds`), and whether its renewals
    /// name the holder id (`holder-id`, acquire's output) or let the core rebuild it.
    pub guard_mode: GuardMode,
    pub kill_grace_ms: Millis,
    pub renew_names_holder: bool,
    /// The guard's renewals pass `if-due: true` (an embedder starting from acquire's lease; the
    /// guard action never does).
    pub renew_if_due: bool,
    /// Acquire's `record-job-id`: look the job's id up in the Actions API first.
    pub record_job_id: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    NotStarted,
    Acquire,
    /// The guarded work step: the guard verifies the holding, runs the work and renews
    /// (`Client::guard`).
    Hold,
    Release,
    /// Acquire's post step.
    Cleanup,
    /// A reaper run's one step: the `reap` operation.
    Reap,
    Done,
}

/// What a client is: a job of the workflow that uses the lock, or a run of the scheduled reaper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Job,
    Reaper,
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

/// One job attempt: a runner executing acquire, the protected work, then release.
pub struct Client {
    pub run: usize,
    pub attempt: u32,
    pub holder_id: String,
    pub runner: String,
    pub clock: Clock,
    pub stage: Stage,
    pub op: Option<Operation>,
    /// Real time the current operation started.
    pub op_started: Millis,
    /// Bumped at every new operation (and crash): answers to an abandoned request are dropped.
    pub op_gen: u64,
    /// The job is being cancelled (SIGINT), and whether its acquire has been told.
    pub cancelled: bool,
    pub cancel_told: bool,
    /// Waiting for a timer (a `sleep` command).
    pub sleeping: bool,
    /// The current release (or cleanup) read a version in which an earlier run attempt held or
    /// waited under this holder id (named in an invariant-4 violation, to explain it).
    pub read_predecessor: bool,
    /// Bumped whenever a pending timer must be ignored (new sleep, crash).
    pub epoch: u64,
    pub paused_until: Millis,
    /// Set when a rerun of this run started while this attempt was still alive.
    pub zombie_since: Option<Millis>,
    pub crashed: bool,
    /// This attempt's acquire nonce.
    pub nonce: String,
    /// The fence this client believes it holds (from acquire's finish until release starts, or
    /// until the deadline of its last proven lease passes, or a renewal proves it lost).
    pub holding: Option<u64>,
    /// How old (ms since GitHub sent it) the answer the last acquire finished on was, when that
    /// is longer than a request may take: a paused process read it late (named in an invariant
    /// 4 or 5 violation, to explain it).
    pub stale_answer_ms: Option<Millis>,
    /// `stale_answer_ms` of the answer the acquire finished `acquired` on.
    pub acquired_late: Option<Millis>,
    /// Real time at which the last proven lease view says to stop the protected work
    /// (`lease.localDeadline` on the client's clock): from acquire's outcome, then from each
    /// renewal the guard saw end `renewed`.
    pub belief_until: Option<Millis>,
    /// Which outcome proved that lease (named in an invariant-5 violation).
    pub belief_from: String,
    /// The guard of the work step (in `Stage::Hold`).
    pub guard: Option<Guard>,
    /// Bumped whenever a work step starts or ends: its pending events are then ignored.
    pub hold_gen: u64,
    /// Every pause of the client's process: (from, until), real time.
    pub pauses: Vec<(Millis, Millis)>,
    pub token_ready_at: Millis,
    /// The newest version of the state the current operation has been shown: served in a read
    /// answer it was fed, or made by a write it was told succeeded (invariant 9).
    pub seen_version: Option<usize>,
    /// Send times of the last requests (invariant 8).
    pub recent_sends: std::collections::VecDeque<(Millis, &'static str)>,
    pub acquire_result: Option<ResultWord>,
    /// The revision of the state acquire finished on, which the driver saves for acquire's post
    /// step (`min-revision`: older answers are a stale cache to it).
    pub acquire_revision: Option<u64>,
    pub release_result: Option<ResultWord>,
    pub role: Role,
    /// This job attempt's id in the Actions API.
    pub job_id: u64,
    /// When the entry with this attempt's nonce last appeared in the committed state (for the
    /// reaper's liveness bound).
    pub entry_since: Millis,
    /// Real time the current operation was last fed an answer carrying a `date` header (its
    /// clock estimate is from then).
    pub last_dated_at: Option<Millis>,
    /// The last state write the current operation sent: its content and the
    /// `last_dated_at` when it was planned (a write repeated as is after a rate limit was
    /// planned when it was first sent).
    pub last_write: Option<(String, Option<Millis>)>,
    /// The Actions API answers this operation was fed (reapers only).
    pub told: Vec<Told>,
}

impl Client {
    pub fn live(&self) -> bool {
        self.stage != Stage::Done
    }

    pub fn is_reaper(&self) -> bool {
        self.role == Role::Reaper
    }
}

pub struct Run {
    pub run_id: u64,
    pub settings: JobSettings,
    pub attempts: Vec<usize>,
    pub needs_rerun: bool,
    pub rerun_pending: bool,
    /// A crashed attempt that nobody reruns: its holding is left to expiry.
    pub abandoned: bool,
    /// For the expiry sweep: by when its acquire must have taken the lock (a poll after the
    /// latest instant any holding left could be taken, or after its start), when only abandoned
    /// holdings were left (no abandoned queue entries) as it started.
    pub sweep: Option<Option<Millis>>,
    /// A run of the scheduled reaper workflow (never rerun).
    pub reaper: bool,
}

impl Run {
    /// A run that has not started an attempt yet.
    pub fn new(run_id: u64, settings: JobSettings, reaper: bool) -> Self {
        Run {
            run_id,
            settings,
            attempts: Vec::new(),
            needs_rerun: false,
            rerun_pending: false,
            abandoned: false,
            sweep: None,
            reaper,
        }
    }
}

/// How a write's answer was reported to the core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fed {
    /// `written` with this sha.
    Success(String),
    /// An answer that proves the write was not applied (4xx, or never sent).
    Definite(String),
    /// 5xx, a reset or a timeout: it may or may not have been applied.
    Unknown,
}

/// One logical `writeFile` command of a core (the driver may send it more than once).
pub struct WriteRec {
    pub client: usize,
    pub sends: u32,
    /// Versions it produced (indices into the store's history).
    pub applied: Vec<usize>,
    pub fed: Option<Fed>,
    /// When it was first sent.
    pub sent_at: Millis,
    /// Real time its operation was last fed an answer with a `date` before it planned this
    /// write (its estimate of GitHub's clock dates from then).
    pub dated_at: Option<Millis>,
}

struct Request {
    client: usize,
    op_gen: u64,
    command: Command,
    write: Option<usize>,
    reply: Option<Reply>,
    /// When GitHub answered it (the time its `date` header carries).
    answered_at: Millis,
    answered: bool,
    /// The version of the state a read was answered with.
    served: Option<usize>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    JobStart(usize),
    Arrive(usize),
    Respond(usize),
    Timeout(usize),
    Timer(usize, u64),
    /// The guard's own timer (a wait, or the deadline a renewal races): (client, guard timer).
    GuardWake(usize, u64),
    /// The work ends on its own: (client, hold generation).
    WorkEnd(usize, u64),
    /// The work stopped after the guard's SIGTERM (by SIGKILL at the kill grace at the latest).
    ChildGone(usize, u64),
    HoldCrash(usize, u64),
    RerunStart(usize),
    /// The run is cancelled: SIGINT to the job's current step.
    Cancel(usize),
    /// The runner kills the step 10 s after its first signal (SIGTERM at 7.5 s, then kill).
    KillStep(usize, u64),
    /// The expiry sweep job starts.
    SweepStart,
    /// GitHub declares the running attempts of this run lost (their runner stopped answering)
    /// and completes them; the run is rerun shortly after.
    DeclaredLost(usize),
    /// The reaper's schedule fires (the tick's number).
    ReapTick(u64),
}

struct Queued {
    at: Millis,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// What a seed's run leaves behind.
pub struct Finished {
    pub counters: Counters,
    pub violation: Option<Violation>,
    pub trace: Option<String>,
}

pub struct World {
    pub seed: u64,
    pub cfg: SimConfig,
    pub rng: SimRng,
    pub params: Params,
    pub now: Millis,
    seq: u64,
    queue: BinaryHeap<Reverse<Queued>>,
    pub store: Store,
    pub clients: Vec<Client>,
    pub runs: Vec<Run>,
    requests: Vec<Request>,
    pub writes: Vec<WriteRec>,
    pub counters: Counters,
    pub violation: Option<Violation>,
    pub trace: Option<String>,
    /// The highest fence ever handed out (checker state).
    pub max_fence: u64,
    /// The state the history starts from.
    pub initial: LockState,
    pub settled_at: Millis,
    /// An expiry sweep is scheduled and has not started yet.
    pub sweep_pending: bool,
    /// Requests of jobs (not reapers) sent and not yet arrived at GitHub.
    pub jobs_in_flight: usize,
    /// The reaper's schedule has stopped: everything settled.
    pub reaper_stopped: bool,
}

impl World {
    pub fn new(seed: u64, cfg: &SimConfig) -> Self {
        let mut rng = SimRng::new(seed);
        let params = Params::draw(&mut rng, cfg);
        let config = params.config_text();
        let mut store = Store::new(LOCK, BRANCH, config);
        let mut initial = LockState::empty(LOCK);
        match params.start {
            Start::NoBranch => {}
            Start::EmptyBranch => store.start_branch(),
            Start::Existing { revision, fence } => {
                store.start_branch();
                initial.revision = revision;
                initial.fence = fence;
                store.start_state(&initial.to_document(), T0);
            }
        }
        let mut world = World {
            seed,
            cfg: cfg.clone(),
            rng,
            max_fence: initial.fence,
            initial,
            params,
            now: T0,
            seq: 0,
            queue: BinaryHeap::new(),
            store,
            clients: Vec::new(),
            runs: Vec::new(),
            requests: Vec::new(),
            writes: Vec::new(),
            counters: Counters::default(),
            violation: None,
            trace: cfg.trace.then(String::new),
            settled_at: T0,
            sweep_pending: false,
            jobs_in_flight: 0,
            reaper_stopped: false,
        };
        for i in 0..world.params.runs {
            let leased = world.params.lease.is_some();
            let hold_max = world.params.hold_max_ms;
            let (poll_min, poll_max) = (world.params.poll_min_s, world.params.poll_max_s);
            let r = &mut world.rng;
            let lease_min = (!leased || r.below(4) == 0)
                .then(|| r.between(MIN_LEASE_MINUTES, MAX_LEASE_MINUTES));
            let guard_mode = if r.below(2) == 0 {
                GuardMode::Verify
            } else {
                GuardMode::FromAcquire
            };
            let settings = JobSettings {
                poll_s: r.between(poll_min, poll_max),
                timeout_min: if r.below(20) == 0 {
                    0
                } else {
                    r.between(1, 10)
                },
                lease_min,
                hold_ms: r.below(hold_max + 1),
                deadline_s: if r.below(3) == 0 {
                    Some(r.between(30, 300))
                } else {
                    None
                },
                release_on_exit: r.below(10) != 0,
                guard_mode,
                kill_grace_ms: r.pick(&KILL_GRACE_MS),
                renew_names_holder: r.below(2) == 0,
                renew_if_due: guard_mode == GuardMode::FromAcquire,
                record_job_id: false,
            };
            let record = match world.params.record_job_id {
                RecordJobId::None => false,
                RecordJobId::All => true,
                RecordJobId::Some => r.below(2) == 0,
            };
            let settings = JobSettings {
                record_job_id: record,
                ..settings
            };
            let start_at = T0 + r.below(world.params.start_spread_ms + 1);
            world.runs.push(Run::new(4_000 + i as u64, settings, false));
            let c = world.new_attempt(i);
            world.push(start_at, Ev::JobStart(c));
        }
        if let Some(r) = world.params.reaper.clone() {
            world.push(T0 + r.first_ms, Ev::ReapTick(0));
        }
        world.counters.seeds = 1;
        world.counters.leased_seeds = u64::from(world.params.lease.is_some());
        world.counters.reaper.seeds = u64::from(world.params.reaper.is_some());
        world.counters.reaper.renews_seeds =
            u64::from(world.params.lease.as_ref().is_some_and(|p| p.reaper_renews));
        world.counters.runs = world.params.runs as u64;
        world
    }

    /// Runs the seed to its end: everything settled, the bound passed, or a violation found.
    pub fn run(mut self) -> Finished {
        let bound = T0 + self.params.bound_ms;
        let mut unsettled = None;
        loop {
            let Some(Reverse(q)) = self.queue.pop() else {
                // Nothing left to happen: an abandoned holding may still be in the lock (a write
                // that landed after its job crashed). A later job comes for it.
                self.maybe_sweep();
                if self.queue.is_empty() || self.violation.is_some() {
                    break;
                }
                continue;
            };
            if q.at > bound || self.counters.events >= MAX_EVENTS {
                unsettled = Some(q.at);
                break;
            }
            self.now = q.at;
            self.counters.events += 1;
            self.dispatch(q.ev);
            if self.violation.is_some() {
                break;
            }
        }
        self.settled_at = self.now;
        if self.violation.is_none() {
            self.final_checks(unsettled);
        }
        let sim = self.now - T0;
        self.counters.sim_ms = sim;
        self.counters.max_sim_ms = sim;
        if let (Some(v), Some(t)) = (&self.violation, self.trace.as_mut()) {
            let _ = writeln!(t, "{}", v.line());
        }
        Finished {
            counters: self.counters,
            violation: self.violation,
            trace: self.trace,
        }
    }

    pub(crate) fn push(&mut self, at: Millis, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse(Queued {
            at,
            seq: self.seq,
            ev,
        }));
    }

    pub fn faulty(&self) -> bool {
        self.now < T0 + self.params.profile.until
    }

    pub fn count(&mut self, fault: Fault) {
        self.counters.faults[fault.index()] += 1;
    }

    pub fn t(&self) -> String {
        fmt_t(self.now)
    }

    pub fn log(&mut self, line: impl FnOnce(&World) -> String) {
        if self.trace.is_none() {
            return;
        }
        let text = format!("{:>11} {}", self.t(), line(self));
        if let Some(t) = self.trace.as_mut() {
            t.push_str(&text);
            t.push('\n');
        }
    }

    pub fn who(&self, c: usize) -> String {
        let cl = &self.clients[c];
        let zombie = if cl.zombie_since.is_some() {
            " zombie"
        } else {
            ""
        };
        format!("c{c}({}#{}{zombie})", self.runs[cl.run].run_id, cl.attempt)
    }

    pub fn violate(&mut self, invariant: Invariant, message: String) {
        let v = Violation {
            seed: self.seed,
            invariant,
            at: self.now - T0,
            message,
        };
        if self.violation.is_none() {
            self.violation = Some(v);
        }
    }

    pub(crate) fn new_attempt(&mut self, run: usize) -> usize {
        let c = self.clients.len();
        let attempt = self.runs[run].attempts.len() as u32 + 1;
        let p = &self.params.profile;
        let (max_offset, max_drift) = (p.max_offset_ms, p.max_drift_ppm);
        let clock = if max_offset > 0 {
            self.count(Fault::ClockSkew);
            Clock {
                offset_ms: self.rng.between(0, 2 * max_offset) as i64 - max_offset as i64,
                drift_ppm: self.rng.between(0, 2 * max_drift) as i64 - max_drift as i64,
            }
        } else {
            Clock {
                offset_ms: 0,
                drift_ppm: 0,
            }
        };
        let nonce = format!("{:016x}", self.rng.next_u64());
        let holder_id = leasehold_core::holder_id(REPOSITORY, self.runs[run].run_id, "build", "");
        self.clients.push(Client {
            run,
            attempt,
            holder_id,
            runner: format!("sim-runner-{c}"),
            clock,
            stage: Stage::NotStarted,
            op: None,
            op_started: 0,
            op_gen: 0,
            cancelled: false,
            cancel_told: false,
            sleeping: false,
            read_predecessor: false,
            epoch: 0,
            paused_until: 0,
            zombie_since: None,
            crashed: false,
            nonce,
            holding: None,
            belief_until: None,
            belief_from: String::new(),
            guard: None,
            hold_gen: 0,
            pauses: Vec::new(),
            stale_answer_ms: None,
            acquired_late: None,
            token_ready_at: 0,
            seen_version: None,
            recent_sends: std::collections::VecDeque::new(),
            acquire_result: None,
            acquire_revision: None,
            release_result: None,
            role: if self.runs[run].reaper {
                Role::Reaper
            } else {
                Role::Job
            },
            job_id: JOB_ID_BASE + c as u64,
            entry_since: 0,
            last_dated_at: None,
            last_write: None,
            told: Vec::new(),
        });
        self.runs[run].attempts.push(c);
        if !self.runs[run].reaper {
            self.counters.attempts += 1;
            // GitHub's view of the attempt and its one job: queued until it starts.
            let run_id = self.runs[run].run_id;
            let gh = &mut self.store.github;
            gh.set_run_attempt(REPOSITORY, run_id, attempt, Timing::queued());
            gh.set_job(
                JOB_ID_BASE + c as u64,
                Job {
                    repository: REPOSITORY.into(),
                    run_id,
                    run_attempt: attempt,
                    name: "build".into(),
                    runner_name: self.clients[c].runner.clone(),
                    timing: Timing::queued(),
                },
            );
        }
        c
    }

    /// GitHub's view of job client `c`'s attempt (the model's record of its job).
    pub fn gh(&self, c: usize) -> &Timing {
        &self
            .store
            .github
            .job(self.clients[c].job_id)
            .expect("every job attempt is in the Actions view")
            .timing
    }

    /// Changes GitHub's view of job client `c`'s attempt: its job and its run attempt alike (one
    /// job per attempt). Reapers' runs are not in the view.
    pub(crate) fn set_gh(&mut self, c: usize, change: impl FnOnce(&mut Timing)) {
        let cl = &self.clients[c];
        if cl.is_reaper() {
            return;
        }
        let (run_id, attempt) = (self.runs[cl.run].run_id, cl.attempt);
        let gh = &mut self.store.github;
        let job = gh.job_mut(cl.job_id).expect("in the Actions view");
        change(&mut job.timing);
        let timing = job.timing.clone();
        gh.set_run_attempt(REPOSITORY, run_id, attempt, timing);
    }

    pub(crate) fn inputs(&self, c: usize, kind: OperationKind) -> BTreeMap<String, String> {
        let cl = &self.clients[c];
        let run = &self.runs[cl.run];
        let s = &run.settings;
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            m.insert(k.to_string(), v);
        };
        put("lock", LOCK.into());
        put("GITHUB_REPOSITORY", REPOSITORY.into());
        put("GITHUB_RUN_ID", run.run_id.to_string());
        put("GITHUB_RUN_ATTEMPT", cl.attempt.to_string());
        put(
            "GITHUB_JOB",
            if cl.is_reaper() {
                "reap".into()
            } else {
                "build".into()
            },
        );
        put("RUNNER_NAME", cl.runner.clone());
        match kind {
            OperationKind::Acquire => {
                put("poll-seconds", s.poll_s.to_string());
                put("timeout-minutes", s.timeout_min.to_string());
                if let Some(l) = s.lease_min {
                    put("lease-minutes", l.to_string());
                }
                put("record-job-id", s.record_job_id.to_string());
            }
            OperationKind::Release => {
                if let Some(d) = s.deadline_s {
                    put("release-deadline-seconds", d.to_string());
                }
            }
            OperationKind::Cleanup => {
                // The post step reads acquire's inputs plus what acquire saved as state.
                put("poll-seconds", s.poll_s.to_string());
                put("timeout-minutes", s.timeout_min.to_string());
                if let Some(l) = s.lease_min {
                    put("lease-minutes", l.to_string());
                }
                put("holder-id", cl.holder_id.clone());
                put("nonce", cl.nonce.clone());
                put("release-on-exit", s.release_on_exit.to_string());
                if let Some(revision) = cl.acquire_revision {
                    put("min-revision", revision.to_string());
                }
            }
            OperationKind::Renew => {
                // The guard's renewals: acquire's outputs (nonce, and holder-id or rebuilt).
                put("nonce", cl.nonce.clone());
                if s.renew_names_holder {
                    put("holder-id", cl.holder_id.clone());
                }
                if s.renew_if_due {
                    put("if-due", "true".into());
                }
            }
            OperationKind::Reap => {
                let scan_s = self
                    .params
                    .reaper
                    .as_ref()
                    .map_or(DEFAULT_SCAN_SECONDS, |r| r.scan_s);
                put("scan-deadline-seconds", scan_s.to_string());
            }
            // Nobody runs status.
            OperationKind::Status => {}
            // Claims are not simulated yet.
            _ => {}
        }
        m
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::JobStart(c) => {
                let token_lag = self.faulty() && self.params.profile.token_lag;
                if token_lag {
                    self.clients[c].token_ready_at = self.now + self.rng.between(0, 8_000);
                }
                let now = self.now;
                self.set_gh(c, |t| t.started_at = Some(now));
                self.log(|w| {
                    let k = &w.clients[c].clock;
                    format!(
                        "{} job starts (attempt {}; clock offset {} ms, drift {} ppm)",
                        w.who(c),
                        w.clients[c].attempt,
                        k.offset_ms,
                        k.drift_ppm
                    )
                });
                if self.clients[c].is_reaper() {
                    return self.start_op(c, OperationKind::Reap);
                }
                let at = self.now + self.rng.between(0, 120_000);
                if at < T0 + self.params.profile.until
                    && self.rng.ppm(self.params.profile.cancel_ppm)
                {
                    self.push(at, Ev::Cancel(c));
                }
                self.start_op(c, OperationKind::Acquire);
            }
            Ev::Arrive(req) => self.arrive(req),
            Ev::Respond(req) => {
                let c = self.requests[req].client;
                if self.abandoned(req) || self.held_by_pause(c, ev) {
                    return;
                }
                self.guard_recheck(c);
                if self.abandoned(req) {
                    return; // the guard, acting on its timer first, ended the step
                }
                self.requests[req].answered = true;
                let reply = self.requests[req]
                    .reply
                    .take()
                    .expect("a processed request has a reply");
                self.deliver(c, req, reply);
            }
            Ev::Timeout(req) => {
                let c = self.requests[req].client;
                if self.abandoned(req) || self.held_by_pause(c, ev) {
                    return;
                }
                self.guard_recheck(c);
                if self.abandoned(req) {
                    return; // the guard, acting on its timer first, ended the step
                }
                self.requests[req].answered = true;
                let reply = Reply::Transport {
                    sent: true,
                    message: "request timed out and was aborted".into(),
                };
                self.deliver(c, req, reply);
            }
            Ev::Timer(c, epoch) => {
                if self.clients[c].epoch != epoch
                    || !self.clients[c].live()
                    || self.held_by_pause(c, ev)
                {
                    return;
                }
                self.guard_recheck(c);
                if self.clients[c].epoch != epoch {
                    return; // the guard, acting on its timer first, ended the step
                }
                self.clients[c].sleeping = false;
                let now = self.clients[c].clock.local(self.now);
                self.feed(c, Event::Timer { now });
            }
            Ev::GuardWake(c, timer) => {
                let current = self.clients[c].stage == Stage::Hold
                    && self.clients[c]
                        .guard
                        .as_ref()
                        .is_some_and(|g| g.timer == timer);
                if !current || self.held_by_pause(c, ev) {
                    return;
                }
                self.guard_wake(c);
            }
            Ev::WorkEnd(c, gen) => {
                if self.clients[c].hold_gen != gen
                    || self.clients[c].stage != Stage::Hold
                    || self.held_by_pause(c, ev)
                {
                    return;
                }
                self.guard_recheck(c);
                self.work_ended(c);
            }
            Ev::ChildGone(c, gen) => {
                if self.clients[c].hold_gen != gen
                    || self.clients[c].stage != Stage::Hold
                    || self.held_by_pause(c, ev)
                {
                    return;
                }
                self.work_stopped(c);
            }
            Ev::HoldCrash(c, gen) => {
                if self.clients[c].hold_gen != gen || self.clients[c].stage != Stage::Hold {
                    return;
                }
                self.crash(c, Fault::CrashInHold);
            }
            Ev::SweepStart => self.start_sweep(),
            Ev::ReapTick(k) => self.reap_tick(k),
            Ev::DeclaredLost(run) => {
                self.declare_lost(run);
                // The run is rerun shortly after (an operator, or an automation that reruns
                // failed jobs); it is pending already, so nothing else schedules it.
                let at = self.now + self.rng.between(RERUN_DELAY_MS.0, RERUN_DELAY_MS.1);
                self.push(at, Ev::RerunStart(run));
            }
            Ev::RerunStart(run) => {
                self.runs[run].rerun_pending = false;
                self.runs[run].needs_rerun = false;
                // No attempt runs on in GitHub's view once the run is rerun: one whose runner
                // died and that GitHub has not noticed yet is cancelled first by the operator.
                self.declare_lost(run);
                for i in 0..self.runs[run].attempts.len() {
                    let c = self.runs[run].attempts[i];
                    let now = self.now;
                    self.set_gh(c, |t| {
                        if t.completed_at.is_none_or(|at| at > now) {
                            t.completed_at = Some(now);
                            t.conclusion = "cancelled".into();
                        }
                    });
                }
                let c = self.new_attempt(run);
                self.count(Fault::Rerun);
                self.push(self.now, Ev::JobStart(c));
            }
            Ev::Cancel(c) => {
                if self.held_by_pause(c, ev) {
                    return;
                }
                match self.clients[c].stage {
                    Stage::Acquire => {
                        self.count(Fault::Cancel);
                        self.clients[c].cancelled = true;
                        let gen = self.clients[c].op_gen;
                        self.log(|w| {
                            format!("{} run cancelled: SIGINT to the acquire step", w.who(c))
                        });
                        self.push(self.now + 10_000, Ev::KillStep(c, gen));
                        // Sleeping: the driver stops waiting and tells the core at once.
                        if self.clients[c].sleeping {
                            self.clients[c].epoch += 1;
                            self.tell_cancel(c);
                        }
                    }
                    Stage::Hold => {
                        // The work step is cancelled: SIGINT to the guard, which forwards it to
                        // the work (it stops); once the guard finishes, the release step
                        // (always()) runs.
                        self.count(Fault::Cancel);
                        self.clients[c].cancelled = true;
                        self.cancel_work_step(c);
                    }
                    // always() steps are not cancelled; a job not started yet never runs.
                    _ => {}
                }
            }
            Ev::KillStep(c, gen) => {
                if self.clients[c].op_gen != gen || self.clients[c].stage != Stage::Acquire {
                    return;
                }
                // A paused process is killed all the same.
                self.log(|w| {
                    format!(
                        "{} acquire step killed 10 s after the cancel signal",
                        w.who(c)
                    )
                });
                *self
                    .counters
                    .results
                    .entry("acquire killed".into())
                    .or_default() += 1;
                self.clients[c].paused_until = 0;
                self.start_op(c, OperationKind::Release);
            }
        }
    }

    /// An answer to a request the client no longer waits for (answered, or its operation or the
    /// job is over) is dropped.
    fn abandoned(&self, req: usize) -> bool {
        let r = &self.requests[req];
        let cl = &self.clients[r.client];
        r.answered || !cl.live() || cl.op_gen != r.op_gen
    }

    fn tell_cancel(&mut self, c: usize) {
        self.clients[c].cancel_told = true;
        self.clients[c].sleeping = false;
        let now = self.clients[c].clock.local(self.now);
        self.feed(c, Event::Cancel { now });
    }

    /// The lease a holding of this run gets: `lease-minutes`, within the ceiling, or the lock
    /// policy's ttl.
    pub fn lease_ms(&self, run: usize) -> Millis {
        let policy = self
            .params
            .lease
            .clone()
            .unwrap_or_else(LeasePolicy::unconfigured);
        self.runs[run]
            .settings
            .lease_min
            .map_or(policy.ttl_ms, |m| (m * 60_000).min(policy.max_ttl_ms))
    }

    /// Defers `ev` while the client's process is paused; may start a pause (a fault).
    pub(crate) fn held_by_pause(&mut self, c: usize, ev: Ev) -> bool {
        if self.clients[c].paused_until > self.now {
            let at = self.clients[c].paused_until;
            self.push(at, ev);
            return true;
        }
        if self.faulty() && self.rng.ppm(self.params.profile.pause_ppm) {
            // Longer than the job's lease, and at least 6 minutes (so past the faults); a
            // reaper holds no lease: 6 to 12 minutes.
            let lease = if self.clients[c].is_reaper() {
                MIN_PAUSE_MS
            } else {
                self.lease_ms(self.clients[c].run).max(MIN_PAUSE_MS)
            };
            let pause = lease + self.rng.between(1_000, lease);
            let until = self.now + pause;
            self.clients[c].pauses.push((self.now, until));
            self.clients[c].paused_until = until;
            self.count(Fault::Pause);
            self.log(|w| {
                format!(
                    "{} process paused for {} ms (lease {} ms)",
                    w.who(c),
                    pause,
                    lease
                )
            });
            let run = self.clients[c].run;
            if !self.runs[run].reaper
                && self.rng.ppm(self.params.profile.zombie_ppm)
                && !self.runs[run].rerun_pending
            {
                self.runs[run].rerun_pending = true;
                // GitHub notices the lost runner at any time in the pause, or late in it; it
                // completes the attempt then, and the run is rerun shortly after.
                let at = if self.rng.below(2) == 0 {
                    self.now + self.rng.between(5_000, pause - 1_000)
                } else {
                    (until - self.rng.between(1_000, 120_000)).max(self.now + 5_000)
                };
                self.push(at, Ev::DeclaredLost(run));
            }
            self.push(until, ev);
            return true;
        }
        false
    }

    pub(crate) fn start_op(&mut self, c: usize, kind: OperationKind) {
        let inputs = self.inputs(c, kind);
        let nonce = match kind {
            OperationKind::Acquire => self.clients[c].nonce.clone(),
            _ => format!("{:016x}", self.rng.next_u64()),
        };
        let entropy = Entropy {
            seed: self.rng.next_u64(),
            nonce,
        };
        let (op, _plan) =
            Operation::new(kind, &inputs, &entropy).expect("the simulation's inputs are valid");
        let cl = &mut self.clients[c];
        cl.op = Some(op);
        cl.op_started = self.now;
        cl.op_gen += 1;
        cl.epoch += 1;
        cl.sleeping = false;
        cl.read_predecessor = false;
        cl.seen_version = None;
        cl.stale_answer_ms = None;
        cl.last_dated_at = None;
        cl.last_write = None;
        cl.told.clear();
        if kind == OperationKind::Reap {
            cl.stage = Stage::Reap;
            self.counters.reaper.runs += 1;
            self.log(|w| format!("{} Reap starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if kind == OperationKind::Renew {
            // The guard's renewal runs within the work step: the belief stays as it is.
            cl.stage = Stage::Hold;
            self.counters.renews += 1;
            self.log(|w| format!("{} Renew starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if cl.stage == Stage::Hold {
            cl.hold_gen += 1;
        }
        cl.guard = None;
        cl.belief_until = None;
        cl.holding = None;
        cl.stage = match kind {
            OperationKind::Acquire => Stage::Acquire,
            OperationKind::Release => Stage::Release,
            OperationKind::Cleanup => Stage::Cleanup,
            _ => unreachable!("jobs run acquire, the guard's renew, release and cleanup only"),
        };
        match kind {
            OperationKind::Acquire => self.counters.acquires += 1,
            OperationKind::Release => self.counters.releases += 1,
            _ => self.counters.cleanups += 1,
        }
        self.log(|w| format!("{} {:?} starts", w.who(c), kind));
        let now = self.clients[c].clock.local(self.now);
        self.feed(c, Event::Start { now });
    }

    fn feed(&mut self, c: usize, event: Event) {
        self.counters.client_ops += 1;
        let result = self.clients[c]
            .op
            .as_mut()
            .expect("a running operation")
            .step(event);
        match result {
            Err(e) => {
                self.violate(
                    Invariant::Protocol,
                    format!("{}: the core refused an event: {e}", self.who(c)),
                );
            }
            Ok(step) => {
                if self.trace.is_some() {
                    for line in &step.log {
                        let text = format!("{} core says: {}", self.who(c), line.text);
                        self.log(|_| text);
                    }
                }
                self.perform(c, step.command);
            }
        }
    }

    fn perform(&mut self, c: usize, command: Command) {
        match command {
            Command::Sleep { until_ms, reason } => {
                let cl = &mut self.clients[c];
                if cl.cancelled && !cl.cancel_told && cl.stage == Stage::Acquire {
                    // The driver does not sleep once the cancel signal arrived: it tells the core.
                    return self.tell_cancel(c);
                }
                cl.sleeping = true;
                cl.epoch += 1;
                let epoch = cl.epoch;
                let at = cl.clock.real_at(until_ms, self.now);
                self.log(|w| format!("{} sleeps {:?} for {} ms", w.who(c), reason, at - w.now));
                if reason == SleepReason::Poll {
                    self.counters.polls += 1;
                }
                self.push(at, Ev::Timer(c, epoch));
            }
            Command::Finish { outcome } => self.finished(c, *outcome),
            request => self.send(c, request, None),
        }
    }

    fn send(&mut self, c: usize, command: Command, write: Option<usize>) {
        self.counters.requests += 1;
        let timeout = match &command {
            Command::Request {
                call: Call::ReadFile { .. },
                timeout_ms,
            } => {
                self.counters.reads += 1;
                *timeout_ms
            }
            Command::Request {
                call: Call::WriteFile { .. },
                timeout_ms,
            } => {
                self.counters.writes += 1;
                *timeout_ms
            }
            Command::Request {
                call: Call::CreateTree { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::CreateCommit { .. },
                timeout_ms,
            }
            | Command::Request {
                call:
                    Call::CreateBranch { .. }
                    | Call::Graphql { .. }
                    | Call::CreateRef { .. }
                    | Call::GetRef { .. }
                    | Call::ListMatchingRefs { .. },
                timeout_ms,
            } => {
                self.counters.creates += 1;
                *timeout_ms
            }
            Command::Request {
                call: Call::GetRunAttempt { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::GetJob { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::ListJobs { .. },
                timeout_ms,
            } => {
                self.counters.reaper.actions_requests[crate::reaper::actions_index(&command)] += 1;
                *timeout_ms
            }
            Command::Sleep { .. } | Command::Finish { .. } => unreachable!("not a request"),
        };
        let write = match (write, &command) {
            (Some(w), _) => {
                self.writes[w].sends += 1;
                Some(w)
            }
            (
                None,
                Command::Request {
                    call: Call::WriteFile { content, .. },
                    ..
                },
            ) => {
                // The clock estimate the write was planned with dates from the last answer with
                // a `date` before it was planned: before this send, or, for a write repeated as
                // is (after a rate limit), before its first send.
                let cl = &mut self.clients[c];
                let dated_at = match &cl.last_write {
                    Some((last, at)) if last == content => *at,
                    _ => cl.last_dated_at,
                };
                cl.last_write = Some((content.clone(), dated_at));
                self.writes.push(WriteRec {
                    client: c,
                    sends: 1,
                    applied: Vec::new(),
                    fed: None,
                    sent_at: self.now,
                    dated_at,
                });
                Some(self.writes.len() - 1)
            }
            _ => None,
        };
        let req = self.requests.len();
        self.log(|w| format!("{} → {}", w.who(c), describe(&command)));
        let what = match &command {
            Command::Request {
                call: Call::ReadFile { path, .. },
                ..
            } if path.ends_with(".config.json") => "GET config",
            Command::Request {
                call: Call::ReadFile { .. },
                ..
            } => "GET state",
            Command::Request {
                call: Call::WriteFile { .. },
                ..
            } => "PUT state",
            Command::Request {
                call: Call::GetRunAttempt { .. },
                ..
            }
            | Command::Request {
                call: Call::GetJob { .. },
                ..
            }
            | Command::Request {
                call: Call::ListJobs { .. },
                ..
            } => "GET actions",
            _ => "POST git",
        };
        self.check_rate(c, what);
        if let (
            Some(w),
            Command::Request {
                call: Call::WriteFile { sha, .. },
                ..
            },
        ) = (write, &command)
        {
            // A new write of the core (the planted driver bug's re-sends are not).
            if self.writes[w].sends == 1 {
                self.check_write_base(c, sha.as_deref());
            }
        }
        let op_gen = self.clients[c].op_gen;
        self.requests.push(Request {
            client: c,
            op_gen,
            command,
            write,
            reply: None,
            answered_at: self.now,
            answered: false,
            served: None,
        });
        let p = &self.params.profile;
        let (not_sent, late, crash) = (p.not_sent_ppm, p.late_arrival_ppm, p.crash_in_flight_ppm);
        let faulty = self.faulty();
        if faulty && self.rng.ppm(not_sent) {
            self.count(Fault::NotSent);
            self.requests[req].reply = Some(Reply::Transport {
                sent: false,
                message: "ECONNREFUSED".into(),
            });
            let at = self.now + self.rng.between(1, 100);
            self.push(at, Ev::Respond(req));
            return;
        }
        let up = if faulty && self.rng.ppm(late) {
            self.count(Fault::LateArrival);
            timeout + self.rng.between(1, 10_000)
        } else {
            self.rng.between(5, 250)
        };
        if !self.clients[c].is_reaper() {
            self.jobs_in_flight += 1;
        }
        self.push(self.now + up, Ev::Arrive(req));
        self.push(self.now + timeout, Ev::Timeout(req));
        if faulty && self.rng.ppm(crash) {
            self.crash(c, Fault::CrashInFlight);
        }
    }

    fn draw_request_fault(&mut self) -> Option<Fault> {
        let roll = self.rng.below(1_000_000);
        let mut acc = 0u64;
        for (fault, ppm) in REQUEST_FAULTS.iter().zip(self.params.profile.request_ppm) {
            acc += u64::from(ppm);
            if roll < acc {
                return Some(*fault);
            }
        }
        None
    }

    /// The request reaches GitHub: it is processed atomically, now.
    fn arrive(&mut self, req: usize) {
        let c = self.requests[req].client;
        if !self.clients[c].is_reaper() {
            self.jobs_in_flight -= 1;
        }
        let mut fault = if self.faulty() {
            self.draw_request_fault()
        } else {
            None
        };
        // A token's first seconds answer 401, a fault like the others: not once faults stopped.
        if fault.is_none()
            && self.faulty()
            && self.now < self.clients[c].token_ready_at
            && self.rng.ppm(700_000)
        {
            fault = Some(Fault::Unauthorized);
        }
        // The Actions API's own refusals: a token without `actions: read`, a run it cannot see.
        let actions = matches!(
            self.requests[req].command,
            Command::Request {
                call: Call::GetRunAttempt { .. },
                ..
            } | Command::Request {
                call: Call::GetJob { .. },
                ..
            } | Command::Request {
                call: Call::ListJobs { .. },
                ..
            }
        );
        if actions
            && fault.is_none()
            && self.faulty()
            && self.rng.ppm(self.params.profile.actions_refusal_ppm)
        {
            fault = Some(if self.rng.below(2) == 0 {
                Fault::ActionsForbidden
            } else {
                Fault::ActionsNotFound
            });
        }
        let placeholder = Command::Sleep {
            until_ms: 0,
            reason: SleepReason::Poll,
        };
        let command = std::mem::replace(&mut self.requests[req].command, placeholder);
        let write = self.requests[req].write;
        let counted = self.counters.faults;
        let (mut reply, applied, served) = self.process(&command, fault, write);
        // The trace names a drawn fault only if it took effect (it is counted when it does): a
        // stale read drawn for a write, or a 409 for a read, changes nothing.
        let shown = fault.filter(|_| self.counters.faults != counted);
        // GitHub puts its `date` header on every HTTP answer, errors included.
        if let Reply::Http {
            date: date @ None, ..
        } = &mut reply
        {
            *date = Some(http_date(self.now));
        }
        self.requests[req].served = served;
        let timeout = command_timeout(&command);
        self.requests[req].command = command;
        if let (Some(v), Some(w)) = (applied, write) {
            self.writes[w].applied.push(v);
            self.counters.commits += 1;
            self.log(|w| {
                let st = w.store.meta(v).state.as_ref().ok();
                format!(
                    "server commits version {} of the state by {}: revision {}, holders {:?}, queue {:?}",
                    v,
                    w.who(c),
                    st.map(|s| s.revision).unwrap_or(0),
                    st.map(|s| s.holders.iter().map(|h| (h.holder_id.rsplit(':').nth(1).unwrap_or("?").to_string(), h.fence)).collect::<Vec<_>>())
                        .unwrap_or_default(),
                    st.map(|s| s.queue.iter().map(|q| q.holder_id.rsplit(':').nth(1).unwrap_or("?").to_string()).collect::<Vec<_>>())
                        .unwrap_or_default(),
                )
            });
            self.on_commit(v);
            let expired = self
                .store
                .meta(v)
                .state
                .as_ref()
                .ok()
                .and_then(|st| st.last_change.as_ref())
                .map_or(0, |ch| ch.removed.len());
            self.counters.guard.expired += expired as u64;
        }
        let down = if fault == Some(Fault::SlowAnswer) {
            timeout + self.rng.between(1, 5_000)
        } else {
            self.rng.between(5, 250)
        };
        self.log(|w| {
            format!(
                "server answers {} with {}{}",
                w.who(c),
                describe_reply(&reply),
                shown
                    .map(|f| format!(" [fault: {}]", f.name()))
                    .unwrap_or_default()
            )
        });
        self.requests[req].reply = Some(reply);
        self.requests[req].answered_at = self.now;
        self.push(self.now + down, Ev::Respond(req));
    }

    /// GitHub processing one request, with the drawn fault. Returns the answer and the version
    /// it committed, if any.
    fn process(
        &mut self,
        command: &Command,
        fault: Option<Fault>,
        write: Option<usize>,
    ) -> (Reply, Option<usize>, Option<usize>) {
        if let Some(reply) = self.refusal(fault) {
            return (reply, None, None);
        }
        let mut served = None;
        let (reply, applied) = match command.call().expect("a request") {
            Call::ReadFile { .. } => {
                let stale = (fault == Some(Fault::StaleRead))
                    .then_some(self.params.profile.stale_window_ms);
                let (reply, older, version) = match stale {
                    Some(window) => {
                        self.store
                            .read(command, self.now, Some((window, &mut self.rng)))
                    }
                    None => self.store.read(command, self.now, None),
                };
                if older {
                    self.count(Fault::StaleRead);
                }
                served = version;
                if matches!(reply, Reply::NotModified) {
                    self.counters.not_modified += 1;
                }
                (reply, None)
            }
            Call::WriteFile { branch, .. } => {
                if fault == Some(Fault::Unrelated409) && self.store.branch_exists() {
                    self.count(Fault::Unrelated409);
                    let head = self.store.unrelated_commit().expect("the branch exists");
                    return (
                        http(
                            409,
                            &format!(
                                "refs/heads/{branch} is at c{head:039} but expected c{:039}",
                                head - 1
                            ),
                        ),
                        None,
                        None,
                    );
                }
                let w = write.expect("a write has a record");
                let (reply, applied) = self.store.answer(command, self.now, Some(w));
                if matches!(
                    reply,
                    Reply::Http {
                        status: 409 | 422,
                        ..
                    }
                ) {
                    self.counters.conflicts += 1;
                }
                (reply, applied)
            }
            Call::CreateTree { .. }
            | Call::CreateCommit { .. }
            | Call::CreateBranch { .. }
            | Call::Graphql { .. }
            | Call::CreateRef { .. }
            | Call::GetRef { .. }
            | Call::ListMatchingRefs { .. } => (self.store.answer(command, self.now, None).0, None),
            Call::GetRunAttempt { .. } | Call::GetJob { .. } | Call::ListJobs { .. } => {
                match fault {
                    // Never stale: a completed attempt stays completed, in every answer after.
                    Some(Fault::ActionsForbidden) => {
                        self.count(Fault::ActionsForbidden);
                        (http(403, "Resource not accessible by integration"), None)
                    }
                    Some(Fault::ActionsNotFound) => {
                        self.count(Fault::ActionsNotFound);
                        (http(404, "Not Found"), None)
                    }
                    _ => (self.actions_answer(command), None),
                }
            }
        };
        let reply = match fault {
            Some(Fault::LostAck502) => {
                self.count(Fault::LostAck502);
                http(502, "Server Error")
            }
            Some(Fault::LostAckReset) => {
                self.count(Fault::LostAckReset);
                Reply::Transport {
                    sent: true,
                    message: "ECONNRESET".into(),
                }
            }
            Some(Fault::SlowAnswer) => {
                self.count(Fault::SlowAnswer);
                reply
            }
            _ => reply,
        };
        (reply, applied, served)
    }

    /// An answer refused before anything is processed: 5xx, 401, rate limits.
    fn refusal(&mut self, fault: Option<Fault>) -> Option<Reply> {
        let fault = fault?;
        let date = Some(http_date(self.now));
        let limited = |status: u16,
                       message: &str,
                       retry_after: Option<String>,
                       date: Option<String>| Reply::Http {
            status,
            message: message.into(),
            retry_after,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date,
        };
        let reply = match fault {
            Fault::ServerError => {
                let status = self.rng.pick(&[500, 502, 503, 504]);
                http(status, "Server Error")
            }
            Fault::Unauthorized => http(401, "Bad credentials"),
            Fault::RateLimit403RetryAfter | Fault::RateLimit429RetryAfter => {
                let secs = self.rng.between(0, 60);
                let retry_after = if self.rng.below(2) == 0 {
                    secs.to_string()
                } else {
                    http_date(self.now + secs * 1_000)
                };
                let status = if fault == Fault::RateLimit403RetryAfter {
                    403
                } else {
                    429
                };
                limited(
                    status,
                    "You have exceeded a secondary rate limit.",
                    Some(retry_after),
                    date,
                )
            }
            Fault::RateLimit403NoRetryAfter => {
                limited(403, "You have exceeded a secondary rate limit.", None, date)
            }
            Fault::RateLimit429NoRetryAfter => limited(429, "Too Many Requests", None, date),
            Fault::RateLimitPrimary => Reply::Http {
                status: 403,
                message: "API rate limit exceeded for installation.".into(),
                retry_after: None,
                ratelimit_remaining: Some(0),
                ratelimit_reset: Some(self.now / 1_000 + self.rng.between(1, 120)),
                date,
            },
            _ => return None,
        };
        self.count(fault);
        Some(reply)
    }

    /// An answer (or the client's own timeout) reaches the driver.
    fn deliver(&mut self, c: usize, req: usize, reply: Reply) {
        if let Some(w) = self.requests[req].write {
            if self.cfg.planted == Some(PlantedBug::ResendUnknownWrite)
                && fed_class(&reply) == Fed::Unknown
                && self.writes[w].sends < 3
            {
                // Planted (driver side): a naive HTTP retry of a write whose outcome is unknown,
                // hiding the first answer from the core.
                let command = self.requests[req].command.clone();
                self.log(|w| {
                    format!(
                        "{} (planted bug) re-sends the write after {}",
                        w.who(c),
                        describe_reply(&reply)
                    )
                });
                self.send(c, command, Some(w));
                return;
            }
            if matches!(reply, Reply::Written { .. })
                && self.faulty()
                && self.rng.ppm(self.params.profile.crash_after_write_ppm)
            {
                self.crash(c, Fault::CrashAfterWrite);
                return;
            }
            self.writes[w].fed = Some(fed_class(&reply));
            self.check_write_view(w);
        }
        if let (Some(v), Stage::Release | Stage::Cleanup, Reply::File { .. }) =
            (self.requests[req].served, self.clients[c].stage, &reply)
        {
            let cl = &self.clients[c];
            let earlier = self.store.meta(v).state.as_ref().is_ok_and(|st| {
                st.holders
                    .iter()
                    .any(|h| h.holder_id == cl.holder_id && h.run.run_attempt < cl.attempt)
                    || st
                        .queue
                        .iter()
                        .any(|q| q.holder_id == cl.holder_id && q.run.run_attempt < cl.attempt)
            });
            if earlier {
                self.clients[c].read_predecessor = true;
            }
        }
        let shown = match &reply {
            Reply::File { .. } | Reply::NotModified => self.requests[req].served,
            Reply::Written { .. } => self.requests[req]
                .write
                .and_then(|w| self.writes[w].applied.first().copied()),
            _ => None,
        };
        if let Some(v) = shown {
            let cl = &mut self.clients[c];
            cl.seen_version = Some(cl.seen_version.map_or(v, |s| s.max(v)));
        }
        let dated = match &reply {
            Reply::File { date, .. }
            | Reply::Written { date, .. }
            | Reply::Http { date, .. }
            | Reply::Run { date, .. }
            | Reply::Job { date, .. }
            | Reply::Jobs { date, .. } => date.is_some(),
            _ => false,
        };
        if dated {
            self.clients[c].last_dated_at = Some(self.now);
        }
        if self.clients[c].is_reaper() {
            let answered_at = self.requests[req].answered_at;
            self.record_told(c, &reply, answered_at);
        }
        self.log(|w| format!("{} ← {}", w.who(c), describe_reply(&reply)));
        let age = self.now - self.requests[req].answered_at;
        self.clients[c].stale_answer_ms = (age > crate::world::LATE_ANSWER_MS
            && !matches!(reply, Reply::Transport { .. }))
        .then_some(age);
        let now = self.clients[c].clock.local(self.now);
        self.feed(c, Event::Reply { now, reply });
    }

    fn finished(&mut self, c: usize, outcome: Outcome) {
        let result = outcome.result;
        let stage = self.clients[c].stage;
        let what = match stage {
            Stage::Acquire => "acquire",
            Stage::Hold
                if self.clients[c]
                    .guard
                    .as_ref()
                    .is_some_and(|g| g.machine.phase() == Phase::Verifying) =>
            {
                "guard-verify"
            }
            Stage::Hold => "renew",
            Stage::Release => "release",
            Stage::Reap => "reap",
            _ => "cleanup",
        };
        *self
            .counters
            .results
            .entry(format!("{what} {}", result.as_str()))
            .or_default() += 1;
        self.clients[c].op = None;
        self.log(|w| {
            format!(
                "{} {:?} finishes: {}{}{}{}",
                w.who(c),
                stage,
                result.as_str(),
                outcome
                    .fence
                    .map(|f| format!(" fence {f}"))
                    .unwrap_or_default(),
                outcome
                    .lease
                    .as_ref()
                    .map(|l| format!(
                        " (lease: expiresAt {}, local deadline in {} ms)",
                        fmt_t(l.expires_at),
                        l.local_deadline as i64 - w.clients[c].clock.local(w.now) as i64
                    ))
                    .unwrap_or_default(),
                outcome
                    .error
                    .as_ref()
                    .map(|e| format!(" ({}: {})", e.code, e.message))
                    .unwrap_or_default()
            )
        });
        let quiet = self.clients[c].op_started >= T0 + self.params.profile.until;
        let excused = match stage {
            // A cancelled acquire ends `cancelled`, a failure by design; the steps after it are
            // not excused.
            Stage::Acquire => self.clients[c].cancelled,
            // A renewal the guard no longer waits for, or one started when the proven lease's
            // deadline had passed (the verification after an acquire answered late), may find
            // the holding expired and removed.
            Stage::Hold => !self.renewal_counts(c),
            _ => false,
        };
        if quiet && self.clients[c].zombie_since.is_none() && !excused && !outcome.success {
            let error = outcome
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.code, e.message))
                .unwrap_or_default();
            self.violate(
                Invariant::Liveness,
                format!(
                    "{} {:?} started after faults stopped and ended {} ({error})",
                    self.who(c),
                    stage,
                    result.as_str()
                ),
            );
            return;
        }
        match stage {
            Stage::Acquire => {
                self.clients[c].acquire_result = Some(result);
                self.clients[c].acquire_revision = outcome.state.as_ref().map(|s| s.revision);
                self.check_sweep_acquire(c, result);
                if self.violation.is_some() {
                    return;
                }
                if result == ResultWord::Acquired {
                    let fence = outcome.fence.unwrap_or(0);
                    let nonce = outcome.nonce.clone().unwrap_or_default();
                    let Some(lease) = outcome.lease.clone() else {
                        return self.violate(
                            Invariant::Protocol,
                            format!("{} acquired without a lease in its outcome", self.who(c)),
                        );
                    };
                    // The real instant of the deadline, even past (a pause before the answer).
                    let until = self.clients[c].clock.real_of(lease.local_deadline);
                    if until <= self.now {
                        // Acquired, but the deadline has passed (a pause longer than the lease
                        // between the write and its answer): no work under this lease.
                        self.counters.acquired_past_deadline += 1;
                        self.log(|w| {
                            format!(
                                "{} acquired with its lease's local deadline already past",
                                w.who(c)
                            )
                        });
                    } else {
                        self.check_acquired(c, fence, &nonce);
                    }
                    let cl = &mut self.clients[c];
                    cl.holding = Some(fence);
                    cl.belief_until = Some(until);
                    cl.belief_from = "acquire".into();
                    cl.acquired_late = cl.stale_answer_ms;
                    self.start_guard(c, lease);
                } else {
                    self.start_op(c, OperationKind::Release);
                }
            }
            Stage::Release => {
                self.clients[c].release_result = Some(result);
                if matches!(
                    result,
                    ResultWord::Released | ResultWord::QueueCleaned | ResultWord::Noop
                ) {
                    self.check_released(c, result);
                }
                if self.violation.is_none() {
                    self.start_op(c, OperationKind::Cleanup);
                }
            }
            Stage::Cleanup => {
                self.clients[c].stage = Stage::Done;
                // The cleanup's noop is not confirmed by a write (best effort): only the release
                // step's success, or a cleanup that removed the claim, leaves the lock clean.
                let removed = matches!(result, ResultWord::Released | ResultWord::QueueCleaned);
                if removed {
                    self.check_released(c, result);
                }
                let released = self.clients[c].release_result.is_some_and(|r| {
                    matches!(
                        r,
                        ResultWord::Released | ResultWord::QueueCleaned | ResultWord::Noop
                    )
                });
                self.job_ended(c, released || removed);
            }
            Stage::Hold => self.renewal_finished(c, outcome),
            Stage::Reap => {
                self.reap_finished(c, &outcome);
                self.clients[c].stage = Stage::Done;
                self.job_ended(c, outcome.success);
            }
            Stage::NotStarted | Stage::Done => unreachable!("no operation runs in {stage:?}"),
        }
    }

    pub(crate) fn crash(&mut self, c: usize, kind: Fault) {
        self.count(kind);
        self.log(|w| format!("{} crashes ({})", w.who(c), kind.name()));
        if self.clients[c].stage == Stage::Hold {
            // SIGKILL: the work stops with the job, no release, no post step.
            self.check_work_stop(c);
            self.clients[c].hold_gen += 1;
        }
        let cl = &mut self.clients[c];
        cl.crashed = true;
        cl.holding = None;
        cl.stage = Stage::Done;
        cl.op = None;
        cl.epoch += 1;
        cl.op_gen += 1;
        self.job_ended(c, false);
    }

    /// A job attempt is over. One that may have left an entry behind (crashed, or its release
    /// was not confirmed) is rerun, as an operator reruns a failed job; so, now and then while
    /// faults last, is one that ended cleanly.
    fn job_ended(&mut self, c: usize, clean: bool) {
        let run = self.clients[c].run;
        if self.runs[run].reaper {
            return;
        }
        // GitHub's view: the attempt is over when its job is; a runner that died is noticed
        // some minutes later (a zombie's attempt was completed when GitHub declared it lost).
        if self.gh(c).completed_at.is_none() {
            let (at, conclusion) = if self.clients[c].crashed {
                (
                    self.now
                        + self
                            .rng
                            .between(LOST_RUNNER_NOTICE_MS.0, LOST_RUNNER_NOTICE_MS.1),
                    "failure",
                )
            } else if self.clients[c].cancelled {
                (self.now, "cancelled")
            } else {
                (self.now, if clean { "success" } else { "failure" })
            };
            self.set_gh(c, |t| {
                t.completed_at = Some(at);
                t.conclusion = conclusion.into();
            });
        }
        // On a lock with a lease policy, or one a reaper watches, a crashed job is sometimes
        // never rerun: its holding is left to expiry, or to the reaper.
        let abandon = self.clients[c].crashed
            && (self.params.lease.is_some() || self.params.reaper.is_some())
            && self.runs[run].sweep.is_none()
            && self.rng.ppm(self.params.profile.no_rerun_ppm);
        if abandon {
            self.count(Fault::NoRerun);
            self.runs[run].abandoned = true;
            self.log(|w| {
                format!(
                    "{} nobody reruns this job: what it left is left to expiry or the reaper",
                    w.who(c)
                )
            });
        } else if !clean || (self.faulty() && self.rng.ppm(self.params.profile.rerun_ok_ppm)) {
            self.runs[run].needs_rerun = true;
        }
        // A zombie's end may allow the rerun that waited for it, and so may any attempt's.
        self.maybe_rerun(run);
        self.maybe_sweep();
    }

    /// GitHub declares the attempts of `run` that are still running lost: each is completed in
    /// its view from now on (`failure`), and one whose process is alive is a zombie from now.
    pub(crate) fn declare_lost(&mut self, run: usize) {
        for i in 0..self.runs[run].attempts.len() {
            let c = self.runs[run].attempts[i];
            if self.clients[c].live() && self.clients[c].zombie_since.is_none() {
                let now = self.now;
                self.clients[c].zombie_since = Some(now);
                self.set_gh(c, |t| {
                    if t.completed_at.is_none_or(|at| at > now) {
                        t.completed_at = Some(now);
                        t.conclusion = "failure".into();
                    }
                });
                if self.clients[c].paused_until > self.now {
                    self.count(Fault::Zombie);
                }
                self.log(|w| format!("{} declared lost by GitHub while alive (completed in its view): a zombie from now on", w.who(c)));
            }
        }
    }

    fn maybe_rerun(&mut self, run: usize) {
        let r = &self.runs[run];
        if !r.needs_rerun || r.rerun_pending {
            return;
        }
        // GitHub reruns a run only once it is over: no attempt of it may still be running
        // (a zombie is running, but GitHub believes it is over).
        if r.attempts
            .iter()
            .any(|&a| self.clients[a].live() && self.clients[a].zombie_since.is_none())
        {
            return;
        }
        self.runs[run].rerun_pending = true;
        let at = self.now + self.rng.between(RERUN_DELAY_MS.0, RERUN_DELAY_MS.1);
        self.push(at, Ev::RerunStart(run));
    }
}

fn command_timeout(command: &Command) -> Millis {
    command.timeout_ms().unwrap_or(0)
}

pub fn fed_class(reply: &Reply) -> Fed {
    match reply {
        Reply::Written { sha, .. } => Fed::Success(sha.clone()),
        Reply::Transport { sent: false, .. } => Fed::Definite("not sent".into()),
        Reply::Transport { sent: true, .. } => Fed::Unknown,
        Reply::Http { status, .. } if *status >= 500 => Fed::Unknown,
        Reply::Http { status, .. } => Fed::Definite(format!("HTTP {status}")),
        other => Fed::Definite(format!("{other:?}")),
    }
}

pub fn fmt_t(t: Millis) -> String {
    let rel = t.saturating_sub(T0);
    format!("{}.{:03}s", rel / 1_000, rel % 1_000)
}

fn describe(command: &Command) -> String {
    match command {
        Command::Request {
            call: Call::Graphql { .. },
            ..
        } => "POST graphql".into(),
        // The simulation has no slot clients.
        Command::Request {
            call: Call::CreateRef { .. } | Call::GetRef { .. } | Call::ListMatchingRefs { .. },
            ..
        } => command.name().into(),
        Command::Request {
            call:
                Call::ReadFile {
                    path,
                    if_none_match,
                    ..
                },
            ..
        } => {
            format!(
                "GET {path}{}",
                if if_none_match.is_some() {
                    " (if-none-match)"
                } else {
                    ""
                }
            )
        }
        Command::Request {
            call:
                Call::WriteFile {
                    content,
                    sha,
                    message,
                    ..
                },
            ..
        } => {
            let revision = serde_json::from_str::<serde_json::Value>(content)
                .ok()
                .and_then(|v| v.get("revision").and_then(|r| r.as_u64()));
            format!(
                "PUT state revision {} {} ({message})",
                revision.unwrap_or(0),
                sha.as_deref()
                    .map(|s| format!("sha {}", &s[..8]))
                    .unwrap_or_else(|| "create".into())
            )
        }
        Command::Request {
            call: Call::CreateTree { .. },
            ..
        } => "POST git/trees".into(),
        Command::Request {
            call: Call::CreateCommit { .. },
            ..
        } => "POST git/commits".into(),
        Command::Request {
            call: Call::CreateBranch { branch, .. },
            ..
        } => format!("POST git/refs {branch}"),
        Command::Request {
            call: Call::GetRunAttempt {
                run_id, attempt, ..
            },
            ..
        } => format!("GET actions/runs/{run_id}/attempts/{attempt}"),
        Command::Request {
            call: Call::GetJob { job_id, .. },
            ..
        } => format!("GET actions/jobs/{job_id}"),
        Command::Request {
            call: Call::ListJobs {
                run_id, attempt, ..
            },
            ..
        } => format!("GET actions/runs/{run_id}/attempts/{attempt}/jobs"),
        Command::Sleep { .. } | Command::Finish { .. } => command.name().into(),
    }
}

fn describe_reply(reply: &Reply) -> String {
    match reply {
        Reply::Graphql { errors, .. } => format!("200 graphql, {} errors", errors.len()),
        Reply::File { sha, content, .. } => {
            let revision = serde_json::from_str::<serde_json::Value>(content)
                .ok()
                .and_then(|v| v.get("revision").and_then(|r| r.as_u64()));
            format!(
                "200 sha {} revision {}",
                &sha[..8],
                revision
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| "-".into())
            )
        }
        Reply::NotModified => "304".into(),
        Reply::Written { sha, .. } => format!("201 written sha {}", &sha[..8]),
        Reply::Created { sha } => format!("201 created {}", &sha[..8]),
        Reply::GitRef { sha, .. } => format!("200 ref {}", &sha[..8.min(sha.len())]),
        Reply::Refs { refs, .. } => format!("200 {} refs", refs.len()),
        Reply::Http {
            status,
            message,
            retry_after,
            ..
        } => {
            format!(
                "{status} {}{}",
                message.lines().next().unwrap_or(""),
                retry_after
                    .as_ref()
                    .map(|r| format!(" (retry-after {r})"))
                    .unwrap_or_default()
            )
        }
        Reply::Transport { sent, message } => format!("no answer (sent:{sent}) {message}"),
        Reply::Run {
            status, conclusion, ..
        }
        | Reply::Job {
            status, conclusion, ..
        } => {
            format!(
                "200 {status}{}",
                conclusion
                    .as_ref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            )
        }
        Reply::Jobs { total_count, .. } => format!("200 {total_count} jobs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawn_lease_policy_is_valid_at_the_first_draw() {
        let mut rng = SimRng::new(5);
        for _ in 0..20_000 {
            let p = draw_policy_once(&mut rng);
            assert_eq!(p.validate(), Ok(()), "{p:?}");
            let text = format!("{{\"capacity\": 2, \"lease\": {}}}", lease_block(&p));
            let parsed = leasehold_core::parse_config("locks/sim.config.json", &text)
                .expect("the core accepts it");
            assert_eq!(
                parsed.lease,
                Some(p.clone()),
                "the config file says exactly the drawn policy"
            );
            let renews = LeasePolicy {
                reaper_renews: true,
                ..p.clone()
            };
            let text = format!("{{\"capacity\": 2, \"lease\": {}}}", lease_block(&renews));
            let parsed = leasehold_core::parse_config("locks/sim.config.json", &text)
                .expect("the core accepts reaperRenews");
            assert_eq!(
                parsed.lease,
                Some(renews),
                "reaperRenews: true is read back"
            );
            assert!(
                (120_000..=300_000).contains(&p.ttl_ms)
                    && p.renew_ms * 2 <= p.ttl_ms
                    && p.max_ttl_ms <= 4 * p.ttl_ms
            );
            // The skew tolerance covers what is left of the clocks' disagreement after the
            // date-header correction: a second of resolution, a request, 2000 ppm over a lease.
            assert!(p.skew_ms >= 5_000);
        }
    }

    #[test]
    fn real_of_inverts_the_clock_even_in_the_past() {
        for clock in [
            Clock {
                offset_ms: -300_000,
                drift_ppm: 2_000,
            },
            Clock {
                offset_ms: 300_000,
                drift_ppm: -2_000,
            },
            Clock {
                offset_ms: 0,
                drift_ppm: 0,
            },
        ] {
            for t in [T0, T0 + 1, T0 + 123_456, T0 + 3_600_000] {
                let target = clock.local(t);
                let r = clock.real_of(target);
                assert!(
                    clock.local(r) >= target && (r == T0 || clock.local(r - 1) < target),
                    "{clock:?} {t}"
                );
                assert_eq!(clock.real_at(target, T0), r);
                assert_eq!(
                    clock.real_at(target, T0 + 7_200_000),
                    T0 + 7_200_000,
                    "real_at never goes back"
                );
            }
        }
    }
}
