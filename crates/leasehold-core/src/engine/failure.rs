//! What a failed answer means, by its class and the request it answered: read again, retry
//! within the budget, read back a write whose outcome is unknown, or fail. Questions to the
//! Actions API fail softly: the planner goes on without the answer.

use super::{ConfigKnowledge, Engine, Known, Pending, Planner, Provenance, Wake};
use crate::policy::limits::{
    CONFLICT_BACKOFF_CAP_MS, CONFLICT_BACKOFF_FULL_CROWD, CONFLICT_BACKOFF_MAX_DOUBLINGS,
    CONFLICT_BACKOFF_MS, DEFAULT_CAPACITY, MAX_CONFLICTS_IN_ROW, MAX_CONFLICTS_ON_ONE_VERSION,
};
use crate::policy::{names_a_newer_version, next_attempt_at, rate_wait, Class, RetryPolicy, Rng};
use crate::store::{self, Document};
use crate::wire::time::Millis;
use crate::wire::{
    Call, Command, ConfigRecord, FailureCode, Level, LogLine, Reply, SleepReason, Stats,
};

impl<D: Document, P: Planner<Doc = D> + ?Sized> Engine<P, D> {
    /// An operation that may (release) goes on without the config it could not read, by the
    /// state's own record of it, and says so.
    pub(super) fn without_config(
        &mut self,
        what: &str,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        self.failures = 0;
        self.config.done_without = true;
        log.push(LogLine {
            level: Level::Warning,
            text: format!("{what}: going on without the config, by the state's own record of it"),
        });
        self.decide(now, log)
    }

    pub(super) fn on_failure(
        &mut self,
        sent: Call,
        pending: Pending,
        class: Class,
        reply: &Reply,
        now: Millis,
        log: &mut Vec<LogLine>,
    ) -> Command {
        let (status, message) = reply.said();
        let what = match status {
            Some(s) => format!("{} answered {s} {message}", sent.name()),
            None => format!("{} failed: {message}", sent.name()),
        };
        if pending == Pending::Probe {
            return self.on_probe_failure(sent, class, what, status, now, log);
        }
        #[cfg(feature = "planted-bugs")]
        if crate::planted::active(crate::planted::Bug::RefusedBranchIsWritten)
            && matches!((class, pending), (Class::AlreadyExists, Pending::Branch))
        {
            if let Some(Call::WriteFile { content, .. }) = self.after_branch.take() {
                return self.written(crate::store::blob::blob_sha(&content), now, log);
            }
        }
        // A step of the branch's creation that will not be repeated as is: the write waiting
        // for the branch is dropped, and planned again on what a read shows.
        if matches!(pending, Pending::Tree | Pending::Commit | Pending::Branch)
            && !matches!(class, Class::Transient | Class::RateLimited { .. })
        {
            self.after_branch = None;
            self.pending_doc = None;
        }
        match (class, pending) {
            // A document in refs reads an absent ref as null, never as a 404: a NOT_FOUND there
            // names the repository, and is a refusal (below).
            (Class::NotFound, Pending::StateRead) if self.in_file() => {
                if self.max_revision.is_some() {
                    // The file was there before: a 404 now is a stale cache (or a deleted file,
                    // which leasehold never does). Never plan on it.
                    return self.stale(now, log);
                }
                self.failures = 0;
                // GitHub names a missing branch in this 404 ("No commit found for the ref …",
                // docs/github-semantics.md#missing-branch); a missing file is "Not Found".
                self.branch_absent_hint = message.starts_with("No commit found for the ref");
                let doc = P::Doc::empty(&self.target.lock);
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
                let path = store::config_path(&self.target.lock);
                // A pool's config gone: its waiters asked for resources a plain lock has none
                // of, so the pool admits nobody new (and no new claim) until a config is there.
                let error = self.closes_without_config().then(|| crate::wire::ConfigError {
                    path: path.clone(),
                    rule: "missing: the lock's state is a pool's and its config file is gone; the pool admits nobody new until a config is committed (one without resources makes it a plain lock)".into(),
                });
                log.push(match &error {
                    Some(e) => LogLine {
                        level: Level::Warning,
                        text: e.to_string(),
                    },
                    None => LogLine {
                        level: Level::Info,
                        text: format!(
                            "no {path} on the default branch: capacity {DEFAULT_CAPACITY}"
                        ),
                    },
                });
                self.config = ConfigKnowledge {
                    record: Some(ConfigRecord {
                        capacity: DEFAULT_CAPACITY,
                        lease: None,
                        sha: None,
                        read_at: self.clock.server_now(now),
                        pool: error.as_ref().map(store::closed_pool),
                        lifecycle: None,
                    }),
                    etag: None,
                    error,
                    done_without: false,
                };
                self.decide(now, log)
            }
            (Class::NotFound, Pending::StateWrite)
                if self.in_file() && self.known.as_ref().is_some_and(|k| k.sha.is_some()) =>
            {
                // The file was read, so the branch exists: GitHub answers 404 to a token that
                // may read but not write.
                self.pending_doc = None;
                self.fail(
                    FailureCode::Refused,
                    format!("{what} (the state file exists: the token may lack contents: write on the lock repository)"),
                    Some(Class::Refusal),
                    status,
                    now,
                )
            }
            (Class::NotFound, Pending::StateWrite) if self.in_file() => {
                // The write planned on the absent file is sent again once the branch exists.
                self.branch_missing(now, Some(sent), log)
            }
            (Class::AlreadyExists, Pending::Branch) => self.branch_created_elsewhere(now, log),
            (Class::Conflict, _) => {
                // Whether the refused write joined the lock: what the backoff below is sized by.
                let arrival = self
                    .pending_doc
                    .take()
                    .and_then(|d| d.last_change().map(|c| c.action.is_arrival()))
                    .unwrap_or(true);
                self.batch = None;
                #[cfg(feature = "planted-bugs")]
                if crate::planted::active(crate::planted::Bug::ConflictIsFailure) {
                    return self.fail(
                        FailureCode::Contention,
                        format!("conflict: {what}"),
                        Some(class),
                        status,
                        now,
                    );
                }
                self.stats.conflicts += 1;
                if self.carried {
                    // Planned on a version carried from an earlier step, not read: it was
                    // merely out of date, which says nothing about other writers right now.
                    // Read when the next write may go (see below), not at once.
                    let at = self.write_allowed_at(now);
                    log.push(LogLine {
                        level: Level::Debug,
                        text: format!(
                            "conflict: {what}; the carried version was out of date, reading it in {} ms",
                            at - now
                        ),
                    });
                    return if at > now {
                        self.sleep(at, SleepReason::WriteSpacing, Wake::Reread)
                    } else {
                        self.read_state(now, false)
                    };
                }
                // A conflict means a newer version exists. Refused again and again on the
                // version a read has just shown, by an answer that names no newer version, the
                // write is refused for another reason. (A branch moved by a write to another
                // file, or a read served from a lagging copy, names one, and is retried.)
                if let Call::WriteFile { sha: Some(on), .. } = &sent {
                    let times = match self.conflicted_on.take() {
                        _ if names_a_newer_version(&message) => 0,
                        Some((v, n)) if &v == on => n + 1,
                        _ => 1,
                    };
                    if times >= MAX_CONFLICTS_ON_ONE_VERSION {
                        return self.fail(
                            FailureCode::Refused,
                            format!(
                                "{what}, {times} times in a row on version {on}, no answer naming a newer version: GitHub refuses this write for another reason than a newer version (a ruleset or branch protection on branch {}?); nothing was written",
                                self.target.state_branch
                            ),
                            Some(Class::Refusal),
                            status,
                            now,
                        );
                    }
                    self.conflicted_on = (times > 0).then(|| (on.clone(), times));
                }
                self.conflicts_in_row += 1;
                if self.conflicts_in_row > MAX_CONFLICTS_IN_ROW {
                    return self.fail(
                        FailureCode::Contention,
                        format!("{MAX_CONFLICTS_IN_ROW} compare-and-swap conflicts in a row"),
                        Some(class),
                        status,
                        now,
                    );
                }
                if self.planner.retry_deadline().is_some_and(|d| now >= d) {
                    return self.fail(FailureCode::Contention, format!("the deadline passed with the last write refused by a conflict ({what})"), Some(class), status, now);
                }
                // Every conflict means somebody else's write landed. Back off with full jitter,
                // doubling per conflict in a row, so contenders spread out instead of colliding
                // again (and a crowd starting together stays under GitHub's 80 writes a minute).
                // A write that is no arrival contends with the other holdings of the version it
                // was planned on (and arrivals, which back off on their own): its backoff starts
                // smaller on a small lock.
                let base = if arrival {
                    CONFLICT_BACKOFF_MS
                } else {
                    let holdings = self.known.as_ref().map_or(1, |k| k.doc.holdings());
                    let crowd = holdings.clamp(1, CONFLICT_BACKOFF_FULL_CROWD) as Millis;
                    CONFLICT_BACKOFF_MS * crowd / CONFLICT_BACKOFF_FULL_CROWD as Millis
                };
                let spread = (base
                    << (self.conflicts_in_row - 1).min(CONFLICT_BACKOFF_MAX_DOUBLINGS))
                .min(CONFLICT_BACKOFF_CAP_MS);
                // The next write may not go before a second after the refused one
                // (`send_write`): read no earlier than that, so the version it is planned on is
                // fresh when it goes. Read at once and written a second later, it was stale:
                // traced 8-job runs had a release refused four times in a row that way, holding
                // a slot 4.5 s after its job was done.
                let until = (now + self.rng.up_to(spread)).max(self.write_allowed_at(now));
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
                self.batch = None;
                self.planner.write_unknown();
                self.unknown_streak += 1;
                // Not before the answer's own rate-limit headers allow another request: when
                // they direct a wait, the read-back is timed by that limit's rules (a wait past
                // the deadline, or past the ceiling on directed waits, is given up on, as a
                // rate-limited read's is).
                let wait = crate::policy::directed_limit(reply, now).unwrap_or(class);
                match next_attempt_at(
                    &self.target.retry,
                    wait,
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
                        FailureCode::ApiUnavailable,
                        format!("gave up after {what}"),
                        Some(class),
                        status,
                        now,
                    ),
                }
            }
            (Class::Transient | Class::RateLimited { .. }, _) => {
                self.failures += 1;
                let deadline = if pending == Pending::ConfigRead {
                    self.planner.config_deadline()
                } else {
                    self.planner.retry_deadline()
                };
                match retry_sleep(
                    &self.target.retry,
                    class,
                    self.failures,
                    now,
                    deadline,
                    &mut self.rng,
                    &mut self.stats,
                ) {
                    None if pending == Pending::ConfigRead && self.planner.config_optional() => {
                        self.without_config(&what, now, log)
                    }
                    None => {
                        // Why, by the same wait the retry decision went by.
                        let ceiling = self.target.retry.server_ceiling_ms;
                        let why = match (rate_wait(class, self.failures, now), deadline) {
                            (Some(w), Some(d)) if w.earliest > d => format!(
                                "gave up: the rate limit asks for a wait of {} s, which ends past the retry deadline (GitHub: never retry before it has passed)",
                                w.earliest.saturating_sub(now).div_ceil(1000)
                            ),
                            (Some(w), None) if w.wanted > now + ceiling => format!(
                                "gave up: the rate limit asks for a wait of {} s, longer than the {} s a request waits within its attempts",
                                w.wanted.saturating_sub(now).div_ceil(1000),
                                ceiling / 1000
                            ),
                            (_, Some(_)) => "gave up after the retry deadline passed".to_string(),
                            (_, None) => format!("gave up after {} attempts", self.failures),
                        };
                        self.fail(
                            FailureCode::ApiUnavailable,
                            format!("{why}: {what}"),
                            Some(class),
                            status,
                            now,
                        )
                    }
                    Some((at, reason)) => {
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
            // A release never fails for a config it could not read, refused included: the
            // write that follows is what the token must be allowed, and it says so if not.
            (Class::Refusal, Pending::ConfigRead) if self.planner.config_optional() => {
                self.without_config(&what, now, log)
            }
            (Class::NotFound | Class::Refusal | Class::AlreadyExists, _) => {
                let hint = match status {
                    Some(401) => " (the token was refused: check that it is valid and not expired)",
                    Some(403) => " (the token lacks permission: it needs contents: write on the lock repository)",
                    Some(404) => " (repository not found, or the token cannot see it)",
                    // GitHub creates no git object or reference in a repository without a
                    // branch, and documents 409 for it.
                    Some(409)
                        if matches!(
                            pending,
                            Pending::Tree | Pending::Commit | Pending::Branch
                        ) =>
                    {
                        " (GitHub answers 409 when the repository is empty: the lock repository needs a first commit on its default branch before leasehold can create its state branch)"
                    }
                    // A claim's version is a commit of its own: the same rule.
                    Some(409) if matches!(pending, Pending::RefTree | Pending::RefCommit) => {
                        " (GitHub answers 409 when the repository is empty: the repository needs a first commit on its default branch before it can hold claim refs)"
                    }
                    _ => "",
                };
                self.fail(
                    FailureCode::Refused,
                    format!("{what}{hint}"),
                    Some(class),
                    status,
                    now,
                )
            }
        }
    }
}

/// The retry decision for a request that failed transiently or was rate limited (its
/// `failures`-th failure in a row): when to send it again and why, counting a rate-limit wait;
/// `None` when the retry budget (or `deadline`) is spent. Every retrying loop uses this one.
pub(crate) fn retry_sleep(
    policy: &RetryPolicy,
    class: Class,
    failures: u32,
    now: Millis,
    deadline: Option<Millis>,
    rng: &mut Rng,
    stats: &mut Stats,
) -> Option<(Millis, SleepReason)> {
    let at = next_attempt_at(policy, class, failures, now, deadline, rng)?;
    let reason = if matches!(class, Class::RateLimited { .. }) {
        stats.rate_limit_waits += 1;
        SleepReason::RateLimit
    } else {
        SleepReason::Backoff
    };
    Some((at, reason))
}
