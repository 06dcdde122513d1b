//! The lock state document: one JSON file per lock, `locks/<lock>.json` on the state branch.
//!
//! Operators read this file, so it is plain, pretty-printed JSON with readable times. It is
//! versioned by `schema`; a document this version cannot fully understand is refused, never
//! rewritten (unknown fields are refused too: rewriting would drop them).

use serde::{Deserialize, Serialize};

use crate::wire::error::StateError;
use crate::input::ids::RunIdentity;
use crate::policy::lease::LeasePolicy;
use crate::wire::time::{self, Millis};

/// The schema this version of leasehold reads and writes.
pub const SCHEMA: u64 = 1;
/// The most holders a lock may ever have (the capacity range is 1 to this).
pub const MAX_CAPACITY: u32 = 64;
/// A queue longer than this is refused as damaged. It also keeps the file well under the 1 MB
/// the contents API serves inline (an entry is about 400 bytes).
pub const MAX_QUEUE: usize = 1_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockState {
    pub schema: u64,
    pub lock: String,
    /// Incremented by every write, so no two versions of the file have the same content (and
    /// so the same blob sha): a compare-and-swap on the sha can never be fooled by a state
    /// that went away and came back (ABA).
    pub revision: u64,
    /// The last fence handed out. Only ever increases over the lock's life.
    pub fence: u64,
    /// The capacity last read from the reviewed config, and when; lets acquire skip the config
    /// read while it is fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigRecord>,
    pub holders: Vec<Holder>,
    pub queue: Vec<QueueEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change: Option<Change>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigRecord {
    pub capacity: u32,
    /// The lease policy the config sets, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeasePolicy>,
    /// Blob sha of the config file, or absent when there was no config file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    #[serde(with = "time::rfc3339")]
    pub read_at: Millis,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Holder {
    pub holder_id: String,
    /// Unique per claim: tells this acquire's holding from any other with the same holder id.
    pub nonce: String,
    /// Fencing token: strictly increasing in admission order over the lock's life.
    pub fence: u64,
    pub run: RunIdentity,
    #[serde(with = "time::rfc3339")]
    pub acquired_at: Millis,
    /// After this (plus the lock's grace and skew tolerance, by GitHub's clock) any job may
    /// remove the holding. A renewal moves it, never past `ceilingAt`.
    #[serde(with = "time::rfc3339")]
    pub expires_at: Millis,
    /// The lease a renewal grants.
    pub lease_ms: u64,
    /// The hard ceiling: `acquiredAt` plus the lock's maximum lease.
    #[serde(with = "time::rfc3339")]
    pub ceiling_at: Millis,
    /// When the job that holds it made its claim (enqueued, or took the holding over): its job
    /// was running then. The reaper does not take a job that completed before it for this
    /// holding's job.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::rfc3339_opt"
    )]
    pub claimed_at: Option<Millis>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueEntry {
    pub holder_id: String,
    pub nonce: String,
    pub run: RunIdentity,
    /// The lease this waiter asked for, so whoever admits it can set `expiresAt`.
    pub lease_ms: u64,
    #[serde(with = "time::rfc3339")]
    pub enqueued_at: Millis,
    /// When the job that waits made its claim (enqueued, or took the entry over).
    #[serde(with = "time::rfc3339")]
    pub last_seen_at: Millis,
}

/// Who wrote the current version, and why: for the operator reading the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Change {
    #[serde(with = "time::rfc3339")]
    pub at: Millis,
    pub by: String,
    pub action: String,
    /// Holdings this change removed because their lease had run out, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Removal>,
}

/// A holding removed by somebody other than its holder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Removal {
    pub holder_id: String,
    pub fence: u64,
    #[serde(with = "time::rfc3339")]
    pub expires_at: Millis,
    /// A stable word: `lease-expired`.
    pub reason: String,
}

impl LockState {
    pub fn empty(lock: &str) -> Self {
        LockState {
            schema: SCHEMA,
            lock: lock.into(),
            revision: 0,
            fence: 0,
            config: None,
            holders: Vec::new(),
            queue: Vec::new(),
            last_change: None,
        }
    }

    /// Parses and checks a state document. Fails closed on anything it cannot vouch for.
    pub fn parse(text: &str, lock: &str) -> Result<Self, StateError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| StateError::NotJson {
                detail: e.to_string(),
            })?;
        let schema = value
            .get("schema")
            .and_then(serde_json::Value::as_u64)
            .ok_or(StateError::NoSchema)?;
        if schema > SCHEMA {
            return Err(StateError::NewerSchema {
                found: schema,
                supported: SCHEMA,
            });
        }
        if schema != SCHEMA {
            return Err(StateError::UnknownSchema { found: schema });
        }
        let state: LockState = serde_json::from_value(value).map_err(|e| StateError::Invalid {
            schema,
            detail: e.to_string(),
        })?;
        if state.lock != lock {
            return Err(StateError::WrongLock {
                expected: lock.into(),
                found: state.lock,
            });
        }
        state
            .check()
            .map_err(|detail| StateError::Invalid { schema, detail })?;
        Ok(state)
    }

    /// Structural rules every version of the file must keep.
    fn check(&self) -> Result<(), String> {
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
        Ok(())
    }

    /// Pretty JSON with a final newline: the form written to GitHub.
    pub fn to_document(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("state serializes");
        text.push('\n');
        text
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

    /// FIFO admission: while there is a free slot, the head of the queue becomes a holder with
    /// the next fence. Several waiters are admitted in one write when several slots are free.
    /// A lock over capacity (capacity was lowered) admits nobody until it drains below it.
    /// Returns the holder ids admitted, in order.
    pub fn admit(&mut self, capacity: u32, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
        let mut admitted = Vec::new();
        while self.holders.len() < capacity as usize && !self.queue.is_empty() {
            #[cfg(feature = "planted-bugs")]
            if crate::planted::active(crate::planted::Bug::AdmitFromBack) {
                self.queue.rotate_right(1);
            }
            let entry = self.queue.remove(0);
            #[cfg(feature = "planted-bugs")]
            if crate::planted::active(crate::planted::Bug::SkipFenceIncrement) {
                self.fence = self.fence.saturating_sub(1);
            }
            self.fence += 1;
            admitted.push(entry.holder_id.clone());
            self.holders.push(Holder {
                holder_id: entry.holder_id,
                nonce: entry.nonce,
                fence: self.fence,
                run: entry.run,
                acquired_at: now,
                expires_at: now.saturating_add(entry.lease_ms.min(max_ttl_ms)),
                lease_ms: entry.lease_ms.min(max_ttl_ms),
                ceiling_at: now.saturating_add(max_ttl_ms),
                claimed_at: Some(entry.last_seen_at),
            });
        }
        admitted
    }

    /// Marks a new version: bumps the revision and says who changed it and why.
    pub fn stamp(&mut self, now: Millis, by: &str, action: &str, removed: Vec<Removal>) {
        self.revision += 1;
        self.last_change = Some(Change {
            at: now,
            by: by.into(),
            action: action.into(),
            removed,
        });
    }

    /// Removes every holding whose lease ran out: `judge_now` (GitHub's clock as estimated) is
    /// past `expiresAt + grace + skew`. Returns what was removed.
    pub fn expire(&mut self, judge_now: Millis, grace_ms: Millis, skew_ms: Millis) -> Vec<Removal> {
        let takeable = |h: &Holder| {
            judge_now
                > h.expires_at
                    .saturating_add(grace_ms)
                    .saturating_add(skew_ms)
        };
        let removed: Vec<Removal> = self
            .holders
            .iter()
            .filter(|h| takeable(h))
            .map(|h| Removal {
                holder_id: h.holder_id.clone(),
                fence: h.fence,
                expires_at: h.expires_at,
                reason: "lease-expired".into(),
            })
            .collect();
        self.holders.retain(|h| !takeable(h));
        removed
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
        }
    }

    #[test]
    fn round_trips_and_reads_strictly() {
        let mut s = LockState::empty("deploy");
        s.queue.push(entry("a"));
        s.admit(1, 1_000, 600_000);
        s.stamp(1_000, "a", "acquire", Vec::new());
        let text = s.to_document();
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
            LockState::parse(r#"{"schema": 2, "lock": "x"}"#, "x"),
            Err(StateError::NewerSchema {
                found: 2,
                supported: 1
            })
        );
        assert_eq!(
            LockState::parse(r#"{"schema": 0}"#, "x"),
            Err(StateError::UnknownSchema { found: 0 })
        );
        assert_eq!(
            LockState::parse(r#"{"lock": "x"}"#, "x"),
            Err(StateError::NoSchema)
        );
        assert_eq!(
            LockState::parse(r#"{"schema": "1"}"#, "x"),
            Err(StateError::NoSchema)
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
        s.admit(2, 0, 600_000);
        let mut dup = s.clone();
        dup.holders[1].fence = dup.holders[0].fence;
        assert!(LockState::parse(&dup.to_document(), "x").is_err());
        let mut low = s.clone();
        low.fence = 1;
        assert!(LockState::parse(&low.to_document(), "x").is_err());
        let mut twice = s.clone();
        twice.queue.push(entry("a"));
        assert!(LockState::parse(&twice.to_document(), "x").is_err());
    }

    #[test]
    fn expires_only_past_grace_and_skew() {
        let mut s = LockState::empty("x");
        s.queue = vec![entry("a"), entry("b")];
        s.admit(2, 0, 600_000); // both expire at 60_000
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
        assert_eq!(removed[0].reason, "lease-expired");
        assert_eq!(t.holders.len(), 1);
        // A lease longer than the ceiling is cut to it on admission.
        let mut u = LockState::empty("x");
        u.queue = vec![entry("c")];
        u.admit(1, 0, 30_000);
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
    fn admits_in_order_up_to_capacity() {
        let mut s = LockState::empty("x");
        s.queue = vec![entry("a"), entry("b"), entry("c")];
        assert_eq!(s.admit(2, 5, 600_000), vec!["a", "b"]);
        assert_eq!(
            s.holders.iter().map(|h| h.fence).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(s.holders[0].expires_at, 60_005);
        assert_eq!(s.holders[0].ceiling_at, 600_005);
        assert_eq!(s.admit(2, 6, 600_000), Vec::<String>::new());
        s.holders.remove(0);
        assert_eq!(s.admit(2, 7, 600_000), vec!["c"]);
        assert_eq!(s.holders[1].fence, 3);
        assert_eq!(
            s.admit(1, 8, 600_000),
            Vec::<String>::new(),
            "over capacity admits nobody"
        );
    }
}
