//! The lock's reviewed config: `locks/<lock>.config.json` on the lock repository's default
//! branch, so a change of capacity goes through pull-request review.

use serde::Deserialize;

use crate::policy::limits::{CONFIG_TTL_MS, MAX_CAPACITY};
use crate::wire::time::Millis;
use crate::wire::{ConfigError, ConfigRecord, LeasePolicy, PoolConfig};

use super::pool_config::{declares_pool, parse_pool};

pub fn config_path(lock: &str) -> String {
    format!("locks/{lock}.config.json")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    capacity: serde_json::Value,
    #[serde(default)]
    lease: Option<RawLease>,
}

/// The `lease` block, in seconds; every key optional (defaults: [`LeasePolicy::guarded`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawLease {
    ttl_seconds: Option<u64>,
    renew_seconds: Option<u64>,
    grace_seconds: Option<u64>,
    max_ttl_seconds: Option<u64>,
    skew_seconds: Option<u64>,
    min_remaining_seconds: Option<u64>,
    reaper_renews: Option<bool>,
}

/// A lock's reviewed configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockConfig {
    pub capacity: u32,
    /// The lease policy, when the config sets one (`"lease": {…}`); else holders keep the
    /// unguarded defaults.
    pub lease: Option<LeasePolicy>,
    /// The pool it declares (`resources`), when it is a pool; `capacity` is then the pool's
    /// holdings at once.
    pub pool: Option<PoolConfig>,
}

/// Reads a config file's text. Unknown keys are refused: a key this version does not know may
/// be a safety setting it would silently ignore. A lease policy is checked by its rules.
pub fn parse_config(path: &str, text: &str) -> Result<LockConfig, ConfigError> {
    let err = |rule: String| ConfigError {
        path: path.into(),
        rule,
    };
    let shape = |e: String| {
        err(format!(
            "must be a JSON object {{\"capacity\": N, \"lease\": {{…}}}} with no other keys ({e})"
        ))
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| shape(e.to_string()))?;
    if !value.is_object() {
        return Err(shape("not an object".into()));
    }
    if declares_pool(&value) {
        let obj = value.as_object().expect("an object");
        let (pool, capacity) = parse_pool(text, obj).map_err(|e| err(e.to_string()))?;
        let lease = match obj.get("lease") {
            None => None,
            Some(block) => Some(
                lease_block(block, &LeasePolicy::guarded())
                    .map_err(|r| err(format!("\"lease\": {r}")))?,
            ),
        };
        return Ok(LockConfig {
            capacity,
            lease,
            pool: Some(pool),
        });
    }
    let raw: RawConfig = serde_json::from_value(value).map_err(|e| shape(e.to_string()))?;
    let rule = format!("\"capacity\" must be an integer from 1 to {MAX_CAPACITY}");
    let capacity = match raw.capacity.as_u64() {
        Some(n) if (1..=u64::from(MAX_CAPACITY)).contains(&n) => n as u32,
        _ => return Err(err(format!("{rule} (got {})", raw.capacity))),
    };
    let lease = match raw.lease {
        None => None,
        Some(l) => {
            let d = LeasePolicy::guarded();
            let ms =
                |s: Option<u64>, default: Millis| s.map_or(default, |s| s.saturating_mul(1000));
            let policy = LeasePolicy {
                ttl_ms: ms(l.ttl_seconds, d.ttl_ms),
                renew_ms: ms(l.renew_seconds, d.renew_ms),
                grace_ms: ms(l.grace_seconds, d.grace_ms),
                max_ttl_ms: ms(l.max_ttl_seconds, d.max_ttl_ms),
                skew_ms: ms(l.skew_seconds, d.skew_ms),
                min_remaining_ms: ms(l.min_remaining_seconds, d.min_remaining_ms),
                reaper_renews: l.reaper_renews.unwrap_or(false),
            };
            policy
                .validate()
                .map_err(|r| err(format!("\"lease\": {r}")))?;
            Some(policy)
        }
    };
    Ok(LockConfig {
        capacity,
        lease,
        pool: None,
    })
}

/// What a config that failed its rules records when it meant to declare a pool: a pool that
/// admits nobody new (so a waiter already queued never over-runs a resource), else nothing
/// (a plain lock's broken config keeps the default capacity, as it always has).
pub fn broken_pool(text: &str, error: &ConfigError) -> Option<PoolConfig> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    declares_pool(&value).then(|| PoolConfig {
        invalid: Some(error.rule.clone()),
        ..PoolConfig::default()
    })
}

/// A `lease` block (seconds; every key optional, defaulting to `base`), checked by the lease
/// rules. The error is the rule, for the caller to place.
pub fn lease_block(block: &serde_json::Value, base: &LeasePolicy) -> Result<LeasePolicy, String> {
    let l: RawLease = serde_json::from_value(block.clone()).map_err(|e| e.to_string())?;
    let ms = |s: Option<u64>, default: Millis| s.map_or(default, |s| s.saturating_mul(1000));
    let policy = LeasePolicy {
        ttl_ms: ms(l.ttl_seconds, base.ttl_ms),
        renew_ms: ms(l.renew_seconds, base.renew_ms),
        grace_ms: ms(l.grace_seconds, base.grace_ms),
        max_ttl_ms: ms(l.max_ttl_seconds, base.max_ttl_ms),
        skew_ms: ms(l.skew_seconds, base.skew_ms),
        min_remaining_ms: ms(l.min_remaining_seconds, base.min_remaining_ms),
        reaper_renews: l.reaper_renews.unwrap_or(false),
    };
    policy.validate().map_err(|r| r.to_string())?;
    Ok(policy)
}

/// Is the recorded config young enough to use without reading the file again? A record from
/// the future (a writer whose clock ran ahead) is not trusted.
pub fn is_fresh(record: &ConfigRecord, now: Millis) -> bool {
    record.read_at <= now && now - record.read_at < CONFIG_TTL_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_range() {
        assert_eq!(
            parse_config("p", r#"{"capacity": 2}"#).map(|c| c.capacity),
            Ok(2)
        );
        assert_eq!(
            parse_config("p", r#"{"capacity": 64}"#),
            Ok(LockConfig {
                capacity: 64,
                lease: None,
                pool: None
            })
        );
        for bad in [
            r#"{"capacity": 0}"#,
            r#"{"capacity": 65}"#,
            r#"{"capacity": 1.5}"#,
            r#"{"capacity": "2"}"#,
            r#"{"capacity": -1}"#,
            r#"{}"#,
            r#"{"capacity": 2, "x": 1}"#,
            "[2]",
            "nonsense",
        ] {
            let e = parse_config("locks/x.config.json", bad).expect_err(bad);
            assert_eq!(e.path, "locks/x.config.json");
        }
    }

    #[test]
    fn lease_block() {
        let c = parse_config(
            "p",
            r#"{"capacity": 1, "lease": {"ttlSeconds": 600, "renewSeconds": 180}}"#,
        )
        .unwrap();
        let lease = c.lease.unwrap();
        assert_eq!(
            (lease.ttl_ms, lease.renew_ms, lease.grace_ms),
            (600_000, 180_000, LeasePolicy::guarded().grace_ms)
        );
        let e = parse_config(
            "locks/x.config.json",
            r#"{"capacity": 1, "lease": {"ttlSeconds": 600, "renewSeconds": 400}}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.rule,
            "\"lease\": the renew interval must be at least 10 s and at most half the lease (ttl)"
        );
        assert!(
            parse_config("p", r#"{"capacity": 1, "lease": {"ttl": 600}}"#).is_err(),
            "unknown lease keys are refused"
        );
    }

    #[test]
    fn freshness() {
        let r = ConfigRecord {
            capacity: 2,
            lease: None,
            sha: None,
            read_at: 1_000_000,
            pool: None,
        };
        assert!(is_fresh(&r, 1_000_000));
        assert!(is_fresh(&r, 1_000_000 + CONFIG_TTL_MS - 1));
        assert!(!is_fresh(&r, 1_000_000 + CONFIG_TTL_MS));
        assert!(
            !is_fresh(&r, 999_999),
            "a record from the future is not fresh"
        );
    }

    #[test]
    fn a_broken_pool_config_records_a_pool_that_admits_nobody() {
        let text = r#"{"resources": {"a": {"capacity": 0}}}"#;
        let e = parse_config("locks/x.config.json", text).unwrap_err();
        assert!(
            e.rule.starts_with("pool rule resource-capacity:"),
            "{}",
            e.rule
        );
        let pool = broken_pool(text, &e).expect("a pool was meant");
        assert_eq!(pool.invalid.as_deref(), Some(e.rule.as_str()));
        assert!(pool.resources.is_empty());
        let plain = r#"{"capacity": 0}"#;
        let e = parse_config("p", plain).unwrap_err();
        assert_eq!(
            broken_pool(plain, &e),
            None,
            "a plain lock's broken config keeps its old fallback"
        );
        assert_eq!(broken_pool("nonsense", &e), None);
        let ok = parse_config("p", r#"{"resources": {"a": {"capacity": 2}, "b": {"capacity": 3}}, "lease": {"ttlSeconds": 600}}"#).unwrap();
        assert_eq!(
            (ok.capacity, ok.lease.map(|l| l.ttl_ms)),
            (5, Some(600_000))
        );
    }
}
