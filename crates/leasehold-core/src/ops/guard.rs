//! What a guard does next. A guard runs a child process under a live holding: it renews the
//! lease on a timer, one renewal at a time, and stops the child when the holding is proven lost
//! or when the local deadline passes without a proven renewal. A renewal that fails for a
//! transport reason is not a lost holding: the child runs on until the local deadline, and the
//! renewal is retried before it.

use serde::{Deserialize, Serialize};

use crate::wire::time::Millis;
use crate::wire::LeaseView;

/// The shortest wait before retrying a renewal that failed.
pub const RETRY_FLOOR_MS: Millis = 5_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LastRenewal {
    /// No renewal since the holding was verified.
    None,
    Renewed,
    NotDue,
    /// The renewal proved the holding lost.
    Lost,
    /// The renewal could not be completed (GitHub unavailable, rate limited…).
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardInput {
    pub now: Millis,
    /// The lease as last proven (by the verification or the last successful renewal).
    pub lease: LeaseView,
    pub last: LastRenewal,
    /// When the last renewal attempt ended (for spacing retries after a failure).
    #[serde(default)]
    pub last_attempt_at: Option<Millis>,
    /// How long stopping the child may take (SIGTERM, then SIGKILL after this): the stop
    /// starts this long before the local deadline, so the child is gone by it.
    #[serde(default)]
    pub kill_grace_ms: Millis,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum GuardDecision {
    /// Renew now; a renewal not proven by `until` (local clock) proves nothing: stop then.
    #[serde(rename_all = "camelCase")]
    Renew { until: Millis },
    /// Nothing to do before `until` (local clock); then ask again.
    #[serde(rename_all = "camelCase")]
    Wait { until: Millis },
    /// Stop the child's process group.
    Kill { reason: KillReason },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KillReason {
    /// A renewal proved the holding lost (taken over, released, expired and removed).
    Lost,
    /// The local deadline passed without a proven renewal.
    Deadline,
}

pub fn decide(input: &GuardInput) -> GuardDecision {
    // The child must be gone by the local deadline: the stop begins a kill grace before it.
    let deadline = input
        .lease
        .local_deadline
        .saturating_sub(input.kill_grace_ms);
    if input.last == LastRenewal::Lost {
        return GuardDecision::Kill {
            reason: KillReason::Lost,
        };
    }
    if input.now >= deadline {
        return GuardDecision::Kill {
            reason: KillReason::Deadline,
        };
    }
    let retry_after = |at: Millis| at + (input.lease.renew_ms / 10).max(RETRY_FLOOR_MS);
    let next = match (input.last, input.last_attempt_at) {
        // After a failure, try again soon (a tenth of the renew interval, at least 5 s), well
        // before the deadline.
        (LastRenewal::Failed, Some(at)) => retry_after(at),
        // Not due yet by GitHub's clock (the lease given is the one that answer proved): at its
        // renew time, but never sooner than a retry, so clocks that disagree cannot make a loop.
        (LastRenewal::NotDue, Some(at)) => input.lease.renew_at.max(retry_after(at)),
        _ => input.lease.renew_at,
    };
    if input.now >= next {
        GuardDecision::Renew { until: deadline }
    } else {
        GuardDecision::Wait {
            until: next.min(deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease() -> LeaseView {
        LeaseView {
            expires_at: 900_000,
            ceiling_at: 9_000_000,
            local_deadline: 780_000,
            renew_at: 300_000,
            renew_ms: 300_000,
            ttl_ms: 900_000,
        }
    }

    fn input(now: Millis, last: LastRenewal, last_attempt_at: Option<Millis>) -> GuardInput {
        GuardInput {
            now,
            lease: lease(),
            last,
            last_attempt_at,
            kill_grace_ms: 0,
        }
    }

    #[test]
    fn table() {
        use GuardDecision::*;
        let cases = [
            (input(0, LastRenewal::None, None), Wait { until: 300_000 }),
            (
                input(300_000, LastRenewal::None, None),
                Renew { until: 780_000 },
            ),
            (
                input(300_000, LastRenewal::Failed, Some(300_000)),
                Wait { until: 330_000 },
            ),
            (
                input(330_000, LastRenewal::Failed, Some(300_000)),
                Renew { until: 780_000 },
            ),
            (
                input(779_999, LastRenewal::Failed, Some(775_000)),
                Wait { until: 780_000 },
            ),
            (
                input(780_000, LastRenewal::Failed, Some(775_000)),
                Kill {
                    reason: KillReason::Deadline,
                },
            ),
            (
                input(10, LastRenewal::Lost, Some(5)),
                Kill {
                    reason: KillReason::Lost,
                },
            ),
            (
                input(790_000, LastRenewal::Renewed, None),
                Kill {
                    reason: KillReason::Deadline,
                },
            ),
            // Not due at 300 s: the next try is a retry interval later, not at once.
            (
                input(300_000, LastRenewal::NotDue, Some(300_000)),
                Wait { until: 330_000 },
            ),
            (
                input(100_000, LastRenewal::NotDue, Some(100_000)),
                Wait { until: 300_000 },
            ),
        ];
        for (i, want) in cases {
            assert_eq!(decide(&i), want, "{i:?}");
        }
        // With a 10 s kill grace the stop starts 10 s before the deadline.
        let graced = |now| GuardInput {
            kill_grace_ms: 10_000,
            ..input(now, LastRenewal::Failed, Some(760_000))
        };
        assert_eq!(decide(&graced(765_000)), Wait { until: 770_000 });
        assert_eq!(
            decide(&graced(770_000)),
            Kill {
                reason: KillReason::Deadline
            }
        );
    }
}
