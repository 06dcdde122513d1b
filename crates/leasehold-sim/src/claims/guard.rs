//! The claim guard client: an agent that runs its work under the core's guard machine
//! (`leasehold_core::guard::Guard`, the one `claims guard` in `actions/lib/claims.mjs` drives),
//! over one claimed key or a family. This file is only the machine's driver in the simulated
//! world: it performs the machine's commands (the verifying renewal or a renewal, each a
//! `claim-renew` or `claim-family-renew` operation driven like every other claim operation, under
//! the same faults; start the work; arm the one timer; signal the work; finish) and feeds back
//! what happens (a renewal ended, the timer fired, the work exited). Each lease the machine takes
//! in as proven is fed to the checker, with the work starting and stopping (invariant 16), and
//! as the agent's belief (invariant 12).

use std::collections::VecDeque;

use std::collections::BTreeMap;

use leasehold_core::guard::{
    ChildExit, FinishReason, Guard, GuardCommand, GuardEvent, GuardSettings, KillReason, Phase,
    Signal,
};
use leasehold_core::time::Millis;
use leasehold_core::{
    Command, Entropy, Event, LeaseView, Operation, OperationKind, Outcome, Status,
};

use super::checker::{AgentId, ClaimFeed};
use super::{claim_ref, Ev, Holding, World};
use crate::planted::PlantedBug;
use crate::types::{Invariant, Violation, Work, T0};

/// The guard of an agent's work, while it holds.
pub(super) struct ClaimGuard {
    pub machine: Guard,
    pub work: Work,
    /// The timer armed last (`wait-until`), numbered by the event queue's sequence so that no
    /// wake of an earlier guard or an earlier timer matches it: older wakes are stale.
    pub timer: u64,
    /// Its instant (local clock), while armed.
    pub timer_at: Option<Millis>,
    /// Bumped when the work starts: the work's own events carry it.
    pub hold: u64,
    /// The guard's renewals pass `if-due`.
    pub if_due: bool,
}

impl World {
    fn guard(&mut self, a: AgentId) -> &mut ClaimGuard {
        self.agents[a].guard.as_mut().expect("a guarded holding")
    }

    /// A claim (or family) of a guarded agent landed: its work starts under a guard, from the
    /// claim's lease (an embedder that just claimed) or verifying it with a renewal first
    /// (`claims guard` on the token printed).
    pub(super) fn start_guard(&mut self, a: AgentId, lease: Option<LeaseView>, if_due: bool) {
        let kill_grace_ms = self.agents[a].kill_grace_ms;
        let machine = Guard::with_settings(GuardSettings { kill_grace_ms }, lease.clone());
        self.agents[a].guard = Some(ClaimGuard {
            machine,
            work: Work::NotStarted,
            timer: 0,
            timer_at: None,
            hold: 0,
            if_due,
        });
        self.counters.guards += 1;
        self.log(format!(
            "a{a} guard starts ({})",
            if lease.is_some() {
                "from the claim's lease"
            } else {
                "verifying with a renewal"
            }
        ));
        let now = self.local(a);
        self.guard_feed(a, GuardEvent::Started { now });
    }

    /// Feeds the machine one event and performs its commands, in order; what performing them
    /// makes happen at once (the work exiting on SIGKILL) is fed next.
    pub(super) fn guard_feed(&mut self, a: AgentId, event: GuardEvent) {
        let mut queue = VecDeque::from([event]);
        while let Some(event) = queue.pop_front() {
            if self.violation.is_some() || self.agents[a].guard.is_none() {
                return;
            }
            let g = self.guard(a);
            let before = g.machine.lease().cloned();
            let stopping_before = g.machine.stopping_for();
            let step = match g.machine.step(event) {
                Ok(step) => step,
                Err(e) => {
                    self.violation = Some(Violation {
                        seed: self.seed,
                        invariant: Invariant::Protocol,
                        at: self.now - T0,
                        message: format!("a{a} claim guard: {e}"),
                    });
                    return;
                }
            };
            for line in step.log {
                self.log(format!("a{a} guard: {}", line.text));
            }
            let proven = self.guard(a).machine.lease().cloned();
            if let Some(lease) = proven.filter(|l| Some(l) != before.as_ref()) {
                self.prove(a, &lease);
            }
            let stopping = self.guard(a).machine.stopping_for();
            if stopping == Some(KillReason::Lost) && stopping_before.is_none() {
                // A renewal proved the claim lost: the work is stopped from now on.
                self.counters.guard_lost += 1;
                self.tell(ClaimFeed::GuardLost { agent: a });
            }
            for command in step.commands {
                self.guard_perform(a, command, &mut queue);
            }
        }
    }

    /// A lease the machine took in as proven: the agent's belief (12) and the work's bound (16)
    /// until its local deadline, the claim's expiry beside it.
    fn prove(&mut self, a: AgentId, lease: &LeaseView) {
        let until = self.agents[a].clock.real_of(lease.local_deadline);
        let Some(h) = self.agents[a].holding.clone() else {
            return;
        };
        let refs = h.keys.iter().map(|k| claim_ref(k)).zip(h.tokens).collect();
        self.tell(ClaimFeed::Belief {
            agent: a,
            refs,
            until,
        });
        self.tell(ClaimFeed::GuardProven {
            agent: a,
            until,
            expires_at: lease.expires_at,
        });
    }

    fn guard_perform(
        &mut self,
        a: AgentId,
        command: GuardCommand,
        then: &mut VecDeque<GuardEvent>,
    ) {
        match command {
            GuardCommand::Verify => self.start_renewal(a, false),
            GuardCommand::Renew { .. } => {
                let if_due = self.guard(a).if_due;
                self.start_renewal(a, if_due);
            }
            GuardCommand::Spawn { .. } => {
                let g = self.guard(a);
                g.work = Work::Running;
                g.hold += 1;
                let hold = g.hold;
                let h = self.agents[a].holding.clone().expect("a holding");
                let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
                let (clock, kill_grace_ms) = (self.agents[a].clock, self.agents[a].kill_grace_ms);
                self.tell(ClaimFeed::WorkStarted {
                    agent: a,
                    refs,
                    clock,
                    kill_grace_ms,
                });
                let at = clock.real_at(h.work_until, self.now);
                self.log(format!("a{a} work starts"));
                self.push(at, Ev::WorkEnd { agent: a, hold });
                if self.rng.below(8) == 0 {
                    // Someone releases the claim by hand while the work runs (its run id and
                    // token are public): the guard's next renewal must prove it lost.
                    let at = self.now + self.rng.below(self.policy.ttl_ms);
                    self.push(at, Ev::StrayRelease { agent: a, hold });
                }
            }
            GuardCommand::WaitUntil { at } => {
                let real = self.agents[a].clock.real_at(at, self.now);
                // `push` numbers this event `seq + 1`: unique over the seed.
                let timer = self.seq + 1;
                let g = self.guard(a);
                g.timer = timer;
                g.timer_at = Some(at);
                self.push(real, Ev::GuardWake { agent: a, timer });
            }
            GuardCommand::Signal { signal } => self.signal_work(a, signal, then),
            GuardCommand::Finish(f) => {
                self.log(format!(
                    "a{a} guard finishes {} (exit {})",
                    f.reason.as_str(),
                    f.exit_code
                ));
                *self
                    .counters
                    .results
                    .entry(format!("guard {}", f.reason.as_str()))
                    .or_default() += 1;
                self.agents[a].guard = None;
                match (f.reason, self.agents[a].holding.clone()) {
                    (FinishReason::Lost, Some(h)) => {
                        // Proven lost: nothing to release.
                        let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
                        self.tell(ClaimFeed::BeliefEnds { agent: a, refs });
                        self.agents[a].holding = None;
                        self.agents[a].gen += 1;
                        self.agents[a].op = None;
                        self.next_task(a, 1_000);
                    }
                    (_, Some(h)) => self.start_release(a, &h),
                    (_, None) => self.next_task(a, 1_000),
                }
            }
        }
    }

    /// A renewal of the guarded holding: one key's `claim-renew`, or a family's
    /// `claim-family-renew`, at the current tokens. It replaces a renewal the machine gave up on.
    fn start_renewal(&mut self, a: AgentId, if_due: bool) {
        let h = self.agents[a].holding.clone().expect("a guarded holding");
        let kind = if h.keys.len() > 1 {
            OperationKind::ClaimFamilyRenew
        } else {
            OperationKind::ClaimRenew
        };
        let extra = if if_due {
            vec![("if-due", "true".to_string())]
        } else {
            Vec::new()
        };
        self.start_op(a, kind, &h, extra);
    }

    /// SIGTERM: the work is gone by the kill grace (local clock). SIGKILL or a forwarded signal:
    /// at once.
    fn signal_work(&mut self, a: AgentId, signal: Signal, then: &mut VecDeque<GuardEvent>) {
        let work = self.guard(a).work;
        match (signal, work) {
            (Signal::Term, Work::Running) => {
                if self.planted == Some(PlantedBug::ClaimGuardIgnoresStop) {
                    // The planted bug: the stop never reaches the work's process group.
                    return;
                }
                self.guard(a).work = Work::Stopping;
                let clock = self.agents[a].clock;
                let latest = clock.real_at(self.local(a) + self.agents[a].kill_grace_ms, self.now);
                let at = self.now + self.rng.below(latest - self.now + 1);
                let hold = self.guard(a).hold;
                self.push(at, Ev::ChildGone { agent: a, hold });
            }
            (Signal::Kill | Signal::Int | Signal::Hup, Work::Running | Work::Stopping) => {
                if self.planted == Some(PlantedBug::ClaimGuardIgnoresStop) {
                    return;
                }
                self.work_gone(a);
                let now = self.local(a);
                let number = match signal {
                    Signal::Kill => 9,
                    Signal::Int => 2,
                    _ => 1,
                };
                then.push_back(GuardEvent::ChildExited {
                    now,
                    exit: ChildExit::Signalled {
                        signal: signal.as_str().into(),
                        number,
                    },
                });
            }
            _ => {}
        }
    }

    fn work_gone(&mut self, a: AgentId) {
        self.guard(a).work = Work::Gone;
        self.tell(ClaimFeed::WorkGone { agent: a });
    }

    /// The guard's timer fired.
    pub(super) fn guard_wake(&mut self, a: AgentId, timer: u64) {
        let Some(g) = self.agents[a].guard.as_mut() else {
            return;
        };
        if g.timer != timer {
            return;
        }
        g.timer_at = None;
        let now = self.local(a);
        self.guard_feed(a, GuardEvent::TimerFired { now });
    }

    /// A guard that was stopped (a pause) acts on its timer first when it resumes, as a real
    /// guard's timer fires first when its process resumes.
    pub(super) fn guard_recheck(&mut self, a: AgentId) {
        let local = self.local(a);
        let Some(g) = self.agents[a].guard.as_mut() else {
            return;
        };
        if g.timer_at.is_some_and(|at| local >= at) {
            // The wake already queued for it is stale now (no wake is numbered 0): it fires
            // once, here.
            g.timer = 0;
            self.guard_wake(a, 0);
        }
    }

    /// The work's own end (it ran its course), or its exit after SIGTERM (`stopped`).
    pub(super) fn work_exits(&mut self, a: AgentId, hold: u64, stopped: bool) {
        let Some(g) = self.agents[a].guard.as_ref() else {
            return;
        };
        let live = match g.work {
            Work::Running => !stopped,
            Work::Stopping => true,
            _ => false,
        };
        if g.hold != hold || !live {
            return;
        }
        self.work_gone(a);
        let now = self.local(a);
        let exit = if stopped {
            ChildExit::Signalled {
                signal: "SIGTERM".into(),
                number: 15,
            }
        } else {
            ChildExit::Exited { code: 0 }
        };
        self.guard_feed(a, GuardEvent::ChildExited { now, exit });
    }

    /// A renewal of a guarded holding finished: the tokens rotate when it renewed, and the
    /// machine hears it.
    pub(super) fn guard_renewal_finished(&mut self, a: AgentId, outcome: Outcome) {
        let report = outcome.claims.as_ref();
        if report.map(|r| r.status) == Some(Status::Renewed) {
            if let (Some(r), Some(h)) = (report, self.agents[a].holding.as_mut()) {
                h.tokens = r
                    .items
                    .iter()
                    .map(|i| i.token.clone().unwrap_or_default())
                    .collect();
            }
        }
        let now = self.local(a);
        let verifying = self.guard(a).machine.phase() == Phase::Verifying;
        let outcome = Box::new(outcome);
        let event = if verifying {
            GuardEvent::Verified { now, outcome }
        } else {
            GuardEvent::RenewalEnded { now, outcome }
        };
        self.guard_feed(a, event);
    }

    /// The agent crashed: its work dies with it.
    pub(super) fn guard_crash(&mut self, a: AgentId) {
        if let Some(g) = self.agents[a].guard.as_ref() {
            if matches!(g.work, Work::Running | Work::Stopping) {
                self.work_gone(a);
            }
        }
        self.agents[a].guard = None;
    }

    /// A guarded agent's claim landed: its holding, and the guard over it.
    pub(super) fn guarded_holding(&mut self, a: AgentId, h: Holding, outcome: &Outcome) {
        let verify = self.rng.below(3) == 0;
        let if_due = self.rng.below(2) == 0;
        self.agents[a].holding = Some(h);
        if self.faulty() {
            match self.rng.below(10) {
                0 => {
                    let at = self.now + self.rng.below(self.policy.ttl_ms);
                    self.push(at, Ev::Pause { agent: a });
                }
                1 => {
                    let at = self.now + self.rng.below(self.policy.ttl_ms);
                    self.push(at, Ev::Crash { agent: a });
                }
                _ => {}
            }
        }
        // The claim's own lease is proven: the agent believes from it, whichever way its guard
        // starts.
        if let Some(lease) = &outcome.lease {
            self.prove(a, lease);
        }
        let lease = if verify { None } else { outcome.lease.clone() };
        self.start_guard(a, lease, if_due);
    }
}

/// How long a guarded agent's work runs if nothing stops it: often past the claim's ceiling, so
/// that the guard meets it.
pub(super) fn work_ms(w: &mut World) -> Millis {
    let longest = (w.policy.max_ttl_ms + w.policy.ttl_ms).max(10_000);
    w.rng.between(5_000, longest)
}

impl World {
    /// A release of one member of a guarded holding, by hand, at the token the agent holds
    /// (as an operator runs `claims release` with the run id and token a document printed):
    /// the real `claim-release` operation against GitHub, at once and without faults. It is the
    /// agent's own run id, so the move is told as the agent's; the agent's belief in that claim
    /// is void from then on, whatever it knows.
    pub(super) fn stray_release(&mut self, a: AgentId, hold: u64) {
        let Some(g) = self.agents[a].guard.as_ref() else {
            return;
        };
        if g.hold != hold || g.work != Work::Running {
            return;
        }
        let Some(h) = self.agents[a].holding.clone() else {
            return;
        };
        let i = self.rng.below(h.keys.len() as u64) as usize;
        let inputs: BTreeMap<String, String> = [
            ("repository", super::REPOSITORY.to_string()),
            ("namespace", super::NAMESPACE.to_string()),
            ("config", self.config.clone()),
            ("key", h.keys[i].clone()),
            ("token", h.tokens[i].clone()),
            ("run-id", h.run_id.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let entropy = Entropy {
            seed: self.rng.next_u64(),
            nonce: format!("{:016x}", self.rng.next_u64()),
        };
        let (mut op, _) = Operation::new(OperationKind::ClaimRelease, &inputs, &entropy)
            .expect("the stray release's inputs are valid");
        let mut step = op.step(Event::Start { now: self.now });
        let mut status = None;
        for _ in 0..50 {
            let Ok(s) = step else { break };
            match s.command {
                Command::Finish { outcome } => {
                    status = outcome.claims.map(|r| r.status);
                    break;
                }
                Command::Sleep { until_ms, .. } => step = op.step(Event::Timer { now: until_ms }),
                Command::Request { call, timeout_ms } => {
                    let answer = self
                        .gh
                        .answer(&Command::Request { call, timeout_ms }, self.now);
                    if !answer.moved.is_empty() {
                        let moves = answer
                            .moved
                            .iter()
                            .map(|m| {
                                let parents = self
                                    .gh
                                    .commit(&m.after)
                                    .map(|c| c.parents.clone())
                                    .unwrap_or_default();
                                (m.name.clone(), m.before.clone(), m.after.clone(), parents)
                            })
                            .collect();
                        self.tell(ClaimFeed::Landed {
                            agent: a,
                            op: 0,
                            moves,
                        });
                    }
                    let now = self.now;
                    step = op.step(Event::Reply {
                        now,
                        reply: answer.reply,
                    });
                }
            }
        }
        self.counters.stray_releases += 1;
        self.log(format!(
            "a{a}'s claim on {} is released by hand: {}",
            h.keys[i],
            status.map_or("unfinished", |s| s.as_str())
        ));
        if status == Some(Status::Released) {
            let refs = h.keys.iter().map(|k| claim_ref(k)).collect();
            self.tell(ClaimFeed::BeliefEnds { agent: a, refs });
        }
    }
}
