//! How to read GitHub's answers, and how long to wait before trying again. All of it is
//! arithmetic on numbers handed in: the seed, `now`, and the facts of the answer.

use serde::{Deserialize, Serialize};

use crate::wire::protocol::Reply;
use crate::wire::time::{parse_http_date, Millis};

/// SplitMix64: small, fast and fully determined by its seed, so a run replays exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=max`.
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            return self.next_u64();
        }
        self.next_u64() % (max + 1)
    }
}

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
    pub fn name(&self) -> &'static str {
        match self {
            Class::Conflict => "conflict",
            Class::NotFound => "not-found",
            Class::AlreadyExists => "already-exists",
            Class::Refusal => "refusal",
            Class::RateLimited { .. } => "rate-limited",
            Class::Transient => "transient",
            Class::UnknownOutcome => "unknown-outcome",
        }
    }
}

/// The request kinds classification distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    /// A contents write: a compare-and-swap on the file's sha.
    Write,
    /// Creating a git object or ref: harmless to repeat (a tree or commit with the same content
    /// has the same sha; a ref that exists answers 422).
    Create,
}

/// GitHub's advice when a secondary limit gives no `retry-after`: wait at least a minute.
pub const SECONDARY_DEFAULT_WAIT_MS: Millis = 60_000;

/// Classifies a non-success answer. `auth_grace` says whether a 401 is still inside the grace
/// window in which GitHub's token replication lag explains it.
pub fn classify(kind: RequestKind, reply: &Reply, now: Millis, auth_grace: bool) -> Option<Class> {
    let class = match reply {
        Reply::File { .. }
        | Reply::NotModified
        | Reply::Written { .. }
        | Reply::Created { .. }
        | Reply::Run { .. }
        | Reply::Job { .. }
        | Reply::Jobs { .. } => return None,
        Reply::Transport { sent: false, .. } => Class::Transient,
        Reply::Transport { sent: true, .. } => match kind {
            RequestKind::Write => Class::UnknownOutcome,
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
                let server_now = date.as_deref().and_then(parse_http_date);
                if let Some(until) = retry_after
                    .as_deref()
                    .and_then(|r| retry_after_until(r, now, server_now))
                {
                    return Some(Class::RateLimited {
                        until,
                        server_directed: true,
                        primary: false,
                    });
                }
                if *ratelimit_remaining == Some(0) {
                    if let Some(reset) = ratelimit_reset {
                        // The reset is an epoch second on GitHub's clock; shift it onto ours
                        // when the answer carried GitHub's date.
                        let reset_ms = reset.saturating_mul(1000);
                        let until = match server_now {
                            Some(server) => now.saturating_add(reset_ms.saturating_sub(server)),
                            None => reset_ms,
                        };
                        return Some(Class::RateLimited {
                            until,
                            server_directed: false,
                            primary: true,
                        });
                    }
                }
                let lower = message.to_ascii_lowercase();
                if status == 429
                    || lower.contains("secondary rate limit")
                    || lower.contains("abuse")
                {
                    return Some(Class::RateLimited {
                        until: now + SECONDARY_DEFAULT_WAIT_MS,
                        server_directed: false,
                        primary: false,
                    });
                }
                return Some(Class::Refusal);
            }
            match (status, kind) {
                (409, RequestKind::Write) => Class::Conflict,
                // The file exists but we sent no sha: it appeared since we read it.
                (422, RequestKind::Write) if message.contains("sha") => Class::Conflict,
                (422, RequestKind::Create) if message.contains("already exists") => {
                    Class::AlreadyExists
                }
                (404, _) => Class::NotFound,
                (401, _) if auth_grace => Class::Transient,
                (500..=599, RequestKind::Write) => Class::UnknownOutcome,
                (500..=599, _) => Class::Transient,
                _ => Class::Refusal,
            }
        }
    };
    Some(class)
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

/// Retry knobs. Defaults follow GitHub's advice; ranges are checked where they are parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Consecutive failed attempts of one request before giving up (attempt-bounded mode).
    pub max_attempts: u32,
    /// First backoff, and the floor under any wait (so `retry-after: 0` is never a hot loop).
    pub base_ms: Millis,
    /// Cap on the waits leasehold generates itself.
    pub cap_ms: Millis,
    /// Ceiling on a server-directed wait in attempt-bounded mode. Under a deadline, GitHub's
    /// number is honoured in full instead, and the deadline bounds it.
    pub server_ceiling_ms: Millis,
    /// How long a streak of 401s may last before it is taken as a real refusal.
    pub auth_grace_ms: Millis,
    /// Under a deadline, an attempt ceiling that applies too (whichever comes first), when the
    /// caller set one explicitly. Unset, the deadline is the only bound.
    pub max_attempts_with_deadline: Option<u32>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_ms: 1_000,
            cap_ms: 30_000,
            server_ceiling_ms: 60_000,
            auth_grace_ms: 10_000,
            max_attempts_with_deadline: None,
        }
    }
}

/// Full jitter: uniform in `0..=min(cap, base * 2^(attempt-1))`, but never under `base / 2`
/// so that a retry is never immediate.
pub fn backoff(policy: &RetryPolicy, attempt: u32, rng: &mut Rng) -> Millis {
    let exp = policy
        .base_ms
        .saturating_mul(1u64 << attempt.saturating_sub(1).min(30));
    let ceiling = exp.min(policy.cap_ms).max(policy.base_ms / 2);
    rng.up_to(ceiling).max(policy.base_ms / 2)
}

/// When to try again after a failure, or `None` to give up.
///
/// * Attempt-bounded (`deadline: None`): at most `max_attempts` consecutive failures; a
///   server-directed wait is honoured up to `server_ceiling_ms`; a primary-limit reset (an hour
///   away, typically) is not waited on beyond the self-generated backoff.
/// * Deadline-bounded: keep trying while the next attempt can start before the deadline; a
///   server-directed wait is honoured in full, and the last wait is clamped so the final attempt
///   still starts inside the budget. A primary-limit reset is waited on only when it falls
///   inside the budget.
pub fn next_attempt_at(
    policy: &RetryPolicy,
    class: Class,
    failures: u32,
    now: Millis,
    deadline: Option<Millis>,
    rng: &mut Rng,
) -> Option<Millis> {
    let own = now + backoff(policy, failures, rng);
    match deadline {
        None => {
            if failures >= policy.max_attempts {
                return None;
            }
            let at = match class {
                Class::RateLimited {
                    until,
                    primary: false,
                    ..
                } => until
                    .min(now + policy.server_ceiling_ms)
                    .max(now + policy.base_ms),
                // A primary limit reopens at its reset and not before: retrying earlier only
                // spends attempts. Wait for a reset within the server-directed ceiling; one
                // further away (typically most of an hour) fails fast rather than hold a runner.
                Class::RateLimited {
                    until,
                    primary: true,
                    ..
                } => {
                    if until > now + policy.server_ceiling_ms {
                        return None;
                    }
                    until.max(now + policy.base_ms)
                }
                _ => own,
            };
            Some(at)
        }
        Some(deadline) => {
            if now >= deadline
                || policy
                    .max_attempts_with_deadline
                    .is_some_and(|max| failures >= max)
            {
                return None;
            }
            let at = match class {
                Class::RateLimited {
                    until,
                    primary: true,
                    ..
                } if until > deadline => return None,
                Class::RateLimited { until, .. } => until.max(now + policy.base_ms),
                _ => own,
            };
            Some(at.min(deadline))
        }
    }
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
        assert_eq!(classify(Read, &Reply::NotModified, t, false), None);
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
    fn backoff_is_full_jitter_with_floor_and_cap() {
        let p = RetryPolicy::default();
        let mut rng = Rng::new(7);
        for attempt in 1..20 {
            for _ in 0..200 {
                let w = backoff(&p, attempt, &mut rng);
                assert!(w >= p.base_ms / 2 && w <= p.cap_ms, "{attempt}: {w}");
                assert!(w <= p.base_ms << (attempt - 1).min(30), "{attempt}: {w}");
            }
        }
    }

    #[test]
    fn attempt_bounded_budget() {
        let p = RetryPolicy::default();
        let mut rng = Rng::new(1);
        let now = 100_000;
        assert!(next_attempt_at(&p, Class::Transient, 4, now, None, &mut rng).is_some());
        assert_eq!(
            next_attempt_at(&p, Class::Transient, 5, now, None, &mut rng),
            None
        );
        // A server-directed wait beyond the self-generated cap is honoured up to its own ceiling.
        let rl = |until| Class::RateLimited {
            until,
            server_directed: true,
            primary: false,
        };
        assert_eq!(
            next_attempt_at(&p, rl(now + 45_000), 1, now, None, &mut rng),
            Some(now + 45_000)
        );
        assert_eq!(
            next_attempt_at(&p, rl(now + 600_000), 1, now, None, &mut rng),
            Some(now + 60_000)
        );
        // retry-after: 0 is floored at the base.
        assert_eq!(
            next_attempt_at(&p, rl(now), 1, now, None, &mut rng),
            Some(now + 1_000)
        );
        // A primary limit: wait for a near reset; fail fast on a far one.
        let primary = |until| Class::RateLimited {
            until,
            server_directed: false,
            primary: true,
        };
        assert_eq!(
            next_attempt_at(&p, primary(now + 20_000), 1, now, None, &mut rng),
            Some(now + 20_000)
        );
        assert_eq!(
            next_attempt_at(&p, primary(now + 3_000_000), 1, now, None, &mut rng),
            None
        );
    }

    #[test]
    fn deadline_bounded_budget() {
        let p = RetryPolicy::default();
        let mut rng = Rng::new(1);
        let now = 100_000;
        let deadline = now + 120_000;
        // Attempts are not counted under a deadline.
        assert!(next_attempt_at(&p, Class::Transient, 50, now, Some(deadline), &mut rng).is_some());
        let rl = |until| Class::RateLimited {
            until,
            server_directed: true,
            primary: false,
        };
        // Honoured in full past the attempt-bounded ceiling...
        assert_eq!(
            next_attempt_at(&p, rl(now + 90_000), 1, now, Some(deadline), &mut rng),
            Some(now + 90_000)
        );
        // ...and clamped so the last attempt starts inside the budget.
        assert_eq!(
            next_attempt_at(&p, rl(now + 500_000), 1, now, Some(deadline), &mut rng),
            Some(deadline)
        );
        // A primary reset after the deadline is not waited on.
        let primary = |until| Class::RateLimited {
            until,
            server_directed: false,
            primary: true,
        };
        assert_eq!(
            next_attempt_at(&p, primary(deadline + 1), 1, now, Some(deadline), &mut rng),
            None
        );
        assert_eq!(
            next_attempt_at(&p, primary(now + 30_000), 1, now, Some(deadline), &mut rng),
            Some(now + 30_000)
        );
        assert_eq!(
            next_attempt_at(&p, Class::Transient, 1, deadline, Some(deadline), &mut rng),
            None
        );
        // An explicit attempt ceiling applies under the deadline too: whichever comes first.
        let capped = RetryPolicy {
            max_attempts_with_deadline: Some(3),
            ..RetryPolicy::default()
        };
        assert!(
            next_attempt_at(&capped, Class::Transient, 2, now, Some(deadline), &mut rng).is_some()
        );
        assert_eq!(
            next_attempt_at(&capped, Class::Transient, 3, now, Some(deadline), &mut rng),
            None
        );
    }
}
