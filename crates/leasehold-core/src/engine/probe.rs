//! Questions to the Actions API (a run attempt's or a job's status, the jobs of an attempt):
//! evidence for a planner, never the lock itself. A question that fails is asked again a few
//! times within its own deadline, then handed to the planner as unanswered.

use super::{Engine, Pending, Planner, Wake};
use crate::policy::limits::PROBE_MAX_ATTEMPTS;
use crate::policy::{next_attempt_at, Class};
use crate::store::Document;
use crate::wire::time::Millis;
use crate::wire::{Call, Command, Failure, FailureCode, Level, LogLine, SleepReason};

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    /// A question failed with `class` (described by `what`).
    pub(super) fn on_probe_failure(
        &mut self,
        sent: Call,
        class: Class,
        what: String,
        status: Option<u16>,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
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
                return self.sleep(at, SleepReason::Backoff, Wake::Retry(sent, Pending::Probe));
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
                FailureCode::ApiUnavailable,
                format!("gave up: {what} (the primary rate limit resets too far away)"),
                Some(class),
                status,
                now,
            );
        }
        self.failures = 0;
        let failure = Failure {
            code: FailureCode::unanswered(class.word()),
            message: what,
            class: Some(class.word()),
            status,
        };
        self.planner.on_probe(&sent, Err(failure), log);
        // Without the answer, but no request before GitHub allows one again.
        if let Some(at) = wait.filter(|&at| at > now) {
            self.stats.rate_limit_waits += 1;
            return self.sleep(at, SleepReason::RateLimit, Wake::AfterProbe);
        }
        self.after_probe(now, log)
    }
}
