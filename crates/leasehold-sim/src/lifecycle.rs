//! The resource lifecycle after release (docs/lifecycle.md) in the simulation: which seeds turn
//! it on and how (drawn on a generator of their own, so every other draw of a seed is what it
//! was without it), the cleanup report each run's release gives, and the checker's own reading
//! of the rules, invariants 22 to 26 (crate docs): it is fed the versions before and after a
//! commit and who wrote it, and never calls the core's lifecycle code.

use leasehold_core::lifecycle::{ReservationKind, LIFECYCLE_SCHEMA};
use leasehold_core::time::Millis;
use leasehold_core::{Holder, LockState};

use crate::report::LifecycleCounters;
use crate::rng::SimRng;
use crate::types::Invariant;

/// The report a run's release gives (`cleanup`, `health`, `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// confirmed, healthy, `completed`: a cooldown.
    Confirmed,
    /// unknown, healthy, `failed`: a quarantine.
    Unknown,
    /// No report at all: a quarantine.
    Missing,
    /// `cleanup: maybe`: degraded to a quarantine, the step fails.
    InvalidWord,
    /// confirmed with blocked: a contradiction, degraded to a quarantine.
    Contradiction,
    /// A reason the lock does not allow: degraded.
    UnknownReason,
    /// A value with a credential's shape: degraded, nothing of it kept.
    CredentialShaped,
    /// unknown, blocked, `account-blocked`: a quarantine and the lock's incident, which admits
    /// nobody until an operator recovers it.
    Blocked,
}

impl ReportKind {
    /// The release inputs this report is.
    pub fn inputs(self) -> Vec<(&'static str, &'static str)> {
        match self {
            ReportKind::Confirmed => vec![
                ("cleanup", "confirmed"),
                ("health", "healthy"),
                ("reason", "completed"),
            ],
            ReportKind::Unknown => vec![
                ("cleanup", "unknown"),
                ("health", "healthy"),
                ("reason", "failed"),
            ],
            ReportKind::Missing => vec![],
            ReportKind::InvalidWord => vec![("cleanup", "maybe")],
            ReportKind::Contradiction => vec![("cleanup", "confirmed"), ("health", "blocked")],
            ReportKind::UnknownReason => {
                vec![("cleanup", "confirmed"), ("reason", "no-such-reason")]
            }
            ReportKind::Blocked => vec![
                ("cleanup", "unknown"),
                ("health", "blocked"),
                ("reason", "account-blocked"),
            ],
            ReportKind::CredentialShaped => {
                vec![
                    ("cleanup", "confirmed"),
                    ("reason", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"),
                ]
            }
        }
    }

    /// Whether the core must refuse it (`report-degraded`: the release step fails).
    pub fn degrades(self) -> bool {
        !matches!(
            self,
            ReportKind::Confirmed | ReportKind::Unknown | ReportKind::Missing | ReportKind::Blocked
        )
    }
}

/// A lifecycle seed's draws.
#[derive(Clone, Debug)]
pub struct LifecycleParams {
    /// `cooldownSeconds` (0: a confirmed release frees at once).
    pub cooldown_s: u64,
    /// The jobs share this many runners (run `r` on `sim-runner-<r % runners>`), so a waiter
    /// may be on the runner a quarantine was left on.
    pub runners: usize,
    /// Each run's report (its reruns give the same).
    pub reports: Vec<ReportKind>,
}

/// The generator of a seed's lifecycle draws: apart from the seed's own.
const LIFECYCLE_STREAM: u64 = 0x6c69_6665_6379_636c;

impl LifecycleParams {
    /// One seed in three that has a config file and is no pool turns the lifecycle on.
    pub fn draw(seed: u64, config_file: bool, pool: bool, runs: usize) -> Option<Self> {
        let mut rng = SimRng::new(seed ^ LIFECYCLE_STREAM);
        if !config_file || pool || rng.below(3) != 0 {
            return None;
        }
        let cooldown_s = match rng.below(4) {
            0 => 0,
            1 => rng.between(1, 5),
            _ => rng.between(5, 90),
        };
        let runners = rng.between(1, 3) as usize;
        // One lifecycle seed in four has a run whose resource ends blocked.
        let blocked = rng.below(4) == 0;
        let mut reports: Vec<ReportKind> = (0..runs)
            .map(|_| match rng.below(20) {
                0..=9 => ReportKind::Confirmed,
                10..=12 => ReportKind::Unknown,
                13..=15 => ReportKind::Missing,
                16 => ReportKind::InvalidWord,
                17 => ReportKind::Contradiction,
                18 => ReportKind::UnknownReason,
                _ => ReportKind::CredentialShaped,
            })
            .collect();
        if blocked {
            let i = rng.below(runs as u64) as usize;
            reports[i] = ReportKind::Blocked;
        }
        Some(LifecycleParams {
            cooldown_s,
            runners,
            reports,
        })
    }

    /// Whether a run's release may raise the incident.
    pub fn incidents(&self) -> bool {
        self.reports.contains(&ReportKind::Blocked)
    }

    /// The config's `lifecycle` block.
    pub fn block(&self) -> String {
        format!("{{\"cooldownSeconds\": {}}}", self.cooldown_s)
    }

    /// The runner run `run` works on.
    pub fn runner(&self, run: usize) -> String {
        format!("sim-runner-{}", run % self.runners)
    }

    /// The longest a slot stays taken after its holder left and nobody reclaims it: a
    /// cooldown's end (a quarantine's is the seed's end).
    pub fn cooldown_ms(&self) -> Millis {
        self.cooldown_s * 1_000
    }
}

/// What a simulated operator's run was told to do (`recover` or `recover-incident`), from a
/// state it read: sometimes with a wrong id or without the confirmation, which the core must
/// refuse without writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperatorAct {
    /// `operation: recover`, this `reservation-id`, `resource-safe` as given.
    Quarantine { id: String, confirmed: bool },
    /// `operation: recover-incident`, this `incident-id` or none, `confirmed` as given.
    Incident { id: Option<String>, confirmed: bool },
}

/// The suffix a wrong id gets: no id the core makes ends with it.
pub const WRONG_ID: &str = "-stale";

impl OperatorAct {
    /// The operation's inputs.
    pub fn inputs(&self) -> Vec<(&'static str, String)> {
        match self {
            OperatorAct::Quarantine { id, confirmed } => vec![
                ("operation", "recover".into()),
                ("reservation-id", id.clone()),
                ("resource-safe", confirmed.to_string()),
            ],
            OperatorAct::Incident { id, confirmed } => {
                let mut v = vec![
                    ("operation", "recover-incident".into()),
                    ("confirmed", confirmed.to_string()),
                ];
                if let Some(id) = id {
                    v.push(("incident-id", id.clone()));
                }
                v
            }
        }
    }

    /// Whether the core must refuse it whatever the state: unconfirmed, or a wrong id.
    pub fn refused(&self) -> bool {
        match self {
            OperatorAct::Quarantine { id, confirmed } => !confirmed || id.ends_with(WRONG_ID),
            OperatorAct::Incident { id, confirmed } => {
                !confirmed || id.as_ref().is_some_and(|i| i.ends_with(WRONG_ID))
            }
        }
    }
}

/// Who wrote a version, as far as the lifecycle's rules care.
pub enum Writer<'a> {
    /// A job's operation (acquire, release, renew, the post step's cleanup).
    Job,
    /// A reaper's write, sent at `sent_at`; `completed(run_id, attempt)` is when GitHub's view
    /// had that attempt completed, if it did.
    Reaper {
        sent_at: Millis,
        completed: &'a dyn Fn(u64, u32) -> Option<Millis>,
    },
    /// An operator's `recover` or `recover-incident`, as it was told.
    Operator(&'a OperatorAct),
}

/// What one commit is checked with.
pub struct Commit<'a> {
    pub v: usize,
    pub prev: &'a LockState,
    pub state: &'a LockState,
    pub capacity: u32,
    /// When it committed (GitHub's true clock).
    pub now: Millis,
    /// How far ahead of GitHub's clock the writer's estimate may have been (invariant 10's
    /// drift slack).
    pub slack: Millis,
    pub writer: Writer<'a>,
    /// The holder id whose own release wrote this version with a confirmed cleanup report, if
    /// any, and the lock's cooldown: that release's slot must be kept until the cooldown ends.
    pub confirmed_release: Option<&'a str>,
    pub cooldown_ms: Millis,
}

/// Holdings granted in this version: a claim (holder id, nonce) that did not hold before.
fn granted<'a>(prev: &LockState, state: &'a LockState) -> Vec<&'a Holder> {
    state
        .holders
        .iter()
        .filter(|h| {
            !prev
                .holders
                .iter()
                .any(|p| p.holder_id == h.holder_id && p.nonce == h.nonce)
        })
        .collect()
}

fn short(holder_id: &str) -> &str {
    holder_id.rsplit_once(':').map_or(holder_id, |(_, s)| s)
}

/// Invariants 22 to 26 over one commit; what it saw is added to `seen`.
pub fn check(c: &Commit<'_>, seen: &mut LifecycleCounters) -> Vec<(Invariant, String)> {
    let (v, prev, state) = (c.v, c.prev, c.state);
    let mut problems = Vec::new();
    if state.schema < LIFECYCLE_SCHEMA {
        return problems;
    }
    for r in state
        .reservations
        .iter()
        .filter(|r| !prev.reservations.iter().any(|p| p.id == r.id))
    {
        match r.kind {
            ReservationKind::Cooldown => seen.cooldowns += 1,
            ReservationKind::Quarantine => seen.quarantines += 1,
        }
    }
    if state.incident.is_some() && prev.incident.is_none() {
        seen.incidents += 1;
    }
    // 26: an operator's write that must be refused commits nothing ...
    if let Writer::Operator(act) = &c.writer {
        if act.refused() {
            problems.push((
                Invariant::OperatorRecovery,
                format!("version {v} was written by a recovery the core must refuse ({act:?})"),
            ));
        }
    }
    // ... and an incident ends only by a confirmed recover-incident naming it or none.
    if let Some(i) = &prev.incident {
        if state.incident.as_ref().is_none_or(|s| s.id != i.id) {
            match &c.writer {
                Writer::Operator(OperatorAct::Incident {
                    id,
                    confirmed: true,
                }) if id.as_ref().is_none_or(|id| *id == i.id) => {
                    seen.incidents_ended += 1;
                }
                Writer::Operator(act) => problems.push((
                    Invariant::OperatorRecovery,
                    format!(
                        "version {v} ended incident {} by an operator told {act:?}",
                        i.id
                    ),
                )),
                _ => problems.push((
                    Invariant::OperatorRecovery,
                    format!(
                        "version {v} ended incident {} without an operator's recover-incident",
                        i.id
                    ),
                )),
            }
        }
    }
    // 22: holders and reservations together within the capacity.
    let taken = state.holders.len() + state.reservations.len();
    if taken > c.capacity as usize {
        problems.push((
            Invariant::LifecycleCapacity,
            format!(
                "version {v} has {} holders and {} reservations ({}), capacity {}",
                state.holders.len(),
                state.reservations.len(),
                state
                    .reservations
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                c.capacity
            ),
        ));
    }
    let grants = granted(prev, state);
    // Admissions resume once an incident has ended (in the write that ends it, or later).
    if state.incident.is_none() && seen.incidents_ended > 0 {
        seen.operator.admitted_after_end += grants
            .iter()
            .filter(|h| !prev.holders.iter().any(|p| p.holder_id == h.holder_id))
            .count() as u64;
    }
    // 23: nobody admitted while an incident stands (a write that ends it may admit). A rerun
    //     taking over its own holder id's holding is that holder finishing, not an admission.
    if let Some(incident) = &state.incident {
        let admitted = grants
            .iter()
            .find(|h| !prev.holders.iter().any(|p| p.holder_id == h.holder_id));
        if let Some(h) = admitted {
            problems.push((
                Invariant::IncidentAdmission,
                format!(
                    "version {v} grants {} (fence {}) while incident {} stands",
                    short(&h.holder_id),
                    h.fence,
                    incident.id
                ),
            ));
        }
    }
    // 24: a quarantine leaves only by recovery, reclaim on its own runner, or the reaper's
    //     proof that its run is over (the last two: turned into a cooldown).
    let mut reclaimers: Vec<&Holder> = grants.clone();
    for q in prev
        .reservations
        .iter()
        .filter(|r| r.kind == ReservationKind::Quarantine)
    {
        if state.reservations.iter().any(|r| r.id == q.id) {
            continue;
        }
        // A recovery turns it into a cooldown (none with a cooldown of 0, or one already
        // over); only an operator's write or the reaper's, on proof, may.
        let how = match &c.writer {
            // 26: an operator's recovery names it, confirmed, and keeps the slot as a cooldown
            //     of the same holding.
            Writer::Operator(OperatorAct::Quarantine {
                id,
                confirmed: true,
            }) if *id == q.id => {
                let cooled = state.reservations.iter().any(|r| {
                    r.kind == ReservationKind::Cooldown
                        && r.holder_id == q.holder_id
                        && r.fence == q.fence
                });
                if cooled {
                    seen.recovered += 1;
                } else {
                    problems.push((
                        Invariant::OperatorRecovery,
                        format!(
                            "version {v}: the recovery of quarantine {} of {} left no cooldown of its holding",
                            q.id,
                            short(&q.holder_id)
                        ),
                    ));
                }
                Ok("recovered")
            }
            Writer::Operator(act @ OperatorAct::Quarantine { .. }) => {
                Err(format!("an operator told {act:?} freed it"))
            }
            Writer::Reaper { sent_at, completed } => match completed(q.run.run_id, q.run.run_attempt) {
                Some(done) if done <= *sent_at => {
                    seen.recovered += 1;
                    Ok("recovered by the reaper")
                }
                Some(done) => Err(format!(
                    "the reaper freed it with a write sent at {sent_at}, before GitHub completed run {} attempt {} (at {done})",
                    q.run.run_id, q.run.run_attempt
                )),
                None => Err(format!(
                    "the reaper freed it while run {} attempt {} was not completed in GitHub's view",
                    q.run.run_id, q.run.run_attempt
                )),
            },
            // The write that ends an incident admits as a job's does (a reclaim included).
            Writer::Job | Writer::Operator(OperatorAct::Incident { .. }) => {
                let runner = q.run.runner_name.as_str();
                match reclaimers
                    .iter()
                    .position(|h| !runner.is_empty() && h.run.runner_name == runner)
                {
                    Some(i) => {
                        reclaimers.remove(i);
                        seen.reclaimed += 1;
                        Ok("reclaimed")
                    }
                    None => Err(match grants.first() {
                        Some(h) => format!(
                            "a job's write freed it and admitted {} on runner {:?}, not the quarantine's {runner:?}",
                            short(&h.holder_id),
                            h.run.runner_name
                        ),
                        None => "a job's write freed it without a reclaim on its runner".into(),
                    }),
                }
            }
        };
        if let Err(why) = how {
            problems.push((
                Invariant::QuarantineRelease,
                format!(
                    "version {v}: quarantine {} of {} left: {why}",
                    q.id,
                    short(&q.holder_id)
                ),
            ));
        }
    }
    // 25: a confirmed release keeps its slot for the cooldown (a cooldown freed in the very
    //     write that made it never shows in a version) ...
    //     Only where the version it replaced was under the lifecycle already and records it
    //     (the release judges by that record when it cannot read the config).
    let recorded = prev.schema >= LIFECYCLE_SCHEMA
        && prev
            .config
            .as_ref()
            .and_then(|r| r.lifecycle.as_ref())
            .is_some_and(|l| l.cooldown_seconds > 0);
    if let (Some(id), true) = (c.confirmed_release, c.cooldown_ms > 0 && recorded) {
        let left = prev
            .holders
            .iter()
            .find(|h| h.holder_id == id && !state.holders.iter().any(|s| s.holder_id == id));
        if let Some(h) = left {
            let kept = state.reservations.iter().any(|r| {
                r.kind == ReservationKind::Cooldown && r.holder_id == id && r.fence == h.fence
            });
            if !kept {
                problems.push((
                    Invariant::CooldownEnd,
                    format!(
                        "version {v}: {} released with a confirmed cleanup and no cooldown of {} ms keeps its slot",
                        short(id),
                        c.cooldown_ms
                    ),
                ));
            }
        }
    }
    // ... and a cooldown frees no earlier than its end, by GitHub's true clock (less the
    //     writer's drift slack).
    for cd in prev
        .reservations
        .iter()
        .filter(|r| r.kind == ReservationKind::Cooldown)
    {
        if state.reservations.iter().any(|r| r.id == cd.id) {
            continue;
        }
        let end = cd.ends_at.unwrap_or(Millis::MAX);
        seen.cooldowns_ended += 1;
        if c.now + c.slack < end {
            problems.push((
                Invariant::CooldownEnd,
                format!(
                    "version {v}: cooldown {} of {} freed {} ms before its end (slack {} ms)",
                    cd.id,
                    short(&cd.holder_id),
                    end - c.now,
                    c.slack
                ),
            ));
        }
    }
    problems
}
