//! The lock state, the first kind of stored document: one JSON file per lock,
//! `locks/<lock>.json` on the state branch (its shape is `wire::LockState`).
//!
//! It is versioned by `schema`; a document this version cannot fully understand is refused,
//! never rewritten (unknown fields are refused too: rewriting would drop them).
//!
//! A pool's state is schema 1 too: it adds optional fields (`config.pool`, a holding's `pool`
//! seat, a waiter's `pool` request, the pool's books `pool`), and a version of leasehold that
//! knows no pools refuses every one of them (`state-invalid`, unknown field), never rewriting
//! it, exactly as it refuses any field it does not know. Every write of a pool's acquire
//! records its config, and a record is only ever replaced by a newer one, so a pool's state
//! always carries `config.pool` until its config stops declaring a pool.
//!
//! Schema 2 is the lifecycle's (`store/lifecycle.rs`): reservations and the incident. A state
//! is written as 1 until a config with `lifecycle` meets it empty, and as 2 from then on; it is
//! never written back as 1. A version of leasehold that knows only schema 1 refuses a schema-2
//! state (`state-newer-schema`), as this one refuses schema 3.

use super::lifecycle::{self, LIFECYCLE_SCHEMA};
use super::{Document, Location};
use crate::admission::{Admission, Fifo, LockRule, Pool};
use crate::policy::limits::{MAX_CAPACITY, MAX_QUEUE};
use crate::wire::time::Millis;
use crate::wire::{
    Change, ChangeAction, ConfigRecord, Holder, LockState, Outcome, Removal, RemovalReason,
    StateError, Stored,
};

/// The schema this version of leasehold reads and writes.
pub const SCHEMA: u64 = 1;

/// What this document's errors call it.
const OF: Stored = Stored::LockState;

/// The largest state document leasehold reads or writes, in bytes: GitHub's contents API serves
/// a file's content as JSON (what the drivers read) only up to 1 MB, so a larger state could be
/// written but never read back (docs/github-semantics.md). An enqueue that would pass it is
/// refused (`queue-full`).
pub const MAX_STATE_BYTES: usize = 1_000_000;

/// The largest revision and fence counter a state may hold: JavaScript's largest exact integer
/// (2^53 - 1), so that the drivers read every fence exactly, and so that the next fence and the
/// next revision can never overflow (a hand-edited counter of 2^64 - 1 would otherwise wrap the
/// next fence to 0: found by the `engine` fuzz target, docs/fuzzing.md).
pub const MAX_COUNTER: u64 = (1 << 53) - 1;

impl Document for LockState {
    type Admission = LockRule;

    fn location(lock: &str) -> Location {
        Location::File {
            path: format!("locks/{lock}.json"),
        }
    }

    fn empty(lock: &str) -> Self {
        LockState {
            schema: SCHEMA,
            lock: lock.into(),
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

    /// Parses and checks a state document. Fails closed on anything it cannot vouch for.
    fn parse(text: &str, lock: &str) -> Result<Self, StateError> {
        if text.len() > MAX_STATE_BYTES {
            return Err(StateError::Invalid {
                of: OF,
                schema: SCHEMA,
                detail: format!(
                    "the file is {} bytes, more than the {MAX_STATE_BYTES} a state may have (GitHub's contents API serves larger files only raw)",
                    text.len()
                ),
            });
        }
        let (schema, value) = lifecycle_gate(text)?;
        let state: LockState =
            crate::wire::de::from_value(value).map_err(|e| StateError::Invalid {
                of: OF,
                schema,
                detail: e.to_string(),
            })?;
        if state.lock != lock {
            return Err(StateError::WrongLock {
                of: OF,
                expected: lock.into(),
                found: state.lock,
            });
        }
        state.check().map_err(|detail| StateError::Invalid {
            of: OF,
            schema,
            detail,
        })?;
        Ok(state)
    }

    /// Pretty JSON with a final newline: the form written to GitHub.
    fn render(&self) -> String {
        let mut text = crate::wire::pretty_text(self).expect("state serializes");
        text.push('\n');
        text
    }

    fn revision(&self) -> u64 {
        self.revision
    }

    /// Marks a new version: bumps the revision and says who changed it and why.
    fn stamp(&mut self, now: Millis, by: &str, action: ChangeAction, removed: Vec<Removal>) {
        self.revision += 1;
        self.last_change = Some(Change {
            at: now,
            by: by.into(),
            action,
            removed,
        });
    }

    fn last_change(&self) -> Option<&Change> {
        self.last_change.as_ref()
    }

    fn holdings(&self) -> usize {
        self.holders.len()
    }

    fn config_record(&self) -> Option<&ConfigRecord> {
        self.config.as_ref()
    }

    fn set_config_record(&mut self, mut record: ConfigRecord) {
        // A config without lifecycle never drops what the lifecycle keeps: the record keeps
        // the lifecycle it had while reservations or an incident stand.
        if record.lifecycle.is_none() && lifecycle::keeps_anything(self) {
            record.lifecycle = self.config.as_ref().and_then(|c| c.lifecycle.clone());
        }
        // A schema-1 state records no lifecycle (the planner migrates it first when it may).
        if self.schema < LIFECYCLE_SCHEMA {
            record.lifecycle = None;
        }
        self.config = Some(record);
    }

    fn report(&self, outcome: &mut Outcome) {
        if outcome.state.is_none() {
            outcome.state = Some(self.clone());
        }
    }

    fn closes_without_config(&self) -> bool {
        self.is_pool()
    }

    fn admission(record: &ConfigRecord) -> LockRule {
        match &record.pool {
            None => LockRule::Fifo(Fifo {
                capacity: record.capacity,
            }),
            Some(pool) => LockRule::Pool(Pool {
                config: pool.clone(),
                capacity: record.capacity,
            }),
        }
    }
}

/// The lock state's API for callers outside the crate (the simulator, tests, tools): the same
/// reading, writing and FIFO admission the engine reaches through [`Document`] and [`Fifo`].
impl Holder {
    /// Whether any job may remove this holding at `judge_now` (GitHub's clock, its lower bound):
    /// its lease ran out, past the lock's grace and skew tolerance.
    pub fn takeable(&self, judge_now: Millis, grace_ms: Millis, skew_ms: Millis) -> bool {
        judge_now
            > self
                .expires_at
                .saturating_add(grace_ms)
                .saturating_add(skew_ms)
    }
}

impl LockState {
    pub fn empty(lock: &str) -> Self {
        <Self as Document>::empty(lock)
    }

    pub fn parse(text: &str, lock: &str) -> Result<Self, StateError> {
        <Self as Document>::parse(text, lock)
    }

    /// Pretty JSON with a final newline: the form written to GitHub.
    pub fn to_document(&self) -> String {
        self.render()
    }

    /// FIFO admission up to `capacity` (see [`Fifo`]).
    pub fn admit(&mut self, capacity: u32, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
        Fifo { capacity }.admit(self, now, max_ttl_ms)
    }
}

impl LockState {
    /// Whether any pool field is present.
    pub fn is_pool(&self) -> bool {
        self.pool.is_some()
            || self.config.as_ref().is_some_and(|c| c.pool.is_some())
            || self.holders.iter().any(|h| h.pool.is_some())
            || self.queue.iter().any(|q| q.pool.is_some())
    }

    /// Structural rules every version of the file must keep.
    fn check(&self) -> Result<(), String> {
        for (name, value) in [("revision", self.revision), ("fence", self.fence)] {
            if value > MAX_COUNTER {
                return Err(format!(
                    "\"{name}\" {value} is above {MAX_COUNTER}, the largest counter leasehold keeps"
                ));
            }
        }
        if self.holders.len() > MAX_CAPACITY as usize {
            return Err(format!(
                "{} holders, more than the maximum capacity {MAX_CAPACITY}",
                self.holders.len()
            ));
        }
        if self.queue.len() > MAX_QUEUE {
            return Err(format!(
                "{} queue entries, more than {MAX_QUEUE}",
                self.queue.len()
            ));
        }
        let mut ids: Vec<&str> = self.holders.iter().map(|h| h.holder_id.as_str()).collect();
        ids.extend(self.queue.iter().map(|q| q.holder_id.as_str()));
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("holder id {:?} appears twice", w[0]));
        }
        let mut fences: Vec<u64> = self.holders.iter().map(|h| h.fence).collect();
        fences.sort_unstable();
        if fences.windows(2).any(|w| w[0] == w[1]) {
            return Err("two holders share a fence".into());
        }
        if fences.last().is_some_and(|&f| f > self.fence) {
            return Err(format!(
                "a holder's fence is above the lock's fence counter {}",
                self.fence
            ));
        }
        if let Some(c) = &self.config {
            if !(1..=MAX_CAPACITY).contains(&c.capacity) {
                return Err(format!(
                    "recorded capacity {} is outside 1..={MAX_CAPACITY}",
                    c.capacity
                ));
            }
        }
        lifecycle::check_state(self, MAX_CAPACITY)
    }

    pub fn holder(&self, holder_id: &str) -> Option<&Holder> {
        self.holders.iter().find(|h| h.holder_id == holder_id)
    }

    pub fn queue_index(&self, holder_id: &str) -> Option<usize> {
        self.queue.iter().position(|q| q.holder_id == holder_id)
    }

    /// Is this exact claim (holder id and nonce) holding or waiting?
    pub fn find_claim(&self, holder_id: &str, nonce: &str) -> Option<ClaimPlace> {
        if self
            .holders
            .iter()
            .any(|h| h.holder_id == holder_id && h.nonce == nonce)
        {
            return Some(ClaimPlace::Holding);
        }
        self.queue
            .iter()
            .position(|q| q.holder_id == holder_id && q.nonce == nonce)
            .map(ClaimPlace::Queued)
    }

    /// Removes every holding whose lease ran out: `judge_now` (GitHub's clock as estimated) is
    /// past `expiresAt + grace + skew`. Returns what was removed.
    pub fn expire(&mut self, judge_now: Millis, grace_ms: Millis, skew_ms: Millis) -> Vec<Removal> {
        let takeable = |h: &Holder| h.takeable(judge_now, grace_ms, skew_ms);
        let removed: Vec<Removal> = self
            .holders
            .iter()
            .filter(|h| takeable(h))
            .map(|h| Removal {
                holder_id: h.holder_id.clone(),
                fence: h.fence,
                expires_at: h.expires_at,
                reason: RemovalReason::LeaseExpired,
            })
            .collect();
        self.holders.retain(|h| !takeable(h));
        removed
    }
}

/// The schema gate of the lock state: schema 2 (the lifecycle's) or the gate every document
/// passes for schema 1 (a newer one asks for an upgrade, naming 2 as the newest known).
fn lifecycle_gate(text: &str) -> Result<(u64, serde_json::Value), StateError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| StateError::NotJson {
        of: OF,
        detail: e.to_string(),
    })?;
    match value.get("schema").and_then(serde_json::Value::as_u64) {
        Some(LIFECYCLE_SCHEMA) => Ok((LIFECYCLE_SCHEMA, value)),
        Some(n) if n > LIFECYCLE_SCHEMA => Err(StateError::NewerSchema {
            of: OF,
            found: n,
            supported: LIFECYCLE_SCHEMA,
        }),
        _ => super::schema_gate(text, SCHEMA, OF),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimPlace {
    Holding,
    /// 0-based index in the queue.
    Queued(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{QueueEntry, RunIdentity};

    fn run(n: u64) -> RunIdentity {
        RunIdentity {
            repository: "o/r".into(),
            run_id: n,
            run_attempt: 1,
            job: "j".into(),
            runner_name: String::new(),
            url: String::new(),
            job_id: None,
        }
    }

    fn entry(id: &str) -> QueueEntry {
        QueueEntry {
            holder_id: id.into(),
            nonce: format!("n-{id}"),
            run: run(1),
            lease_ms: 60_000,
            enqueued_at: 0,
            last_seen_at: 0,
            pool: None,
        }
    }

    #[test]
    fn round_trips_and_reads_strictly() {
        let mut s = LockState::empty("deploy");
        s.queue.push(entry("a"));
        Fifo { capacity: 1 }.admit(&mut s, 1_000, 600_000);
        s.stamp(1_000, "a", ChangeAction::Acquire, Vec::new());
        let text = s.render();
        assert!(
            text.contains("\"acquiredAt\": \"1970-01-01T00:00:01.000Z\""),
            "{text}"
        );
        assert_eq!(LockState::parse(&text, "deploy").unwrap(), s);
        assert!(matches!(
            LockState::parse(&text, "other"),
            Err(StateError::WrongLock { .. })
        ));
        let extra = text.replacen("\"schema\": 1,", "\"schema\": 1, \"surprise\": true,", 1);
        assert!(matches!(
            LockState::parse(&extra, "deploy"),
            Err(StateError::Invalid { .. })
        ));
    }

    #[test]
    fn schema_fails_closed() {
        assert_eq!(
            LockState::parse(r#"{"schema": 3, "lock": "x"}"#, "x"),
            Err(StateError::NewerSchema {
                of: OF,
                found: 3,
                supported: 2
            })
        );
        assert_eq!(
            LockState::parse(r#"{"schema": 0}"#, "x"),
            Err(StateError::UnknownSchema { of: OF, found: 0 })
        );
        assert_eq!(
            LockState::parse(r#"{"lock": "x"}"#, "x"),
            Err(StateError::NoSchema { of: OF })
        );
        assert_eq!(
            LockState::parse(r#"{"schema": "1"}"#, "x"),
            Err(StateError::NoSchema { of: OF })
        );
        assert!(matches!(
            LockState::parse("{", "x"),
            Err(StateError::NotJson { .. })
        ));
    }

    #[test]
    fn refuses_damaged_state() {
        let mut s = LockState::empty("x");
        s.queue = vec![entry("a"), entry("b")];
        Fifo { capacity: 2 }.admit(&mut s, 0, 600_000);
        let mut dup = s.clone();
        dup.holders[1].fence = dup.holders[0].fence;
        assert!(LockState::parse(&dup.render(), "x").is_err());
        let mut low = s.clone();
        low.fence = 1;
        assert!(LockState::parse(&low.render(), "x").is_err());
        let mut twice = s.clone();
        twice.queue.push(entry("a"));
        assert!(LockState::parse(&twice.render(), "x").is_err());
    }

    #[test]
    fn counters_stay_exact_and_never_wrap() {
        // Regression case of the engine fuzz target: a fence counter of 2^64 - 1 overflowed the
        // next admission (wrapping to fence 0 in a release build).
        let mut s = LockState::empty("x");
        s.fence = u64::MAX;
        let e = LockState::parse(&s.render(), "x").unwrap_err();
        assert!(e.to_string().contains("\"fence\""), "{e}");
        s.fence = MAX_COUNTER;
        assert!(LockState::parse(&s.render(), "x").is_ok());
        s.revision = MAX_COUNTER + 1;
        let e = LockState::parse(&s.render(), "x").unwrap_err();
        assert!(e.to_string().contains("\"revision\""), "{e}");
    }

    #[test]
    fn expires_only_past_grace_and_skew() {
        let mut s = LockState::empty("x");
        s.queue = vec![entry("a"), entry("b")];
        Fifo { capacity: 2 }.admit(&mut s, 0, 600_000); // both expire at 60_000
        s.holders[1].expires_at = 90_000;
        assert!(
            s.clone()
                .expire(60_000 + 5_000 + 1_000, 5_000, 1_000)
                .is_empty(),
            "not strictly past"
        );
        let mut t = s.clone();
        let removed = t.expire(66_001, 5_000, 1_000);
        assert_eq!(
            removed
                .iter()
                .map(|r| r.holder_id.as_str())
                .collect::<Vec<_>>(),
            vec!["a"]
        );
        assert_eq!(removed[0].reason, RemovalReason::LeaseExpired);
        assert_eq!(t.holders.len(), 1);
        // A lease longer than the ceiling is cut to it on admission.
        let mut u = LockState::empty("x");
        u.queue = vec![entry("c")];
        Fifo { capacity: 1 }.admit(&mut u, 0, 30_000);
        assert_eq!(
            (
                u.holders[0].expires_at,
                u.holders[0].lease_ms,
                u.holders[0].ceiling_at
            ),
            (30_000, 30_000, 30_000)
        );
    }

    #[test]
    fn a_pool_state_round_trips_and_a_plain_one_carries_no_pool_field() {
        use crate::admission::Pool;
        use crate::wire::{PoolConfig, PoolRequest, Resource};
        let pool = PoolConfig {
            resources: vec![Resource {
                name: "acct-a1".into(),
                capacity: 2,
                tags: vec!["opus".into()],
            }],
            affinity_seconds: 300,
            ..PoolConfig::default()
        };
        let mut s = LockState::empty("x");
        let mut e = entry("a");
        e.pool = Some(PoolRequest {
            partition: Some(vec!["api".into()]),
            affinity: Some("k".into()),
            ..PoolRequest::default()
        });
        s.queue = vec![e, entry("b")];
        Pool {
            config: pool.clone(),
            capacity: 2,
        }
        .admit(&mut s, 1_000, 600_000);
        s.set_config_record(ConfigRecord {
            capacity: 2,
            lease: None,
            sha: None,
            read_at: 0,
            pool: Some(pool),
            lifecycle: None,
        });
        s.stamp(1_000, "a", ChangeAction::Acquire, Vec::new());
        let text = s.render();
        assert!(text.contains("\"resource\": \"acct-a1\""), "{text}");
        assert!(text.contains("\"affinity\": {"), "the books: {text}");
        assert!(s.is_pool());
        assert_eq!(LockState::parse(&text, "x").unwrap(), s);
        let mut plain = LockState::empty("x");
        plain.queue = vec![entry("a")];
        Fifo { capacity: 1 }.admit(&mut plain, 0, 600_000);
        assert!(!plain.render().contains("\"pool\""));
        assert!(!plain.is_pool());
    }
}
