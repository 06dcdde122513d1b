//! audit: one issue per problem, kept in a chosen repository (docs/alerts.md).
//!
//! `reaper-delivery`: the latest scheduled run of the reap workflow is older than
//! `max-age-minutes`, ended other than `success`, or has been running longer than
//! `max-running-minutes` (or there is none). `incident` needs the lifecycle issue's incidents,
//! which do not exist yet; it is refused as an input.
//!
//! The steps, each one request: who the token acts as (`GET /user`, `ops/identity.rs`); the
//! latest scheduled run; the open issues, 100 a page, to the end (at most [`AUDIT_MAX_PAGES`]).
//! The alert issue is the open issue whose body holds the problem's hidden marker
//! (`wire::alert_marker`) and whose author is that identity: never found by its title, so a
//! lookalike by someone else is never touched and an operator may rename it. Then at most one
//! write: problem and no issue, open one; problem and a different body, update it; problem and
//! the same body, nothing (the body is deterministic: it names the run, never the time of the
//! audit); no problem and an issue, close it (its body left as it was); no problem and no issue,
//! nothing. A read that fails, or finds two such issues, writes nothing and fails the step.

use crate::input::{RawInputs, Reader};
use crate::policy::limits::{
    AUDIT_MAX_PAGES, DEFAULT_REAPER_MAX_AGE_MINUTES, DEFAULT_REAPER_MAX_RUNNING_MINUTES,
    MAX_AUDIT_MINUTES,
};
use crate::policy::RequestKind;
use crate::wire::time::{parse_github_time, parse_http_date, Millis};
use crate::wire::{
    alert_marker, Call, Command, Error, Event, Failure, FailureCode, InputError, IssueEntry,
    ItemReport, Outcome, ProtocolError, Reply, ResultWord, Status, Step, WorkflowRunEntry,
};

use super::exchange::{next_page, Answered, Exchange};
use super::identity::identity_of;
use super::receipt::item_repository;

/// The problem `reaper-delivery` audits.
pub const REAPER_DELIVERY: &str = "reaper-delivery";

#[derive(Clone, Debug)]
pub struct AuditSettings {
    /// Where the alert issue lives.
    pub repository: String,
    /// Where the reap workflow runs.
    pub workflow_repository: String,
    /// The reap workflow: its file name (`reap.yml`) or id.
    pub workflow: String,
    pub max_age_ms: Millis,
    pub max_running_ms: Millis,
    pub job_token: bool,
    pub retry: crate::policy::RetryPolicy,
}

impl AuditSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), Error> {
        let mut r = Reader::new(raw);
        match r.get("check").unwrap_or(REAPER_DELIVERY) {
            REAPER_DELIVERY => {}
            "incident" => {
                return Err(InputError::new(
                    "check",
                    "incident is not available yet: alerts for a lock's incident are not built (reaper-delivery is)",
                    "incident",
                )
                .into())
            }
            other => return Err(InputError::new("check", "must be reaper-delivery", other).into()),
        }
        let repository = item_repository(&r)?;
        let workflow_repository = match r.get("workflow-repository") {
            Some(w) => {
                crate::input::validate_repository("workflow-repository", w)?;
                w.to_string()
            }
            None => repository.clone(),
        };
        let workflow = r.get("workflow").unwrap_or("reap.yml").to_string();
        // A path segment of its own: `.` and `..` (even percent-encoded) are dot segments a URL
        // resolves away, which would ask GitHub for another endpoint's runs.
        if workflow.is_empty()
            || matches!(workflow.as_str(), "." | "..")
            || workflow.contains(['/', '\\', '%'])
            || workflow.chars().any(char::is_whitespace)
        {
            return Err(InputError::new(
                "workflow",
                "must be a workflow file name (reap.yml) or id",
                &workflow,
            )
            .into());
        }
        let age = r.int(
            "max-age-minutes",
            DEFAULT_REAPER_MAX_AGE_MINUTES,
            1,
            MAX_AUDIT_MINUTES,
        )?;
        let running = r.int(
            "max-running-minutes",
            DEFAULT_REAPER_MAX_RUNNING_MINUTES,
            1,
            MAX_AUDIT_MINUTES,
        )?;
        let s = AuditSettings {
            repository,
            workflow_repository,
            workflow,
            max_age_ms: age * 60_000,
            max_running_ms: running * 60_000,
            job_token: r.bool("job-token")?.unwrap_or(false),
            retry: r.retry_policy(),
        };
        Ok((s, r.warnings))
    }
}

/// What the latest scheduled run says, judged at `now` (GitHub's clock).
pub fn reaper_problem(
    s: &AuditSettings,
    latest: Option<&WorkflowRunEntry>,
    now: Millis,
) -> Option<String> {
    let minutes = |ms: Millis| ms / 60_000;
    let Some(run) = latest else {
        return Some(format!(
            "No scheduled run of `{}` was found: the reaper is not being delivered.",
            s.workflow
        ));
    };
    let created = parse_github_time(&run.created_at);
    let started = run
        .run_started_at
        .as_deref()
        .and_then(parse_github_time)
        .or(created);
    if run.status.as_deref() == Some("completed") {
        let conclusion = run.conclusion.as_deref().unwrap_or("none");
        if conclusion != "success" {
            return Some(format!(
                "The latest scheduled reap run ({}) ended `{conclusion}`.",
                run.id
            ));
        }
    } else if started.is_some_and(|t| now.saturating_sub(t) > s.max_running_ms) {
        return Some(format!(
            "The latest scheduled reap run ({}) has been `{}` for more than {} minutes.",
            run.id,
            run.status.as_deref().unwrap_or("without a status"),
            minutes(s.max_running_ms)
        ));
    }
    match created {
        None => Some(format!("The latest scheduled reap run ({}) has no readable creation time.", run.id)),
        Some(t) if now.saturating_sub(t) > s.max_age_ms => Some(format!(
            "The latest scheduled reap run ({}) is older than {} minutes: scheduled delivery has stopped or lags.",
            run.id,
            minutes(s.max_age_ms)
        )),
        Some(_) => None,
    }
}

/// The alert issue's body: deterministic (the run and the limits, never the audit's time).
pub fn alert_body(s: &AuditSettings, problem: &str, latest: Option<&WorkflowRunEntry>) -> String {
    let run = match latest {
        Some(r) => format!(
            "Latest scheduled run: {} ({}), status `{}`, conclusion `{}`, created {}.",
            r.id,
            r.html_url,
            r.status.as_deref().unwrap_or("none"),
            r.conclusion.as_deref().unwrap_or("none"),
            r.created_at
        ),
        None => "Latest scheduled run: none.".into(),
    };
    format!(
        "{}\n**leasehold audit: reaper delivery**\n\n{problem}\n\n{run}\n\nWorkflow `{}` in `{}`; limits: the latest scheduled run at most {} minutes old, running at most {} minutes.\n\nThis issue is kept by `leasehold audit`: updated when the problem changes, closed when it clears.\n",
        alert_marker(REAPER_DELIVERY),
        s.workflow,
        s.workflow_repository,
        s.max_age_ms / 60_000,
        s.max_running_ms / 60_000,
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Identity,
    Runs,
    Issues { page: u32 },
    Writing,
    Done,
}

pub struct AuditOp {
    s: AuditSettings,
    x: Exchange,
    phase: Phase,
    identity: Option<String>,
    problem: Option<String>,
    body: Option<String>,
    found: Vec<IssueEntry>,
    /// Pages read in the scan under way, and whether this is the second scan.
    pages: u32,
    rescan: bool,
    /// The write under way and the status it ends with.
    writing: Option<(Status, u64)>,
}

impl AuditOp {
    pub fn new(s: AuditSettings, seed: u64) -> Self {
        let x = Exchange::new(s.retry.clone(), seed);
        AuditOp {
            s,
            x,
            phase: Phase::NotStarted,
            identity: None,
            problem: None,
            body: None,
            found: Vec::new(),
            pages: 0,
            rescan: false,
            writing: None,
        }
    }

    pub fn settings(&self) -> &AuditSettings {
        &self.s
    }

    fn state(&self) -> &'static str {
        match self.phase {
            Phase::NotStarted => "not started",
            Phase::Identity => "resolving the identity",
            Phase::Runs => "reading the scheduled runs",
            Phase::Issues { .. } => "reading the open issues",
            Phase::Writing => "writing the alert issue",
            Phase::Done => "finished",
        }
    }

    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let state = self.state();
        let command = match (self.phase, event) {
            (Phase::NotStarted, Event::Start { now }) => {
                self.phase = Phase::Identity;
                self.x.send(Call::GetViewer, RequestKind::Read, now)
            }
            (Phase::Done | Phase::NotStarted, e) | (_, e @ Event::Start { .. }) => {
                return Err(ProtocolError {
                    event: e.name().into(),
                    state: state.into(),
                }
                .into())
            }
            (_, Event::CancelledReply { .. }) => {
                unreachable!("Cancellable hands it over as a reply")
            }
            (_, Event::Timer { now }) => self.x.on_timer(now, state)?,
            (_, Event::Cancel { .. }) => self.fail(Failure::new(
                FailureCode::ApiUnavailable,
                "cancelled".into(),
            )),
            (_, Event::Reply { now, reply }) => match self.x.on_reply(now, reply, state)? {
                Answered::Again(sleep) => sleep,
                Answered::Reply(reply) => self.on_reply(now, reply)?,
                Answered::Failed(f, _) if self.phase == Phase::Identity => {
                    match identity_of(Err(f.clone()), self.s.job_token) {
                        Ok(login) => self.identified(login, now),
                        Err(u) => self.fail(Failure {
                            message: u.detail,
                            ..f
                        }),
                    }
                }
                // The write may have landed: never "no issue touched". It is not sent again (an
                // issue opened twice would make every later audit `ambiguous`); the next audit
                // finds what it did by the marker.
                Answered::Failed(f, _)
                    if self.phase == Phase::Writing
                        && f.class == Some(crate::wire::AnswerClass::UnknownOutcome) =>
                {
                    let (status, n) = self.writing.unwrap_or((Status::Opened, 0));
                    let what = match (status, n) {
                        (Status::Opened, _) | (_, 0) => {
                            "a new alert issue may have been opened".to_string()
                        }
                        (Status::Updated, n) => format!("alert issue #{n} may have been updated"),
                        (_, n) => format!("alert issue #{n} may have been closed"),
                    };
                    let message = format!(
                        "{}: the answer was lost and {what}; the next audit finds it by its marker",
                        f.message
                    );
                    self.fail(Failure { message, ..f })
                }
                Answered::Failed(f, _) => self.fail(f),
            },
        };
        Ok(Step {
            command,
            log: Vec::new(),
        })
    }

    fn identified(&mut self, login: String, now: Millis) -> Command {
        self.identity = Some(login);
        self.phase = Phase::Runs;
        let call = Call::ListWorkflowRuns {
            repository: self.s.workflow_repository.clone(),
            workflow: self.s.workflow.clone(),
            event: "schedule".into(),
        };
        self.x.send(call, RequestKind::Read, now)
    }

    fn issues(&mut self, page: u32, now: Millis) -> Command {
        self.phase = Phase::Issues { page };
        let call = Call::ListIssues {
            repository: self.s.repository.clone(),
            page,
        };
        self.x.send(call, RequestKind::Read, now)
    }

    fn on_reply(&mut self, now: Millis, reply: Reply) -> Result<Command, Error> {
        Ok(match (self.phase, reply) {
            (Phase::Identity, reply) => match identity_of(Ok(reply), self.s.job_token) {
                Ok(login) => self.identified(login, now),
                Err(u) => self.fail(Failure::new(FailureCode::Refused, u.detail)),
            },
            (Phase::Runs, Reply::WorkflowRuns { runs, date, .. }) => {
                let github_now = date.as_deref().and_then(parse_http_date).unwrap_or(now);
                let latest = runs.first();
                self.problem = reaper_problem(&self.s, latest, github_now);
                self.body = self
                    .problem
                    .as_deref()
                    .map(|p| alert_body(&self.s, p, latest));
                self.issues(1, now)
            }
            (Phase::Issues { page }, Reply::Issues { issues, next, .. }) => {
                let me = self.identity.clone().unwrap_or_default();
                let marker = alert_marker(REAPER_DELIVERY);
                self.pages = page;
                // The list is paged by offset: an issue opened or closed between two pages moves
                // every later one by a place, so one issue can come twice (counted once).
                for i in issues {
                    let ours = !i.pull_request && i.opened_by(&me) && i.body.contains(&marker);
                    if ours && !self.found.iter().any(|f| f.number == i.number) {
                        self.found.push(i);
                    }
                }
                match (next.is_some(), next_page(&next)) {
                    (true, Some(n)) if n == page + 1 && page < AUDIT_MAX_PAGES => self.issues(n, now),
                    (true, _) => self.fail(Failure::new(
                        FailureCode::Ambiguous,
                        format!("the open issues of {} could not be read to their end (page {page}, next {next:?}): no issue touched", self.s.repository),
                    )),
                    (false, _) => self.decide(now),
                }
            }
            (
                Phase::Writing,
                Reply::Posted {
                    number, id, url, ..
                },
            ) => {
                let (status, n) = self.writing.take().expect("a write in flight");
                let number = number.unwrap_or(if n > 0 { n } else { id });
                let detail = match status {
                    Status::Opened => format!("opened alert issue #{number}"),
                    Status::Updated => {
                        format!("updated alert issue #{number}: the problem changed")
                    }
                    _ => format!("closed alert issue #{number}: the problem cleared"),
                };
                self.finish(status, Some(number), url, detail)
            }
            (_, reply) => {
                return Err(ProtocolError {
                    event: format!("reply {}", reply.kind()),
                    state: self.state().into(),
                }
                .into())
            }
        })
    }

    fn decide(&mut self, now: Millis) -> Command {
        if self.found.len() > 1 {
            let numbers: Vec<String> = self
                .found
                .iter()
                .map(|i| format!("#{}", i.number))
                .collect();
            return self.fail(Failure::new(
                FailureCode::Ambiguous,
                format!("{} open issues by {} carry the {REAPER_DELIVERY} marker ({}): no issue touched", numbers.len(), self.identity.as_deref().unwrap_or("?"), numbers.join(", ")),
            ));
        }
        // Nothing found over several pages, and an issue to open: an issue closed between two
        // pages moves ours back onto a page already read. Read them all once more before
        // opening a second issue (which would make every later audit `ambiguous`).
        if self.found.is_empty() && self.body.is_some() && self.pages > 1 && !self.rescan {
            self.rescan = true;
            return self.issues(1, now);
        }
        let issue = self.found.first().cloned();
        let repository = self.s.repository.clone();
        let (call, status, number) = match (&self.body, issue) {
            (Some(body), None) => (
                Call::CreateIssue {
                    repository,
                    title: "leasehold: the reaper is not being delivered".into(),
                    body: body.clone(),
                },
                Status::Opened,
                0,
            ),
            (Some(body), Some(i)) if i.body == *body => {
                return self.finish(
                    Status::Unchanged,
                    Some(i.number),
                    String::new(),
                    format!(
                        "alert issue #{} already says this; nothing written",
                        i.number
                    ),
                )
            }
            (Some(body), Some(i)) => (
                Call::UpdateIssue {
                    repository,
                    number: i.number,
                    body: Some(body.clone()),
                    state: None,
                },
                Status::Updated,
                i.number,
            ),
            (None, Some(i)) => (
                Call::UpdateIssue {
                    repository,
                    number: i.number,
                    body: None,
                    state: Some("closed".into()),
                },
                Status::Closed,
                i.number,
            ),
            (None, None) => {
                return self.finish(
                    Status::Noop,
                    None,
                    String::new(),
                    "the reaper is delivered; no alert issue is open".into(),
                )
            }
        };
        self.phase = Phase::Writing;
        self.writing = Some((status, number));
        self.x.send(call, RequestKind::Write, now)
    }

    fn report(&self, status: Status, reason: &str) -> ItemReport {
        let mut r = ItemReport::new("audit", &self.s.repository, status, reason);
        r.identity = self.identity.clone();
        r.problem = self.problem.clone();
        r
    }

    fn finish(
        &mut self,
        status: Status,
        number: Option<u64>,
        url: String,
        detail: String,
    ) -> Command {
        let mut report = self.report(status, REAPER_DELIVERY);
        report.number = number;
        report.url = url;
        report.detail = detail;
        self.done(report, true, None)
    }

    /// A failed or ambiguous read, or a failed write: the step fails.
    fn fail(&mut self, f: Failure) -> Command {
        let mut report = self.report(Status::of_failure(f.code), REAPER_DELIVERY);
        report.detail = f.message.clone();
        self.done(report, false, Some(f))
    }

    fn done(&mut self, report: ItemReport, ok: bool, error: Option<Failure>) -> Command {
        self.phase = Phase::Done;
        let mut o = Outcome::new(
            if ok {
                ResultWord::Reported
            } else {
                ResultWord::Failed
            },
            ok,
            "",
            "",
        );
        o.stats = self.x.stats.clone();
        o.report = Some(report);
        o.error = error;
        Command::Finish {
            outcome: Box::new(o),
        }
    }
}

impl super::cancelled::Steps for AuditOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        AuditOp::step(self, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::time::parse_rfc3339;

    fn settings() -> AuditSettings {
        let raw: RawInputs = [("GITHUB_REPOSITORY", "octo/app")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AuditSettings::parse(&raw).unwrap().0
    }

    fn run(status: &str, conclusion: Option<&str>, created: &str) -> WorkflowRunEntry {
        WorkflowRunEntry {
            id: 7,
            status: Some(status.into()),
            conclusion: conclusion.map(str::to_string),
            created_at: created.into(),
            run_started_at: Some(created.into()),
            updated_at: created.into(),
            html_url: "https://github.com/octo/app/actions/runs/7".into(),
        }
    }

    #[test]
    fn a_workflow_is_one_file_name_or_id() {
        let parse = |workflow: &str| {
            let raw: RawInputs = [("GITHUB_REPOSITORY", "octo/app"), ("workflow", workflow)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            AuditSettings::parse(&raw).map(|(s, _)| s.workflow)
        };
        for ok in ["reap.yml", "reap.yaml", "161335", ".reap.yml"] {
            assert_eq!(parse(ok).ok().as_deref(), Some(ok));
        }
        for bad in ["..", ".", "a/b", "a\\b", "%2e%2e", "reap .yml"] {
            let e = parse(bad).expect_err(bad);
            assert!(e.to_string().contains("workflow"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_reaper_delivery_rules() {
        let s = settings();
        let t = |m: u64| parse_rfc3339("2026-06-01T12:00:00Z").unwrap() + m * 60_000;
        let at = "2026-06-01T12:00:00Z";
        assert!(reaper_problem(&s, None, t(0))
            .unwrap()
            .contains("No scheduled run"));
        assert_eq!(
            reaper_problem(&s, Some(&run("completed", Some("success"), at)), t(30)),
            None
        );
        assert!(
            reaper_problem(&s, Some(&run("completed", Some("success"), at)), t(31))
                .unwrap()
                .contains("older than 30")
        );
        assert!(
            reaper_problem(&s, Some(&run("completed", Some("cancelled"), at)), t(1))
                .unwrap()
                .contains("ended `cancelled`")
        );
        assert_eq!(
            reaper_problem(&s, Some(&run("in_progress", None, at)), t(15)),
            None
        );
        assert!(
            reaper_problem(&s, Some(&run("in_progress", None, at)), t(16))
                .unwrap()
                .contains("more than 15 minutes")
        );
    }

    #[test]
    fn the_body_is_the_same_for_the_same_problem_whenever_it_is_audited() {
        let s = settings();
        let r = run("completed", Some("failure"), "2026-06-01T12:00:00Z");
        let t = parse_rfc3339("2026-06-01T12:00:00Z").unwrap();
        let a = reaper_problem(&s, Some(&r), t + 60_000).unwrap();
        let b = reaper_problem(&s, Some(&r), t + 29 * 60_000).unwrap();
        assert_eq!(alert_body(&s, &a, Some(&r)), alert_body(&s, &b, Some(&r)));
        assert!(alert_body(&s, &a, Some(&r)).starts_with(&alert_marker(REAPER_DELIVERY)));
    }

    fn issue(number: u64, ours: bool) -> IssueEntry {
        IssueEntry {
            number,
            login: if ours { "leasehold-bot" } else { "someone" }.into(),
            title: String::new(),
            body: if ours {
                format!("{}\nthe reaper", alert_marker(REAPER_DELIVERY))
            } else {
                "an issue".into()
            },
            state: "open".into(),
            pull_request: false,
        }
    }

    /// Runs an audit with no scheduled run (a problem to report) whose `listIssues` pages are
    /// `pages(call number)`; returns its outcome and every call it made.
    fn audit(pages: impl FnMut(u32) -> Reply) -> (Outcome, Vec<Call>) {
        audit_writing(pages, || Reply::Posted {
            id: 99,
            number: Some(99),
            url: String::new(),
            date: None,
        })
    }

    /// As [`audit`], each write answered `written()`.
    fn audit_writing(
        mut pages: impl FnMut(u32) -> Reply,
        written: impl Fn() -> Reply,
    ) -> (Outcome, Vec<Call>) {
        let mut op = AuditOp::new(settings(), 1);
        let now = parse_rfc3339("2026-06-01T12:00:00Z").unwrap();
        let mut step = op.step(Event::Start { now }).unwrap();
        let (mut calls, mut lists) = (Vec::new(), 0);
        for _ in 0..100 {
            let call = match step.command {
                Command::Finish { outcome } => return (*outcome, calls),
                Command::Request { call, .. } => call,
                other => panic!("unexpected {other:?}"),
            };
            let reply = match &call {
                Call::GetViewer => Reply::User {
                    login: "leasehold-bot".into(),
                    account_type: "Bot".into(),
                    date: None,
                },
                Call::ListWorkflowRuns { .. } => Reply::WorkflowRuns {
                    total_count: 0,
                    runs: Vec::new(),
                    date: None,
                },
                Call::ListIssues { .. } => {
                    lists += 1;
                    pages(lists)
                }
                Call::CreateIssue { .. } | Call::UpdateIssue { .. } => written(),
                other => panic!("unexpected {other:?}"),
            };
            calls.push(call);
            step = op.step(Event::Reply { now, reply }).unwrap();
        }
        panic!("did not finish")
    }

    fn page(numbers: std::ops::RangeInclusive<u64>, ours: u64, next: Option<u32>) -> Reply {
        Reply::Issues {
            issues: numbers.map(|n| issue(n, n == ours)).collect(),
            next: next.map(|p| {
                format!("https://api.github.com/repositories/1/issues?state=open&page={p}")
            }),
            date: None,
        }
    }

    fn report_status(o: &Outcome) -> String {
        serde_json::to_value(o.report.as_ref().unwrap()).unwrap()["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// An issue opened between two pages moves every later one a place on: the last issue of
    /// page 1 comes again first on page 2. Ours, seen twice, is one issue, not two (`ambiguous`).
    #[test]
    fn an_issue_seen_on_two_pages_is_one_issue() {
        let (o, calls) = audit(|n| match n {
            1 => page(1..=100, 100, Some(2)),
            _ => page(100..=150, 100, None),
        });
        assert!(o.error.is_none(), "{:?}", o.error);
        assert!(
            calls.iter().any(|c| matches!(c, Call::UpdateIssue { .. })),
            "the one issue is updated: {calls:?}"
        );
        assert_ne!(report_status(&o), "ambiguous");
    }

    /// An issue closed between two pages moves ours back onto a page already read: found on no
    /// page, it would be opened a second time. Over several pages, nothing found is read again
    /// before an issue is opened.
    #[test]
    fn nothing_found_over_several_pages_is_read_again_before_opening() {
        // First scan: ours (#101) was first of page 2, then moved to page 1's end unseen.
        let (o, calls) = audit(|n| match n {
            1 => page(1..=100, 0, Some(2)),
            2 => page(102..=150, 0, None),
            3 => page(2..=101, 101, Some(2)),
            _ => page(102..=150, 0, None),
        });
        assert!(o.error.is_none(), "{:?}", o.error);
        assert!(
            !calls.iter().any(|c| matches!(c, Call::CreateIssue { .. })),
            "no second issue: {calls:?}"
        );
        // Nothing of ours on either scan: opened once.
        let (o, calls) = audit(|n| page(1..=100, 0, (n % 2 == 1).then_some(2)));
        assert!(o.error.is_none(), "{:?}", o.error);
        let lists = calls
            .iter()
            .filter(|c| matches!(c, Call::ListIssues { .. }))
            .count();
        let creates = calls
            .iter()
            .filter(|c| matches!(c, Call::CreateIssue { .. }))
            .count();
        assert_eq!((lists, creates), (4, 1));
    }

    /// A write whose answer was lost may have landed: it is not sent again, and the failure
    /// says what it may have done, never that no issue was touched.
    #[test]
    fn a_write_whose_answer_was_lost_says_what_it_may_have_done() {
        let (o, calls) = audit_writing(
            |_| page(1..=3, 0, None),
            || Reply::Transport {
                sent: true,
                message: "socket hang up".into(),
            },
        );
        let creates = calls
            .iter()
            .filter(|c| matches!(c, Call::CreateIssue { .. }))
            .count();
        assert_eq!(creates, 1, "never sent twice: {calls:?}");
        let error = o.error.expect("failed");
        assert!(
            error.message.contains("may have been opened"),
            "{}",
            error.message
        );
        assert!(!o.report.unwrap().detail.contains("no issue touched"));
    }
}
