//! The work step of a job that acquired, run under a guard exactly as `actions/lib/guard.mjs`
//! runs it: the guard verifies the holding with a renewal (or, for an embedder of the core,
//! starts from acquire's lease), starts the work, and then asks `leasehold_core::guard::decide`
//! what to do next: renew (one renewal at a time, raced against the local deadline), wait, or
//! kill the work (SIGTERM, then SIGKILL after the kill grace). Renewals are `renew` operations
//! driven like every other operation (same driver loop, same faults). What the guard acts on is
//! the *proven* lease: from acquire's outcome or a renewal it saw end `renewed`; the checker's
//! belief window (invariant 5) is exactly that lease's local deadline.
//!
//! Also here: the expiry sweep, a later job that comes along once every job has ended while a
//! crashed job that nobody reran still has a holding (or a queue entry) in the lock.

use leasehold_core::guard::{decide, GuardDecision, GuardInput, KillReason, LastRenewal};
use leasehold_core::time::Millis;
use leasehold_core::{LeaseView, Outcome};
use leasehold_core::{OperationKind, ResultWord};

use crate::check::Invariant;
use crate::fault::Fault;
use crate::world::{Ev, JobSettings, Run, Stage, World, KILL_GRACE_MS, SWEEP_SPREAD_MS, T0};

/// How a job's guard starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardMode {
    /// The guard action and `leasehold guard` (`actions/lib/guard.mjs`): verify the holding with
    /// a renewal first; the work runs only if it ends `renewed`, under its lease.
    Verify,
    /// An embedder of the core: drive `guard::decide` from acquire's outcome at once, renewing
    /// with `if-due` (so `not-due` answers happen).
    FromAcquire,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    NotStarted,
    Running,
    /// The guard sent SIGTERM; the work is gone by the kill grace.
    Stopping,
}

/// The guard of one work step.
#[derive(Clone, Debug)]
pub struct Guard {
    pub mode: GuardMode,
    /// The lease as last proven: acquire's, the verification's, then each renewal's that ended
    /// `renewed` while the guard waited for it.
    pub lease: LeaseView,
    pub last: LastRenewal,
    /// Local time the last renewal attempt ended (or was given up on).
    pub last_attempt_at: Option<Millis>,
    /// The verification renewal is running (before the work starts).
    pub verifying: bool,
    /// A renewal the guard waits for, raced against this local time (the deadline less the kill
    /// grace).
    pub renewing: Option<Millis>,
    /// The renewal running started while the proven lease's deadline was still ahead.
    pub renewal_live: bool,
    pub work: Work,
    pub killed: Option<KillReason>,
    /// Bumped at every new guard timer: only the latest `GuardWake` counts.
    pub timer: u64,
    /// Renewals the guard acted on.
    pub renewals: u64,
}

impl Guard {
    pub fn new(mode: GuardMode, lease: LeaseView) -> Self {
        Guard {
            mode,
            lease,
            last: LastRenewal::None,
            last_attempt_at: None,
            verifying: false,
            renewing: None,
            renewal_live: false,
            work: Work::NotStarted,
            killed: None,
            timer: 0,
            renewals: 0,
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

    fn local_now(&self, c: usize) -> Millis {
        self.clients[c].clock.local(self.now)
    }

    fn kill_grace(&self, c: usize) -> Millis {
        self.runs[self.clients[c].run].settings.kill_grace_ms
    }

    /// Acquire finished `acquired` (its lease is already the proven one): the work step starts.
    pub(crate) fn start_guard(&mut self, c: usize, lease: LeaseView) {
        let mode = self.runs[self.clients[c].run].settings.guard_mode;
        let now = self.now;
        let cl = &mut self.clients[c];
        cl.stage = Stage::Hold;
        cl.hold_gen += 1;
        cl.epoch += 1;
        let live = cl.belief_until.is_some_and(|u| u > now);
        cl.guard = Some(Guard::new(mode, lease));
        match mode {
            GuardMode::Verify => {
                self.counters.guard.verifying += 1;
                let g = self.guard(c);
                g.verifying = true;
                g.renewal_live = live;
                self.log(|w| {
                    format!(
                        "{} guard starts: verifying the holding with a renewal",
                        w.who(c)
                    )
                });
                self.start_op(c, OperationKind::Renew);
            }
            GuardMode::FromAcquire => {
                self.counters.guard.from_acquire += 1;
                self.log(|w| format!("{} guard starts from acquire's lease", w.who(c)));
                self.spawn_work(c);
            }
        }
    }

    fn guard_input(&self, c: usize) -> GuardInput {
        let g = self.clients[c].guard.as_ref().expect("a guard");
        GuardInput {
            now: self.local_now(c),
            lease: g.lease.clone(),
            last: g.last,
            last_attempt_at: g.last_attempt_at,
            kill_grace_ms: self.kill_grace(c),
        }
    }

    /// Starts the work under the proven lease, unless its deadline has passed already.
    fn spawn_work(&mut self, c: usize) {
        if let GuardDecision::Kill { .. } = decide(&self.guard_input(c)) {
            self.counters.guard.no_work += 1;
            return self.end_work_step(
                c,
                "the proven lease's deadline has passed: the guard never starts the work",
            );
        }
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
        self.guard_step(c);
    }

    /// One turn of the guard's loop: ask the core, then renew, wait or kill.
    fn guard_step(&mut self, c: usize) {
        let g = self.clients[c].guard.as_ref().expect("a guard");
        if g.work != Work::Running || g.verifying || g.renewing.is_some() || g.killed.is_some() {
            return;
        }
        let input = self.guard_input(c);
        match decide(&input) {
            GuardDecision::Kill { reason } => self.guard_kill(c, reason),
            GuardDecision::Renew { until } => {
                let live = self.clients[c].belief_until.is_some_and(|u| u > self.now);
                let at = self.clients[c].clock.real_at(until, self.now);
                let g = self.guard(c);
                g.renewing = Some(until);
                g.renewal_live = live;
                g.timer += 1;
                let timer = g.timer;
                self.push(at, Ev::GuardWake(c, timer));
                self.log(|w| {
                    format!(
                        "{} guard renews (until {} ms from now)",
                        w.who(c),
                        at - w.now
                    )
                });
                self.start_op(c, OperationKind::Renew);
            }
            GuardDecision::Wait { until } => {
                let at = self.clients[c].clock.real_at(until, self.now);
                let g = self.guard(c);
                g.timer += 1;
                let timer = g.timer;
                self.push(at, Ev::GuardWake(c, timer));
                self.log(|w| format!("{} guard waits {} ms", w.who(c), at - w.now));
            }
        }
    }

    /// The guard's timer: a wait ended, or the deadline a renewal raced came first (the renewal
    /// goes on in the background; its answer is ignored).
    pub(crate) fn guard_wake(&mut self, c: usize) {
        let local = self.local_now(c);
        let g = self.guard(c);
        if g.renewing.take().is_some() {
            g.last_attempt_at = Some(local);
            self.counters.guard.ignored += 1;
            self.log(|w| {
                format!(
                    "{} guard: the renewal is not proven by the deadline; it is ignored",
                    w.who(c)
                )
            });
        }
        self.guard_step(c);
    }

    /// SIGTERM to the work; it is gone by the kill grace (SIGKILL), measured on the local clock.
    fn guard_kill(&mut self, c: usize, reason: KillReason) {
        let local = self.local_now(c);
        let grace = self.kill_grace(c);
        let g = self.guard(c);
        g.killed = Some(reason);
        g.work = Work::Stopping;
        g.timer += 1;
        let late = local > g.lease.local_deadline.saturating_sub(grace) + 1_000;
        if g.renewing.take().is_some() {
            g.last_attempt_at = Some(local);
            self.counters.guard.ignored += 1;
        }
        match reason {
            KillReason::Deadline => {
                self.counters.guard.kills_deadline += 1;
                if late {
                    self.counters.guard.kills_after_pause += 1;
                }
            }
            KillReason::Lost => self.counters.guard.kills_lost += 1,
        }
        let latest = self.clients[c].clock.real_at(local + grace, self.now);
        let at = self.now + self.rng.below(latest - self.now + 1);
        let gen = self.clients[c].hold_gen;
        self.push(at, Ev::ChildGone(c, gen));
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

    /// A guard that was stopped (a pause) re-checks its deadline before acting on anything, as a
    /// real guard's timer fires first when its process resumes.
    pub(crate) fn guard_recheck(&mut self, c: usize) {
        if self.clients[c].stage != Stage::Hold {
            return;
        }
        let grace = self.kill_grace(c);
        let local = self.local_now(c);
        let Some(g) = self.clients[c].guard.as_ref() else {
            return;
        };
        if g.work == Work::Running
            && g.killed.is_none()
            && local >= g.lease.local_deadline.saturating_sub(grace)
        {
            self.guard_kill(c, KillReason::Deadline);
        }
    }

    /// Whether a renewal's failure counts against liveness: the guard waits for it, and it
    /// started while the proven lease was live.
    pub(crate) fn renewal_counts(&self, c: usize) -> bool {
        let local = self.local_now(c);
        self.clients[c].guard.as_ref().is_some_and(|g| {
            g.renewal_live && (g.verifying || g.renewing.is_some_and(|until| local < until))
        })
    }

    /// Takes in a newly proven lease.
    fn prove(&mut self, c: usize, lease: LeaseView, from: String) {
        let until = self.clients[c].clock.real_of(lease.local_deadline);
        let cl = &mut self.clients[c];
        cl.belief_until = Some(until);
        cl.belief_from = from;
        cl.acquired_late = cl.stale_answer_ms;
        self.guard(c).lease = lease;
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
        let local = self.local_now(c);
        let g = self.guard(c);
        if g.verifying {
            g.verifying = false;
            if let (ResultWord::Renewed, Some(lease)) = (result, outcome.lease) {
                self.prove(c, lease, "the guard's verification".into());
                return self.spawn_work(c);
            }
            self.counters.guard.not_held += 1;
            if result == ResultWord::Lost {
                self.clients[c].holding = None;
            }
            return self.end_work_step(
                c,
                "the guard could not verify the holding (not-held): the work never runs",
            );
        }
        let Some(until) = g.renewing.take() else {
            // Given up on already (the deadline came first, or the work was stopped).
            return self.log(|w| format!("{} guard ignores the late renewal answer", w.who(c)));
        };
        g.timer += 1;
        g.last_attempt_at = Some(local);
        if local >= until {
            // Answered after the deadline it raced (the process was paused): the guard's timer
            // fires first; the answer is ignored.
            self.counters.guard.ignored += 1;
            return self.guard_step(c);
        }
        g.renewals += 1;
        let renewals = g.renewals;
        self.counters.guard.max_renewals = self.counters.guard.max_renewals.max(renewals);
        match (result, outcome.lease) {
            (ResultWord::Renewed, Some(lease)) => {
                self.counters.guard.renewed += 1;
                if lease.expires_at >= lease.ceiling_at {
                    self.counters.guard.at_ceiling += 1;
                }
                self.guard(c).last = LastRenewal::Renewed;
                self.prove(c, lease, format!("renewal {renewals}"));
            }
            (ResultWord::NotDue, _) => {
                // Held, not due yet by GitHub's clock: as guard.mjs does, the lease already proven
                // stands and `decide` spaces the next try.
                self.counters.guard.not_due += 1;
                self.guard(c).last = LastRenewal::NotDue;
            }
            (ResultWord::Lost, _) => {
                self.counters.guard.lost += 1;
                self.guard(c).last = LastRenewal::Lost;
                // Proven lost: the belief ends at once (the work stops within the kill grace).
                self.clients[c].holding = None;
            }
            _ => {
                self.counters.guard.failed += 1;
                self.guard(c).last = LastRenewal::Failed;
            }
        }
        self.guard_step(c);
    }

    /// The work ended on its own.
    pub(crate) fn work_ended(&mut self, c: usize) {
        if self.clients[c]
            .guard
            .as_ref()
            .is_some_and(|g| g.work == Work::Running)
        {
            self.counters.guard.work_done += 1;
        }
        self.end_work_step(c, "the work ends");
    }

    /// The guard's step is over (the work ended, was stopped, or never started): the release
    /// step (`if: always()`) runs. A renewal still running is abandoned with the step.
    pub(crate) fn end_work_step(&mut self, c: usize, why: &str) {
        self.check_work_stop(c);
        if self.clients[c]
            .guard
            .as_ref()
            .is_some_and(|g| g.verifying || g.renewing.is_some())
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
