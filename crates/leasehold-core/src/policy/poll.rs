//! How often a waiter polls: spaced by its place in the queue, so a deep queue costs about the
//! logarithm of its depth in requests, not its depth.

#[cfg(test)]
use super::jitter::Rng;
use super::limits::MAX_POLL_MS;
#[cfg(test)]
use super::limits::POLL_JITTER_DIVISOR;
use crate::wire::time::Millis;

/// How long a waiter at `position` (0-based) sleeps before its next poll. The first
/// `capacity` waiters (the next to be admitted) poll every `poll_ms`; each further group of
/// `capacity` waiters polls proportionally less often, up to [`MAX_POLL_MS`]. So the whole
/// queue polls at about `capacity / poll_ms × H(n / capacity)` requests a second (H the harmonic
/// number): it grows with the logarithm of the queue's depth, not with the number of waiters.
/// Plus up to 1/[`POLL_JITTER_DIVISOR`] seeded jitter, so waiters that started together drift apart.
/// (`handoff.rs` polls sooner than this when a release is due, never later.)
#[cfg(test)]
fn poll_interval(poll_ms: Millis, position: usize, capacity: u32, rng: &mut Rng) -> Millis {
    let base = poll_base(poll_ms, position, capacity);
    base + rng.up_to(base / POLL_JITTER_DIVISOR)
}

/// [`poll_interval`] without its jitter.
pub(super) fn poll_base(poll_ms: Millis, position: usize, capacity: u32) -> Millis {
    poll_ms
        .saturating_mul(rank(position, capacity))
        .min(MAX_POLL_MS.max(poll_ms))
}

/// Which group of `capacity` waiters `position` is in, from 1 (the next to be admitted).
pub(super) fn rank(position: usize, capacity: u32) -> u64 {
    position as u64 / u64::from(capacity.max(1)) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limits::DEFAULT_POLL_SECONDS;

    #[test]
    fn polls_spread_by_queue_position() {
        let mut rng = Rng::new(3);
        let within = |v: Millis, base: Millis| v >= base && v <= base + base / 4;
        for (position, capacity, base) in [
            (0, 2, 10_000),
            (1, 2, 10_000),
            (2, 2, 20_000),
            (5, 2, 30_000),
            (15, 2, 80_000),
            (500, 2, 120_000),
            (0, 1, 10_000),
            (3, 1, 40_000),
        ] {
            let v = poll_interval(10_000, position, capacity, &mut rng);
            assert!(
                within(v, base),
                "position {position} capacity {capacity}: {v}"
            );
        }
        // A poll interval above the cap is kept: the cap only slows the back of the queue.
        assert!(within(poll_interval(300_000, 9, 1, &mut rng), 300_000));
    }

    #[test]
    fn a_deep_queue_polls_about_once_a_second_in_total() {
        // 16 waiters on a capacity-2 lock at the default 10 s: the sum of their poll rates.
        let rate: f64 = (0..16)
            .map(|p| 1000.0 / (DEFAULT_POLL_SECONDS * 1000 * (p / 2 + 1)) as f64)
            .sum();
        assert!(rate < 0.6, "{rate} polls a second");
        let deep: f64 = (0..1000)
            .map(|p| 1000.0 / ((DEFAULT_POLL_SECONDS * 1000 * (p / 2 + 1)).min(MAX_POLL_MS)) as f64)
            .sum();
        assert!(deep < 10.0, "{deep} polls a second for 1000 waiters");
    }
}
