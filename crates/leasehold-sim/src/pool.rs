//! Resource pools in the simulation: in one seed in four that has a config file, the lock is a
//! pool ([`PoolParams`]: 1 to 3 resources of caps 1 or 2 with tags, sometimes a consumer limit,
//! `maxInFlight`, a non-reserving atom, affinity and runner serialization), and every run asks
//! with its own request (a preference chain, required tags, a partition, an affinity key) and
//! says how its work went on release (rate-limited with a short hint, success, or nothing) and,
//! in some runs, on its renewals (rate-limited). In most pool seeds, usage readings
//! ([`ReadingAsk`]) are sent by runs of their own through the core's `report-usage`: fresh,
//! stale, ahead of GitHub's clock, throttled, rejected, nearly used up.
//! The draws come from a generator of their own, seeded from the seed, so every other seed, and
//! every other draw of a pool seed, is what it was without pools.
//!
//! The checker's pool invariants are here too, kept apart from the core: its own reading of the
//! rules in `docs/pools.md`, fed committed versions, never the core's choice function.
//!
//! | invariant | what |
//! | --- | --- |
//! | 17 resource cap | no resource ever has more holdings than its capacity |
//! | 18 partitions | no two holdings whose reserving partitions intersect |
//! | 19 consumer | no repository above its `maxConcurrent` |
//! | 20 choice | each admission is the resource the precedence table names (readings included) |
//! | 21 idle slot | after faults stop, no live waiter fits a free slot for longer than a poll |

use std::collections::BTreeMap;

use leasehold_core::time::{format_rfc3339, Millis};
use leasehold_core::{
    parse_config, Holder, LockState, PoolConfig, PoolRequest, QueueEntry, Resource, UsageReading,
    UsageStatus,
};

use crate::rng::SimRng;
use crate::types::{Invariant, REPOSITORY};

/// A seed's pool: its config and each run's request.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolParams {
    pub config: PoolConfig,
    /// The config file's text (the lease block added by the caller).
    pub json: String,
    /// Per run index: the acquire inputs it adds, and its release outcome.
    pub runs: Vec<RunAsk>,
    /// Usage readings, each reported by a run of its own (`report-usage`), in no order.
    pub readings: Vec<ReadingAsk>,
    /// Under runner serialization, in some seeds: the job attempts share this many runners
    /// (attempt `c` on runner `c % runners`, so a rerun may run on another runner than its
    /// earlier attempt). 0: every attempt has a runner of its own.
    pub runners: u64,
}

/// One usage reading a reporter run sends: when it starts (ms after `T0`), and the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadingAsk {
    pub start_ms: Millis,
    pub resource: String,
    pub used_bp: u32,
    pub window_start: Millis,
    pub reset_at: Millis,
    pub observed_at: Millis,
    /// `None`: the input is left out (allowed).
    pub status: Option<&'static str>,
}

impl ReadingAsk {
    pub fn inputs(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("resource".to_string(), self.resource.clone()),
            (
                "used".into(),
                format!("{}.{:04}", self.used_bp / 10_000, self.used_bp % 10_000),
            ),
            ("window-start".into(), format_rfc3339(self.window_start)),
            ("reset-at".into(), format_rfc3339(self.reset_at)),
            ("observed-at".into(), format_rfc3339(self.observed_at)),
        ];
        if let Some(s) = self.status {
            v.push(("status".into(), s.into()));
        }
        v
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunAsk {
    pub inputs: Vec<(String, String)>,
    pub request: PoolRequest,
    /// `outcome` on release: `None`, `success`, or `rate-limited` (with a hint this many ms
    /// after the release starts).
    pub outcome: Option<(&'static str, Option<Millis>)>,
    /// The guard's renewals say `outcome: rate-limited` with a hint this many ms ahead.
    pub renew_rate_limited: Option<Millis>,
}

fn words(items: &[String]) -> String {
    items.join(",")
}

impl PoolParams {
    /// The pool of a seed, if it is a pool seed: one in four of those with a config file.
    pub fn draw(
        seed: u64,
        config_file: bool,
        runs: usize,
        lease_block: Option<String>,
    ) -> Option<Self> {
        let mut r = SimRng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x706f_6f6c);
        if !config_file || r.below(4) != 0 {
            return None;
        }
        let n = r.between(1, 3) as usize;
        let resources: Vec<Resource> = (0..n)
            .map(|i| {
                let mut tags = vec![format!("t{}", i % 2)];
                if r.below(2) == 0 {
                    tags.push("shared".into());
                }
                Resource {
                    name: format!("r{i}"),
                    capacity: r.between(1, 2) as u32,
                    tags,
                }
            })
            .collect();
        let total: u32 = resources.iter().map(|x| x.capacity).sum();
        let mut json = String::from("{\"resources\": {");
        for (i, x) in resources.iter().enumerate() {
            let tags: Vec<String> = x.tags.iter().map(|t| format!("\"{t}\"")).collect();
            json.push_str(&format!(
                "{}\"{}\": {{\"capacity\": {}, \"tags\": [{}]}}",
                if i > 0 { ", " } else { "" },
                x.name,
                x.capacity,
                tags.join(", ")
            ));
        }
        json.push('}');
        if r.below(3) == 0 {
            json.push_str(&format!(
                ", \"consumers\": {{\"{REPOSITORY}\": {{\"maxConcurrent\": {}}}}}",
                r.between(1, u64::from(total))
            ));
        }
        if r.below(3) == 0 {
            json.push_str(&format!(
                ", \"maxInFlight\": {}",
                r.between(1, u64::from(total))
            ));
        }
        if r.below(2) == 0 {
            json.push_str(", \"nonReservingAtoms\": [\"docs\"]");
        }
        if r.below(2) == 0 {
            json.push_str(", \"affinitySeconds\": 300");
        }
        if r.below(4) == 0 {
            json.push_str(", \"runnerSerialization\": true");
        }
        if r.below(3) == 0 {
            json.push_str(", \"pacing\": {\"target\": 0.9, \"burst\": 0.05}");
        }
        if let Some(lease) = lease_block {
            json.push_str(&format!(", \"lease\": {lease}"));
        }
        json.push_str("}\n");
        let config = parse_config("locks/sim.config.json", &json)
            .expect("a drawn pool config is valid")
            .pool
            .expect("a pool");
        let names: Vec<String> = config
            .resources
            .iter()
            .map(|x| x.name.clone())
            .chain(["t0".into(), "t1".into(), "shared".into()])
            .collect();
        let runs = (0..runs)
            .map(|_| {
                let mut request = PoolRequest::default();
                for _ in 0..r.below(3) {
                    let e = names[r.below(names.len() as u64) as usize].clone();
                    if !request.prefer.contains(&e) {
                        request.prefer.push(e);
                    }
                }
                if r.below(4) == 0 {
                    // Only a tag some resource carries: a request nothing can meet would wait
                    // out its timeout, which says nothing about the pool.
                    let t = config.resources[r.below(n as u64) as usize].tags[0].clone();
                    request.requires.push(t);
                }
                request.partition = match r.below(10) {
                    0..=4 => None,
                    5 => Some(vec!["*".into()]),
                    _ => {
                        let atoms = ["db", "ui", "docs"];
                        let mut p: Vec<String> = Vec::new();
                        for _ in 0..r.between(1, 2) {
                            let a = atoms[r.below(3) as usize].to_string();
                            if !p.contains(&a) {
                                p.push(a);
                            }
                        }
                        Some(p)
                    }
                };
                if r.below(2) == 0 {
                    request.affinity = Some(format!("k{}", r.below(3)));
                }
                let outcome = match r.below(6) {
                    0 => Some(("rate-limited", Some(r.between(1_000, 60_000)))),
                    1 | 2 => Some(("success", None)),
                    _ => None,
                };
                let mut inputs = Vec::new();
                for (k, v) in [
                    ("prefer", words(&request.prefer)),
                    ("requires", words(&request.requires)),
                    (
                        "partition",
                        request.partition.as_deref().map(words).unwrap_or_default(),
                    ),
                    ("affinity", request.affinity.clone().unwrap_or_default()),
                ] {
                    if !v.is_empty() {
                        inputs.push((k.to_string(), v));
                    }
                }
                let renew_rate_limited = (r.below(8) == 0).then(|| r.between(1_000, 30_000));
                RunAsk {
                    inputs,
                    request,
                    outcome,
                    renew_rate_limited,
                }
            })
            .collect();
        let readings = if r.below(3) == 0 {
            Vec::new()
        } else {
            (0..r.between(1, 6))
                .map(|_| ReadingAsk::draw(&mut r, &config))
                .collect()
        };
        // Drawn last, so that every other draw of a seed is what it was before.
        let runners = if config.runner_serialization && r.below(2) == 0 {
            r.between(1, 3)
        } else {
            0
        };
        Some(PoolParams {
            config,
            json,
            runs,
            readings,
            runners,
        })
    }

    /// A fresh, allowed, unused reading of every resource, observed at `now` (GitHub's time)
    /// in a five-hour window that began ten minutes before.
    pub fn fresh_readings(&self, now: Millis) -> Vec<ReadingAsk> {
        self.config
            .resources
            .iter()
            .map(|r| ReadingAsk {
                start_ms: now.saturating_sub(crate::types::T0),
                resource: r.name.clone(),
                used_bp: 0,
                window_start: now - 10 * MINUTE,
                reset_at: now + 290 * MINUTE,
                observed_at: now,
                status: None,
            })
            .collect()
    }

    /// The renewal inputs of a run (`outcome: rate-limited`, `retry-at`) for a renewal at `now`.
    pub fn renew_inputs(&self, run: usize, now: Millis) -> Vec<(String, String)> {
        match self.runs.get(run).and_then(|a| a.renew_rate_limited) {
            None => Vec::new(),
            Some(ms) => vec![
                ("outcome".into(), "rate-limited".into()),
                ("retry-at".into(), format_rfc3339(now + ms)),
            ],
        }
    }

    /// The release inputs of a run (`outcome`, `retry-at`) for a release starting at `now`.
    pub fn release_inputs(&self, run: usize, now: Millis) -> Vec<(String, String)> {
        match self.runs.get(run).and_then(|a| a.outcome) {
            None => Vec::new(),
            Some((word, hint)) => {
                let mut v = vec![("outcome".to_string(), word.to_string())];
                if let Some(ms) = hint {
                    v.push(("retry-at".into(), format_rfc3339(now + ms)));
                }
                v
            }
        }
    }
}

impl ReadingAsk {
    /// A reading of one resource: mostly fresh and allowed, some observed long before (stale)
    /// or ahead of GitHub's clock, some throttled or rejected, windows of one or five hours at
    /// any point (some already reset by the time they are read).
    fn draw(r: &mut SimRng, config: &PoolConfig) -> Self {
        const MIN: Millis = 60_000;
        let start_ms = r.below(15 * MIN + 1);
        let at = crate::types::T0 + start_ms;
        let resource = config.resources[r.below(config.resources.len() as u64) as usize]
            .name
            .clone();
        let span = if r.below(2) == 0 { 60 * MIN } else { 300 * MIN };
        let window_start = at - r.below(span + 10 * MIN);
        let observed_at = match r.below(10) {
            0 | 1 => at - r.between(46 * MIN, 120 * MIN),
            2 => at + r.between(6 * MIN, 20 * MIN),
            _ => at - r.below(5 * MIN),
        };
        let used_bp = match r.below(6) {
            0 => r.between(9_800, 10_000) as u32,
            _ => r.below(9_800) as u32,
        };
        let status = match r.below(8) {
            0 => Some("throttled"),
            1 => Some("rejected"),
            2 => Some("allowed"),
            _ => None,
        };
        ReadingAsk {
            start_ms,
            resource,
            used_bp,
            window_start,
            reset_at: window_start + span,
            observed_at,
            status,
        }
    }
}

/// What the checker knows of the pool: its config and each holder id's request.
#[derive(Clone, Debug, Default)]
pub struct PoolBooks {
    pub config: PoolConfig,
    pub requests: BTreeMap<String, PoolRequest>,
    /// The longest `poll-seconds` of the seed's jobs, in ms.
    pub poll_max_ms: Millis,
    /// What a poll may take beyond its interval (a config read, write spacing, latency).
    pub slack_ms: Millis,
    /// Per waiting claim (holder id, nonce): since when it has fitted a free slot.
    pub fit_since: BTreeMap<(String, String), Millis>,
}

fn reserving<'a>(c: &PoolConfig, atoms: &'a Option<Vec<String>>) -> Vec<&'a str> {
    atoms
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|a| *a == "*" || !c.non_reserving_atoms.iter().any(|n| n == a))
        .collect()
}

/// The checker's own reading of "two partitions conflict": a shared reserving atom, or either
/// global (a global holding conflicts with every other, one that reserves nothing included).
fn intersect(c: &PoolConfig, a: &Option<Vec<String>>, b: &Option<Vec<String>>) -> bool {
    let (a, b) = (reserving(c, a), reserving(c, b));
    a.contains(&"*") || b.contains(&"*") || a.iter().any(|x| b.contains(x))
}

fn seat_partition(h: &Holder) -> Option<Vec<String>> {
    h.pool.as_ref().and_then(|s| s.partition.clone())
}

/// The partition a waiter's holding would reserve.
fn entry_partition(c: &PoolConfig, q: &QueueEntry) -> Option<Vec<String>> {
    let mut p = q.pool.as_ref().and_then(|r| r.partition.clone());
    if c.runner_serialization && !q.run.runner_name.is_empty() {
        p.get_or_insert_with(Vec::new)
            .push(format!("runner:{}", q.run.runner_name));
    }
    p
}

fn count_on(holders: &[Holder], name: &str) -> u32 {
    holders
        .iter()
        .filter(|h| h.pool.as_ref().is_some_and(|s| s.resource == name))
        .count() as u32
}

const MINUTE: Millis = 60_000;

/// The reading of resource `name` recorded in `state`.
fn reading<'a>(state: &'a LockState, name: &str) -> Option<&'a UsageReading> {
    state.pool.as_ref().and_then(|b| b.usage.get(name))
}

/// `docs/pools.md`'s pace, in basis points: the used fraction `target × elapsed fraction`
/// allows (rounded down), with the elapsed time counted from the window's start, at most the
/// window.
fn paced(target_bp: u32, u: &UsageReading, now: Millis) -> i64 {
    let window = u.reset_at.saturating_sub(u.window_start).max(1);
    let elapsed = now.saturating_sub(u.window_start).min(window);
    (i128::from(target_bp) * i128::from(elapsed) / i128::from(window)) as i64
}

/// Whether resource `i`'s readings let it take one more holding (the table's `stale`,
/// `status`, `exhausted`, `over-pace` and `probing` rows).
fn readings_allow(
    c: &PoolConfig,
    state: &LockState,
    holders: &[Holder],
    i: usize,
    now: Millis,
) -> bool {
    let name = &c.resources[i].name;
    let Some(u) = reading(state, name) else {
        // No reading: eligible, but one holding at a time once any resource has readings.
        let others = state.pool.as_ref().is_some_and(|b| !b.usage.is_empty());
        return !others || count_on(holders, name) == 0;
    };
    let fresh =
        now <= u.observed_at + 45 * MINUTE && u.observed_at <= now + 5 * MINUTE && now < u.reset_at;
    let headroom = 10_000 - i64::from(u.used_bp) > 200;
    let below_pace = c.pacing.is_none_or(|p| {
        let limit =
            (paced(p.target_bp, u, now) + i64::from(p.burst_bp)).min(i64::from(p.target_bp));
        i64::from(u.used_bp) < limit
    });
    fresh && u.status == UsageStatus::Allowed && headroom && below_pace
}

/// Resources that `request` may take in `state` at `now`, by config index: the tags, the cap, a
/// backoff in force, and the readings.
fn eligible(
    c: &PoolConfig,
    state: &LockState,
    holders: &[Holder],
    request: &PoolRequest,
    now: Millis,
) -> Vec<usize> {
    (0..c.resources.len())
        .filter(|&i| {
            let r = &c.resources[i];
            request.requires.iter().all(|t| r.tags.contains(t))
                && count_on(holders, &r.name) < r.capacity
                && state
                    .pool
                    .as_ref()
                    .and_then(|b| b.backoff.get(&r.name))
                    .is_none_or(|b| b.until <= now)
                && readings_allow(c, state, holders, i, now)
        })
        .collect()
}

/// The resource the precedence table names: the first preference entry (then every resource)
/// with an eligible one; within it, the key's warm resource, then cold ones, then ones warm for
/// another key; then the most room below pace, the soonest reset, config order.
fn expected(
    c: &PoolConfig,
    state: &LockState,
    options: &[usize],
    request: &PoolRequest,
    marks: &BTreeMap<String, (String, Millis)>,
    now: Millis,
) -> Option<usize> {
    let window = c.affinity_seconds * 1000;
    let warm_for = |key: &str, name: &str| {
        marks
            .get(key)
            .is_some_and(|(r, at)| r == name && now.saturating_sub(*at) <= window && *at <= now)
    };
    let rank = |i: usize| {
        let name = &c.resources[i].name;
        let a = if window == 0 {
            1
        } else if request
            .affinity
            .as_deref()
            .is_some_and(|k| warm_for(k, name))
        {
            0
        } else if marks.keys().any(|k| warm_for(k, name)) {
            2
        } else {
            1
        };
        let target = c.pacing.map_or(10_000, |p| p.target_bp);
        let u = reading(state, name);
        let room = u.map_or(0, |u| paced(target, u, now) - i64::from(u.used_bp));
        let reset = u.map_or(Millis::MAX, |u| u.reset_at);
        (a, -room, reset, i)
    };
    let entries = request.prefer.iter().map(Some).chain([None]);
    for e in entries {
        let pick = options
            .iter()
            .copied()
            .filter(|&i| {
                e.is_none_or(|e| c.resources[i].name == *e || c.resources[i].tags.contains(e))
            })
            .min_by_key(|&i| rank(i));
        if pick.is_some() {
            return pick;
        }
    }
    None
}

impl PoolBooks {
    /// The pool invariants of one committed version (`prev` the one it replaced, `now` when it
    /// was committed, `faults_over` whether faults have stopped long enough), and which waiting
    /// claims are live (their attempt is acquiring, not paused, not a zombie).
    pub fn check(
        &mut self,
        v: usize,
        prev: &LockState,
        state: &LockState,
        now: Millis,
        faults_over: bool,
        live: &dyn Fn(&str, &str) -> bool,
    ) -> Vec<(Invariant, String)> {
        let c = &self.config;
        let mut problems = Vec::new();
        // 17. Resource caps.
        for r in &c.resources {
            let n = count_on(&state.holders, &r.name);
            if n > r.capacity {
                problems.push((
                    Invariant::PoolCap,
                    format!(
                        "version {v}: resource {} has {n} holdings, capacity {}",
                        r.name, r.capacity
                    ),
                ));
            }
        }
        // 18. Partitions.
        for (i, a) in state.holders.iter().enumerate() {
            for b in &state.holders[i + 1..] {
                if intersect(c, &seat_partition(a), &seat_partition(b)) {
                    problems.push((
                        Invariant::PoolPartition,
                        format!(
                            "version {v}: {} ({:?}) and {} ({:?}) hold intersecting partitions",
                            a.holder_id,
                            seat_partition(a),
                            b.holder_id,
                            seat_partition(b)
                        ),
                    ));
                }
            }
        }
        // 27. One slot a runner: under runner serialization, no two holdings whose runs name
        // one runner (judged by the runs, not by the atoms their seats carry).
        if c.runner_serialization {
            for (i, a) in state.holders.iter().enumerate() {
                let runner = &a.run.runner_name;
                if let Some(b) = state.holders[i + 1..]
                    .iter()
                    .find(|b| !runner.is_empty() && b.run.runner_name == *runner)
                {
                    problems.push((
                        Invariant::PoolRunner,
                        format!(
                            "version {v}: {} and {} both hold on runner {runner} (seats {:?} and {:?})",
                            a.holder_id,
                            b.holder_id,
                            seat_partition(a),
                            seat_partition(b)
                        ),
                    ));
                }
            }
        }
        // 19. Consumer limits.
        for consumer in &c.consumers {
            if let Some(max) = consumer.max_concurrent {
                let n = state
                    .holders
                    .iter()
                    .filter(|h| h.run.repository == consumer.repository)
                    .count();
                if n > max as usize {
                    problems.push((
                        Invariant::PoolConsumer,
                        format!(
                            "version {v}: {} holds {n}, maxConcurrent {max}",
                            consumer.repository
                        ),
                    ));
                }
            }
        }
        // 20. The choice: each new holding, in admission order, on the state as it was before it
        //     (the holdings before, plus those admitted ahead of it in the same write).
        let window = c.affinity_seconds * 1000;
        let mut marks: BTreeMap<String, (String, Millis)> = prev
            .pool
            .as_ref()
            .map(|b| {
                b.affinity
                    .iter()
                    .map(|(k, m)| (k.clone(), (m.resource.clone(), m.at)))
                    .collect()
            })
            .unwrap_or_default();
        let mut holders: Vec<Holder> = state
            .holders
            .iter()
            .filter(|h| prev.holders.iter().any(|p| p.holder_id == h.holder_id))
            .cloned()
            .collect();
        // A holding released in this write was its key's in use until now: the key's mark
        // moves to the write's time (the admitted holdings' `acquiredAt`).
        let released = state
            .last_change
            .as_ref()
            .filter(|c| c.action == leasehold_core::ChangeAction::Release)
            .and_then(|c| prev.holders.iter().find(|p| p.holder_id == c.by))
            .filter(|p| state.holder(&p.holder_id).is_none());
        for h in state
            .holders
            .iter()
            .filter(|h| !prev.holders.iter().any(|p| p.holder_id == h.holder_id))
        {
            let at = h.acquired_at;
            if let Some(seat) = released
                .and_then(|p| p.pool.as_ref())
                .filter(|_| window > 0)
            {
                if let Some(key) = &seat.affinity {
                    marks.insert(key.clone(), (seat.resource.clone(), at));
                }
            }
            marks.retain(|_, (_, t)| at.saturating_sub(*t) <= window && *t <= at);
            // A resource a holding of a key sits on is that key's, in use (the latest admitted
            // of several).
            if window > 0 {
                let mut in_use: Vec<&Holder> = holders
                    .iter()
                    .filter(|x| x.pool.as_ref().is_some_and(|s| s.affinity.is_some()))
                    .collect();
                in_use.sort_by_key(|x| x.acquired_at);
                for x in in_use {
                    let seat = x.pool.as_ref().expect("filtered");
                    marks.insert(
                        seat.affinity.clone().expect("filtered"),
                        (seat.resource.clone(), at),
                    );
                }
            }
            let default = PoolRequest::default();
            let request = self.requests.get(&h.holder_id).unwrap_or(&default);
            let options = eligible(c, state, &holders, request, at);
            let want = expected(c, state, &options, request, &marks, at)
                .map(|i| c.resources[i].name.clone());
            let got = h.pool.as_ref().map(|s| s.resource.clone());
            if got != want {
                problems.push((Invariant::PoolChoice, format!("version {v}: {} was given {:?}; the precedence table names {:?} (eligible {:?})", h.holder_id, got, want, options.iter().map(|&i| &c.resources[i].name).collect::<Vec<_>>())));
            }
            if let (Some(key), Some(r), true) = (&request.affinity, &got, window > 0) {
                marks.insert(key.clone(), (r.clone(), at));
            }
            holders.push(h.clone());
        }
        // 21. No live waiter fits a free slot for longer than a poll once faults are over.
        let mut fitting = Vec::new();
        if faults_over {
            let mut blocked: Vec<Option<Vec<String>>> = Vec::new();
            let in_flight = state.holders.len() as u32;
            let cap = leasehold_core::pool_capacity(c);
            for (position, q) in state.queue.iter().enumerate() {
                let p = entry_partition(c, q);
                let default = PoolRequest::default();
                let request = q.pool.as_ref().unwrap_or(&default);
                let consumer_full = c.consumers.iter().any(|k| {
                    k.repository == q.run.repository
                        && k.max_concurrent.is_some_and(|m| {
                            state
                                .holders
                                .iter()
                                .filter(|h| h.run.repository == k.repository)
                                .count()
                                >= m as usize
                        })
                });
                let fits = in_flight < cap
                    && !consumer_full
                    && !state
                        .holders
                        .iter()
                        .any(|h| intersect(c, &seat_partition(h), &p))
                    && !blocked.iter().any(|b| intersect(c, b, &p))
                    && !eligible(c, state, &state.holders, request, now).is_empty();
                if fits {
                    fitting.push((
                        (q.holder_id.clone(), q.nonce.clone()),
                        self.poll_bound(position, cap),
                    ));
                    // Only the first fitting waiter is owed the slot (it may take the last one).
                    break;
                }
                blocked.push(p);
            }
        }
        self.fit_since
            .retain(|k, _| fitting.iter().any(|(f, _)| f == k));
        for (k, bound) in fitting {
            if !live(&k.0, &k.1) {
                self.fit_since.remove(&k);
                continue;
            }
            let since = *self.fit_since.entry(k.clone()).or_insert(now);
            if now.saturating_sub(since) > bound {
                problems.push((Invariant::PoolIdle, format!("version {v}: {} has fitted a free slot since {} ms before, longer than its poll ({bound} ms)", k.0, now - since)));
            }
        }
        problems
    }

    /// The longest a waiter at `position` sleeps between polls (`policy/poll.rs`: spaced by
    /// its place, at most two minutes, plus a quarter of jitter), and the slack.
    pub fn poll_bound(&self, position: usize, capacity: u32) -> Millis {
        let rank = position as u64 / u64::from(capacity.max(1)) + 1;
        let max = leasehold_core::limits::MAX_POLL_MS.max(self.poll_max_ms);
        let base = self.poll_max_ms.saturating_mul(rank).min(max);
        base + base / 4 + self.slack_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_draw_is_a_valid_pool_and_some_seeds_are_pools() {
        let mut pools = 0;
        for seed in 0..400 {
            if let Some(p) = PoolParams::draw(seed, true, 4, None) {
                pools += 1;
                assert_eq!(p.runs.len(), 4);
                assert!(p.config.invalid.is_none());
            }
            assert!(PoolParams::draw(seed, false, 4, None).is_none());
        }
        assert!((60..140).contains(&pools), "{pools} of 400");
    }
}
