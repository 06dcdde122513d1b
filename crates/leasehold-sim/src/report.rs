//! Counters over simulated seeds, and the runner's deterministic report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::fault::Fault;
use crate::types::Violation;

/// What was simulated. Sums are order-independent, so counters from parallel workers add up to
/// the same totals whatever the scheduling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub seeds: u64,
    /// Workflow runs (jobs) and their attempts (first runs plus reruns).
    pub runs: u64,
    pub attempts: u64,
    /// Lock operations started.
    pub acquires: u64,
    pub releases: u64,
    pub cleanups: u64,
    /// The guards' renewals (their verifications included).
    pub renews: u64,
    /// Finished operations by kind and result word (`acquire acquired`, `release noop`, …).
    pub results: BTreeMap<String, u64>,
    /// Client operations: events fed to a core operation (start, reply, timer), each one step.
    pub client_ops: u64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub creates: u64,
    pub not_modified: u64,
    /// 409/422 answers from the compare-and-swap itself.
    pub conflicts: u64,
    pub commits: u64,
    pub polls: u64,
    /// Cancels that came while an acquire's request was in flight (told with its answer).
    pub cancelled_replies: u64,
    /// Acquires that finished `acquired` with the lease's local deadline already past.
    pub acquired_past_deadline: u64,
    /// Seeds whose lock config sets a lease (a `lease` block).
    pub leased_seeds: u64,
    /// Seeds whose lock is a resource pool (`crate::pool`).
    pub pool_seeds: u64,
    /// A pool's usage readings sent (`report-usage` runs started).
    pub usage_reports: u64,
    /// What the guards did (see [`GuardCounters`]).
    pub guard: GuardCounters,
    /// What the scheduled reapers did (see [`ReaperCounters`]).
    pub reaper: ReaperCounters,
    /// What the lifecycle after release did (see [`LifecycleCounters`]).
    pub lifecycle: LifecycleCounters,
    /// What the claim clients did (see [`ClaimCounters`]).
    pub claims: ClaimCounters,
    pub faults: [u64; Fault::COUNT],
    pub events: u64,
    /// Simulated time, summed over seeds, and the longest seed.
    pub sim_ms: u64,
    pub max_sim_ms: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.claims.add(&o.claims);
        self.seeds += o.seeds;
        self.runs += o.runs;
        self.attempts += o.attempts;
        self.acquires += o.acquires;
        self.releases += o.releases;
        self.cleanups += o.cleanups;
        self.renews += o.renews;
        for (k, n) in &o.results {
            *self.results.entry(k.clone()).or_default() += n;
        }
        self.client_ops += o.client_ops;
        self.requests += o.requests;
        self.reads += o.reads;
        self.writes += o.writes;
        self.creates += o.creates;
        self.not_modified += o.not_modified;
        self.conflicts += o.conflicts;
        self.commits += o.commits;
        self.polls += o.polls;
        self.cancelled_replies += o.cancelled_replies;
        self.acquired_past_deadline += o.acquired_past_deadline;
        self.leased_seeds += o.leased_seeds;
        self.pool_seeds += o.pool_seeds;
        self.usage_reports += o.usage_reports;
        self.guard.add(&o.guard);
        self.reaper.add(&o.reaper);
        self.lifecycle.add(&o.lifecycle);
        for (a, b) in self.faults.iter_mut().zip(o.faults) {
            *a += b;
        }
        self.events += o.events;
        self.sim_ms += o.sim_ms;
        self.max_sim_ms = self.max_sim_ms.max(o.max_sim_ms);
    }
}

/// What the guards of the jobs that acquired did: the paths of the guard contract a run
/// exercised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardCounters {
    /// Guard steps started (one per acquired job attempt), by how the guard starts: verifying the
    /// holding with a renewal first (the guard action, `actions/lib/guard.mjs`), or driving
    /// `guard::decide` from acquire's lease at once (an embedder, renewing with `if-due`).
    pub verifying: u64,
    pub from_acquire: u64,
    /// The verification did not end `renewed`: the work never ran (exit 14, not-held).
    pub not_held: u64,
    /// The guard never started the work: its proven lease's deadline had already passed.
    pub no_work: u64,
    /// Renewals of the guard loop (the verification not included) that the guard acted on, by
    /// result.
    pub renewed: u64,
    pub not_due: u64,
    pub lost: u64,
    pub failed: u64,
    /// Renewals (the verification included) still running when the guard stopped waiting for
    /// them (the race's deadline came, the work ended or was killed): their answer was ignored.
    pub ignored: u64,
    /// `renewed` at the ceiling: the lease could not be extended.
    pub at_ceiling: u64,
    /// The guard's kills: at the local deadline (less the kill grace) without a proven renewal,
    /// and on a renewal that proved the holding lost.
    pub kills_deadline: u64,
    pub kills_lost: u64,
    /// Kills at the deadline that came more than a second late: the guard re-checked its deadline
    /// on resuming from a pause.
    pub kills_after_pause: u64,
    /// The work ended on its own (the child exited).
    pub work_done: u64,
    /// The most renewals one guard acted on.
    pub max_renewals: u64,
    /// Holdings another job removed as expired (past `expiresAt` + grace + skew).
    pub expired: u64,
    /// Expiry sweeps: a later job that came once every job had ended with an abandoned holding
    /// still in the lock.
    pub sweeps: u64,
}

impl GuardCounters {
    pub fn add(&mut self, o: &GuardCounters) {
        self.verifying += o.verifying;
        self.from_acquire += o.from_acquire;
        self.not_held += o.not_held;
        self.no_work += o.no_work;
        self.renewed += o.renewed;
        self.not_due += o.not_due;
        self.lost += o.lost;
        self.failed += o.failed;
        self.ignored += o.ignored;
        self.at_ceiling += o.at_ceiling;
        self.kills_deadline += o.kills_deadline;
        self.kills_lost += o.kills_lost;
        self.kills_after_pause += o.kills_after_pause;
        self.work_done += o.work_done;
        self.max_renewals = self.max_renewals.max(o.max_renewals);
        self.expired += o.expired;
        self.sweeps += o.sweeps;
    }
}

/// The Actions API requests, by kind (`getRunAttempt`, `getJob`, `listJobs`).
pub const ACTIONS_KINDS: [&str; 3] = ["getRunAttempt", "getJob", "listJobs"];

/// What the scheduled reapers did, and the Actions API they asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReaperCounters {
    /// Seeds with a scheduled reaper, and those whose lock config says `"reaperRenews": true`.
    pub seeds: u64,
    pub renews_seeds: u64,
    /// Reap runs started; of them, started while another reap run was still running; schedule
    /// ticks that fired more than a minute late.
    pub runs: u64,
    pub overlapping: u64,
    pub late_ticks: u64,
    /// Failed reaps by error code.
    pub failures: BTreeMap<String, u64>,
    /// Entries removed by committed reap writes, by place and reason.
    pub removed_holdings: BTreeMap<String, u64>,
    pub removed_queue: BTreeMap<String, u64>,
    /// Holdings removed as expired by acquires (every other job), for comparison.
    pub acquire_expired: u64,
    /// Holdings the reapers renewed (committed), and of them those whose attempt GitHub had
    /// completed by the time the renewal committed (the answer went out of date).
    pub renewed: u64,
    pub renewed_outdated: u64,
    /// Claims of completed attempts that left the lock (by a reap, a rerun, an acquire) after
    /// they could be reaped (completed, faults stopped), and the longest any of them stayed from
    /// then, in thousandths of the seed's reaper bound (invariant 6).
    pub reapable_removed: u64,
    pub max_reap_wait_permille: u64,
    /// Over every expiry (by reapers and acquires): the least time between the instant its lease
    /// could be taken (by GitHub's true clock) and its commit, and the most clock-drift slack
    /// invariant 10 allowed one.
    pub expiry_min_margin_ms: Option<u64>,
    pub expiry_max_slack_ms: u64,
    /// Entries finished reaps kept, by reason (`active`, `unverified`, `unchecked`), and the
    /// entries they judged by job id and by run attempt.
    pub kept: BTreeMap<String, u64>,
    pub judged_by_job: u64,
    pub judged_by_run: u64,
    /// Actions API requests sent (by reapers, and by acquires recording their job id), by kind.
    pub actions_requests: [u64; 3],
    /// What GitHub's view answered to those that reached it unrefused: `completed`,
    /// `in_progress`, `queued`, or 404 for an unknown run, attempt or job.
    pub actions_answers: BTreeMap<String, u64>,
}

impl ReaperCounters {
    pub fn add(&mut self, o: &ReaperCounters) {
        self.seeds += o.seeds;
        self.renews_seeds += o.renews_seeds;
        self.runs += o.runs;
        self.overlapping += o.overlapping;
        self.late_ticks += o.late_ticks;
        let sum = |a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>| {
            for (k, n) in b {
                *a.entry(k.clone()).or_default() += n;
            }
        };
        sum(&mut self.failures, &o.failures);
        sum(&mut self.removed_holdings, &o.removed_holdings);
        sum(&mut self.removed_queue, &o.removed_queue);
        sum(&mut self.kept, &o.kept);
        sum(&mut self.actions_answers, &o.actions_answers);
        self.acquire_expired += o.acquire_expired;
        self.renewed += o.renewed;
        self.renewed_outdated += o.renewed_outdated;
        self.reapable_removed += o.reapable_removed;
        self.max_reap_wait_permille = self.max_reap_wait_permille.max(o.max_reap_wait_permille);
        self.expiry_min_margin_ms = match (self.expiry_min_margin_ms, o.expiry_min_margin_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.expiry_max_slack_ms = self.expiry_max_slack_ms.max(o.expiry_max_slack_ms);
        self.judged_by_job += o.judged_by_job;
        self.judged_by_run += o.judged_by_run;
        for (a, b) in self.actions_requests.iter_mut().zip(o.actions_requests) {
            *a += b;
        }
    }
}

fn list(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn secs(ms: u64) -> String {
    format!("{}.{:03} s", ms / 1_000, ms % 1_000)
}

/// The report of a batch of seeds. Deterministic: the same seeds give the same text.
/// What the claim clients did, over the seeds that run them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimCounters {
    pub seeds: u64,
    pub agents: u64,
    /// Claim operations started, by verb.
    pub ops: BTreeMap<String, u64>,
    /// Finished claim operations by verb and status.
    pub results: BTreeMap<String, u64>,
    pub steps: u64,
    pub requests: u64,
    pub update_refs: u64,
    /// Ref moves that landed, and beliefs the holders took.
    pub transitions: u64,
    pub beliefs: u64,
    /// Claims and renewals that finished after their local deadline (no belief).
    pub beliefs_past_deadline: u64,
    pub faults: BTreeMap<String, u64>,
    pub pauses: u64,
    pub crashes: u64,
    pub events: u64,
    /// Claim guards started (their finishes are in `results`, as `guard <reason>`), the ones
    /// that took in a proven loss, and releases of a guarded claim by hand.
    pub guards: u64,
    pub guard_lost: u64,
    pub stray_releases: u64,
}

impl ClaimCounters {
    pub fn add(&mut self, o: &ClaimCounters) {
        self.seeds += o.seeds;
        self.agents += o.agents;
        for (k, n) in &o.ops {
            *self.ops.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.results {
            *self.results.entry(k.clone()).or_default() += n;
        }
        self.steps += o.steps;
        self.requests += o.requests;
        self.update_refs += o.update_refs;
        self.transitions += o.transitions;
        self.beliefs += o.beliefs;
        self.beliefs_past_deadline += o.beliefs_past_deadline;
        for (k, n) in &o.faults {
            *self.faults.entry(k.clone()).or_default() += n;
        }
        self.pauses += o.pauses;
        self.crashes += o.crashes;
        self.events += o.events;
        self.guards += o.guards;
        self.guard_lost += o.guard_lost;
        self.stray_releases += o.stray_releases;
    }
}

pub fn render(c: &Counters, violations: &[Violation], replay: &dyn Fn(u64) -> String) -> String {
    let mut s = String::new();
    let results: Vec<String> = c.results.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let _ = writeln!(s, "seeds: {}", c.seeds);
    let _ = writeln!(s, "jobs: {} runs, {} attempts", c.runs, c.attempts);
    let _ = writeln!(
        s,
        "lock operations: {} (acquire {}, guard renewals {}, release {}, post-step cleanup {})",
        c.acquires + c.renews + c.releases + c.cleanups,
        c.acquires,
        c.renews,
        c.releases,
        c.cleanups
    );
    let _ = writeln!(s, "results: {}", results.join(", "));
    let _ = writeln!(
        s,
        "acquired with the lease's local deadline already past: {}",
        c.acquired_past_deadline
    );
    let g = &c.guard;
    let _ = writeln!(
        s,
        "guards: {} ({} verifying first, {} from acquire's lease); lock config with a lease in {} seeds; the lock is a resource pool in {} seeds ({} usage readings sent)",
        g.verifying + g.from_acquire,
        g.verifying,
        g.from_acquire,
        c.leased_seeds,
        c.pool_seeds,
        c.usage_reports
    );
    let l = &c.lifecycle;
    let _ = writeln!(
        s,
        "lifecycle: on in {} seeds; reservations committed: cooldowns {} (ended {}), quarantines {} (reclaimed on their runner {}, recovered {}); incidents {} (ended {}); releases with a degraded report {}",
        l.seeds, l.cooldowns, l.cooldowns_ended, l.quarantines, l.reclaimed, l.recovered, l.incidents, l.incidents_ended, l.degraded
    );
    let o = &l.operator;
    let _ = writeln!(
        s,
        "operator: recover {} (recovered {}), recover-incident {} (incident-recovered {}; admissions after an incident ended {}); told a wrong id or no confirmation {} (all refused, nothing written); other failures {}",
        o.recover, o.recovered, o.recover_incident, o.incident_recovered, o.admitted_after_end, o.refused, o.failed
    );
    let _ = writeln!(
        s,
        "  renewals acted on: renewed {} (at the ceiling {}), not-due {}, lost {}, failed {}; answers ignored (the guard no longer waited) {}; most in one guard {}",
        g.renewed, g.at_ceiling, g.not_due, g.lost, g.failed, g.ignored, g.max_renewals
    );
    let _ = writeln!(
        s,
        "  work: ended on its own {}, killed at the local deadline {} (of which late, on resuming from a pause, {}), killed on lost {}, never started (not held {}, deadline already past {})",
        g.work_done, g.kills_deadline, g.kills_after_pause, g.kills_lost, g.not_held, g.no_work
    );
    let _ = writeln!(
        s,
        "  holdings removed by expiry: {}; expiry sweeps (a later job after abandoned holdings) {}",
        g.expired, g.sweeps
    );
    let r = &c.reaper;
    let reaped = c.results.get("reap reaped").copied().unwrap_or(0);
    let failed = c.results.get("reap failed").copied().unwrap_or(0);
    let _ = writeln!(
        s,
        "reaper: scheduled in {} seeds (reaperRenews in {}); reap runs {} (overlapping another {}, ticks over a minute late {}): reaped {reaped}, failed {failed} ({}), crashed {}",
        r.seeds,
        r.renews_seeds,
        r.runs,
        r.overlapping,
        r.late_ticks,
        list(&r.failures),
        r.runs.saturating_sub(reaped + failed)
    );
    let _ = writeln!(
        s,
        "  removed by reaps: holdings {} ({}), queue entries {} ({}); holdings removed as expired by acquires {}; every expiry committed at least {} ms after its lease could be taken by GitHub's true clock (drift slack allowed at most {} ms)",
        r.removed_holdings.values().sum::<u64>(),
        list(&r.removed_holdings),
        r.removed_queue.values().sum::<u64>(),
        list(&r.removed_queue),
        r.acquire_expired,
        r.expiry_min_margin_ms.map_or("-".into(), |m| m.to_string()),
        r.expiry_max_slack_ms
    );
    let _ = writeln!(
        s,
        "  renewed by reaps {} (the attempt completed by the time the renewal committed {}); kept by finished reaps {} ({}); entries judged by job id {}, by run attempt {}",
        r.renewed,
        r.renewed_outdated,
        r.kept.values().sum::<u64>(),
        list(&r.kept),
        r.judged_by_job,
        r.judged_by_run
    );
    let _ = writeln!(
        s,
        "  claims of completed attempts gone after they could be reaped {}; the longest stayed {}.{}% of its reaper bound",
        r.reapable_removed,
        r.max_reap_wait_permille / 10,
        r.max_reap_wait_permille % 10
    );
    let kinds: Vec<String> = ACTIONS_KINDS
        .iter()
        .zip(r.actions_requests)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        s,
        "  Actions API requests {} ({}); answered by GitHub's view: {}",
        r.actions_requests.iter().sum::<u64>(),
        kinds.join(", "),
        list(&r.actions_answers)
    );
    let _ = writeln!(s, "client operations (core steps): {}", c.client_ops);
    let _ = writeln!(
        s,
        "requests: {} (reads {}, of which 304 {}; writes {}; git objects {}); commits {}; compare-and-swap conflicts {}; polls {}; cancels told with an answer {}",
        c.requests, c.reads, c.not_modified, c.writes, c.creates, c.commits, c.conflicts, c.polls, c.cancelled_replies
    );
    let total: u64 = c.faults.iter().sum();
    let _ = writeln!(s, "faults injected: {total}");
    for f in Fault::ALL {
        let _ = writeln!(s, "  {:<44} {}", f.name(), c.faults[f.index()]);
    }
    let _ = writeln!(
        s,
        "simulated time: {} in all, longest seed {}; events {}",
        secs(c.sim_ms),
        secs(c.max_sim_ms),
        c.events
    );
    let k = &c.claims;
    if k.seeds > 0 {
        let _ = writeln!(
            s,
            "claims: in {} seeds, {} agents; operations {} ({}); core steps {}; events {}",
            k.seeds,
            k.agents,
            k.ops.values().sum::<u64>(),
            list(&k.ops),
            k.steps,
            k.events
        );
        let _ = writeln!(s, "  results: {}", list(&k.results));
        let _ = writeln!(
            s,
            "  claim guards started: {}; a renewal proved the claim lost {}; claims released by hand under a running work {}",
            k.guards, k.guard_lost, k.stray_releases
        );
        let _ = writeln!(
            s,
            "  requests {} (updateRefs {}); ref moves landed {}; beliefs taken {} (finished past the local deadline, no belief: {}); pauses {}, crashes {}; faults {} ({})",
            k.requests,
            k.update_refs,
            k.transitions,
            k.beliefs,
            k.beliefs_past_deadline,
            k.pauses,
            k.crashes,
            k.faults.values().sum::<u64>(),
            list(&k.faults)
        );
    }
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for v in violations {
        *by.entry(v.invariant.label()).or_default() += 1;
    }
    let by: Vec<String> = by.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    let _ = writeln!(
        s,
        "violations: {}{}",
        violations.len(),
        if by.is_empty() {
            String::new()
        } else {
            format!(" ({})", by.join(", "))
        }
    );
    for v in violations.iter().take(20) {
        let _ = writeln!(s, "  {}", v.line());
        let _ = writeln!(s, "    replay: {}", replay(v.seed));
    }
    if violations.len() > 20 {
        let _ = writeln!(s, "  … and {} more", violations.len() - 20);
    }
    s
}

/// What the lifecycle after release did, over the seeds that turn it on (`crate::lifecycle`):
/// reservations and incidents as they appeared in committed versions, and how they left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LifecycleCounters {
    pub seeds: u64,
    pub cooldowns: u64,
    pub cooldowns_ended: u64,
    pub quarantines: u64,
    pub reclaimed: u64,
    pub recovered: u64,
    pub incidents: u64,
    /// Incidents ended by an operator's confirmed recover-incident.
    pub incidents_ended: u64,
    /// The simulated operator's runs (driver side): started, and how they finished.
    pub operator: OperatorCounters,
    /// Releases that finished with `report-degraded` (their run gave an invalid report).
    pub degraded: u64,
}

impl LifecycleCounters {
    pub fn add(&mut self, o: &LifecycleCounters) {
        self.seeds += o.seeds;
        self.cooldowns += o.cooldowns;
        self.cooldowns_ended += o.cooldowns_ended;
        self.quarantines += o.quarantines;
        self.reclaimed += o.reclaimed;
        self.recovered += o.recovered;
        self.incidents += o.incidents;
        self.incidents_ended += o.incidents_ended;
        self.operator.add(&o.operator);
        self.degraded += o.degraded;
    }
}

/// What the simulated operator did: its runs, by what it was told and how they finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperatorCounters {
    /// `recover` runs, and those that finished `recovered`.
    pub recover: u64,
    pub recovered: u64,
    /// `recover-incident` runs, and those that finished `incident-recovered`.
    pub recover_incident: u64,
    pub incident_recovered: u64,
    /// Runs told a wrong id or no confirmation (each must finish failed, having written
    /// nothing), and the other runs that failed (the quarantine was reclaimed meanwhile, faults).
    pub refused: u64,
    pub failed: u64,
    /// Admissions after an incident ended (in the write that ended it, or later).
    pub admitted_after_end: u64,
}

impl OperatorCounters {
    pub fn add(&mut self, o: &OperatorCounters) {
        self.recover += o.recover;
        self.recovered += o.recovered;
        self.recover_incident += o.recover_incident;
        self.incident_recovered += o.incident_recovered;
        self.refused += o.refused;
        self.failed += o.failed;
        self.admitted_after_end += o.admitted_after_end;
    }
}
