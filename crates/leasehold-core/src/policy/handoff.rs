//! How soon a waiter looks again: soon when its admission is due, rarely when it is not.
//!
//! A release hands the slot to the next waiter in its own write; the waiter learns it at its
//! next read. So the waiter's poll is spaced by when its admission is due: from the hold
//! times it has learned (a [`HoldBook`]), the holdings' start times and its place in the
//! queue, it estimates the release that will admit it and closes in on it at each poll (by
//! halves when next in line, by thirds further back, where an estimate that ran long is more
//! wrong), down to [`HANDOFF_POLL_MS`] (its reads conditional: an unchanged state answers 304,
//! which costs nothing of GitHub's primary limit). Past the estimate it looks often at first,
//! then less.
//!
//! A waiter polls rarely, so several releases often happen between two of its reads. The book
//! learns hold times from each pair of versions it reads:
//! - exactly, when the newer one's `lastChange` is the release of a holding the older one had;
//! - by handover, while the waiter waited in both and the lock was full in both (a plain lock:
//!   every slot freed in between went straight to the queue's head, in the same write, so the
//!   admitted holding's `acquiredAt` is the releasing write's time): when every admission since
//!   the older version is still holding (the fence grew by as many as the new holdings), the
//!   k-th earliest holding that went ended at the k-th earliest new holding's `acquiredAt`. A
//!   pair whose holding's lease had run out by then is skipped (it may have been removed on
//!   expiry or by a reap, not released), and so is one ending before it started;
//! - by rate, the same way, when holdings came and went unseen in between: `capacity` times
//!   the time between the two versions' latest admissions, over the admissions made since.
//!
//! Without hold times, a waiter next in line polls at about a tenth of the time the oldest
//! holding has lasted; a waiter further back takes that age as the hold time (each holding
//! lasts at least as long as it has so far), so it looks soon when the holdings are old and its
//! turn may be near, and backs off as the estimate moves out. Never more often than
//! [`HANDOFF_POLL_MS`] for the next in line and [`QUEUE_POLL_MS`] times the group's rank for
//! those behind; for the next `capacity` waiters together, at most [`HANDOFF_POLLS_PER_SECOND`]
//! (and all the groups behind together less than that); never less
//! often than the position rule of `poll.rs` (`poll-seconds` for the next in line).

use std::collections::VecDeque;

use super::jitter::Rng;
use super::limits::{
    HANDOFF_POLLS_PER_SECOND, HANDOFF_POLL_MS, HELD_POLL_DIVISOR, HOLD_SAMPLES,
    POLL_JITTER_DIVISOR, QUEUE_POLL_MS,
};
use super::poll::{poll_base, rank};
use crate::wire::time::Millis;
use crate::wire::{ChangeAction, Holder, LockState};

/// The hold times one waiter has learned from the versions it read (by GitHub's clock).
#[derive(Clone, Debug, Default)]
pub struct HoldBook {
    revision: u64,
    /// The last fence handed out as of the version last read.
    fence: u64,
    holders: Vec<Seen>,
    /// Whether the version last read was paced by releases: this waiter waited in it and the
    /// plain lock was full, so every slot freed after it was handed over in the freeing write.
    paced: bool,
    holds: VecDeque<Millis>,
}

/// A holding as seen in the version last read.
#[derive(Clone, Debug)]
struct Seen {
    id: String,
    fence: u64,
    acquired_at: Millis,
    expires_at: Millis,
}

impl Seen {
    fn is(&self, h: &Holder) -> bool {
        // An adoption gives a holding a new fence and nonce but keeps its start.
        self.id == h.holder_id && self.acquired_at == h.acquired_at
    }
}

impl HoldBook {
    /// Takes in a version of the state (older or repeated ones change nothing): `capacity` is
    /// the lock's, when known, and `waiting` whether this waiter is queued in it.
    pub fn observe(&mut self, st: &LockState, capacity: Option<u32>, waiting: bool) {
        if st.revision <= self.revision {
            return;
        }
        let paced = waiting
            && !st.is_pool()
            && capacity.is_some_and(|c| c > 0 && st.holders.len() == c as usize);
        let exact = st
            .last_change
            .as_ref()
            .filter(|c| c.action == ChangeAction::Release)
            .and_then(|c| {
                let gone = self.holders.iter().find(|p| p.id == c.by)?;
                st.holder(&c.by)
                    .is_none()
                    .then(|| (gone.id.clone(), c.at.saturating_sub(gone.acquired_at)))
            });
        if let Some((_, hold)) = &exact {
            self.learn(*hold);
        }
        if self.paced && paced {
            let exact = exact.as_ref().map(|(id, _)| id.as_str());
            for hold in self.handovers(st, capacity.unwrap_or(1), exact) {
                self.learn(hold);
            }
        }
        self.revision = st.revision;
        self.fence = st.fence;
        self.paced = paced;
        self.holders = st
            .holders
            .iter()
            .map(|h| Seen {
                id: h.holder_id.clone(),
                fence: h.fence,
                acquired_at: h.acquired_at,
                expires_at: h.expires_at,
            })
            .collect();
    }

    /// The hold times `st` tells of beyond the exact release (of `exact`, learned already),
    /// the version last read and `st` both paced by releases.
    fn handovers(&self, st: &LockState, capacity: u32, exact: Option<&str>) -> Vec<Millis> {
        let mut gone: Vec<&Seen> = self
            .holders
            .iter()
            .filter(|p| !st.holders.iter().any(|h| p.is(h)))
            .filter(|p| exact != Some(p.id.as_str()))
            .collect();
        gone.sort_by_key(|p| (p.acquired_at, p.fence));
        let mut new: Vec<&Holder> = st
            .holders
            .iter()
            .filter(|h| !self.holders.iter().any(|p| p.is(h)))
            .collect();
        new.sort_by_key(|h| (h.acquired_at, h.fence));
        let admitted = st.fence.saturating_sub(self.fence);
        if admitted == new.len() as u64 {
            // Every admission since is still holding: the k-th release handed its slot to the
            // k-th new holding. The exact release, set aside, was the latest write: its
            // admission is the newest holding, the one left over.
            return gone
                .iter()
                .zip(&new)
                .filter(|(p, h)| h.acquired_at > p.acquired_at && h.acquired_at <= p.expires_at)
                .map(|(p, h)| h.acquired_at - p.acquired_at)
                .collect();
        }
        // Holdings came and went unseen: `capacity` slots turned over `admitted` times between
        // the two versions' latest admissions.
        let latest_then = self.holders.iter().find(|p| p.fence == self.fence);
        let latest_now = st.holders.iter().find(|h| h.fence == st.fence);
        match (latest_then, latest_now) {
            (Some(p), Some(h)) if admitted > new.len() as u64 && h.acquired_at > p.acquired_at => {
                vec![(h.acquired_at - p.acquired_at) * u64::from(capacity) / admitted]
            }
            _ => Vec::new(),
        }
    }

    fn learn(&mut self, hold: Millis) {
        if self.holds.len() == HOLD_SAMPLES {
            self.holds.pop_front();
        }
        self.holds.push_back(hold);
    }

    /// How many hold times the book holds.
    pub fn samples(&self) -> usize {
        self.holds.len()
    }

    /// The median of the hold times learned, if any.
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

/// How long the oldest of the holdings that started at `starts` has lasted by `server_now`.
pub fn oldest_age(starts: &[Millis], server_now: Millis) -> Option<Millis> {
    starts.iter().min().map(|&s| server_now.saturating_sub(s))
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
    let next_in_line = (position as u64) < heads;
    let fast = HANDOFF_POLL_MS.max(heads * 1_000 / HANDOFF_POLLS_PER_SECOND);
    // The groups behind are admitted by no release but the next, so they look at most once a
    // second per rank: all of them together never outpoll the next in line.
    let floor = if next_in_line {
        fast
    } else {
        fast.max(QUEUE_POLL_MS)
            .saturating_mul(rank(position, capacity))
    };
    let slow = poll_base(poll_ms, position, capacity).max(floor);
    let lasted = oldest_age(starts, server_now);
    // Without hold times, a waiter further back takes that age for the hold: holdings that
    // have lasted long may end soon, and its turn with them.
    let typical = holds.typical().or(lasted.filter(|_| !next_in_line));
    // The next in line halves the distance to its admission; a waiter further back, whose
    // estimate compounds one hold time per release ahead of it, closes in by thirds, so it is
    // still early when the holds it learned ran long (a crowd's first releases, slowed by the
    // arrivals' writes, take twice the usual hold and more).
    let closing = if next_in_line { 2 } else { 3 };
    let want = match typical.and_then(|t| admission_due(position, capacity, starts, t)) {
        Some(due) if due > server_now => (due - server_now) / closing,
        Some(due) => (server_now - due) / 4,
        None if next_in_line => lasted.map_or(slow, |age| age / HELD_POLL_DIVISOR),
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

    /// A holding with its fence.
    fn fenced(id: &str, fence: u64, at: Millis) -> Holder {
        Holder {
            fence,
            ..holder(id, at)
        }
    }

    /// A version of a lock whose last fence handed out is `fence`, with `last` its last
    /// change (who, what, when).
    fn fenced_version(
        revision: u64,
        fence: u64,
        holders: Vec<Holder>,
        last: Option<(&str, ChangeAction, Millis)>,
    ) -> LockState {
        let mut st = version(revision, holders, None);
        st.fence = fence;
        st.last_change = last.map(|(by, action, at)| Change {
            at,
            by: by.into(),
            action,
            removed: Vec::new(),
        });
        st
    }

    /// The hold times a new book learns from reading `then`, then `now`, of a lock of
    /// `capacity`, this waiter queued in each as `waited` says.
    fn learned(
        then: &LockState,
        now: &LockState,
        capacity: u32,
        waited: (bool, bool),
    ) -> Vec<Millis> {
        let mut book = HoldBook::default();
        book.observe(then, Some(capacity), waited.0);
        book.observe(now, Some(capacity), waited.1);
        book.holds.iter().copied().collect()
    }

    #[test]
    fn a_waiter_learns_hold_times_from_the_releases_it_sees() {
        let mut book = HoldBook::default();
        book.observe(
            &version(3, vec![holder("a", T), holder("b", T + 1_000)], None),
            Some(2),
            false,
        );
        assert_eq!(book.typical(), None);
        book.observe(
            &version(
                4,
                vec![holder("b", T + 1_000), holder("c", T + 5_000)],
                Some(("a", T + 5_000)),
            ),
            Some(2),
            false,
        );
        assert_eq!(book.typical(), Some(5_000));
        // A repeated version, or one older than the last, teaches nothing.
        book.observe(
            &version(4, vec![holder("c", T + 5_000)], Some(("b", T + 9_000))),
            Some(2),
            false,
        );
        assert_eq!(book.typical(), Some(5_000));
        book.observe(
            &version(5, vec![holder("c", T + 5_000)], Some(("b", T + 7_000))),
            Some(2),
            false,
        );
        assert_eq!(book.typical(), Some(5_000)); // 5 s and 6 s: the lower median
    }

    #[test]
    fn the_next_in_line_polls_quickly_only_when_a_release_is_due() {
        let mut rng = Rng::new(1);
        let within = |v: Millis, base: Millis| v >= base && v <= base + base / 4;
        let mut book = HoldBook::default();
        // No hold seen: a tenth of the oldest holding's age, between 0.5 s and poll-seconds.
        let starts = [T - 8_000, T - 2_000];
        assert!(within(
            next_poll(10_000, 0, 2, &starts, &book, T, &mut rng),
            800
        ));
        let young = [T - 3_000, T - 2_000];
        assert!(within(
            next_poll(10_000, 0, 2, &young, &book, T, &mut rng),
            500
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
        // Further back: the third waiter is admitted by the third release, due at T + 80 s;
        // it closes in by thirds.
        assert!(within(
            next_poll(30_000, 2, 2, &starts, &book, T, &mut rng),
            80_000 / 3
        ));
        // Overdue by 20 s: every 5 s.
        assert!(within(
            next_poll(30_000, 0, 2, &starts, &book, T + 40_000, &mut rng),
            5_000
        ));
    }

    #[test]
    fn a_waiter_further_back_is_early_even_when_its_hold_time_ran_long() {
        // Seventh in line of a capacity-2 lock whose holdings just started; it learned a hold
        // of 10 s (a slow first release) where holds now last 4.5 s: it is admitted by the
        // seventh release, at T + 18 s, and must look before that, however the jitter falls.
        let mut book = HoldBook::default();
        book.holds.push_back(10_000);
        let starts = [T, T];
        for seed in 0..200 {
            let v = next_poll(10_000, 6, 2, &starts, &book, T, &mut Rng::new(seed));
            assert!(v < 18_000, "seed {seed}: {v} ms");
        }
    }

    #[test]
    fn a_large_lock_spaces_its_quick_polls() {
        let mut rng = Rng::new(2);
        let book = HoldBook::default();
        let starts: Vec<Millis> = (0..64).map(|_| T - 1_000).collect();
        // 64 next in line, 4 quick polls a second among them: each at most every 16 s.
        let v = next_poll(60_000, 0, 64, &starts, &book, T, &mut rng);
        assert!((16_000..=20_000).contains(&v), "{v}");
        // The whole queue of a capacity-2 lock, all next releases due now: at most the quick
        // rate for the next two, and less than that for all the groups behind together.
        let starts = [T - 1_000, T - 1_000];
        let (heads, behind) = queue_rates(&starts, &book, &mut rng);
        assert!(
            heads <= HANDOFF_POLLS_PER_SECOND as f64,
            "{heads} polls a second"
        );
        assert!(behind < heads, "{behind} polls a second behind {heads}");
    }

    /// Polls a second of the next two waiters of a capacity-2 lock, and of the 14 behind them.
    fn queue_rates(starts: &[Millis], book: &HoldBook, rng: &mut Rng) -> (f64, f64) {
        let rate = |p: usize, rng: &mut Rng| {
            1_000.0 / next_poll(10_000, p, 2, starts, book, T, rng) as f64
        };
        let heads = (0..2).map(|p| rate(p, rng)).sum();
        let behind = (2..16).map(|p| rate(p, rng)).sum();
        (heads, behind)
    }

    #[test]
    fn a_waiter_learns_the_hold_times_of_the_handovers_between_its_reads() {
        // Capacity 2, this waiter queued in both versions: a and b went, c and d came (the
        // fence grew by 2, so nobody came and went unseen). The k-th earliest gone holding
        // ended at the k-th earliest new holding's start: a held 5 s, b 5.5 s.
        let then = fenced_version(
            10,
            6,
            vec![fenced("a", 5, T), fenced("b", 6, T + 2_000)],
            None,
        );
        let now = fenced_version(
            14,
            8,
            vec![fenced("d", 8, T + 7_500), fenced("c", 7, T + 5_000)],
            Some(("w", ChangeAction::Enqueue, T + 8_000)),
        );
        assert_eq!(learned(&then, &now, 2, (true, true)), vec![5_000, 5_500]);
        // Not waiting in one of them (the queue may have run dry: a slot freed without a
        // handover, a newcomer's start is its arrival), or the lock not full: nothing.
        assert!(learned(&then, &now, 2, (false, true)).is_empty());
        assert!(learned(&then, &now, 2, (true, false)).is_empty());
        assert!(learned(&then, &now, 3, (true, true)).is_empty());
    }

    /// In a pool a freed slot may stay idle while the head waits for another resource: a new
    /// holding's start is not the end of the one it replaced. Seated holdings mark a pool even
    /// when it keeps no books (`st.pool` empty).
    #[test]
    fn a_pool_teaches_no_handover_hold_times() {
        let seated = |h: Holder| Holder {
            pool: Some(crate::wire::Seat {
                resource: "a".into(),
                partition: None,
                affinity: None,
            }),
            ..h
        };
        let then = fenced_version(
            10,
            6,
            vec![seated(fenced("a", 5, T)), seated(fenced("b", 6, T + 2_000))],
            None,
        );
        let now = fenced_version(
            14,
            8,
            vec![
                seated(fenced("d", 8, T + 7_500)),
                seated(fenced("c", 7, T + 5_000)),
            ],
            Some(("w", ChangeAction::Enqueue, T + 8_000)),
        );
        assert!(learned(&then, &now, 2, (true, true)).is_empty());
    }

    #[test]
    fn a_holding_that_may_have_expired_teaches_no_hold_time() {
        // a's lease ran out before c was admitted: a may have been removed on expiry (or by a
        // reap), its "hold" the lease's length; b's release is still learned.
        let mut a = fenced("a", 5, T);
        a.expires_at = T + 4_000;
        let then = fenced_version(10, 6, vec![a, fenced("b", 6, T + 2_000)], None);
        let now = fenced_version(
            14,
            8,
            vec![fenced("c", 7, T + 5_000), fenced("d", 8, T + 7_500)],
            None,
        );
        assert_eq!(learned(&then, &now, 2, (true, true)), vec![5_500]);
    }

    #[test]
    fn an_exact_release_and_the_handovers_before_it_are_both_learned() {
        // b released at T + 4 s (admitting c), then a at T + 6 s (admitting d, the last
        // change): a's hold is exact, b's is paired with c, not with d.
        let then = fenced_version(
            10,
            6,
            vec![fenced("a", 5, T), fenced("b", 6, T + 2_000)],
            None,
        );
        let now = fenced_version(
            12,
            8,
            vec![fenced("c", 7, T + 4_000), fenced("d", 8, T + 6_000)],
            Some(("a", ChangeAction::Release, T + 6_000)),
        );
        assert_eq!(learned(&then, &now, 2, (true, true)), vec![6_000, 2_000]);
    }

    #[test]
    fn holdings_that_came_and_went_unseen_teach_the_admission_rate() {
        // Four admissions (fences 7 to 10) between the latest admissions of the two versions,
        // 9 s apart, on two slots: each holding lasted about 4.5 s.
        let then = fenced_version(
            10,
            6,
            vec![fenced("a", 5, T), fenced("b", 6, T + 2_000)],
            None,
        );
        let now = fenced_version(
            20,
            10,
            vec![fenced("e", 9, T + 9_000), fenced("f", 10, T + 11_000)],
            None,
        );
        assert_eq!(learned(&then, &now, 2, (true, true)), vec![4_500]);
    }

    #[test]
    fn a_waiter_further_back_without_hold_times_looks_sooner_as_the_holdings_age() {
        let mut rng = Rng::new(4);
        let within = |v: Millis, base: Millis| v >= base && v <= base + base / 4;
        let book = HoldBook::default();
        // The third in line of a capacity-2 lock, holdings 8 s and 4 s old: taking 8 s for a
        // hold, its admission (the third release) is due in 8 s, so it looks in a third of
        // that, not at the position rule's 20 s.
        let starts = [T - 8_000, T - 4_000];
        assert!(within(
            next_poll(10_000, 2, 2, &starts, &book, T, &mut rng),
            8_000 / 3
        ));
        // Holdings just taken: not before its group's floor (2 s).
        let young = [T - 100, T - 100];
        assert!(within(
            next_poll(10_000, 2, 2, &young, &book, T, &mut rng),
            2_000
        ));
        // Far back, with old holdings: still no later than the position rule.
        let old = [T - 600_000, T - 600_000];
        assert!(within(
            next_poll(10_000, 9, 2, &old, &book, T, &mut rng),
            50_000
        ));
    }

    #[test]
    fn a_whole_queue_that_knows_its_admissions_are_due_stays_within_the_quick_rate() {
        let mut rng = Rng::new(5);
        let mut book = HoldBook::default();
        book.holds.push_back(1_000);
        // Every holding's hold is over: each waiter's admission is due or overdue.
        let starts = [T - 1_000, T - 1_000];
        let (heads, behind) = queue_rates(&starts, &book, &mut rng);
        assert!(
            heads <= HANDOFF_POLLS_PER_SECOND as f64,
            "{heads} polls a second"
        );
        assert!(behind < heads, "{behind} polls a second behind {heads}");
        // Twice a second each: the quick rate is reached, not only approached.
        assert!(
            heads > HANDOFF_POLLS_PER_SECOND as f64 * 0.75,
            "{heads} polls a second"
        );
    }
}
