//! recover: an operator's way out of what the lifecycle keeps (docs/lifecycle.md).
//!
//! `operation: recover` with the exact `reservation-id` of a quarantine and `resource-safe:
//! true` turns it into a cooldown of the lock's length (never frees the slot outright: the
//! resource gets its cooldown as a confirmed cleanup would). `operation: recover-incident` with
//! `confirmed: true` ends the lock's incident, the one named by `incident-id` or, when it is
//! omitted, the one standing when the state is first read (its id is then bound, and compared
//! again before the compare-and-swap write). A wrong id, no incident, or a missing
//! confirmation fails closed and writes nothing.
//!
//! Results: `recovered`, `incident-recovered`; else `failed` with `no-such-reservation`,
//! `no-such-incident` or `unconfirmed` (status `recover-refused`).

use crate::engine::{Decision, PlanCtx, Planner, Provenance};
use crate::input::{RawInputs, Reader};
use crate::policy::limits::MAX_COOLDOWN_SECONDS;
use crate::policy::RetryPolicy;
use crate::store::lifecycle::{self as rules, Applies};
use crate::wire::time::Millis;
use crate::wire::{
    ChangeAction, Failure, FailureCode, InputError, LifecycleReport, LockState, Outcome,
    ReservationKind, ResultWord,
};

/// Which recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// A quarantine, by its exact id, becomes a cooldown.
    Quarantine { reservation_id: String },
    /// The incident ends: the one with this id, or the one standing (bound on first read).
    Incident { incident_id: Option<String> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoverSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub recovery: Recovery,
    /// The operator's confirmation: `resource-safe` (recover) or `confirmed`
    /// (recover-incident) is `true`.
    pub confirmed: bool,
    pub retry: RetryPolicy,
}

/// An id as given: a word `[A-Za-z0-9._:-]{1,128}` (ids are the core's own), else refused
/// without echoing it.
fn id_input(r: &Reader<'_>, name: &str) -> Result<Option<String>, InputError> {
    let Some(v) = r.get(name) else {
        return Ok(None);
    };
    let ok = v.len() <= 128
        && crate::wire::credential_shape(v).is_none()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if !ok {
        return Err(InputError::new(
            name,
            "must be an id as leasehold printed it ([A-Za-z0-9._:-]{1,128})",
            "",
        ));
    }
    Ok(Some(v.to_string()))
}

impl RecoverSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let (lock, repository, state_branch) = r.lock_target()?;
        let operation = r.required("operation")?;
        let (recovery, confirm_input) = match operation {
            "recover" => {
                let reservation_id = id_input(&r, "reservation-id")?
                    .ok_or_else(|| InputError::new("reservation-id", "is required", ""))?;
                (Recovery::Quarantine { reservation_id }, "resource-safe")
            }
            "recover-incident" => (
                Recovery::Incident {
                    incident_id: id_input(&r, "incident-id")?,
                },
                "confirmed",
            ),
            other => {
                return Err(InputError::new(
                    "operation",
                    "must be recover or recover-incident",
                    other,
                ))
            }
        };
        let confirmed = r.bool(confirm_input)?.unwrap_or(false);
        let retry = r.retry_policy();
        Ok((
            RecoverSettings {
                lock,
                repository,
                state_branch,
                recovery,
                confirmed,
                retry,
            },
            r.warnings,
        ))
    }
}

pub struct RecoverPlanner {
    pub s: RecoverSettings,
    /// recover-incident: the incident this recovery ends, once bound.
    bound: Option<String>,
    /// recover: the cooldown this recovery writes, once planned.
    cooldown_id: Option<String>,
}

impl RecoverPlanner {
    pub fn new(s: RecoverSettings) -> Self {
        RecoverPlanner {
            s,
            bound: None,
            cooldown_id: None,
        }
    }

    fn outcome(&self, result: ResultWord, report: LifecycleReport) -> Outcome {
        let ok = result != ResultWord::Failed;
        let mut o = Outcome::new(result, ok, &self.s.lock, "recover");
        o.lifecycle = Some(report);
        o
    }

    fn refuse(&self, code: FailureCode, message: String) -> Decision {
        Decision::Finish(
            self.outcome(ResultWord::Failed, LifecycleReport::default())
                .with_error(Failure::new(code, message)),
        )
    }

    fn quarantine(&mut self, id: &str, ctx: &mut PlanCtx<'_>) -> Decision {
        let st = ctx.state;
        let done = |c: &str| st.reservations.iter().any(|r| r.id == c);
        // Once this recovery's write went, a version without the quarantine is its goal met,
        // whoever wrote the version: the write landed and another writer followed (its answer
        // lost, the read-back shows theirs), or the reaper made the same cooldown. Never "nothing
        // was written" for a write that may have landed.
        if let Some(c) = &self.cooldown_id {
            let gone = !st.reservations.iter().any(|r| r.id == id);
            if (ctx.provenance == Provenance::Written && done(c)) || gone {
                ctx.info(if done(c) {
                    format!("recovered {id} of {} as the cooldown {c}", self.s.lock)
                } else {
                    format!(
                        "the quarantine {id} of {} is gone (its cooldown {c} has ended since, or a reclaim took the slot)",
                        self.s.lock
                    )
                });
                let report = LifecycleReport {
                    reservation_id: done(c).then(|| c.clone()),
                    ..LifecycleReport::default()
                };
                return Decision::Finish(self.outcome(ResultWord::Recovered, report));
            }
        }
        if !st
            .reservations
            .iter()
            .any(|r| r.id == id && r.kind == ReservationKind::Quarantine)
        {
            return self.refuse(
                FailureCode::NoSuchReservation,
                format!(
                    "{} has no quarantine {id:?} (its reservations: {}); nothing was written",
                    self.s.lock,
                    if st.reservations.is_empty() {
                        "none".to_string()
                    } else {
                        st.reservations
                            .iter()
                            .map(|r| format!("{} {}", r.kind, r.id))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            );
        };
        let seconds = match rules::applies(st, ctx.record.as_ref()) {
            Applies::On { config, .. } => config.cooldown_seconds,
            Applies::Downgrade { kept } => {
                kept.map_or(MAX_COOLDOWN_SECONDS, |k| k.cooldown_seconds)
            }
            Applies::Off | Applies::ActivationBusy => MAX_COOLDOWN_SECONDS,
        };
        let lifecycle = crate::wire::LifecycleConfig {
            cooldown_seconds: seconds,
            reasons: Vec::new(),
        };
        let mut doc = st.clone();
        let cooldown =
            super::lifecycle::cool_down(&mut doc, id, &lifecycle, ctx.server_now, "recover");
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::RecoverFreesQuarantine) {
            doc.reservations.retain(|r| r.id != cooldown);
        }
        ctx.info(format!(
            "turning the quarantine {id} of {} into the cooldown {cooldown} of {seconds} s",
            self.s.lock
        ));
        self.cooldown_id = Some(cooldown);
        Decision::Write {
            doc,
            action: ChangeAction::Recover,
        }
    }

    fn incident(&mut self, given: Option<String>, ctx: &mut PlanCtx<'_>) -> Decision {
        let st = ctx.state;
        let standing = st.incident.as_ref().map(|i| i.id.clone());
        // As for a quarantine: once the write went, the bound incident gone is the goal met,
        // whoever wrote the version (a newer incident raised since is not this one).
        if let Some(b) = &self.bound {
            if standing.as_ref() != Some(b) {
                ctx.info(format!("ended the incident {b} of {}", self.s.lock));
                let report = LifecycleReport {
                    incident_id: Some(b.clone()),
                    ..LifecycleReport::default()
                };
                return Decision::Finish(self.outcome(ResultWord::IncidentRecovered, report));
            }
        }
        let Some(standing) = standing else {
            return self.refuse(
                FailureCode::NoSuchIncident,
                format!("{} has no incident; nothing was written", self.s.lock),
            );
        };
        // The id to end: the one given, else the one first seen (bound, and compared on every
        // plan after, so a different incident raised meanwhile is never ended by mistake).
        let want = given
            .or_else(|| self.bound.clone())
            .unwrap_or_else(|| standing.clone());
        if want != standing {
            return self.refuse(
                FailureCode::NoSuchIncident,
                format!(
                    "the incident of {} is {standing:?}, not {want:?}; nothing was written",
                    self.s.lock
                ),
            );
        }
        self.bound = Some(standing.clone());
        let mut doc = st.clone();
        doc.incident = None;
        let admitted = ctx.admit(&mut doc);
        ctx.info(format!(
            "ending the incident {standing} of {}{}",
            self.s.lock,
            if admitted.is_empty() {
                String::new()
            } else {
                format!("; admitting {}", admitted.join(", "))
            }
        ));
        Decision::Write {
            doc,
            action: ChangeAction::RecoverIncident,
        }
    }
}

impl Planner for RecoverPlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        true
    }

    fn start(&mut self, _now: Millis) -> Option<Outcome> {
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::RecoverIncidentUnconfirmed)
            && matches!(self.s.recovery, Recovery::Incident { .. })
        {
            return None;
        }
        if self.s.confirmed {
            return None;
        }
        let input = match self.s.recovery {
            Recovery::Quarantine { .. } => "resource-safe",
            Recovery::Incident { .. } => "confirmed",
        };
        Some(
            self.outcome(ResultWord::Failed, LifecycleReport::default())
                .with_error(Failure::new(
                    FailureCode::Unconfirmed,
                    format!("{input} must be true: only an operator who checked the resource confirms it; nothing was sent"),
                )),
        )
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        self.outcome(ResultWord::Failed, LifecycleReport::default())
            .with_error(failure)
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        match self.s.recovery.clone() {
            Recovery::Quarantine { reservation_id } => self.quarantine(&reservation_id, ctx),
            Recovery::Incident { incident_id } => self.incident(incident_id, ctx),
        }
    }
}
