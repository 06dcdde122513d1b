//! A lifecycle seed's operator (docs/lifecycle.md, `recover`): it looks at the lock every 1 to 5
//! minutes, as a person reading `status` would, and now and then recovers a quarantine it read
//! (`recover` with its exact `reservation-id` and `resource-safe: true`) or ends the incident
//! some time after it was raised (`recover-incident` with `confirmed: true`, naming the
//! incident or not). One try in eight has a wrong id, and one in eight no confirmation: the
//! core must refuse those, write nothing (invariant 26, `lifecycle::check`) and finish failed
//! (checked here). Each try is a run of its own (its run id, job `recover`, its runner, its
//! clock), driven through the same driver loop and faults as every job; never rerun. The looks
//! stop once no job is left and the lock keeps no quarantine and no incident.

use leasehold_core::lifecycle::ReservationKind;
use leasehold_core::time::Millis;
use leasehold_core::{Outcome, ResultWord};

use crate::lifecycle::{OperatorAct, WRONG_ID};
use crate::types::{Invariant, REPOSITORY, T0};
use crate::world::Ev;

use super::attempt::{JobSettings, Run};
use super::env::Env;

/// Operator runs get run ids from here on.
pub const OPERATOR_RUN_BASE: u64 = 97_000;
/// The operator looks at the lock this often (a range).
pub const OPERATOR_LOOK_MS: (Millis, Millis) = (60_000, 300_000);
/// At most this many looks a seed.
const MAX_LOOKS: u64 = 60;
/// No look is set this close to the seed's bound (the runs it starts must be over by then).
const BOUND_MARGIN_MS: Millis = 600_000;

impl Env<'_> {
    /// The operator looks at the lock: it may start a recovery, and sets its next look.
    pub(crate) fn operator_tick(&mut self, k: u64) {
        let Some(st) = self.gh.store.committed().cloned() else {
            return;
        };
        let quarantines: Vec<String> = st
            .reservations
            .iter()
            .filter(|r| r.kind == ReservationKind::Quarantine)
            .map(|r| r.id.clone())
            .collect();
        let incident = st.incident.as_ref().map(|i| i.id.clone());
        let jobs_left = self.clients.iter().any(|cl| cl.live() && !cl.is_reaper())
            || self.runs.iter().any(|r| r.needs_rerun || r.rerun_pending);
        if (!jobs_left && quarantines.is_empty() && incident.is_none()) || k >= MAX_LOOKS {
            self.log(|_| "the operator stops looking at the lock".into());
            return;
        }
        let rng = &mut self.world.operator_rng;
        let mut acts = Vec::new();
        // An incident is ended some time after it is raised: one look in two.
        if let Some(id) = incident {
            if rng.below(2) == 0 {
                let id = match rng.below(8) {
                    0 => Some(format!("{id}{WRONG_ID}")),
                    1..=3 => Some(id),
                    _ => None,
                };
                let confirmed = rng.below(8) != 0;
                acts.push(OperatorAct::Incident { id, confirmed });
            }
        }
        if !quarantines.is_empty() && rng.below(2) == 0 {
            let id = quarantines[rng.below(quarantines.len() as u64) as usize].clone();
            let id = if rng.below(8) == 0 {
                format!("{id}{WRONG_ID}")
            } else {
                id
            };
            let confirmed = rng.below(8) != 0;
            acts.push(OperatorAct::Quarantine { id, confirmed });
        }
        for act in acts {
            let at = self.now + self.world.operator_rng.below(30_001);
            self.new_operator(act, at);
        }
        let at = self.now
            + self
                .world
                .operator_rng
                .between(OPERATOR_LOOK_MS.0, OPERATOR_LOOK_MS.1);
        if at + BOUND_MARGIN_MS < T0 + self.world.params.bound_ms {
            self.push(at, Ev::OperatorTick(k + 1));
        }
    }

    /// A run of the operator's, and its one job attempt, starting at `at`.
    fn new_operator(&mut self, act: OperatorAct, at: Millis) -> usize {
        let run = self.runs.len();
        let k = self.runs.iter().filter(|r| r.operator.is_some()).count() as u64;
        let settings = JobSettings::service();
        let run_id = OPERATOR_RUN_BASE + k;
        let mut r = Run::new(run_id, settings, true);
        match &act {
            OperatorAct::Quarantine { .. } => self.world.counters.lifecycle.operator.recover += 1,
            OperatorAct::Incident { .. } => {
                self.world.counters.lifecycle.operator.recover_incident += 1
            }
        }
        self.log(|_| format!("the operator starts run {run_id}: {act:?}"));
        r.operator = Some(act);
        self.runs.push(r);
        let c = self.new_attempt(run, Some(format!("operator {REPOSITORY}:{run_id}:recover")));
        self.push(at, Ev::JobStart(c));
        c
    }

    /// An operator's run finished: one it had to be refused must have failed.
    pub(crate) fn operator_finished(&mut self, c: usize, outcome: &Outcome) {
        let Some(act) = self.runs[self.clients[c].run].operator.clone() else {
            return;
        };
        let o = &mut self.world.counters.lifecycle.operator;
        if act.refused() {
            o.refused += 1;
            if outcome.result != ResultWord::Failed {
                let message = format!(
                    "{}: a recovery told {act:?} finished {}, not failed",
                    self.who(c),
                    outcome.result.as_str()
                );
                self.violate(Invariant::OperatorRecovery, message);
            }
            return;
        }
        match outcome.result {
            ResultWord::Recovered => o.recovered += 1,
            ResultWord::IncidentRecovered => o.incident_recovered += 1,
            _ => o.failed += 1,
        }
    }
}
