//! A client's life: a job attempt made (GitHub's view of it queued), started, paused,
//! cancelled, crashed, ended, declared lost while alive (a zombie), and rerun; and the events of
//! the world that concern a client, handed to the part of its driver they are for.

use leasehold_core::{Event, OperationKind, Reply};
use leasehold_github_model::{Job, Timing};

use crate::checker::Feed;
use crate::fault::Fault;
use crate::types::{Stage, JOB_ID_BASE, REPOSITORY, T0};
use crate::world::params::{LOST_RUNNER_NOTICE_MS, MIN_PAUSE_MS, RERUN_DELAY_MS};
use crate::world::{Clock, Ev};

use super::attempt::{Client, Role};
use super::env::Env;

impl Env<'_> {
    /// A new attempt of `run` (under its own holder id, or the one its run builds).
    pub(crate) fn new_attempt(&mut self, run: usize, holder_id: Option<String>) -> usize {
        let c = self.clients.len();
        let attempt = self.runs[run].attempts.len() as u32 + 1;
        let p = &self.world.params.profile;
        let (max_offset, max_drift) = (p.max_offset_ms, p.max_drift_ppm);
        let clock = if max_offset > 0 {
            self.count(Fault::ClockSkew);
            Clock {
                offset_ms: self.world.rng.between(0, 2 * max_offset) as i64 - max_offset as i64,
                drift_ppm: self.world.rng.between(0, 2 * max_drift) as i64 - max_drift as i64,
            }
        } else {
            Clock {
                offset_ms: 0,
                drift_ppm: 0,
            }
        };
        let nonce = format!("{:016x}", self.world.rng.next_u64());
        let holder_id = holder_id.unwrap_or_else(|| {
            leasehold_core::holder_id(REPOSITORY, self.runs[run].run_id, "build", "")
        });
        self.clients.push(Client {
            run,
            attempt,
            holder_id,
            // A lifecycle seed's jobs share a few runners (a reclaim needs a waiter on the
            // runner a quarantine was left on), as do a pool's under runner serialization in
            // some seeds (by attempt: a rerun may move); reapers and sweeps keep their own.
            runner: match (&self.world.params.lifecycle, &self.world.params.pool) {
                (Some(l), _) if run < l.reports.len() => l.runner(run),
                (_, Some(p)) if p.runners > 0 && run < p.runs.len() && !self.runs[run].reaper => {
                    format!("sim-runner-{}", c as u64 % p.runners)
                }
                _ => format!("sim-runner-{c}"),
            },
            clock,
            stage: Stage::NotStarted,
            op: None,
            op_started: 0,
            op_gen: 0,
            cancelled: false,
            cancel_told: false,
            sleeping: false,
            epoch: 0,
            paused_until: 0,
            zombie_since: None,
            crashed: false,
            nonce,
            belief_until: None,
            guard: None,
            hold_gen: 0,
            token_ready_at: 0,
            acquire_result: None,
            acquire_revision: None,
            acquire_carry: None,
            release_result: None,
            role: if self.runs[run].reaper {
                Role::Reaper
            } else {
                Role::Job
            },
            job_id: JOB_ID_BASE + c as u64,
        });
        self.runs[run].attempts.push(c);
        let (cl, r) = (&self.clients[c], &self.runs[run]);
        let kill_grace_ms = r.settings.kill_grace_ms;
        let feed = Feed::AttemptStarted {
            client: c,
            run_id: r.run_id,
            attempt,
            holder_id: &cl.holder_id,
            nonce: &cl.nonce,
            // An operator's writes are judged as an operator's (never by the reaper's proof).
            reaper: r.reaper && r.operator.is_none(),
            operator: r.operator.as_ref(),
            clock,
            kill_grace_ms,
        };
        let breach = self.checker.feed(self.now, feed);
        self.breach(breach);
        if !self.runs[run].reaper {
            self.world.counters.attempts += 1;
            // GitHub's view of the attempt and its one job: queued until it starts.
            let run_id = self.runs[run].run_id;
            let gh = &mut self.gh.store.github;
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
            let timing = &Timing::queued();
            self.tell(Feed::GitHubView { client: c, timing });
        }
        c
    }

    /// Handles an event that concerns a client (every event but a request's arrival at
    /// GitHub).
    pub(crate) fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::JobStart(c) => {
                let token_lag = self.faulty() && self.world.params.profile.token_lag;
                if token_lag {
                    self.clients[c].token_ready_at = self.now + self.world.rng.between(0, 8_000);
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
                if self.runs[self.clients[c].run].usage.is_some() {
                    return self.start_op(c, OperationKind::ReportUsage);
                }
                if self.runs[self.clients[c].run].operator.is_some() {
                    return self.start_op(c, OperationKind::Recover);
                }
                if self.clients[c].is_reaper() {
                    return self.start_op(c, OperationKind::Reap);
                }
                let at = self.now + self.world.rng.between(0, 120_000);
                if at < T0 + self.world.params.profile.until
                    && self.world.rng.ppm(self.world.params.profile.cancel_ppm)
                {
                    self.push(at, Ev::Cancel(c));
                }
                self.start_op(c, OperationKind::Acquire);
            }
            Ev::Arrive(_) => unreachable!("GitHub handles arrivals"),
            Ev::Respond(req) => {
                let c = self.gh.requests[req].client;
                if self.abandoned(req) || self.held_by_pause(c, ev) {
                    return;
                }
                self.guard_recheck(c);
                if self.abandoned(req) {
                    return; // the guard, acting on its timer first, ended the step
                }
                self.gh.requests[req].answered = true;
                let reply = self.gh.requests[req]
                    .reply
                    .take()
                    .expect("a processed request has a reply");
                self.deliver(c, req, reply);
            }
            Ev::Timeout(req) => {
                let c = self.gh.requests[req].client;
                if self.abandoned(req) || self.held_by_pause(c, ev) {
                    return;
                }
                self.guard_recheck(c);
                if self.abandoned(req) {
                    return; // the guard, acting on its timer first, ended the step
                }
                self.gh.requests[req].answered = true;
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
            Ev::OperatorTick(k) => self.operator_tick(k),
            Ev::DeclaredLost(run) => {
                self.declare_lost(run);
                // The run is rerun shortly after (an operator, or an automation that reruns
                // failed jobs); it is pending already, so nothing else schedules it.
                let at = self.now + self.world.rng.between(RERUN_DELAY_MS.0, RERUN_DELAY_MS.1);
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
                let c = self.new_attempt(run, None);
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
                    .world
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
    pub(crate) fn abandoned(&self, req: usize) -> bool {
        let r = &self.gh.requests[req];
        let cl = &self.clients[r.client];
        r.answered || !cl.live() || cl.op_gen != r.op_gen
    }

    pub(crate) fn tell_cancel(&mut self, c: usize) {
        self.clients[c].cancel_told = true;
        self.clients[c].sleeping = false;
        let now = self.clients[c].clock.local(self.now);
        self.feed(c, Event::Cancel { now });
    }

    /// Defers `ev` while the client's process is paused; may start a pause (a fault).
    pub(crate) fn held_by_pause(&mut self, c: usize, ev: Ev) -> bool {
        if self.clients[c].paused_until > self.now {
            let at = self.clients[c].paused_until;
            self.push(at, ev);
            return true;
        }
        if self.faulty() && self.world.rng.ppm(self.world.params.profile.pause_ppm) {
            // Longer than the job's lease, and at least 6 minutes (so past the faults); a
            // reaper holds no lease: 6 to 12 minutes.
            let lease = if self.clients[c].is_reaper() {
                MIN_PAUSE_MS
            } else {
                self.lease_ms(self.clients[c].run).max(MIN_PAUSE_MS)
            };
            let pause = lease + self.world.rng.between(1_000, lease);
            let until = self.now + pause;
            self.tell(Feed::Paused { client: c, until });
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
                && self.world.rng.ppm(self.world.params.profile.zombie_ppm)
                && !self.runs[run].rerun_pending
            {
                self.runs[run].rerun_pending = true;
                // GitHub notices the lost runner at any time in the pause, or late in it; it
                // completes the attempt then, and the run is rerun shortly after.
                let at = if self.world.rng.below(2) == 0 {
                    self.now + self.world.rng.between(5_000, pause - 1_000)
                } else {
                    (until - self.world.rng.between(1_000, 120_000)).max(self.now + 5_000)
                };
                self.push(at, Ev::DeclaredLost(run));
            }
            self.push(until, ev);
            return true;
        }
        false
    }

    pub(crate) fn crash(&mut self, c: usize, kind: Fault) {
        self.count(kind);
        self.log(|w| format!("{} crashes ({})", w.who(c), kind.name()));
        if self.clients[c].stage == Stage::Hold {
            // SIGKILL: the work stops with the job, no release, no post step.
            self.clients[c].hold_gen += 1;
        }
        self.tell(Feed::Crashed { client: c });
        let cl = &mut self.clients[c];
        cl.crashed = true;
        cl.stage = Stage::Done;
        cl.op = None;
        cl.epoch += 1;
        cl.op_gen += 1;
        self.job_ended(c, false);
    }

    /// A job attempt is over. One that may have left an entry behind (crashed, or its release
    /// was not confirmed) is rerun, as an operator reruns a failed job; so, now and then while
    /// faults last, is one that ended cleanly.
    pub(crate) fn job_ended(&mut self, c: usize, clean: bool) {
        self.tell(Feed::Ended { client: c });
        let run = self.clients[c].run;
        if self.runs[run].reaper {
            return;
        }
        // GitHub's view: the attempt is over when its job is; a runner that died is noticed
        // some minutes later (a zombie's attempt was completed when GitHub declared it lost).
        if self.gh_view(c).completed_at.is_none() {
            let (at, conclusion) = if self.clients[c].crashed {
                (
                    self.now
                        + self
                            .world
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
        // Under the lifecycle only where a reaper watches: an expired holding becomes a
        // quarantine nobody but the reaper (or an operator) frees.
        // And never where a run reports its resource blocked: the incident stops admission
        // (so expiry by acquire) and the reaper alike until an operator recovers it.
        let incidents = self
            .world
            .params
            .lifecycle
            .as_ref()
            .is_some_and(|l| l.incidents());
        let abandon = self.clients[c].crashed
            && !incidents
            && ((self.world.params.lease.is_some() && self.world.params.lifecycle.is_none())
                || self.world.params.reaper.is_some())
            && self.runs[run].sweep.is_none()
            && self.world.rng.ppm(self.world.params.profile.no_rerun_ppm);
        if abandon {
            self.count(Fault::NoRerun);
            self.runs[run].abandoned = true;
            self.log(|w| {
                format!(
                    "{} nobody reruns this job: what it left is left to expiry or the reaper",
                    w.who(c)
                )
            });
        } else if !clean
            || (self.faulty() && self.world.rng.ppm(self.world.params.profile.rerun_ok_ppm))
        {
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
                self.tell(Feed::Zombie { client: c });
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

    pub(crate) fn maybe_rerun(&mut self, run: usize) {
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
        let at = self.now + self.world.rng.between(RERUN_DELAY_MS.0, RERUN_DELAY_MS.1);
        self.push(at, Ev::RerunStart(run));
    }
}
