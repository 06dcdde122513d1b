//! slots allocate: the next never-recycled number of a namespace and prefix, allocated by
//! creating the ref `refs/leasehold/slots/<namespace>/<prefix><NN>`. Ref creation is an atomic
//! create-if-absent on GitHub (docs/github-semantics.md#git-refs), so exactly one allocation
//! can ever own a number: first writer wins.
//!
//! The steps, each one request:
//!
//! 1. **List** every slot ref of the prefix (`matching-refs`), following the `Link` header's
//!    next page until there is none. NN is one more than the highest number seen (gaps are
//!    never filled). A page that names a next page which cannot be followed, a number that
//!    cannot be read, or a listing longer than [`SLOT_MAX_PAGES`] stops the allocation: a
//!    capped listing must never make a taken number look free.
//! 2. **Record**: a tree with one file, `slot.json` (namespace, prefix, who allocated and when,
//!    and this allocation's nonce), and a parentless commit of it. The ref points at that
//!    commit. Its nonce makes it this allocation's own, so a read-back can tell "ours" from
//!    "someone else's", which a ref at the default branch's head (shared by every allocator)
//!    could not. The number is the ref's name, not the record's, so one commit serves every
//!    number tried.
//! 3. **Create** the ref. 201: allocated. 422 "Reference already exists": taken; try the next
//!    number, at most [`SLOT_MAX_ATTEMPTS`] of them. A create that may have landed (a 5xx, a
//!    connection lost after sending) is never re-sent: the ref is **read back**; pointing at
//!    our commit it is ours (`allocated`), at another it is taken (next number), absent it
//!    is `unknown-outcome` (the create may still land; the number is neither ours nor free).
//!    Any other failure stops, by the exit table: `transport` when nothing can have landed
//!    (never sent, rate limited), `permission` when GitHub refused.
//!
//! Numbers are never recycled: a slot ref is never deleted or moved by leasehold, and the
//! next number is always past the highest one listed, so a gap (a number below the highest
//! whose ref is missing: never created, or deleted by someone else) is never re-issued. The
//! refs are the only record, though: if someone deletes the ref of the *highest* number, that
//! number cannot be told from one never issued and would be issued again. Slot refs must
//! therefore never be deleted (the README says so), exactly as a claimed-but-unused number is
//! only burned, never reclaimed.
//!
//! `--dry-run` runs every input check and the full listing, reports the number an allocation
//! would try first and writes nothing.

use serde_json::json;

use crate::input::{refuse_credential, validate_repository, Entropy, RawInputs, Reader};
use crate::policy::limits::{
    MIN_WRITE_GAP_MS, REQUEST_TIMEOUT_MS, SLOT_MAX_ATTEMPTS, SLOT_MAX_NUMBER, SLOT_MAX_PAGES,
    SLOT_MAX_PREFIX, SLOT_MIN_DIGITS,
};
use crate::policy::{classify, next_attempt_at, Class, RequestKind, RetryPolicy, Rng};
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{
    Call, Command, Error, Event, Failure, FailureCode, InputError, Outcome, ProtocolError, Reply,
    ResultWord, SleepReason, SlotReport, Stats, Status, Step, TreeFile, SLOT_KIND, SLOT_SCHEMA,
};

use super::claims::settings::validate_name;

/// Where slot refs live.
pub const SLOT_REF_ROOT: &str = "refs/leasehold/slots";
/// The record's file in the tree the slot ref's commit points at.
pub const SLOT_RECORD_PATH: &str = "slot.json";

/// The ref prefix every slot of `namespace` and `prefix` starts with.
pub fn slot_prefix_ref(namespace: &str, prefix: &str) -> String {
    format!("{SLOT_REF_ROOT}/{namespace}/{prefix}")
}

/// `<prefix><NN>`: the number zero-padded to at least [`SLOT_MIN_DIGITS`] digits.
pub fn slot_name(prefix: &str, number: u64) -> String {
    format!("{prefix}{number:0width$}", width = SLOT_MIN_DIGITS)
}

/// A ref of a listing, as the allocation reads it.
#[derive(Debug, PartialEq, Eq)]
pub enum Listed {
    /// Not a slot of this prefix (another prefix that starts the same, a non-numeric suffix).
    Other,
    /// A slot of this prefix with this number.
    Number(u64),
    /// A slot of this prefix whose number is past what leasehold reads: the highest number
    /// cannot be proven.
    Unreadable,
}

/// Reads one listed ref against the slot prefix ref.
pub fn read_listed(prefix_ref: &str, ref_name: &str) -> Listed {
    let Some(suffix) = ref_name.strip_prefix(prefix_ref) else {
        return Listed::Other;
    };
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
        return Listed::Other;
    }
    match suffix.parse::<u64>() {
        Ok(n) if n <= SLOT_MAX_NUMBER => Listed::Number(n),
        _ => Listed::Unreadable,
    }
}

/// The page a `Link` header's `rel="next"` target names (`…?page=N`), if it names one.
pub fn next_page_of(link_target: &str) -> Option<u32> {
    let query = link_target.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or_default();
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "page")
        .and_then(|(_, v)| v.parse().ok())
}

/// A slot prefix: `[A-Za-z0-9._-]{1,64}`, not starting with `.`, without `..`, not ending in
/// a digit (the number follows it: `v1` + `05` would read back as `v` + `105`), and never a
/// credential, also with a number after it (`ghp_` + `05` is a token's shape).
pub fn validate_prefix(input: &str, value: &str) -> Result<(), InputError> {
    refuse_credential(input, value)?;
    refuse_credential(input, &format!("{value}{}", "0".repeat(13)))?;
    let ok = !value.is_empty()
        && value.len() <= SLOT_MAX_PREFIX
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !value.starts_with('.')
        && !value.contains("..")
        && !value.ends_with(|c: char| c.is_ascii_digit());
    if !ok {
        return Err(InputError::new(
            input,
            "must match [A-Za-z0-9._-]{1,64}, not start with \".\", hold \"..\" nor end in a digit",
            value,
        ));
    }
    Ok(())
}

/// A slot namespace: a claims namespace (`[A-Za-z0-9._-]{1,100}`, never a credential) that is
/// also one git ref component (not starting with `.`, without `..`).
fn validate_namespace(input: &str, value: &str) -> Result<(), InputError> {
    validate_name(input, value)?;
    if value.starts_with('.') || value.contains("..") {
        return Err(InputError::new(
            input,
            "must not start with \".\" nor hold \"..\" (a git ref component)",
            value,
        ));
    }
    Ok(())
}

#[derive(Clone, Debug)]
pub struct SlotSettings {
    pub repository: String,
    pub namespace: String,
    pub prefix: String,
    /// Who allocates: the holder id of the GitHub job running this, when one is.
    pub by: Option<String>,
    /// The run's page, when one is.
    pub run_url: Option<String>,
    /// This allocation's own (the record's nonce: what makes its commit unique).
    pub nonce: String,
    pub dry_run: bool,
    pub retry: RetryPolicy,
}

impl SlotSettings {
    /// Reads and checks every input; nothing is sent before this succeeds.
    pub fn parse(raw: &RawInputs, entropy: &Entropy) -> Result<(Self, Vec<String>), Error> {
        let mut r = Reader::new(raw);
        let repository = r
            .get("repository")
            .or_else(|| r.get("GITHUB_REPOSITORY"))
            .ok_or_else(|| InputError::new("repository", "is required (or GITHUB_REPOSITORY)", ""))?
            .to_string();
        validate_repository("repository", &repository)?;
        let namespace = r.required("namespace")?.to_string();
        validate_namespace("namespace", &namespace)?;
        let prefix = r.required("prefix")?.to_string();
        validate_prefix("prefix", &prefix)?;
        let (by, run_url) = match r.run_identity() {
            Ok(run) => (
                Some(crate::input::holder_id(
                    &run.repository,
                    run.run_id,
                    &run.job,
                    "",
                )),
                Some(run.url),
            ),
            Err(_) => (None, None),
        };
        let s = SlotSettings {
            repository,
            namespace,
            prefix,
            by,
            run_url,
            nonce: entropy.nonce.clone(),
            dry_run: r.bool("dry-run")?.unwrap_or(false),
            retry: r.retry_policy(),
        };
        Ok((s, r.warnings))
    }

    pub fn prefix_ref(&self) -> String {
        slot_prefix_ref(&self.namespace, &self.prefix)
    }

    pub fn ref_of(&self, number: u64) -> String {
        format!(
            "{SLOT_REF_ROOT}/{}/{}",
            self.namespace,
            slot_name(&self.prefix, number)
        )
    }
}

/// The record a slot's commit carries: who allocated in which namespace and prefix, when (the
/// allocating machine's clock), and the nonce that makes the commit this allocation's own.
pub fn render_record(s: &SlotSettings, now: Millis) -> String {
    let record = json!({
        "schema": SLOT_SCHEMA,
        "kind": SLOT_KIND,
        "namespace": s.namespace,
        "prefix": s.prefix,
        "allocatedAt": format_rfc3339(now),
        "allocatedBy": s.by,
        "run": s.run_url,
        "nonce": s.nonce,
    });
    format!(
        "{}\n",
        crate::wire::pretty_text(&record).expect("record serializes")
    )
}

/// Where the allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Reading this page of the listing.
    Listing {
        page: u32,
    },
    /// Creating the record's tree.
    Tree,
    /// Creating the record's commit.
    Commit,
    /// Creating the ref of `number`.
    Creating,
    /// The create of `number` may have landed: reading the ref back.
    ReadBack,
    Done,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Listing { .. } => "listing",
            Phase::Tree => "tree",
            Phase::Commit => "commit",
            Phase::Creating => "creating",
            Phase::ReadBack => "read-back",
            Phase::Done => "finished",
        }
    }
}

pub struct SlotOp {
    s: SlotSettings,
    rng: Rng,
    phase: Phase,
    /// The request to (re)send when a timer fires.
    pending: Option<Call>,
    started_at: Millis,
    highest: Option<u64>,
    number: Option<u64>,
    tree: Option<String>,
    commit: Option<String>,
    taken: Vec<u64>,
    /// Failed answers in a row (reset by every success), for the retry policy.
    failures: u32,
    stats: Stats,
}

impl SlotOp {
    pub fn new(s: SlotSettings, seed: u64) -> Self {
        SlotOp {
            s,
            rng: Rng::new(seed),
            phase: Phase::Listing { page: 1 },
            pending: None,
            started_at: 0,
            highest: None,
            number: None,
            tree: None,
            commit: None,
            taken: Vec::new(),
            failures: 0,
            stats: Stats::default(),
        }
    }

    pub fn settings(&self) -> &SlotSettings {
        &self.s
    }

    /// Feeds one event and returns the one thing to do next.
    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        if self.phase == Phase::Done {
            return Err(illegal(&event, self.phase.name()));
        }
        let command = match event {
            Event::Start { now } => {
                if self.pending.is_some() || self.stats.requests > 0 {
                    return Err(illegal(&event, self.phase.name()));
                }
                self.started_at = now;
                let call = self.list_call(1);
                self.send(call)
            }
            Event::Timer { .. } => match self.pending.clone() {
                Some(call) => self.send(call),
                None => return Err(illegal(&event, self.phase.name())),
            },
            Event::Cancel { .. } => match self.phase {
                // Nothing of ours is in flight while sleeping, except a create whose read-back
                // is waiting: that one may have landed.
                Phase::ReadBack => self.unknown("cancelled before the read-back answered"),
                _ => self.stop(
                    Status::Transport,
                    "cancelled: nothing was allocated".into(),
                    None,
                ),
            },
            Event::Reply { now, reply } => self.on_reply(now, reply)?,
            Event::CancelledReply { .. } => unreachable!("Cancellable hands it over as a reply"),
        };
        Ok(Step {
            command,
            log: Vec::new(),
        })
    }

    fn list_call(&self, page: u32) -> Call {
        Call::ListMatchingRefs {
            prefix: self.s.prefix_ref(),
            page,
        }
    }

    fn create_call(&self) -> Call {
        Call::CreateRef {
            ref_name: self.s.ref_of(self.number.expect("a number")),
            sha: self.commit.clone().expect("a commit"),
        }
    }

    fn send(&mut self, call: Call) -> Command {
        self.stats.requests += 1;
        match call {
            Call::ListMatchingRefs { .. } | Call::GetRef { .. } => self.stats.reads += 1,
            _ => self.stats.writes += 1,
        }
        self.pending = Some(call.clone());
        Command::Request {
            call,
            timeout_ms: REQUEST_TIMEOUT_MS,
        }
    }

    fn sleep(&mut self, until_ms: Millis, reason: SleepReason, call: Call) -> Command {
        self.pending = Some(call);
        Command::Sleep { until_ms, reason }
    }

    fn report(&self, status: Status, detail: String) -> SlotReport {
        let number = self.number;
        SlotReport {
            status,
            repository: self.s.repository.clone(),
            namespace: self.s.namespace.clone(),
            prefix: self.s.prefix.clone(),
            number,
            name: number.map(|n| slot_name(&self.s.prefix, n)),
            ref_name: number.map(|n| self.s.ref_of(n)),
            commit: self.commit.clone(),
            highest: self.highest,
            taken: self.taken.clone(),
            read_back: false,
            detail,
            dry_run: self.s.dry_run,
        }
    }

    fn finish(&mut self, report: SlotReport, error: Option<Failure>) -> Command {
        self.phase = Phase::Done;
        self.pending = None;
        let mut o = Outcome::settled(
            ResultWord::Acquired,
            report.status.exit_code() == 0,
            &format!("{}/{}", self.s.namespace, self.s.prefix),
            self.s.by.as_deref().unwrap_or(""),
        );
        o.stats = self.stats.clone();
        o.error = error;
        o.slots = Some(report);
        Command::Finish {
            outcome: Box::new(o),
        }
    }

    /// Stops without a slot (the number reached, if any, is reported but is not ours).
    fn stop(&mut self, status: Status, detail: String, error: Option<Failure>) -> Command {
        let mut report = self.report(status, detail);
        if status.exit_code() != 0 && status != Status::UnknownOutcome {
            report.name = None;
            report.ref_name = None;
            report.number = None;
        }
        self.finish(report, error)
    }

    fn unknown(&mut self, why: &str) -> Command {
        let r = self.s.ref_of(self.number.expect("a number"));
        let detail = format!(
            "the create of {r} may have landed ({why}): it is ours only if it points at {}; \
             the number is neither proven ours nor free",
            self.commit.as_deref().unwrap_or_default()
        );
        let failure = Failure {
            code: FailureCode::ApiUnavailable,
            message: detail.clone(),
            class: Some(Class::UnknownOutcome.word()),
            status: None,
        };
        self.stop(Status::UnknownOutcome, detail, Some(failure))
    }

    fn failed(
        &mut self,
        status: Status,
        code: FailureCode,
        class: Option<Class>,
        what: String,
    ) -> Command {
        let failure = Failure {
            code,
            message: what.clone(),
            class: class.map(|c| c.word()),
            status: None,
        };
        self.stop(status, what, Some(failure))
    }

    /// A failed read (listing page, tree, commit, read-back): retried within the retry policy
    /// when it may pass, else `None` with the class.
    fn retry(&mut self, class: Class, now: Millis) -> Option<Command> {
        if !matches!(class, Class::Transient | Class::RateLimited { .. }) {
            return None;
        }
        self.failures += 1;
        let at = next_attempt_at(
            &self.s.retry,
            class,
            self.failures,
            now,
            None,
            &mut self.rng,
        )?;
        self.stats.retries += 1;
        if matches!(class, Class::RateLimited { .. }) {
            self.stats.rate_limit_waits += 1;
        }
        let call = self.pending.clone().expect("a request was sent");
        Some(self.sleep(at, SleepReason::Backoff, call))
    }

    fn on_reply(&mut self, now: Millis, reply: Reply) -> Result<Command, Error> {
        let kind = match self.phase {
            Phase::Listing { .. } | Phase::ReadBack => RequestKind::Read,
            Phase::Tree | Phase::Commit => RequestKind::Create,
            Phase::Creating => RequestKind::Allocate,
            Phase::Done => unreachable!("checked in step"),
        };
        if self.pending.is_none() {
            return Err(ProtocolError {
                event: "reply".into(),
                state: format!("{} (no request in flight)", self.phase.name()),
            }
            .into());
        }
        let class = classify(kind, &reply, now, false);
        let command = match (self.phase, class) {
            (Phase::Listing { page }, None) => self.on_page(page, reply)?,
            (Phase::Tree, None) => {
                self.failures = 0;
                self.tree = Some(created(reply, "createTree")?);
                let call = Call::CreateCommit {
                    message: format!(
                        "leasehold: slot allocation in {}/{}{}",
                        self.s.namespace,
                        self.s.prefix,
                        self.s
                            .by
                            .as_deref()
                            .map(|b| format!(" by {b}"))
                            .unwrap_or_default()
                    ),
                    tree: self.tree.clone().expect("tree"),
                    parents: Vec::new(),
                };
                self.phase = Phase::Commit;
                self.send(call)
            }
            (Phase::Commit, None) => {
                self.failures = 0;
                self.commit = Some(created(reply, "createCommit")?);
                self.phase = Phase::Creating;
                let call = self.create_call();
                self.send(call)
            }
            (Phase::Creating, None) => {
                created(reply, "createRef")?;
                let n = self.number.expect("a number");
                let detail = format!("{} is ours", slot_name(&self.s.prefix, n));
                let report = self.report(Status::Allocated, detail);
                self.finish(report, None)
            }
            (Phase::Creating, Some(Class::AlreadyExists)) => self.taken_next(now),
            (Phase::Creating, Some(Class::UnknownOutcome)) => {
                self.failures = 0;
                self.phase = Phase::ReadBack;
                let call = Call::GetRef {
                    ref_name: self.s.ref_of(self.number.expect("a number")),
                };
                self.send(call)
            }
            (Phase::Creating, Some(c @ (Class::Transient | Class::RateLimited { .. }))) => self
                .failed(
                    Status::Transport,
                    FailureCode::ApiUnavailable,
                    Some(c),
                    format!(
                        "the create of {} was not applied ({}); nothing was allocated",
                        self.s.ref_of(self.number.expect("a number")),
                        c.name()
                    ),
                ),
            (Phase::Creating, Some(c)) => self.failed(
                Status::Permission,
                FailureCode::Refused,
                Some(c),
                format!(
                    "GitHub refused the create of {} ({}); nothing was allocated",
                    self.s.ref_of(self.number.expect("a number")),
                    c.name()
                ),
            ),
            (Phase::ReadBack, None) => {
                let Reply::GitRef { sha, .. } = &reply else {
                    return Err(unexpected("getRef", &reply));
                };
                let sha = sha.clone();
                if Some(&sha) == self.commit.as_ref() {
                    let n = self.number.expect("a number");
                    let detail = format!(
                        "{} is ours (its create's answer was lost; the read-back shows our commit)",
                        slot_name(&self.s.prefix, n)
                    );
                    let mut report = self.report(Status::Allocated, detail);
                    report.read_back = true;
                    self.finish(report, None)
                } else {
                    // Another allocation's commit: the number is taken, and our create (which
                    // cannot replace an existing ref) did not land.
                    self.taken_next(now)
                }
            }
            (Phase::ReadBack, Some(Class::NotFound)) => {
                self.unknown("the read-back found no ref yet")
            }
            (Phase::ReadBack, Some(c)) => match self.retry(c, now) {
                Some(cmd) => cmd,
                None => self.unknown(&format!("the read-back failed: {}", c.name())),
            },
            (Phase::Listing { .. } | Phase::Tree | Phase::Commit, Some(c)) => {
                match self.retry(c, now) {
                    Some(cmd) => cmd,
                    None => {
                        let what = match self.phase {
                            Phase::Listing { .. } => "the slot listing",
                            Phase::Tree => "the record's tree",
                            _ => "the record's commit",
                        };
                        if matches!(c, Class::Transient | Class::RateLimited { .. }) {
                            self.failed(
                                Status::Transport,
                                FailureCode::ApiUnavailable,
                                Some(c),
                                format!("{what} failed past the retry budget ({}); nothing was allocated", c.name()),
                            )
                        } else {
                            self.failed(
                                Status::Permission,
                                FailureCode::Refused,
                                Some(c),
                                format!(
                                    "GitHub refused {what} ({}); nothing was allocated",
                                    c.name()
                                ),
                            )
                        }
                    }
                }
            }
            (Phase::Done, _) => unreachable!("checked in step"),
        };
        Ok(command)
    }

    /// The number was taken by someone else: try the next one, a write gap later.
    fn taken_next(&mut self, now: Millis) -> Command {
        self.failures = 0;
        let n = self.number.expect("a number");
        self.taken.push(n);
        if self.taken.len() as u32 >= SLOT_MAX_ATTEMPTS {
            return self.failed(
                Status::Contended,
                FailureCode::Contention,
                Some(Class::AlreadyExists),
                format!(
                    "{SLOT_MAX_ATTEMPTS} numbers in a row were taken by others; nothing was allocated"
                ),
            );
        }
        if n + 1 > SLOT_MAX_NUMBER {
            return self.failed(
                Status::Stale,
                FailureCode::StateInvalid,
                None,
                format!("no number past {n} is allocated (the highest is {SLOT_MAX_NUMBER})"),
            );
        }
        self.number = Some(n + 1);
        self.phase = Phase::Creating;
        let call = self.create_call();
        self.sleep(now + MIN_WRITE_GAP_MS, SleepReason::WriteSpacing, call)
    }

    fn on_page(&mut self, page: u32, reply: Reply) -> Result<Command, Error> {
        let Reply::Refs { refs, next, .. } = reply else {
            return Err(unexpected("listMatchingRefs", &reply));
        };
        self.failures = 0;
        let prefix_ref = self.s.prefix_ref();
        for r in &refs {
            match read_listed(&prefix_ref, &r.ref_name) {
                Listed::Other => {}
                Listed::Number(n) => self.highest = Some(self.highest.map_or(n, |h| h.max(n))),
                Listed::Unreadable => {
                    return Ok(self.failed(
                        Status::Stale,
                        FailureCode::StateInvalid,
                        None,
                        format!(
                        "{} carries a number past {SLOT_MAX_NUMBER}: the highest cannot be proven",
                        r.ref_name
                    ),
                    ))
                }
            }
        }
        if let Some(target) = next {
            // GitHub says there is more: read it, never take this page for the end.
            return Ok(match next_page_of(&target) {
                Some(p) if p == page + 1 && p <= SLOT_MAX_PAGES => {
                    self.phase = Phase::Listing { page: p };
                    let call = self.list_call(p);
                    self.send(call)
                }
                // Our cap, not GitHub's answer: retrying cannot help, so not `transport`.
                Some(p) if p == page + 1 => self.failed(
                    Status::Stale,
                    FailureCode::RequestBudget,
                    None,
                    format!(
                        "the slot listing names a page past {SLOT_MAX_PAGES}: it is not read to its end, so no number is proven free"
                    ),
                ),
                _ => self.failed(
                    Status::Stale,
                    FailureCode::StateInvalid,
                    None,
                    format!(
                        "page {page} of the slot listing names a next page that cannot be followed ({target:?}): no number is proven free"
                    ),
                ),
            });
        }
        let number = self.highest.map_or(1, |h| h + 1);
        if number > SLOT_MAX_NUMBER {
            return Ok(self.failed(
                Status::Stale,
                FailureCode::StateInvalid,
                None,
                format!("no number past {SLOT_MAX_NUMBER} is allocated"),
            ));
        }
        self.number = Some(number);
        if self.s.dry_run {
            let detail = format!(
                "dry run: nothing was written; {} would be tried first",
                slot_name(&self.s.prefix, number)
            );
            let report = self.report(Status::Allocated, detail);
            return Ok(self.finish(report, None));
        }
        self.phase = Phase::Tree;
        let call = Call::CreateTree {
            files: vec![TreeFile {
                path: SLOT_RECORD_PATH.into(),
                content: render_record(&self.s, self.started_at),
            }],
        };
        Ok(self.send(call))
    }
}

fn created(reply: Reply, call: &str) -> Result<String, Error> {
    match reply {
        Reply::Created { sha } => Ok(sha),
        other => Err(unexpected(call, &other)),
    }
}

/// An event the state machine does not expect in `state` (a protocol error: the driver's bug).
pub(crate) fn illegal(event: &Event, state: &str) -> Error {
    ProtocolError {
        event: event.name().into(),
        state: state.into(),
    }
    .into()
}

/// A success answer of the wrong shape for the request: the driver's bug, not GitHub's answer.
pub(crate) fn unexpected(call: &str, reply: &Reply) -> Error {
    ProtocolError {
        event: format!("reply {}", reply.kind()),
        state: format!("waiting for the answer to {call}"),
    }
    .into()
}

impl super::cancelled::Steps for SlotOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        SlotOp::step(self, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_listed_refs() {
        assert_eq!(slot_name("acct", 5), "acct05");
        assert_eq!(slot_name("acct", 251), "acct251");
        let p = slot_prefix_ref("ns", "acct");
        assert_eq!(p, "refs/leasehold/slots/ns/acct");
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/acct07"),
            Listed::Number(7)
        );
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/acct0100"),
            Listed::Number(100)
        );
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/acct-old05"),
            Listed::Other
        );
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/acct"),
            Listed::Other
        );
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/other01"),
            Listed::Other
        );
        assert_eq!(
            read_listed(&p, "refs/leasehold/slots/ns/acct99999999999999999999999"),
            Listed::Unreadable
        );
    }

    #[test]
    fn next_pages() {
        assert_eq!(
            next_page_of("https://api.github.com/repositories/1/git/matching-refs/x?page=2"),
            Some(2)
        );
        assert_eq!(next_page_of("http://h/x?per_page=100&page=3"), Some(3));
        assert_eq!(next_page_of("http://h/x?cursor=abc"), None);
        assert_eq!(next_page_of("http://h/x"), None);
    }

    #[test]
    fn prefix_rules() {
        for ok in ["acct", "a", "x-", "shard_", "v1.x", "A.b-c_"] {
            assert!(validate_prefix("prefix", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "v1",
            ".x",
            "a..b",
            "a/b",
            "a b",
            "ghp_",
            "sk-abcdefghijklm",
            &"a".repeat(65),
        ] {
            assert!(validate_prefix("prefix", bad).is_err(), "{bad}");
        }
    }
}
