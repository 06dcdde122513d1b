//! The operations, one file each, and their registry: [`OperationKind`] names them, [`Operation`]
//! holds whichever runs, [`Operation::new`] parses its inputs and [`Operation::step`] drives it.

mod acquire;
mod acquire_head;
mod audit;
mod cancelled;
use cancelled::Cancellable;
pub mod claims;
pub mod cleanup_command;
pub mod cleanup_run;
mod exchange;
pub mod guard;
pub mod guard_report;
mod head;
mod identity;
mod job_id;
pub mod lifecycle;
pub mod pool;
mod reap;
mod receipt;
mod recover;
mod release;
mod renew;
pub mod repair;
pub mod slots;
mod status;
mod usage;
pub mod validate;

use serde::Serialize;

use crate::engine::{Engine, Several, Target};
use crate::input::{validate_entropy, Entropy, RawInputs};
use crate::policy::RetryPolicy;
use crate::wire::{Error, Event, ProtocolError, Step};
use acquire::{AcquirePlanner, AcquireSettings};
use claims::list::ListOp as ClaimsList;
use claims::{ClaimPlanner, ClaimSettings, Verb};
use reap::{ReapPlanner, ReapSettings};
use recover::{RecoverPlanner, RecoverSettings};
use release::{ReleasePlanner, ReleaseSettings};
use renew::{RenewPlanner, RenewSettings};
use status::{StatusPlanner, StatusSettings};
use usage::{UsagePlanner, UsageSettings};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
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
    /// Claims on git refs (`claims.rs`): one item per key of a namespace.
    #[serde(rename = "claim")]
    Claim,
    #[serde(rename = "claim-takeover")]
    ClaimTakeover,
    #[serde(rename = "claim-renew")]
    ClaimRenew,
    #[serde(rename = "claim-release")]
    ClaimRelease,
    #[serde(rename = "claim-verify")]
    ClaimVerify,
    #[serde(rename = "claim-read")]
    ClaimRead,
    #[serde(rename = "claim-adopt")]
    ClaimAdopt,
    #[serde(rename = "claim-family-claim")]
    ClaimFamilyClaim,
    #[serde(rename = "claim-family-release")]
    ClaimFamilyRelease,
    #[serde(rename = "claim-family-renew")]
    ClaimFamilyRenew,
    #[serde(rename = "claim-list")]
    ClaimList,
    /// The next never-recycled slot number of a namespace and prefix (`slots.rs`).
    #[serde(rename = "slot-allocate")]
    SlotAllocate,
    /// Whether a receipt on the item names this run (`receipt.rs`): skip or do the work.
    #[serde(rename = "receipt-check")]
    ReceiptCheck,
    /// Post this run's receipt, once, after an outright success.
    #[serde(rename = "receipt-post")]
    ReceiptPost,
    /// Whether a pull request is still at the head a job was started for (`head.rs`).
    #[serde(rename = "check-head")]
    CheckHead,
    /// Keep one alert issue per problem (`audit.rs`).
    Audit,
    /// Record a usage reading of a pool's resource (`usage.rs`).
    #[serde(rename = "report-usage")]
    ReportUsage,
    /// Rewrite a broken lock state as a valid empty one, its fence counter kept above every
    /// fence its history handed out (`repair.rs`).
    Repair,
    /// An operator's recovery of a quarantine or of the lock's incident (`recover.rs`).
    Recover,
}

impl OperationKind {
    /// The claim verb of a claim operation.
    fn claim_verb(self) -> Option<Verb> {
        Some(match self {
            OperationKind::Claim => Verb::Claim,
            OperationKind::ClaimTakeover => Verb::Takeover,
            OperationKind::ClaimRenew => Verb::Renew,
            OperationKind::ClaimRelease => Verb::Release,
            OperationKind::ClaimVerify => Verb::Verify,
            OperationKind::ClaimRead | OperationKind::ClaimList => Verb::Read,
            OperationKind::ClaimAdopt => Verb::Adopt,
            OperationKind::ClaimFamilyClaim => Verb::FamilyClaim,
            OperationKind::ClaimFamilyRelease => Verb::FamilyRelease,
            OperationKind::ClaimFamilyRenew => Verb::FamilyRenew,
            _ => return None,
        })
    }
}

/// Facts about an operation the driver needs before it starts: where to send requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
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

/// The lock an operation works on and who it writes as: what its plan and its engine's target
/// both name.
struct OnLock<'a> {
    lock: &'a str,
    repository: &'a str,
    state_branch: &'a str,
    /// The holder the plan names (none for an operator's verb).
    holder_id: &'a str,
    /// Who the engine's writes are stamped by: the holder, or the operator's verb.
    writer: &'a str,
}

impl<'a> OnLock<'a> {
    /// A holder's operation (acquire, release, renew): it writes as the holder.
    fn holder(
        lock: &'a str,
        repository: &'a str,
        state_branch: &'a str,
        holder_id: &'a str,
    ) -> Self {
        OnLock {
            lock,
            repository,
            state_branch,
            holder_id,
            writer: holder_id,
        }
    }

    /// An operator's verb (status, recover, report-usage, repair): no holder; it writes as the
    /// verb.
    fn operator(lock: &'a str, repository: &'a str, state_branch: &'a str, verb: &'a str) -> Self {
        OnLock {
            lock,
            repository,
            state_branch,
            holder_id: "",
            writer: verb,
        }
    }

    fn plan(&self, kind: OperationKind, nonce: String, warnings: Vec<String>) -> Plan {
        Plan {
            kind,
            lock: self.lock.into(),
            repository: self.repository.into(),
            state_branch: self.state_branch.into(),
            holder_id: self.holder_id.into(),
            nonce,
            warnings,
        }
    }

    fn target(&self, retry: &RetryPolicy) -> Target {
        Target {
            lock: self.lock.into(),
            repository: self.repository.into(),
            repository_id: None,
            state_branch: self.state_branch.into(),
            holder_id: self.writer.into(),
            retry: retry.clone(),
        }
    }
}

/// One lock operation, whichever it is: the registry of operations (a new operation is a
/// file in this directory, a variant here and an arm in [`Operation::new`] and
/// [`Operation::step`]).
pub enum Operation {
    Acquire(Box<Engine<AcquirePlanner>>),
    Release(Engine<ReleasePlanner>),
    Status(Engine<StatusPlanner>),
    Renew(Engine<RenewPlanner>),
    Reap(Several<ReapPlanner>),
    Claim(Engine<ClaimPlanner>),
    ClaimList(Cancellable<ClaimsList>),
    SlotAllocate(Cancellable<slots::SlotOp>),
    Receipt(Cancellable<receipt::ReceiptOp>),
    CheckHead(Cancellable<head::CheckHeadOp>),
    Audit(Cancellable<audit::AuditOp>),
    ReportUsage(Engine<UsagePlanner>),
    Repair(Cancellable<repair::RepairOp>),
    Recover(Engine<RecoverPlanner>),
}

impl Operation {
    /// Parses and checks the inputs; nothing is sent before this succeeds.
    pub fn new(
        kind: OperationKind,
        inputs: &RawInputs,
        entropy: &Entropy,
    ) -> Result<(Self, Plan), Error> {
        validate_entropy(entropy)?;
        let item_plan = |repository: &str, what: String, warnings| Plan {
            kind,
            lock: what,
            repository: repository.to_string(),
            state_branch: String::new(),
            holder_id: String::new(),
            nonce: String::new(),
            warnings,
        };
        let (op, plan) = match kind {
            OperationKind::ReceiptCheck | OperationKind::ReceiptPost => {
                let mode = if kind == OperationKind::ReceiptCheck {
                    receipt::Mode::Check
                } else {
                    receipt::Mode::Post
                };
                let (s, warnings) = receipt::ReceiptSettings::parse(mode, inputs)?;
                let plan = item_plan(&s.repository, format!("#{}", s.number), warnings);
                (
                    Operation::Receipt(Cancellable::new(receipt::ReceiptOp::new(s, entropy.seed))),
                    plan,
                )
            }
            OperationKind::CheckHead => {
                let (op, warnings) = head::CheckHeadOp::parse(inputs, entropy.seed)?;
                let plan = item_plan(
                    &op.pr().repository,
                    format!("#{}", op.pr().number),
                    warnings,
                );
                (Operation::CheckHead(Cancellable::new(op)), plan)
            }
            OperationKind::Audit => {
                let (s, warnings) = audit::AuditSettings::parse(inputs)?;
                let plan = item_plan(&s.repository, audit::REAPER_DELIVERY.into(), warnings);
                (
                    Operation::Audit(Cancellable::new(audit::AuditOp::new(s, entropy.seed))),
                    plan,
                )
            }
            OperationKind::Repair => {
                let s = repair::RepairSettings::parse(inputs)?;
                let plan = OnLock::operator(&s.lock, &s.repository, &s.state_branch, "repair")
                    .plan(kind, String::new(), Vec::new());
                (
                    Operation::Repair(Cancellable::new(repair::RepairOp::new(s, entropy))),
                    plan,
                )
            }
            OperationKind::SlotAllocate => {
                let (s, warnings) = slots::SlotSettings::parse(inputs, entropy)?;
                let plan = Plan {
                    kind,
                    lock: format!("{}/{}", s.namespace, s.prefix),
                    repository: s.repository.clone(),
                    state_branch: String::new(),
                    holder_id: s.by.clone().unwrap_or_default(),
                    nonce: s.nonce.clone(),
                    warnings,
                };
                (
                    Operation::SlotAllocate(Cancellable::new(slots::SlotOp::new(s, entropy.seed))),
                    plan,
                )
            }
            OperationKind::ClaimList => {
                let (s, warnings) = ClaimSettings::parse(Verb::Read, &with_key(inputs), entropy)?;
                let stale = crate::input::Reader::new(inputs)
                    .bool("stale")?
                    .unwrap_or(false);
                let plan = claim_plan(kind, &s, warnings);
                (
                    Operation::ClaimList(Cancellable::new(ClaimsList::new(
                        &s,
                        stale,
                        entropy.seed,
                    ))),
                    plan,
                )
            }
            OperationKind::Claim
            | OperationKind::ClaimTakeover
            | OperationKind::ClaimRenew
            | OperationKind::ClaimRelease
            | OperationKind::ClaimVerify
            | OperationKind::ClaimRead
            | OperationKind::ClaimAdopt
            | OperationKind::ClaimFamilyClaim
            | OperationKind::ClaimFamilyRelease
            | OperationKind::ClaimFamilyRenew => {
                let verb = kind.claim_verb().expect("a claim verb");
                let (s, warnings) = ClaimSettings::parse(verb, inputs, entropy)?;
                let plan = claim_plan(kind, &s, warnings);
                let target = Target {
                    lock: crate::store::claim::set_key(&s.namespace, &s.keys),
                    repository: s.repository.clone(),
                    repository_id: s.repository_id.clone(),
                    state_branch: String::new(),
                    holder_id: s.run_id.clone(),
                    retry: s.retry.clone(),
                };
                let clock = s.clock;
                let planner = ClaimPlanner::new(s);
                let presumed = planner.presumed();
                let mut engine = Engine::new(planner, target, entropy.seed);
                if let Some(set) = presumed {
                    engine = engine.with_presumed(set);
                }
                // Until the first answer's `date`: for a plan made on `prior` before any.
                if let Some(c) = clock {
                    engine = engine
                        .with_clock(crate::engine::ClockEstimate::carried(c.low_ms, c.high_ms));
                }
                (Operation::Claim(engine), plan)
            }
            OperationKind::Acquire => {
                let (s, warnings) = AcquireSettings::parse(inputs, entropy)?;
                let on = OnLock::holder(&s.lock, &s.repository, &s.state_branch, &s.holder_id);
                let plan = on.plan(kind, s.nonce.clone(), warnings);
                let target = on.target(&s.retry);
                (
                    Operation::Acquire(Box::new(Engine::new(
                        AcquirePlanner::new(s),
                        target,
                        entropy.seed,
                    ))),
                    plan,
                )
            }
            OperationKind::Release | OperationKind::Cleanup => {
                let (mut s, warnings) = if kind == OperationKind::Cleanup {
                    ReleaseSettings::parse_cleanup(inputs)?
                } else {
                    ReleaseSettings::parse(inputs)?
                };
                let nonce = s.claim_nonce.clone().unwrap_or_default();
                let on = OnLock::holder(&s.lock, &s.repository, &s.state_branch, &s.holder_id);
                let plan = on.plan(kind, nonce, warnings);
                let target = on.target(&s.retry);
                // Revision 0 is the empty state of a missing file: a 404 does not contradict it.
                let min_revision = s.min_revision.filter(|&r| r > 0);
                let carried = s.carried.take();
                let mut engine = Engine::new(ReleasePlanner::new(s), target, entropy.seed)
                    .with_min_revision(min_revision);
                // Only a plain lock's version is carried this far (`store::carry::timeless`):
                // one under the lifecycle or a pool is read first, for GitHub's clock.
                if let Some(carried) = carried {
                    let (sha, doc) = *carried;
                    engine = engine.with_carried(sha, doc);
                }
                (Operation::Release(engine), plan)
            }
            OperationKind::Renew => {
                let (s, warnings) = RenewSettings::parse(inputs)?;
                let on = OnLock::holder(&s.lock, &s.repository, &s.state_branch, &s.holder_id);
                let plan = on.plan(kind, s.nonce.clone(), warnings);
                let target = on.target(&s.retry);
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
            OperationKind::ReportUsage => {
                let (s, warnings) = UsageSettings::parse(inputs)?;
                let on = OnLock::operator(&s.lock, &s.repository, &s.state_branch, "report-usage");
                let plan = on.plan(kind, String::new(), warnings);
                let target = on.target(&s.retry);
                (
                    Operation::ReportUsage(Engine::new(UsagePlanner { s }, target, entropy.seed)),
                    plan,
                )
            }
            OperationKind::Recover => {
                let (s, warnings) = RecoverSettings::parse(inputs)?;
                let on = OnLock::operator(&s.lock, &s.repository, &s.state_branch, "recover");
                let plan = on.plan(kind, String::new(), warnings);
                let target = on.target(&s.retry);
                (
                    Operation::Recover(Engine::new(RecoverPlanner::new(s), target, entropy.seed)),
                    plan,
                )
            }
            OperationKind::Status => {
                let s = StatusSettings::parse(inputs)?;
                let on = OnLock::operator(&s.lock, &s.repository, &s.state_branch, "status");
                let plan = on.plan(kind, String::new(), Vec::new());
                let target = on.target(&RetryPolicy::default());
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
        // Every time is a millisecond of the years a document can hold (up to 9999-12-31): a
        // later one is no clock's reading, and the arithmetic of leases and deadlines is
        // bounded by it (found by the `engine` fuzz target, docs/fuzzing.md).
        if event.now() > crate::wire::time::LATEST {
            return Err(ProtocolError {
                event: event.name().into(),
                state: "its time is past 9999-12-31T23:59:59.999Z, the latest a document can hold"
                    .into(),
            }
            .into());
        }
        let step = match self {
            Operation::Acquire(e) => e.step(event),
            Operation::Release(e) => e.step(event),
            Operation::Status(e) => e.step(event),
            Operation::Renew(e) => e.step(event),
            Operation::Reap(r) => r.step(event),
            Operation::Claim(e) => e.step(event),
            Operation::ClaimList(l) => return l.step(event),
            Operation::SlotAllocate(a) => return a.step(event),
            Operation::Receipt(r) => return r.step(event),
            Operation::CheckHead(c) => return c.step(event),
            Operation::Audit(a) => return a.step(event),
            Operation::ReportUsage(e) => e.step(event),
            Operation::Repair(r) => return r.step(event),
            Operation::Recover(e) => e.step(event),
        }?;
        Ok(step)
    }
}

/// list names no key: the settings reader is given a placeholder one.
fn with_key(inputs: &RawInputs) -> RawInputs {
    let mut inputs = inputs.clone();
    inputs.insert("key".into(), "list".into());
    inputs
}

fn claim_plan(kind: OperationKind, s: &ClaimSettings, warnings: Vec<String>) -> Plan {
    Plan {
        kind,
        lock: crate::store::claim::set_key(&s.namespace, &s.keys),
        repository: s.repository.clone(),
        state_branch: String::new(),
        holder_id: s.run_id.clone(),
        nonce: String::new(),
        warnings,
    }
}
