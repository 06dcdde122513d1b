//! The lock state document: whatever text a state file holds, parsing it never panics; a text
//! that parses renders to a document that parses back to the same state, and rendering that
//! again gives the same bytes (parse, render, parse again: identical).
#![no_main]

use leasehold_core::LockState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The lock the file claims to be for, so that any lock name is reached; and a fixed one, so
    // that the wrong-lock refusal is reached too.
    let named = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("lock").and_then(|l| l.as_str()).map(str::to_string));
    for lock in named.iter().map(String::as_str).chain(["deploy"]) {
        let Ok(state) = LockState::parse(text, lock) else {
            continue;
        };
        let rendered = state.to_document();
        let again = LockState::parse(&rendered, lock).expect("a rendered state parses");
        assert_eq!(again, state, "parse, render, parse changed the state");
        assert_eq!(again.to_document(), rendered, "rendering is not stable");
    }
});
