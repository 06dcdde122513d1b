//! # leasehold-core
//!
//! The decision core of leasehold: leases, locks and queues for GitHub Actions jobs, with a
//! GitHub repository as the only shared store. Sans-IO: this crate never reads a clock, the
//! environment or a random source, and performs no I/O. `now` and entropy are arguments; an
//! operation is a state machine that takes [`Event`]s and answers each with one [`Command`]
//! (a request with its time limit, a sleep, a finish).
//!
//! ```
//! use leasehold_core::{Call, Command, Entropy, Event, Operation, OperationKind};
//! let inputs = [("lock", "deploy"), ("GITHUB_REPOSITORY", "octo/app"), ("GITHUB_RUN_ID", "7"),
//!               ("GITHUB_RUN_ATTEMPT", "1"), ("GITHUB_JOB", "build")]
//!     .into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
//! let entropy = Entropy { seed: 1, nonce: "0123456789abcdef".into() };
//! let (mut op, _plan) = Operation::new(OperationKind::Acquire, &inputs, &entropy).unwrap();
//! let step = op.step(Event::Start { now: 1_000 }).unwrap();
//! assert!(matches!(step.command, Command::Request { call: Call::ReadFile { .. }, .. }));
//! ```
//!
//! The modules, from the bottom up (each depends only on those before it):
//!
//! * `wire`: what crosses a boundary, as data: events, replies, commands, outcomes, errors,
//!   the stable words, the shapes of the stored documents;
//! * `policy`: every number and table (`leasehold_core::limits` lists the numbers);
//! * `input`: the one reader of inputs; `admission`: who may hold next (FIFO, or a
//!   resource pool's choice);
//! * `store`: the kinds of stored document (the lock state in a file, claims in git refs) and
//!   the config;
//! * `engine`: the read / plan / compare-and-swap loop every operation runs in;
//! * `ops`: the operations and their registry.

// `#[derive(Read)]` names the crate's reader `::leasehold_core::wire::de::read`, from inside.
extern crate self as leasehold_core;

mod admission;
mod engine;
mod input;
mod ops;
#[cfg(feature = "planted-bugs")]
pub mod planted;
mod policy;
mod store;
#[cfg(test)]
mod test_support;
mod wire;

pub use ops::claims::next::{
    refusal_document, result_document, shell_quote, validate_document, RESULT_SCHEMA,
};
pub use ops::pool::PoolPass;
pub use ops::validate::ValidateSettings;
pub use ops::{cleanup_command, cleanup_run, guard, guard_report, Operation, OperationKind, Plan};

pub use admission::{
    choice, choose, conflict, partition_of, Admission, Ask, Held, HoldReason, LockRule, PassOver,
    Pool,
};
pub use input::{credential_shape, holder_id, Entropy, RawInputs};
pub use policy::{limits, retry_after_until, LeaseRule};
/// Git's blob id of a text (what the contents API calls a file's `sha`), for models of GitHub.
pub use store::blob::blob_sha;
pub use store::claim::{claim_ref, parse_payload, render_payload};
pub use store::pool_config::{parse_pool, pool_capacity, PoolRule};
/// The GraphQL documents of ref-kept documents, as the core builds them (for models of GitHub).
pub use store::refs::{
    list_refs_call, read_refs_call, update_refs_call, PAYLOAD_FILE, UPDATE_REFS, ZERO_OID,
};
pub use store::{
    check_config, config_verdict, parse_config, ConfigProblem, ConfigVerdict, LockConfig,
    MAX_STATE_BYTES, SCHEMA,
};
pub use store::{ClaimMember, ClaimSet};
pub use wire::de::from_value;
pub use wire::time::{self, Millis};
pub use wire::{
    exit_table, AcquiredFrom, AnswerClass, Call, Change, ChangeAction, ClaimItem, ClaimLease,
    ClaimPayload, ClaimReport, ClaimState, Command, ConfigError, ConfigRecord, Error, Event,
    ExitRow, Failure, FailureCode, GraphqlError, Holder, InputError, JobSummary, LeasePolicy,
    LeaseView, Level, LockState, LogLine, Outcome, Place, ProtocolError, QueueEntry, ReapAction,
    ReapEntry, ReapReason, ReapReport, RefEntry, Removal, RemovalReason, Reply, ResultWord,
    RunIdentity, SleepReason, SlotReport, StateError, Stats, Status, Step, TreeFile, ALL_STATUSES,
};
/// The lifecycle after release (docs/lifecycle.md): its stored rules, its admission and its
/// decisions, for the simulator and tools.
pub mod lifecycle {
    pub use crate::admission::lifecycle::{admit, next_free_at, reclaim, sweep};
    pub use crate::ops::lifecycle::{judge, leave, Report, Verdict};
    pub use crate::store::lifecycle::{
        allows_reason, applies, incident_id, is_idle, keeps_anything, migrate, parse_lifecycle,
        raise, reservation_id, reserve, Applies, LifecycleProblem, LifecycleRule, BUILTIN_REASONS,
        LIFECYCLE_SCHEMA,
    };
    pub use crate::wire::{
        CleanupResult, CleanupStatus, Health, Incident, LifecycleConfig, LifecycleReport,
        ReportCode, Reservation, ReservationKind,
    };
}
pub use wire::{
    AffinityMark, Backoff, Consumer, Pacing, PoolBooks, PoolConfig, PoolRequest, Resource, Seat,
    UsageReading, UsageStatus,
};
