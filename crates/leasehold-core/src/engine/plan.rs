//! The seam between the engine and an operation: what a planner sees of one version of the
//! document ([`PlanCtx`]), what it may decide ([`Decision`]), and what it must answer
//! ([`Planner`]).

use super::ClockEstimate;
use crate::admission::Admission;
use crate::policy::{RetryPolicy, Rng};
use crate::store::Document;
use crate::wire::time::Millis;
use crate::wire::{
    Call, ChangeAction, ConfigError, ConfigRecord, Failure, LeasePolicy, Level, LockState, LogLine,
    Outcome, Removal, Reply,
};

/// Where the version an operation plans on came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// From a read: current when GitHub answered, though possibly already overtaken.
    Read,
    /// Our own write was accepted on this exact version: it was current at that moment.
    Written,
}

/// What a planner sees.
pub struct PlanCtx<'a, D: Document = LockState> {
    /// The local clock: for deadlines and sleeps.
    pub now: Millis,
    /// GitHub's clock as estimated from its `date` headers: for every time written to the
    /// state and for judging leases.
    pub server_now: Millis,
    /// The lock's lease policy (from its config, or [`LeasePolicy::unconfigured`]).
    pub lease: LeasePolicy,
    /// Bounds on GitHub's clock, for turning lease times into local deadlines.
    pub clock: ClockEstimate,
    /// Whether this operation has sent a write (whose effect a stale read might not show).
    pub has_written: bool,
    /// Holdings the plan removed for someone else (expired leases), for `lastChange`.
    pub removed: Vec<Removal>,
    pub state: &'a D,
    /// Whether the document exists (an absent file plans on an empty document).
    pub exists: bool,
    pub provenance: Provenance,
    /// The admission rule, when the config it comes from is known and fresh.
    pub admission: Option<D::Admission>,
    /// The config file is present but invalid (capacity is then 1).
    pub config_error: Option<&'a ConfigError>,
    pub rng: &'a mut Rng,
    pub log: &'a mut Vec<LogLine>,
    /// The repository's node id, once known (a document in refs).
    pub repository_id: Option<String>,
    /// The config record the admission rule comes from, when it is known and fresh (the
    /// lifecycle reads its `lifecycle`).
    pub record: Option<ConfigRecord>,
}

impl<D: Document> PlanCtx<'_, D> {
    pub fn info(&mut self, text: String) {
        self.log.push(LogLine {
            level: Level::Info,
            text,
        });
    }

    pub fn debug(&mut self, text: String) {
        self.log.push(LogLine {
            level: Level::Debug,
            text,
        });
    }

    pub fn warn(&mut self, text: String) {
        self.log.push(LogLine {
            level: Level::Warning,
            text,
        });
    }

    /// How many may hold at once, when the admission rule is known.
    pub fn capacity(&self) -> Option<u32> {
        self.admission.as_ref().map(Admission::capacity)
    }

    /// Admits waiters of `doc` by the admission rule, when it is known (else nobody): at GitHub's
    /// time, within the lease policy's ceiling. Returns the holder ids admitted.
    pub fn admit(&self, doc: &mut D) -> Vec<String> {
        match &self.admission {
            Some(rule) => rule.admit(doc, self.server_now, self.lease.max_ttl_ms),
            None => Vec::new(),
        }
    }
}

/// What a planner decided for one version.
// One decision per plan, moved once: the size of a state document is no cost here.
#[allow(clippy::large_enum_variant)]
#[must_use = "a decision is what the engine does next"]
pub enum Decision<D = LockState> {
    /// Write this version (the engine stamps its revision and `lastChange`).
    Write {
        doc: D,
        action: ChangeAction,
    },
    /// Nothing to write now: wake at `until` and read again.
    Sleep {
        until: Millis,
    },
    Finish(Outcome),
    /// Ask GitHub a question outside the lock (a run attempt's or a job's status in the Actions
    /// API) before planning on. The engine sends it with its own time limit, retries a transient
    /// failure within the operation's budget, hands the answer (or the failure) to
    /// [`Planner::on_probe`] and plans again on the version already known.
    Probe(Call),
}

pub trait Planner {
    /// The kind of document this operation plans on.
    type Doc: Document;
    /// Whether this operation must know the lock's capacity (it then reads the config file
    /// when the state's record of it is not fresh).
    fn needs_config(&self) -> bool;
    /// Whether this operation must know the config to plan on `doc` (by default,
    /// [`Planner::needs_config`]): release needs it only on a state the lifecycle is on for,
    /// or to hand on a slot it frees while someone waits.
    fn needs_config_for(&self, _doc: &Self::Doc) -> bool {
        self.needs_config()
    }
    /// The absolute deadline of the config read's retries (by default the retry deadline): a
    /// phase of its own, so the config read and the state's write cannot starve each other.
    fn config_deadline(&self) -> Option<Millis> {
        self.retry_deadline()
    }
    /// Whether a config that cannot be read (its read's deadline passed, the read was refused,
    /// or something other than a file is at its path) is done without (the plan then goes on
    /// with the state's own record) instead of failing the operation.
    fn config_optional(&self) -> bool {
        false
    }
    /// Called once with the start time. An outcome here finishes the operation before any
    /// request is sent.
    fn start(&mut self, _now: Millis) -> Option<Outcome> {
        None
    }
    /// The job is being cancelled: plan to leave. Operations that only read or only remove
    /// ignore it.
    fn cancel(&mut self) {}
    fn plan(&mut self, ctx: &mut PlanCtx<'_, Self::Doc>) -> Decision<Self::Doc>;
    /// A write's outcome became unknown (it is read back next; a plan follows the read).
    fn write_unknown(&mut self) {}
    /// A document in refs: the commits this operation created for its next update, by ref
    /// name (`(ref, commit)`). A version whose ref points at one of them is this operation's
    /// own write; nothing else is (the same payload written by another process is not).
    fn created_commits(&mut self, _commits: &[(String, String)]) {}
    /// The outcome when the operation fails for `failure`.
    fn failed(&self, failure: Failure, now: Millis) -> Outcome;
    /// The state branch does not exist (a write answered 404). `None` creates it; an
    /// operation that never needs it finishes with the outcome returned instead.
    fn branch_missing(&self, _now: Millis) -> Option<Outcome> {
        None
    }
    /// An absolute deadline for retries, if this operation is deadline-bounded.
    fn retry_deadline(&self) -> Option<Millis> {
        None
    }
    /// No question (nor a retry of one) is sent after this; by default the retry deadline.
    fn probe_deadline(&self) -> Option<Millis> {
        self.retry_deadline()
    }
    /// Whether the last version known, `doc`, is carried to the job's later steps when this
    /// operation finishes (acquire's, so that release can write without reading first).
    fn carries(&self, _doc: &Self::Doc) -> bool {
        false
    }
    /// A question to ask before the first read of the state (acquire looks up its job id).
    fn first_probe(&mut self) -> Option<Call> {
        None
    }
    /// The answer to a [`Decision::Probe`] (or [`Planner::first_probe`]): a success reply, or
    /// the failure that ended it (a refusal, a 404, or a transient failure past the budget).
    fn on_probe(&mut self, _sent: &Call, _answer: Result<Reply, Failure>, _log: &mut Vec<LogLine>) {
    }
}

/// Per-lock settings every operation needs.
#[derive(Clone, Debug)]
pub struct Target {
    pub lock: String,
    /// `owner/name` of the lock repository (named in GraphQL queries; REST paths are the
    /// driver's).
    pub repository: String,
    /// GitHub's node id of the repository, for `updateRefs`, when known before any read.
    pub repository_id: Option<String>,
    pub state_branch: String,
    /// Names the writer in commit messages and `lastChange`.
    pub holder_id: String,
    pub retry: RetryPolicy,
}
