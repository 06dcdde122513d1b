//! How soon a waiter looks again: soon when its admission is due, rarely when it is not.
//!
//! A release hands the slot to the next waiter in its own write; the waiter learns it at its
//! next read. So the waiter's poll is spaced by when its admission is due: from the hold
//! times it has seen end (a [`HoldBook`]), the holdings' start times and its place in the
//! queue, it estimates the release that will admit it and halves the distance to it at each
//! poll, down to [`HANDOFF_POLL_MS`] (its reads conditional: an unchanged state answers 304,
//! which costs nothing of GitHub's primary limit). Past the estimate it looks often at first,
//! then less. Without hold times, a waiter next in line polls at about a tenth of the time the
//! oldest holding has lasted. Never more often than [`HANDOFF_POLL_MS`] times the waiter's group
//! (further groups proportionally less often) and, for the next `capacity` waiters together, at
//! most [`HANDOFF_POLLS_PER_SECOND`]; never less often than the position rule of `poll.rs`
//! (`poll-seconds` for the next in line).

use std::collections::VecDeque;

use super::jitter::Rng;
use super::limits::{
    HANDOFF_POLLS_PER_SECOND, HANDOFF_POLL_MS, HELD_POLL_DIVISOR, HOLD_SAMPLES, POLL_JITTER_DIVISOR,
};
use super::poll::{poll_base, rank};
use crate::wire::time::Millis;
use crate::wire::{ChangeAction, LockState};

/// The hold times one waiter has seen end: a holding present in one version it read and
/// released in the next (by GitHub's clock, the release's `lastChange.at` less `acquiredAt`).
#[derive(Clone, Debug, Default)]
pub struct HoldBook {
    revision: u64,
    holders: Vec<(String, Millis)>,
    holds: VecDeque<Millis>,
}

impl HoldBook {
    /// Takes in a version of the state (older or repeated ones change nothing).
    pub fn observe(&mut self, st: &LockState) {
        if st.revision <= self.revision {
            return;
        }
        if let Some(c) = st
            .last_change
            .as_ref()
            .filter(|c| c.action == ChangeAction::Release)
        {
            let gone = self.holders.iter().find(|(id, _)| *id == c.by);
            if let Some((_, since)) = gone.filter(|_| st.holder(&c.by).is_none()) {
                if self.holds.len() == HOLD_SAMPLES {
                    self.holds.pop_front();
                }
                self.holds.push_back(c.at.saturating_sub(*since));
            }
        }
        self.revision = st.revision;
        self.holders = st
            .holders
            .iter()
            .map(|h| (h.holder_id.clone(), h.acquired_at))
            .collect();
    }

    /// The median of the hold times seen, if any.
    pub fn typical(&self) -> Option<Millis> {
        let mut h: Vec<Millis> = self.holds.iter().copied().collect();
        h.sort_unstable();
        h.get(h.len().saturating_sub(1) / 2).copied()
    }
}

/// When (GitHub's clock) the release that admits the waiter at `position` is due, if every slot
/// is held and a hold time is known: each slot frees at its holding's start plus `typical`, and
/// again every `typical` after; the waiter is admitted at the `position + 1`-th.
fn admission_due(
    position: usize,
    capacity: u32,
    starts: &[Millis],
    typical: Millis,
) -> Option<Millis> {
    if starts.len() < capacity as usize || starts.is_empty() {
        return None;
    }
    let mut frees: Vec<Millis> = starts.iter().map(|s| s.saturating_add(typical)).collect();
    let mut due = 0;
    for _ in 0..=position {
        let (i, t) = frees
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .expect("a holding");
        due = t;
        frees[i] = t.saturating_add(typical.max(1));
    }
    Some(due)
}

/// How long the waiter at `position` (0-based) sleeps before its next poll: `poll_ms` is
/// `poll-seconds`, `starts` the current holdings' `acquiredAt`, `server_now` GitHub's clock.
pub fn next_poll(
    poll_ms: Millis,
    position: usize,
    capacity: u32,
    starts: &[Millis],
    holds: &HoldBook,
    server_now: Millis,
    rng: &mut Rng,
) -> Millis {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::PollHotLoop) {
        return 50;
    }
    let heads = u64::from(capacity.max(1));
    let fast = HANDOFF_POLL_MS.max(heads * 1_000 / HANDOFF_POLLS_PER_SECOND);
    let floor = fast.saturating_mul(rank(position, capacity));
    let slow = poll_base(poll_ms, position, capacity).max(floor);
    let next_in_line = (position as u64) < heads;
    let want = match holds
        .typical()
        .and_then(|t| admission_due(position, capacity, starts, t))
    {
        Some(due) if due > server_now => (due - server_now) / 2,
        Some(due) => (server_now - due) / 4,
        None if next_in_line => starts
            .iter()
            .min()
            .map_or(slow, |&s| server_now.saturating_sub(s) / HELD_POLL_DIVISOR),
        None => slow,
    };
    let base = want.clamp(floor, slow);
    base + rng.up_to(base / POLL_JITTER_DIVISOR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Change, Holder, RunIdentity};

    const T: Millis = 1_800_000_000_000;

    fn holder(id: &str, at: Millis) -> Holder {
        Holder {
            holder_id: id.into(),
            nonce: "00000000000000aa".into(),
            fence: 1,
            run: RunIdentity {
                repository: "octo/app".into(),
                run_id: 1,
                run_attempt: 1,
                job: "build".into(),
                runner_name: "r".into(),
                url: String::new(),
                job_id: None,
            },
            acquired_at: at,
            expires_at: at + 3_600_000,
            lease_ms: 3_600_000,
            ceiling_at: at + 7_200_000,
            claimed_at: None,
            pool: None,
        }
    }

    fn version(revision: u64, holders: Vec<Holder>, released: Option<(&str, Millis)>) -> LockState {
        LockState {
            schema: 1,
            lock: "deploy".into(),
            revision,
            fence: 1,
            config: None,
            holders,
            queue: Vec::new(),
            last_change: released.map(|(by, at)| Change {
                at,
                by: by.into(),
                action: ChangeAction::Release,
                removed: Vec::new(),
            }),
            pool: None,
            reservations: Vec::new(),
            incident: None,
        }
    }

    #[test]
    fn a_waiter_learns_hold_times_from_the_releases_it_sees() {
        let mut book = HoldBook::default();
        book.observe(&version(
            3,
            vec![holder("a", T), holder("b", T + 1_000)],
            None,
        ));
        assert_eq!(book.typical(), None);
        book.observe(&version(
            4,
            vec![holder("b", T + 1_000), holder("c", T + 5_000)],
            Some(("a", T + 5_000)),
        ));
        assert_eq!(book.typical(), Some(5_000));
        // A repeated version, or one older than the last, teaches nothing.
        book.observe(&version(
            4,
            vec![holder("c", T + 5_000)],
            Some(("b", T + 9_000)),
        ));
        assert_eq!(book.typical(), Some(5_000));
        book.observe(&version(
            5,
            vec![holder("c", T + 5_000)],
            Some(("b", T + 7_000)),
        ));
        assert_eq!(book.typical(), Some(5_000)); // 5 s and 6 s: the lower median
    }

    #[test]
    fn the_next_in_line_polls_quickly_only_when_a_release_is_due() {
        let mut rng = Rng::new(1);
        let within = |v: Millis, base: Millis| v >= base && v <= base + base / 4;
        let mut book = HoldBook::default();
        // No hold seen: a tenth of the oldest holding's age, between 1 s and poll-seconds.
        let starts = [T - 5_000, T - 2_000];
        assert!(within(
            next_poll(10_000, 0, 2, &starts, &book, T, &mut rng),
            1_000
        ));
        let old = [T - 600_000, T - 2_000];
        assert!(within(
            next_poll(10_000, 0, 2, &old, &book, T, &mut rng),
            10_000
        ));
        // Holds of 60 s seen; the holdings started 10 s and 40 s ago: the first release is due
        // in 20 s, so the next in line looks again in 10 s (poll-seconds caps it), the second in
        // line (due in 50 s) too; later they close in.
        book.holds.push_back(60_000);
        let starts = [T - 10_000, T - 40_000];
        assert!(within(
            next_poll(30_000, 0, 2, &starts, &book, T, &mut rng),
            10_000
        ));
        assert!(within(
            next_poll(30_000, 1, 2, &starts, &book, T, &mut rng),
            25_000
        ));
        assert!(within(
            next_poll(30_000, 0, 2, &starts, &book, T + 18_000, &mut rng),
            1_000
        ));
        // Further back: the third waiter is admitted by the third release, due at T + 80 s.
        assert!(within(
            next_poll(30_000, 2, 2, &starts, &book, T, &mut rng),
            40_000
        ));
        // Overdue by 20 s: every 5 s.
        assert!(within(
            next_poll(30_000, 0, 2, &starts, &book, T + 40_000, &mut rng),
            5_000
        ));
    }

    #[test]
    fn a_large_lock_spaces_its_quick_polls() {
        let mut rng = Rng::new(2);
        let book = HoldBook::default();
        let starts: Vec<Millis> = (0..64).map(|_| T - 1_000).collect();
        // 64 next in line, 4 quick polls a second among them: each at most every 16 s.
        let v = next_poll(60_000, 0, 64, &starts, &book, T, &mut rng);
        assert!((16_000..=20_000).contains(&v), "{v}");
        // The whole queue of a capacity-2 lock, all next releases due now: at most about the
        // quick rate for the next two, and less for each group behind.
        let starts = [T - 1_000, T - 1_000];
        let rate: f64 = (0..16)
            .map(|p| 1_000.0 / next_poll(10_000, p, 2, &starts, &book, T, &mut rng) as f64)
            .sum();
        assert!(rate < 6.0, "{rate} polls a second");
    }
}
