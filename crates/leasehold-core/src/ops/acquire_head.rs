//! acquire's pull-request head check (`pull-request`, `expected-head-sha`), kept apart from the
//! admission plan in `acquire.rs`, which asks this gate at three points:
//!
//! 1. **While queued**, on the poll schedule and not more often: the first plan after each
//!    poll's read asks for the head before it plans.
//! 2. **Immediately before the write that admits** this claim: unless the head was read current
//!    within this same plan (the poll's own read, on the same version of the state), it is read
//!    first; a compare-and-swap that conflicts plans again on another version and reads it again.
//! 3. **Once after admission**, before acquire returns control: a push that landed between
//!    the last read and the admitting write is caught here.
//!
//! Superseded (closed, merged, or a new head) at any point, or unverifiable (the read failed
//! past the engine's question budget) before or after admission: acquire leaves as a cancelled
//! acquire does (its queue entry or holding removed, the waiters behind admitted) and finishes
//! with `superseded` or `unverified-head`. A queued read that fails is only reported: the
//! head must still be read before admission. Without the inputs nothing here sends anything.

use crate::wire::Call;
use crate::wire::{ChangeAction, Failure, FailureCode, Level, LogLine, Outcome, Reply, ResultWord};

use super::head::{judge, PrHead, Verdict};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    Queued,
    BeforeAdmission,
    AfterAdmission,
}

pub struct HeadGate {
    pr: Option<PrHead>,
    /// A queued read is due at the next plan (set when acquire sleeps to poll).
    due: bool,
    /// The head was read current while planning on this revision of the state.
    fresh: Option<u64>,
    /// The revision the question under way was asked on.
    asked_on: u64,
    after_done: bool,
    asked: Option<Point>,
    /// Why acquire leaves: its result word and why.
    leave: Option<(ResultWord, String)>,
}

impl HeadGate {
    pub fn new(pr: Option<PrHead>) -> Self {
        HeadGate {
            pr,
            due: false,
            fresh: None,
            asked_on: 0,
            after_done: false,
            asked: None,
            leave: None,
        }
    }

    fn ask(&mut self, at: Point, revision: u64) -> Option<Call> {
        let pr = self.pr.as_ref().filter(|_| self.leave.is_none())?;
        self.asked = Some(at);
        self.asked_on = revision;
        Some(pr.call())
    }

    /// Planning on `revision`, a version a poll read, still queued: the head, when a read is
    /// due.
    pub fn while_queued(&mut self, revision: u64) -> Option<Call> {
        if !self.due {
            return None;
        }
        self.due = false;
        self.ask(Point::Queued, revision)
    }

    /// About to write the version that admits this claim, planned on `revision`: a read current
    /// on another version (before a write that conflicted) is not fresh.
    pub fn before_admission(&mut self, revision: u64) -> Option<Call> {
        if self.fresh.take() == Some(revision) {
            return None;
        }
        self.ask(Point::BeforeAdmission, revision)
    }

    /// This claim holds: the one read after admission.
    pub fn after_admission(&mut self) -> Option<Call> {
        if self.after_done {
            return None;
        }
        self.ask(Point::AfterAdmission, self.asked_on)
    }

    /// acquire sleeps until its next poll: a read is due then, and nothing read now is fresh.
    pub fn polled(&mut self) {
        self.due = self.pr.is_some();
        self.fresh = None;
    }

    /// Whether `call` is this gate's question.
    pub fn owns(&self, call: &Call) -> bool {
        matches!(call, Call::GetPullRequest { .. }) && self.asked.is_some()
    }

    /// The answer to the gate's question.
    pub fn on_answer(&mut self, answer: Result<Reply, Failure>, log: &mut Vec<LogLine>) {
        let (Some(pr), Some(at)) = (self.pr.as_ref(), self.asked.take()) else {
            return;
        };
        match judge(pr, &answer) {
            Verdict::Current => {
                match at {
                    Point::Queued | Point::BeforeAdmission => self.fresh = Some(self.asked_on),
                    Point::AfterAdmission => self.after_done = true,
                }
                log.push(LogLine {
                    level: Level::Debug,
                    text: format!("pull request #{} is still at {}", pr.number, pr.expected),
                });
            }
            Verdict::Superseded { why, .. } => {
                log.push(LogLine {
                    level: Level::Warning,
                    text: format!("{why}: leaving the lock (superseded)"),
                });
                self.leave = Some((ResultWord::Superseded, why));
            }
            Verdict::Unverified(why) if at == Point::Queued => log.push(LogLine {
                level: Level::Warning,
                text: format!("{why}; it is read again at the next poll, and must be verified before admission"),
            }),
            Verdict::Unverified(why) => {
                log.push(LogLine {
                    level: Level::Warning,
                    text: format!("{why}: leaving the lock (unverified-head)"),
                });
                self.leave = Some((ResultWord::UnverifiedHead, why));
            }
        }
    }

    /// acquire must leave (it then plans as a cancelled acquire).
    pub fn leaving(&self) -> bool {
        self.leave.is_some()
    }

    /// The change a leaving write records.
    pub fn action(&self, cancel: ChangeAction) -> ChangeAction {
        match &self.leave {
            Some((ResultWord::Superseded, _)) => ChangeAction::Superseded,
            Some(_) => ChangeAction::UnverifiedHead,
            None => cancel,
        }
    }

    /// A cancelled outcome of a leaving acquire is `superseded` or `unverified-head`, failed.
    pub fn mark(&self, o: &mut Outcome) {
        if let (ResultWord::Cancelled, Some((word, why))) = (o.result, &self.leave) {
            o.result = *word;
            o.success = false;
            let code = if *word == ResultWord::Superseded {
                FailureCode::HeadMoved
            } else {
                FailureCode::HeadUnverified
            };
            o.error = Some(Failure::new(code, why.clone()));
        }
    }
}
