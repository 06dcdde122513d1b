//! The lock's reviewed config: `locks/<lock>.config.json` on the lock repository's default
//! branch, so a change of capacity goes through pull-request review.

use serde::Deserialize;

use crate::error::ConfigError;
use crate::state::{ConfigRecord, MAX_CAPACITY};
use crate::time::Millis;

/// How long a config read stays fresh. Acquire re-reads it after this, also while waiting, so a
/// raised capacity unblocks waiters that are already queued.
pub const CONFIG_TTL_MS: Millis = 5 * 60 * 1000;

/// Capacity when there is no config file: a mutex, which can never over-run a resource.
pub const DEFAULT_CAPACITY: u32 = 1;

pub fn config_path(lock: &str) -> String {
    format!("locks/{lock}.config.json")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    capacity: serde_json::Value,
}

/// Reads a config file's text. Unknown keys are refused: a key this version does not know may
/// be a safety setting it would silently ignore.
pub fn parse_config(path: &str, text: &str) -> Result<u32, ConfigError> {
    let err = |rule: String| ConfigError { path: path.into(), rule };
    let shape = |e: String| err(format!("must be a JSON object {{\"capacity\": N}} with no other keys ({e})"));
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| shape(e.to_string()))?;
    if !value.is_object() {
        return Err(shape("not an object".into()));
    }
    let raw: RawConfig = serde_json::from_value(value).map_err(|e| shape(e.to_string()))?;
    let rule = format!("\"capacity\" must be an integer from 1 to {MAX_CAPACITY}");
    match raw.capacity.as_u64() {
        Some(n) if (1..=u64::from(MAX_CAPACITY)).contains(&n) => Ok(n as u32),
        _ => Err(err(format!("{rule} (got {})", raw.capacity))),
    }
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
        assert_eq!(parse_config("p", r#"{"capacity": 2}"#), Ok(2));
        assert_eq!(parse_config("p", r#"{"capacity": 64}"#), Ok(64));
        for bad in [r#"{"capacity": 0}"#, r#"{"capacity": 65}"#, r#"{"capacity": 1.5}"#, r#"{"capacity": "2"}"#,
                    r#"{"capacity": -1}"#, r#"{}"#, r#"{"capacity": 2, "x": 1}"#, "[2]", "nonsense"] {
            let e = parse_config("locks/x.config.json", bad).expect_err(bad);
            assert_eq!(e.path, "locks/x.config.json");
        }
    }

    #[test]
    fn freshness() {
        let r = ConfigRecord { capacity: 2, sha: None, read_at: 1_000_000 };
        assert!(is_fresh(&r, 1_000_000));
        assert!(is_fresh(&r, 1_000_000 + CONFIG_TTL_MS - 1));
        assert!(!is_fresh(&r, 1_000_000 + CONFIG_TTL_MS));
        assert!(!is_fresh(&r, 999_999), "a record from the future is not fresh");
    }
}
