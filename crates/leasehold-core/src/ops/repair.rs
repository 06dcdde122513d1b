//! repair: the operator's way back from a state file broken by hand (not JSON, a duplicated
//! holder, a fence below a holder's, a holder also queued, a file past the size limit, a newer
//! schema, wrong types). It rewrites the file as a valid empty state whose fence counter is the
//! highest fence any version of the file ever handed out, so the next fence is above every one
//! of them and no fence is ever reused.
//!
//! The steps, each one request:
//!
//! 1. **Read** the current version. Valid (or absent): nothing to repair (`noop`), nothing else
//!    is sent. Broken: its sha is kept for the compare-and-swap, and what is wrong is reported.
//! 2. **List** the commits of the state branch that changed the file (`GET /commits?path=`),
//!    following the `Link` header's next page to its end: a history cut short could miss the
//!    highest fence. More than [`REPAIR_MAX_PAGES`] pages stops the repair.
//! 3. **Read** the file at each of those commits and take every fence it names (the counter,
//!    each holder's, each removal's) and its revision, read leniently: a broken version still
//!    counts the fences it shows. A version that is not JSON (or is absent at that commit) is
//!    skipped and counted; so is a number past [`MAX_COUNTER`], which leasehold never hands out.
//! 4. **Decide**: an empty state with `fence` = the highest fence seen and `revision` one above
//!    the highest revision seen (so no reader takes it for a stale version). Without `confirm`
//!    this is a dry run: the report says what would be written (`would-repair`) and nothing is.
//! 5. **Write** it with the broken version's sha as the precondition: if anyone changed the file
//!    meanwhile, the write is refused (409) and nothing is lost (`contended`: run it again). A
//!    write whose outcome is unknown is never re-sent: the file is read back, and is ours only
//!    if it holds exactly what was written.
//!
//! The decision (which fence, what to write) is here; the driver only performs the requests.

use serde_json::Value;

use crate::input::{validate_lock_name, Entropy, RawInputs, Reader};
use crate::policy::limits::REQUEST_TIMEOUT_MS;
use crate::policy::{classify, next_attempt_at, Class, RequestKind, RetryPolicy, Rng};
use crate::store::{Document, MAX_COUNTER};
use crate::wire::time::Millis;
use crate::wire::{
    Call, ChangeAction, Command, Error, Event, Failure, FailureCode, InputError, LockState,
    Outcome, ProtocolError, RepairReport, Reply, ResultWord, SleepReason, Stats, Status, Step,
};

use super::slots::{illegal, next_page_of, unexpected};

/// The longest history read, in pages of 100 commits: 10,000 versions of one lock's file. A
/// longer history is not read in part (its highest fence could be in the part left out).
pub const REPAIR_MAX_PAGES: u32 = 100;

/// Who the repair's change is recorded as.
const BY: &str = "leasehold repair";

#[derive(Clone, Debug)]
pub struct RepairSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub confirm: bool,
    retry: RetryPolicy,
}

impl RepairSettings {
    pub fn parse(raw: &RawInputs) -> Result<Self, InputError> {
        let mut r = Reader::new(raw);
        let lock = r.required("lock")?;
        validate_lock_name("lock", lock)?;
        let (repository, state_branch) = r.lock_location(|| {
            InputError::new(
                "repository",
                "is required (the lock repository, owner/name) outside a workflow run",
                "",
            )
        })?;
        let confirm = r.bool("confirm")?.unwrap_or(false);
        let retry = r.retry_policy();
        Ok(RepairSettings {
            lock: lock.into(),
            repository,
            state_branch,
            confirm,
            retry,
        })
    }

    pub fn path(&self) -> String {
        match <LockState as Document>::location(&self.lock) {
            crate::store::Location::File { path } => path,
            crate::store::Location::Refs { .. } => unreachable!("a lock state is a file"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Current,
    Listing { page: u32 },
    Version { index: usize },
    Writing,
    ReadBack,
    Done,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Current => "reading the current version",
            Phase::Listing { .. } => "listing the history",
            Phase::Version { .. } => "reading a version",
            Phase::Writing => "writing",
            Phase::ReadBack => "reading back",
            Phase::Done => "finished",
        }
    }
}

/// What the versions read so far show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    pub fence: u64,
    pub revision: u64,
    pub read: u32,
    pub skipped: u32,
    /// The newest version (by revision) that reads as a valid state: its lifecycle (the slots
    /// kept after their holders left, the incident) and its pool books are carried into the
    /// repaired state, so a repair never frees what the lifecycle keeps (docs/lifecycle.md).
    pub kept: Option<LockState>,
}

impl History {
    /// Takes every fence and the revision `text` names, leniently (a broken version still
    /// shows the fences it handed out), and the version itself when it is a valid state newer
    /// than the one kept. Returns whether it was readable at all.
    pub fn take(&mut self, text: &str, lock: &str) -> bool {
        self.read += 1;
        let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(text) else {
            self.skipped += 1;
            return false;
        };
        // Read as a state only when it would be newer than the one kept (the history comes
        // newest first, so mostly once).
        let newer = |k: &LockState| doc.get("revision").and_then(Value::as_u64) > Some(k.revision);
        if self.kept.as_ref().is_none_or(newer) {
            if let Ok(state) = LockState::parse(text, lock) {
                self.kept = Some(state);
            }
        }
        let counter = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|&n| n <= MAX_COUNTER);
        let mut fences: Vec<u64> = counter(doc.get("fence")).into_iter().collect();
        for list in [
            doc.get("holders"),
            doc.get("lastChange").and_then(|c| c.get("removed")),
        ] {
            if let Some(Value::Array(items)) = list {
                fences.extend(items.iter().filter_map(|h| counter(h.get("fence"))));
            }
        }
        if let Some(r) = counter(doc.get("revision")) {
            self.revision = self.revision.max(r);
        }
        match fences.into_iter().max() {
            Some(f) => {
                self.fence = self.fence.max(f);
                true
            }
            None => {
                self.skipped += 1;
                false
            }
        }
    }

    /// The state that replaces the broken one: no holders and no queue, its fence counter at
    /// the highest fence ever handed out, its revision above every one seen, and the lifecycle
    /// and pool books of the newest valid version (at its schema), so a quarantined resource
    /// stays quarantined and a standing incident still stands.
    pub fn replacement(&self, lock: &str, now: Millis) -> LockState {
        let mut state = LockState::empty(lock);
        if let Some(kept) = &self.kept {
            state.schema = kept.schema;
            state.reservations = kept.reservations.clone();
            state.incident = kept.incident.clone();
            state.pool = kept.pool.clone();
        }
        state.fence = self.fence;
        state.revision = self.revision;
        state.stamp(now, BY, ChangeAction::Repair, Vec::new());
        state
    }
}

pub struct RepairOp {
    s: RepairSettings,
    rng: Rng,
    phase: Phase,
    pending: Option<Call>,
    started_at: Millis,
    /// The broken version: its sha and what is wrong with it.
    broken: Option<(String, String)>,
    commits: Vec<String>,
    history: History,
    content: Option<String>,
    failures: u32,
    stats: Stats,
}

impl RepairOp {
    pub fn new(s: RepairSettings, entropy: &Entropy) -> Self {
        RepairOp {
            s,
            rng: Rng::new(entropy.seed),
            phase: Phase::Current,
            pending: None,
            started_at: 0,
            broken: None,
            commits: Vec::new(),
            history: History::default(),
            content: None,
            failures: 0,
            stats: Stats::default(),
        }
    }

    pub fn settings(&self) -> &RepairSettings {
        &self.s
    }

    /// Feeds one event and returns the one thing to do next.
    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        if self.phase == Phase::Done {
            return Err(illegal(&event, self.phase.name()));
        }
        let command = match event {
            Event::Start { now } => {
                if self.stats.requests > 0 {
                    return Err(illegal(&event, self.phase.name()));
                }
                self.started_at = now;
                let call = self.read_call(None);
                self.send(call)
            }
            Event::Timer { .. } => match self.pending.clone() {
                Some(call) => self.send(call),
                None => return Err(illegal(&event, self.phase.name())),
            },
            Event::Cancel { .. } => match self.phase {
                Phase::ReadBack => self.unknown("cancelled before the read-back answered"),
                _ => self.stop(
                    Status::Cancelled,
                    "cancelled: nothing was written".into(),
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

    fn read_call(&self, commit: Option<&str>) -> Call {
        Call::ReadFile {
            path: self.s.path(),
            git_ref: Some(commit.unwrap_or(&self.s.state_branch).to_string()),
            if_none_match: None,
        }
    }

    fn send(&mut self, call: Call) -> Command {
        self.stats.requests += 1;
        match call {
            Call::WriteFile { .. } => self.stats.writes += 1,
            _ => self.stats.reads += 1,
        }
        self.pending = Some(call.clone());
        Command::Request {
            call,
            timeout_ms: REQUEST_TIMEOUT_MS,
        }
    }

    fn report(&self, status: Status, detail: String, written: bool) -> RepairReport {
        let decided = self.content.is_some();
        RepairReport {
            status,
            path: self.s.path(),
            branch: self.s.state_branch.clone(),
            problem: self.broken.as_ref().map(|(_, p)| p.clone()),
            versions_read: self.history.read,
            versions_skipped: self.history.skipped,
            fence: decided.then_some(self.history.fence),
            revision: decided.then_some(self.history.revision + 1),
            content: self.content.clone(),
            written,
            confirm: self.s.confirm,
            detail,
        }
    }

    fn finish(&mut self, report: RepairReport, error: Option<Failure>) -> Command {
        self.phase = Phase::Done;
        self.pending = None;
        let ok = report.status.exit_code() == 0;
        let result = match report.status {
            Status::Noop => ResultWord::Noop,
            _ if ok => ResultWord::Status,
            _ => ResultWord::Failed,
        };
        let mut o = Outcome::new(result, ok, &self.s.lock, BY);
        o.stats = self.stats.clone();
        o.error = error;
        o.repair = Some(report);
        Command::Finish {
            outcome: Box::new(o),
        }
    }

    fn stop(&mut self, status: Status, detail: String, error: Option<Failure>) -> Command {
        let report = self.report(status, detail, false);
        self.finish(report, error)
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

    fn unknown(&mut self, why: &str) -> Command {
        let detail = format!(
            "the repair's write of {} may have landed ({why}): read the file; it is repaired only if it holds the content reported here",
            self.s.path()
        );
        let failure = Failure {
            code: FailureCode::ApiUnavailable,
            message: detail.clone(),
            class: Some(Class::UnknownOutcome.word()),
            status: None,
        };
        self.stop(Status::UnknownOutcome, detail, Some(failure))
    }

    /// A failed read: retried within the retry policy when it may pass.
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
        self.pending = Some(self.pending.clone().expect("a request was sent"));
        Some(Command::Sleep {
            until_ms: at,
            reason: SleepReason::Backoff,
        })
    }

    fn give_up(&mut self, class: Class) -> Command {
        let (status, code) = match class {
            Class::Refusal | Class::NotFound => (Status::Permission, FailureCode::Refused),
            Class::RateLimited { .. } => (Status::Transport, FailureCode::RateLimited),
            _ => (Status::Transport, FailureCode::ApiUnavailable),
        };
        let what = format!(
            "GitHub did not answer {} ({}): nothing was written",
            self.pending.as_ref().map_or("a request", Call::name),
            class.name()
        );
        self.failed(status, code, Some(class), what)
    }

    fn on_reply(&mut self, now: Millis, reply: Reply) -> Result<Command, Error> {
        if self.pending.is_none() {
            return Err(ProtocolError {
                event: "reply".into(),
                state: format!("{} (no request in flight)", self.phase.name()),
            }
            .into());
        }
        let kind = match self.phase {
            Phase::Writing => RequestKind::Write,
            _ => RequestKind::Read,
        };
        // Something other than a file at the path: now, nothing repair can write over; at a
        // commit of its history, no state to count, as at a commit that deleted the file.
        let class = match (&reply, self.phase) {
            (Reply::NotAFile { found, .. }, Phase::Current) => {
                let what = format!(
                    "{} on {}: GitHub lists a {found} there, not a file leasehold can read; repair writes a file, so move it out of the way on that branch first; nothing was written",
                    self.s.path(),
                    self.s.state_branch
                );
                return Ok(self.failed(Status::Stale, FailureCode::StateInvalid, None, what));
            }
            (Reply::NotAFile { .. }, Phase::Version { .. }) => Some(Class::NotFound),
            _ => classify(kind, &reply, now, false),
        };
        Ok(match (self.phase, class) {
            (Phase::Current, None) => self.on_current(reply)?,
            (Phase::Current, Some(Class::NotFound)) => self.stop(
                Status::Noop,
                format!("{} does not exist on {}: nothing to repair", self.s.path(), self.s.state_branch),
                None,
            ),
            (Phase::Listing { page }, None) => self.on_page(page, reply)?,
            (Phase::Version { index }, None) => {
                let Reply::File { content, .. } = reply else {
                    return Err(unexpected("readFile", &reply));
                };
                self.failures = 0;
                self.history.take(&content, &self.s.lock);
                self.next_version(index + 1, now)
            }
            // The file is absent at that commit (a commit that deleted it, or one that put
            // something other than a file there): nothing to count.
            (Phase::Version { index }, Some(Class::NotFound)) => {
                self.failures = 0;
                self.history.read += 1;
                self.history.skipped += 1;
                self.next_version(index + 1, now)
            }
            (Phase::Writing, None) => {
                let Reply::Written { .. } = reply else {
                    return Err(unexpected("writeFile", &reply));
                };
                self.repaired(false)
            }
            (Phase::Writing, Some(Class::Conflict)) => self.failed(
                Status::Contended,
                FailureCode::Contention,
                Some(Class::Conflict),
                format!(
                    "{} changed while it was being repaired: nothing was written; read it and run repair again",
                    self.s.path()
                ),
            ),
            (Phase::Writing, Some(Class::UnknownOutcome)) => {
                self.phase = Phase::ReadBack;
                let call = self.read_call(None);
                self.send(call)
            }
            (Phase::ReadBack, None) => {
                let Reply::File { content, .. } = reply else {
                    return Err(unexpected("readFile", &reply));
                };
                if Some(&content) == self.content.as_ref() {
                    self.repaired(true)
                } else {
                    // Not proof that nothing was written: the broken version read back may be a
                    // stale copy, and any other may have followed the repair's.
                    self.unknown(
                        "the read-back shows another version than the repair's: a stale copy, or a write after it",
                    )
                }
            }
            (_, Some(class)) => match self.retry(class, now) {
                Some(command) => command,
                None if self.phase == Phase::ReadBack => self.unknown("the read-back failed"),
                None => self.give_up(class),
            },
            (Phase::Done, None) => unreachable!("checked in step"),
        })
    }

    fn on_current(&mut self, reply: Reply) -> Result<Command, Error> {
        let Reply::File { sha, content, .. } = reply else {
            return Err(unexpected("readFile", &reply));
        };
        self.failures = 0;
        match LockState::parse(&content, &self.s.lock) {
            Ok(state) => Ok(self.stop(
                Status::Noop,
                format!(
                    "{} on {} is a valid state (revision {}, fence {}): nothing to repair",
                    self.s.path(),
                    self.s.state_branch,
                    state.revision,
                    state.fence
                ),
                None,
            )),
            // Not broken: a newer leasehold wrote it. Rewritten by this one, its holders,
            // reservations and incident would be dropped (docs/operations.md): refused.
            Err(e @ crate::wire::StateError::NewerSchema { .. }) => Ok(self.failed(
                Status::Stale,
                FailureCode::StateNewerSchema,
                None,
                format!(
                    "{} on {}: {e}. A newer leasehold wrote it: it is not broken, and repairing it would drop what that version keeps; nothing was written",
                    self.s.path(),
                    self.s.state_branch
                ),
            )),
            Err(e) => {
                self.broken = Some((sha, e.to_string()));
                self.phase = Phase::Listing { page: 1 };
                let call = self.list_call(1);
                Ok(self.send(call))
            }
        }
    }

    fn list_call(&self, page: u32) -> Call {
        Call::ListCommits {
            path: self.s.path(),
            branch: self.s.state_branch.clone(),
            page,
        }
    }

    fn on_page(&mut self, page: u32, reply: Reply) -> Result<Command, Error> {
        let Reply::Commits { shas, next, .. } = reply else {
            return Err(unexpected("listCommits", &reply));
        };
        self.failures = 0;
        for sha in shas {
            if !self.commits.contains(&sha) {
                self.commits.push(sha);
            }
        }
        if let Some(target) = next {
            return Ok(match next_page_of(&target) {
                Some(p) if p == page + 1 && p <= REPAIR_MAX_PAGES => {
                    self.phase = Phase::Listing { page: p };
                    let call = self.list_call(p);
                    self.send(call)
                }
                Some(p) if p == page + 1 => self.failed(
                    Status::Stale,
                    FailureCode::RequestBudget,
                    None,
                    format!(
                        "the history of {} is longer than {REPAIR_MAX_PAGES} pages: it is not read in part, so no fence counter is proven; nothing was written",
                        self.s.path()
                    ),
                ),
                _ => self.failed(
                    Status::Stale,
                    FailureCode::StateInvalid,
                    None,
                    format!(
                        "page {page} of the history names a next page that cannot be followed ({target:?}): nothing was written"
                    ),
                ),
            });
        }
        Ok(self.next_version(0, 0))
    }

    /// Reads the version at `index`, or decides once every version is read.
    fn next_version(&mut self, index: usize, _now: Millis) -> Command {
        if let Some(sha) = self.commits.get(index).cloned() {
            self.phase = Phase::Version { index };
            let call = self.read_call(Some(&sha));
            return self.send(call);
        }
        self.decide()
    }

    fn decide(&mut self) -> Command {
        let state = self.history.replacement(&self.s.lock, self.started_at);
        let content = state.to_document();
        if let Err(e) = LockState::parse(&content, &self.s.lock) {
            let what =
                format!("the repaired state would not be readable ({e}): nothing was written");
            return self.failed(Status::Stale, e.code(), None, what);
        }
        self.content = Some(content.clone());
        let kept = match (&state.incident, state.reservations.len()) {
            (None, 0) => String::new(),
            (incident, n) => format!(
                ", keeping the {n} reservation(s){} of revision {} (the newest valid version)",
                incident
                    .as_ref()
                    .map_or(String::new(), |i| format!(" and incident {}", i.id)),
                self.history.kept.as_ref().map_or(0, |k| k.revision)
            ),
        };
        let summary = format!(
            "an empty state keeping the fence counter at {} (the highest fence of {} versions read, {} skipped) at revision {}{kept}",
            self.history.fence,
            self.history.read,
            self.history.skipped,
            state.revision
        );
        if !self.s.confirm {
            let detail = format!(
                "dry run: nothing was written; with confirm, {} would be rewritten as {summary}",
                self.s.path()
            );
            let report = self.report(Status::WouldRepair, detail, false);
            return self.finish(report, None);
        }
        let (sha, _) = self.broken.clone().expect("a broken version was read");
        self.phase = Phase::Writing;
        let call = Call::WriteFile {
            path: self.s.path(),
            branch: self.s.state_branch.clone(),
            content,
            sha: Some(sha),
            message: format!(
                "leasehold: repair {} (fence counter kept at {})",
                self.s.lock, self.history.fence
            ),
        };
        self.send(call)
    }

    fn repaired(&mut self, read_back: bool) -> Command {
        let detail = format!(
            "{} was rewritten as an empty state; the next fence handed out is {}{}",
            self.s.path(),
            self.history.fence + 1,
            if read_back {
                " (confirmed by reading it back)"
            } else {
                ""
            }
        );
        let report = self.report(Status::Repaired, detail, true);
        self.finish(report, None)
    }
}

impl super::cancelled::Steps for RepairOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        RepairOp::step(self, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{queue_entry, raw_inputs, run_identity};
    use crate::wire::{Holder, QueueEntry, RunIdentity};

    const NOW: Millis = 1_800_000_000_000;

    fn raw(pairs: &[(&str, &str)]) -> RawInputs {
        raw_inputs(&[("lock", "deploy"), ("repository", "octo/app")], pairs)
    }

    fn op(confirm: bool) -> RepairOp {
        let s = RepairSettings::parse(&raw(&[("confirm", if confirm { "true" } else { "false" })]))
            .unwrap();
        RepairOp::new(
            s,
            &Entropy {
                seed: 1,
                nonce: "00000000000000aa".into(),
            },
        )
    }

    fn holder(id: &str, fence: u64) -> Holder {
        Holder {
            holder_id: id.into(),
            nonce: "00000000000000aa".into(),
            fence,
            run: RunIdentity {
                repository: "octo/app".into(),
                ..run_identity("")
            },
            acquired_at: NOW,
            expires_at: NOW + 60_000,
            lease_ms: 60_000,
            ceiling_at: NOW + 60_000,
            claimed_at: None,
            pool: None,
        }
    }

    fn version(revision: u64, fence: u64, holders: &[(&str, u64)]) -> String {
        let mut s = LockState::empty("deploy");
        s.revision = revision;
        s.fence = fence;
        s.holders = holders.iter().map(|(id, f)| holder(id, *f)).collect();
        s.to_document()
    }

    fn call(step: &Step) -> &Call {
        step.command.call().expect("a request")
    }

    /// Runs a repair over `history` (newest first, as GitHub lists it; the first is current),
    /// listed in pages of `per_page`. Returns the outcome and the write sent, if any.
    fn run(confirm: bool, history: &[&str], per_page: usize) -> (Outcome, Option<Call>) {
        run_with(confirm, history, per_page, false)
    }

    /// As [`run`]; with `lost_write` the write is answered 502 (it may have landed) and read back.
    fn run_with(
        confirm: bool,
        history: &[&str],
        per_page: usize,
        lost_write: bool,
    ) -> (Outcome, Option<Call>) {
        let mut op = op(confirm);
        let mut step = op.step(Event::Start { now: NOW }).unwrap();
        let mut written = None;
        for _ in 0..1_000 {
            let reply = match call(&step).clone() {
                Call::ReadFile { git_ref, .. } => {
                    let r = git_ref.unwrap();
                    let i = r
                        .strip_prefix("c")
                        .map_or(0, |i| i.parse::<usize>().unwrap());
                    match history[i] {
                        DIR => Reply::NotAFile {
                            found: "dir".into(),
                            date: None,
                        },
                        text => Reply::file(&format!("b{i}"), text),
                    }
                }
                Call::ListCommits { page, .. } => {
                    let from = (page as usize - 1) * per_page;
                    let to = (from + per_page).min(history.len());
                    Reply::Commits {
                        shas: (from..to).map(|i| format!("c{i}")).collect(),
                        next: (to < history.len())
                            .then(|| format!("https://api.github.com/x?page={}", page + 1)),
                        date: None,
                    }
                }
                w @ Call::WriteFile { .. } if lost_write => {
                    written = Some(w);
                    Reply::Http {
                        status: 502,
                        message: "Bad Gateway".into(),
                        retry_after: None,
                        ratelimit_remaining: None,
                        ratelimit_reset: None,
                        date: None,
                    }
                }
                w @ Call::WriteFile { .. } => {
                    written = Some(w);
                    Reply::Written {
                        sha: "new".into(),
                        date: None,
                    }
                }
                other => panic!("{other:?}"),
            };
            step = op.step(Event::Reply { now: NOW, reply }).unwrap();
            if let Command::Finish { outcome } = &step.command {
                return ((**outcome).clone(), written);
            }
        }
        panic!("repair did not finish");
    }

    /// A lock with its lifecycle on: the newest valid version holds a quarantine and an
    /// incident. The repaired state keeps both (at schema 2), so the quarantined resource is not
    /// handed out and the incident still stops admissions.
    #[test]
    fn keeps_the_lifecycle_of_the_newest_valid_version() {
        use crate::wire::{Incident, Reservation, ReservationKind};
        let who = RunIdentity {
            repository: "octo/app".into(),
            ..run_identity("")
        };
        let lifecycle = |revision: u64, quarantines: &[u64], incident: bool| {
            let mut s = LockState::empty("deploy");
            s.schema = 2;
            s.revision = revision;
            s.fence = 9;
            s.reservations = quarantines
                .iter()
                .map(|&fence| Reservation {
                    id: format!("q{fence}"),
                    kind: ReservationKind::Quarantine,
                    holder_id: "octo/app:1:build".into(),
                    fence,
                    run: who.clone(),
                    at: NOW - 60_000,
                    ends_at: None,
                    reason: Some("failed".into()),
                    by: "release".into(),
                })
                .collect();
            s.incident = incident.then(|| Incident {
                id: "i9".into(),
                holder_id: "octo/app:1:build".into(),
                fence: 9,
                run: who.clone(),
                at: NOW - 30_000,
                reason: Some("account-blocked".into()),
            });
            s.to_document()
        };
        let history = [
            "{ broken by hand",
            &lifecycle(11, &[8, 9], true),
            &lifecycle(10, &[8], false),
        ];
        let (outcome, written) = run(true, &history, 10);
        let report = outcome.repair.expect("report");
        assert_eq!(report.status, Status::Repaired);
        let Some(Call::WriteFile { content, .. }) = written else {
            panic!("no write")
        };
        let state = LockState::parse(&content, "deploy").expect("a valid state");
        assert_eq!(state.schema, 2);
        assert_eq!(
            state
                .reservations
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>(),
            ["q8", "q9"]
        );
        assert_eq!(state.incident.as_ref().map(|i| i.id.as_str()), Some("i9"));
        assert!(state.holders.is_empty() && state.queue.is_empty());
        assert_eq!((state.fence, state.revision), (9, 12));
        // A plain lock's history stays a plain, empty state.
        let (_, plain) = run(true, &["{ broken", &version(3, 2, &[("a", 2)])], 10);
        let Some(Call::WriteFile { content, .. }) = plain else {
            panic!("no write")
        };
        let state = LockState::parse(&content, "deploy").unwrap();
        assert_eq!((state.schema, state.reservations.len()), (1, 0));
    }

    #[test]
    fn keeps_the_fence_counter_above_every_fence_in_the_history() {
        // Newest first: the broken current version (its counter lowered by hand below a
        // holder's fence), a version with a holder at fence 9 and its counter at 9, a version
        // that is not JSON, an older one.
        let broken =
            version(12, 3, &[("a", 7)]).replace("\"fence\": 3,", "\"fence\": 3, \"x\": 1,");
        let history = [
            broken.as_str(),
            &version(11, 9, &[("b", 9), ("c", 8)]),
            "{ not json",
            &version(4, 4, &[("a", 4)]),
        ];
        let (outcome, written) = run(true, &history, 2);
        let report = outcome.repair.expect("report");
        assert_eq!(report.status, Status::Repaired);
        assert_eq!(Status::Repaired.exit_code(), 0);
        assert_eq!((report.fence, report.revision), (Some(9), Some(13)));
        assert_eq!((report.versions_read, report.versions_skipped), (4, 1));
        assert!(report.problem.unwrap().contains("unknown field"));
        let Some(Call::WriteFile { content, sha, .. }) = written else {
            panic!("no write")
        };
        assert_eq!(
            sha.as_deref(),
            Some("b0"),
            "a compare-and-swap on the broken version"
        );
        let state = LockState::parse(&content, "deploy").expect("a valid state");
        assert_eq!((state.fence, state.revision), (9, 13));
        assert!(state.holders.is_empty() && state.queue.is_empty());
        assert_eq!(
            state.last_change.as_ref().map(|c| c.action.clone()),
            Some(ChangeAction::Repair)
        );
        // The next admission hands out a fence above every one ever handed out.
        let mut next = state.clone();
        next.queue.push(QueueEntry {
            enqueued_at: NOW,
            last_seen_at: NOW,
            ..queue_entry("z", "00000000000000bb", holder("z", 0).run)
        });
        next.admit(1, NOW, 60_000);
        assert_eq!(next.holders[0].fence, 10);
    }

    #[test]
    fn without_confirm_it_only_says_what_it_would_write() {
        let history = ["{ broken", &version(5, 5, &[("a", 5)])];
        let (outcome, written) = run(false, &history, 100);
        assert!(written.is_none(), "a dry run writes nothing");
        let report = outcome.repair.unwrap();
        assert_eq!(report.status, Status::WouldRepair);
        assert!(!report.written && !report.confirm);
        assert_eq!(report.fence, Some(5));
        let content = report.content.unwrap();
        assert_eq!(LockState::parse(&content, "deploy").unwrap().fence, 5);
        assert!(report.detail.starts_with("dry run: nothing was written"));
    }

    /// A version of the history that [`run`] answers as a directory at the path.
    const DIR: &str = "<a directory>";

    /// A directory at the path now: nothing repair can write a file over. Named, and nothing
    /// written. A directory at a commit of its history holds no state: skipped, as a deletion.
    #[test]
    fn a_directory_at_the_path_is_named_now_and_skipped_in_the_history() {
        let (outcome, written) = run(true, &[DIR, &version(5, 5, &[("a", 5)])], 100);
        assert!(written.is_none(), "nothing written");
        assert_eq!(outcome.stats.requests, 1, "nothing but the read");
        let report = outcome.repair.unwrap();
        assert_eq!(report.status, Status::Stale);
        assert!(
            report.detail.contains("GitHub lists a dir there")
                && report.detail.contains("move it out of the way"),
            "{}",
            report.detail
        );
        let broken = r#"{"schema": 1, "lock": "deploy""#;
        let (outcome, written) = run(true, &[broken, DIR, &version(4, 7, &[("a", 7)])], 100);
        let report = outcome.repair.unwrap();
        assert_eq!(report.status, Status::Repaired, "{}", report.detail);
        assert_eq!(
            (report.versions_read, report.versions_skipped),
            (3, 2),
            "the broken version and the directory skipped"
        );
        assert_eq!(
            report.fence,
            Some(7),
            "the fence of the version after the directory"
        );
        assert!(written.is_some());
    }

    #[test]
    fn a_valid_state_is_left_alone() {
        let history = [version(3, 3, &[("a", 3)])];
        let (outcome, written) = run(true, &[history[0].as_str()], 100);
        assert!(written.is_none());
        assert_eq!(outcome.repair.unwrap().status, Status::Noop);
        assert_eq!(outcome.stats.requests, 1, "nothing but the read");
    }

    /// A newer schema is not broken: a newer leasehold wrote it, and rewriting it as this
    /// version's empty state would drop its holders, reservations and incident.
    #[test]
    fn a_state_of_a_newer_schema_is_refused_and_nothing_is_written() {
        let newer = r#"{"schema": 3, "lock": "deploy", "revision": 9, "fence": 9, "holders": [], "queue": []}"#;
        let (outcome, written) = run(true, &[newer, &version(5, 5, &[("a", 5)])], 100);
        assert!(written.is_none(), "nothing written");
        assert_eq!(outcome.stats.requests, 1, "nothing but the read");
        let report = outcome.repair.unwrap();
        assert_eq!(report.status, Status::Stale);
        assert!(
            report.detail.contains("newer leasehold"),
            "{}",
            report.detail
        );
    }

    /// A write whose answer was lost, read back as the broken version: that copy may be stale,
    /// so the write may have landed. `unknown-outcome`, never `contended`'s "nothing was written".
    #[test]
    fn a_lost_write_read_back_as_the_broken_version_is_an_unknown_outcome() {
        let history = ["{ broken", &version(5, 5, &[("a", 5)])];
        let (outcome, written) = run_with(true, &history, 100, true);
        assert!(written.is_some(), "the write went");
        let report = outcome.repair.unwrap();
        assert_eq!(report.status, Status::UnknownOutcome, "{}", report.detail);
    }

    #[test]
    fn numbers_past_the_largest_counter_are_not_fences() {
        let mut h = History::default();
        assert!(!h.take(r#"{"fence": 18446744073709551615}"#, "deploy"));
        assert!(h.take(
            r#"{"fence": "x", "holders": [{"fence": 6}, {"fence": -1}], "revision": 2}"#,
            "deploy"
        ));
        assert_eq!((h.fence, h.revision, h.read, h.skipped), (6, 2, 2, 1));
    }

    #[test]
    fn inputs_are_checked() {
        assert!(RepairSettings::parse(&raw(&[("confirm", "yes")])).is_err());
        let e = RepairSettings::parse(&raw(&[("lock", "ghp_abcdefghijklmnop")])).unwrap_err();
        assert_eq!(e.input, "lock");
        let mut no_repo = raw(&[]);
        no_repo.remove("repository");
        assert_eq!(
            RepairSettings::parse(&no_repo).unwrap_err().input,
            "repository"
        );
    }
}
