//! How to read GitHub's answers: the classification table every failed answer goes through.
//! Arithmetic on the facts of the answer and `now`, nothing else.

use super::limits::SECONDARY_DEFAULT_WAIT_MS;
use crate::wire::time::{parse_http_date, Millis};
use crate::wire::{AnswerClass, GraphqlError, Reply};

/// What an answer means. The names are stable: they appear in logs and outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The compare-and-swap precondition failed: re-read and plan again.
    Conflict,
    /// 404.
    NotFound,
    /// 422 "Reference already exists" on ref creation.
    AlreadyExists,
    /// Permission or configuration: retrying cannot help. Stop and report.
    Refusal,
    /// GitHub asked us to wait until `until`.
    RateLimited {
        until: Millis,
        server_directed: bool,
        primary: bool,
    },
    /// A failure that may pass: 5xx on a read, a connection that failed, a 401 just after a
    /// token was minted.
    Transient,
    /// A write that may or may not have been applied: resolve by reading back.
    UnknownOutcome,
}

impl Class {
    /// The stable word for this class (in logs and `outcome.error.class`).
    pub fn word(&self) -> AnswerClass {
        match self {
            Class::Conflict => AnswerClass::Conflict,
            Class::NotFound => AnswerClass::NotFound,
            Class::AlreadyExists => AnswerClass::AlreadyExists,
            Class::Refusal => AnswerClass::Refusal,
            Class::RateLimited { .. } => AnswerClass::RateLimited,
            Class::Transient => AnswerClass::Transient,
            Class::UnknownOutcome => AnswerClass::UnknownOutcome,
        }
    }

    pub fn name(&self) -> &'static str {
        self.word().as_str()
    }

    /// A secondary rate limit that named no time: GitHub's minute from `now` (longer in a row,
    /// `policy/retry.rs`).
    fn secondary_limit(now: Millis) -> Class {
        Class::RateLimited {
            until: now + SECONDARY_DEFAULT_WAIT_MS,
            server_directed: false,
            primary: false,
        }
    }
}

/// The request kinds classification distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    /// A contents write: a compare-and-swap on the file's sha.
    Write,
    /// Creating a git object or ref: harmless to repeat (a tree of the same content has the same
    /// sha, a repeated commit is another commit nobody points at, a ref that exists answers 422).
    Create,
    /// Creating a ref whose creation is itself the claim (a slot number: first writer wins,
    /// docs/github-semantics.md#git-refs). Unlike [`RequestKind::Create`], a create that may
    /// have reached GitHub (a 5xx, a connection lost after sending) is an unknown outcome, to be
    /// read back: repeating it would answer 422 for our own ref and burn the number.
    Allocate,
}

/// Classifies a non-success answer. `auth_grace` says whether a 401 is still inside the grace
/// window in which GitHub's token replication lag explains it.
pub fn classify(kind: RequestKind, reply: &Reply, now: Millis, auth_grace: bool) -> Option<Class> {
    let class = match reply {
        Reply::File { .. }
        | Reply::NotModified { .. }
        | Reply::Written { .. }
        | Reply::Created { .. }
        | Reply::Run { .. }
        | Reply::Job { .. }
        | Reply::Jobs { .. }
        | Reply::GitRef { .. }
        | Reply::Refs { .. }
        | Reply::User { .. }
        | Reply::Comments { .. }
        | Reply::Posted { .. }
        | Reply::PullRequest { .. }
        | Reply::WorkflowRuns { .. }
        | Reply::Issues { .. } => return None,
        Reply::Commits { .. } => return None,
        Reply::Graphql { errors, .. } if errors.is_empty() => return None,
        Reply::Graphql {
            errors,
            retry_after,
            ratelimit_remaining,
            ratelimit_reset,
            date,
            data_absent,
            ..
        } => {
            let headers = Limits::of(retry_after, *ratelimit_remaining, *ratelimit_reset, date);
            classify_graphql(kind, errors, *data_absent, headers.class(now), now)
        }
        // Something other than a file where a file was read: nothing a retry changes. The engine
        // reads it first for the lock's own state and config (engine/reply.rs).
        Reply::NotAFile { .. } => Class::Refusal,
        Reply::Transport { sent: false, .. } => Class::Transient,
        Reply::Transport { sent: true, .. } => match kind {
            RequestKind::Write | RequestKind::Allocate => Class::UnknownOutcome,
            RequestKind::Read | RequestKind::Create => Class::Transient,
        },
        Reply::Http {
            status,
            message,
            retry_after,
            ratelimit_remaining,
            ratelimit_reset,
            date,
        } => {
            let status = *status;
            // Server-directed waits first: a 403 or 429 that carries them is a rate limit,
            // never a refusal.
            if status == 403 || status == 429 {
                let headers = Limits::of(retry_after, *ratelimit_remaining, *ratelimit_reset, date);
                if let Some(class) = headers.class(now) {
                    return Some(class);
                }
                // Without a time to wait for, a limit is still a limit: a 429, no requests
                // remaining (the reset unreadable), or GitHub's words for either limit ("API
                // rate limit exceeded", "secondary rate limit") wait GitHub's minute. Only a 403
                // that names no limit is a refusal.
                let lower = message.to_ascii_lowercase();
                if status == 429
                    || *ratelimit_remaining == Some(0)
                    || lower.contains("rate limit")
                    || lower.contains("abuse")
                {
                    return Some(Class::secondary_limit(now));
                }
                return Some(Class::Refusal);
            }
            match (status, kind) {
                // GitHub documents a 422 of a write endpoint "has been spammed": a secondary
                // limit in other clothes, waited out as one (nothing was written).
                (422, _) if message.to_ascii_lowercase().contains("spammed") => {
                    Class::secondary_limit(now)
                }
                (409, RequestKind::Write) => Class::Conflict,
                // The file exists but we sent no sha: it appeared since we read it.
                (422, RequestKind::Write) if message.contains("sha") => Class::Conflict,
                // GitHub's message, or a "Validation Failed" whose errors[] say
                // `already_exists` (the driver appends their codes to the message).
                (422, RequestKind::Create | RequestKind::Allocate)
                    if message.contains("already exists") || message.contains("already_exists") =>
                {
                    Class::AlreadyExists
                }
                // Observed, not documented: `POST git/refs` sometimes answers a valid request
                // 422 "Reference update failed" (github/rest-api-description#4887). Whether the
                // ref was made is unknown: a create asks again (a ref that landed then answers
                // "already exists", and the read after it shows this job's own write), a slot's
                // allocation reads its ref back, as after a 5xx.
                (422, RequestKind::Create) if message.contains("Reference update failed") => {
                    Class::Transient
                }
                (422, RequestKind::Allocate) if message.contains("Reference update failed") => {
                    Class::UnknownOutcome
                }
                (404, _) => Class::NotFound,
                (401, _) if auth_grace => Class::Transient,
                (500..=599, RequestKind::Write | RequestKind::Allocate) => Class::UnknownOutcome,
                (500..=599, _) => Class::Transient,
                _ => Class::Refusal,
            }
        }
    };
    Some(class)
}

/// Whether a GraphQL answer's `data` holds every field it was asked for: an object whose every
/// member is an object (a mutation's payload; `{"updateRefs": {"clientMutationId": null}}`).
pub fn answered_every_field(data: Option<&serde_json::Value>) -> bool {
    data.and_then(serde_json::Value::as_object)
        .is_some_and(|o| !o.is_empty() && o.values().all(serde_json::Value::is_object))
}

/// A GraphQL answer of 200 with `errors[]`, by its errors (docs/github-semantics.md#graphql-updaterefs):
///
/// | error | read | compare-and-swap (`updateRefs`) |
/// | --- | --- | --- |
/// | `RATE_LIMITED`, or a message naming a rate limit | rate-limited | rate-limited (not applied) |
/// | `NOT_FOUND` | not-found | not-found |
/// | `FORBIDDEN`, `INSUFFICIENT_SCOPES` | refusal | refusal |
/// | a stale `beforeOid`, an existing ref under all zeros, a non-fast-forward | refusal | conflict |
/// | anything else, with `x-ratelimit-remaining: 0` or a `retry-after` | rate-limited | unknown outcome (read back) |
/// | GitHub's "Something went wrong … may be the result of a timeout" | transient (retried) | unknown outcome (read back) |
/// | anything else, the answer without `data` (an error before execution: nothing ran) | refusal | refusal |
/// | anything else | refusal (our own document is at fault; retrying cannot help) | unknown outcome (read back) |
///
/// The first error that is not "anything else" decides.
fn classify_graphql(
    kind: RequestKind,
    errors: &[GraphqlError],
    data_absent: bool,
    headers: Option<Class>,
    now: Millis,
) -> Class {
    // A rate limit is waited out by the answer's headers (a `retry-after`, or the primary
    // limit's reset), else as a secondary limit: at least a minute, longer in a row.
    let rate_limited = headers.unwrap_or(Class::secondary_limit(now));
    for e in errors {
        let lower = e.message.to_ascii_lowercase();
        let class = match e.kind.as_deref() {
            Some("RATE_LIMITED") => Some(rate_limited),
            Some("NOT_FOUND") => Some(Class::NotFound),
            Some("FORBIDDEN" | "INSUFFICIENT_SCOPES") => Some(Class::Refusal),
            _ if lower.contains("rate limit") => Some(rate_limited),
            Some("STALE_DATA") => Some(Class::Conflict),
            _ if is_stale_ref(&lower) => Some(Class::Conflict),
            _ => None,
        };
        if let Some(class) = class {
            return match (class, kind) {
                (
                    Class::Conflict,
                    RequestKind::Read | RequestKind::Create | RequestKind::Allocate,
                ) => Class::Refusal,
                (class, _) => class,
            };
        }
    }
    // A query that ran out of GitHub's time (it answers 200 with "Something went wrong while
    // executing your query. This may be the result of a timeout, …") may pass when asked again:
    // a read retries it within its budget. A write is read back, as any unknown error.
    let timed_out = errors.iter().any(|e| {
        let lower = e.message.to_ascii_lowercase();
        e.kind.is_none() && (lower.contains("timeout") || lower.contains("timed out"))
    });
    match (kind, headers) {
        (RequestKind::Read, None) if timed_out => Class::Transient,
        // GitHub answers a query past the primary limit 200 with an error and
        // `x-ratelimit-remaining: 0` (or a `retry-after`), in words it does not fix: a read
        // that met one waits until the headers say. (A write is read back, as below: the read
        // waits for the same limit, and whether the write ran is never guessed.)
        (RequestKind::Read, Some(limited)) => limited,
        // No `data` at all: the document was refused before it ran (it does not validate, or
        // names a field the schema lacks), so the write did not happen and never will.
        (RequestKind::Write, None) if data_absent && !timed_out => Class::Refusal,
        (RequestKind::Write, _) => Class::UnknownOutcome,
        (RequestKind::Read | RequestKind::Create | RequestKind::Allocate, _) => Class::Refusal,
    }
}

/// Whether a contents write's 409 names the compare-and-swap that refused it: the file's sha no
/// longer current ("… does not match …") or the branch moved under the write ("is at X but
/// expected Y", docs/github-semantics.md#many-files-on-one-branch; once also "… expected to be
/// at …"). Any other 409 (a ruleset's "Repository rule violations found", which may add that a
/// "required status check … is expected") may have another cause.
pub fn names_a_newer_version(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    ["does not match", "but expected", "expected to be at"]
        .iter()
        .any(|m| lower.contains(m))
}

/// The messages of a ref update refused because the ref is not where the update expected it.
fn is_stale_ref(lower: &str) -> bool {
    [
        "expected",
        "stale",
        "fast forward",
        "fast-forward",
        "already exists",
        "does not match",
    ]
    .iter()
    .any(|m| lower.contains(m))
}

/// The rate-limit headers of an answer (REST, or a GraphQL 200).
struct Limits<'a> {
    retry_after: Option<&'a str>,
    remaining: Option<u64>,
    reset: Option<u64>,
    date: Option<&'a str>,
}

impl<'a> Limits<'a> {
    /// From the reply's fields (`Reply::Http` and `Reply::Graphql` carry the same four).
    fn of(
        retry_after: &'a Option<String>,
        remaining: Option<u64>,
        reset: Option<u64>,
        date: &'a Option<String>,
    ) -> Self {
        Limits {
            retry_after: retry_after.as_deref(),
            remaining,
            reset,
            date: date.as_deref(),
        }
    }

    /// The wait they direct: a readable `retry-after` (a secondary limit), a primary limit's
    /// reset when `x-ratelimit-remaining` is 0, and when both are given the later of the two
    /// (GitHub asks for each: no request before `retry-after`, none before the reset while
    /// none remain); `None` when they direct none.
    fn class(&self, now: Millis) -> Option<Class> {
        let server_now = self.date.and_then(parse_http_date);
        let secondary = self
            .retry_after
            .and_then(|r| retry_after_until(r, now, server_now))
            .map(|until| Class::RateLimited {
                until,
                server_directed: true,
                primary: false,
            });
        // The reset is an epoch second on GitHub's clock; shift it onto ours when the answer
        // carried GitHub's date.
        let primary = self
            .reset
            .filter(|_| self.remaining == Some(0))
            .map(|reset| {
                let reset_ms = reset.saturating_mul(1000);
                let until = match server_now {
                    Some(server) => now.saturating_add(reset_ms.saturating_sub(server)),
                    None => reset_ms,
                };
                Class::RateLimited {
                    until,
                    server_directed: false,
                    primary: true,
                }
            });
        let until = |c: &Option<Class>| match c {
            Some(Class::RateLimited { until, .. }) => *until,
            _ => 0,
        };
        match (secondary, primary) {
            (Some(_), Some(_)) if until(&primary) > until(&secondary) => primary,
            (Some(s), _) => Some(s),
            (None, p) => p,
        }
    }
}

/// The rate limit an answer's headers direct, if any (`retry-after`, or the primary limit's
/// reset while none remain: the later of the two), whatever else the answer is. A write whose
/// outcome is unknown is read back by this limit's rules (GitHub asks it of every request, and
/// the read-back plans new writes).
pub fn directed_limit(reply: &Reply, now: Millis) -> Option<Class> {
    match reply {
        Reply::Http {
            retry_after,
            ratelimit_remaining,
            ratelimit_reset,
            date,
            ..
        }
        | Reply::Graphql {
            retry_after,
            ratelimit_remaining,
            ratelimit_reset,
            date,
            ..
        } => Limits::of(retry_after, *ratelimit_remaining, *ratelimit_reset, date).class(now),
        _ => None,
    }
}

/// `retry-after` as an absolute time on our clock: delta-seconds, or an HTTP date (moved onto
/// our clock with the answer's own `date` when there is one). `None` when unreadable.
pub fn retry_after_until(raw: &str, now: Millis, server_now: Option<Millis>) -> Option<Millis> {
    let raw = raw.trim();
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = raw.parse().ok()?;
        return Some(now.saturating_add(secs.saturating_mul(1000)));
    }
    let at = parse_http_date(raw)?;
    Some(now.saturating_add(at.saturating_sub(server_now.unwrap_or(now))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> Reply {
        hx(status, Fields::default())
    }

    #[derive(Default)]
    struct Fields {
        message: String,
        retry_after: Option<String>,
        ratelimit_remaining: Option<u64>,
        ratelimit_reset: Option<u64>,
        date: Option<String>,
    }

    fn hx(status: u16, f: Fields) -> Reply {
        Reply::Http {
            status,
            message: f.message,
            retry_after: f.retry_after,
            ratelimit_remaining: f.ratelimit_remaining,
            ratelimit_reset: f.ratelimit_reset,
            date: f.date,
        }
    }

    #[test]
    fn classification_table() {
        use Class::*;
        use RequestKind::*;
        let t = 1_000_000;
        let cases: Vec<(RequestKind, Reply, Class)> = vec![
            (Write, http(409), Conflict),
            (
                Write,
                hx(
                    422,
                    Fields {
                        message: "Invalid request.\n\n\"sha\" wasn't supplied.".into(),
                        ..Fields::default()
                    },
                ),
                Conflict,
            ),
            (
                Write,
                hx(
                    422,
                    Fields {
                        message: "Validation failed, or the endpoint has been spammed.".into(),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + SECONDARY_DEFAULT_WAIT_MS,
                    server_directed: false,
                    primary: false,
                },
            ),
            (
                // GitHub's documented "Validation Failed" shape, its errors[] appended by the
                // driver: the sha is missing, so the file exists.
                Write,
                hx(
                    422,
                    Fields {
                        message: "Validation Failed (sha missing_field)".into(),
                        ..Fields::default()
                    },
                ),
                Conflict,
            ),
            (
                Write,
                hx(
                    422,
                    Fields {
                        message: "Invalid request.".into(),
                        ..Fields::default()
                    },
                ),
                Refusal,
            ),
            (
                Create,
                hx(
                    422,
                    Fields {
                        message: "Reference already exists".into(),
                        ..Fields::default()
                    },
                ),
                AlreadyExists,
            ),
            (Read, http(404), NotFound),
            (Write, http(404), NotFound),
            (Read, http(500), Transient),
            (Read, http(502), Transient),
            (Write, http(502), UnknownOutcome),
            (Write, http(500), UnknownOutcome),
            (Create, http(503), Transient),
            (Allocate, http(502), UnknownOutcome),
            (Allocate, http(500), UnknownOutcome),
            (
                Allocate,
                hx(
                    422,
                    Fields {
                        message: "Reference already exists".into(),
                        ..Fields::default()
                    },
                ),
                AlreadyExists,
            ),
            (
                // A "Validation Failed" that says so only by its errors[] code, which the
                // driver appends to the message.
                Allocate,
                hx(
                    422,
                    Fields {
                        message: "Validation Failed (ref already_exists)".into(),
                        ..Fields::default()
                    },
                ),
                AlreadyExists,
            ),
            (
                Allocate,
                hx(
                    422,
                    Fields {
                        message: "Reference name is invalid".into(),
                        ..Fields::default()
                    },
                ),
                Refusal,
            ),
            (Allocate, http(404), NotFound),
            (
                Allocate,
                Reply::Transport {
                    sent: true,
                    message: "ECONNRESET".into(),
                },
                UnknownOutcome,
            ),
            (
                Allocate,
                Reply::Transport {
                    sent: false,
                    message: "ECONNREFUSED".into(),
                },
                Transient,
            ),
            (Read, http(403), Refusal),
            (Write, http(400), Refusal),
            (
                Read,
                Reply::Transport {
                    sent: false,
                    message: "ECONNREFUSED".into(),
                },
                Transient,
            ),
            (
                Write,
                Reply::Transport {
                    sent: false,
                    message: "ECONNREFUSED".into(),
                },
                Transient,
            ),
            (
                Write,
                Reply::Transport {
                    sent: true,
                    message: "ECONNRESET".into(),
                },
                UnknownOutcome,
            ),
            (
                Read,
                Reply::Transport {
                    sent: true,
                    message: "timeout".into(),
                },
                Transient,
            ),
            (
                Read,
                hx(
                    403,
                    Fields {
                        retry_after: Some("7".into()),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + 7_000,
                    server_directed: true,
                    primary: false,
                },
            ),
            (
                Write,
                hx(
                    429,
                    Fields {
                        retry_after: Some("0".into()),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t,
                    server_directed: true,
                    primary: false,
                },
            ),
            (
                Read,
                http(429),
                RateLimited {
                    until: t + 60_000,
                    server_directed: false,
                    primary: false,
                },
            ),
            (
                Read,
                hx(
                    403,
                    Fields {
                        message: "You have exceeded a secondary rate limit".into(),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + 60_000,
                    server_directed: false,
                    primary: false,
                },
            ),
            // A primary limit whose reset did not come: GitHub's minute, not a refusal.
            (
                Write,
                hx(
                    403,
                    Fields {
                        ratelimit_remaining: Some(0),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + 60_000,
                    server_directed: false,
                    primary: false,
                },
            ),
            (
                Read,
                hx(
                    403,
                    Fields {
                        message: "API rate limit exceeded for installation ID 1.".into(),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + 60_000,
                    server_directed: false,
                    primary: false,
                },
            ),
            (
                Read,
                hx(
                    403,
                    Fields {
                        ratelimit_remaining: Some(0),
                        ratelimit_reset: Some(1_300),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: 1_300_000,
                    server_directed: false,
                    primary: true,
                },
            ),
            (
                Read,
                hx(
                    403,
                    Fields {
                        ratelimit_remaining: Some(0),
                        ratelimit_reset: Some(1_300),
                        date: Some("Thu, 01 Jan 1970 00:20:00 GMT".into()),
                        ..Fields::default()
                    },
                ),
                RateLimited {
                    until: t + 100_000,
                    server_directed: false,
                    primary: true,
                },
            ),
        ];
        for (kind, reply, want) in cases {
            assert_eq!(
                classify(kind, &reply, t, false),
                Some(want),
                "{kind:?} {reply:?}"
            );
        }
        assert_eq!(classify(Read, &http(401), t, true), Some(Transient));
        assert_eq!(classify(Read, &http(401), t, false), Some(Refusal));
        assert_eq!(
            classify(Read, &Reply::NotModified { date: None }, t, false),
            None
        );
    }

    #[test]
    fn retry_after_forms() {
        let server = parse_http_date("Mon, 30 Nov 2026 02:00:00 GMT").unwrap();
        assert_eq!(retry_after_until("30", 5_000, None), Some(35_000));
        // An HTTP date 90 s after the server's own clock is 90 s from our now, whatever our clock says.
        assert_eq!(
            retry_after_until("Mon, 30 Nov 2026 02:01:30 GMT", 5_000, Some(server)),
            Some(95_000)
        );
        // A date in the past means now (and the floor elsewhere stops a hot loop).
        assert_eq!(
            retry_after_until("Mon, 30 Nov 2026 01:00:00 GMT", 5_000, Some(server)),
            Some(5_000)
        );
        assert_eq!(retry_after_until("soon", 5_000, None), None);
    }

    #[test]
    fn both_waits_given_the_later_decides() {
        let date = Some("Mon, 30 Nov 2026 02:00:00 GMT".to_string());
        let server = parse_http_date(date.as_deref().unwrap()).unwrap();
        let limited = |retry: &str, reset_in_s: u64| {
            let f = Fields {
                message: "API rate limit exceeded for installation ID 1.".into(),
                retry_after: Some(retry.into()),
                ratelimit_remaining: Some(0),
                ratelimit_reset: Some(server / 1000 + reset_in_s),
                date: date.clone(),
            };
            classify(RequestKind::Read, &hx(403, f), 5_000, false)
        };
        // The reset half an hour away and a retry-after of 5 s: no request before the reset.
        assert_eq!(
            limited("5", 1_800),
            Some(Class::RateLimited {
                until: 5_000 + 1_800_000,
                server_directed: false,
                primary: true
            })
        );
        // The retry-after the later: it decides.
        assert_eq!(
            limited("120", 60),
            Some(Class::RateLimited {
                until: 125_000,
                server_directed: true,
                primary: false
            })
        );
    }

    #[test]
    fn a_409_names_a_newer_version_only_in_the_compare_and_swaps_words() {
        for m in [
            "locks/deploy.json does not match 3f2a",
            "is at 9c1e but expected 4b7d",
            "refs/heads/leasehold-state expected to be at 4b7d",
        ] {
            assert!(names_a_newer_version(m), "{m}");
        }
        for m in [
            "Repository rule violations found\n\nCannot update this protected ref.",
            "Repository rule violations found\n\nRequired status check \"ci\" is expected.",
            "Conflict",
        ] {
            assert!(!names_a_newer_version(m), "{m}");
        }
    }

    /// GitHub answers a query that ran out of its time with 200 and an untyped error: a read
    /// asks again, a mutation is read back, and any other untyped error stays a refusal (the
    /// document is at fault).
    #[test]
    fn a_ref_update_that_failed_is_asked_again_or_read_back() {
        use Class::*;
        use RequestKind::*;
        let failed = Reply::Http {
            status: 422,
            message: "Reference update failed".into(),
            retry_after: None,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date: None,
        };
        assert_eq!(classify(Create, &failed, 0, false), Some(Transient));
        assert_eq!(classify(Allocate, &failed, 0, false), Some(UnknownOutcome));
        assert_eq!(classify(Write, &failed, 0, false), Some(Refusal));
        let invalid = Reply::Http {
            status: 422,
            message: "Reference name is not valid".into(),
            retry_after: None,
            ratelimit_remaining: None,
            ratelimit_reset: None,
            date: None,
        };
        assert_eq!(classify(Create, &invalid, 0, false), Some(Refusal));
    }

    #[test]
    fn a_graphql_timeout_is_retried_on_a_read() {
        use Class::*;
        use RequestKind::*;
        let answer = |kind: Option<&str>, message: &str| Reply::Graphql {
            data_absent: false,
            data: None,
            errors: vec![GraphqlError {
                kind: kind.map(str::to_string),
                message: message.into(),
            }],
            retry_after: None,
            ratelimit_remaining: Some(4_000),
            ratelimit_reset: None,
            date: None,
        };
        let timeout = "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. Please include `C0DE:1234` when reporting this issue.";
        assert_eq!(
            classify(Read, &answer(None, timeout), 0, false),
            Some(Transient)
        );
        assert_eq!(
            classify(Write, &answer(None, timeout), 0, false),
            Some(UnknownOutcome)
        );
        assert_eq!(
            classify(
                Read,
                &answer(None, "Field 'refz' doesn't exist on type 'Repository'"),
                0,
                false
            ),
            Some(Refusal)
        );
        assert_eq!(
            classify(
                Read,
                &answer(Some("FORBIDDEN"), "Resource not accessible: timeout"),
                0,
                false
            ),
            Some(Refusal)
        );
    }

    #[test]
    fn a_graphql_rate_limit_is_waited_out_by_its_headers() {
        use Class::*;
        use RequestKind::*;
        // GitHub answers a GraphQL rate limit with 200 and errors[]: a primary one carries
        // `x-ratelimit-remaining: 0` and its reset, a secondary one may carry `retry-after`.
        let now = 1_000_000;
        let server = "Mon, 30 Nov 2026 02:00:00 GMT";
        let server_ms = parse_http_date(server).unwrap();
        let limited = |retry_after: Option<&str>, remaining, reset| Reply::Graphql {
            data_absent: false,
            data: None,
            errors: vec![GraphqlError {
                kind: Some("RATE_LIMITED".into()),
                message: "API rate limit exceeded".into(),
            }],
            retry_after: retry_after.map(str::to_string),
            ratelimit_remaining: remaining,
            ratelimit_reset: reset,
            date: Some(server.into()),
        };
        // The reset, 20 minutes after GitHub's date, moved onto our clock.
        let reset = server_ms / 1000 + 1_200;
        assert_eq!(
            classify(Read, &limited(None, Some(0), Some(reset)), now, false),
            Some(RateLimited {
                until: now + 1_200_000,
                server_directed: false,
                primary: true
            })
        );
        assert_eq!(
            classify(
                Write,
                &limited(Some("90"), Some(0), Some(reset)),
                now,
                false
            ),
            // Both waits given: the later (the reset) decides.
            Some(RateLimited {
                until: now + 1_200_000,
                server_directed: false,
                primary: true
            })
        );
        assert_eq!(
            classify(Write, &limited(Some("90"), None, None), now, false),
            Some(RateLimited {
                until: now + 90_000,
                server_directed: true,
                primary: false
            })
        );
        // Neither header: a secondary limit, GitHub's minute (longer in a row, policy/retry.rs).
        for reply in [
            limited(None, None, None),
            limited(None, Some(12), Some(reset)),
        ] {
            assert_eq!(
                classify(Read, &reply, now, false),
                Some(RateLimited {
                    until: now + SECONDARY_DEFAULT_WAIT_MS,
                    server_directed: false,
                    primary: false
                })
            );
        }
        // An error in words GitHub does not fix, with the primary limit spent: a read waits
        // for the reset; a write is read back (whether it ran is not guessed); without the
        // headers the read is refused, as any error of our own document.
        let unworded = |remaining, reset| Reply::Graphql {
            data_absent: false,
            data: None,
            errors: vec![GraphqlError {
                kind: None,
                message: "Something went wrong.".into(),
            }],
            retry_after: None,
            ratelimit_remaining: remaining,
            ratelimit_reset: reset,
            date: Some(server.into()),
        };
        assert_eq!(
            classify(Read, &unworded(Some(0), Some(reset)), now, false),
            Some(RateLimited {
                until: now + 1_200_000,
                server_directed: false,
                primary: true
            })
        );
        assert_eq!(
            classify(Write, &unworded(Some(0), Some(reset)), now, false),
            Some(UnknownOutcome)
        );
        assert_eq!(
            classify(Read, &unworded(Some(7), Some(reset)), now, false),
            Some(Refusal)
        );
    }
}
