//! A version of the lock state carried from one step of a job to a later one (acquire's last
//! version, for release), through an environment variable the driver exports (`GITHUB_ENV`).
//!
//! It saves release its read: release plans on the carried version and writes with its sha. The
//! write is a compare-and-swap, so a carried version that is no longer current costs only the
//! conflict and the read it leads to; nothing is ever decided on it that GitHub has not
//! confirmed. A value that does not parse, or names another lock, repository or branch, is
//! ignored (the step reads first, as it would without it).

use serde::Serialize;

use crate::policy::limits::{CARRY_ENV_PREFIX, CARRY_MAX_BYTES};
use crate::wire::{Carry, LockState};

/// Which state a carried version is of, and the version itself. Read straight from the
/// environment's text by serde's own derive (not `Read`, which reads a `Value`, where a key
/// given twice is the last one): a value with a key twice is not carried.
#[derive(Serialize, serde::Deserialize)]
struct Carried {
    repository: String,
    branch: String,
    lock: String,
    /// The file's blob sha, as the contents API names this version.
    sha: String,
    content: String,
}

/// The environment variable of `lock`: lock names are `[A-Za-z0-9._-]`, and `.` and `-` are
/// not portable in variable names. Two locks whose names differ only there share a variable;
/// the value names its lock, so a step never takes the other's.
pub fn carry_name(lock: &str) -> String {
    let tail: String = lock
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{CARRY_ENV_PREFIX}{tail}")
}

/// The carry of the version `content` (blob `sha`) of `lock`, unless it is too large to travel
/// in the environment of every later step.
pub fn encode(
    repository: &str,
    branch: &str,
    lock: &str,
    sha: &str,
    content: String,
) -> Option<Carry> {
    if content.len() > CARRY_MAX_BYTES {
        return None;
    }
    let value = serde_json::to_string(&Carried {
        repository: repository.into(),
        branch: branch.into(),
        lock: lock.into(),
        sha: sha.into(),
        content,
    })
    .ok()?;
    Some(Carry {
        name: carry_name(lock),
        value,
    })
}

/// The carried version of this lock among `values` (the driver hands in every carried
/// variable of the job, a JSON array of their values), as `(sha, document)`.
pub fn decode(
    values: &str,
    repository: &str,
    branch: &str,
    lock: &str,
) -> Option<(String, LockState)> {
    let values: Vec<String> = serde_json::from_str(values).ok()?;
    values.iter().find_map(|v| {
        let c: Carried = serde_json::from_str(v).ok()?;
        if c.repository != repository || c.branch != branch || c.lock != lock || c.sha.is_empty() {
            return None;
        }
        let doc = LockState::parse(&c.content, lock).ok()?;
        timeless(&doc).then_some((c.sha, doc))
    })
}

/// Whether acquire's last version is worth carrying to release: only when this holding is the
/// lock's one holding and nobody waits. Any other holder's release and any arrival changes the
/// version, so on a contended lock a carried one is almost always out of date by release, and
/// writing on it first costs a conflict, a read and the second a write waits after another
/// (three requests and over a second) where reading first costs two requests and no wait.
pub fn uncontended(doc: &LockState) -> bool {
    doc.holders.len() <= 1 && doc.queue.is_empty()
}

/// Whether a release may plan on this carried version without reading first. A release that
/// sends no read has no `date` answer yet to estimate GitHub's clock by (engine/clock.rs), so it
/// plans on the runner's clock, which may be off by minutes. That is harmless for a plain lock
/// (a holding it hands on is stamped on the same clock it is later judged by, and nothing is
/// freed by time there), but a lifecycle state frees cooldowns by GitHub's clock and stamps
/// their ends by it, and a pool paces and backs off by it: a cooldown swept or ended early by a
/// fast or slow runner is a resource handed on before it is safe (the simulation's invariant 25
/// found exactly that). Those read first, as before the carry, and so learn GitHub's time.
pub fn timeless(doc: &LockState) -> bool {
    doc.schema < crate::store::lifecycle::LIFECYCLE_SCHEMA && doc.pool.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Document;

    #[test]
    fn a_carry_comes_back_only_for_its_own_lock() {
        let mut doc = LockState::empty("ci.build");
        doc.revision = 4;
        doc.fence = 2;
        let c = encode(
            "octo/locks",
            "leasehold-state",
            "ci.build",
            "abc",
            doc.render(),
        )
        .unwrap();
        assert_eq!(c.name, "LEASEHOLD_CARRY_ci_build");
        let all = serde_json::to_string(&vec![c.value.clone()]).unwrap();
        let (sha, back) = decode(&all, "octo/locks", "leasehold-state", "ci.build").unwrap();
        assert_eq!((sha.as_str(), back), ("abc", doc));
        // Another lock sharing the variable name, another repository or branch: not this one.
        assert!(decode(&all, "octo/locks", "leasehold-state", "ci-build").is_none());
        assert!(decode(&all, "octo/other", "leasehold-state", "ci.build").is_none());
        assert!(decode(&all, "octo/locks", "main", "ci.build").is_none());
        // Anything that is not a carry is ignored, never an error.
        assert!(decode("not json", "octo/locks", "leasehold-state", "ci.build").is_none());
        assert!(decode("[\"{}\"]", "octo/locks", "leasehold-state", "ci.build").is_none());
        // A value naming a field twice is not a carry (which lock it names is a guess).
        let twice = c.value.replacen("{", "{\"lock\":\"other\",", 1);
        let all = serde_json::to_string(&vec![twice]).unwrap();
        assert!(decode(&all, "octo/locks", "leasehold-state", "ci.build").is_none());
    }

    #[test]
    fn a_lifecycle_or_pool_state_is_read_not_planned_on() {
        let mut doc = LockState::empty("ci.build");
        doc.revision = 4;
        let plain = encode("o/r", "b", "ci.build", "abc", doc.render()).unwrap();
        let all = |c: &Carry| serde_json::to_string(&vec![c.value.clone()]).unwrap();
        assert!(decode(&all(&plain), "o/r", "b", "ci.build").is_some());
        doc.schema = crate::store::lifecycle::LIFECYCLE_SCHEMA;
        let lifecycle = encode("o/r", "b", "ci.build", "abc", doc.render()).unwrap();
        assert!(
            decode(&all(&lifecycle), "o/r", "b", "ci.build").is_none(),
            "a lifecycle state frees cooldowns by GitHub's clock: release reads it first"
        );
    }

    #[test]
    fn a_large_state_is_not_carried() {
        let mut doc = LockState::empty("big");
        doc.revision = 1;
        let one = encode("o/r", "b", "big", "s", doc.render()).unwrap();
        assert!(one.value.len() < CARRY_MAX_BYTES);
        let entry = serde_json::json!({
            "holderId": "octo/app:1:build", "nonce": "00000000000000aa",
            "run": {"repository": "octo/app", "runId": 1, "runAttempt": 1, "job": "build", "runnerName": "r", "url": ""},
            "leaseMs": 60000, "enqueuedAt": "2027-01-15T08:00:00.000Z", "lastSeenAt": "2027-01-15T08:00:00.000Z"
        });
        let mut v: serde_json::Value = serde_json::from_str(&doc.render()).unwrap();
        v["queue"] = serde_json::Value::Array(
            (0..200)
                .map(|i| {
                    let mut e = entry.clone();
                    e["holderId"] = format!("octo/app:{i}:build").into();
                    e
                })
                .collect(),
        );
        let big = LockState::parse(&v.to_string(), "big").unwrap();
        assert!(big.render().len() > CARRY_MAX_BYTES);
        assert!(encode("o/r", "b", "big", "s", big.render()).is_none());
    }
}
