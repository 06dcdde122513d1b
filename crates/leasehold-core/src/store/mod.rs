//! The documents leasehold keeps on GitHub and changes only by compare-and-swap. A kind of
//! document says where it lives, how it is read (failing closed), how it is written, and which
//! revision it is; the engine reads, plans on and writes any kind through [`Document`]. The
//! lock state (`lock.rs`) is the first kind, a file; the lock's reviewed config (`config.rs`) is
//! read beside it. Claims (`claim.rs`) are the second, kept in git refs (`refs.rs`): a kind says
//! which through [`Document::location`].

pub mod blob;
pub mod carry;
pub mod claim;
mod config;
pub mod lifecycle;
mod lock;
pub mod pool_config;
pub mod refs;

pub use claim::{ClaimMember, ClaimSet};
pub use config::{
    broken_pool, check_config, closed_pool, config_path, config_verdict, is_fresh, lease_block,
    parse_config, ConfigProblem, ConfigVerdict, LockConfig,
};
pub use lock::{ClaimPlace, MAX_COUNTER, MAX_STATE_BYTES, SCHEMA};
pub use refs::{Location, RefRead, RefWrite, PAYLOAD_FILE};

use crate::admission::Admission;
use crate::wire::time::Millis;
use crate::wire::{Change, ChangeAction, ConfigRecord, Outcome, Removal, StateError, Stored};

/// The gate every stored document's text passes first: JSON with an integer `schema` that is
/// exactly the one this version writes (a newer one asks for an upgrade, an older one is
/// refused). Returns the schema and the parsed value; errors name the document (`of`).
pub(crate) fn schema_gate(
    text: &str,
    supported: u64,
    of: Stored,
) -> Result<(u64, serde_json::Value), StateError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| StateError::NotJson {
        of,
        detail: e.to_string(),
    })?;
    let schema = value
        .get("schema")
        .and_then(serde_json::Value::as_u64)
        .ok_or(StateError::NoSchema { of })?;
    if schema > supported {
        return Err(StateError::NewerSchema {
            of,
            found: schema,
            supported,
        });
    }
    if schema != supported {
        return Err(StateError::UnknownSchema { of, found: schema });
    }
    Ok((schema, value))
}

/// A kind of stored document, keyed (a lock name for the lock state).
pub trait Document: Clone + PartialEq + Sized {
    /// The admission rule the document's config selects.
    type Admission: Admission<Self>;

    /// Where the document of `key` lives: a file on the state branch, or git refs.
    fn location(key: &str) -> Location;
    /// The document of a key that has none yet (planned on when the file is absent).
    fn empty(key: &str) -> Self;
    /// Reads the stored text (a file). Fails closed on anything this version cannot vouch for.
    fn parse(text: &str, key: &str) -> Result<Self, StateError>;
    /// Reads the refs as read (a document in refs). Fails closed likewise.
    fn from_refs(_refs: &[RefRead], key: &str) -> Result<Self, StateError> {
        Err(StateError::Invalid {
            of: Stored::LockState,
            schema: 0,
            detail: format!("{key} is not kept in refs"),
        })
    }
    /// The text to write (a file).
    fn render(&self) -> String;
    /// The refs to move (a document in refs): the changed ones, each from the version read.
    fn ref_writes(&self) -> Vec<RefWrite> {
        Vec::new()
    }
    /// The new commits of [`Document::ref_writes`] were created: the document as it is once the
    /// update is applied.
    fn committed(&mut self, _commits: &[(String, String)]) {}
    /// Whether any of it exists (a document in refs; a file's existence is its sha).
    fn exists(&self) -> bool {
        true
    }
    /// One higher in every version than in the one it replaced: a read with a lower revision
    /// than one already seen is stale.
    fn revision(&self) -> u64;
    /// Marks a new version: bumps the revision and records who changed it, when and why.
    fn stamp(&mut self, at: Millis, by: &str, action: ChangeAction, removed: Vec<Removal>);
    /// Who wrote this version, when and why.
    fn last_change(&self) -> Option<&Change>;
    /// How many holdings this version has: besides arrivals, the jobs that may write it next
    /// (their releases and renewals). It sizes the conflict backoff of a write that is no
    /// arrival (`engine/failure.rs`).
    fn holdings(&self) -> usize {
        1
    }
    /// The config record shared through the document (capacity and lease policy, when read).
    fn config_record(&self) -> Option<&ConfigRecord>;
    fn set_config_record(&mut self, record: ConfigRecord);
    /// Records this version in `outcome` as the last one known (for the job summary), unless the
    /// outcome carries one already.
    fn report(&self, outcome: &mut Outcome);
    /// The admission rule of a config.
    fn admission(record: &ConfigRecord) -> Self::Admission;
    /// Whether a config that cannot be read as anything (not JSON, or no file) must close this
    /// document's admission rather than fall back to the default capacity: a pool's state, whose
    /// waiters asked for resources a plain lock has none of.
    fn closes_without_config(&self) -> bool {
        false
    }
}
