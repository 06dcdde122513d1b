//! The expiry sweep: a later job that comes along once every job has ended while a crashed job
//! that nobody reran still has a holding (or a queue entry) in the lock; its acquire must remove
//! them (invariant 6 (c), checked here).

use leasehold_core::limits::USAGE_FUTURE_MS;
use leasehold_core::ResultWord;

use crate::types::{Invariant, T0};
use crate::world::params::{KILL_GRACE_MS, SWEEP_SPREAD_MS};
use crate::world::Ev;

use super::attempt::{GuardMode, JobSettings, Run};
use super::env::Env;

impl Env<'_> {
    /// Every job has ended, no rerun is coming, and the lock still has entries: they must all be
    /// abandoned jobs' (crashed, never rerun). A later job comes once they can all be taken (and
    /// faults have stopped); its acquire must remove them by expiry. An abandoned waiter's entry
    /// is admitted like any other (nobody can tell it is dead) and expires in turn: another
    /// sweep comes for it, at most one per run.
    pub(crate) fn maybe_sweep(&mut self) {
        let Some(policy) = self.world.params.lease.clone() else {
            return;
        };
        if *self.sweep_pending
            || self.world.violation.is_some()
            || self.clients.iter().any(|cl| cl.live() && !cl.is_reaper())
            // A pool's readings still to come (or being sent) come first: the sweep's own
            // fresh readings must be the last word.
            || self
                .clients
                .iter()
                .any(|cl| cl.live() && self.runs[cl.run].usage.is_some())
            || self.runs.iter().any(|r| r.needs_rerun || r.rerun_pending)
            || !self.runs.iter().any(|r| r.abandoned)
        {
            return;
        }
        let Some(st) = self.gh.store.committed().cloned() else {
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
        if self.world.counters.guard.sweeps > self.world.params.runs as u64 {
            let message = format!(
                "every job ended, and {} sweeps left abandoned entries in the lock: {st:?}",
                self.world.counters.guard.sweeps
            );
            return self.violate(Invariant::Liveness, message);
        }
        let at = self
            .now
            .max(T0 + self.world.params.profile.until)
            .max(takeable)
            + self.world.rng.below(SWEEP_SPREAD_MS + 1);
        *self.sweep_pending = true;
        self.push(at, Ev::SweepStart);
    }

    pub(crate) fn start_sweep(&mut self) {
        *self.sweep_pending = false;
        let policy = self
            .world
            .params
            .lease
            .clone()
            .expect("sweeps only on leased locks");
        let (queued, takeable) = match self.gh.store.committed() {
            Some(st) => (
                !st.queue.is_empty(),
                st.holders
                    .iter()
                    .map(|h| policy.takeable_after(h.expires_at) + 1)
                    // A pool's resource backing off after a rate limit takes nobody until then.
                    .chain(
                        st.pool
                            .iter()
                            .flat_map(|b| b.backoff.values().map(|b| b.until + 1)),
                    )
                    // A reading observed ahead of GitHub's clock is refused until it is not.
                    .chain(st.pool.iter().flat_map(|b| {
                        b.usage
                            .values()
                            .map(|u| u.observed_at.saturating_sub(USAGE_FUTURE_MS) + 1)
                    }))
                    .max()
                    .unwrap_or(0),
            ),
            None => (false, 0),
        };
        // A pool with readings admits nobody to a resource whose reading is stale, exhausted or
        // refused, for ever: the later job's operator reports a fresh reading of each first (a
        // waiter of that pool is the pool's business, invariants 20 and 21, not expiry's).
        let latest = self
            .gh
            .store
            .committed()
            .and_then(|st| st.pool.as_ref())
            .and_then(|b| b.usage.values().map(|u| u.observed_at + 1).max())
            .unwrap_or(0);
        if let Some(p) = self
            .world
            .params
            .pool
            .as_mut()
            .filter(|p| !p.readings.is_empty())
        {
            // Observed after every recorded reading: an older one never replaces a newer one.
            let fresh = p.fresh_readings(self.now.max(latest));
            let first = p.readings.len();
            p.readings.extend(fresh);
            for i in first..p.readings.len() {
                self.new_reporter(i, self.now);
            }
        }
        let r = &mut self.world.rng;
        let poll_s = r.between(self.world.params.poll_min_s, self.world.params.poll_max_s);
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
            usage: None,
            operator: None,
        });
        self.world.counters.runs += 1;
        self.world.counters.guard.sweeps += 1;
        let c = self.new_attempt(run, None);
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
            // Under the lifecycle the holdings it expired became quarantines that keep their
            // slots: it may time out, once none of them is a holding any more.
            let quarantined = self.world.params.lifecycle.is_some()
                && result == ResultWord::Timeout
                && self.gh.store.committed().is_some_and(|st| {
                    st.holders.iter().all(|h| {
                        !self.clients.iter().any(|cl| {
                            cl.holder_id == h.holder_id
                                && cl.nonce == h.nonce
                                && cl.crashed
                                && self.runs[cl.run].abandoned
                        })
                    })
                });
            // While the lock's incident stands nobody is admitted, and nothing expires.
            let incident = result == ResultWord::Incident
                && self
                    .world
                    .params
                    .lifecycle
                    .as_ref()
                    .is_some_and(|l| l.incidents());
            if quarantined || incident {
                return;
            }
            let message = format!("{} (the expiry sweep) ended its acquire {}: the abandoned holdings were not removed", self.who(c), result.as_str());
            return self.violate(Invariant::Liveness, message);
        }
        // Under the lifecycle the slots the expired holdings leave are quarantined: the sweep
        // gets one when the reaper recovers it or a cooldown ends, not a poll after expiry.
        let limit = limit.filter(|_| self.world.params.lifecycle.is_none());
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
