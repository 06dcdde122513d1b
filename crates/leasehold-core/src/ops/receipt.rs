//! receipt check / post: a run that absorbed later updates says so in a comment on the item,
//! and a run queued behind it skips when a receipt names it (docs/receipts.md).
//!
//! A receipt's only authentication is who wrote it. **check** outputs `skip=true` only when a
//! comment on the item
//! 1. holds a well-formed receipt block of this version (`wire::read_receipt`) naming this run
//!    id (or this head sha),
//! 2. was written by the login the check's own token acts as (`ops/identity.rs`),
//! 3. by a login that is not one of the App identities the workflow uses for its own output
//!    (`app-logins`): such an identity may post text an agent composed,
//! 4. and was never edited (`updated_at` equal to `created_at`).
//!
//! Every doubt is `skip=false` with a warning naming it: no receipt, unreadable comments, an
//! unresolvable identity, a malformed block, a rate limit, too many comments to scan. A false
//! "already handled" silently drops an update; a false "not handled" costs one run.
//!
//! Steps, each one request: `GET /user` (one identity resolution), then the comments, 100 a
//! page, following the `Link` header up to [`RECEIPT_MAX_PAGES`]; the common case is one page.
//!
//! **post** writes a receipt only for an outright success (`job-status: success`) that
//! absorbed something, once per run: it resolves the identity and reads the comments first, and
//! a receipt of this run already there (by this identity, unedited) is `already-posted`. A
//! post whose answer was lost is never sent again: the comments are read back, and without the
//! receipt there it is `not-posted`. A failed post is a warning, never a failed job: without a
//! receipt the next run does the work.

use crate::input::{validate_repository, RawInputs, Reader};
use crate::policy::limits::RECEIPT_MAX_PAGES;
use crate::policy::{Class, RequestKind, RetryPolicy};
use crate::wire::time::Millis;
use crate::wire::{
    is_run_id, is_sha, read_receipt, render_receipt, BlockRead, Call, Command, CommentEntry, Error,
    Event, Failure, InputError, ItemReport, Outcome, ProtocolError, Receipt, Reply, ResultWord,
    Status, Step, RECEIPT_VERSION,
};

use super::exchange::{next_page, Answered, Exchange};
use super::identity::identity_of;
use super::slots::illegal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Check,
    Post,
}

#[derive(Clone, Debug)]
pub struct ReceiptSettings {
    pub mode: Mode,
    /// `owner/name` of the item.
    pub repository: String,
    /// The issue or pull request.
    pub number: u64,
    /// This run's id.
    pub run_id: String,
    /// check: this run's head, when it has one.
    pub head_sha: Option<String>,
    /// post: what the run absorbed.
    pub runs: Vec<String>,
    pub heads: Vec<String>,
    /// post: the job's status so far (`success` posts).
    pub job_status: Option<String>,
    /// The App identities the workflow posts its own output under: never trusted.
    pub app_logins: Vec<String>,
    /// The token is the job's own `GITHUB_TOKEN`.
    pub job_token: bool,
    pub retry: RetryPolicy,
}

/// A list input: words separated by commas, spaces or new lines.
fn list(r: &Reader, name: &str) -> Vec<String> {
    r.get(name)
        .map(|v| {
            v.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The repository of the item: `repository`, else the run's own.
pub(crate) fn item_repository(r: &Reader) -> Result<String, InputError> {
    let repository = r
        .get("repository")
        .or_else(|| r.get("GITHUB_REPOSITORY"))
        .ok_or_else(|| InputError::new("repository", "is required (or GITHUB_REPOSITORY)", ""))?
        .to_string();
    validate_repository("repository", &repository)?;
    Ok(repository)
}

/// An issue or pull-request number input.
pub(crate) fn item_number(r: &Reader, name: &str) -> Result<Option<u64>, InputError> {
    match r.get(name) {
        None => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n > 0 && !v.starts_with('0') && n <= u64::from(u32::MAX) => Ok(Some(n)),
            _ => Err(InputError::new(
                name,
                "must be an issue or pull request number",
                v,
            )),
        },
    }
}

impl ReceiptSettings {
    pub fn parse(mode: Mode, raw: &RawInputs) -> Result<(Self, Vec<String>), Error> {
        let mut r = Reader::new(raw);
        let repository = item_repository(&r)?;
        let number = item_number(&r, "number")?.ok_or_else(|| {
            InputError::new("number", "is required (the issue or pull request)", "")
        })?;
        let run_id = r
            .get("run-id")
            .or_else(|| r.get("GITHUB_RUN_ID"))
            .ok_or_else(|| InputError::new("run-id", "is required (or GITHUB_RUN_ID)", ""))?
            .to_string();
        if !is_run_id(&run_id) {
            return Err(InputError::new(
                "run-id",
                "must be a run id (a positive whole number)",
                &run_id,
            )
            .into());
        }
        let head_sha = r.get("head-sha").map(str::to_string);
        if let Some(h) = &head_sha {
            if !is_sha(h) {
                return Err(InputError::new(
                    "head-sha",
                    "must be a 40-hex commit sha (lowercase)",
                    h,
                )
                .into());
            }
        }
        let runs = list(&r, "runs");
        if let Some(bad) = runs.iter().find(|x| !is_run_id(x)) {
            return Err(
                InputError::new("runs", "must list run ids (positive whole numbers)", bad).into(),
            );
        }
        let heads = list(&r, "heads");
        if let Some(bad) = heads.iter().find(|x| !is_sha(x)) {
            return Err(
                InputError::new("heads", "must list 40-hex commit shas (lowercase)", bad).into(),
            );
        }
        if mode == Mode::Check && (!runs.is_empty() || !heads.is_empty()) {
            let given = if runs.is_empty() { "heads" } else { "runs" };
            return Err(InputError::new(
                given,
                "is for post only (check names this run with run-id and head-sha)",
                "",
            )
            .into());
        }
        let job_token = r.bool("job-token")?.unwrap_or(false);
        let s = ReceiptSettings {
            mode,
            repository,
            number,
            run_id,
            head_sha,
            runs,
            heads,
            job_status: r.get("job-status").map(str::to_string),
            app_logins: list(&r, "app-logins"),
            job_token,
            retry: r.retry_policy(),
        };
        Ok((s, r.warnings))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Identity,
    Listing { page: u32 },
    Posting,
    ReadBack { page: u32 },
    Done,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::NotStarted => "not started",
            Phase::Identity => "resolving the identity",
            Phase::Listing { .. } => "reading comments",
            Phase::Posting => "posting",
            Phase::ReadBack { .. } => "reading comments back",
            Phase::Done => "finished",
        }
    }
}

pub struct ReceiptOp {
    s: ReceiptSettings,
    x: Exchange,
    phase: Phase,
    identity: Option<String>,
    warnings: Vec<String>,
    /// The reason the first receipt naming this run was refused.
    refused: Option<&'static str>,
}

/// How one comment bears on this run, as a receipt.
enum Verdict {
    NotAReceipt,
    /// A receipt that counts: it names this run (or head), by us, unedited.
    Honoured,
    /// Not honoured: the reason's word, and the warning.
    Refused(&'static str, String),
    /// A receipt of ours that does not name this run.
    Other,
}

impl ReceiptOp {
    pub fn new(s: ReceiptSettings, seed: u64) -> Self {
        let x = Exchange::new(s.retry.clone(), seed);
        ReceiptOp {
            s,
            x,
            phase: Phase::NotStarted,
            identity: None,
            warnings: Vec::new(),
            refused: None,
        }
    }

    fn operation(&self) -> &'static str {
        match self.s.mode {
            Mode::Check => "receipt-check",
            Mode::Post => "receipt-post",
        }
    }

    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let state = self.phase.name();
        let command = match (self.phase, event) {
            (Phase::NotStarted, Event::Start { now }) => self.start(now),
            (Phase::Done | Phase::NotStarted, e) | (_, e @ Event::Start { .. }) => {
                return Err(illegal(&e, state))
            }
            (_, Event::CancelledReply { .. }) => {
                unreachable!("Cancellable hands it over as a reply")
            }
            (_, Event::Timer { now }) => self.x.on_timer(now, state)?,
            (_, Event::Cancel { .. }) => self.give_up("cancelled", "the job was cancelled".into()),
            (_, Event::Reply { now, reply }) => match self.x.on_reply(now, reply, state)? {
                Answered::Again(sleep) => sleep,
                Answered::Reply(reply) => self.on_answer(now, Ok(reply))?,
                Answered::Failed(f, class) => self.on_failure(now, f, class)?,
            },
        };
        Ok(Step {
            command,
            log: Vec::new(),
        })
    }

    fn start(&mut self, now: Millis) -> Command {
        if self.s.mode == Mode::Post {
            // No status said is no success shown: a receipt lets later runs skip their work.
            if self.s.job_status.as_deref() != Some("success") {
                let what = match &self.s.job_status {
                    Some(status) => format!("the job's status is {status:?}"),
                    None => "no job status was given (job-status, which the action fills from ${{ job.status }})".into(),
                };
                return self.finish(
                    Status::NotPosted,
                    "not-a-success",
                    format!("{what}: a receipt is written only for an outright success"),
                );
            }
            if self.s.runs.is_empty() && self.s.heads.is_empty() {
                return self.finish(
                    Status::NotPosted,
                    "nothing-absorbed",
                    "this run absorbed no run and no head: there is nothing to receipt".into(),
                );
            }
        }
        self.phase = Phase::Identity;
        self.x.send(Call::GetViewer, RequestKind::Read, now)
    }

    fn list(&mut self, page: u32, read_back: bool, now: Millis) -> Command {
        self.phase = if read_back {
            Phase::ReadBack { page }
        } else {
            Phase::Listing { page }
        };
        let call = Call::ListComments {
            repository: self.s.repository.clone(),
            number: self.s.number,
            page,
        };
        self.x.send(call, RequestKind::Read, now)
    }

    fn on_failure(&mut self, now: Millis, f: Failure, class: Class) -> Result<Command, Error> {
        match self.phase {
            Phase::Identity => self.on_answer(now, Err(f)),
            Phase::Posting if class == Class::UnknownOutcome => {
                self.warnings.push(format!("the post's answer was lost ({}): reading the comments back, never posting twice", f.message));
                Ok(self.list(1, true, now))
            }
            Phase::Posting => Ok(self.give_up(
                "post-failed",
                format!("the receipt could not be posted: {}", f.message),
            )),
            Phase::Listing { .. } | Phase::ReadBack { .. } => {
                let reason = if class.word() == crate::wire::AnswerClass::RateLimited {
                    "rate-limited"
                } else {
                    "comments-unreadable"
                };
                Ok(self.give_up(
                    reason,
                    format!(
                        "the comments of #{} could not be read: {}",
                        self.s.number, f.message
                    ),
                ))
            }
            Phase::NotStarted | Phase::Done => unreachable!("no request in these phases"),
        }
    }

    fn on_answer(&mut self, now: Millis, answer: Result<Reply, Failure>) -> Result<Command, Error> {
        match (self.phase, answer) {
            (Phase::Identity, answer) => match identity_of(answer, self.s.job_token) {
                Err(u) => Ok(self.give_up(u.reason, u.detail)),
                Ok(login) => {
                    if self
                        .s
                        .app_logins
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(&login))
                    {
                        return Ok(self.give_up(
                            "identity-is-app",
                            format!("the token acts as {login}, an App identity this workflow also posts its own output under (app-logins): its receipts cannot be told from text it was induced to post"),
                        ));
                    }
                    self.identity = Some(login);
                    Ok(self.list(1, false, now))
                }
            },
            (Phase::Listing { page }, Ok(Reply::Comments { comments, next, .. })) => {
                for c in &comments {
                    match self.s.mode {
                        Mode::Check => match self.judge(c) {
                            Verdict::Honoured => {
                                let mut report = self.report(Status::Receipted, "receipt");
                                report.skip = Some(true);
                                report.comment = Some(c.id);
                                report.detail =
                                    format!("comment {} by {} names this run: skip", c.id, c.login);
                                return Ok(self.done(report));
                            }
                            Verdict::Other | Verdict::NotAReceipt => {}
                            Verdict::Refused(word, why) => {
                                self.refused.get_or_insert(word);
                                self.warnings.push(format!("{word}: {why}"));
                            }
                        },
                        Mode::Post => {}
                    }
                    if self.s.mode == Mode::Post && self.ours_of_this_run(c) {
                        let mut report = self.report(Status::AlreadyPosted, "already-posted");
                        report.comment = Some(c.id);
                        report.detail = format!("comment {} is this run's receipt already", c.id);
                        return Ok(self.done(report));
                    }
                }
                self.after_page(page, &next, false, now)
            }
            (Phase::ReadBack { page }, Ok(Reply::Comments { comments, next, .. })) => {
                if let Some(c) = comments.iter().find(|c| self.ours_of_this_run(c)) {
                    let mut report = self.report(Status::Posted, "posted");
                    report.comment = Some(c.id);
                    report.detail = format!(
                        "the receipt is comment {} (confirmed by reading back)",
                        c.id
                    );
                    return Ok(self.done(report));
                }
                self.after_page(page, &next, true, now)
            }
            (Phase::Posting, Ok(Reply::Posted { id, url, .. })) => {
                let mut report = self.report(Status::Posted, "posted");
                report.comment = Some(id);
                report.url = url;
                report.detail = format!(
                    "posted the receipt of run {} as comment {id}",
                    self.s.run_id
                );
                Ok(self.done(report))
            }
            (phase, Ok(reply)) => Err(ProtocolError {
                event: format!("reply {}", reply.kind()),
                state: phase.name().into(),
            }
            .into()),
            (_, Err(_)) => unreachable!("failures of these phases are handled in on_failure"),
        }
    }

    fn after_page(
        &mut self,
        page: u32,
        next: &Option<String>,
        read_back: bool,
        now: Millis,
    ) -> Result<Command, Error> {
        match (next.is_some(), next_page(next)) {
            (true, Some(n)) if n == page + 1 && page < RECEIPT_MAX_PAGES => Ok(self.list(n, read_back, now)),
            (true, Some(_)) if page >= RECEIPT_MAX_PAGES => Ok(self.give_up(
                "too-many-comments",
                format!("#{} has more than {} comments: not scanned to the end", self.s.number, RECEIPT_MAX_PAGES * 100),
            )),
            (true, _) => Ok(self.give_up("comments-unreadable", format!("the comments' next page cannot be followed: {next:?}"))),
            (false, _) if read_back => Ok(self.give_up(
                "post-unconfirmed",
                "the post's answer was lost and the receipt is not among the comments: not posted (never sent twice)".into(),
            )),
            (false, _) => match self.s.mode {
                Mode::Check => {
                    let detail = format!("no receipt by {} that was never edited names run {}{}", self.identity.as_deref().unwrap_or("?"), self.s.run_id, self.s.head_sha.as_deref().map(|h| format!(" or head {h}")).unwrap_or_default());
                    // The first receipt refused is the reason (its warning is already there).
                    match self.refused {
                        Some(word) => Ok(self.finish(Status::NoReceipt, word, detail)),
                        None => Ok(self.give_up("no-receipt", detail)),
                    }
                }
                Mode::Post => {
                    self.phase = Phase::Posting;
                    let receipt = Receipt {
                        v: RECEIPT_VERSION,
                        run: self.s.run_id.clone(),
                        runs: self.s.runs.clone(),
                        heads: self.s.heads.clone(),
                    };
                    let call = Call::CreateComment {
                        repository: self.s.repository.clone(),
                        number: self.s.number,
                        body: render_receipt(&receipt),
                    };
                    // A comment is not a compare-and-swap: a post that may have landed is read
                    // back, never sent again (it would post the receipt twice).
                    Ok(self.x.send(call, RequestKind::Write, now))
                }
            },
        }
    }

    /// How comment `c` bears on this check.
    fn judge(&self, c: &CommentEntry) -> Verdict {
        let receipt = match read_receipt(&c.body) {
            BlockRead::None => return Verdict::NotAReceipt,
            BlockRead::Malformed(why) => {
                return Verdict::Refused(
                    "malformed",
                    format!(
                        "comment {} by {} holds a receipt block that is not read: {why}",
                        c.id, c.login
                    ),
                )
            }
            BlockRead::Receipt(r) => r,
        };
        let me = self.identity.as_deref().unwrap_or_default();
        if !receipt.names(&self.s.run_id, self.s.head_sha.as_deref()) {
            return Verdict::Other;
        }
        if !c.written_by(me) {
            return Verdict::Refused(
                "other-author",
                format!(
                    "comment {} names this run but was written by {}, not {me}",
                    c.id,
                    if c.login.is_empty() {
                        "an author GitHub does not name"
                    } else {
                        &c.login
                    }
                ),
            );
        }
        // (An App identity of `app-logins` never gets here: a token acting as one is refused
        // before any comment is read, and only our own comments count.)
        if c.updated_at != c.created_at {
            return Verdict::Refused(
                "edited",
                format!(
                    "comment {} names this run but was edited at {} (created {})",
                    c.id, c.updated_at, c.created_at
                ),
            );
        }
        Verdict::Honoured
    }

    /// Comment `c` is this run's own receipt, by this identity, unedited.
    fn ours_of_this_run(&self, c: &CommentEntry) -> bool {
        let me = self.identity.as_deref().unwrap_or_default();
        matches!(read_receipt(&c.body), BlockRead::Receipt(r) if r.run == self.s.run_id)
            && c.written_by(me)
            && c.updated_at == c.created_at
    }

    fn report(&self, status: Status, reason: &str) -> ItemReport {
        let mut r = ItemReport::new(self.operation(), &self.s.repository, status, reason);
        r.number = Some(self.s.number);
        r.identity = self.identity.clone();
        r.warnings = self.warnings.clone();
        r
    }

    /// Fails open: check does the work, post writes nothing; with the reason as a warning.
    fn give_up(&mut self, reason: &str, detail: String) -> Command {
        let status = match self.s.mode {
            Mode::Check => Status::NoReceipt,
            Mode::Post => Status::NotPosted,
        };
        self.warnings.push(format!("{reason}: {detail}"));
        self.finish(status, reason, detail)
    }

    fn finish(&mut self, status: Status, reason: &str, detail: String) -> Command {
        let mut report = self.report(status, reason);
        if self.s.mode == Mode::Check {
            report.skip = Some(false);
        }
        report.detail = detail;
        self.done(report)
    }

    fn done(&mut self, report: ItemReport) -> Command {
        self.phase = Phase::Done;
        let mut o = Outcome::new(ResultWord::Reported, true, "", "");
        o.stats = self.x.stats.clone();
        o.report = Some(report);
        Command::Finish {
            outcome: Box::new(o),
        }
    }
}

impl super::cancelled::Steps for ReceiptOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        ReceiptOp::step(self, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check given a post-only input is refused naming the input it was given.
    #[test]
    fn check_refuses_a_post_only_input_by_its_own_name() {
        let sha = "a".repeat(40);
        for (given, value) in [("runs", "12"), ("heads", sha.as_str())] {
            let raw: RawInputs = [
                ("repository", "octo/app"),
                ("number", "5"),
                ("run-id", "7"),
                (given, value),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            match ReceiptSettings::parse(Mode::Check, &raw) {
                Err(Error::Input(e)) => assert_eq!(e.input, given),
                other => panic!("{given}: {:?}", other.map(|(s, _)| s.mode)),
            }
        }
    }
}
