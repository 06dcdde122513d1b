//! One request at a time for the operations that run outside the engine on issues, comments
//! and pull requests (receipt, check-head, audit): send it, read what came back, and ask again
//! after a failure that may pass, within the retry policy (and a deadline, when the operation
//! has one). What an answer means is `policy::classify`'s; what to do with it is the
//! operation's.

use crate::policy::limits::{MIN_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS};
use crate::policy::{classify, next_attempt_at, Class, RequestKind, RetryPolicy, Rng};
use crate::wire::time::Millis;
use crate::wire::{
    Call, Command, Error, Failure, FailureCode, ProtocolError, Reply, SleepReason, Stats,
};

/// What the answer to the request in flight comes to.
pub enum Answered {
    /// A success, as GitHub sent it.
    Reply(Reply),
    /// A failure that may pass: perform this (a sleep; the request is sent again when its timer
    /// fires, by [`Exchange::on_timer`]).
    Again(Command),
    /// A failure that will not pass, or one past the budget; `class` is what it was.
    Failed(Failure, Class),
}

pub struct Exchange {
    retry: RetryPolicy,
    deadline: Option<Millis>,
    rng: Rng,
    failures: u32,
    /// The request in flight, or the one a timer will send again.
    pending: Option<(Call, RequestKind)>,
    waiting: bool,
    pub stats: Stats,
}

impl Exchange {
    pub fn new(retry: RetryPolicy, seed: u64) -> Self {
        Exchange {
            retry,
            deadline: None,
            rng: Rng::new(seed),
            failures: 0,
            pending: None,
            waiting: false,
            stats: Stats::default(),
        }
    }

    /// No request is sent, nor retried, after `deadline`.
    pub fn set_deadline(&mut self, deadline: Millis) {
        self.deadline = Some(deadline);
    }

    /// Sends `call` (of `kind`: a read, or a write that must never be sent twice blindly).
    pub fn send(&mut self, call: Call, kind: RequestKind, now: Millis) -> Command {
        self.stats.requests += 1;
        match kind {
            RequestKind::Read => self.stats.reads += 1,
            _ => self.stats.writes += 1,
        }
        self.pending = Some((call.clone(), kind));
        self.waiting = false;
        let timeout_ms = match self.deadline {
            Some(d) => d
                .saturating_sub(now)
                .clamp(MIN_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS),
            None => REQUEST_TIMEOUT_MS,
        };
        Command::Request { call, timeout_ms }
    }

    /// A timer fired: the request that failed is sent again.
    pub fn on_timer(&mut self, now: Millis, state: &str) -> Result<Command, Error> {
        match self.pending.clone() {
            Some((call, kind)) if self.waiting => {
                self.stats.retries += 1;
                Ok(self.send(call, kind, now))
            }
            _ => Err(ProtocolError {
                event: "timer".into(),
                state: state.into(),
            }
            .into()),
        }
    }

    /// The answer to the request in flight.
    pub fn on_reply(&mut self, now: Millis, reply: Reply, state: &str) -> Result<Answered, Error> {
        let Some((call, kind)) = self.pending.clone().filter(|_| !self.waiting) else {
            return Err(ProtocolError {
                event: "reply".into(),
                state: format!("{state} (no request in flight)"),
            }
            .into());
        };
        let Some(class) = classify(kind, &reply, now, false) else {
            self.failures = 0;
            self.pending = None;
            return Ok(Answered::Reply(reply));
        };
        let status = match &reply {
            Reply::Http { status, .. } => Some(*status),
            _ => None,
        };
        let what = match &reply {
            Reply::Http {
                status, message, ..
            } => format!("{} answered {status} {message}", call.name()),
            Reply::Transport { message, .. } => format!("{} got no answer: {message}", call.name()),
            _ => format!("{} failed", call.name()),
        };
        if matches!(class, Class::Transient | Class::RateLimited { .. }) {
            self.failures += 1;
            if let Some(at) = next_attempt_at(
                &self.retry,
                class,
                self.failures,
                now,
                self.deadline,
                &mut self.rng,
            ) {
                self.waiting = true;
                let reason = if matches!(class, Class::RateLimited { .. }) {
                    self.stats.rate_limit_waits += 1;
                    SleepReason::RateLimit
                } else {
                    SleepReason::Backoff
                };
                return Ok(Answered::Again(Command::Sleep {
                    until_ms: at,
                    reason,
                }));
            }
        }
        self.pending = None;
        let code = match class {
            Class::RateLimited { .. } => FailureCode::RateLimited,
            Class::Transient | Class::UnknownOutcome => FailureCode::ApiUnavailable,
            Class::NotFound => FailureCode::NotFound,
            Class::Conflict | Class::AlreadyExists | Class::Refusal => FailureCode::Refused,
        };
        Ok(Answered::Failed(
            Failure {
                code,
                message: what,
                class: Some(class.word()),
                status,
            },
            class,
        ))
    }
}

/// The page a `Link` header's `rel="next"` target names, when it names one.
pub fn next_page(next: &Option<String>) -> Option<u32> {
    next.as_deref().and_then(super::slots::next_page_of)
}
