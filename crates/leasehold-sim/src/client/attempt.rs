//! What the driver of each client keeps: one job attempt (or reaper run) and its operation, the
//! run it belongs to and the run's settings, and the guard of its work step.

use leasehold_core::guard::{Guard as Machine, GuardSettings};
use leasehold_core::time::Millis;
use leasehold_core::{LeaseView, Operation, RawInputs, ResultWord};

use crate::types::{Stage, Work};
use crate::world::Clock;

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

impl JobSettings {
    /// The settings of a one-step service run (the reaper, a usage reporter, an operator): it
    /// holds nothing, so none of the lock job's knobs apply.
    pub fn service() -> Self {
        JobSettings {
            poll_s: 10,
            timeout_min: 0,
            lease_min: None,
            hold_ms: 0,
            deadline_s: None,
            release_on_exit: false,
            guard_mode: GuardMode::Verify,
            kill_grace_ms: 0,
            renew_names_holder: false,
            renew_if_due: false,
            record_job_id: false,
        }
    }
}

/// What a client is: a job of the workflow that uses the lock, or a run of the scheduled reaper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Job,
    Reaper,
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
    /// Bumped whenever a pending timer must be ignored (new sleep, crash).
    pub epoch: u64,
    pub paused_until: Millis,
    /// Set when GitHub declared this attempt lost while it was still alive.
    pub zombie_since: Option<Millis>,
    pub crashed: bool,
    /// This attempt's acquire nonce.
    pub nonce: String,
    /// Real time at which the last proven lease view says to stop the protected work
    /// (`lease.localDeadline` on the client's clock): from acquire's outcome, then from each
    /// lease the guard machine took in as proven.
    pub belief_until: Option<Millis>,
    /// The guard of the work step (in `Stage::Hold`).
    pub guard: Option<Guard>,
    /// Bumped whenever a work step starts or ends: its pending events are then ignored.
    pub hold_gen: u64,
    pub token_ready_at: Millis,
    pub acquire_result: Option<ResultWord>,
    /// The revision of the state acquire finished on, which the driver saves for acquire's post
    /// step (`min-revision`: older answers are a stale cache to it).
    pub acquire_revision: Option<u64>,
    /// The version acquire carried to the job's later steps (`GITHUB_ENV`), for release.
    pub acquire_carry: Option<String>,
    pub release_result: Option<ResultWord>,
    pub role: Role,
    /// This job attempt's id in the Actions API.
    pub job_id: u64,
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
    /// A pool's usage reporter instead (a run of its own, like the reaper's: never rerun, not a
    /// job of the lock): the index of the reading it reports with `report-usage`.
    pub usage: Option<usize>,
    /// A lifecycle seed's operator instead (a run of its own, like the reaper's): what it
    /// recovers, as it read the lock.
    pub operator: Option<crate::lifecycle::OperatorAct>,
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
            usage: None,
            operator: None,
        }
    }
}

/// The clients of one seed and their runs, and what the schedule of later jobs keeps.
#[derive(Default)]
pub struct Jobs {
    pub clients: Vec<Client>,
    pub runs: Vec<Run>,
    /// An expiry sweep is scheduled and has not started yet.
    pub sweep_pending: bool,
    /// The reaper's schedule has stopped: everything settled.
    pub reaper_stopped: bool,
}

/// How a job's guard starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardMode {
    /// The guard action and `leasehold guard` (`actions/lib/guard.mjs`): verify the holding with
    /// a renewal first; the work runs only if it ends `renewed`, under its lease.
    Verify,
    /// An embedder of the core: the machine starts from acquire's lease at once, renewing with
    /// `if-due` (so `not-due` answers happen).
    FromAcquire,
}

/// The guard of one work step: the core's machine, and what its driver keeps.
#[derive(Clone, Debug)]
pub struct Guard {
    pub mode: GuardMode,
    pub machine: Machine,
    pub work: Work,
    /// Bumped at every timer armed: only the latest `GuardWake` counts.
    pub timer: u64,
    /// Local time the armed timer is for.
    pub timer_at: Option<Millis>,
    /// The renewal running started while the proven lease's deadline was still ahead.
    pub renewal_live: bool,
}

impl Guard {
    /// `kill_grace_ms` is read as the input `kill-grace-seconds`, by the core's reader.
    pub fn new(mode: GuardMode, lease: LeaseView, kill_grace_ms: Millis) -> Self {
        let raw: RawInputs = [(
            "kill-grace-seconds".to_string(),
            (kill_grace_ms / 1_000).to_string(),
        )]
        .into_iter()
        .collect();
        let settings = GuardSettings::parse(&raw).expect("the simulation's kill grace is valid");
        let start = (mode == GuardMode::FromAcquire).then_some(lease);
        Guard {
            mode,
            machine: Machine::with_settings(settings, start),
            work: Work::NotStarted,
            timer: 0,
            timer_at: None,
            renewal_live: false,
        }
    }
}
