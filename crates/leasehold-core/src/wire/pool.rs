//! The shapes of a resource pool as kept in the lock state: the reviewed pool config as
//! recorded (`config.pool`), what a waiter asks for (`queue[].pool`), what a holding took
//! (`holders[].pool`), and the pool's own books (`pool`: usage readings, backoffs, affinity
//! marks). Plain data; the rules are in `store/pool_config.rs` and `admission/`.
//!
//! Fractions are whole basis points (1/10,000) so that the state stays exact and comparable:
//! a used fraction of 0.42 is `"usedBp": 4200`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::time::{self, Millis};
use super::words::words;

/// A pool's reviewed config, as read from `locks/<lock>.config.json` and recorded in the state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolConfig {
    /// In config order (the last tie-break of the choice).
    pub resources: Vec<Resource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consumers: Vec<Consumer>,
    /// Holdings across all resources at once; absent: the sum of the caps (at most the maximum
    /// capacity of a lock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    /// Partition atoms that route work without reserving it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_reserving_atoms: Vec<String>,
    /// How long a resource stays warm for the affinity key that used it (0: no affinity).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub affinity_seconds: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Pacing>,
    /// Each holding also carries the atom `runner:<runner name>`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runner_serialization: bool,
    /// The config file broke this rule: nobody new is admitted until it is fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resource {
    pub name: String,
    pub capacity: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A repository's limits. A repository the config does not list may use every resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Consumer {
    pub repository: String,
    /// The resources it may use; absent: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    /// Its holdings at once, across the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
}

/// Spend `target` of each usage window, evenly: a resource may be used up to
/// `min(target × elapsed fraction + burst, target)` of its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pacing {
    pub target_bp: u32,
    pub burst_bp: u32,
}

/// What a waiter of a pool asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolRequest {
    /// Tags or resource names, in order of preference; every other resource comes after them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefer: Vec<String>,
    /// Tags the resource must all carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// The partition atoms the holding reserves (`["*"]`: the global set); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

/// What a holding of a pool took.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Seat {
    pub resource: String,
    /// The atoms it reserves as admitted (with `runner:<name>` under runner serialization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

/// The pool's own books in the state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolBooks {
    /// The latest usage reading of each resource.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub usage: BTreeMap<String, UsageReading>,
    /// Resources backing off after a rate limit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub backoff: BTreeMap<String, Backoff>,
    /// Which resource each affinity key used last, and when.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub affinity: BTreeMap<String, AffinityMark>,
}

impl PoolBooks {
    pub fn is_empty(&self) -> bool {
        self.usage.is_empty() && self.backoff.is_empty() && self.affinity.is_empty()
    }
}

words! {
    /// What the provider said of a resource in its latest reading.
    pub enum UsageStatus {
        /// Usable now.
        Allowed = "allowed",
        /// Slowed down by the provider.
        Throttled = "throttled",
        /// Refused by the provider.
        Rejected = "rejected",
    }
}

/// One usage reading of a resource, with the reading's own time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageReading {
    /// The used fraction of the window, in basis points (0 to 10,000).
    pub used_bp: u32,
    #[serde(with = "time::rfc3339")]
    pub window_start: Millis,
    #[serde(with = "time::rfc3339")]
    pub reset_at: Millis,
    #[serde(with = "time::rfc3339")]
    pub observed_at: Millis,
    pub status: UsageStatus,
}

/// A resource backing off after `hits` rate limits in a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Backoff {
    #[serde(with = "time::rfc3339")]
    pub until: Millis,
    pub hits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AffinityMark {
    pub resource: String,
    #[serde(with = "time::rfc3339")]
    pub at: Millis,
}
