//! The work step of a job that acquired, run under a guard: the core's guard machine
//! (`leasehold_core::guard::Guard`), the same one `actions/lib/guard.mjs` drives. This file is
//! only its driver in the simulated world, as guard.mjs is in node: it performs the machine's
//! commands (start the verifying renewal or a renewal, start the work, arm the one timer, signal
//! the work's process group, finish the step) and feeds back what happens (a renewal ended, the
//! timer fired, the work exited, a cancel's SIGINT). Renewals are `renew` operations driven like
//! every other operation (same driver loop, same faults). What the guard acts on is the lease the
//! machine holds as proven: acquire's, the verification's, then each renewal's it took in; the
//! checker's belief window (invariant 5) is exactly that lease's local deadline.
//!
//! Also here: the expiry sweep, a later job that comes along once every job has ended while a
//! crashed job that nobody reran still has a holding (or a queue entry) in the lock.

use std::collections::VecDeque;

use leasehold_core::guard::{
    ChildExit, FinishReason, Guard as Machine, GuardCommand, GuardEvent, GuardSettings, KillReason,
    Phase, Signal,
};
use leasehold_core::time::Millis;
use leasehold_core::{LeaseView, OperationKind, Outcome, RawInputs, ResultWord};

use crate::check::Invariant;
use crate::fault::Fault;
use crate::world::{Ev, JobSettings, Run, Stage, World, KILL_GRACE_MS, SWEEP_SPREAD_MS, T0};

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

/// The work's process group, as the world models it.
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

impl World {
    fn guard(&mut self, c: usize) -> &mut Guard {
        self.clients[c]
            .guard
            .as_mut()
            .expect("a work step has a guard")
    }

    /// The work's state, while the guard's step lasts (the guard may have finished on the
    /// same instant, acting on its timer first).
    fn work_of(&self, c: usize) -> Option<Work> {
        let cl = &self.clients[c];
        (cl.stage == Stage::Hold)
            .then_some(cl.guard.as_ref().map(|g| g.work))
            .flatten()
    }

    fn local_now(&self, c: usize) -> Millis {
        self.clients[c].clock.local(self.now)
    }

    fn kill_grace(&self, c: usize) -> Millis {
        self.runs[self.clients[c].run].settings.kill_grace_ms
    }

    fn belief_live(&self, c: usize) -> bool {
        self.clients[c].belief_until.is_some_and(|u| u > self.now)
    }

    /// Acquire finished `acquired` (its lease is already the proven one): the work step starts.
    pub(crate) fn start_guard(&mut self, c: usize, lease: LeaseView) {
        let settings = &self.runs[self.clients[c].run].settings;
        let (mode, grace) = (settings.guard_mode, settings.kill_grace_ms);
        let cl = &mut self.clients[c];
        cl.stage = Stage::Hold;
        cl.hold_gen += 1;
        cl.epoch += 1;
        cl.guard = Some(Guard::new(mode, lease, grace));
        match mode {
            GuardMode::Verify => {
                self.counters.guard.verifying += 1;
                self.log(|w| {
                    format!(
                        "{} guard starts: verifying the holding with a renewal",
                        w.who(c)
                    )
                });
            }
            GuardMode::FromAcquire => {
                self.counters.guard.from_acquire += 1;
                self.log(|w| format!("{} guard starts from acquire's lease", w.who(c)));
            }
        }
        let now = self.local_now(c);
        self.guard_feed(c, GuardEvent::Started { now });
    }

    /// Feeds the machine one event and performs its commands, in order; what performing them
    /// makes happen at once (the work exiting on SIGKILL or SIGINT) is fed next.
    fn guard_feed(&mut self, c: usize, event: GuardEvent) {
        let mut queue = VecDeque::from([event]);
        while let Some(event) = queue.pop_front() {
            if self.violation.is_some() || self.clients[c].stage != Stage::Hold {
                return;
            }
            let g = self.guard(c);
            let (phase, lease) = (g.machine.phase(), g.machine.lease().cloned());
            let step = match g.machine.step(event) {
                Ok(step) => step,
                Err(e) => {
                    let message = format!("{} guard: {e}", self.who(c));
                    return self.violate(Invariant::Protocol, message);
                }
            };
            for line in step.log {
                self.log(|w| format!("{} guard: {}", w.who(c), line.text));
            }
            let g = self.guard(c);
            let renewals = g.machine.renewals();
            let (now_phase, stopping_for) = (g.machine.phase(), g.machine.stopping_for());
            let proven = g
                .machine
                .lease()
                .cloned()
                .filter(|l| Some(l) != lease.as_ref());
            self.counters.guard.max_renewals = self.counters.guard.max_renewals.max(renewals);
            if let Some(lease) = proven {
                let from = if phase == Phase::Verifying {
                    "the guard's verification".to_string()
                } else {
                    format!("renewal {renewals}")
                };
                self.prove(c, lease, from);
            }
            if let (false, Some(reason)) = (phase == Phase::Stopping, stopping_for) {
                if now_phase == Phase::Stopping {
                    self.count_kill(c, reason);
                }
            }
            for command in step.commands {
                self.guard_perform(c, command, &mut queue);
            }
        }
    }

    fn count_kill(&mut self, c: usize, reason: KillReason) {
        let local = self.local_now(c);
        let grace = self.kill_grace(c);
        let g = self.clients[c].guard.as_ref().expect("a guard");
        let late = g
            .machine
            .lease()
            .is_some_and(|l| local > l.local_deadline.saturating_sub(grace) + 1_000);
        match reason {
            KillReason::Deadline => {
                self.counters.guard.kills_deadline += 1;
                if late {
                    self.counters.guard.kills_after_pause += 1;
                }
            }
            KillReason::Lost => self.counters.guard.kills_lost += 1,
        }
        self.log(|w| {
            format!(
                "{} guard kills the work ({reason:?}{})",
                w.who(c),
                if late {
                    ", late: resumed from a pause"
                } else {
                    ""
                }
            )
        });
    }

    fn guard_perform(&mut self, c: usize, command: GuardCommand, then: &mut VecDeque<GuardEvent>) {
        match command {
            GuardCommand::Verify => {
                let live = self.belief_live(c);
                self.guard(c).renewal_live = live;
                self.start_op(c, OperationKind::Renew);
            }
            GuardCommand::Renew { until } => {
                let live = self.belief_live(c);
                self.guard(c).renewal_live = live;
                let at = self.clients[c].clock.real_at(until, self.now);
                self.log(|w| {
                    format!(
                        "{} guard renews (until {} ms from now)",
                        w.who(c),
                        at - w.now
                    )
                });
                self.start_op(c, OperationKind::Renew);
            }
            GuardCommand::Spawn { .. } => self.spawn_work(c),
            GuardCommand::WaitUntil { at } => {
                let real = self.clients[c].clock.real_at(at, self.now);
                let g = self.guard(c);
                g.timer += 1;
                g.timer_at = Some(at);
                let timer = g.timer;
                self.push(real, Ev::GuardWake(c, timer));
                self.log(|w| format!("{} guard waits {} ms", w.who(c), real - w.now));
            }
            GuardCommand::Signal { signal } => self.signal_work(c, signal, then),
            GuardCommand::Finish(f) => {
                let why = match (f.reason, &f.child) {
                    (FinishReason::NotHeld, _) => {
                        self.counters.guard.not_held += 1;
                        "the guard could not verify the holding (not-held): the work never runs"
                    }
                    (FinishReason::Deadline, None) => {
                        self.counters.guard.no_work += 1;
                        "the proven lease's deadline has passed: the guard never starts the work"
                    }
                    (FinishReason::Lost | FinishReason::Deadline, _) => {
                        "the work stopped after the guard's signal"
                    }
                    _ => "the work ends",
                };
                self.end_work_step(c, why);
            }
        }
    }

    /// The guard starts the work under the proven lease.
    fn spawn_work(&mut self, c: usize) {
        self.guard(c).work = Work::Running;
        let gen = self.clients[c].hold_gen;
        let hold = self.runs[self.clients[c].run].settings.hold_ms;
        self.log(|w| format!("{} work starts ({} ms if nothing stops it)", w.who(c), hold));
        if self.faulty() && self.rng.ppm(self.params.profile.crash_in_hold_ppm) {
            let at = self.now + self.rng.below(hold + 1);
            self.push(at, Ev::HoldCrash(c, gen));
        }
        self.push(self.now + hold, Ev::WorkEnd(c, gen));
        let run = self.clients[c].run;
        if self.faulty()
            && self.rng.ppm(self.params.profile.lost_runner_ppm)
            && !self.runs[run].rerun_pending
        {
            // GitHub loses contact with the runner, declares it lost (the attempt is completed
            // in its view) while the job works on, and the job is rerun.
            self.count(Fault::LostRunner);
            self.runs[run].rerun_pending = true;
            let at = self.now + self.rng.between(1_000, hold.max(1_000));
            self.push(at, Ev::DeclaredLost(run));
        }
    }

    /// A signal to the work's process group. SIGTERM: the work is gone by the kill grace
    /// (measured on the local clock). SIGKILL or a forwarded SIGINT: it is gone at once.
    fn signal_work(&mut self, c: usize, signal: Signal, then: &mut VecDeque<GuardEvent>) {
        let work = self.guard(c).work;
        match (signal, work) {
            (Signal::Term, Work::Running) => {
                self.guard(c).work = Work::Stopping;
                let local = self.local_now(c);
                let grace = self.kill_grace(c);
                let latest = self.clients[c].clock.real_at(local + grace, self.now);
                let at = self.now + self.rng.below(latest - self.now + 1);
                let gen = self.clients[c].hold_gen;
                self.push(at, Ev::ChildGone(c, gen));
            }
            (Signal::Kill | Signal::Int | Signal::Hup, Work::Running | Work::Stopping) => {
                let (name, number) = match signal {
                    Signal::Kill => ("SIGKILL", 9),
                    Signal::Int => ("SIGINT", 2),
                    _ => ("SIGHUP", 1),
                };
                let now = self.work_gone(c);
                then.push_back(GuardEvent::ChildExited {
                    now,
                    exit: ChildExit::Signalled {
                        signal: name.into(),
                        number,
                    },
                });
            }
            _ => {}
        }
    }

    /// The work has exited: it is checked against its deadline now. Returns the local time.
    fn work_gone(&mut self, c: usize) -> Millis {
        self.check_work_stop(c);
        self.guard(c).work = Work::Gone;
        self.local_now(c)
    }

    /// The guard's timer fired.
    pub(crate) fn guard_wake(&mut self, c: usize) {
        self.guard(c).timer_at = None;
        let now = self.local_now(c);
        self.guard_feed(c, GuardEvent::TimerFired { now });
    }

    /// A guard that was stopped (a pause) acts on its timer first when it resumes, before
    /// anything else, as a real guard's timer fires first when its process resumes.
    pub(crate) fn guard_recheck(&mut self, c: usize) {
        if self.clients[c].stage != Stage::Hold {
            return;
        }
        let local = self.local_now(c);
        let Some(g) = self.clients[c].guard.as_mut() else {
            return;
        };
        if g.timer_at.is_some_and(|at| local >= at) {
            g.timer += 1; // the pending wake is stale now
            self.guard_wake(c);
        }
    }

    /// Whether a renewal's failure counts against liveness: the guard waits for it, and it
    /// started while the proven lease was live.
    pub(crate) fn renewal_counts(&self, c: usize) -> bool {
        let local = self.local_now(c);
        self.clients[c]
            .guard
            .as_ref()
            .is_some_and(|g| g.renewal_live && g.machine.awaits_renewal(local))
    }

    /// Takes in a newly proven lease.
    fn prove(&mut self, c: usize, lease: LeaseView, from: String) {
        let until = self.clients[c].clock.real_of(lease.local_deadline);
        let cl = &mut self.clients[c];
        cl.belief_until = Some(until);
        cl.belief_from = from;
        cl.acquired_late = cl.stale_answer_ms;
    }

    /// A renewal (or the verification) finished.
    pub(crate) fn renewal_finished(&mut self, c: usize, outcome: Outcome) {
        let result = outcome.result;
        match result {
            ResultWord::Renewed => self.check_renewed(c, &outcome),
            ResultWord::Lost => self.check_lost(c),
            _ => {}
        }
        if self.violation.is_some() {
            return;
        }
        let now = self.local_now(c);
        let g = self.guard(c);
        let verifying = g.machine.phase() == Phase::Verifying;
        let awaited = g.machine.awaits_renewal(now);
        if verifying {
            if result == ResultWord::Lost {
                self.clients[c].holding = None;
            }
            let outcome = Box::new(outcome);
            return self.guard_feed(c, GuardEvent::Verified { now, outcome });
        }
        if awaited {
            match (result, &outcome.lease) {
                (ResultWord::Renewed, Some(lease)) => {
                    self.counters.guard.renewed += 1;
                    if lease.expires_at >= lease.ceiling_at {
                        self.counters.guard.at_ceiling += 1;
                    }
                }
                (ResultWord::NotDue, _) => self.counters.guard.not_due += 1,
                (ResultWord::Lost, _) => {
                    self.counters.guard.lost += 1;
                    // Proven lost: the belief ends at once (the work stops within the kill grace).
                    self.clients[c].holding = None;
                }
                _ => self.counters.guard.failed += 1,
            }
        } else {
            // Given up on already (the deadline came first), or answered after it.
            self.counters.guard.ignored += 1;
            self.log(|w| format!("{} guard ignores the late renewal answer", w.who(c)));
        }
        let outcome = Box::new(outcome);
        self.guard_feed(c, GuardEvent::RenewalEnded { now, outcome });
    }

    /// The work ended on its own.
    pub(crate) fn work_ended(&mut self, c: usize) {
        match self.work_of(c) {
            Some(Work::Running) => self.counters.guard.work_done += 1,
            Some(Work::Stopping) => {}
            _ => return,
        }
        let now = self.work_gone(c);
        let exit = ChildExit::Exited { code: 0 };
        self.guard_feed(c, GuardEvent::ChildExited { now, exit });
    }

    /// The work stopped after the guard's SIGTERM.
    pub(crate) fn work_stopped(&mut self, c: usize) {
        if self.work_of(c) != Some(Work::Stopping) {
            return;
        }
        let now = self.work_gone(c);
        let exit = ChildExit::Signalled {
            signal: "SIGTERM".into(),
            number: 15,
        };
        self.guard_feed(c, GuardEvent::ChildExited { now, exit });
    }

    /// The run is cancelled during the work step: the runner sends the guard SIGINT. Once the
    /// work runs, the guard forwards it (the work stops on it); before, the guard has no handler
    /// and ends on it.
    pub(crate) fn cancel_work_step(&mut self, c: usize) {
        let Some(work) = self.work_of(c) else { return };
        if work == Work::NotStarted {
            return self.end_work_step(c, "run cancelled during the work step");
        }
        let now = self.local_now(c);
        let signal = Signal::Int;
        self.guard_feed(c, GuardEvent::SignalReceived { now, signal });
    }

    /// The guard's step is over (the machine finished, or the guard ended on a signal before
    /// the work started): the release step (`if: always()`) runs. A renewal still running is
    /// abandoned with the step.
    pub(crate) fn end_work_step(&mut self, c: usize, why: &str) {
        self.check_work_stop(c);
        if self.clients[c]
            .guard
            .as_ref()
            .is_some_and(|g| g.machine.renewal_running())
        {
            self.counters.guard.ignored += 1;
        }
        self.log(|w| format!("{} {why}", w.who(c)));
        self.start_op(c, OperationKind::Release);
    }

    /// Every job has ended, no rerun is coming, and the lock still has entries: they must all be
    /// abandoned jobs' (crashed, never rerun). A later job comes once they can all be taken (and
    /// faults have stopped); its acquire must remove them by expiry. An abandoned waiter's entry
    /// is admitted like any other (nobody can tell it is dead) and expires in turn: another
    /// sweep comes for it, at most one per run.
    pub(crate) fn maybe_sweep(&mut self) {
        let Some(policy) = self.params.lease.clone() else {
            return;
        };
        if self.sweep_pending
            || self.violation.is_some()
            || self.clients.iter().any(|cl| cl.live() && !cl.is_reaper())
            || self.runs.iter().any(|r| r.needs_rerun || r.rerun_pending)
            || !self.runs.iter().any(|r| r.abandoned)
        {
            return;
        }
        let Some(st) = self.committed().cloned() else {
            return;
        };
        if st.holders.is_empty() && st.queue.is_empty() {
            return;
        }
        let entries = st
            .holders
            .iter()
            .map(|h| (&h.holder_id, &h.nonce))
            .chain(st.queue.iter().map(|q| (&q.holder_id, &q.nonce)));
        for (id, nonce) in entries {
            let abandoned = self.clients.iter().any(|cl| {
                &cl.holder_id == id
                    && &cl.nonce == nonce
                    && cl.crashed
                    && self.runs[cl.run].abandoned
            });
            if !abandoned {
                let message = format!("every job ended, and {id} (nonce {nonce}) is left in the lock though its job was not abandoned");
                return self.violate(Invariant::Liveness, message);
            }
        }
        let takeable = st
            .holders
            .iter()
            .map(|h| policy.takeable_after(h.expires_at) + 1)
            .max()
            .unwrap_or(0);
        if self.counters.guard.sweeps > self.params.runs as u64 {
            let message = format!(
                "every job ended, and {} sweeps left abandoned entries in the lock: {st:?}",
                self.counters.guard.sweeps
            );
            return self.violate(Invariant::Liveness, message);
        }
        let at = self.now.max(T0 + self.params.profile.until).max(takeable)
            + self.rng.below(SWEEP_SPREAD_MS + 1);
        self.sweep_pending = true;
        self.push(at, Ev::SweepStart);
    }

    pub(crate) fn start_sweep(&mut self) {
        self.sweep_pending = false;
        let policy = self
            .params
            .lease
            .clone()
            .expect("sweeps only on leased locks");
        let (queued, takeable) = match self.committed() {
            Some(st) => (
                !st.queue.is_empty(),
                st.holders
                    .iter()
                    .map(|h| policy.takeable_after(h.expires_at) + 1)
                    .max()
                    .unwrap_or(0),
            ),
            None => (false, 0),
        };
        let r = &mut self.rng;
        let poll_s = r.between(self.params.poll_min_s, self.params.poll_max_s);
        let settings = JobSettings {
            poll_s,
            timeout_min: 60,
            lease_min: None,
            hold_ms: r.below(10_001),
            deadline_s: None,
            release_on_exit: true,
            guard_mode: if r.below(2) == 0 {
                GuardMode::Verify
            } else {
                GuardMode::FromAcquire
            },
            kill_grace_ms: r.pick(&KILL_GRACE_MS),
            renew_names_holder: r.below(2) == 0,
            renew_if_due: false,
            record_job_id: r.below(2) == 0,
        };
        let mode = settings.guard_mode;
        let settings = JobSettings {
            renew_if_due: mode == GuardMode::FromAcquire,
            ..settings
        };
        // Only holdings left: removed within a poll of when they can all be taken (a write that
        // landed after its job crashed may have moved an expiry since the sweep was planned).
        // Abandoned queue entries are admitted first and must expire in turn.
        let limit = (!queued).then_some(self.now.max(takeable) + poll_s * 1_000 * 5 / 4 + 10_000);
        let run = self.runs.len();
        self.runs.push(Run {
            run_id: 4_000 + run as u64,
            settings,
            attempts: Vec::new(),
            needs_rerun: false,
            rerun_pending: false,
            abandoned: false,
            sweep: Some(limit),
            reaper: false,
        });
        self.counters.runs += 1;
        self.counters.guard.sweeps += 1;
        let c = self.new_attempt(run);
        self.log(|w| format!("{} a later job comes along to find abandoned holdings in the lock (the expiry sweep)", w.who(c)));
        self.push(self.now, Ev::JobStart(c));
    }

    /// 6(c): the sweep's acquire took the lock, within a poll when only takeable holdings were
    /// left.
    pub(crate) fn check_sweep_acquire(&mut self, c: usize, result: ResultWord) {
        let Some(limit) = self.runs[self.clients[c].run].sweep else {
            return;
        };
        let took = self.now - self.clients[c].op_started;
        if result != ResultWord::Acquired {
            let message = format!("{} (the expiry sweep) ended its acquire {}: the abandoned holdings were not removed", self.who(c), result.as_str());
            return self.violate(Invariant::Liveness, message);
        }
        if let Some(by) = limit.filter(|&by| self.now > by) {
            let message = format!(
                "{} (the expiry sweep) acquired {took} ms after it started, {} ms later than a poll after every holding left could be taken",
                self.who(c),
                self.now - by
            );
            self.violate(Invariant::Liveness, message);
        }
    }
}
