//! GitHub's clock, as the engine estimates it from the `date` of its answers, and a holding's
//! lease turned into the holder's local deadlines by it.

use crate::policy::limits::DATE_RESOLUTION_MS;
use crate::wire::time::{parse_http_date, Millis};
use crate::wire::{Holder, LeasePolicy, LeaseView};

/// An estimate of GitHub's clock from the `date` header of its answers, as two bounds on the
/// offset to add to the local clock. The header has a resolution of a second and was made at
/// some instant between sending the request and reading the answer (a process may be paused in
/// between), so GitHub's clock at local instant `x` lies in `[x + low, x + high]`:
/// * `low = date - read_at`: used to judge others' leases and to stamp the state, so nobody is
///   expired early and no lease is written longer than it is;
/// * `high = date + 1 s - sent_at`: used to turn a lease's end into the holder's local deadline,
///   so a holder stops early rather than late.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockEstimate {
    low: Option<i64>,
    high: Option<i64>,
}

impl ClockEstimate {
    /// Takes in an answer's `date` header, for a request sent at local `sent_at` and read at
    /// local `read_at`.
    pub fn observe(&mut self, date: Option<&str>, sent_at: Millis, read_at: Millis) {
        if let Some(server) = date.and_then(parse_http_date) {
            self.low = Some(server as i64 - read_at as i64);
            self.high =
                Some(server as i64 + DATE_RESOLUTION_MS as i64 - sent_at.min(read_at) as i64);
        }
    }

    /// A lower bound on GitHub's clock now (the local clock when no answer carried a date).
    pub fn server_now(&self, now: Millis) -> Millis {
        (now as i64 + self.low.unwrap_or(0)).max(0) as Millis
    }

    /// The earliest local instant at which GitHub's clock may already read `server_time`.
    pub fn local_deadline_for(&self, server_time: Millis) -> Millis {
        (server_time as i64 - self.high.unwrap_or(0)).max(0) as Millis
    }

    /// The local instant from which GitHub's clock, as this estimate judges it ([`Self::server_now`]),
    /// reads `server_time` or later: for things that must not happen early (a renewal that is
    /// judged due by the same estimate).
    pub fn local_time_of(&self, server_time: Millis) -> Millis {
        (server_time as i64 - self.low.unwrap_or(0)).max(0) as Millis
    }

    pub fn offsets(&self) -> (Option<i64>, Option<i64>) {
        (self.low, self.high)
    }

    /// An estimate an earlier command of the same machine measured (its [`Self::offsets`]):
    /// for a command that plans before its first answer, so it stamps GitHub's time, not the
    /// local clock's. The first answer's `date` replaces it.
    pub fn carried(low: i64, high: i64) -> Self {
        ClockEstimate {
            low: Some(low),
            high: Some(high),
        }
    }
}

/// A holding's lease as its holder must act on it. Local times come from the clock estimate's
/// upper bound, so they are never late.
pub fn lease_view(h: &Holder, policy: &LeasePolicy, clock: &ClockEstimate) -> LeaseView {
    let local_deadline = clock.local_deadline_for(policy.local_deadline(h.expires_at));
    // At the ceiling a renewal cannot extend anything: nothing is due before the deadline.
    // Due by the same estimate renew judges it with (its low bound), so a renewal sent at
    // `renewAt` is not turned away as not due yet.
    let renew_at = if h.expires_at >= h.ceiling_at {
        local_deadline
    } else {
        clock
            .local_time_of(
                h.expires_at
                    .saturating_sub(h.lease_ms)
                    .saturating_add(policy.renew_ms_for(h.lease_ms)),
            )
            .min(local_deadline)
    };
    LeaseView {
        expires_at: h.expires_at,
        ceiling_at: h.ceiling_at,
        local_deadline,
        renew_at,
        renew_ms: policy.renew_ms_for(h.lease_ms),
        ttl_ms: h.lease_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_estimate_from_date_headers() {
        let mut c = ClockEstimate::default();
        assert_eq!(c.server_now(1_000_000), 1_000_000);
        // Sent at 00:18:50 local, read at 00:19:00 local (after a pause); GitHub says 00:20:00.
        c.observe(Some("Thu, 01 Jan 1970 00:20:00 GMT"), 1_130_000, 1_140_000);
        assert_eq!(c.offsets(), (Some(60_000), Some(71_000)));
        // Judging uses the low bound: never ahead of GitHub's clock.
        assert_eq!(c.server_now(1_200_000), 1_260_000);
        // A deadline uses the high bound: never after the instant GitHub's clock gets there.
        assert_eq!(c.local_deadline_for(2_000_000), 1_929_000);
        c.observe(Some("garbage"), 5, 5);
        assert_eq!(
            c.offsets(),
            (Some(60_000), Some(71_000)),
            "an unreadable date changes nothing"
        );
    }
}
