//! What crosses a boundary, as plain serde data: the events the driver feeds the core and the
//! commands it gets back ([`Event`], [`Reply`], [`Command`], [`Step`], [`Outcome`]), the errors
//! (each with a stable code), the stable words (result words, failure codes, reasons, actions),
//! and the shapes of the documents kept on GitHub. Nothing here decides anything; everything
//! else in the crate depends on it, and it depends on nothing else.

mod claim;
mod command;
pub(crate) mod de;
mod document;
mod error;
mod event;
mod exit;
mod lifecycle;
mod outcome;
mod pool;
mod receipt;
mod repair;
mod secrets;
mod slot;
pub mod time;
mod value;
mod words;

pub use claim::{
    AcquiredFrom, ClaimItem, ClaimLease, ClaimPayload, ClaimReport, ClaimState, ClockOffsets,
    CLAIM_KIND, CLAIM_SCHEMA,
};
pub use command::{Call, Command, Level, LogLine, SleepReason, Step, TreeFile};
pub use document::{
    Change, ConfigRecord, Holder, Incident, LeasePolicy, LifecycleConfig, LockState, QueueEntry,
    Removal, Reservation, RunIdentity,
};
pub use error::{ConfigError, Error, InputError, ProtocolError, StateError};
pub use event::{
    CommentEntry, Event, GraphqlError, IssueEntry, JobSummary, RefEntry, Reply, WorkflowRunEntry,
};
pub use exit::{exit_table, ExitRow, Status, ALL_STATUSES};
pub use lifecycle::{
    CleanupResult, CleanupStatus, Health, LifecycleReport, ReportCode, ReservationKind,
};
pub use outcome::{
    Carry, Failure, LeaseView, Outcome, Place, ReapAction, ReapEntry, ReapReport, ResultWord, Stats,
};
pub use pool::{
    AffinityMark, Backoff, Consumer, Pacing, PoolBooks, PoolConfig, PoolRequest, Resource, Seat,
    UsageReading, UsageStatus,
};
pub use receipt::{
    alert_marker, is_run_id, is_sha, read_receipt, render_receipt, BlockRead, ItemReport, Receipt,
    RECEIPT_VERSION,
};
pub use repair::RepairReport;
pub use secrets::credential_shape;
pub use slot::{SlotReport, SLOT_KIND, SLOT_SCHEMA};
pub(crate) use value::{pointer_token, pretty_text, tag_of, value_of};
pub(crate) use words::words;
pub use words::{AnswerClass, ChangeAction, FailureCode, ReapReason, RemovalReason, Stored};
