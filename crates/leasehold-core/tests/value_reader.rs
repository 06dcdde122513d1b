//! `leasehold_core::from_value`, the crate's own reader of typed values out of a
//! `serde_json::Value` (src/wire/de.rs), held to `serde_json::from_value`: the same values and
//! the same messages, but for structs given as arrays, which it refuses on purpose. The core's
//! own structs and enums are read by `#[derive(Read)]` through either reader (its rules are held
//! to serde's derive by `wire::de::read_tests`), so what this holds is the rest: the standard
//! types inside them (numbers, strings, options, lists, maps), read by serde's own visitors.
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use leasehold_core::{from_value, Event, LockState, RawInputs};

/// Both readers' results, the values written back as JSON to compare them.
fn both<T: DeserializeOwned + Serialize>(
    value: &Value,
) -> (Result<Value, String>, Result<Value, String>) {
    let read = |r: Result<T, serde_json::Error>| {
        r.map(|t| serde_json::to_value(t).unwrap())
            .map_err(|e| e.to_string())
    };
    (
        read(from_value::<T>(value.clone())),
        read(serde_json::from_value::<T>(value.clone())),
    )
}

/// `value`, and `value` with one thing changed: each field left out, or each field's value
/// (at any depth) replaced by one of another type.
fn variants(value: &Value) -> Vec<Value> {
    let others = [
        json!(null),
        json!(true),
        json!(-1),
        json!(1.5),
        json!("x"),
        json!({}),
    ];
    let mut out = vec![value.clone()];
    match value {
        Value::Object(fields) => {
            for (key, inner) in fields {
                let mut less = fields.clone();
                less.remove(key);
                out.push(Value::Object(less));
                for other in others.iter().chain(variants(inner).iter().skip(1)) {
                    let mut changed = fields.clone();
                    changed.insert(key.clone(), other.clone());
                    out.push(Value::Object(changed));
                }
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                for other in others.iter().chain(variants(inner).iter().skip(1)) {
                    let mut changed = items.clone();
                    changed[i] = other.clone();
                    out.push(Value::Array(changed));
                }
            }
        }
        _ => {}
    }
    out
}

fn fixtures() -> Vec<Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        if let Ok(fixture) = serde_json::from_str::<Value>(&text) {
            out.push(fixture);
        }
    }
    out
}

/// Every event, input set and lock state of the fixtures, and every variant of each with
/// a field left out or of another type, reads to the same value or fails with the same
/// message as with `serde_json::from_value`.
#[test]
fn reads_the_fixtures_and_their_variants_as_serde_json_does() {
    let (mut events, mut states, mut cases, mut errors) = (0, 0, 0, 0);
    let mut check = |(ours, serdes): (Result<Value, String>, Result<Value, String>),
                     case: &Value| {
        cases += 1;
        errors += usize::from(serdes.is_err());
        assert_eq!(ours, serdes, "{case}");
    };
    for fixture in fixtures() {
        if let Some(inputs) = fixture.get("inputs") {
            for case in variants(inputs) {
                check(both::<RawInputs>(&case), &case);
            }
        }
        for step in fixture["steps"].as_array().into_iter().flatten() {
            let Some(event) = step.get("event") else {
                continue;
            };
            for case in variants(event) {
                check(both::<Event>(&case), &case);
            }
            events += 1;
            let content = event.pointer("/reply/content").and_then(Value::as_str);
            if let Some(Ok(state)) = content.map(serde_json::from_str::<Value>) {
                for case in variants(&state) {
                    check(both::<LockState>(&case), &case);
                }
                states += 1;
            }
        }
    }
    assert!(
        events >= 250 && states >= 60,
        "{events} events, {states} states"
    );
    println!("{cases} values read, {errors} of them refused");
    assert!(
        cases >= 10_000 && errors >= 1_000,
        "{cases} values read, {errors} of them refused"
    );
}

/// The one difference on purpose: a struct given as the list of its fields.
#[test]
fn refuses_a_struct_as_an_array_that_serde_json_takes() {
    let state = json!([1, "deploy", 2, 2, {"capacity": 2}, [], []]);
    let (ours, serdes) = both::<Value>(&state);
    assert_eq!(ours, serdes);
    let ours = from_value::<LockState>(state.clone())
        .unwrap_err()
        .to_string();
    assert_eq!(ours, "invalid type: sequence, expected struct LockState");
    let event = json!({"kind": "timer", "now": 5});
    assert!(from_value::<Event>(event).is_ok());
    let event = json!(["timer", 5]);
    let ours = from_value::<Event>(event).unwrap_err().to_string();
    assert_eq!(
        ours,
        "invalid type: sequence, expected internally tagged enum Event"
    );
}
