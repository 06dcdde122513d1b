//! What a seed's world is before it runs: the run's configuration ([`SimConfig`]), the seed's
//! draws ([`Params`]: the lock's capacity and lease policy, the jobs, the fault profile, the
//! reaper's schedule, the liveness bound), and the constants they are drawn from.

use leasehold_core::limits::REAP_WRITE_BUDGET_MS as WRITE_BUDGET_MS;
use leasehold_core::time::Millis;
use leasehold_core::LeasePolicy;

use crate::fault::{Profile, REQUEST_FAULTS};
use crate::lifecycle::LifecycleParams;
use crate::planted::PlantedBug;
use crate::pool::PoolParams;
use crate::rng::SimRng;

/// A hard cap on events per seed, far above any settled run: a runaway seed stops here and is
/// reported as a liveness violation.
pub const MAX_EVENTS: u64 = 3_000_000;
/// Reruns start this long after the decision to rerun (an operator or an automation reacting).
pub const RERUN_DELAY_MS: (Millis, Millis) = (5_000, 60_000);
/// Leases the simulated jobs ask for (`lease-minutes`). At least 6: below the lock policy's
/// `minRemaining` (5 minutes unconfigured) the lease's local deadline falls before admission.
/// The longest pause is twice the longest lease. On a lock whose config sets a lease, most jobs
/// ask for none (the policy's ttl, 2 to 5 minutes, applies).
pub const MIN_LEASE_MINUTES: u64 = 6;
pub const MAX_LEASE_MINUTES: u64 = 8;
/// A pause lasts at least this long (and at least the job's lease), so that in the default
/// budget a resumed process meets no fault (faults stop within 4 minutes).
pub const MIN_PAUSE_MS: Millis = 6 * 60_000;
/// The longest pause: twice the longest lease.
pub const MAX_PAUSE_MS: Millis = 2 * MAX_LEASE_MINUTES * 60_000;
/// The guard's kill grace (`kill-grace-seconds`) the jobs draw from.
pub const KILL_GRACE_MS: [Millis; 4] = [1_000, 5_000, 10_000, 30_000];
/// Work lengths (the longest per seed) on a lock without and with a lease policy: with one, the
/// work often outlasts several renewals and sometimes the ceiling (`maxTtl`, up to 20 minutes).
pub const HOLD_MAX_MS: [Millis; 5] = [0, 2_000, 10_000, 30_000, 90_000];
pub const LEASED_HOLD_MAX_MS: [Millis; 4] = [30_000, 180_000, 480_000, 1_200_000];
/// The expiry sweep (a later job that comes once every job has ended with an abandoned holding
/// in the lock) starts within this long after the abandoned holdings can be taken.
pub const SWEEP_SPREAD_MS: Millis = 30_000;
/// `poll-seconds` of the jobs: 1 to 5, or 5 to 15 on a lock whose works run for minutes
/// (waiters poll all the while; the action's default is 10).
pub const MAX_POLL_SECONDS: u64 = 5;
pub const LONG_WORK_POLL_SECONDS: (u64, u64) = (5, 15);
/// GitHub notices a runner that died (SIGKILL, a lost machine) this long after, and completes
/// its job attempt (`failure`); an operator's rerun cancels it first when it comes sooner.
pub const LOST_RUNNER_NOTICE_MS: (Millis, Millis) = (60_000, 600_000);

/// What a run of the simulation is asked to do, beyond the seed.
#[derive(Clone, Debug, Default)]
pub struct SimConfig {
    /// Jobs (workflow runs) per seed; drawn from the seed (2 to 6) when `None`.
    pub clients: Option<usize>,
    pub planted: Option<PlantedBug>,
    pub trace: bool,
    /// Faults may last up to [`LONG_FAULTS_UNTIL_MS`](crate::fault::LONG_FAULTS_UNTIL_MS),
    /// past the longest pause (`--long-faults`).
    pub long_faults: bool,
}

/// How the state branch looks when the seed begins.
#[derive(Clone, Copy, Debug)]
pub enum Start {
    NoBranch,
    EmptyBranch,
    /// A state file from earlier use: no holders, no queue, counters already advanced.
    Existing {
        revision: u64,
        fence: u64,
    },
}

/// Everything about a seed's world that is fixed before it runs.
#[derive(Clone, Debug)]
pub struct Params {
    /// The capacity in force (1 when there is no config file).
    pub capacity: u32,
    pub config_file: bool,
    /// The lease policy the config file sets (its `lease` block), if any; every drawn policy
    /// passes the core's own validation (`config::parse_config`).
    pub lease: Option<LeasePolicy>,
    pub runs: usize,
    pub start: Start,
    pub start_spread_ms: Millis,
    pub hold_max_ms: Millis,
    /// The range of `poll-seconds` the jobs use.
    pub poll_min_s: u64,
    pub poll_max_s: u64,
    pub profile: Profile,
    /// The scheduled reaper, in seeds that have one.
    pub reaper: Option<ReaperParams>,
    /// Which jobs pass `record-job-id: true` to acquire: none, every one, or about half.
    pub record_job_id: RecordJobId,
    /// Liveness bound, ms after T0: by then every job has ended and the lock is empty.
    pub bound_ms: Millis,
    /// In a pool seed: the pool and each run's request (drawn apart, [`crate::pool`]).
    pub pool: Option<PoolParams>,
    /// In a lifecycle seed: its cooldown, shared runners and each run's report (drawn apart,
    /// [`crate::lifecycle`]).
    pub lifecycle: Option<LifecycleParams>,
}

/// Which jobs record their job id (acquire's `record-job-id`), so the reaper judges their
/// entries by the job rather than by the run attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordJobId {
    None,
    All,
    Some,
}

impl Params {
    pub fn draw(rng: &mut SimRng, cfg: &SimConfig) -> Self {
        let leased = rng.below(2) == 0;
        let config_file = leased || rng.below(4) != 0;
        let capacity = if config_file {
            rng.between(1, 3) as u32
        } else {
            1
        };
        let lease = leased.then(|| draw_policy(rng, capacity));
        let runs = cfg.clients.unwrap_or_else(|| rng.between(2, 6) as usize);
        let start = match rng.below(10) {
            0..=2 => Start::NoBranch,
            3..=4 => Start::EmptyBranch,
            _ => Start::Existing {
                revision: rng.between(1, 500),
                fence: rng.between(0, 200),
            },
        };
        let start_spread_ms = if rng.below(4) == 0 {
            rng.between(0, 1_000)
        } else {
            rng.between(0, 60_000)
        };
        let hold_max_ms = if lease.is_some() {
            rng.pick(&LEASED_HOLD_MAX_MS)
        } else {
            rng.pick(&HOLD_MAX_MS)
        };
        let profile = Profile::draw(rng, cfg.long_faults);
        let (poll_min_s, poll_max_s) = if hold_max_ms > HOLD_MAX_MS[HOLD_MAX_MS.len() - 1] {
            LONG_WORK_POLL_SECONDS
        } else {
            (1, MAX_POLL_SECONDS)
        };
        let poll_ms = poll_max_s * 1_000;
        let grace_max = KILL_GRACE_MS[KILL_GRACE_MS.len() - 1];
        // A holding left behind is freed by a rerun (within 60 s of its crash) or, with a lease
        // policy and nobody rerunning the job, by expiry: past its lease (at most the longest a
        // job asks for, within the ceiling) plus grace and skew, within a poll of the next
        // waiter (who wakes when the holding can be taken).
        let expiry_ms = lease.as_ref().map_or(0, |p| {
            Self::longest_lease(p) + p.grace_ms + p.skew_ms + poll_ms * 5 / 4 + 10_000
        });
        let per_job =
            hold_max_ms + grace_max + 3 * poll_ms + RERUN_DELAY_MS.1.max(expiry_ms) + 30_000;
        // The expiry sweeps: abandoned waiters' entries are admitted and expire in turn, one
        // round (a sweep job: a wait of up to 30 s, an acquire, a work of up to 10 s, a release)
        // per abandoned run at most, and one for the holdings.
        let sweep_ms = if lease.is_some() {
            (runs as u64 + 1) * (expiry_ms + SWEEP_SPREAD_MS + 10_000 + grace_max + 60_000)
        } else {
            0
        };
        let mut bound_ms = profile.until.max(start_spread_ms)
            + MAX_PAUSE_MS
            + 180_000
            + 2 * runs as u64 * per_job
            + sweep_ms;
        // Drawn after everything above, so that a seed's other draws keep their order.
        let reaper = (rng.below(2) == 0).then(|| ReaperParams::draw(rng));
        let mut lease = lease;
        if let (Some(p), Some(_)) = (lease.as_mut(), &reaper) {
            // The lock's config says `"reaperRenews": true` in half the leased seeds with a reaper.
            p.reaper_renews = rng.below(2) == 0;
        }
        let record_job_id = match rng.below(3) {
            0 => RecordJobId::None,
            1 => RecordJobId::All,
            _ => RecordJobId::Some,
        };
        if let Some(r) = &reaper {
            // A crashed job nobody reruns is completed by GitHub within the lost-runner delay,
            // and its entries are reaped within the reaper's bound after that; the last reap,
            // after everything settled, ends within a reap of its tick.
            bound_ms += LOST_RUNNER_NOTICE_MS.1 + 2 * r.removal_bound_ms();
        }
        Params {
            capacity,
            config_file,
            lease,
            runs,
            start,
            start_spread_ms,
            hold_max_ms,
            poll_min_s,
            poll_max_s,
            profile,
            reaper,
            record_job_id,
            bound_ms,
            pool: None,
            lifecycle: None,
        }
    }

    /// Makes the lock a pool in a pool seed (its own draws, after every other one): the config
    /// file declares resources, and the capacity in force is the pool's.
    pub fn with_pool(mut self, seed: u64) -> Self {
        self.pool = PoolParams::draw(
            seed,
            self.config_file,
            self.runs,
            self.lease.as_ref().map(lease_block),
        );
        if let Some(p) = &self.pool {
            self.capacity = leasehold_core::pool_capacity(&p.config);
        }
        self
    }

    /// Turns the lifecycle on in a lifecycle seed (its own draws, after every other one; never
    /// in a pool seed: a pool refuses `lifecycle`).
    pub fn with_lifecycle(mut self, seed: u64) -> Self {
        self.lifecycle =
            LifecycleParams::draw(seed, self.config_file, self.pool.is_some(), self.runs);
        self
    }

    /// The longest lease a holding of this lock gets: the policy's ttl, or what a job asks for
    /// with `lease-minutes`, within the ceiling.
    pub fn longest_lease(p: &LeasePolicy) -> Millis {
        p.ttl_ms.max((MAX_LEASE_MINUTES * 60_000).min(p.max_ttl_ms))
    }

    /// The lock's config file, as the store serves it.
    pub fn config_text(&self) -> Option<String> {
        if !self.config_file {
            return None;
        }
        if let Some(p) = &self.pool {
            return Some(p.json.clone());
        }
        let lifecycle = self
            .lifecycle
            .as_ref()
            .map(|l| format!(", \"lifecycle\": {}", l.block()))
            .unwrap_or_default();
        Some(match &self.lease {
            None => format!("{{\"capacity\": {}{lifecycle}}}\n", self.capacity),
            Some(p) => format!(
                "{{\"capacity\": {}, \"lease\": {}{lifecycle}}}\n",
                self.capacity,
                lease_block(p)
            ),
        })
    }

    pub fn describe(&self) -> String {
        let p = &self.profile;
        let active: Vec<String> = REQUEST_FAULTS
            .iter()
            .zip(p.request_ppm)
            .filter(|(_, ppm)| *ppm > 0)
            .map(|(f, ppm)| format!("{:?}={}", f, ppm))
            .collect();
        let config = match (&self.lease, self.config_file) {
            (Some(p), _) => format!("config file with lease {}", lease_block(p)),
            (None, true) => "config file, no lease".into(),
            (None, false) => "no config file".into(),
        };
        let reaper = match &self.reaper {
            Some(r) => format!(
                "reaper every {} ms (scan deadline {} s)",
                r.interval_ms, r.scan_s
            ),
            None => "no reaper".into(),
        };
        format!(
            "capacity {} ({}), {} runs, start {:?}, starts within {} ms, work up to {} ms, polls every {}-{} s; {reaper}, record-job-id {:?}; faults until +{} ms \
             [{}; not-sent={} late={} token-lag={} stale-window={}ms pause={} zombie={} crash-after-write={} \
             crash-in-flight={} crash-in-hold={} rerun-ok={} no-rerun={} actions-refused={} offset<={}ms drift<={}ppm]; liveness bound +{} ms",
            self.capacity,
            config,
            self.runs,
            self.start,
            self.start_spread_ms,
            self.hold_max_ms,
            self.poll_min_s,
            self.poll_max_s,
            self.record_job_id,
            p.until,
            active.join(" "),
            p.not_sent_ppm,
            p.late_arrival_ppm,
            p.token_lag,
            p.stale_window_ms,
            p.pause_ppm,
            p.zombie_ppm,
            p.crash_after_write_ppm,
            p.crash_in_flight_ppm,
            p.crash_in_hold_ppm,
            p.rerun_ok_ppm,
            if self.lease.is_some() || self.reaper.is_some() { p.no_rerun_ppm } else { 0 },
            p.actions_refusal_ppm,
            p.max_offset_ms,
            p.max_drift_ppm,
            self.bound_ms,
        )
    }
}

/// A lease policy for the lock's config: a ttl of 2 to 5 minutes, renewed at most every half of
/// it; a skew tolerance of 5 s to a minute, which covers the simulated clocks once the core has
/// corrected them by GitHub's `date` headers (what is left: the header's one-second resolution,
/// a request's latency, and at most 2000 ppm of drift over a lease, about a second); a grace of
/// up to a minute; `minRemaining` below the renew interval; a ceiling (`maxTtl`) of one to four
/// leases. The draw keeps every rule of `LeasePolicy::validate` and is checked by the core's own
/// config parser; a policy it refused would be drawn again (a test shows none is).
pub fn draw_policy(rng: &mut SimRng, capacity: u32) -> LeasePolicy {
    loop {
        let policy = draw_policy_once(rng);
        let text = format!(
            "{{\"capacity\": {capacity}, \"lease\": {}}}",
            lease_block(&policy)
        );
        if let Ok(config) = leasehold_core::parse_config("locks/sim.config.json", &text) {
            if config.lease.as_ref() == Some(&policy) {
                return policy;
            }
        }
    }
}

/// One draw of [`draw_policy`], not yet checked.
pub fn draw_policy_once(rng: &mut SimRng) -> LeasePolicy {
    let ttl = rng.between(120, 300);
    let skew = rng.pick(&[5, 10, 30, 60]);
    let grace = rng.pick(&[0, 10, 30, 60]);
    // RenewTickFits: renew + 15 s (a request) + skew <= ttl - minRemaining.
    let renew = rng.between(20, (ttl / 2).min(ttl - 15 - skew));
    let min_remaining = rng.between(0, (renew - 1).min(ttl - 15 - skew - renew));
    let max_ttl = ttl * rng.between(1, 4);
    let s = |secs: u64| secs * 1_000;
    LeasePolicy {
        ttl_ms: s(ttl),
        renew_ms: s(renew),
        grace_ms: s(grace),
        max_ttl_ms: s(max_ttl),
        skew_ms: s(skew),
        min_remaining_ms: s(min_remaining),
        reaper_renews: false,
    }
}

/// The `lease` block of the config file, in seconds (with `"reaperRenews": true` when set).
pub fn lease_block(p: &LeasePolicy) -> String {
    format!(
        "{{\"ttlSeconds\": {}, \"renewSeconds\": {}, \"graceSeconds\": {}, \"maxTtlSeconds\": {}, \"skewSeconds\": {}, \"minRemainingSeconds\": {}{}}}",
        p.ttl_ms / 1_000,
        p.renew_ms / 1_000,
        p.grace_ms / 1_000,
        p.max_ttl_ms / 1_000,
        p.skew_ms / 1_000,
        p.min_remaining_ms / 1_000,
        if p.reaper_renews { ", \"reaperRenews\": true" } else { "" }
    )
}

// The scheduled reaper's draws.
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
/// The run ids of a pool's usage reporters.
pub const REPORTER_RUN_BASE: u64 = 95_000;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawn_lease_policy_is_valid_at_the_first_draw() {
        let mut rng = SimRng::new(5);
        for _ in 0..20_000 {
            let p = draw_policy_once(&mut rng);
            assert_eq!(p.validate(), Ok(()), "{p:?}");
            let text = format!("{{\"capacity\": 2, \"lease\": {}}}", lease_block(&p));
            let parsed = leasehold_core::parse_config("locks/sim.config.json", &text)
                .expect("the core accepts it");
            assert_eq!(
                parsed.lease,
                Some(p.clone()),
                "the config file says exactly the drawn policy"
            );
            let renews = LeasePolicy {
                reaper_renews: true,
                ..p.clone()
            };
            let text = format!("{{\"capacity\": 2, \"lease\": {}}}", lease_block(&renews));
            let parsed = leasehold_core::parse_config("locks/sim.config.json", &text)
                .expect("the core accepts reaperRenews");
            assert_eq!(
                parsed.lease,
                Some(renews),
                "reaperRenews: true is read back"
            );
            assert!(
                (120_000..=300_000).contains(&p.ttl_ms)
                    && p.renew_ms * 2 <= p.ttl_ms
                    && p.max_ttl_ms <= 4 * p.ttl_ms
            );
            // The skew tolerance covers what is left of the clocks' disagreement after the
            // date-header correction: a second of resolution, a request, 2000 ppm over a lease.
            assert!(p.skew_ms >= 5_000);
        }
    }
}
