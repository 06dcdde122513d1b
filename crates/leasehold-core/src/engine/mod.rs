//! The machinery every lock operation shares: read the state document, plan, write it back
//! with a compare-and-swap on the sha that was read, and deal with whatever GitHub answers.
//!
//! An operation is an [`Engine`] around a [`Planner`]. The engine owns the I/O protocol
//! (which request is in flight, what a reply means, when to retry, when a read is stale); the
//! planner owns the decision for one version of the state (write this, sleep until then,
//! finish with that). Plans are recomputed from scratch on every version of the state, so a
//! conflict, a lost acknowledgement or a stale read all resolve the same way: read, plan again.
//!
//! Safety rests on three rules kept here:
//! 1. Every write carries the sha of the version it was planned on (compare-and-swap); a write
//!    planned on a missing file carries none, and GitHub refuses it (422) once the file exists.
//! 2. Every version carries a revision one higher than the one it replaced; a read that comes
//!    back with a lower revision than one already seen is stale and is read again, never acted on.
//! 3. A write whose outcome is unknown is never re-sent as is: the state is read back and the
//!    plan recomputed, so a write that landed is recognised by its effect (the claim's nonce).

mod bootstrap;
mod clock;
mod decide;
mod failure;
mod plan;
mod probe;
mod reply;
mod several;

pub use clock::{lease_view, ClockEstimate};
pub(crate) use failure::retry_sleep;
pub use plan::{Decision, PlanCtx, Planner, Provenance, Target};
pub use several::{Relay, Several};

use crate::policy::limits::{MAX_REQUESTS, MIN_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS};
use crate::policy::Class;
use crate::policy::{RequestKind, Rng};
use crate::store::{self, Document, Location};
use crate::wire::time::Millis;
use crate::wire::{
    Call, Command, ConfigError, ConfigRecord, Event, Failure, FailureCode, LogLine, Outcome,
    ProtocolError, SleepReason, Stats, Step,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    StateRead,
    ConfigRead,
    StateWrite,
    Tree,
    Commit,
    Branch,
    /// A ref document's write: the tree, then the commit, of the ref at this index of the batch
    /// (then the `updateRefs` itself, a `StateWrite`).
    RefTree,
    RefCommit,
    /// A question to the Actions API.
    Probe,
}

impl Pending {
    fn kind(self) -> RequestKind {
        match self {
            Pending::StateRead | Pending::ConfigRead | Pending::Probe => RequestKind::Read,
            Pending::StateWrite => RequestKind::Write,
            Pending::Tree
            | Pending::Commit
            | Pending::Branch
            | Pending::RefTree
            | Pending::RefCommit => RequestKind::Create,
        }
    }
}

#[derive(Clone, Debug)]
enum Wake {
    Poll,
    Reread,
    Retry(Call, Pending),
    /// A planned write held back to keep writes [`MIN_WRITE_GAP_MS`] apart.
    Send(Call, Pending),
    /// A question was rate limited: go on without its answer once the limit allows a request.
    AfterProbe,
}

#[derive(Clone, Debug)]
enum Phase {
    NotStarted,
    Awaiting(Call, Pending),
    Sleeping(Wake),
    Done,
}

struct Known<D> {
    doc: D,
    sha: Option<String>,
    etag: Option<String>,
    provenance: Provenance,
}

#[derive(Default)]
struct ConfigKnowledge {
    record: Option<ConfigRecord>,
    etag: Option<String>,
    error: Option<ConfigError>,
    /// The config could not be read (its deadline passed, it was refused, or no file is at its
    /// path) and the planner goes on without it.
    done_without: bool,
}

/// One operation on one document: the I/O protocol around a [`Planner`].
///
/// `P` may be unsized, the planner is the last field and no other names `P` (`D` is its kind of
/// document), so that an engine can be seen as an `Engine<dyn Planner<Doc = D>>`: the engine's
/// own code, everything but [`Engine::new`] and [`Engine::step`]'s first line, is compiled once
/// per kind of document, not once per operation (about 90 KB of the shipped wasm).
pub struct Engine<P: Planner<Doc = D> + ?Sized, D: Document = <P as Planner>::Doc> {
    target: Target,
    rng: Rng,
    stats: Stats,
    phase: Phase,
    known: Option<Known<D>>,
    max_revision: Option<u64>,
    config: ConfigKnowledge,
    pending_doc: Option<D>,
    failures: u32,
    auth_streak_since: Option<Millis>,
    conflicts_in_row: u32,
    /// The version the last conflicted file write was planned on, and how many writes in a
    /// row were refused as conflicts on it (`engine/failure.rs`).
    conflicted_on: Option<(String, u32)>,
    stale_reads_in_row: u32,
    last_write_at: Option<Millis>,
    /// GitHub's clock, estimated from the `date` of its answers: leases are judged by it.
    clock: ClockEstimate,
    /// When the request in flight was sent (for the clock estimate).
    request_sent_at: Millis,
    /// A write whose outcome is unknown: if a read shows exactly this version, it was ours.
    unconfirmed: Option<D>,
    /// The first read's 404 named the branch, not the file ("No commit found for the ref"):
    /// the first write creates the branch first instead of finding it missing (a hint only:
    /// wrong either way costs a request, never a decision).
    branch_absent_hint: bool,
    /// The state write to send once the state branch exists (it was planned on the absent file).
    after_branch: Option<Call>,
    /// Writes in a row whose outcome stayed unknown; only a confirmed write ends the streak.
    unknown_streak: u32,
    /// Writes put off in a row because the lock was busy.
    busy_deferrals: u32,
    /// A ref document's write under way: the refs to move and the commits made so far.
    batch: Option<RefBatch>,
    /// The version known was carried from an earlier step, never read by this operation: a
    /// conflict on it means only that it was not current, and is read again at once.
    carried: bool,
    pub planner: P,
}

/// A ref document's write: a tree and a commit per ref, then one `updateRefs`.
struct RefBatch {
    writes: Vec<crate::store::RefWrite>,
    /// The tree of the ref being written, once created.
    tree: Option<String>,
    /// `(ref, new commit)`, in order.
    commits: Vec<(String, String)>,
}

impl<P: Planner> Engine<P> {
    pub fn new(planner: P, target: Target, seed: u64) -> Self {
        Engine {
            planner,
            target,
            rng: Rng::new(seed),
            stats: Stats::default(),
            phase: Phase::NotStarted,
            known: None,
            max_revision: None,
            config: ConfigKnowledge::default(),
            pending_doc: None,
            failures: 0,
            auth_streak_since: None,
            conflicts_in_row: 0,
            conflicted_on: None,
            stale_reads_in_row: 0,
            last_write_at: None,
            clock: ClockEstimate::default(),
            request_sent_at: 0,
            unconfirmed: None,
            branch_absent_hint: false,
            after_branch: None,
            unknown_streak: 0,
            busy_deferrals: 0,
            batch: None,
            carried: false,
        }
    }

    /// Starts from a version an earlier step of the job knew (its blob `sha` and document, see
    /// `store::carry`): the first plan is made on it and written with its sha, so a version
    /// that is no longer current is refused by GitHub and then read.
    pub fn with_carried(mut self, sha: String, doc: P::Doc) -> Self {
        self.max_revision = Some(doc.revision());
        self.known = Some(Known {
            sha: Some(sha),
            doc,
            etag: None,
            provenance: Provenance::Read,
        });
        self.carried = true;
        self
    }

    /// Starts from a version known without reading it (the token and payload a previous
    /// command printed): the first plan is made on it, and a conflict then reads the truth.
    pub fn with_presumed(mut self, doc: P::Doc) -> Self {
        self.max_revision = Some(doc.revision());
        self.known = Some(Known {
            sha: doc.exists().then(|| "presumed".to_string()),
            doc,
            etag: None,
            provenance: Provenance::Read,
        });
        self
    }

    /// Starts with GitHub's clock as an earlier command measured it, for a first plan made before
    /// any answer ([`Self::with_presumed`]): without it that plan stamps the local clock.
    pub fn with_clock(mut self, clock: ClockEstimate) -> Self {
        self.clock = clock;
        self
    }

    /// Starts from a revision already seen (by an earlier step of the same job): any older
    /// answer is then a stale cache, read again rather than acted on.
    pub fn with_min_revision(mut self, revision: Option<u64>) -> Self {
        self.max_revision = revision;
        self
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Feeds one event; returns the one thing to do next.
    pub fn step(&mut self, event: Event) -> Result<Step, ProtocolError> {
        let engine: &mut Engine<dyn Planner<Doc = P::Doc> + '_> = self;
        engine.step_any(event)
    }
}

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    fn step_any(&mut self, event: Event) -> Result<Step, ProtocolError> {
        let mut log = Vec::new();
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        let command = match (phase, event) {
            (Phase::NotStarted, Event::Start { now }) => match self.planner.start(now) {
                Some(outcome) => self.finish(outcome),
                None => match self.planner.first_probe() {
                    Some(question) => self.issue(question, Pending::Probe, now),
                    None if self.known.is_some() => self.decide(now, &mut log),
                    None => self.read_state(now, false),
                },
            },
            (Phase::Awaiting(sent, pending), Event::Reply { now, reply }) => {
                self.on_reply(sent, pending, now, reply, &mut log)?
            }
            // The answer, with the job being cancelled since the request went: the plan it leads
            // to is a cancelled one (an acquire it admits gives the slot back), and a sleep it
            // leads to is cut short as a cancel while sleeping is.
            (Phase::Awaiting(sent, pending), Event::CancelledReply { now, reply }) => {
                #[cfg(feature = "planted-bugs")]
                let heard = !crate::planted::active(crate::planted::Bug::CancelledReplyIgnored);
                #[cfg(not(feature = "planted-bugs"))]
                let heard = true;
                if heard {
                    self.planner.cancel();
                }
                let command = self.on_reply(sent, pending, now, reply, &mut log)?;
                if matches!(self.phase, Phase::Sleeping(_)) {
                    let then = self.step_any(Event::Cancel { now })?;
                    log.extend(then.log);
                    then.command
                } else {
                    command
                }
            }
            (Phase::Sleeping(wake), Event::Timer { now }) => match wake {
                Wake::Poll => {
                    self.stats.polls += 1;
                    self.read_state(now, true)
                }
                Wake::Reread => self.read_state(now, false),
                Wake::Retry(call, pending) => {
                    self.stats.retries += 1;
                    self.issue(call, pending, now)
                }
                Wake::Send(call, pending) => self.issue(call, pending, now),
                Wake::AfterProbe => self.after_probe(now, &mut log),
            },
            // Cancelled while sleeping: plan again at once on the state already known (time is
            // short: the runner kills the job 10 s after its first signal).
            (Phase::Sleeping(_), Event::Cancel { now }) => {
                self.planner.cancel();
                self.pending_doc = None;
                match (&self.known, &self.unconfirmed) {
                    // A write may have landed: the known version may be out of date.
                    (Some(_), None) => self.decide(now, &mut log),
                    _ => self.read_state(now, false),
                }
            }
            (phase, event) => {
                let state = match &phase {
                    Phase::NotStarted => "not started".to_string(),
                    Phase::Awaiting(c, _) => format!("awaiting the answer to {}", c.name()),
                    Phase::Sleeping(_) => "sleeping".to_string(),
                    Phase::Done => "finished".to_string(),
                };
                self.phase = phase;
                return Err(ProtocolError {
                    event: event.name().into(),
                    state,
                });
            }
        };
        Ok(Step { command, log })
    }

    /// Sends `call` now, with the time limit of this moment (so a request sent later than
    /// planned never runs far past the retry deadline).
    fn issue(&mut self, call: Call, pending: Pending, now: Millis) -> Command {
        if self.stats.requests >= MAX_REQUESTS {
            return self.fail(
                FailureCode::RequestBudget,
                format!("sent {MAX_REQUESTS} requests without finishing"),
                None,
                None,
                now,
            );
        }
        self.stats.requests += 1;
        match pending.kind() {
            RequestKind::Write => {
                self.stats.writes += 1;
                self.last_write_at = Some(now);
            }
            // The state branch's ref with the state in its commit (engine/bootstrap.rs) is the
            // job's write of the state. It is spaced from an earlier write (`send_write`), but,
            // like the tree and the commit before it, it does not hold back the next one: a job
            // whose ref was refused (another created the branch) joins the lock at once, as it
            // did when only the file write counted.
            RequestKind::Create if pending == Pending::Branch && self.after_branch.is_some() => {
                self.stats.writes += 1;
            }
            RequestKind::Read if pending == Pending::Probe => self.stats.lookups += 1,
            RequestKind::Read => self.stats.reads += 1,
            // The engine creates no slot refs (ops/slots.rs does, outside the engine).
            RequestKind::Create | RequestKind::Allocate => {}
        }
        self.request_sent_at = now;
        let timeout_ms = self.timeout_ms(now);
        self.phase = Phase::Awaiting(call.clone(), pending);
        Command::Request { call, timeout_ms }
    }

    fn timeout_ms(&self, now: Millis) -> Millis {
        match self.planner.retry_deadline() {
            Some(deadline) => deadline
                .saturating_sub(now)
                .clamp(MIN_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS),
            None => REQUEST_TIMEOUT_MS,
        }
    }

    fn read_state(&mut self, now: Millis, conditional: bool) -> Command {
        self.carried = false;
        let if_none_match = if conditional {
            self.known.as_ref().and_then(|k| k.etag.clone())
        } else {
            None
        };
        let call = match P::Doc::location(&self.target.lock) {
            Location::File { path } => Call::ReadFile {
                path,
                git_ref: Some(self.target.state_branch.clone()),
                if_none_match,
            },
            Location::Refs { names } => {
                store::refs::read_refs_call(&self.target.repository, &names)
            }
        };
        self.issue(call, Pending::StateRead, now)
    }

    /// Whether the version known closes its admission when its config cannot be read at all
    /// ([`Document::closes_without_config`]).
    fn closes_without_config(&self) -> bool {
        self.known
            .as_ref()
            .is_some_and(|k| k.doc.closes_without_config())
    }

    /// Whether the document is a file (else it lives in refs).
    fn in_file(&self) -> bool {
        matches!(P::Doc::location(&self.target.lock), Location::File { .. })
    }

    fn sleep(&mut self, until: Millis, reason: SleepReason, wake: Wake) -> Command {
        self.phase = Phase::Sleeping(wake);
        Command::Sleep {
            until_ms: until,
            reason,
        }
    }

    fn finish(&mut self, mut outcome: Outcome) -> Command {
        outcome.stats = self.stats.clone();
        if let Some(known) = &self.known {
            known.doc.report(&mut outcome);
            if let (true, true, Some(sha)) = (
                self.planner.carries(&known.doc),
                self.in_file(),
                known.sha.as_deref(),
            ) {
                outcome.carry = store::carry::encode(
                    &self.target.repository,
                    &self.target.state_branch,
                    &self.target.lock,
                    sha,
                    known.doc.render(),
                );
            }
        }
        if outcome.capacity.is_none() {
            // (What the capacity is, for the report: the newest record, whenever it was read.)
            outcome.capacity = self.capacity_record(Millis::MAX).map(|r| r.capacity);
        }
        self.phase = Phase::Done;
        Command::Finish {
            outcome: Box::new(outcome),
        }
    }

    fn fail(
        &mut self,
        code: FailureCode,
        message: String,
        class: Option<Class>,
        status: Option<u16>,
        now: Millis,
    ) -> Command {
        let failure = Failure {
            code,
            message,
            class: class.map(|c| c.word()),
            status,
        };
        let outcome = self.planner.failed(failure, now);
        self.finish(outcome)
    }

    /// The freshest capacity record we know at `server_now`: our own config read, or the one in
    /// the state. A record of the state from the future (a writer whose clock ran ahead, a hand
    /// edit) is never fresh, so it never beats one we read: else every plan would read the
    /// config again, without end, and the write would never replace it.
    fn capacity_record(&self, server_now: Millis) -> Option<&ConfigRecord> {
        let ours = self.config.record.as_ref();
        let theirs = self.known.as_ref().and_then(|k| k.doc.config_record());
        match (ours, theirs) {
            // A record newer than ours wins, a closed pool's included: a waiter that read the
            // config before it broke admits nobody once another job has seen it broken.
            (Some(a), Some(b)) => Some(if b.read_at > a.read_at && b.read_at <= server_now {
                b
            } else {
                a
            }),
            // An operation that has read no config never takes a closed pool's record (its config
            // could not be used) for it: the file may have been mended since, and only a read can
            // say so. Taken, it refused every new claim until it went stale. After the read, ours
            // is the newer, so this reads once.
            (None, Some(b)) if b.pool.as_ref().is_some_and(|p| p.invalid.is_some()) => None,
            (a, b) => a.or(b),
        }
    }

    /// After a probe's answer: read the state if it was never read, else plan again on it.
    fn after_probe(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        match &self.known {
            None => self.read_state(now, false),
            Some(_) => self.decide(now, log),
        }
    }
}
