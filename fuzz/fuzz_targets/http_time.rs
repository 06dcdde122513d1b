//! GitHub's times: the HTTP `date` header (IMF-fixdate), `retry-after` (delta-seconds or an
//! HTTP date) and the RFC 3339 times of the state document. Nothing panics; an RFC 3339 time
//! that parses formats back to a time that parses to the same instant; `retry-after` never
//! names an instant before now.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use leasehold_core::{retry_after_until, time};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(now), Ok(server_now), Ok(text)) = (
        u64::arbitrary(&mut u),
        Option::<u64>::arbitrary(&mut u),
        <&str>::arbitrary(&mut u),
    ) else {
        return;
    };
    if let Some(ms) = time::parse_rfc3339(text) {
        let formatted = time::format_rfc3339(ms);
        assert_eq!(time::parse_rfc3339(&formatted), Some(ms), "{formatted}");
    }
    let _ = time::parse_http_date(text);
    if let Some(until) = retry_after_until(text, now, server_now) {
        assert!(until >= now, "retry-after {text:?} names a time before now");
    }
    // Every instant formats to a time that parses back: itself, or the latest time a document
    // can hold (the writer's side of the round trip).
    let formatted = time::format_rfc3339(now);
    assert_eq!(
        time::parse_rfc3339(&formatted),
        Some(now.min(time::LATEST)),
        "{formatted}"
    );
});
