//! Lease arithmetic: how long a holding lasts, when it is renewed, when another job may take
//! it, and what the holder's own deadline is. All of it is checked before any request is sent.
//!
//! Times on a holding are written by the holder's clock and judged by other jobs' clocks. Two
//! things keep a live holder from being freed by mistake:
//! * expiry is judged against an estimate of GitHub's clock (the `date` header of its answers,
//!   accurate to about a second), minus a skew tolerance, so a judge whose clock runs ahead of
//!   the holder's by up to `skew` still waits;
//! * the holder stops its work at its *local deadline*, `expiresAt - minRemaining`, unless a
//!   renewal was proven before it; the rules below make sure a renewal tick always fits before
//!   that deadline, and the deadline always falls before anyone may take the holding.

use serde::Serialize;

use super::limits::{
    GUARDED_GRACE_MS, GUARDED_MAX_TTL_MS, GUARDED_MIN_REMAINING_MS, GUARDED_RENEW_MS,
    GUARDED_SKEW_MS, GUARDED_TTL_MS, MAX_GRACE_MS, MAX_LEASE_CEILING_MS, MAX_SKEW_MS, MIN_RENEW_MS,
    MIN_TTL_MS, REQUEST_TIMEOUT_MS, UNCONFIGURED_GRACE_MS, UNCONFIGURED_MIN_REMAINING_MS,
    UNCONFIGURED_RENEW_MS, UNCONFIGURED_SKEW_MS, UNCONFIGURED_TTL_MS,
};
use crate::wire::time::Millis;
use crate::wire::LeasePolicy;

impl LeasePolicy {
    /// The policy of a lock whose config sets none: a lease as long as GitHub lets a job on a
    /// hosted runner run (6 hours), so a holder is not expired for running long; its release,
    /// acquire's post step or a rerun frees it when it ends. `lease-minutes` may ask for up to
    /// the ceiling of a week.
    pub fn unconfigured() -> Self {
        LeasePolicy {
            ttl_ms: UNCONFIGURED_TTL_MS,
            renew_ms: UNCONFIGURED_RENEW_MS,
            grace_ms: UNCONFIGURED_GRACE_MS,
            max_ttl_ms: MAX_LEASE_CEILING_MS,
            skew_ms: UNCONFIGURED_SKEW_MS,
            min_remaining_ms: UNCONFIGURED_MIN_REMAINING_MS,
            reaper_renews: false,
        }
    }

    /// Defaults for a guarded holding: a 15-minute lease renewed every 5 minutes. One token
    /// renewing every 5 minutes can keep 500 / 12 ≈ 41 holders alive under GitHub's limit of
    /// 500 content-generating requests an hour (see the README).
    pub fn guarded() -> Self {
        LeasePolicy {
            ttl_ms: GUARDED_TTL_MS,
            renew_ms: GUARDED_RENEW_MS,
            grace_ms: GUARDED_GRACE_MS,
            max_ttl_ms: GUARDED_MAX_TTL_MS,
            skew_ms: GUARDED_SKEW_MS,
            min_remaining_ms: GUARDED_MIN_REMAINING_MS,
            reaper_renews: false,
        }
    }

    /// Checks the arithmetic. The error names the rule.
    pub fn validate(&self) -> Result<(), LeaseRule> {
        use LeaseRule::*;
        let p = self;
        let rules = [
            (p.ttl_ms >= MIN_TTL_MS, TtlAtLeast30Seconds),
            (p.ttl_ms <= p.max_ttl_ms, TtlWithinCeiling),
            (p.max_ttl_ms <= MAX_LEASE_CEILING_MS, CeilingAtMostAWeek),
            (
                p.renew_ms >= MIN_RENEW_MS && p.renew_ms.saturating_mul(2) <= p.ttl_ms,
                RenewAtMostHalfTtl,
            ),
            (
                p.grace_ms <= p.ttl_ms && p.grace_ms <= MAX_GRACE_MS,
                GraceWithinBounds,
            ),
            (p.skew_ms <= MAX_SKEW_MS, SkewWithinBounds),
            (p.min_remaining_ms < p.renew_ms, MinRemainingBelowRenew),
            // A renewal attempted at the renew tick, allowed a whole request budget and the
            // clock skew, must be proven before the holder's local deadline...
            (
                p.renew_ms
                    .saturating_add(REQUEST_TIMEOUT_MS)
                    .saturating_add(p.skew_ms)
                    <= p.ttl_ms - p.min_remaining_ms.min(p.ttl_ms),
                RenewTickFits,
            ),
        ];
        match rules.into_iter().find(|(ok, _)| !ok) {
            Some((_, rule)) => Err(rule),
            None => Ok(()),
        }
        // ...and the local deadline (expiresAt - minRemaining) falls before anyone may take the
        // holding (expiresAt + grace + skew, judged by a clock at most `skew` ahead): true for
        // every policy, since minRemaining, grace and skew are never negative.
    }

    /// When a holding with this expiry may be taken by a judge whose estimate of GitHub's
    /// clock says `now`: strictly after `expiresAt + grace + skew`.
    pub fn takeable_after(&self, expires_at: Millis) -> Millis {
        expires_at
            .saturating_add(self.grace_ms)
            .saturating_add(self.skew_ms)
    }

    /// The holder's own deadline for a holding that expires at `expires_at`.
    pub fn local_deadline(&self, expires_at: Millis) -> Millis {
        expires_at.saturating_sub(self.min_remaining_ms)
    }

    /// The expiry a renewal at `now` sets, never past the ceiling.
    pub fn renewed_expiry(&self, now: Millis, ceiling_at: Millis) -> Millis {
        now.saturating_add(self.ttl_ms).min(ceiling_at)
    }

    /// Whether a holding that expires at `expires_at` on a lease of `lease_ms` (its own: acquire's
    /// `lease-minutes` may differ from the policy's ttl) is due for renewal at `now`: `renew`
    /// after it was last granted.
    pub fn renewal_due(&self, now: Millis, expires_at: Millis, lease_ms: Millis) -> bool {
        now >= expires_at
            .saturating_sub(lease_ms)
            .saturating_add(self.renew_ms_for(lease_ms))
    }

    /// The renew interval of a holding on a lease of `lease_ms`: the policy's, but never more
    /// than half that lease (a `lease-minutes` shorter than twice the interval would otherwise
    /// come due only after it ran out).
    pub fn renew_ms_for(&self, lease_ms: Millis) -> Millis {
        self.renew_ms.min(lease_ms / 2)
    }
}

/// A broken lease rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseRule {
    #[error("the lease (ttl) must be at least 30 s")]
    #[serde(rename = "ttl-at-least-30-seconds")]
    TtlAtLeast30Seconds,
    #[error("the lease (ttl) must not exceed the ceiling (maxTtl)")]
    TtlWithinCeiling,
    #[error("the ceiling (maxTtl) must be at most a week")]
    CeilingAtMostAWeek,
    #[error("the renew interval must be at least 10 s and at most half the lease (ttl)")]
    RenewAtMostHalfTtl,
    #[error("the grace must be at most the lease (ttl) and at most an hour")]
    GraceWithinBounds,
    #[error("the skew tolerance must be at most 10 minutes")]
    SkewWithinBounds,
    #[error("the minimum remaining time must be shorter than the renew interval")]
    MinRemainingBelowRenew,
    #[error("a renewal at the renew tick (plus a 15 s request and the skew) must fit before the holder's deadline (ttl - minRemaining)")]
    RenewTickFits,
}

impl LeaseRule {
    /// The `lease` key (of a config file, in seconds) a broken rule is reported on: the value a
    /// reader most likely has to change.
    pub fn key(self) -> &'static str {
        use LeaseRule::*;
        match self {
            TtlAtLeast30Seconds | TtlWithinCeiling => "ttlSeconds",
            CeilingAtMostAWeek => "maxTtlSeconds",
            RenewAtMostHalfTtl | RenewTickFits => "renewSeconds",
            GraceWithinBounds => "graceSeconds",
            SkewWithinBounds => "skewSeconds",
            MinRemainingBelowRenew => "minRemainingSeconds",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limits::MINUTE;

    #[test]
    fn a_huge_renew_interval_does_not_wrap_past_the_rules() {
        // Regression case of the config fuzz target: `renewSeconds` of 9223372036854776 made
        // `renew * 2` overflow (and wrap to 384 ms in a release build, so the policy passed).
        let p = LeasePolicy {
            renew_ms: 9_223_372_036_854_776_000,
            ..LeasePolicy::guarded()
        };
        assert_eq!(p.validate(), Err(LeaseRule::RenewAtMostHalfTtl));
        let q = LeasePolicy {
            skew_ms: u64::MAX,
            ..LeasePolicy::guarded()
        };
        assert!(q.validate().is_err());
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(LeasePolicy::guarded().validate(), Ok(()));
        assert_eq!(LeasePolicy::unconfigured().validate(), Ok(()));
    }

    #[test]
    fn each_rule_is_named() {
        let g = LeasePolicy::guarded();
        let cases = [
            (
                LeasePolicy {
                    ttl_ms: 20_000,
                    ..g.clone()
                },
                LeaseRule::TtlAtLeast30Seconds,
            ),
            (
                LeasePolicy {
                    max_ttl_ms: 10 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::TtlWithinCeiling,
            ),
            (
                LeasePolicy {
                    max_ttl_ms: 8 * 24 * 60 * MINUTE,
                    ttl_ms: 8 * 24 * 60 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::CeilingAtMostAWeek,
            ),
            (
                LeasePolicy {
                    renew_ms: 8 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::RenewAtMostHalfTtl,
            ),
            (
                LeasePolicy {
                    renew_ms: 5_000,
                    min_remaining_ms: 1_000,
                    ..g.clone()
                },
                LeaseRule::RenewAtMostHalfTtl,
            ),
            (
                LeasePolicy {
                    grace_ms: 16 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::GraceWithinBounds,
            ),
            (
                LeasePolicy {
                    skew_ms: 11 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::SkewWithinBounds,
            ),
            (
                LeasePolicy {
                    min_remaining_ms: 5 * MINUTE,
                    ..g.clone()
                },
                LeaseRule::MinRemainingBelowRenew,
            ),
            (
                LeasePolicy {
                    ttl_ms: 2 * MINUTE,
                    renew_ms: MINUTE,
                    min_remaining_ms: 50_000,
                    skew_ms: 0,
                    ..g.clone()
                },
                LeaseRule::RenewTickFits,
            ),
        ];
        for (policy, rule) in cases {
            assert_eq!(policy.validate(), Err(rule), "{policy:?}");
        }
    }

    #[test]
    fn the_local_deadline_comes_before_anyone_may_take_the_holding() {
        let p = LeasePolicy::guarded();
        let expires = 20 * MINUTE;
        assert!(p.local_deadline(expires) < expires);
        assert!(expires < p.takeable_after(expires));
        // A renewal is never past the ceiling.
        assert_eq!(p.renewed_expiry(0, 5 * MINUTE), 5 * MINUTE);
        assert_eq!(p.renewed_expiry(0, 60 * MINUTE), 15 * MINUTE);
        assert!(!p.renewal_due(expires - p.ttl_ms + p.renew_ms - 1, expires, p.ttl_ms));
        assert!(p.renewal_due(expires - p.ttl_ms + p.renew_ms, expires, p.ttl_ms));
        // A holding on a longer lease of its own is due by that lease, not the policy's ttl.
        // A holding on a 30-minute lease of its own, expiring at 60 min, is due at 35 min (its
        // lease, granted at 30, plus the 5-minute renew), not at 50 (by the policy's ttl).
        assert!(p.renewal_due(40 * MINUTE, 60 * MINUTE, 30 * MINUTE));
        assert!(!p.renewal_due(34 * MINUTE, 60 * MINUTE, 30 * MINUTE));
        // A one-minute lease (shorter than twice the 5-minute interval) is due after half of it.
        assert!(!p.renewal_due(10 * MINUTE + 29_000, 11 * MINUTE, MINUTE));
        assert!(p.renewal_due(10 * MINUTE + 30_000, 11 * MINUTE, MINUTE));
    }
}
