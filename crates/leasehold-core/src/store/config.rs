//! The lock's reviewed config: `locks/<lock>.config.json` on the lock repository's default
//! branch, so a change of capacity goes through pull-request review.

use serde::Serialize;

use crate::policy::limits::{CONFIG_TTL_MS, MAX_CAPACITY};
use crate::policy::LeaseRule;
use crate::wire::de::from_value;
use crate::wire::time::Millis;
use crate::wire::{
    pointer_token, ConfigError, ConfigRecord, LeasePolicy, LifecycleConfig, PoolConfig,
};

use super::pool_config::{declares_pool, parse_pool};

pub fn config_path(lock: &str) -> String {
    format!("locks/{lock}.config.json")
}

#[derive(leasehold_derive::Read)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    capacity: serde_json::Value,
    #[serde(default)]
    lease: Option<RawLease>,
    /// Read and checked by `store/lifecycle.rs` from the whole document; named here so the
    /// shape check knows the key.
    #[serde(default, rename = "lifecycle")]
    _lifecycle: Option<serde::de::IgnoredAny>,
}

/// The `lease` block, in seconds; every key optional (defaults: [`LeasePolicy::guarded`]).
#[derive(leasehold_derive::Read)]
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
    /// The lifecycle after release it turns on (`"lifecycle": {…}`), if any.
    pub lifecycle: Option<LifecycleConfig>,
}

/// Which rule a config file broke, by a stable name, and where: what `validate` reports and
/// what acquire's error says (`message` is its `rule`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigProblem {
    /// `json` (not JSON), `shape` (not an object, a key this version does not know, a value of
    /// the wrong type), `capacity`, `lease.<rule>` (a [`LeaseRule`], kebab-case),
    /// `pool.<rule>` or `lifecycle.<rule>` (a `LifecycleRule`).
    pub rule: String,
    /// The rule as acquire's error states it.
    pub message: String,
    /// A JSON pointer to the offending value (`""`: the whole document).
    pub pointer: String,
    /// Where the text stops being JSON, 1-based (the `json` rule only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

/// Reads a config file's text. Unknown keys are refused: a key this version does not know may
/// be a safety setting it would silently ignore. A lease policy is checked by its rules.
pub fn parse_config(path: &str, text: &str) -> Result<LockConfig, ConfigError> {
    check_config(text).map_err(|p| ConfigError {
        path: path.into(),
        rule: p.message,
    })
}

/// [`parse_config`] with the broken rule named and placed: the one set of rules, for acquire
/// and for `validate` alike.
pub fn check_config(text: &str) -> Result<LockConfig, ConfigProblem> {
    let problem = |rule: &str, message: String, pointer: &str| ConfigProblem {
        rule: rule.into(),
        message,
        pointer: pointer.into(),
        line: None,
        column: None,
    };
    let shape = |e: String| {
        format!(
            "must be a JSON object {{\"capacity\": N, \"lease\": {{…}}}} with no other keys ({e})"
        )
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigProblem {
        line: Some(e.line()),
        column: Some(e.column()),
        ..problem("json", shape(e.to_string()), "")
    })?;
    if !value.is_object() {
        return Err(problem("shape", shape("not an object".into()), ""));
    }
    let lifecycle = super::lifecycle::parse_lifecycle(&value).map_err(|p| {
        problem(
            &format!("lifecycle.{}", p.rule),
            p.message.clone(),
            &p.pointer,
        )
    })?;
    if declares_pool(&value) {
        let obj = value.as_object().expect("an object");
        let (pool, capacity) = parse_pool(text, obj)
            .map_err(|e| problem(&format!("pool.{}", e.rule), e.to_string(), &e.pointer))?;
        let raw_lease = match obj.get("lease") {
            None => None,
            Some(block) => Some(
                from_value::<RawLease>(block.clone())
                    .map_err(|e| problem("shape", shape(e.to_string()), "/lease"))?,
            ),
        };
        return Ok(LockConfig {
            capacity,
            lease: checked_lease(&value, raw_lease, &problem)?,
            pool: Some(pool),
            lifecycle,
        });
    }
    let raw: RawConfig = from_value(value.clone())
        .map_err(|e| problem("shape", shape(e.to_string()), &offending_key(&value)))?;
    let rule = format!("\"capacity\" must be an integer from 1 to {MAX_CAPACITY}");
    let capacity = match raw.capacity.as_u64() {
        Some(n) if (1..=u64::from(MAX_CAPACITY)).contains(&n) => n as u32,
        _ => {
            return Err(problem(
                "capacity",
                format!("{rule} (got {})", raw.capacity),
                "/capacity",
            ))
        }
    };
    let lease = checked_lease(&value, raw.lease, &problem)?;
    Ok(LockConfig {
        capacity,
        lease,
        pool: None,
        lifecycle,
    })
}

/// A `lease` block checked by the lease rules, a broken rule named `lease.<rule>` and placed on
/// its key (the same for a plain lock and a pool).
fn checked_lease(
    value: &serde_json::Value,
    raw: Option<RawLease>,
    problem: &dyn Fn(&str, String, &str) -> ConfigProblem,
) -> Result<Option<LeasePolicy>, ConfigProblem> {
    Ok(match raw {
        None => None,
        Some(l) => {
            let policy = l.policy(&LeasePolicy::guarded());
            policy.validate().map_err(|r| {
                let key = r.key();
                let given = value["lease"].get(key).is_some_and(|v| !v.is_null());
                problem(
                    &format!("lease.{}", rule_name(r)),
                    format!("\"lease\": {r}"),
                    &if given {
                        format!("/lease/{key}")
                    } else {
                        "/lease".into()
                    },
                )
            })?;
            Some(policy)
        }
    })
}

/// What a config that failed its rules records when it meant to declare a pool: a pool that
/// admits nobody new (so a waiter already queued never over-runs a resource), else nothing
/// (a plain lock's broken config keeps the default capacity, as it always has).
pub fn broken_pool(text: &str, error: &ConfigError) -> Option<PoolConfig> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    declares_pool(&value).then(|| closed_pool(error))
}

/// The record of a pool whose config cannot be used at all: it admits nobody new.
pub fn closed_pool(error: &ConfigError) -> PoolConfig {
    PoolConfig {
        invalid: Some(error.rule.clone()),
        ..PoolConfig::default()
    }
}

/// What `validate` prints for one file: the config acquire would use, or the rule it broke.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigVerdict {
    pub valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
    /// The lease policy the file sets, in milliseconds (none: the unconfigured defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeasePolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<ConfigProblem>,
}

/// [`check_config`] as data.
pub fn config_verdict(text: &str) -> ConfigVerdict {
    match check_config(text) {
        Ok(c) => ConfigVerdict {
            valid: true,
            capacity: Some(c.capacity),
            lease: c.lease,
            problem: None,
        },
        Err(p) => ConfigVerdict {
            valid: false,
            capacity: None,
            lease: None,
            problem: Some(p),
        },
    }
}

/// A lease rule's stable name: its kebab-case serde name.
fn rule_name(rule: LeaseRule) -> String {
    serde_json::to_value(rule)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The key whose value the config's reader refused (unknown, or of the wrong type), found by
/// reading each key alone beside a valid capacity (and each `lease` key alone); `""` when no
/// single key explains it.
fn offending_key(value: &serde_json::Value) -> String {
    let Some(top) = value.as_object() else {
        return String::new();
    };
    let probe = |k: &str, v: &serde_json::Value| {
        let mut one = serde_json::Map::new();
        one.insert("capacity".into(), 1.into());
        one.insert(k.into(), v.clone());
        from_value::<RawConfig>(one.into()).is_ok()
    };
    if let Some(lease) = top.get("lease").and_then(|l| l.as_object()) {
        for (k, v) in lease {
            let one: serde_json::Map<_, _> = [(k.clone(), v.clone())].into_iter().collect();
            if from_value::<RawLease>(one.into()).is_err() {
                return format!("/lease/{}", pointer_token(k));
            }
        }
    }
    top.iter()
        .find(|(k, v)| k.as_str() != "capacity" && !probe(k, v))
        .map_or_else(String::new, |(k, _)| format!("/{}", pointer_token(k)))
}

impl RawLease {
    /// The policy this block sets: seconds as milliseconds, every key missing taken from `base`.
    fn policy(&self, base: &LeasePolicy) -> LeasePolicy {
        let ms = |s: Option<u64>, default: Millis| s.map_or(default, |s| s.saturating_mul(1000));
        LeasePolicy {
            ttl_ms: ms(self.ttl_seconds, base.ttl_ms),
            renew_ms: ms(self.renew_seconds, base.renew_ms),
            grace_ms: ms(self.grace_seconds, base.grace_ms),
            max_ttl_ms: ms(self.max_ttl_seconds, base.max_ttl_ms),
            skew_ms: ms(self.skew_seconds, base.skew_ms),
            min_remaining_ms: ms(self.min_remaining_seconds, base.min_remaining_ms),
            reaper_renews: self.reaper_renews.unwrap_or(false),
        }
    }
}

/// A `lease` block (seconds; every key optional, defaulting to `base`), checked by the lease
/// rules. The error is the rule, for the caller to place.
pub fn lease_block(block: &serde_json::Value, base: &LeasePolicy) -> Result<LeasePolicy, String> {
    let l: RawLease = from_value(block.clone()).map_err(|e| e.to_string())?;
    let policy = l.policy(base);
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
                pool: None,
                lifecycle: None
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
    fn problems_are_named_and_placed() {
        let problem = |text: &str| check_config(text).expect_err(text);
        let at = |text: &str| {
            let p = problem(text);
            (p.rule, p.pointer)
        };
        let json = problem("{\n  \"capacity\": 2,\n}");
        assert_eq!(
            (json.rule.as_str(), json.line, json.column),
            ("json", Some(3), Some(1))
        );
        assert_eq!(at("[2]"), ("shape".into(), "".into()));
        assert_eq!(
            at(r#"{"capacity": 2, "x": 1}"#),
            ("shape".into(), "/x".into())
        );
        assert_eq!(
            at(r#"{"capacity": 2, "lease": 5}"#),
            ("shape".into(), "/lease".into())
        );
        assert_eq!(
            at(r#"{"capacity": 2, "lease": {"ttlSeconds": 600, "ttl": 1}}"#),
            ("shape".into(), "/lease/ttl".into())
        );
        assert_eq!(
            at(r#"{"capacity": 2, "lease": {"ttlSeconds": "600"}}"#),
            ("shape".into(), "/lease/ttlSeconds".into())
        );
        assert_eq!(
            at(r#"{"capacity": 0}"#),
            ("capacity".into(), "/capacity".into())
        );
        assert_eq!(at(r#"{"lease": null}"#).0, "shape");
        assert_eq!(
            at(r#"{"capacity": 1, "lease": {"ttlSeconds": 600, "renewSeconds": 400}}"#),
            (
                "lease.renew-at-most-half-ttl".into(),
                "/lease/renewSeconds".into()
            )
        );
        // A rule broken by a default the file does not set is placed on the block.
        assert_eq!(
            at(r#"{"capacity": 1, "lease": {"ttlSeconds": 400}}"#),
            ("lease.renew-at-most-half-ttl".into(), "/lease".into())
        );
        // The message is acquire's rule, word for word.
        let text = r#"{"capacity": 65}"#;
        assert_eq!(
            problem(text).message,
            parse_config("p", text).unwrap_err().rule
        );
    }

    #[test]
    fn huge_seconds_are_refused_not_wrapped() {
        // Seconds saturate to milliseconds; the rules' arithmetic saturates too, so no value
        // wraps round into a policy that passes (nor panics a debug build).
        for key in [
            "renewSeconds",
            "skewSeconds",
            "ttlSeconds",
            "minRemainingSeconds",
        ] {
            for n in [u64::MAX, u64::MAX / 1000, 9_223_372_036_854_776] {
                let text = format!(r#"{{"capacity": 1, "lease": {{"{key}": {n}}}}}"#);
                assert!(check_config(&text).is_err(), "{text}");
            }
        }
    }

    #[test]
    fn freshness() {
        let r = ConfigRecord {
            capacity: 2,
            lease: None,
            sha: None,
            read_at: 1_000_000,
            pool: None,
            lifecycle: None,
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

    #[test]
    fn the_config_block_is_checked_by_named_rules() {
        let ok = check_config(r#"{"capacity": 2, "lifecycle": {"cooldownSeconds": 60, "reasons": ["vendor-reset", "vendor-reset"]}}"#).unwrap();
        assert_eq!(
            ok.lifecycle,
            Some(crate::wire::LifecycleConfig {
                cooldown_seconds: 60,
                reasons: vec!["vendor-reset".into()]
            })
        );
        assert_eq!(check_config(r#"{"capacity": 1}"#).unwrap().lifecycle, None);
        for (text, want, at) in [
            (
                r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 86401}}"#,
                "lifecycle.cooldown-seconds",
                "/lifecycle/cooldownSeconds",
            ),
            (
                r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 1.5}}"#,
                "lifecycle.cooldown-seconds",
                "/lifecycle/cooldownSeconds",
            ),
            (
                r#"{"capacity": 1, "lifecycle": {}}"#,
                "lifecycle.cooldown-seconds",
                "/lifecycle/cooldownSeconds",
            ),
            (
                r#"{"capacity": 1, "lifecycle": []}"#,
                "lifecycle.shape",
                "/lifecycle",
            ),
            (
                r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 1, "ttl": 1}}"#,
                "lifecycle.shape",
                "/lifecycle",
            ),
            (
                r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 1, "reasons": ["a b"]}}"#,
                "lifecycle.reasons",
                "/lifecycle/reasons/0",
            ),
            (
                r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 1, "reasons": ["ghp_abcdef"]}}"#,
                "lifecycle.credential-shape",
                "/lifecycle/reasons/0",
            ),
            (
                r#"{"resources": {"a": {"capacity": 1}}, "lifecycle": {"cooldownSeconds": 1}}"#,
                "lifecycle.with-pool",
                "/lifecycle",
            ),
        ] {
            assert_eq!(rule(text), (want.to_string(), at.to_string()), "{text}");
        }
        // The credential itself is never echoed.
        let p = check_config(
            r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 1, "reasons": ["ghp_abcdef"]}}"#,
        )
        .unwrap_err();
        assert!(!p.message.contains("ghp_abcdef"), "{}", p.message);
    }

    fn rule(text: &str) -> (String, String) {
        let p = check_config(text).expect_err(text);
        (p.rule, p.pointer)
    }

    /// A pool's broken rule is placed at the value that breaks it, as a plain lock's is, so
    /// `validate` annotates that line (it used to be the document's start).
    #[test]
    fn pool_problems_are_placed() {
        let at = |text: &str| {
            let (rule, pointer) = rule(text);
            (rule, pointer)
        };
        let r = r#""resources": {"a": {"capacity": 1}}"#;
        let cases = [
            (
                r#"{"resources": {"a": {"capacity": 0}}}"#.to_string(),
                "pool.resource-capacity",
                "/resources/a/capacity",
            ),
            (
                r#"{"resources": {"a/b": {"tags": []}}}"#.into(),
                "pool.word",
                "/resources/a~1b",
            ),
            (
                r#"{"resources": {"a": {}}}"#.into(),
                "pool.resource-capacity",
                "/resources/a",
            ),
            (
                r#"{"resources": {"a": {"capacity": 1, "x": 1}}}"#.into(),
                "pool.resource-key",
                "/resources/a/x",
            ),
            (
                r#"{"resources": {"a": {"capacity": 1, "tags": [1]}}}"#.into(),
                "pool.word",
                "/resources/a/tags",
            ),
            (
                r#"{"resources": []}"#.into(),
                "pool.resources",
                "/resources",
            ),
            (
                r#"{"resources": {"a": {"capacity": 1}}, "capacity": 1}"#.into(),
                "pool.capacity-beside-resources",
                "/capacity",
            ),
            (
                format!(r#"{{{r}, "colour": 1}}"#),
                "pool.unknown-key",
                "/colour",
            ),
            (
                format!(r#"{{{r}, "consumers": {{"o/r": {{"resources": ["b"]}}}}}}"#),
                "pool.undeclared-resource",
                "/consumers/o~1r/resources",
            ),
            (
                format!(r#"{{{r}, "consumers": {{"o/r": {{"maxConcurrent": 0}}}}}}"#),
                "pool.max-concurrent",
                "/consumers/o~1r/maxConcurrent",
            ),
            (
                format!(r#"{{{r}, "consumers": {{"nobody": {{}}}}}}"#),
                "pool.consumers",
                "/consumers/nobody",
            ),
            (
                format!(r#"{{{r}, "maxInFlight": 0}}"#),
                "pool.max-in-flight",
                "/maxInFlight",
            ),
            (
                format!(r#"{{{r}, "pacing": {{"target": 2}}}}"#),
                "pool.pacing",
                "/pacing",
            ),
            (
                format!(r#"{{{r}, "nonReservingAtoms": ["*"]}}"#),
                "pool.non-reserving-atoms",
                "/nonReservingAtoms",
            ),
            (
                format!(r#"{{{r}, "nonReservingAtoms": ["docs", "runner:gpu-1"]}}"#),
                "pool.non-reserving-atoms",
                "/nonReservingAtoms",
            ),
            (
                format!(r#"{{{r}, "runnerSerialization": 1}}"#),
                "pool.runner-serialization",
                "/runnerSerialization",
            ),
        ];
        for (text, want_rule, want_pointer) in cases {
            assert_eq!(at(&text), (want_rule.into(), want_pointer.into()), "{text}");
        }
        // A pool key without resources is the document's problem, not a key's.
        assert_eq!(
            at(r#"{"maxInFlight": 2}"#),
            ("pool.needs-resources".into(), "".into())
        );
    }
}
