//! FIFO, the first admission rule: while there is a free slot, the head of the queue becomes a
//! holder with the next fence.

use super::Admission;
use crate::wire::time::Millis;
use crate::wire::{Holder, LockState};

/// First in, first out, up to `capacity` holders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    pub capacity: u32,
}

impl Admission<LockState> for Fifo {
    /// While there is a free slot, the head of the queue becomes a holder with
    /// the next fence. Several waiters are admitted in one write when several slots are free.
    /// A lock over capacity (capacity was lowered) admits nobody until it drains below it.
    /// Returns the holder ids admitted, in order.
    fn admit(&self, doc: &mut LockState, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
        let mut admitted = Vec::new();
        while doc.holders.len() < self.capacity as usize && !doc.queue.is_empty() {
            #[cfg(feature = "planted-bugs")]
            if crate::planted::active(crate::planted::Bug::AdmitFromBack) {
                doc.queue.rotate_right(1);
            }
            let entry = doc.queue.remove(0);
            #[cfg(feature = "planted-bugs")]
            if crate::planted::active(crate::planted::Bug::SkipFenceIncrement) {
                doc.fence = doc.fence.saturating_sub(1);
            }
            doc.fence += 1;
            admitted.push(entry.holder_id.clone());
            doc.holders.push(Holder {
                holder_id: entry.holder_id,
                nonce: entry.nonce,
                fence: doc.fence,
                run: entry.run,
                acquired_at: now,
                expires_at: now.saturating_add(entry.lease_ms.min(max_ttl_ms)),
                lease_ms: entry.lease_ms.min(max_ttl_ms),
                ceiling_at: now.saturating_add(max_ttl_ms),
                claimed_at: Some(entry.last_seen_at),
                pool: None,
            });
        }
        admitted
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{queue_entry, run_identity};
    use crate::wire::QueueEntry;

    fn rule(capacity: u32) -> Fifo {
        Fifo { capacity }
    }

    fn empty() -> LockState {
        LockState {
            schema: 1,
            lock: "x".into(),
            revision: 0,
            fence: 0,
            config: None,
            holders: Vec::new(),
            queue: Vec::new(),
            last_change: None,
            pool: None,
            reservations: Vec::new(),
            incident: None,
        }
    }

    fn entry(id: &str) -> QueueEntry {
        queue_entry(id, &format!("n-{id}"), run_identity(""))
    }

    #[test]
    fn admits_in_order_up_to_capacity() {
        let mut s = empty();
        s.queue = vec![entry("a"), entry("b"), entry("c")];
        assert_eq!(rule(2).admit(&mut s, 5, 600_000), vec!["a", "b"]);
        assert_eq!(
            s.holders.iter().map(|h| h.fence).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(s.holders[0].expires_at, 60_005);
        assert_eq!(s.holders[0].ceiling_at, 600_005);
        assert_eq!(rule(2).admit(&mut s, 6, 600_000), Vec::<String>::new());
        s.holders.remove(0);
        assert_eq!(rule(2).admit(&mut s, 7, 600_000), vec!["c"]);
        assert_eq!(s.holders[1].fence, 3);
        assert_eq!(
            rule(1).admit(&mut s, 8, 600_000),
            Vec::<String>::new(),
            "over capacity admits nobody"
        );
    }
}
