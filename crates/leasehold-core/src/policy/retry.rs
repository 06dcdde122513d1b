//! How long to wait before trying again, and when to give up: the retry budgets.

use serde::Serialize;

use super::classify::Class;
use super::jitter::Rng;
use super::limits::{
    DEFAULT_AUTH_GRACE_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_CAP_MS,
    DEFAULT_SERVER_CEILING_MS, SECONDARY_DEFAULT_WAIT_MS, SECONDARY_MAX_WAIT_MS,
};
use crate::wire::time::Millis;

/// Retry knobs. Defaults follow GitHub's advice; ranges are checked where they are parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
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
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_ms: DEFAULT_RETRY_BASE_MS,
            cap_ms: DEFAULT_RETRY_CAP_MS,
            server_ceiling_ms: DEFAULT_SERVER_CEILING_MS,
            auth_grace_ms: DEFAULT_AUTH_GRACE_MS,
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
/// GitHub's rule for rate limits (docs/github-semantics.md#rate-limits): never retry before a
/// `retry-after` or a primary limit's reset has passed, and without either, wait at least a
/// minute, longer after each limit in a row. A wait the budget cannot honour gives up rather
/// than retry early.
///
/// * Attempt-bounded (`deadline: None`): at most `max_attempts` consecutive failures; a
///   `retry-after` or a primary-limit reset within `server_ceiling_ms` is waited for, a longer
///   one gives up (a primary reset is typically most of an hour away); a secondary limit without
///   `retry-after` waits its minute, doubling per limit in a row, while that fits the ceiling.
/// * Deadline-bounded: keep trying while the next attempt can start before the deadline. A
///   `retry-after` or a reset is honoured in full when it falls inside the budget, and gives up
///   when it does not; a secondary limit without `retry-after` waits its minute (doubling per
///   limit in a row, up to [`SECONDARY_MAX_WAIT_MS`]) when at least the minute fits. The
///   self-generated backoff of other failures is clamped so the last attempt starts inside the
///   budget.
pub fn next_attempt_at(
    policy: &RetryPolicy,
    class: Class,
    failures: u32,
    now: Millis,
    deadline: Option<Millis>,
    rng: &mut Rng,
) -> Option<Millis> {
    let own = now + backoff(policy, failures, rng);
    let limit = rate_wait(class, failures, now);
    match deadline {
        None => {
            if failures >= policy.max_attempts {
                return None;
            }
            // A rate limit is not retried before its time, and not at all when that is past
            // the ceiling (retrying early only spends attempts, and GitHub warns that requests
            // sent while limited may get an integration banned).
            match limit {
                Some(w) if w.wanted > now + policy.server_ceiling_ms => None,
                Some(w) => Some(w.wanted.max(now + policy.base_ms)),
                None => Some(own),
            }
        }
        Some(deadline) => {
            if now >= deadline
                || policy
                    .max_attempts_with_deadline
                    .is_some_and(|max| failures >= max)
            {
                return None;
            }
            // GitHub's time must fit; a longer wait of our own may be cut at the deadline.
            let at = match limit {
                Some(w) if w.earliest > deadline => return None,
                Some(w) => w.wanted.max(now + policy.base_ms),
                None => own,
            };
            Some(at.min(deadline))
        }
    }
}

/// The wait a rate limit sets, as absolute times on our clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateWait {
    /// No retry before this: a `retry-after`, a primary limit's reset, or GitHub's minute.
    pub earliest: Millis,
    /// When to retry: `earliest`, or for a secondary limit without `retry-after` the minute
    /// doubled per limit in a row ([`secondary_wait`]).
    pub wanted: Millis,
}

/// The wait `class` sets when it is a rate limit (the `failures`-th failure in a row); `None`
/// for any other class. The retry decision and the message of a request that gave up both go
/// by it.
pub fn rate_wait(class: Class, failures: u32, now: Millis) -> Option<RateWait> {
    match class {
        Class::RateLimited {
            until,
            server_directed,
            primary,
        } if server_directed || primary => Some(RateWait {
            earliest: until,
            wanted: until,
        }),
        Class::RateLimited { until, .. } => Some(RateWait {
            earliest: until.max(now + SECONDARY_DEFAULT_WAIT_MS),
            wanted: until.max(now + secondary_wait(failures)),
        }),
        _ => None,
    }
}

/// The wait after a secondary limit that gave no `retry-after`, the `failures`-th failure in a
/// row: GitHub's minute, doubling per limit in a row, up to [`SECONDARY_MAX_WAIT_MS`].
pub fn secondary_wait(failures: u32) -> Millis {
    SECONDARY_DEFAULT_WAIT_MS
        .saturating_mul(1u64 << failures.saturating_sub(1).min(10))
        .min(SECONDARY_MAX_WAIT_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A server-directed wait beyond the self-generated cap is honoured up to its own
        // ceiling; past it, the request gives up rather than retry before GitHub said.
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
            next_attempt_at(&p, rl(now + 60_001), 1, now, None, &mut rng),
            None
        );
        assert_eq!(
            next_attempt_at(&p, rl(now + 600_000), 1, now, None, &mut rng),
            None
        );
        // A secondary limit without retry-after: a minute, then twice that, which is past the
        // ceiling of the attempt budget.
        let secondary = Class::RateLimited {
            until: now + 60_000,
            server_directed: false,
            primary: false,
        };
        assert_eq!(
            next_attempt_at(&p, secondary, 1, now, None, &mut rng),
            Some(now + 60_000)
        );
        assert_eq!(next_attempt_at(&p, secondary, 2, now, None, &mut rng), None);
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
        // ...and, past the deadline, not retried early: the request gives up.
        assert_eq!(
            next_attempt_at(&p, rl(deadline), 1, now, Some(deadline), &mut rng),
            Some(deadline)
        );
        assert_eq!(
            next_attempt_at(&p, rl(deadline + 1), 1, now, Some(deadline), &mut rng),
            None
        );
        // A secondary limit without retry-after: at least a minute, doubling per limit in a
        // row up to 16 minutes; the doubled wait may be cut at the deadline, the minute not.
        let secondary = Class::RateLimited {
            until: now + 60_000,
            server_directed: false,
            primary: false,
        };
        let far = now + 3_600_000;
        let waits: Vec<_> = (1..=7)
            .map(|f| next_attempt_at(&p, secondary, f, now, Some(far), &mut rng).map(|at| at - now))
            .collect();
        assert_eq!(
            waits,
            [60_000, 120_000, 240_000, 480_000, 960_000, 960_000, 960_000].map(Some)
        );
        assert_eq!(
            next_attempt_at(&p, secondary, 2, now, Some(deadline), &mut rng),
            Some(deadline)
        );
        assert_eq!(
            next_attempt_at(&p, secondary, 1, now, Some(now + 59_999), &mut rng),
            None
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
