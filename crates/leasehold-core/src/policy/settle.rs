//! When a write is put off to let a busy lock settle.
//!
//! Jobs that start together all read the lock within a moment of each other and write into
//! each other's conflicts. A job that reads a version another job wrote *to join the lock*
//! (an acquire or an enqueue) less than [`MIN_WRITE_GAP_MS`] ago, by GitHub's clock, is in such
//! a crowd: it waits for that second to pass (and up to a second more, jittered) and reads
//! again, instead of sending a write that would most likely conflict. It trades reads for
//! writes, the scarcer of GitHub's limits (80 a minute): measured on the GitHub model
//! (`crates/leasehold-core/tests/requests.rs`), 24 jobs starting 20 ms apart on a lock of
//! capacity 2 make 18 conflicts and 66 write attempts in their busiest minute with it, 35 and
//! 83 without, for 244 requests in all against 225.
//!
//! Any other recent change (a release, a renewal, a timeout) says nothing of a crowd: the
//! write goes at once, so an acquire right after another job's release costs no wait.

use super::jitter::Rng;
use super::limits::{MAX_BUSY_DEFERRALS, MIN_WRITE_GAP_MS};
use crate::wire::time::Millis;
use crate::wire::Change;

/// How long to wait before reading again instead of writing, if at all: `last` is the version's
/// last change, `me` this writer, `server_now` GitHub's clock, `deferrals` the writes put off
/// in a row so far (at most [`MAX_BUSY_DEFERRALS`], so a lock that never goes quiet is still
/// written).
pub fn settle_delay(
    last: Option<&Change>,
    me: &str,
    server_now: Millis,
    deferrals: u32,
    rng: &mut Rng,
) -> Option<Millis> {
    let c = last?;
    let arrival = c.action.is_arrival();
    let settle = c.at.saturating_add(MIN_WRITE_GAP_MS);
    if c.by == me || !arrival || server_now >= settle || deferrals >= MAX_BUSY_DEFERRALS {
        return None;
    }
    // Never longer than the gap itself: a change stamped ahead of this reader's estimate of
    // GitHub's clock (another writer's estimate was off) must not hold a write up for long.
    Some((settle - server_now).min(MIN_WRITE_GAP_MS) + rng.up_to(MIN_WRITE_GAP_MS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ChangeAction;

    fn change(action: ChangeAction, at: Millis) -> Change {
        Change {
            at,
            by: "octo/web:5:ship".into(),
            action,
            removed: Vec::new(),
        }
    }

    #[test]
    fn only_a_recent_arrival_of_another_job_puts_a_write_off() {
        let mut rng = Rng::new(1);
        let t = 1_000_000;
        let busy =
            |a, at, me: &str, d, rng: &mut Rng| settle_delay(Some(&change(a, at)), me, t, d, rng);
        let d = busy(ChangeAction::Enqueue, t - 200, "me", 0, &mut rng).expect("a crowd");
        assert!((800..=1_800).contains(&d), "{d}");
        assert!(busy(ChangeAction::Acquire, t - 200, "me", 0, &mut rng).is_some());
        // A release, a renewal, a timeout: no crowd.
        for a in [
            ChangeAction::Release,
            ChangeAction::Renew,
            ChangeAction::Timeout,
            ChangeAction::Reap,
        ] {
            assert_eq!(busy(a, t - 200, "me", 0, &mut rng), None);
        }
        // Settled already, this writer's own change, or put off enough times in a row.
        assert_eq!(
            busy(ChangeAction::Enqueue, t - 1_000, "me", 0, &mut rng),
            None
        );
        assert_eq!(
            busy(
                ChangeAction::Enqueue,
                t - 200,
                "octo/web:5:ship",
                0,
                &mut rng
            ),
            None
        );
        assert_eq!(
            busy(
                ChangeAction::Enqueue,
                t - 200,
                "me",
                MAX_BUSY_DEFERRALS,
                &mut rng
            ),
            None
        );
        // A change stamped far ahead of GitHub's clock as this reader knows it: two seconds at most.
        let d = busy(ChangeAction::Enqueue, t + 300_000, "me", 0, &mut rng).expect("a crowd");
        assert!(d <= 2 * MIN_WRITE_GAP_MS, "{d}");
        assert_eq!(settle_delay(None, "me", t, 0, &mut rng), None);
    }
}
