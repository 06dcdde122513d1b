//! The scheduled reaper's client side: its schedule (in half the seeds a workflow runs the
//! `reap` operation every 3 to 10 minutes, each run late by a jitter, usually under 30 s,
//! sometimes minutes: GitHub's schedule is best effort; one tick in twenty also gets a manual
//! run within 30 s, and a reap that outlasts the interval overlaps the next), its runs (each a
//! client of its own: its run id, job `reap`, its runner, its clock, driven through the same
//! driver loop and faults as every job: pauses of 6 to 12 minutes, crashes; never rerun, never a
//! zombie), what the Actions API told each run (fed to the checker), and what finished reaps
//! kept. The schedule stops once nothing is left to reap or to happen: every job has ended, no
//! rerun or sweep is pending, no job's request is in flight, and the lock is empty.

use leasehold_core::time::Millis;
use leasehold_core::{Outcome, ReapAction, Reply};

use crate::checker::Feed;
use crate::types::{Stage, Told, JOB_ID_BASE, REPOSITORY, T0};
use crate::world::params::{REAPER_RUN_BASE, REAP_LATE_MAX_MS, REPORTER_RUN_BASE};
use crate::world::Ev;

use super::attempt::{JobSettings, Run};
use super::env::Env;

impl Env<'_> {
    /// The job client with this job id.
    pub(crate) fn job_client(&self, job_id: u64) -> Option<usize> {
        let c = usize::try_from(job_id.checked_sub(JOB_ID_BASE)?).ok()?;
        (c < self.clients.len() && !self.clients[c].is_reaper()).then_some(c)
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
                // The model names the attempt it answers for (GitHub need not).
                attempt: run_attempt.expect("the model's run attempts carry their number"),
                job_id: None,
                status: status.clone().unwrap_or_default(),
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
        self.tell(Feed::ReaperTold { client: c, told });
    }

    /// Whether anything is left for a reaper to do, or may yet be: a job runs or will run, a
    /// request of a job may still land, or the lock has entries.
    pub(crate) fn reaper_needed(&self) -> bool {
        self.clients.iter().any(|cl| cl.live() && !cl.is_reaper())
            || self.runs.iter().any(|r| r.needs_rerun || r.rerun_pending)
            || *self.sweep_pending
            || self.gh.jobs_in_flight > 0
            || self
                .gh
                .store
                .committed()
                .is_none_or(|st| !st.holders.is_empty() || !st.queue.is_empty())
    }

    /// The schedule fires: a reap run starts (unless nothing is left to do: the schedule stops),
    /// and the next tick is set, late by a jitter.
    pub(crate) fn reap_tick(&mut self, k: u64) {
        let Some(r) = self.world.params.reaper.clone() else {
            return;
        };
        let nominal = T0 + r.first_ms + k * r.interval_ms;
        if self.now > nominal + 60_000 {
            self.world.counters.reaper.late_ticks += 1;
        }
        // 6: no claim of a completed attempt is left past the reaper's bound.
        let breach = self.checker.feed(self.now, Feed::ReaperTick);
        if breach.is_some() {
            return self.breach(breach);
        }
        if !self.reaper_needed() {
            *self.reaper_stopped = true;
            self.log(|_| "the reaper's schedule stops: nothing is left to reap".into());
            return;
        }
        let c = self.new_reaper();
        self.push(self.now, Ev::JobStart(c));
        if self.world.rng.below(20) == 0 {
            // A manual run (workflow_dispatch) as well, overlapping the scheduled one.
            let c = self.new_reaper();
            let at = self.now + self.world.rng.below(30_001);
            self.push(at, Ev::JobStart(c));
        }
        let late = match self.world.rng.below(20) {
            0 => self.world.rng.between(120_000, REAP_LATE_MAX_MS),
            1..=3 => self.world.rng.between(30_000, 120_000),
            _ => self.world.rng.below(30_001),
        };
        let at = (nominal + r.interval_ms + late).max(self.now);
        self.push(at, Ev::ReapTick(k + 1));
    }

    /// A new run of the reaper workflow, and its one job attempt.
    pub(crate) fn new_reaper(&mut self) -> usize {
        let run = self.runs.len();
        let k = self.runs.iter().filter(|r| r.reaper).count() as u64;
        let settings = JobSettings::service();
        self.runs
            .push(Run::new(REAPER_RUN_BASE + k, settings, true));
        let by = format!("reaper {REPOSITORY}:{}:reap", REAPER_RUN_BASE + k);
        let c = self.new_attempt(run, Some(by));
        if self
            .clients
            .iter()
            .any(|cl| cl.is_reaper() && cl.live() && cl.stage != Stage::NotStarted)
        {
            self.world.counters.reaper.overlapping += 1;
        }
        c
    }

    /// A run that reports the pool's reading `i` (`report-usage`), starting at `at`.
    pub(crate) fn new_reporter(&mut self, i: usize, at: Millis) -> usize {
        let run = self.runs.len();
        let settings = JobSettings::service();
        let run_id = REPORTER_RUN_BASE + i as u64;
        let mut r = Run::new(run_id, settings, true);
        r.usage = Some(i);
        self.runs.push(r);
        let c = self.new_attempt(run, Some(format!("usage {REPOSITORY}:{run_id}:report")));
        self.push(at, Ev::JobStart(c));
        c
    }

    /// A reap finished: what it kept, and why it failed.
    pub(crate) fn reap_finished(&mut self, _c: usize, outcome: &Outcome) {
        let r = &mut self.world.counters.reaper;
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
