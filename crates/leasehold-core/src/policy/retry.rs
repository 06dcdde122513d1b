//! How long to wait before trying again, and when to give up: the retry budgets.

use serde::{Deserialize, Serialize};

use super::classify::Class;
use super::jitter::Rng;
use super::limits::{
    DEFAULT_AUTH_GRACE_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_CAP_MS,
    DEFAULT_SERVER_CEILING_MS,
};
use crate::wire::time::Millis;

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
