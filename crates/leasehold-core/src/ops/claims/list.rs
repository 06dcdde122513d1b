//! list: every claim of a namespace, read page by page (100 refs a page, each with its payload
//! in the same query) until GitHub says there is no next page; a page that says there is more
//! but gives no cursor fails rather than reading as the end. `stale` keeps only held claims
//! past their expiry. Read only; a failed page is retried within the retry policy by the same
//! classification and the same retry decision as the engine's requests, GitHub's clock is the
//! engine's estimate of it, and the engine's request backstop bounds the pages read.

use crate::engine::{retry_sleep, ClockEstimate};
use crate::policy::limits::{MAX_REQUESTS, REQUEST_TIMEOUT_MS};
use crate::policy::{classify, Class, RequestKind, RetryPolicy, Rng};
use crate::store::claim::{namespace_prefix, parse_payload};
use crate::store::refs::{list_refs_call, parse_list};
use crate::wire::time::Millis;
use crate::wire::{
    ClaimItem, ClaimReport, ClaimState, Command, Error, Event, Failure, FailureCode, LeasePolicy,
    Outcome, ProtocolError, Reply, ResultWord, Stats, Status, Step,
};

pub struct ListOp {
    repository: String,
    namespace: String,
    lease: LeasePolicy,
    stale_only: bool,
    retry: RetryPolicy,
    rng: Rng,
    cursor: Option<String>,
    items: Vec<ClaimItem>,
    repository_id: Option<String>,
    failures: u32,
    /// When a streak of 401s began: a 401 is taken for the token's replication lag only within
    /// the grace after it (as the engine takes it), then it is the token's refusal.
    auth_since: Option<Millis>,
    stats: Stats,
    /// GitHub's clock, from the `date` of its answers (as the engine estimates it).
    clock: ClockEstimate,
    /// When the request now awaited was sent (local clock), for the clock estimate.
    sent_at: Millis,
    phase: ListPhase,
    done: bool,
}

/// Where the list is: what event may come next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListPhase {
    /// Not started: only `Start`.
    Idle,
    /// A page was asked for: only its `Reply` (or `Cancel`).
    Awaiting,
    /// Sleeping before a retry: only the `Timer` (or `Cancel`).
    Sleeping,
}

impl ListOp {
    pub fn new(s: &super::ClaimSettings, stale_only: bool, seed: u64) -> Self {
        ListOp {
            repository: s.repository.clone(),
            namespace: s.namespace.clone(),
            lease: s.lease.clone(),
            stale_only,
            retry: s.retry.clone(),
            rng: Rng::new(seed),
            cursor: None,
            items: Vec::new(),
            repository_id: None,
            failures: 0,
            auth_since: None,
            stats: Stats::default(),
            clock: ClockEstimate::default(),
            sent_at: 0,
            phase: ListPhase::Idle,
            done: false,
        }
    }

    fn request(&mut self, now: Millis) -> Command {
        if self.stats.requests >= MAX_REQUESTS {
            return self.finish(
                Status::of_failure(FailureCode::RequestBudget),
                format!("sent {MAX_REQUESTS} requests without finishing"),
                Some(Failure {
                    code: FailureCode::RequestBudget,
                    message: format!("sent {MAX_REQUESTS} requests without finishing"),
                    class: None,
                    status: None,
                }),
            );
        }
        self.phase = ListPhase::Awaiting;
        self.sent_at = now;
        self.stats.requests += 1;
        self.stats.reads += 1;
        Command::Request {
            call: list_refs_call(
                &self.repository,
                &namespace_prefix(&self.namespace),
                self.cursor.as_deref(),
            ),
            timeout_ms: REQUEST_TIMEOUT_MS,
        }
    }

    fn finish(&mut self, status: Status, detail: String, error: Option<Failure>) -> Command {
        self.done = true;
        let mut o = Outcome::settled(
            ResultWord::Status,
            status.exit_code() == 0,
            &self.namespace,
            "",
        );
        o.stats = self.stats.clone();
        o.error = error;
        o.claims = Some(ClaimReport {
            status,
            repository: self.repository.clone(),
            repository_id: self.repository_id.clone(),
            namespace: self.namespace.clone(),
            run_id: String::new(),
            items: std::mem::take(&mut self.items),
            detail,
            dry_run: false,
            next: Default::default(),
            clock: None,
        });
        Command::Finish {
            outcome: Box::new(o),
        }
    }

    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let legal = !self.done
            && matches!(
                (self.phase, &event),
                (ListPhase::Idle, Event::Start { .. })
                    | (ListPhase::Sleeping, Event::Timer { .. })
                    | (ListPhase::Awaiting, Event::Reply { .. })
                    | (_, Event::Cancel { .. })
            );
        if !legal {
            let state = match (self.done, self.phase) {
                (true, _) => "finished",
                (_, ListPhase::Idle) => "not started",
                (_, ListPhase::Awaiting) => "awaiting the answer to a list read",
                (_, ListPhase::Sleeping) => "sleeping before a retry",
            };
            return Err(ProtocolError {
                event: event.name().into(),
                state: state.into(),
            }
            .into());
        }
        let command = match event {
            Event::Start { now } | Event::Timer { now } => self.request(now),
            Event::Cancel { .. } => self.finish(Status::Cancelled, "cancelled".into(), None),
            Event::Reply { now, reply } => self.on_reply(now, reply),
            Event::CancelledReply { .. } => unreachable!("Cancellable hands it over as a reply"),
        };
        if matches!(command, Command::Sleep { .. }) {
            self.phase = ListPhase::Sleeping;
        }
        Ok(Step {
            command,
            log: Vec::new(),
        })
    }

    fn on_reply(&mut self, now: Millis, reply: Reply) -> Command {
        let auth_grace = self
            .auth_since
            .is_none_or(|since| now.saturating_sub(since) < self.retry.auth_grace_ms);
        if let Some(class) = classify(RequestKind::Read, &reply, now, auth_grace) {
            self.failures += 1;
            if matches!(&reply, Reply::Http { status: 401, .. }) {
                self.auth_since.get_or_insert(now);
            }
            // GitHub's own words, as the engine gives them.
            let (status, message) = reply.said();
            let said = match status {
                Some(s) => format!(": answered {s} {message}"),
                None if message.is_empty() => String::new(),
                None => format!(": {message}"),
            };
            let failure = |code| Failure {
                code,
                message: format!("the list read failed ({}){said}", class.name()),
                class: Some(class.word()),
                status,
            };
            return match class {
                Class::Transient | Class::RateLimited { .. } => match retry_sleep(
                    &self.retry,
                    class,
                    self.failures,
                    now,
                    None,
                    &mut self.rng,
                    &mut self.stats,
                ) {
                    Some((until_ms, reason)) => {
                        self.stats.retries += 1;
                        Command::Sleep { until_ms, reason }
                    }
                    // 401s to the end: the token's refusal, not GitHub's unavailability.
                    None if status == Some(401) => self.finish(
                        Status::Permission,
                        "GitHub refused the token".into(),
                        Some(Failure {
                            code: FailureCode::Refused,
                            message: format!("the list read was refused{said}"),
                            class: Some(Class::Refusal.word()),
                            status,
                        }),
                    ),
                    None => self.finish(
                        Status::Transport,
                        "GitHub stayed unavailable".into(),
                        Some(failure(FailureCode::ApiUnavailable)),
                    ),
                },
                _ => self.finish(
                    Status::Permission,
                    "GitHub refused the list read".into(),
                    Some(failure(FailureCode::Refused)),
                ),
            };
        }
        self.failures = 0;
        self.auth_since = None;
        let Reply::Graphql { data, date, .. } = reply else {
            return self.finish(Status::Transport, "not a GraphQL answer".into(), None);
        };
        self.clock.observe(date.as_deref(), self.sent_at, now);
        let server_now = self.clock.server_now(now);
        let (id, refs, next) = match parse_list(&data.unwrap_or_default()) {
            Ok(page) => page,
            Err(e) => {
                return self.finish(
                    Status::Stale,
                    format!("the list answer is unreadable: {e}"),
                    None,
                )
            }
        };
        self.repository_id = Some(id);
        for r in refs {
            let key = r.name.rsplit('/').next().unwrap_or_default().to_string();
            let full = if r.name.starts_with("refs/") {
                r.name.clone()
            } else {
                format!("{}{}", namespace_prefix(&self.namespace), r.name)
            };
            let payload = match r
                .text
                .as_deref()
                .map(|t| parse_payload(t, &self.namespace, &key))
            {
                Some(Ok(p)) => Some(p),
                _ => None,
            };
            let status = match &payload {
                None => Status::Stale,
                Some(p) if p.state == ClaimState::Released => Status::Released,
                Some(p) if super::takeable(&self.lease, p, server_now) => Status::Expired,
                Some(_) => Status::Held,
            };
            if self.stale_only && status != Status::Expired {
                continue;
            }
            self.items.push(ClaimItem {
                key,
                ref_name: full,
                token: r.oid,
                payload,
                status: Some(status),
                eligible_at: None,
                candidate: None,
            });
        }
        match next {
            Some(cursor) => {
                self.cursor = Some(cursor);
                self.request(now)
            }
            None => {
                let n = self.items.len();
                self.finish(Status::Ok, format!("{n} claims"), None)
            }
        }
    }
}

impl super::super::cancelled::Steps for ListOp {
    fn step(&mut self, event: Event) -> Result<Step, Error> {
        ListOp::step(self, event)
    }
}
