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

use crate::store::config::{self, DEFAULT_CAPACITY};
use crate::wire::error::{ConfigError, ProtocolError};
use crate::policy::lease::{ClockEstimate, LeasePolicy};
use crate::wire::protocol::{
    Command, Event, Failure, Level, LogLine, Outcome, Reply, SleepReason, Stats, Step, TreeFile,
};
use crate::policy::retry::{classify, next_attempt_at, Class, RequestKind, RetryPolicy, Rng};
use crate::store::lock::{ConfigRecord, LockState, Removal};
use crate::wire::time::Millis;

/// A request leasehold lets run this long before it aborts it; GitHub itself kills requests
/// after 10 s.
pub const REQUEST_TIMEOUT_MS: Millis = 15_000;
/// Consecutive compare-and-swap conflicts before giving up: only a pathological pile-up gets
/// here, since every conflict means somebody else's write landed.
pub const MAX_CONFLICTS_IN_ROW: u32 = 60;
/// Re-reads allowed for stale answers, spaced [`STALE_REREAD_MS`] apart (GitHub's contents
/// cache answers with `max-age=60`).
pub const MAX_STALE_READS: u32 = 45;
pub const STALE_REREAD_MS: Millis = 2_000;
/// Writes put off in a row, at most, because somebody else had just written the lock.
pub const MAX_BUSY_DEFERRALS: u32 = 5;
/// Backoff after a compare-and-swap conflict: full jitter up to this, doubling per conflict in
/// a row, up to [`CONFLICT_BACKOFF_CAP_MS`].
pub const CONFLICT_BACKOFF_MS: Millis = 2_000;
/// The first time the state branch is found missing, wait up to this long and look again.
pub const BRANCH_CREATE_SPREAD_MS: Millis = 3_000;
pub const CONFLICT_BACKOFF_CAP_MS: Millis = 30_000;
/// Writes of one operation are at least this far apart: GitHub asks for content-generating
/// requests to be sent serially, about a second apart, and limits them to 80 a minute.
pub const MIN_WRITE_GAP_MS: Millis = 1_000;
/// A backstop on the requests of one operation, whatever else happens (a bug, a pathological
/// pile-up): past it, the operation fails with `request-budget`.
pub const MAX_REQUESTS: u32 = 10_000;
/// Attempts at one Actions API question before it counts as unanswered.
pub const PROBE_MAX_ATTEMPTS: u32 = 3;

pub fn state_path(lock: &str) -> String {
    format!("locks/{lock}.json")
}

/// The text of the README at the root of a new state branch.
pub fn branch_readme(branch: &str) -> String {
    format!(
        "# {branch}\n\nThis branch holds lock state written by leasehold (`locks/<lock>.json`).\n\
         Every change is a compare-and-swap commit made by a leasehold action; do not edit,\n\
         rebase, force-push or delete it while any lock is in use. Capacity is configured in\n\
         `locks/<lock>.config.json` on the default branch, not here.\n"
    )
}

/// Where the state an operation plans on came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// From a read: current when GitHub answered, though possibly already overtaken.
    Read,
    /// Our own write was accepted on this exact version: it was current at that moment.
    Written,
}

/// What a planner sees.
pub struct PlanCtx<'a> {
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
    pub state: &'a LockState,
    /// Whether the state file exists (an absent file plans on an empty state).
    pub exists: bool,
    pub provenance: Provenance,
    /// The capacity to admit with, when known and fresh.
    pub capacity: Option<u32>,
    /// The config file is present but invalid (capacity is then 1).
    pub config_error: Option<&'a ConfigError>,
    pub rng: &'a mut Rng,
    pub log: &'a mut Vec<LogLine>,
}

impl PlanCtx<'_> {
    pub fn info(&mut self, text: String) {
        self.log.push(LogLine {
            level: Level::Info,
            text,
        });
    }
    pub fn warn(&mut self, text: String) {
        self.log.push(LogLine {
            level: Level::Warning,
            text,
        });
    }
}

// One decision per plan, moved once: the size of a state document is no cost here.
#[allow(clippy::large_enum_variant)]
pub enum Decision {
    /// Write this version (the engine stamps its revision and `lastChange`).
    Write {
        doc: LockState,
        action: &'static str,
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
    Probe(Command),
}

pub trait Planner {
    /// Whether this operation must know the lock's capacity (it then reads the config file
    /// when the state's record of it is not fresh).
    fn needs_config(&self) -> bool;
    /// Called once with the start time. An outcome here finishes the operation before any
    /// request is sent.
    fn start(&mut self, _now: Millis) -> Option<Outcome> {
        None
    }
    /// The job is being cancelled: plan to leave. Operations that only read or only remove
    /// ignore it.
    fn cancel(&mut self) {}
    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision;
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
    /// A question to ask before the first read of the state (acquire looks up its job id).
    fn first_probe(&mut self) -> Option<Command> {
        None
    }
    /// The answer to a [`Decision::Probe`] (or [`Planner::first_probe`]): a success reply, or
    /// the failure that ended it (a refusal, a 404, or a transient failure past the budget).
    fn on_probe(
        &mut self,
        _sent: &Command,
        _answer: Result<Reply, Failure>,
        _log: &mut Vec<LogLine>,
    ) {
    }
}

/// Per-lock settings every operation needs.
#[derive(Clone, Debug)]
pub struct Target {
    pub lock: String,
    pub state_branch: String,
    /// Names the writer in commit messages and `lastChange`.
    pub holder_id: String,
    pub retry: RetryPolicy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    StateRead,
    ConfigRead,
    StateWrite,
    Tree,
    Commit,
    Branch,
    /// A question to the Actions API.
    Probe,
}

impl Pending {
    fn kind(self) -> RequestKind {
        match self {
            Pending::StateRead | Pending::ConfigRead | Pending::Probe => RequestKind::Read,
            Pending::StateWrite => RequestKind::Write,
            Pending::Tree | Pending::Commit | Pending::Branch => RequestKind::Create,
        }
    }
}

#[derive(Clone, Debug)]
enum Wake {
    Poll,
    Reread,
    Retry(Command, Pending),
    /// A planned write held back to keep writes [`MIN_WRITE_GAP_MS`] apart.
    Send(Command),
    /// A question was rate limited: go on without its answer once the limit allows a request.
    AfterProbe,
}

#[derive(Clone, Debug)]
enum Phase {
    NotStarted,
    Awaiting(Command, Pending),
    Sleeping(Wake),
    Done,
}

struct Known {
    doc: LockState,
    sha: Option<String>,
    etag: Option<String>,
    provenance: Provenance,
}

#[derive(Default)]
struct ConfigKnowledge {
    record: Option<ConfigRecord>,
    etag: Option<String>,
    error: Option<ConfigError>,
}

pub struct Engine<P> {
    pub planner: P,
    target: Target,
    rng: Rng,
    stats: Stats,
    phase: Phase,
    known: Option<Known>,
    max_revision: Option<u64>,
    config: ConfigKnowledge,
    pending_doc: Option<LockState>,
    failures: u32,
    auth_streak_since: Option<Millis>,
    conflicts_in_row: u32,
    stale_reads_in_row: u32,
    last_write_at: Option<Millis>,
    /// GitHub's clock, estimated from the `date` of its answers: leases are judged by it.
    clock: ClockEstimate,
    /// When the request in flight was sent (for the clock estimate).
    request_sent_at: Millis,
    /// A write whose outcome is unknown: if a read shows exactly this version, it was ours.
    unconfirmed: Option<LockState>,
    branch_missing_seen: bool,
    /// Writes in a row whose outcome stayed unknown; only a confirmed write ends the streak.
    unknown_streak: u32,
    /// Writes put off in a row because the lock was busy.
    busy_deferrals: u32,
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
            stale_reads_in_row: 0,
            last_write_at: None,
            clock: ClockEstimate::default(),
            request_sent_at: 0,
            unconfirmed: None,
            branch_missing_seen: false,
            unknown_streak: 0,
            busy_deferrals: 0,
        }
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
        let mut log = Vec::new();
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        let command = match (phase, event) {
            (Phase::NotStarted, Event::Start { now }) => match self.planner.start(now) {
                Some(outcome) => self.finish(outcome),
                None => match self.planner.first_probe() {
                    Some(question) => {
                        let question = self.refresh_timeout(question, now);
                        self.issue_at(question, Pending::Probe, now)
                    }
                    None => self.read_state(now, false),
                },
            },
            (Phase::Awaiting(sent, pending), Event::Reply { now, reply }) => {
                self.on_reply(sent, pending, now, reply, &mut log)?
            }
            (Phase::Sleeping(wake), Event::Timer { now }) => match wake {
                Wake::Poll => {
                    self.stats.polls += 1;
                    self.read_state(now, true)
                }
                Wake::Reread => self.read_state(now, false),
                Wake::Retry(command, pending) => {
                    self.stats.retries += 1;
                    let command = self.refresh_timeout(command, now);
                    self.issue_at(command, pending, now)
                }
                Wake::Send(command) => {
                    let command = self.refresh_timeout(command, now);
                    self.issue_at(command, Pending::StateWrite, now)
                }
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
                let event = match event {
                    Event::Start { .. } => "start",
                    Event::Reply { .. } => "reply",
                    Event::Timer { .. } => "timer",
                    Event::Cancel { .. } => "cancel",
                };
                self.phase = phase;
                return Err(ProtocolError {
                    event: event.into(),
                    state,
                });
            }
        };
        Ok(Step { command, log })
    }

    fn issue_at(&mut self, command: Command, pending: Pending, now: Millis) -> Command {
        if self.stats.requests >= MAX_REQUESTS {
            return self.fail(
                "request-budget",
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
            RequestKind::Read if pending == Pending::Probe => self.stats.lookups += 1,
            RequestKind::Read => self.stats.reads += 1,
            RequestKind::Create => {}
        }
        self.request_sent_at = now;
        self.phase = Phase::Awaiting(command.clone(), pending);
        command
    }

    /// A request sent later than planned gets the time limit of the moment it is sent, so a
    /// request never runs far past the retry deadline.
    fn refresh_timeout(&self, mut command: Command, now: Millis) -> Command {
        let fresh = self.timeout_ms(now);
        match &mut command {
            Command::ReadFile { timeout_ms, .. }
            | Command::WriteFile { timeout_ms, .. }
            | Command::CreateTree { timeout_ms, .. }
            | Command::CreateCommit { timeout_ms, .. }
            | Command::CreateBranch { timeout_ms, .. }
            | Command::GetRunAttempt { timeout_ms, .. }
            | Command::GetJob { timeout_ms, .. }
            | Command::ListJobs { timeout_ms, .. } => *timeout_ms = fresh,
            Command::Sleep { .. } | Command::Finish { .. } => {}
        }
        command
    }

    fn timeout_ms(&self, now: Millis) -> Millis {
        match self.planner.retry_deadline() {
            Some(deadline) => deadline
                .saturating_sub(now)
                .clamp(1_000, REQUEST_TIMEOUT_MS),
            None => REQUEST_TIMEOUT_MS,
        }
    }

    fn read_state(&mut self, now: Millis, conditional: bool) -> Command {
        let if_none_match = if conditional {
            self.known.as_ref().and_then(|k| k.etag.clone())
        } else {
            None
        };
        let command = Command::ReadFile {
            path: state_path(&self.target.lock),
            git_ref: Some(self.target.state_branch.clone()),
            if_none_match,
            timeout_ms: self.timeout_ms(now),
        };
        self.issue_at(command, Pending::StateRead, now)
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
        if outcome.state.is_none() {
            outcome.state = self.known.as_ref().map(|k| k.doc.clone());
        }
        if outcome.capacity.is_none() {
            outcome.capacity = self.capacity_record().map(|r| r.capacity);
        }
        self.phase = Phase::Done;
        Command::Finish {
            outcome: Box::new(outcome),
        }
    }

    fn fail(
        &mut self,
        code: &str,
        message: String,
        class: Option<Class>,
        status: Option<u16>,
        now: Millis,
    ) -> Command {
        let failure = Failure {
            code: code.into(),
            message,
            class: class.map(|c| c.name().into()),
            status,
        };
        let outcome = self.planner.failed(failure, now);
        self.finish(outcome)
    }

    /// The freshest capacity record we know: our own config read, or the one in the state.
    fn capacity_record(&self) -> Option<&ConfigRecord> {
        let ours = self.config.record.as_ref();
        let theirs = self.known.as_ref().and_then(|k| k.doc.config.as_ref());
        match (ours, theirs) {
            (Some(a), Some(b)) => Some(if b.read_at > a.read_at { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn on_reply(
        &mut self,
        sent: Command,
        pending: Pending,
        now: Millis,
        reply: Reply,
        log: &mut Vec<LogLine>,
    ) -> Result<Command, ProtocolError> {
        let date = match &reply {
            Reply::File { date, .. }
            | Reply::Written { date, .. }
            | Reply::Http { date, .. }
            | Reply::Run { date, .. }
            | Reply::Job { date, .. }
            | Reply::Jobs { date, .. } => date.as_deref(),
            _ => None,
        };
        self.clock.observe(date, self.request_sent_at, now);
        let auth_grace = match self.auth_streak_since {
            Some(since) => now.saturating_sub(since) < self.target.retry.auth_grace_ms,
            None => true,
        };
        if let Some(class) = classify(pending.kind(), &reply, now, auth_grace) {
            if matches!(&reply, Reply::Http { status: 401, .. }) {
                self.auth_streak_since.get_or_insert(now);
            }
            return Ok(self.on_failure(sent, pending, class, &reply, now, log));
        }
        self.failures = 0;
        self.auth_streak_since = None;
        let command = match (pending, reply) {
            (
                Pending::Probe,
                reply @ (Reply::Run { .. } | Reply::Job { .. } | Reply::Jobs { .. }),
            ) => {
                self.planner.on_probe(&sent, Ok(reply), log);
                self.after_probe(now, log)
            }
            (
                Pending::StateRead,
                Reply::File {
                    sha, content, etag, ..
                },
            ) => {
                match LockState::parse(&content, &self.target.lock) {
                    Err(e) => self.fail(e.code(), e.to_string(), None, None, now),
                    Ok(doc) => {
                        #[cfg(feature = "planted-bugs")]
                        if crate::planted::active(crate::planted::Bug::AcceptStaleRead) {
                            self.max_revision = None;
                        }
                        if self.max_revision.is_some_and(|max| doc.revision < max) {
                            return Ok(self.stale(now, log));
                        }
                        self.stale_reads_in_row = 0;
                        self.max_revision = Some(doc.revision);
                        // Exactly the version our unacknowledged write would have made (its
                        // revision and lastChange make it unique): that write landed.
                        let provenance = if self.unconfirmed.as_ref() == Some(&doc) {
                            self.unconfirmed = None;
                            self.unknown_streak = 0;
                            Provenance::Written
                        } else {
                            Provenance::Read
                        };
                        self.known = Some(Known {
                            doc,
                            sha: Some(sha),
                            etag,
                            provenance,
                        });
                        self.decide(now, log)
                    }
                }
            }
            (Pending::StateRead, Reply::NotModified) if self.known.is_some() => {
                self.stats.not_modified += 1;
                self.decide(now, log)
            }
            (
                Pending::ConfigRead,
                Reply::File {
                    sha, content, etag, ..
                },
            ) => {
                let path = config::config_path(&self.target.lock);
                let (capacity, lease) = match config::parse_config(&path, &content) {
                    Ok(c) => {
                        self.config.error = None;
                        (c.capacity, c.lease)
                    }
                    Err(e) => {
                        log.push(LogLine {
                            level: Level::Warning,
                            text: format!("{e}; using capacity {DEFAULT_CAPACITY}"),
                        });
                        self.config.error = Some(e);
                        (DEFAULT_CAPACITY, None)
                    }
                };
                self.config.record = Some(ConfigRecord {
                    capacity,
                    lease,
                    sha: Some(sha),
                    read_at: self.clock.server_now(now),
                });
                self.config.etag = etag;
                self.decide(now, log)
            }
            (Pending::ConfigRead, Reply::NotModified) if self.config.record.is_some() => {
                self.stats.not_modified += 1;
                if let Some(r) = self.config.record.as_mut() {
                    r.read_at = self.clock.server_now(now);
                }
                self.decide(now, log)
            }
            (Pending::StateWrite, Reply::Written { sha, .. }) => {
                let doc = self.pending_doc.take().expect("a write is pending");
                self.conflicts_in_row = 0;
                self.unknown_streak = 0;
                self.max_revision = Some(doc.revision);
                self.known = Some(Known {
                    doc,
                    sha: Some(sha),
                    etag: None,
                    provenance: Provenance::Written,
                });
                self.decide(now, log)
            }
            (Pending::Tree, Reply::Created { sha }) => {
                let command = Command::CreateCommit {
                    message: format!(
                        "leasehold: create state branch {}",
                        self.target.state_branch
                    ),
                    tree: sha,
                    timeout_ms: self.timeout_ms(now),
                };
                self.issue_at(command, Pending::Commit, now)
            }
            (Pending::Commit, Reply::Created { sha }) => {
                let command = Command::CreateBranch {
                    branch: self.target.state_branch.clone(),
                    sha,
                    timeout_ms: self.timeout_ms(now),
                };
                self.issue_at(command, Pending::Branch, now)
            }
            (Pending::Branch, Reply::Created { .. }) => {
                log.push(LogLine {
                    level: Level::Info,
                    text: format!("created state branch {}", self.target.state_branch),
                });
                self.read_state(now, false)
            }
            (pending, reply) => {
                self.phase = Phase::Awaiting(sent, pending);
                let kind = serde_json::to_value(&reply)
                    .ok()
                    .and_then(|v| v.get("kind").cloned());
                return Err(ProtocolError {
                    event: format!("reply {}", kind.map(|k| k.to_string()).unwrap_or_default()),
                    state: format!("awaiting the answer to {:?}", pending),
                });
            }
        };
        Ok(command)
    }

    fn stale(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        self.stats.stale_reads += 1;
        self.stale_reads_in_row += 1;
        if self.stale_reads_in_row > MAX_STALE_READS {
            return self.fail(
                "stale-reads",
                format!("GitHub kept answering with a version older than one already seen ({MAX_STALE_READS} times)"),
                None,
                None,
                now,
            );
        }
        log.push(LogLine {
            level: Level::Debug,
            text: "read an older version than one already seen (stale cache); reading again".into(),
        });
        self.sleep(now + STALE_REREAD_MS, SleepReason::StaleRead, Wake::Reread)
    }

    fn on_failure(
        &mut self,
        sent: Command,
        pending: Pending,
        class: Class,
        reply: &Reply,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        let (status, message) = match reply {
            Reply::Http {
                status, message, ..
            } => (Some(*status), message.clone()),
            Reply::Transport { message, .. } => (None, message.clone()),
            _ => (None, String::new()),
        };
        let what = match status {
            Some(s) => format!("{} answered {s} {message}", sent.name()),
            None => format!("{} failed: {message}", sent.name()),
        };
        if pending == Pending::Probe {
            // A question, not a lock operation. A transient failure is asked again, a few times
            // and within the probe deadline, so an unanswerable question cannot hold up the rest;
            // a rate limit is not waited out (the planner decides what to do without the answer),
            // unless it is the token's primary limit with its reset far away: then every request
            // of this operation would meet it, so it fails fast like any other request.
            if class == Class::Transient {
                self.failures += 1;
                let mut policy = self.target.retry.clone();
                policy.max_attempts_with_deadline = Some(
                    policy
                        .max_attempts_with_deadline
                        .unwrap_or(PROBE_MAX_ATTEMPTS)
                        .min(PROBE_MAX_ATTEMPTS),
                );
                policy.max_attempts = policy.max_attempts.min(PROBE_MAX_ATTEMPTS);
                if let Some(at) = next_attempt_at(
                    &policy,
                    class,
                    self.failures,
                    now,
                    self.planner.probe_deadline(),
                    &mut self.rng,
                ) {
                    log.push(LogLine {
                        level: Level::Debug,
                        text: format!("{what} ({}): asking again in {} ms", class.name(), at - now),
                    });
                    return self.sleep(at, SleepReason::Backoff, Wake::Retry(sent, pending));
                }
            }
            // The wait the lock's own requests would take after this answer, within the budget.
            let wait = match class {
                Class::RateLimited { .. } => next_attempt_at(
                    &self.target.retry,
                    class,
                    1,
                    now,
                    self.planner.retry_deadline(),
                    &mut self.rng,
                ),
                _ => None,
            };
            if matches!(class, Class::RateLimited { primary: true, .. }) && wait.is_none() {
                return self.fail(
                    "api-unavailable",
                    format!("gave up: {what} (the primary rate limit resets too far away)"),
                    Some(class),
                    status,
                    now,
                );
            }
            self.failures = 0;
            let failure = Failure {
                code: class.name().into(),
                message: what,
                class: Some(class.name().into()),
                status,
            };
            self.planner.on_probe(&sent, Err(failure), log);
            // Without the answer, but no request before GitHub allows one again.
            if let Some(at) = wait.filter(|&at| at > now) {
                self.stats.rate_limit_waits += 1;
                return self.sleep(at, SleepReason::RateLimit, Wake::AfterProbe);
            }
            return self.after_probe(now, log);
        }
        match (class, pending) {
            (Class::NotFound, Pending::StateRead) => {
                if self.max_revision.is_some() {
                    // The file was there before: a 404 now is a stale cache (or a deleted file,
                    // which leasehold never does). Never plan on it.
                    return self.stale(now, log);
                }
                self.failures = 0;
                let doc = LockState::empty(&self.target.lock);
                self.known = Some(Known {
                    doc,
                    sha: None,
                    etag: None,
                    provenance: Provenance::Read,
                });
                self.decide_absent(now, log)
            }
            (Class::NotFound, Pending::ConfigRead) => {
                self.failures = 0;
                log.push(LogLine {
                    level: Level::Info,
                    text: format!(
                        "no {} on the default branch: capacity {DEFAULT_CAPACITY}",
                        config::config_path(&self.target.lock)
                    ),
                });
                self.config = ConfigKnowledge {
                    record: Some(ConfigRecord {
                        capacity: DEFAULT_CAPACITY,
                        lease: None,
                        sha: None,
                        read_at: self.clock.server_now(now),
                    }),
                    etag: None,
                    error: None,
                };
                self.decide(now, log)
            }
            (Class::NotFound, Pending::StateWrite)
                if self.known.as_ref().is_some_and(|k| k.sha.is_some()) =>
            {
                // The file was read, so the branch exists: GitHub answers 404 to a token that
                // may read but not write.
                self.pending_doc = None;
                self.fail(
                    "refused",
                    format!("{what} (the state file exists: the token may lack contents: write on the lock repository)"),
                    Some(Class::Refusal),
                    status,
                    now,
                )
            }
            (Class::NotFound, Pending::StateWrite) => {
                // The state branch does not exist yet: create it as an orphan branch holding
                // only a README, so its commits never carry workflow files.
                self.pending_doc = None;
                if let Some(outcome) = self.planner.branch_missing(now) {
                    return self.finish(outcome);
                }
                // Jobs that start together on a new lock repository all find the branch
                // missing: the first time, wait a moment and look again, so that usually one of
                // them creates it (three requests) instead of every one of them.
                if !self.branch_missing_seen {
                    self.branch_missing_seen = true;
                    let until = now + self.rng.up_to(BRANCH_CREATE_SPREAD_MS);
                    log.push(LogLine {
                        level: Level::Info,
                        text: format!(
                            "state branch {} not found; looking again before creating it",
                            self.target.state_branch
                        ),
                    });
                    return self.sleep(until, SleepReason::Contention, Wake::Reread);
                }
                log.push(LogLine {
                    level: Level::Info,
                    text: format!(
                        "state branch {} not found; creating it",
                        self.target.state_branch
                    ),
                });
                let command = Command::CreateTree {
                    files: vec![TreeFile {
                        path: "README.md".into(),
                        content: branch_readme(&self.target.state_branch),
                    }],
                    timeout_ms: self.timeout_ms(now),
                };
                self.issue_at(command, Pending::Tree, now)
            }
            (Class::AlreadyExists, Pending::Branch) => {
                log.push(LogLine {
                    level: Level::Info,
                    text: format!(
                        "state branch {} was created by another job",
                        self.target.state_branch
                    ),
                });
                self.read_state(now, false)
            }
            (Class::Conflict, _) => {
                self.pending_doc = None;
                #[cfg(feature = "planted-bugs")]
                if crate::planted::active(crate::planted::Bug::ConflictIsFailure) {
                    return self.fail(
                        "contention",
                        format!("conflict: {what}"),
                        Some(class),
                        status,
                        now,
                    );
                }
                self.stats.conflicts += 1;
                self.conflicts_in_row += 1;
                if self.conflicts_in_row > MAX_CONFLICTS_IN_ROW {
                    return self.fail(
                        "contention",
                        format!("{MAX_CONFLICTS_IN_ROW} compare-and-swap conflicts in a row"),
                        Some(class),
                        status,
                        now,
                    );
                }
                if self.planner.retry_deadline().is_some_and(|d| now >= d) {
                    return self.fail("contention", format!("the deadline passed with the last write refused by a conflict ({what})"), Some(class), status, now);
                }
                // Every conflict means somebody else's write landed. Back off with full jitter,
                // doubling per conflict in a row, so contenders spread out instead of colliding
                // again (and a crowd starting together stays under GitHub's 80 writes a minute).
                let spread = (CONFLICT_BACKOFF_MS << (self.conflicts_in_row - 1).min(6))
                    .min(CONFLICT_BACKOFF_CAP_MS);
                let until = now + self.rng.up_to(spread);
                log.push(LogLine {
                    level: Level::Debug,
                    text: format!("conflict: {what}; reading again in {} ms", until - now),
                });
                self.sleep(until, SleepReason::Contention, Wake::Reread)
            }
            (Class::UnknownOutcome, _) => {
                // Never re-send: read back, and let the plan recognise the write by its effect
                // (or the read-back by being exactly the version this write would have made).
                self.unconfirmed = self.pending_doc.take();
                self.unknown_streak += 1;
                match next_attempt_at(
                    &self.target.retry,
                    class,
                    self.unknown_streak,
                    now,
                    self.planner.retry_deadline(),
                    &mut self.rng,
                ) {
                    Some(at) => {
                        log.push(LogLine {
                            level: Level::Warning,
                            text: format!(
                                "{what}: the write may have been applied; reading it back in {} ms",
                                at - now
                            ),
                        });
                        self.sleep(at, SleepReason::Backoff, Wake::Reread)
                    }
                    None => self.fail(
                        "api-unavailable",
                        format!("gave up after {what}"),
                        Some(class),
                        status,
                        now,
                    ),
                }
            }
            (Class::Transient | Class::RateLimited { .. }, _) => {
                self.failures += 1;
                let deadline = self.planner.retry_deadline();
                match next_attempt_at(
                    &self.target.retry,
                    class,
                    self.failures,
                    now,
                    deadline,
                    &mut self.rng,
                ) {
                    None => {
                        let budget = match deadline {
                            Some(_) => "the retry deadline passed".to_string(),
                            None => format!("{} attempts", self.failures),
                        };
                        self.fail(
                            "api-unavailable",
                            format!("gave up after {budget}: {what}"),
                            Some(class),
                            status,
                            now,
                        )
                    }
                    Some(at) => {
                        let reason = if matches!(class, Class::RateLimited { .. }) {
                            self.stats.rate_limit_waits += 1;
                            SleepReason::RateLimit
                        } else {
                            SleepReason::Backoff
                        };
                        log.push(LogLine {
                            level: Level::Warning,
                            text: format!(
                                "{} ({}): retrying in {} ms",
                                what,
                                class.name(),
                                at - now
                            ),
                        });
                        // A request that failed this way was not applied (a rate-limited or
                        // unsent write is refused before it is processed), so repeating it as is
                        // is safe; it is still a compare-and-swap.
                        self.sleep(at, reason, Wake::Retry(sent, pending))
                    }
                }
            }
            (Class::NotFound | Class::Refusal | Class::AlreadyExists, _) => {
                let hint = match status {
                    Some(401) => " (the token was refused: check the `token` input)",
                    Some(403) => " (the token lacks permission: it needs contents: write on the lock repository)",
                    Some(404) => " (repository not found, or the token cannot see it)",
                    _ => "",
                };
                self.fail("refused", format!("{what}{hint}"), Some(class), status, now)
            }
        }
    }

    /// After a probe's answer: read the state if it was never read, else plan again on it.
    fn after_probe(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        match &self.known {
            None => self.read_state(now, false),
            Some(_) => self.decide(now, log),
        }
    }

    fn decide_absent(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        self.decide_inner(now, log, false)
    }

    fn decide(&mut self, now: Millis, log: &mut Vec<LogLine>) -> Command {
        let exists = self.known.as_ref().is_some_and(|k| k.sha.is_some());
        self.decide_inner(now, log, exists)
    }

    fn decide_inner(&mut self, now: Millis, log: &mut Vec<LogLine>, exists: bool) -> Command {
        // Config records carry GitHub's time (they are shared through the state): judge their
        // freshness by it too.
        let server_now = self.clock.server_now(now);
        let fresh = self
            .capacity_record()
            .filter(|r| config::is_fresh(r, server_now))
            .cloned();
        if self.planner.needs_config() && fresh.is_none() {
            let command = Command::ReadFile {
                path: config::config_path(&self.target.lock),
                git_ref: None,
                if_none_match: self.config.etag.clone(),
                timeout_ms: self.timeout_ms(now),
            };
            return self.issue_at(command, Pending::ConfigRead, now);
        }
        let known = self.known.as_ref().expect("state known before planning");
        let lease = fresh
            .as_ref()
            .and_then(|r| r.lease.clone())
            .unwrap_or_else(LeasePolicy::unconfigured);
        let mut ctx = PlanCtx {
            now,
            server_now,
            lease,
            clock: self.clock,
            has_written: self.stats.writes > 0,
            removed: Vec::new(),
            state: &known.doc,
            exists,
            provenance: known.provenance,
            capacity: fresh.as_ref().map(|r| r.capacity),
            config_error: self.config.error.as_ref(),
            rng: &mut self.rng,
            log,
        };
        let decision = self.planner.plan(&mut ctx);
        let removed = std::mem::take(&mut ctx.removed);
        match decision {
            Decision::Write { mut doc, action } => {
                // Somebody else wrote this version less than a second ago: the lock is busy.
                // Let it settle, then read again and plan on what is there by then. This keeps
                // the writes to one lock, across all its writers, about a second apart, as
                // GitHub asks, and spares a write that would most likely conflict. At most a
                // few times in a row, so a lock that never goes quiet is still written.
                let busy = known
                    .doc
                    .last_change
                    .as_ref()
                    .filter(|c| c.by != self.target.holder_id)
                    .map(|c| c.at + MIN_WRITE_GAP_MS);
                if let (Some(settle), Provenance::Read) = (busy, known.provenance) {
                    if server_now < settle && self.busy_deferrals < MAX_BUSY_DEFERRALS {
                        self.busy_deferrals += 1;
                        let until = now + (settle - server_now) + self.rng.up_to(MIN_WRITE_GAP_MS);
                        return self.sleep(until, SleepReason::WriteSpacing, Wake::Reread);
                    }
                }
                self.busy_deferrals = 0;
                doc.stamp(server_now, &self.target.holder_id, action, removed);
                if let Some(ours) = fresh {
                    if doc.config.as_ref().is_none_or(|r| r.read_at < ours.read_at) {
                        doc.config = Some(ours);
                    }
                }
                let command = Command::WriteFile {
                    path: state_path(&self.target.lock),
                    branch: self.target.state_branch.clone(),
                    content: doc.to_document(),
                    sha: known.sha.clone(),
                    message: format!(
                        "leasehold: {action} {} by {}",
                        self.target.lock, self.target.holder_id
                    ),
                    timeout_ms: self.timeout_ms(now),
                };
                self.pending_doc = Some(doc);
                self.unconfirmed = None;
                match self
                    .last_write_at
                    .map(|t| t + MIN_WRITE_GAP_MS)
                    .filter(|&at| at > now)
                {
                    Some(at) => self.sleep(at, SleepReason::WriteSpacing, Wake::Send(command)),
                    None => self.issue_at(command, Pending::StateWrite, now),
                }
            }
            Decision::Sleep { until } => self.sleep(until.max(now), SleepReason::Poll, Wake::Poll),
            Decision::Probe(question) => {
                let question = self.refresh_timeout(question, now);
                self.issue_at(question, Pending::Probe, now)
            }
            Decision::Finish(outcome) => self.finish(outcome),
        }
    }
}
