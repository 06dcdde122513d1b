//! One seed's simulation: the world (the scheduler), the simulated GitHub, the clients and the
//! checker, put together. It pops the world's events in order and hands each to the part of the
//! model it concerns: a request's arrival to GitHub (whose commits it feeds to the checker),
//! everything else to the client it is for; and it ends the seed.

use std::fmt::Write as _;

use leasehold_core::{Call, Command, LeasePolicy, Reply, SleepReason};

use crate::checker::{Checker, Feed, Setup};
use crate::client::{Env, GuardMode, JobSettings, Jobs, Run};
use crate::fault::Fault;
use crate::github::store::http_date;
use crate::github::wire::{command_timeout, describe_reply};
use crate::github::{GitHub, Store, Wire};
use crate::report::Counters;
use crate::types::{Violation, BRANCH, LOCK, REPOSITORY, T0};
use crate::world::params::{
    RecordJobId, Start, KILL_GRACE_MS, MAX_EVENTS, MAX_LEASE_MINUTES, MIN_LEASE_MINUTES,
};
use crate::world::{Ev, Params, SimConfig, World};

/// What a seed's run leaves behind.
pub struct Finished {
    pub counters: Counters,
    pub violation: Option<Violation>,
    pub trace: Option<String>,
}

/// One seed: its world, GitHub, clients and checker.
pub struct Sim {
    pub world: World,
    pub github: GitHub,
    pub checker: Checker,
    pub jobs: Jobs,
}

impl Sim {
    pub fn new(seed: u64, cfg: &SimConfig) -> Self {
        let world = World::new(seed, cfg);
        let params = &world.params;
        let mut store = Store::new(LOCK, BRANCH, params.config_text());
        match params.start {
            Start::NoBranch => {}
            Start::EmptyBranch => store.start_branch(),
            Start::Existing { revision, fence } => {
                store.start_branch();
                let mut initial = store.initial.clone();
                initial.revision = revision;
                initial.fence = fence;
                store.start_state(initial, T0);
            }
        }
        let mut checker = Checker::new(Setup {
            lock: LOCK.into(),
            capacity: params.capacity,
            policy: params
                .lease
                .clone()
                .unwrap_or_else(LeasePolicy::unconfigured),
            reaper_bound_ms: params.reaper.as_ref().map(|r| r.removal_bound_ms()),
            faults_stop: T0 + params.profile.until,
            bound_ms: params.bound_ms,
            initial: store.initial.clone(),
            lifecycle: params.lifecycle.is_some(),
            cooldown_ms: params.lifecycle.as_ref().map_or(0, |l| l.cooldown_ms()),
            confirmed: params
                .lifecycle
                .iter()
                .flat_map(|l| l.reports.iter().enumerate())
                .filter(|(_, r)| **r == crate::lifecycle::ReportKind::Confirmed)
                .map(|(i, _)| format!("{REPOSITORY}:{}:build", 4_000 + i))
                .collect(),
            pool: params.pool.as_ref().map(|p| crate::pool::PoolBooks {
                config: p.config.clone(),
                requests: p
                    .runs
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        (
                            format!("{REPOSITORY}:{}:build", 4_000 + i),
                            a.request.clone(),
                        )
                    })
                    .collect(),
                poll_max_ms: params.poll_max_s * 1_000,
                slack_ms: 20_000,
                fit_since: Default::default(),
            }),
        });
        if let Some(v) = store.current() {
            let (state, sha) = (&store.meta(v).state, &store.version(v).sha);
            // Nothing to check in a version nobody in the seed wrote.
            let _ = checker.feed(T0, Feed::StartVersion { state, sha });
        }
        let mut sim = Sim {
            world,
            github: GitHub::new(store),
            checker,
            jobs: Jobs::default(),
        };
        for i in 0..sim.world.params.runs {
            let p = &sim.world.params;
            let leased = p.lease.is_some();
            let hold_max = p.hold_max_ms;
            let (poll_min, poll_max) = (p.poll_min_s, p.poll_max_s);
            let r = &mut sim.world.rng;
            let lease_min = (!leased || r.below(4) == 0)
                .then(|| r.between(MIN_LEASE_MINUTES, MAX_LEASE_MINUTES));
            let guard_mode = if r.below(2) == 0 {
                GuardMode::Verify
            } else {
                GuardMode::FromAcquire
            };
            let settings = JobSettings {
                poll_s: r.between(poll_min, poll_max),
                timeout_min: if r.below(20) == 0 {
                    0
                } else {
                    r.between(1, 10)
                },
                lease_min,
                hold_ms: r.below(hold_max + 1),
                deadline_s: if r.below(3) == 0 {
                    Some(r.between(30, 300))
                } else {
                    None
                },
                release_on_exit: r.below(10) != 0,
                guard_mode,
                kill_grace_ms: r.pick(&KILL_GRACE_MS),
                renew_names_holder: r.below(2) == 0,
                renew_if_due: guard_mode == GuardMode::FromAcquire,
                record_job_id: false,
            };
            let record = match p.record_job_id {
                RecordJobId::None => false,
                RecordJobId::All => true,
                RecordJobId::Some => r.below(2) == 0,
            };
            let settings = JobSettings {
                record_job_id: record,
                ..settings
            };
            let start_at = T0 + r.below(p.start_spread_ms + 1);
            sim.jobs
                .runs
                .push(Run::new(4_000 + i as u64, settings, false));
            let c = sim.env().new_attempt(i, None);
            sim.world.queue.push(start_at, Ev::JobStart(c));
        }
        // A pool's usage readings, each sent by a run of its own at its own time.
        let readings = sim.world.params.pool.as_ref().map(|p| p.readings.clone());
        for (i, reading) in readings.into_iter().flatten().enumerate() {
            sim.env().new_reporter(i, T0 + reading.start_ms);
        }
        let w = &mut sim.world;
        if let Some(r) = w.params.reaper.clone() {
            w.queue.push(T0 + r.first_ms, Ev::ReapTick(0));
        }
        if w.params.lifecycle.is_some() {
            let (lo, hi) = crate::client::operator::OPERATOR_LOOK_MS;
            let at = T0 + w.operator_rng.between(lo, hi);
            w.queue.push(at, Ev::OperatorTick(0));
        }
        w.counters.seeds = 1;
        w.counters.leased_seeds = u64::from(w.params.lease.is_some());
        w.counters.pool_seeds = u64::from(w.params.pool.is_some());
        w.counters.reaper.seeds = u64::from(w.params.reaper.is_some());
        w.counters.reaper.renews_seeds =
            u64::from(w.params.lease.as_ref().is_some_and(|p| p.reaper_renews));
        w.counters.runs = w.params.runs as u64;
        sim
    }

    pub fn params(&self) -> &Params {
        &self.world.params
    }

    /// What the clients' drivers act on, lent for one event.
    pub fn env(&mut self) -> Env<'_> {
        Env {
            now: self.world.now,
            world: &mut self.world,
            gh: &mut self.github,
            checker: &mut self.checker,
            clients: &mut self.jobs.clients,
            runs: &mut self.jobs.runs,
            sweep_pending: &mut self.jobs.sweep_pending,
            reaper_stopped: &mut self.jobs.reaper_stopped,
        }
    }

    /// Runs the seed to its end: everything settled, the bound passed, or a violation found.
    pub fn run(mut self) -> Finished {
        let bound = T0 + self.world.params.bound_ms;
        let mut unsettled = None;
        loop {
            let Some((at, ev)) = self.world.queue.pop() else {
                // Nothing left to happen: an abandoned holding may still be in the lock (a write
                // that landed after its job crashed). A later job comes for it.
                self.env().maybe_sweep();
                if self.world.queue.is_empty() || self.world.violation.is_some() {
                    break;
                }
                continue;
            };
            if at > bound || self.world.counters.events >= MAX_EVENTS {
                unsettled = Some(at);
                break;
            }
            self.world.now = at;
            self.world.counters.events += 1;
            match ev {
                Ev::Arrive(req) => self.arrive(req),
                ev => self.env().dispatch(ev),
            }
            if self.world.violation.is_some() {
                break;
            }
        }
        if self.world.violation.is_none() {
            let rerun_owed = self
                .jobs
                .runs
                .iter()
                .find(|r| r.needs_rerun || r.rerun_pending)
                .map(|r| r.run_id);
            let feed = Feed::EndOfSeed {
                unsettled,
                rerun_owed,
            };
            let breach = self.checker.feed(self.world.now, feed);
            self.env().breach(breach);
        }
        let w = &mut self.world;
        let sim = w.now - T0;
        w.counters.sim_ms = sim;
        w.counters.max_sim_ms = sim;
        let (r, t) = (&mut w.counters.reaper, &self.checker.tally);
        for (reason, n) in &t.removed_holdings {
            *r.removed_holdings.entry(reason.clone()).or_default() += n;
        }
        for (reason, n) in &t.removed_queue {
            *r.removed_queue.entry(reason.clone()).or_default() += n;
        }
        r.renewed += t.renewed;
        r.renewed_outdated += t.renewed_outdated;
        r.acquire_expired += t.acquire_expired;
        r.expiry_min_margin_ms = t.expiry_min_margin_ms;
        r.expiry_max_slack_ms = t.expiry_max_slack_ms;
        r.reapable_removed += t.reapable_removed;
        r.max_reap_wait_permille = t.max_reap_wait_permille;
        let degraded = w.counters.lifecycle.degraded;
        let mut operator = w.counters.lifecycle.operator.clone();
        operator.admitted_after_end = t.lifecycle.operator.admitted_after_end;
        w.counters.lifecycle = t.lifecycle.clone();
        w.counters.lifecycle.degraded = degraded;
        w.counters.lifecycle.operator = operator;
        w.counters.lifecycle.seeds = u64::from(w.params.lifecycle.is_some());
        if let (Some(v), Some(t)) = (&w.violation, w.trace.as_mut()) {
            let _ = writeln!(t, "{}", v.line());
        }
        Finished {
            counters: std::mem::take(&mut w.counters),
            violation: w.violation.take(),
            trace: w.trace.take(),
        }
    }

    /// The request reaches GitHub: it is processed atomically, now; a commit is fed to the
    /// checker.
    fn arrive(&mut self, req: usize) {
        let mut env = self.env();
        let c = env.gh.requests[req].client;
        if !env.clients[c].is_reaper() {
            env.gh.jobs_in_flight -= 1;
        }
        let now = env.now;
        let faulty = env.faulty();
        let w = &mut *env.world;
        let mut wire = Wire {
            store: &mut env.gh.store,
            rng: &mut w.rng,
            profile: &w.params.profile,
            counters: &mut w.counters,
            now,
        };
        let mut fault = if faulty {
            wire.draw_request_fault()
        } else {
            None
        };
        // A token's first seconds answer 401, a fault like the others: not once faults stopped.
        if fault.is_none() && faulty && now < env.clients[c].token_ready_at && wire.rng.ppm(700_000)
        {
            fault = Some(Fault::Unauthorized);
        }
        // The Actions API's own refusals: a token without `actions: read`, a run it cannot see.
        let actions = matches!(
            env.gh.requests[req].command.call(),
            Some(Call::GetRunAttempt { .. } | Call::GetJob { .. } | Call::ListJobs { .. })
        );
        if actions && fault.is_none() && faulty && wire.rng.ppm(wire.profile.actions_refusal_ppm) {
            fault = Some(if wire.rng.below(2) == 0 {
                Fault::ActionsForbidden
            } else {
                Fault::ActionsNotFound
            });
        }
        let placeholder = Command::Sleep {
            until_ms: 0,
            reason: SleepReason::Poll,
        };
        let command = std::mem::replace(&mut env.gh.requests[req].command, placeholder);
        let write = env.gh.requests[req].write;
        let counted = wire.counters.faults;
        let (mut reply, applied, served) = wire.process(&command, fault, write);
        // The trace names a drawn fault only if it took effect (it is counted when it does): a
        // stale read drawn for a write, or a 409 for a read, changes nothing.
        let shown = fault.filter(|_| wire.counters.faults != counted);
        // GitHub puts its `date` header on every HTTP answer, errors included.
        if let Reply::Http {
            date: date @ None, ..
        } = &mut reply
        {
            *date = Some(http_date(now));
        }
        env.gh.requests[req].served = served;
        let timeout = command_timeout(&command);
        env.gh.requests[req].command = command;
        if let (Some(v), Some(wr)) = (applied, write) {
            env.world.counters.commits += 1;
            env.log(|w| {
                let st = w.gh.store.meta(v).state.as_ref().ok();
                format!(
                    "server commits version {} of the state by {}: revision {}, holders {:?}, queue {:?}",
                    v,
                    w.who(c),
                    st.map(|s| s.revision).unwrap_or(0),
                    st.map(|s| s.holders.iter().map(|h| (h.holder_id.rsplit(':').nth(1).unwrap_or("?").to_string(), h.fence)).collect::<Vec<_>>())
                        .unwrap_or_default(),
                    st.map(|s| s.queue.iter().map(|q| q.holder_id.rsplit(':').nth(1).unwrap_or("?").to_string()).collect::<Vec<_>>())
                        .unwrap_or_default(),
                )
            });
            let store = &env.gh.store;
            let feed = Feed::Committed {
                version: v,
                state: &store.meta(v).state,
                sha: &store.version(v).sha,
                write: Some(wr),
            };
            let breach = env.checker.feed(now, feed);
            env.breach(breach);
            let expired = env
                .gh
                .store
                .meta(v)
                .state
                .as_ref()
                .ok()
                .and_then(|st| st.last_change.as_ref())
                .map_or(0, |ch| ch.removed.len());
            env.world.counters.guard.expired += expired as u64;
        }
        let down = if fault == Some(Fault::SlowAnswer) {
            timeout + env.world.rng.between(1, 5_000)
        } else {
            env.world.rng.between(5, 250)
        };
        env.log(|w| {
            format!(
                "server answers {} with {}{}",
                w.who(c),
                describe_reply(&reply),
                shown
                    .map(|f| format!(" [fault: {}]", f.name()))
                    .unwrap_or_default()
            )
        });
        env.gh.requests[req].reply = Some(reply);
        env.gh.requests[req].answered_at = now;
        env.push(now + down, Ev::Respond(req));
    }
}
