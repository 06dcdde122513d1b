//! The documents leasehold keeps on GitHub and changes only by compare-and-swap. A kind of
//! document says where it lives, how it is read (failing closed), how it is written, and which
//! revision it is; the engine reads, plans on and writes any kind through [`Document`]. The
//! lock state (`lock.rs`) is the first kind; the lock's reviewed config (`config.rs`) is read
//! beside it.

mod config;
mod lock;

pub use config::{config_path, is_fresh, parse_config, LockConfig};
pub use lock::{ClaimPlace, SCHEMA};

use crate::admission::Admission;
use crate::wire::time::Millis;
use crate::wire::{Change, ChangeAction, ConfigRecord, Outcome, Removal, StateError};

/// A kind of stored document, keyed (a lock name for the lock state).
pub trait Document: Clone + PartialEq + Sized {
    /// The admission rule the document's config selects.
    type Admission: Admission<Self>;

    /// Where the document of `key` lives: its path on the state branch.
    fn path(key: &str) -> String;
    /// The document of a key that has none yet (planned on when the file is absent).
    fn empty(key: &str) -> Self;
    /// Reads the stored text. Fails closed on anything this version cannot vouch for.
    fn parse(text: &str, key: &str) -> Result<Self, StateError>;
    /// The text to write.
    fn render(&self) -> String;
    /// One higher in every version than in the one it replaced: a read with a lower revision
    /// than one already seen is stale.
    fn revision(&self) -> u64;
    /// Marks a new version: bumps the revision and records who changed it, when and why.
    fn stamp(&mut self, at: Millis, by: &str, action: ChangeAction, removed: Vec<Removal>);
    /// Who wrote this version, when and why.
    fn last_change(&self) -> Option<&Change>;
    /// The config record shared through the document (capacity and lease policy, when read).
    fn config_record(&self) -> Option<&ConfigRecord>;
    fn set_config_record(&mut self, record: ConfigRecord);
    /// Records this version in `outcome` as the last one known (for the job summary), unless the
    /// outcome carries one already.
    fn report(&self, outcome: &mut Outcome);
    /// The admission rule of a config.
    fn admission(record: &ConfigRecord) -> Self::Admission;
}
