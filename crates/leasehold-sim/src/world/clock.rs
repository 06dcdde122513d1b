//! A client's wall clock: offset from GitHub's and drifting, read as `now` by its core.

use leasehold_core::time::Millis;

use crate::types::T0;

/// A client's wall clock: offset from GitHub's and drifting, read as `now` by its core.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub offset_ms: i64,
    pub drift_ppm: i64,
}

impl Clock {
    pub fn local(&self, t: Millis) -> Millis {
        let elapsed = i128::from(t - T0);
        (i128::from(t)
            + i128::from(self.offset_ms)
            + elapsed * i128::from(self.drift_ppm) / 1_000_000) as Millis
    }

    /// The first real time (from the seed's start on) at which this clock reads `target` or
    /// later, even in the past (the clock is monotonic).
    pub fn real_of(&self, target: Millis) -> Millis {
        let need = i128::from(target) - i128::from(T0) - i128::from(self.offset_ms);
        let mut t = (i128::from(T0) + need * 1_000_000 / (1_000_000 + i128::from(self.drift_ppm)))
            .max(i128::from(T0)) as Millis;
        while self.local(t) < target {
            t += 1;
        }
        while t > T0 && self.local(t - 1) >= target {
            t -= 1;
        }
        t
    }

    /// The first real time, not before `now`, at which this clock reads `target` or later.
    pub fn real_at(&self, target: Millis, now: Millis) -> Millis {
        let here = self.local(now);
        if here >= target {
            return now;
        }
        let need = i128::from(target - here);
        let mut t = (i128::from(now) + need * 1_000_000 / (1_000_000 + i128::from(self.drift_ppm)))
            as Millis;
        t = t.max(now);
        while self.local(t) < target {
            t += 1;
        }
        while t > now && self.local(t - 1) >= target {
            t -= 1;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_of_inverts_the_clock_even_in_the_past() {
        for clock in [
            Clock {
                offset_ms: -300_000,
                drift_ppm: 2_000,
            },
            Clock {
                offset_ms: 300_000,
                drift_ppm: -2_000,
            },
            Clock {
                offset_ms: 0,
                drift_ppm: 0,
            },
        ] {
            for t in [T0, T0 + 1, T0 + 123_456, T0 + 3_600_000] {
                let target = clock.local(t);
                let r = clock.real_of(target);
                assert!(
                    clock.local(r) >= target && (r == T0 || clock.local(r - 1) < target),
                    "{clock:?} {t}"
                );
                assert_eq!(clock.real_at(target, T0), r);
                assert_eq!(
                    clock.real_at(target, T0 + 7_200_000),
                    T0 + 7_200_000,
                    "real_at never goes back"
                );
            }
        }
    }
}
