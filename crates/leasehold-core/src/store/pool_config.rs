//! A pool's reviewed config: `locks/<lock>.config.json` with `resources` instead of a bare
//! `capacity`. Every rule is checked when the file is read, and a broken one is named by its
//! word ([`PoolRule`]) in the error: a bad config fails acquire before any write, and the
//! record of it admits nobody new (`PoolConfig::invalid`).
//!
//! Its JSON Schema is `schema/pool-config.schema.json`; this file is the authority.

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::policy::limits::{
    GLOBAL_PARTITION, MAX_AFFINITY_SECONDS, MAX_CAPACITY, MAX_POOL_LIST, MAX_POOL_WORD,
    MAX_RESOURCES,
};
use crate::wire::{credential_shape, pointer_token, Consumer, Pacing, PoolConfig, Resource};

crate::wire::words! {
    /// The rules of a pool config, each named in the error that reports it.
    pub enum PoolRule {
        /// A top-level key this version does not know.
        UnknownKey = "unknown-key",
        /// A pool key (`consumers`, `maxInFlight`, …) without `resources`.
        NeedsResources = "needs-resources",
        /// `capacity` beside `resources`: the caps are the resources' own.
        CapacityBesideResources = "capacity-beside-resources",
        /// `resources` is not an object of 1 to [`MAX_RESOURCES`] entries.
        Resources = "resources",
        /// A resource's object has a key other than `capacity` and `tags`.
        ResourceKey = "resource-key",
        /// A resource's `capacity` is not an integer from 1 to the maximum capacity.
        ResourceCapacity = "resource-capacity",
        /// A name, tag or atom outside `[A-Za-z0-9._:-]{1,64}`, or a list too long.
        Word = "word",
        /// A name, tag, atom or repository with a credential's shape.
        CredentialShape = "credential-shape",
        /// `consumers` is not an object of `owner/name` keys.
        Consumers = "consumers",
        /// A consumer's object has a key other than `resources` and `maxConcurrent`.
        ConsumerKey = "consumer-key",
        /// A consumer names a resource the config does not declare.
        UndeclaredResource = "undeclared-resource",
        /// A consumer's `maxConcurrent` is not an integer from 1 to the maximum capacity.
        MaxConcurrent = "max-concurrent",
        /// `maxInFlight` is not an integer from 1 to the maximum capacity.
        MaxInFlight = "max-in-flight",
        /// `nonReservingAtoms` is not a list of atoms, or names the global set `*`.
        NonReservingAtoms = "non-reserving-atoms",
        /// `affinitySeconds` is not an integer from 0 to a day.
        AffinitySeconds = "affinity-seconds",
        /// `pacing` is not `{target: 0.0001 ≤ t ≤ 1, burst: 0 ≤ b ≤ 1}`.
        Pacing = "pacing",
        /// `runnerSerialization` is not a boolean.
        RunnerSerialization = "runner-serialization",
    }
}

/// The top-level keys of a pool config (with `lease`, read as a plain lock's).
pub const POOL_KEYS: &[&str] = &[
    "resources",
    "consumers",
    "maxInFlight",
    "nonReservingAtoms",
    "affinitySeconds",
    "pacing",
    "runnerSerialization",
];

/// A rule broken, with what broke it (never a credential-shaped value) and where: a JSON
/// pointer to the offending value (`""`: the whole document), which `validate` turns into the
/// line and column it annotates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolRuleError {
    pub rule: PoolRule,
    pub detail: String,
    pub pointer: String,
}

impl PoolRuleError {
    /// The same error, placed at the value `path` (its keys, outermost first) names.
    fn at(mut self, path: &[&str]) -> Self {
        self.pointer = path
            .iter()
            .map(|k| format!("/{}", pointer_token(k)))
            .collect();
        self
    }
}

impl std::fmt::Display for PoolRuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pool rule {}: {}", self.rule, self.detail)
    }
}

fn broke(rule: PoolRule, detail: impl Into<String>) -> PoolRuleError {
    PoolRuleError {
        rule,
        detail: detail.into(),
        pointer: String::new(),
    }
}

/// Whether a config object declares a pool (or means to: any pool key at all).
pub fn declares_pool(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| POOL_KEYS.iter().any(|k| o.contains_key(*k)))
}

/// A name, tag or atom: `[A-Za-z0-9._:-]{1,64}`, not credential-shaped. `what` says where.
pub fn check_word(what: &str, word: &str) -> Result<(), PoolRuleError> {
    if let Some(shape) = credential_shape(word) {
        return Err(broke(
            PoolRule::CredentialShape,
            format!("{what} has the shape of {shape}"),
        ));
    }
    let ok = !word.is_empty()
        && word.len() <= MAX_POOL_WORD
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if !ok {
        return Err(broke(
            PoolRule::Word,
            format!("{what} must match [A-Za-z0-9._:-]{{1,{MAX_POOL_WORD}}} (got {word:?})"),
        ));
    }
    Ok(())
}

fn words_list(what: &str, value: &Value, rule: PoolRule) -> Result<Vec<String>, PoolRuleError> {
    let Some(items) = value.as_array() else {
        return Err(broke(rule, format!("{what} must be a list of strings")));
    };
    if items.len() > MAX_POOL_LIST {
        return Err(broke(
            PoolRule::Word,
            format!(
                "{what} has {} entries, more than {MAX_POOL_LIST}",
                items.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(word) = item.as_str() else {
            return Err(broke(rule, format!("{what}[{i}] must be a string")));
        };
        check_word(&format!("{what}[{i}]"), word)?;
        if !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    Ok(out)
}

fn count(value: &Value, lo: u64, hi: u64) -> Option<u64> {
    value.as_u64().filter(|n| (lo..=hi).contains(n))
}

/// The keys of `resources` in the order the file gives them (serde_json's map sorts them).
struct Ordered(Vec<String>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(Ordered(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// Read straight from the file's text by serde's own derive (not `Read`, which reads a `Value`,
/// whose keys are sorted): the order of the resources is the file's.
#[derive(serde::Deserialize)]
struct ResourceOrder {
    resources: Ordered,
}

/// Reads a pool config from the file's text and its parsed object. Returns the pool and the
/// capacity it gives the lock (holdings at once across the pool).
pub fn parse_pool(
    text: &str,
    obj: &Map<String, Value>,
) -> Result<(PoolConfig, u32), PoolRuleError> {
    for key in obj.keys() {
        if key == "capacity" {
            return Err(broke(
                PoolRule::CapacityBesideResources,
                "a pool has no \"capacity\": each resource has its own",
            )
            .at(&["capacity"]));
        }
        if key != "lease" && key != "lifecycle" && !POOL_KEYS.contains(&key.as_str()) {
            check_word("a key", key)
                .map_err(|_| broke(PoolRule::UnknownKey, "a key is not a word").at(&[key]))?;
            return Err(broke(
                PoolRule::UnknownKey,
                format!(
                    "unknown key {key:?} (a pool config has {} and lease)",
                    POOL_KEYS.join(", ")
                ),
            )
            .at(&[key]));
        }
    }
    let Some(resources) = obj.get("resources") else {
        return Err(broke(
            PoolRule::NeedsResources,
            "pool keys need \"resources\", an object of named resources",
        ));
    };
    let Some(declared) = resources
        .as_object()
        .filter(|r| (1..=MAX_RESOURCES).contains(&r.len()))
    else {
        return Err(broke(
            PoolRule::Resources,
            format!("\"resources\" must be an object of 1 to {MAX_RESOURCES} resources"),
        )
        .at(&["resources"]));
    };
    let order = serde_json::from_str::<ResourceOrder>(text)
        .map_err(|e| broke(PoolRule::Resources, e.to_string()).at(&["resources"]))?
        .resources;
    let mut pool = PoolConfig::default();
    for name in order.0 {
        if pool.resources.iter().any(|r| r.name == name) {
            return Err(broke(
                PoolRule::Resources,
                format!("resource {name:?} is declared twice"),
            )
            .at(&["resources", &name]));
        }
        // The resource, and its capacity (where a capacity is given).
        let here = ["resources", name.as_str(), "capacity"];
        check_word("a resource name", &name).map_err(|e| e.at(&here[..2]))?;
        let what = format!("\"resources\".{name:?}");
        let Some(entry) = declared.get(&name).and_then(Value::as_object) else {
            return Err(broke(
                PoolRule::Resources,
                format!("{what} must be an object {{\"capacity\": N, \"tags\": […]}}"),
            )
            .at(&here[..2]));
        };
        if let Some(k) = entry
            .keys()
            .find(|k| !matches!(k.as_str(), "capacity" | "tags"))
        {
            return Err(broke(
                PoolRule::ResourceKey,
                format!("{what} has unknown key {k:?} (capacity, tags)"),
            )
            .at(&["resources", &name, k]));
        }
        let capacity = entry
            .get("capacity")
            .and_then(|c| count(c, 1, u64::from(MAX_CAPACITY)))
            .ok_or_else(|| {
                broke(
                    PoolRule::ResourceCapacity,
                    format!(
                        "{what}.capacity must be an integer from 1 to {MAX_CAPACITY} (got {})",
                        entry
                            .get("capacity")
                            .map_or("nothing".into(), Value::to_string)
                    ),
                )
                .at(&here[..if entry.contains_key("capacity") { 3 } else { 2 }])
            })? as u32;
        let tags = match entry.get("tags") {
            None => Vec::new(),
            Some(t) => words_list(&format!("{what}.tags"), t, PoolRule::Word)
                .map_err(|e| e.at(&["resources", &name, "tags"]))?,
        };
        pool.resources.push(Resource {
            name,
            capacity,
            tags,
        });
    }
    if let Some(consumers) = obj.get("consumers") {
        let Some(consumers) = consumers.as_object() else {
            return Err(broke(
                PoolRule::Consumers,
                "\"consumers\" must be an object keyed by owner/name",
            )
            .at(&["consumers"]));
        };
        for (repository, limits) in consumers {
            let here = ["consumers", repository.as_str()];
            if let Some(shape) = credential_shape(repository) {
                return Err(broke(
                    PoolRule::CredentialShape,
                    format!("a consumer's name has the shape of {shape}"),
                )
                .at(&here));
            }
            crate::input::validate_repository("consumers", repository).map_err(|_| {
                broke(
                    PoolRule::Consumers,
                    format!("consumer {repository:?} must be owner/name"),
                )
                .at(&here)
            })?;
            // GitHub's names are case-insensitive: two spellings of one repository would be
            // two sets of limits for the same jobs.
            if let Some(other) = pool
                .consumers
                .iter()
                .find(|c| c.repository.eq_ignore_ascii_case(repository))
            {
                return Err(broke(
                    PoolRule::Consumers,
                    format!(
                        "consumers {:?} and {repository:?} are one repository (GitHub's names are case-insensitive)",
                        other.repository
                    ),
                )
                .at(&here));
            }
            let what = format!("\"consumers\".{repository:?}");
            let Some(limits) = limits.as_object() else {
                return Err(
                    broke(PoolRule::Consumers, format!("{what} must be an object")).at(&here),
                );
            };
            if let Some(k) = limits
                .keys()
                .find(|k| !matches!(k.as_str(), "resources" | "maxConcurrent"))
            {
                return Err(broke(
                    PoolRule::ConsumerKey,
                    format!("{what} has unknown key {k:?} (resources, maxConcurrent)"),
                )
                .at(&["consumers", repository, k]));
            }
            let resources = match limits.get("resources") {
                None => None,
                Some(list) => {
                    let place = ["consumers", repository.as_str(), "resources"];
                    let names = words_list(&format!("{what}.resources"), list, PoolRule::Consumers)
                        .map_err(|e| e.at(&place))?;
                    if let Some(n) = names
                        .iter()
                        .find(|n| !pool.resources.iter().any(|r| &r.name == *n))
                    {
                        return Err(broke(PoolRule::UndeclaredResource, format!("{what}.resources names {n:?}, which \"resources\" does not declare")).at(&place));
                    }
                    Some(names)
                }
            };
            let max_concurrent = match limits.get("maxConcurrent") {
                None => None,
                Some(m) => Some(count(m, 1, u64::from(MAX_CAPACITY)).ok_or_else(|| {
                    broke(PoolRule::MaxConcurrent, format!("{what}.maxConcurrent must be an integer from 1 to {MAX_CAPACITY} (got {m})"))
                        .at(&["consumers", repository, "maxConcurrent"])
                })? as u32),
            };
            pool.consumers.push(Consumer {
                repository: repository.clone(),
                resources,
                max_concurrent,
            });
        }
    }
    if let Some(m) = obj.get("maxInFlight") {
        pool.max_in_flight = Some(count(m, 1, u64::from(MAX_CAPACITY)).ok_or_else(|| {
            broke(
                PoolRule::MaxInFlight,
                format!("\"maxInFlight\" must be an integer from 1 to {MAX_CAPACITY} (got {m})"),
            )
            .at(&["maxInFlight"])
        })? as u32);
    }
    if let Some(atoms) = obj.get("nonReservingAtoms") {
        // The global set, and a runner's own atom (what keeps one runner to one slot under
        // runnerSerialization), always reserve.
        let mut listed = atoms
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        let why = listed.find_map(|a| match a {
            GLOBAL_PARTITION => Some("the global set \"*\" can never be exempted"),
            _ if a.starts_with("runner:") => Some("a runner's atom (runner:…) can never be exempted: it is what keeps one runner to one slot under runnerSerialization"),
            _ => None,
        });
        if let Some(why) = why {
            return Err(broke(PoolRule::NonReservingAtoms, why).at(&["nonReservingAtoms"]));
        }
        pool.non_reserving_atoms =
            words_list("\"nonReservingAtoms\"", atoms, PoolRule::NonReservingAtoms)
                .map_err(|e| e.at(&["nonReservingAtoms"]))?;
    }
    if let Some(a) = obj.get("affinitySeconds") {
        pool.affinity_seconds = count(a, 0, MAX_AFFINITY_SECONDS).ok_or_else(|| {
            broke(PoolRule::AffinitySeconds, format!("\"affinitySeconds\" must be an integer from 0 to {MAX_AFFINITY_SECONDS} (got {a})"))
                .at(&["affinitySeconds"])
        })?;
    }
    if let Some(p) = obj.get("pacing") {
        let bad = || {
            broke(PoolRule::Pacing, format!("\"pacing\" must be {{\"target\": 0.0001 <= t <= 1, \"burst\": 0 <= b <= 1}} (got {p})"))
                .at(&["pacing"])
        };
        let o = p.as_object().ok_or_else(bad)?;
        if o.keys().any(|k| !matches!(k.as_str(), "target" | "burst")) {
            return Err(bad());
        }
        let fraction = |v: Option<&Value>, default: f64| match v {
            None => Some(default),
            Some(v) => v.as_f64().filter(|f| (0.0..=1.0).contains(f)),
        };
        // Kept in basis points: a target that rounds to 0 would hold every resource with a
        // reading over pace for ever.
        let target = fraction(o.get("target"), 1.0)
            .filter(|t| *t >= 0.0001)
            .ok_or_else(bad)?;
        let burst = fraction(o.get("burst"), 0.0).ok_or_else(bad)?;
        pool.pacing = Some(Pacing {
            target_bp: (target * 10_000.0).round() as u32,
            burst_bp: (burst * 10_000.0).round() as u32,
        });
    }
    if let Some(r) = obj.get("runnerSerialization") {
        pool.runner_serialization = r.as_bool().ok_or_else(|| {
            broke(
                PoolRule::RunnerSerialization,
                format!("\"runnerSerialization\" must be true or false (got {r})"),
            )
            .at(&["runnerSerialization"])
        })?;
    }
    Ok((pool.clone(), pool_capacity(&pool)))
}

/// Holdings at once across the pool: the sum of the caps, within `maxInFlight` and the most a
/// lock may hold.
pub fn pool_capacity(pool: &PoolConfig) -> u32 {
    let sum: u32 = pool.resources.iter().map(|r| r.capacity).sum();
    sum.min(pool.max_in_flight.unwrap_or(MAX_CAPACITY))
        .clamp(1, MAX_CAPACITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PoolConfig, PoolRuleError> {
        let v: Value = serde_json::from_str(text).unwrap();
        parse_pool(text, v.as_object().unwrap()).map(|(p, _)| p)
    }

    #[test]
    fn reads_the_issue_example_in_config_order() {
        let text = r#"{
          "resources": {
            "acct-a1": { "capacity": 4, "tags": ["anthropic", "opus", "sonnet"] },
            "acct-o1": { "capacity": 12, "tags": ["openai"] },
            "acct-a2": { "capacity": 4, "tags": ["anthropic", "sonnet"] }
          },
          "consumers": { "octo/api": { "resources": ["acct-a1", "acct-o1"], "maxConcurrent": 3 } },
          "maxInFlight": 16,
          "nonReservingAtoms": ["docs"],
          "affinitySeconds": 300,
          "pacing": { "target": 0.95, "burst": 0 }
        }"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let (p, cap) = parse_pool(text, v.as_object().unwrap()).unwrap();
        let names: Vec<&str> = p.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["acct-a1", "acct-o1", "acct-a2"],
            "the file's order, not sorted"
        );
        assert_eq!(cap, 16);
        assert_eq!(
            p.pacing,
            Some(Pacing {
                target_bp: 9_500,
                burst_bp: 0
            })
        );
        assert_eq!(p.consumers[0].max_concurrent, Some(3));
        assert_eq!(p.affinity_seconds, 300);
    }

    #[test]
    fn every_rule_is_named() {
        let r = |extra: &str| format!(r#"{{"resources": {{"a": {{"capacity": 1}}}}{extra}}}"#);
        let cases: Vec<(String, PoolRule)> = vec![
            (r(r#", "surprise": 1"#), PoolRule::UnknownKey),
            (r#"{"consumers": {}}"#.into(), PoolRule::NeedsResources),
            (r(r#", "capacity": 2"#), PoolRule::CapacityBesideResources),
            (r#"{"resources": {}}"#.into(), PoolRule::Resources),
            (r#"{"resources": {"a": 2}}"#.into(), PoolRule::Resources),
            (
                r#"{"resources": {"a": {"capacity": 1, "cap": 2}}}"#.into(),
                PoolRule::ResourceKey,
            ),
            (
                r#"{"resources": {"a": {"capacity": 0}}}"#.into(),
                PoolRule::ResourceCapacity,
            ),
            (
                r#"{"resources": {"a": {"capacity": 65}}}"#.into(),
                PoolRule::ResourceCapacity,
            ),
            (
                r#"{"resources": {"a": {"capacity": 1.5}}}"#.into(),
                PoolRule::ResourceCapacity,
            ),
            (
                r#"{"resources": {"a": {"capacity": "1"}}}"#.into(),
                PoolRule::ResourceCapacity,
            ),
            (
                r#"{"resources": {"a": {}}}"#.into(),
                PoolRule::ResourceCapacity,
            ),
            (
                r#"{"resources": {"a b": {"capacity": 1}}}"#.into(),
                PoolRule::Word,
            ),
            (
                r#"{"resources": {"a": {"capacity": 1, "tags": ["x/y"]}}}"#.into(),
                PoolRule::Word,
            ),
            (
                r#"{"resources": {"a": {"capacity": 1, "tags": ["ghp_abc123"]}}}"#.into(),
                PoolRule::CredentialShape,
            ),
            (
                r#"{"resources": {"sk-ant-xyz": {"capacity": 1}}}"#.into(),
                PoolRule::CredentialShape,
            ),
            (r(r#", "consumers": []"#), PoolRule::Consumers),
            (r(r#", "consumers": {"nope": {}}"#), PoolRule::Consumers),
            (
                r(r#", "consumers": {"Octo/App": {}, "octo/app": {}}"#),
                PoolRule::Consumers,
            ),
            (
                r(r#", "consumers": {"o/r": {"max": 1}}"#),
                PoolRule::ConsumerKey,
            ),
            (
                r(r#", "consumers": {"o/r": {"resources": ["b"]}}"#),
                PoolRule::UndeclaredResource,
            ),
            (
                r(r#", "consumers": {"o/r": {"maxConcurrent": 0}}"#),
                PoolRule::MaxConcurrent,
            ),
            (r(r#", "maxInFlight": 65"#), PoolRule::MaxInFlight),
            (
                r(r#", "nonReservingAtoms": ["*"]"#),
                PoolRule::NonReservingAtoms,
            ),
            (
                r(r#", "nonReservingAtoms": "docs""#),
                PoolRule::NonReservingAtoms,
            ),
            (
                r(r#", "nonReservingAtoms": ["xoxb-1"]"#),
                PoolRule::CredentialShape,
            ),
            (r(r#", "affinitySeconds": -1"#), PoolRule::AffinitySeconds),
            (r(r#", "pacing": {"target": 0}"#), PoolRule::Pacing),
            (r(r#", "pacing": {"target": 0.00004}"#), PoolRule::Pacing),
            (r(r#", "pacing": {"target": 1.2}"#), PoolRule::Pacing),
            (r(r#", "pacing": {"target": 1, "x": 1}"#), PoolRule::Pacing),
            (
                r(r#", "runnerSerialization": "yes""#),
                PoolRule::RunnerSerialization,
            ),
        ];
        for (text, rule) in cases {
            let e = parse(&text).expect_err(&text);
            assert_eq!(e.rule, rule, "{text}: {e}");
            assert!(
                !e.to_string().contains("ghp_abc"),
                "never echoes a credential: {e}"
            );
        }
    }

    #[test]
    fn capacity_is_the_sum_within_max_in_flight() {
        let p = parse(r#"{"resources": {"a": {"capacity": 40}, "b": {"capacity": 40}}}"#).unwrap();
        assert_eq!(pool_capacity(&p), MAX_CAPACITY);
        let p = parse(
            r#"{"resources": {"a": {"capacity": 1}, "b": {"capacity": 2}}, "maxInFlight": 2}"#,
        )
        .unwrap();
        assert_eq!(pool_capacity(&p), 2);
        let p = parse(r#"{"resources": {"a": {"capacity": 1}, "b": {"capacity": 2}}}"#).unwrap();
        assert_eq!(pool_capacity(&p), 3);
    }
}
