//! The operations, one file each, and their registry: [`OperationKind`] names them, [`Operation`]
//! holds whichever runs, [`Operation::new`] parses its inputs and [`Operation::step`] drives it.

mod acquire;
pub mod guard;
mod reap;
mod release;
mod renew;
mod status;

use serde::{Deserialize, Serialize};

use crate::engine::{Engine, Several, Target};
use crate::input::{validate_entropy, Entropy, RawInputs};
use crate::policy::RetryPolicy;
use crate::wire::{Error, Event, Step};
use acquire::{AcquirePlanner, AcquireSettings};
use reap::{ReapPlanner, ReapSettings};
use release::{ReleasePlanner, ReleaseSettings};
use renew::{RenewPlanner, RenewSettings};
use status::{StatusPlanner, StatusSettings};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationKind {
    Acquire,
    Release,
    /// The acquire action's post step: release exactly the claim acquire made, best effort.
    Cleanup,
    /// Extend this claim's lease (holder id and nonce), within its ceiling.
    Renew,
    Status,
    /// Free what dead jobs left in one or more locks, proven from the Actions API.
    Reap,
}

/// Facts about an operation the driver needs before it starts: where to send requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub kind: OperationKind,
    pub lock: String,
    /// `owner/name` of the lock repository.
    pub repository: String,
    pub state_branch: String,
    pub holder_id: String,
    /// The claim's nonce (acquire), saved by the driver for the post step's cleanup.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nonce: String,
    /// Inputs that were out of range and were ignored (reported, never fatal).
    pub warnings: Vec<String>,
}

/// One lock operation, whichever it is: the registry of operations (a new operation is a
/// file in this directory, a variant here and an arm in [`Operation::new`] and
/// [`Operation::step`]).
pub enum Operation {
    Acquire(Engine<AcquirePlanner>),
    Release(Engine<ReleasePlanner>),
    Status(Engine<StatusPlanner>),
    Renew(Engine<RenewPlanner>),
    Reap(Several<ReapPlanner>),
}

impl Operation {
    /// Parses and checks the inputs; nothing is sent before this succeeds.
    pub fn new(
        kind: OperationKind,
        inputs: &RawInputs,
        entropy: &Entropy,
    ) -> Result<(Self, Plan), Error> {
        validate_entropy(entropy)?;
        let (op, plan) = match kind {
            OperationKind::Acquire => {
                let (s, warnings) = AcquireSettings::parse(inputs, entropy)?;
                let plan = Plan {
                    kind,
                    lock: s.lock.clone(),
                    repository: s.repository.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    nonce: s.nonce.clone(),
                    warnings,
                };
                let target = Target {
                    lock: s.lock.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    retry: s.retry.clone(),
                };
                (
                    Operation::Acquire(Engine::new(AcquirePlanner::new(s), target, entropy.seed)),
                    plan,
                )
            }
            OperationKind::Release | OperationKind::Cleanup => {
                let (s, warnings) = if kind == OperationKind::Cleanup {
                    ReleaseSettings::parse_cleanup(inputs)?
                } else {
                    ReleaseSettings::parse(inputs)?
                };
                let nonce = s.claim_nonce.clone().unwrap_or_default();
                let plan = Plan {
                    kind,
                    lock: s.lock.clone(),
                    repository: s.repository.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    nonce,
                    warnings,
                };
                let target = Target {
                    lock: s.lock.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    retry: s.retry.clone(),
                };
                // Revision 0 is the empty state of a missing file: a 404 does not contradict it.
                let min_revision = s.min_revision.filter(|&r| r > 0);
                (
                    Operation::Release(
                        Engine::new(ReleasePlanner::new(s), target, entropy.seed)
                            .with_min_revision(min_revision),
                    ),
                    plan,
                )
            }
            OperationKind::Renew => {
                let (s, warnings) = RenewSettings::parse(inputs)?;
                let plan = Plan {
                    kind,
                    lock: s.lock.clone(),
                    repository: s.repository.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    nonce: s.nonce.clone(),
                    warnings,
                };
                let target = Target {
                    lock: s.lock.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.holder_id.clone(),
                    retry: s.retry.clone(),
                };
                (
                    Operation::Renew(Engine::new(RenewPlanner::new(s), target, entropy.seed)),
                    plan,
                )
            }
            OperationKind::Reap => {
                let (s, warnings) = ReapSettings::parse(inputs)?;
                let plan = Plan {
                    kind,
                    lock: s.locks.join(", "),
                    repository: s.repository.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: s.by.clone(),
                    nonce: String::new(),
                    warnings,
                };
                (Operation::Reap(reap::reap_all(&s, entropy.seed)), plan)
            }
            OperationKind::Status => {
                let s = StatusSettings::parse(inputs)?;
                let plan = Plan {
                    kind,
                    lock: s.lock.clone(),
                    repository: s.repository.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: String::new(),
                    nonce: String::new(),
                    warnings: Vec::new(),
                };
                let target = Target {
                    lock: s.lock.clone(),
                    state_branch: s.state_branch.clone(),
                    holder_id: "status".into(),
                    retry: RetryPolicy::default(),
                };
                (
                    Operation::Status(Engine::new(StatusPlanner { s }, target, entropy.seed)),
                    plan,
                )
            }
        };
        Ok((op, plan))
    }

    /// Feeds one event and returns the one thing to do next.
    #[must_use = "the step names the one thing the driver must do next"]
    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let step = match self {
            Operation::Acquire(e) => e.step(event),
            Operation::Release(e) => e.step(event),
            Operation::Status(e) => e.step(event),
            Operation::Renew(e) => e.step(event),
            Operation::Reap(r) => r.step(event),
        }?;
        Ok(step)
    }
}
