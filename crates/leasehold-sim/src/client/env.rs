//! What a client's driver acts on ([`Env`]): the world's scheduler (its clock, queue, generator,
//! counters and trace), the simulated GitHub and the wire to it, the checker's feed, and the
//! clients and runs (for the trace's names, reruns and GitHub's view of each attempt). The top
//! of the simulation (`src/sim.rs`) lends it for each event it hands a client.

use std::collections::BTreeMap;

use leasehold_core::limits::DEFAULT_SCAN_SECONDS;
use leasehold_core::time::Millis;
use leasehold_core::{LeasePolicy, OperationKind};
use leasehold_github_model::Timing;

use crate::checker::{Checker, Feed};
use crate::fault::Fault;
use crate::github::GitHub;
use crate::types::{Breach, ClientId, Invariant, LOCK, REPOSITORY};
use crate::world::{Ev, World};

use super::attempt::{Client, Run};

/// The driver's environment while one event is handled.
pub struct Env<'a> {
    /// The instant of the event (the world's `now`, which stays put while it is handled).
    pub now: Millis,
    pub world: &'a mut World,
    pub gh: &'a mut GitHub,
    pub checker: &'a mut Checker,
    pub clients: &'a mut Vec<Client>,
    pub runs: &'a mut Vec<Run>,
    /// An expiry sweep is scheduled and has not started yet.
    pub sweep_pending: &'a mut bool,
    /// The reaper's schedule has stopped: everything settled.
    pub reaper_stopped: &'a mut bool,
}

impl Env<'_> {
    pub(crate) fn push(&mut self, at: Millis, ev: Ev) {
        self.world.queue.push(at, ev);
    }

    pub fn faulty(&self) -> bool {
        self.world.faulty()
    }

    pub fn count(&mut self, fault: Fault) {
        self.world.count(fault);
    }

    pub fn t(&self) -> String {
        self.world.t()
    }

    /// A trace line, made only when there is a trace.
    pub fn log(&mut self, line: impl FnOnce(&Env) -> String) {
        if self.world.trace.is_none() {
            return;
        }
        let text = line(self);
        self.world.log_line(&text);
    }

    pub fn who(&self, c: ClientId) -> String {
        let cl = &self.clients[c];
        let zombie = if cl.zombie_since.is_some() {
            " zombie"
        } else {
            ""
        };
        format!("c{c}({}#{}{zombie})", self.runs[cl.run].run_id, cl.attempt)
    }

    pub fn violate(&mut self, invariant: Invariant, message: String) {
        self.world.violate(invariant, message);
    }

    /// Records what the checker found, if anything.
    pub(crate) fn breach(&mut self, breach: Option<Breach>) {
        if let Some((invariant, message)) = breach {
            self.violate(invariant, message);
        }
    }

    /// Feeds the checker one event (one that borrows nothing of the clients).
    pub(crate) fn tell(&mut self, feed: Feed<'_>) {
        let breach = self.checker.feed(self.now, feed);
        self.breach(breach);
    }

    /// GitHub's view of job client `c`'s attempt (the model's record of its job).
    pub fn gh_view(&self, c: ClientId) -> &Timing {
        &self
            .gh
            .store
            .github
            .job(self.clients[c].job_id)
            .expect("every job attempt is in the Actions view")
            .timing
    }

    /// Changes GitHub's view of job client `c`'s attempt: its job and its run attempt alike (one
    /// job per attempt), and tells the checker. Reapers' runs are not in the view.
    pub(crate) fn set_gh(&mut self, c: ClientId, change: impl FnOnce(&mut Timing)) {
        let cl = &self.clients[c];
        if cl.is_reaper() {
            return;
        }
        let (run_id, attempt) = (self.runs[cl.run].run_id, cl.attempt);
        let gh = &mut self.gh.store.github;
        let job = gh.job_mut(cl.job_id).expect("in the Actions view");
        change(&mut job.timing);
        let timing = job.timing.clone();
        gh.set_run_attempt(REPOSITORY, run_id, attempt, timing.clone());
        let timing = &timing;
        self.tell(Feed::GitHubView { client: c, timing });
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
            if run.operator.is_some() {
                "recover".into()
            } else if cl.is_reaper() {
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
                // Half the job attempts run where GitHub gives `job.check_run_id` (their job
                // id; acquire asks getJob), the others where it does not (listJobs by runner).
                if cl.job_id % 2 == 0 {
                    put("check-run-id", cl.job_id.to_string());
                }
                if let Some(ask) = self
                    .world
                    .params
                    .pool
                    .as_ref()
                    .and_then(|p| p.runs.get(cl.run))
                {
                    for (k, v) in &ask.inputs {
                        put(k, v.clone());
                    }
                }
            }
            OperationKind::Release => {
                if let Some(d) = s.deadline_s {
                    put("release-deadline-seconds", d.to_string());
                }
                // Half the runs release on the version acquire carried (as the action does),
                // half read first (a release in another job, or a carry too large).
                if let (Some(carry), 0) = (&cl.acquire_carry, run.run_id % 2) {
                    put("carried", serde_json::to_string(&[carry]).expect("json"));
                }
                if let Some(p) = &self.world.params.pool {
                    for (k, v) in p.release_inputs(cl.run, self.world.now) {
                        put(&k, v);
                    }
                }
                // A lifecycle seed: the run's cleanup report (valid, invalid or none).
                if let Some(l) = &self.world.params.lifecycle {
                    let report = l.reports.get(cl.run).copied();
                    for (k, v) in report.map(|r| r.inputs()).unwrap_or_default() {
                        put(k, v.into());
                    }
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
                if let Some(p) = &self.world.params.pool {
                    for (k, v) in p.renew_inputs(cl.run, self.world.now) {
                        put(&k, v);
                    }
                }
            }
            OperationKind::Reap => {
                let scan_s = self
                    .world
                    .params
                    .reaper
                    .as_ref()
                    .map_or(DEFAULT_SCAN_SECONDS, |r| r.scan_s);
                put("scan-deadline-seconds", scan_s.to_string());
            }
            OperationKind::ReportUsage => {
                let pool = self.world.params.pool.as_ref();
                let reading = run.usage.and_then(|i| pool?.readings.get(i));
                for (k, v) in reading.map(|r| r.inputs()).unwrap_or_default() {
                    put(&k, v);
                }
            }
            OperationKind::Recover => {
                for (k, v) in run.operator.iter().flat_map(|a| a.inputs()) {
                    put(k, v);
                }
            }
            // Nobody runs status.
            OperationKind::Status => {}
            // Claims are not simulated yet.
            _ => {}
        }
        m
    }

    /// The lease a holding of this run gets: `lease-minutes`, within the ceiling, or the lock
    /// policy's ttl.
    pub fn lease_ms(&self, run: usize) -> Millis {
        let policy = self
            .world
            .params
            .lease
            .clone()
            .unwrap_or_else(LeasePolicy::unconfigured);
        self.runs[run]
            .settings
            .lease_min
            .map_or(policy.ttl_ms, |m| (m * 60_000).min(policy.max_ttl_ms))
    }
}
