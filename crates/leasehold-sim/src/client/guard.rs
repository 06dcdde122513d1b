//! The work step of a job that acquired, run under a guard: the core's guard machine
//! (`leasehold_core::guard::Guard`), the same one `actions/lib/guard.mjs` drives. This file is
//! only its driver in the simulated world, as guard.mjs is in node: it performs the machine's
//! commands (start the verifying renewal or a renewal, start the work, arm the one timer, signal
//! the work's process group, finish the step) and feeds back what happens (a renewal ended, the
//! timer fired, the work exited, a cancel's SIGINT). Renewals are `renew` operations driven like
//! every other operation (same driver loop, same faults). What the guard acts on is the lease the
//! machine holds as proven: acquire's, the verification's, then each renewal's it took in; each
//! is fed to the checker as it is taken in (its belief window, invariant 5, is exactly that
//! lease's local deadline), and so are the work starting and stopping and a proven loss.

use std::collections::VecDeque;

use leasehold_core::guard::{
    ChildExit, FinishReason, GuardCommand, GuardEvent, KillReason, Phase, Signal,
};
use leasehold_core::time::Millis;
use leasehold_core::{LeaseView, OperationKind, Outcome, ResultWord};

use crate::checker::Feed;
use crate::fault::Fault;
use crate::types::{Invariant, Stage, Work};
use crate::world::Ev;

use super::attempt::{Guard, GuardMode};
use super::env::Env;

impl Env<'_> {
    pub(crate) fn guard(&mut self, c: usize) -> &mut Guard {
        self.clients[c]
            .guard
            .as_mut()
            .expect("a work step has a guard")
    }

    /// The work's state, while the guard's step lasts (the guard may have finished on the
    /// same instant, acting on its timer first).
    pub(crate) fn work_of(&self, c: usize) -> Option<Work> {
        let cl = &self.clients[c];
        (cl.stage == Stage::Hold)
            .then_some(cl.guard.as_ref().map(|g| g.work))
            .flatten()
    }

    pub(crate) fn local_now(&self, c: usize) -> Millis {
        self.clients[c].clock.local(self.now)
    }

    pub(crate) fn kill_grace(&self, c: usize) -> Millis {
        self.runs[self.clients[c].run].settings.kill_grace_ms
    }

    pub(crate) fn belief_live(&self, c: usize) -> bool {
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
        self.tell(Feed::GuardStarted { client: c });
        match mode {
            GuardMode::Verify => {
                self.world.counters.guard.verifying += 1;
                self.log(|w| {
                    format!(
                        "{} guard starts: verifying the holding with a renewal",
                        w.who(c)
                    )
                });
            }
            GuardMode::FromAcquire => {
                self.world.counters.guard.from_acquire += 1;
                self.log(|w| format!("{} guard starts from acquire's lease", w.who(c)));
            }
        }
        let now = self.local_now(c);
        self.guard_feed(c, GuardEvent::Started { now });
    }

    /// Feeds the machine one event and performs its commands, in order; what performing them
    /// makes happen at once (the work exiting on SIGKILL or SIGINT) is fed next.
    pub(crate) fn guard_feed(&mut self, c: usize, event: GuardEvent) {
        let mut queue = VecDeque::from([event]);
        while let Some(event) = queue.pop_front() {
            if self.world.violation.is_some() || self.clients[c].stage != Stage::Hold {
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
            self.world.counters.guard.max_renewals =
                self.world.counters.guard.max_renewals.max(renewals);
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

    pub(crate) fn count_kill(&mut self, c: usize, reason: KillReason) {
        let local = self.local_now(c);
        let grace = self.kill_grace(c);
        let g = self.clients[c].guard.as_ref().expect("a guard");
        let late = g
            .machine
            .lease()
            .is_some_and(|l| local > l.local_deadline.saturating_sub(grace) + 1_000);
        match reason {
            KillReason::Deadline => {
                self.world.counters.guard.kills_deadline += 1;
                if late {
                    self.world.counters.guard.kills_after_pause += 1;
                }
            }
            KillReason::Lost => self.world.counters.guard.kills_lost += 1,
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

    pub(crate) fn guard_perform(
        &mut self,
        c: usize,
        command: GuardCommand,
        then: &mut VecDeque<GuardEvent>,
    ) {
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
                        self.world.counters.guard.not_held += 1;
                        "the guard could not verify the holding (not-held): the work never runs"
                    }
                    (FinishReason::Deadline, None) => {
                        self.world.counters.guard.no_work += 1;
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
    pub(crate) fn spawn_work(&mut self, c: usize) {
        self.guard(c).work = Work::Running;
        self.tell(Feed::WorkStarted { client: c });
        let gen = self.clients[c].hold_gen;
        let hold = self.runs[self.clients[c].run].settings.hold_ms;
        self.log(|w| format!("{} work starts ({} ms if nothing stops it)", w.who(c), hold));
        if self.faulty()
            && self
                .world
                .rng
                .ppm(self.world.params.profile.crash_in_hold_ppm)
        {
            let at = self.now + self.world.rng.below(hold + 1);
            self.push(at, Ev::HoldCrash(c, gen));
        }
        self.push(self.now + hold, Ev::WorkEnd(c, gen));
        let run = self.clients[c].run;
        if self.faulty()
            && self
                .world
                .rng
                .ppm(self.world.params.profile.lost_runner_ppm)
            && !self.runs[run].rerun_pending
        {
            // GitHub loses contact with the runner, declares it lost (the attempt is completed
            // in its view) while the job works on, and the job is rerun.
            self.count(Fault::LostRunner);
            self.runs[run].rerun_pending = true;
            let at = self.now + self.world.rng.between(1_000, hold.max(1_000));
            self.push(at, Ev::DeclaredLost(run));
        }
    }

    /// A signal to the work's process group. SIGTERM: the work is gone by the kill grace
    /// (measured on the local clock). SIGKILL or a forwarded SIGINT: it is gone at once.
    pub(crate) fn signal_work(
        &mut self,
        c: usize,
        signal: Signal,
        then: &mut VecDeque<GuardEvent>,
    ) {
        let work = self.guard(c).work;
        match (signal, work) {
            (Signal::Term, Work::Running) => {
                self.guard(c).work = Work::Stopping;
                let local = self.local_now(c);
                let grace = self.kill_grace(c);
                let latest = self.clients[c].clock.real_at(local + grace, self.now);
                let at = self.now + self.world.rng.below(latest - self.now + 1);
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
    pub(crate) fn work_gone(&mut self, c: usize) -> Millis {
        self.tell(Feed::WorkGone { client: c });
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
    pub(crate) fn prove(&mut self, c: usize, lease: LeaseView, from: String) {
        let until = self.clients[c].clock.real_of(lease.local_deadline);
        self.clients[c].belief_until = Some(until);
        let local_deadline = lease.local_deadline;
        self.tell(Feed::Proven {
            client: c,
            local_deadline,
            from,
        });
    }

    /// A renewal (or the verification) finished.
    pub(crate) fn renewal_finished(&mut self, c: usize, outcome: Outcome) {
        let result = outcome.result;
        let feed = Feed::RenewalEnded {
            client: c,
            outcome: &outcome,
        };
        let breach = self.checker.feed(self.now, feed);
        self.breach(breach);
        if self.world.violation.is_some() {
            return;
        }
        let now = self.local_now(c);
        let g = self.guard(c);
        let verifying = g.machine.phase() == Phase::Verifying;
        let awaited = g.machine.awaits_renewal(now);
        if verifying {
            if result == ResultWord::Lost {
                self.tell(Feed::BeliefLost { client: c });
            }
            let outcome = Box::new(outcome);
            return self.guard_feed(c, GuardEvent::Verified { now, outcome });
        }
        if awaited {
            match (result, &outcome.lease) {
                (ResultWord::Renewed, Some(lease)) => {
                    self.world.counters.guard.renewed += 1;
                    if lease.expires_at >= lease.ceiling_at {
                        self.world.counters.guard.at_ceiling += 1;
                    }
                }
                (ResultWord::NotDue, _) => self.world.counters.guard.not_due += 1,
                (ResultWord::Lost, _) => {
                    self.world.counters.guard.lost += 1;
                    // Proven lost: the belief ends at once (the work stops within the kill grace).
                    self.tell(Feed::BeliefLost { client: c });
                }
                _ => self.world.counters.guard.failed += 1,
            }
        } else {
            // Given up on already (the deadline came first), or answered after it.
            self.world.counters.guard.ignored += 1;
            self.log(|w| format!("{} guard ignores the late renewal answer", w.who(c)));
        }
        let outcome = Box::new(outcome);
        self.guard_feed(c, GuardEvent::RenewalEnded { now, outcome });
    }

    /// The work ended on its own.
    pub(crate) fn work_ended(&mut self, c: usize) {
        match self.work_of(c) {
            Some(Work::Running) => self.world.counters.guard.work_done += 1,
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
        self.tell(Feed::WorkStepEnded { client: c });
        if self.clients[c]
            .guard
            .as_ref()
            .is_some_and(|g| g.machine.renewal_running())
        {
            self.world.counters.guard.ignored += 1;
        }
        self.log(|w| format!("{} {why}", w.who(c)));
        self.start_op(c, OperationKind::Release);
    }
}
