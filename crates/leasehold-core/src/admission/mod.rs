//! Who may hold next. An admission rule turns waiters into holders when the rule allows; the
//! operations that free or join a slot (acquire, release, reap) call it in the same write, and
//! the document kind names the rule its config selects ([`crate::store::Document::admission`]).
//! FIFO with a capacity is the first rule; [`Sole`] is a claim's (one holder, no queue);
//! [`Pool`] a resource pool's (named resources with their own caps, chosen by `choice.rs`,
//! with conflict partitions and per-consumer limits). [`LockRule`] is the lock state's: FIFO
//! for a plain lock, the pool's for a config that declares `resources`.

pub mod choice;
mod fifo;
pub mod lifecycle;
mod pool;
mod sole;

pub use choice::{choose, Ask, Held, HoldReason, PassOver};
pub use fifo::Fifo;
pub use pool::{conflict, partition_of, reseat, Pool, Reseat, Scan};
pub use sole::Sole;

use crate::wire::time::Millis;

/// A rule deciding who, of the waiters in a document, becomes a holder now.
pub trait Admission<D> {
    /// Admits waiters of `doc` while the rule allows, each as a holder with the next fence and a
    /// lease of at most `max_ttl_ms` from `now` (GitHub's clock). Returns the holder ids
    /// admitted, in order. Admits nobody while the document holds as many as the rule allows.
    fn admit(&self, doc: &mut D, now: Millis, max_ttl_ms: Millis) -> Vec<String>;

    /// How many may hold at once (reported in outcomes, and how far a waiter's poll is spaced).
    fn capacity(&self) -> u32;
}

impl LockRule {
    /// The rule's own admission, without the lifecycle around it.
    pub fn admit_alone(
        &self,
        doc: &mut crate::wire::LockState,
        now: Millis,
        max_ttl_ms: Millis,
    ) -> Vec<String> {
        match self {
            LockRule::Fifo(f) => f.admit(doc, now, max_ttl_ms),
            LockRule::Pool(p) => p.admit(doc, now, max_ttl_ms),
        }
    }
}

/// The lock state's rule: FIFO for a plain lock, the pool's when its config declares resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockRule {
    Fifo(Fifo),
    Pool(Pool),
}

impl Admission<crate::wire::LockState> for LockRule {
    fn admit(
        &self,
        doc: &mut crate::wire::LockState,
        now: Millis,
        max_ttl_ms: Millis,
    ) -> Vec<String> {
        lifecycle::admit(self, doc, now, max_ttl_ms)
    }

    fn capacity(&self) -> u32 {
        match self {
            LockRule::Fifo(f) => f.capacity,
            LockRule::Pool(p) => p.capacity,
        }
    }
}
