//! The pull request's head: is the commit a job was started for still the one to work on?
//! (docs/github-semantics.md#pull-request-head). Used by acquire (`pull-request`,
//! `expected-head-sha`: `acquire_head.rs`) and by the standalone `check-head`, which a job runs
//! before it even queues, within [`CHECK_HEAD_BUDGET_MS`] in all.
//!
//! Current: the pull request is open and its head is the expected sha. Superseded: it is
//! closed (merged or not), or its head moved on (a push). Unverified: it could not be read
//! within the budget (a 404 included: a pull request this token cannot see is not verified).

use crate::input::{RawInputs, Reader};
use crate::policy::limits::CHECK_HEAD_BUDGET_MS;
use crate::policy::RequestKind;
use crate::wire::{
    is_sha, Call, Command, Error, Event, Failure, InputError, ItemReport, Outcome, ProtocolError,
    Reply, ResultWord, Status, Step,
};

use super::exchange::{Answered, Exchange};
use super::receipt::{item_number, item_repository};

/// The pull request a job was started for, and the head it expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrHead {
    pub repository: String,
    pub number: u64,
    pub expected: String,
}

impl PrHead {
    /// `pull-request` and `expected-head-sha`, both or neither (empty on push and dispatch
    /// events: then no pull-request request is ever sent).
    pub(crate) fn parse(r: &Reader) -> Result<Option<PrHead>, InputError> {
        let number = item_number(r, "pull-request")?;
        let expected = r.get("expected-head-sha");
        match (number, expected) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(InputError::new(
                "expected-head-sha",
                "is required with pull-request (the head the job was started for: github.event.pull_request.head.sha)",
                "",
            )),
            (None, Some(e)) => Err(InputError::new("pull-request", "is required with expected-head-sha", e)),
            (Some(number), Some(expected)) => {
                if !is_sha(expected) {
                    return Err(InputError::new("expected-head-sha", "must be a 40-hex commit sha (lowercase)", expected));
                }
                Ok(Some(PrHead {
                    repository: item_repository(r)?,
                    number,
                    expected: expected.to_string(),
                }))
            }
        }
    }

    pub fn call(&self) -> Call {
        Call::GetPullRequest {
            repository: self.repository.clone(),
            number: self.number,
        }
    }
}

/// What one read of the pull request says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Current,
    /// Closed or moved on: why, and the head read.
    Superseded {
        why: String,
        head: String,
    },
    /// Could not be read: why.
    Unverified(String),
}

/// Judges one answer to [`PrHead::call`].
pub fn judge(pr: &PrHead, answer: &Result<Reply, Failure>) -> Verdict {
    match answer {
        Ok(Reply::PullRequest {
            head_sha,
            state,
            merged,
            ..
        }) => {
            if state != "open" {
                let how = if *merged { "merged" } else { "closed" };
                Verdict::Superseded {
                    why: format!("pull request #{} was {how}", pr.number),
                    head: head_sha.clone(),
                }
            } else if *head_sha != pr.expected {
                Verdict::Superseded {
                    why: format!(
                        "pull request #{} moved on: its head is {head_sha}, not {}",
                        pr.number, pr.expected
                    ),
                    head: head_sha.clone(),
                }
            } else {
                Verdict::Current
            }
        }
        Ok(_) => Verdict::Unverified("the answer was not a pull request".into()),
        Err(f) => Verdict::Unverified(format!(
            "pull request #{} could not be read: {}",
            pr.number, f.message
        )),
    }
}

/// `check-head`: one verdict within [`CHECK_HEAD_BUDGET_MS`].
pub struct CheckHeadOp {
    pr: PrHead,
    x: Exchange,
    started: bool,
    done: bool,
}

impl CheckHeadOp {
    pub fn parse(raw: &RawInputs, seed: u64) -> Result<(Self, Vec<String>), Error> {
        let mut r = Reader::new(raw);
        let pr =
            PrHead::parse(&r)?.ok_or_else(|| InputError::new("pull-request", "is required", ""))?;
        let retry = r.retry_policy();
        let op = CheckHeadOp {
            pr,
            x: Exchange::new(retry, seed),
            started: false,
            done: false,
        };
        Ok((op, r.warnings))
    }

    pub fn pr(&self) -> &PrHead {
        &self.pr
    }

    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let state = if self.done { "finished" } else { "checking" };
        let command = match event {
            Event::Start { now } if !self.started => {
                self.started = true;
                self.x.set_deadline(now + CHECK_HEAD_BUDGET_MS);
                self.x.send(self.pr.call(), RequestKind::Read, now)
            }
            _ if self.done || !self.started => {
                return Err(ProtocolError {
                    event: event.name().into(),
                    state: state.into(),
                }
                .into())
            }
            Event::Timer { now } => self.x.on_timer(now, state)?,
            Event::Cancel { .. } => self.finish(Verdict::Unverified("cancelled".into())),
            Event::Start { .. } => unreachable!("checked above"),
            Event::CancelledReply { .. } => unreachable!("Cancellable hands it over as a reply"),
            Event::Reply { now, reply } => match self.x.on_reply(now, reply, state)? {
                Answered::Again(sleep) => sleep,
                Answered::Reply(reply) => self.finish(judge(&self.pr, &Ok(reply))),
                Answered::Failed(f, _) => self.finish(judge(&self.pr, &Err(f))),
            },
        };
        Ok(Step {
            command,
            log: Vec::new(),
        })
    }

    fn finish(&mut self, verdict: Verdict) -> Command {
        self.done = true;
        let (status, reason, detail, head) = match verdict {
            Verdict::Current => (
                Status::Current,
                "current",
                format!(
                    "pull request #{} is open at {}",
                    self.pr.number, self.pr.expected
                ),
                Some(self.pr.expected.clone()),
            ),
            Verdict::Superseded { why, head } => {
                (Status::Superseded, "superseded", why, Some(head))
            }
            Verdict::Unverified(why) => (Status::UnverifiedHead, "unverified-head", why, None),
        };
        let mut report = ItemReport::new("check-head", &self.pr.repository, status, reason);
        report.number = Some(self.pr.number);
        report.head_sha = head;
        report.detail = detail;
        let ok = status == Status::Current;
        let mut o = Outcome::new(ResultWord::Reported, ok, "", "");
        o.stats = self.x.stats.clone();
        o.report = Some(report);
        Command::Finish {
            outcome: Box::new(o),
        }
    }
}

impl super::cancelled::Steps for CheckHeadOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        CheckHeadOp::step(self, event)
    }
}
