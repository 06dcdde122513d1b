//! The scheduled reaper, and GitHub's Actions API as the simulated GitHub answers it.
//!
//! **GitHub's view of a job attempt** ([`World::gh_status`]): `queued` until the job starts,
//! `in_progress` while it runs, `completed` once it ended: at once when its job ends (cleanly or
//! not), some minutes later when its runner died ([`LOST_RUNNER_NOTICE_MS`](crate::world::LOST_RUNNER_NOTICE_MS): GitHub notices the
//! lost runner), from the moment GitHub declared a runner lost while its process lives on (a
//! zombie), and at the latest when the run is rerun (an operator cancels a hung attempt before
//! rerunning it). A completed attempt stays completed. The sim's runs have one job (`build`)
//! per attempt, so a run attempt is over exactly when its job is; each job attempt has its own
//! job id ([`JOB_ID_BASE`] + its client index).
//!
//! **The Actions API** answers `getRunAttempt`, `getJob` and `listJobs` from that view, with a
//! `date` header; an unknown run, attempt or job is a 404. While faults last, its requests meet
//! every fault a read meets (5xx, not sent, lost answers, time limits, 401, 403/429 rate limits)
//! and two of its own: 403 "Resource not accessible by integration" and 404 for a run the token
//! cannot see ([`Fault::ActionsForbidden`](crate::fault::Fault::ActionsForbidden), [`Fault::ActionsNotFound`](crate::fault::Fault::ActionsNotFound)). It never writes, and is
//! never stale: no answer says an attempt runs after one said it completed.
//!
//! **The reaper** ([`ReaperParams`]): in half the seeds a scheduled workflow runs the `reap`
//! operation on the lock every 3 to 10 minutes ([`REAP_INTERVAL_MS`], drawn per seed), each run
//! late by a jitter (usually under 30 s, sometimes minutes: GitHub's schedule is best effort, up
//! to [`REAP_LATE_MAX_MS`]); one tick in twenty also gets a manual run within 30 s, and a reap
//! that outlasts the interval overlaps the next. Each run is a client of its own (its run id,
//! job `reap`, its runner, its clock), driven through the same driver loop and faults as every
//! job (pauses of 6 to 12 minutes, crashes; never rerun, never a zombie). The schedule stops
//! once nothing is left to reap or to happen: every job has ended, no rerun or sweep is
//! pending, no job's request is in flight, and the lock is empty.

use leasehold_core::limits::REAP_WRITE_BUDGET_MS as WRITE_BUDGET_MS;
use leasehold_core::time::Millis;
use leasehold_core::{Call, Command, Outcome, ReapAction, Reply, RunIdentity};

use crate::guard::GuardMode;
use crate::rng::SimRng;
use crate::world::{Ev, JobSettings, Run, Told, World, JOB_ID_BASE, REPOSITORY, T0};

/// The reaper's schedule: every 3 to 10 minutes (drawn per seed, like a cron line).
pub const REAP_INTERVAL_MS: (Millis, Millis) = (180_000, 600_000);
/// The latest a scheduled run starts after its tick.
pub const REAP_LATE_MAX_MS: Millis = 300_000;
/// `scan-deadline-seconds` of the reaper workflow (drawn per seed).
pub const REAP_SCAN_S: (u64, u64) = (30, 480);
/// What a reap needs beyond its scan deadline and write budget to be over: request latencies
/// (at most 500 ms a round trip), write spacing (1 s) and busy deferrals, conflict backoffs.
pub const REAP_SLACK_MS: Millis = 30_000;
/// The first tick comes within this long of the seed's start.
pub const FIRST_TICK_MS: Millis = 150_000;
/// Reaper runs get run ids from here on (the jobs' start at 4000).
pub const REAPER_RUN_BASE: u64 = 90_000;

/// A seed's scheduled reaper.
#[derive(Clone, Debug)]
pub struct ReaperParams {
    pub interval_ms: Millis,
    /// `scan-deadline-seconds`.
    pub scan_s: u64,
    /// The first tick, after the seed's start.
    pub first_ms: Millis,
}

impl ReaperParams {
    pub fn draw(rng: &mut SimRng) -> Self {
        let interval_ms = rng.between(REAP_INTERVAL_MS.0, REAP_INTERVAL_MS.1);
        let scan_s = rng.between(REAP_SCAN_S.0, REAP_SCAN_S.1);
        // The schedule's phase: its first tick falls in the seed's first minutes.
        let first_ms = rng.below(FIRST_TICK_MS.min(interval_ms));
        ReaperParams {
            interval_ms,
            scan_s,
            first_ms,
        }
    }

    /// The longest an entry whose attempt GitHub completed may stay, from the instant it could
    /// be removed (completed, faults stopped, the entry committed): the next reap starts within
    /// an interval and the longest lateness, and is over within its scan deadline, its write
    /// budget and [`REAP_SLACK_MS`].
    pub fn removal_bound_ms(&self) -> Millis {
        self.interval_ms + REAP_LATE_MAX_MS + self.scan_s * 1_000 + WRITE_BUDGET_MS + REAP_SLACK_MS
    }
}

/// Index of an Actions API command in [`crate::report::ACTIONS_KINDS`].
pub fn actions_index(command: &Command) -> usize {
    match command.call() {
        Some(Call::GetRunAttempt { .. }) => 0,
        Some(Call::GetJob { .. }) => 1,
        _ => 2,
    }
}

/// Whether the reaper asked about exactly this entry's attempt (or job): the key the core asks
/// by (`EvidenceKey::of`).
fn told_about(t: &Told, run: &RunIdentity) -> bool {
    match run.job_id {
        Some(job) => t.job_id == Some(job),
        None => t.job_id.is_none() && t.run_id == run.run_id && t.attempt == run.run_attempt,
    }
}

impl World {
    /// GitHub's view of client `c`'s job attempt at real time `t`.
    pub fn gh_status(&self, c: usize, t: Millis) -> &'static str {
        self.gh(c).status(t)
    }

    /// The job client with this job id.
    pub(crate) fn job_client(&self, job_id: u64) -> Option<usize> {
        let c = usize::try_from(job_id.checked_sub(JOB_ID_BASE)?).ok()?;
        (c < self.clients.len() && !self.clients[c].is_reaper()).then_some(c)
    }

    /// The client that made the claim (holder id, nonce), if a simulated one did.
    pub(crate) fn owner(&self, holder_id: &str, nonce: &str) -> Option<usize> {
        self.clients
            .iter()
            .position(|cl| cl.nonce == nonce && cl.holder_id == holder_id)
    }

    /// The Actions API's answer, from GitHub's view now (the model's), with what the simulated
    /// GitHub varies: a job's `run_attempt`, which GitHub does not promise, absent one time in
    /// four.
    pub(crate) fn actions_answer(&mut self, command: &Command) -> Reply {
        let mut reply = self.store.github.answer(command, self.now).reply;
        let seen = match &mut reply {
            Reply::Run { status, .. } => status.clone(),
            Reply::Job {
                status,
                run_attempt,
                ..
            } => {
                if self.rng.below(4) == 0 {
                    *run_attempt = None;
                }
                status.clone()
            }
            Reply::Jobs { jobs, .. } => jobs[0].status.clone(),
            _ => "404 unknown".into(),
        };
        *self
            .counters
            .reaper
            .actions_answers
            .entry(seen)
            .or_default() += 1;
        reply
    }

    /// Remembers an Actions API answer fed to a reaper's core.
    pub(crate) fn record_told(&mut self, c: usize, reply: &Reply, at: Millis) {
        let told = match reply {
            Reply::Run {
                run_id,
                run_attempt,
                status,
                ..
            } => Told {
                run_id: *run_id,
                attempt: *run_attempt,
                job_id: None,
                status: status.clone(),
                at,
            },
            Reply::Job {
                id,
                run_id,
                run_attempt,
                status,
                ..
            } => {
                let attempt = self
                    .job_client(*id)
                    .map(|j| self.clients[j].attempt)
                    .or(*run_attempt)
                    .unwrap_or(0);
                Told {
                    run_id: *run_id,
                    attempt,
                    job_id: Some(*id),
                    status: status.clone(),
                    at,
                }
            }
            _ => return,
        };
        self.clients[c].told.push(told);
    }

    /// The last answer reaper `rc` was fed about this entry's attempt (or job).
    pub(crate) fn told(&self, rc: usize, run: &RunIdentity) -> Option<&Told> {
        self.clients[rc]
            .told
            .iter()
            .rev()
            .find(|t| told_about(t, run))
    }

    /// Whether anything is left for a reaper to do, or may yet be: a job runs or will run, a
    /// request of a job may still land, or the lock has entries.
    fn reaper_needed(&self) -> bool {
        self.clients.iter().any(|cl| cl.live() && !cl.is_reaper())
            || self.runs.iter().any(|r| r.needs_rerun || r.rerun_pending)
            || self.sweep_pending
            || self.jobs_in_flight > 0
            || self
                .committed()
                .is_none_or(|st| !st.holders.is_empty() || !st.queue.is_empty())
    }

    /// The schedule fires: a reap run starts (unless nothing is left to do: the schedule stops),
    /// and the next tick is set, late by a jitter.
    pub(crate) fn reap_tick(&mut self, k: u64) {
        let Some(r) = self.params.reaper.clone() else {
            return;
        };
        let nominal = T0 + r.first_ms + k * r.interval_ms;
        if self.now > nominal + 60_000 {
            self.counters.reaper.late_ticks += 1;
        }
        // 6: no claim of a completed attempt is left past the reaper's bound.
        if let Some(message) = self
            .committed()
            .cloned()
            .and_then(|st| self.overdue_claim(&st, &[]))
        {
            return self.violate(crate::check::Invariant::Liveness, message);
        }
        if !self.reaper_needed() {
            self.reaper_stopped = true;
            self.log(|_| "the reaper's schedule stops: nothing is left to reap".into());
            return;
        }
        let c = self.new_reaper();
        self.push(self.now, Ev::JobStart(c));
        if self.rng.below(20) == 0 {
            // A manual run (workflow_dispatch) as well, overlapping the scheduled one.
            let c = self.new_reaper();
            let at = self.now + self.rng.below(30_001);
            self.push(at, Ev::JobStart(c));
        }
        let late = match self.rng.below(20) {
            0 => self.rng.between(120_000, REAP_LATE_MAX_MS),
            1..=3 => self.rng.between(30_000, 120_000),
            _ => self.rng.below(30_001),
        };
        let at = (nominal + r.interval_ms + late).max(self.now);
        self.push(at, Ev::ReapTick(k + 1));
    }

    /// A new run of the reaper workflow, and its one job attempt.
    pub(crate) fn new_reaper(&mut self) -> usize {
        let run = self.runs.len();
        let k = self.runs.iter().filter(|r| r.reaper).count() as u64;
        let settings = JobSettings {
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
        };
        self.runs
            .push(Run::new(REAPER_RUN_BASE + k, settings, true));
        let c = self.new_attempt(run);
        let by = format!("reaper {REPOSITORY}:{}:reap", REAPER_RUN_BASE + k);
        self.clients[c].holder_id = by;
        if self
            .clients
            .iter()
            .any(|cl| cl.is_reaper() && cl.live() && cl.stage != crate::world::Stage::NotStarted)
        {
            self.counters.reaper.overlapping += 1;
        }
        c
    }

    /// A reap finished: what it kept, and why it failed.
    pub(crate) fn reap_finished(&mut self, _c: usize, outcome: &Outcome) {
        let r = &mut self.counters.reaper;
        if let Some(e) = &outcome.error {
            *r.failures.entry(e.code.to_string()).or_default() += 1;
        }
        for report in &outcome.reaped {
            for e in &report.entries {
                if e.action == ReapAction::Kept {
                    *r.kept.entry(e.reason.to_string()).or_default() += 1;
                }
                if e.run.job_id.is_some() {
                    r.judged_by_job += 1;
                } else {
                    r.judged_by_run += 1;
                }
            }
        }
    }
}
