//! The wire between the clients and the simulated GitHub: the requests in flight, the logical
//! writes they carry, and what GitHub does to a request when it arrives, faults included
//! ([`Wire`]: 5xx, 401, rate limits, stale reads, lost answers, unrelated 409s, the Actions API's
//! own refusals), and the trace's text for commands and answers.

use leasehold_core::time::Millis;
use leasehold_core::{Call, Command, Reply};

use crate::fault::{Fault, Profile, REQUEST_FAULTS};
use crate::report::Counters;
use crate::rng::SimRng;
use crate::types::{ClientId, VersionId, WriteId};

use super::store::{http, http_date, Store};

/// One logical write of the state by a core (the driver may send it more than once): a
/// `writeFile`, or on first use the `createBranch` whose commit holds the state.
pub struct WriteRec {
    pub client: ClientId,
    pub sends: u32,
}

/// One request on the wire.
pub struct Request {
    pub client: ClientId,
    pub op_gen: u64,
    pub command: Command,
    pub write: Option<WriteId>,
    pub reply: Option<Reply>,
    /// When GitHub answered it (the time its `date` header carries).
    pub answered_at: Millis,
    pub answered: bool,
    /// The version of the state a read was answered with.
    pub served: Option<VersionId>,
}

/// GitHub processing requests, with the seed's fault profile.
pub struct Wire<'a> {
    pub store: &'a mut Store,
    pub rng: &'a mut SimRng,
    pub profile: &'a Profile,
    pub counters: &'a mut Counters,
    pub now: Millis,
}

impl Wire<'_> {
    fn count(&mut self, fault: Fault) {
        self.counters.faults[fault.index()] += 1;
    }

    /// The fault a request meets when it arrives, if any (one roll over every request fault).
    pub fn draw_request_fault(&mut self) -> Option<Fault> {
        let roll = self.rng.below(1_000_000);
        let mut acc = 0u64;
        for (fault, ppm) in REQUEST_FAULTS.iter().zip(self.profile.request_ppm) {
            acc += u64::from(ppm);
            if roll < acc {
                return Some(*fault);
            }
        }
        None
    }

    /// GitHub processing one request, with the drawn fault. Returns the answer and the version
    /// it committed, if any.
    pub fn process(
        &mut self,
        command: &Command,
        fault: Option<Fault>,
        write: Option<usize>,
    ) -> (Reply, Option<usize>, Option<usize>) {
        if let Some(reply) = self.refusal(fault) {
            return (reply, None, None);
        }
        let mut served = None;
        let (reply, applied) = match command.call().expect("a request") {
            Call::ReadFile { .. } => {
                let stale =
                    (fault == Some(Fault::StaleRead)).then_some(self.profile.stale_window_ms);
                let (reply, older, version) = match stale {
                    Some(window) => {
                        self.store
                            .read(command, self.now, Some((window, &mut *self.rng)))
                    }
                    None => self.store.read(command, self.now, None),
                };
                if older {
                    self.count(Fault::StaleRead);
                }
                served = version;
                if matches!(reply, Reply::NotModified { .. }) {
                    self.counters.not_modified += 1;
                }
                (reply, None)
            }
            Call::WriteFile { branch, .. } => {
                if fault == Some(Fault::Unrelated409) && self.store.branch_exists() {
                    self.count(Fault::Unrelated409);
                    let head = self.store.unrelated_commit().expect("the branch exists");
                    return (
                        http(
                            409,
                            &format!(
                                "refs/heads/{branch} is at c{head:039} but expected c{:039}",
                                head - 1
                            ),
                        ),
                        None,
                        None,
                    );
                }
                let w = write.expect("a write has a record");
                let (reply, applied) = self.store.answer(command, self.now, Some(w));
                if matches!(
                    reply,
                    Reply::Http {
                        status: 409 | 422,
                        ..
                    }
                ) {
                    self.counters.conflicts += 1;
                }
                (reply, applied)
            }
            // The state branch's ref, carrying the state in its commit when `write` is set.
            Call::CreateBranch { .. } => self.store.answer(command, self.now, write),
            Call::CreateTree { .. }
            | Call::CreateCommit { .. }
            | Call::Graphql { .. }
            | Call::CreateRef { .. }
            | Call::GetRef { .. }
            | Call::ListMatchingRefs { .. }
            | Call::GetViewer
            | Call::ListComments { .. }
            | Call::CreateComment { .. }
            | Call::GetPullRequest { .. }
            | Call::ListWorkflowRuns { .. }
            | Call::ListIssues { .. }
            | Call::CreateIssue { .. }
            | Call::UpdateIssue { .. }
            | Call::ListCommits { .. } => (self.store.answer(command, self.now, None).0, None),
            Call::GetRunAttempt { .. } | Call::GetJob { .. } | Call::ListJobs { .. } => {
                match fault {
                    // Never stale: a completed attempt stays completed, in every answer after.
                    Some(Fault::ActionsForbidden) => {
                        self.count(Fault::ActionsForbidden);
                        (http(403, "Resource not accessible by integration"), None)
                    }
                    Some(Fault::ActionsNotFound) => {
                        self.count(Fault::ActionsNotFound);
                        (http(404, "Not Found"), None)
                    }
                    _ => (self.actions_answer(command), None),
                }
            }
        };
        let reply = match fault {
            Some(Fault::LostAck502) => {
                self.count(Fault::LostAck502);
                http(502, "Server Error")
            }
            Some(Fault::LostAckReset) => {
                self.count(Fault::LostAckReset);
                Reply::Transport {
                    sent: true,
                    message: "ECONNRESET".into(),
                }
            }
            Some(Fault::SlowAnswer) => {
                self.count(Fault::SlowAnswer);
                reply
            }
            _ => reply,
        };
        (reply, applied, served)
    }

    /// An answer refused before anything is processed: 5xx, 401, rate limits.
    fn refusal(&mut self, fault: Option<Fault>) -> Option<Reply> {
        let fault = fault?;
        let date = Some(http_date(self.now));
        let limited = |status: u16,
                       message: &str,
                       retry_after: Option<String>,
                       date: Option<String>| Reply::Http {
            status,
            message: message.into(),
            retry_after,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date,
        };
        let reply = match fault {
            Fault::ServerError => {
                let status = self.rng.pick(&[500, 502, 503, 504]);
                http(status, "Server Error")
            }
            Fault::Unauthorized => http(401, "Bad credentials"),
            Fault::RateLimit403RetryAfter | Fault::RateLimit429RetryAfter => {
                let secs = self.rng.between(0, 60);
                let retry_after = if self.rng.below(2) == 0 {
                    secs.to_string()
                } else {
                    http_date(self.now + secs * 1_000)
                };
                let status = if fault == Fault::RateLimit403RetryAfter {
                    403
                } else {
                    429
                };
                limited(
                    status,
                    "You have exceeded a secondary rate limit.",
                    Some(retry_after),
                    date,
                )
            }
            Fault::RateLimit403NoRetryAfter => {
                limited(403, "You have exceeded a secondary rate limit.", None, date)
            }
            Fault::RateLimit429NoRetryAfter => limited(429, "Too Many Requests", None, date),
            Fault::RateLimitPrimary => Reply::Http {
                status: 403,
                message: "API rate limit exceeded for installation.".into(),
                retry_after: None,
                ratelimit_remaining: Some(0),
                ratelimit_reset: Some(self.now / 1_000 + self.rng.between(1, 120)),
                date,
            },
            _ => return None,
        };
        self.count(fault);
        Some(reply)
    }

    /// The Actions API's answer, from GitHub's view now (the model's), with what the simulated
    /// GitHub varies: a job's `run_attempt`, which GitHub does not promise, absent one time in
    /// four.
    fn actions_answer(&mut self, command: &Command) -> Reply {
        let mut reply = self.store.github.answer(command, self.now).reply;
        let seen = match &mut reply {
            Reply::Run { status, .. } => status.clone().unwrap_or_else(|| "no status".into()),
            Reply::Job {
                status,
                run_attempt,
                ..
            } => {
                if self.rng.below(4) == 0 {
                    *run_attempt = None;
                }
                status.clone()
            }
            Reply::Jobs { jobs, .. } => jobs[0].status.clone(),
            _ => "404 unknown".into(),
        };
        *self
            .counters
            .reaper
            .actions_answers
            .entry(seen)
            .or_default() += 1;
        reply
    }
}

/// An Actions API answer for the log: its status and conclusion.
fn answered(status: &str, conclusion: &Option<String>) -> String {
    let conclusion = conclusion
        .as_ref()
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    format!("200 {status}{conclusion}")
}

/// Index of an Actions API command in [`crate::report::ACTIONS_KINDS`].
pub fn actions_index(command: &Command) -> usize {
    match command.call() {
        Some(Call::GetRunAttempt { .. }) => 0,
        Some(Call::GetJob { .. }) => 1,
        _ => 2,
    }
}

pub fn command_timeout(command: &Command) -> Millis {
    command.timeout_ms().unwrap_or(0)
}

pub fn describe(command: &Command) -> String {
    match command {
        Command::Request {
            call: Call::Graphql { .. },
            ..
        } => "POST graphql".into(),
        // The simulation has no slot clients, and no receipts, pull requests or alerts.
        Command::Request {
            call:
                Call::CreateRef { .. }
                | Call::GetRef { .. }
                | Call::ListMatchingRefs { .. }
                | Call::GetViewer
                | Call::ListComments { .. }
                | Call::CreateComment { .. }
                | Call::GetPullRequest { .. }
                | Call::ListWorkflowRuns { .. }
                | Call::ListIssues { .. }
                | Call::CreateIssue { .. }
                | Call::UpdateIssue { .. }
                | Call::ListCommits { .. },
            ..
        } => command.name().into(),
        Command::Request {
            call:
                Call::ReadFile {
                    path,
                    if_none_match,
                    ..
                },
            ..
        } => {
            format!(
                "GET {path}{}",
                if if_none_match.is_some() {
                    " (if-none-match)"
                } else {
                    ""
                }
            )
        }
        Command::Request {
            call:
                Call::WriteFile {
                    content,
                    sha,
                    message,
                    ..
                },
            ..
        } => {
            let revision = serde_json::from_str::<serde_json::Value>(content)
                .ok()
                .and_then(|v| v.get("revision").and_then(|r| r.as_u64()));
            format!(
                "PUT state revision {} {} ({message})",
                revision.unwrap_or(0),
                sha.as_deref()
                    .map(|s| format!("sha {}", &s[..8]))
                    .unwrap_or_else(|| "create".into())
            )
        }
        Command::Request {
            call: Call::CreateTree { .. },
            ..
        } => "POST git/trees".into(),
        Command::Request {
            call: Call::CreateCommit { .. },
            ..
        } => "POST git/commits".into(),
        Command::Request {
            call: Call::CreateBranch { branch, .. },
            ..
        } => format!("POST git/refs {branch}"),
        Command::Request {
            call: Call::GetRunAttempt {
                run_id, attempt, ..
            },
            ..
        } => format!("GET actions/runs/{run_id}/attempts/{attempt}"),
        Command::Request {
            call: Call::GetJob { job_id, .. },
            ..
        } => format!("GET actions/jobs/{job_id}"),
        Command::Request {
            call: Call::ListJobs {
                run_id, attempt, ..
            },
            ..
        } => format!("GET actions/runs/{run_id}/attempts/{attempt}/jobs"),
        Command::Sleep { .. } | Command::Finish { .. } => command.name().into(),
    }
}

pub fn describe_reply(reply: &Reply) -> String {
    match reply {
        Reply::Graphql { errors, .. } => format!("200 graphql, {} errors", errors.len()),
        Reply::File { sha, content, .. } => {
            let revision = serde_json::from_str::<serde_json::Value>(content)
                .ok()
                .and_then(|v| v.get("revision").and_then(|r| r.as_u64()));
            format!(
                "200 sha {} revision {}",
                &sha[..8],
                revision
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| "-".into())
            )
        }
        Reply::NotModified { .. } => "304".into(),
        Reply::NotAFile { found, .. } => format!("200 a {found}, not a file"),
        Reply::Written { sha, .. } => format!("201 written sha {}", &sha[..8]),
        Reply::Created { sha } => format!("201 created {}", &sha[..8]),
        Reply::GitRef { sha, .. } => format!("200 ref {}", &sha[..8.min(sha.len())]),
        Reply::Refs { refs, .. } => format!("200 {} refs", refs.len()),
        Reply::Commits { shas, .. } => format!("200 {} commits", shas.len()),
        Reply::Http {
            status,
            message,
            retry_after,
            ..
        } => {
            format!(
                "{status} {}{}",
                message.lines().next().unwrap_or(""),
                retry_after
                    .as_ref()
                    .map(|r| format!(" (retry-after {r})"))
                    .unwrap_or_default()
            )
        }
        Reply::Transport { sent, message } => format!("no answer (sent:{sent}) {message}"),
        Reply::Run {
            status, conclusion, ..
        } => answered(status.as_deref().unwrap_or("no status"), conclusion),
        Reply::Job {
            status, conclusion, ..
        } => answered(status, conclusion),
        Reply::Jobs { total_count, .. } => format!("200 {total_count} jobs"),
        Reply::User { .. }
        | Reply::Comments { .. }
        | Reply::Posted { .. }
        | Reply::PullRequest { .. }
        | Reply::WorkflowRuns { .. }
        | Reply::Issues { .. } => "200".into(),
    }
}
