//! The lock's reviewed config and its lease policy: whatever text the config file holds,
//! reading it never panics, and a config that is accepted keeps every rule (a capacity in
//! range, a lease policy that passes its own checks, with the arithmetic of the rules done
//! without overflow).
#![no_main]

use leasehold_core::{limits, parse_config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = parse_config("locks/fuzz.config.json", text) else {
        return;
    };
    assert!((1..=limits::MAX_CAPACITY).contains(&config.capacity));
    if let Some(lease) = config.lease {
        assert_eq!(
            lease.validate(),
            Ok(()),
            "an accepted lease breaks its rules"
        );
        // What the rules promise, checked here with arithmetic that cannot overflow.
        assert!(lease.ttl_ms >= limits::MIN_TTL_MS);
        assert!(lease.ttl_ms <= lease.max_ttl_ms);
        assert!(lease.max_ttl_ms <= limits::MAX_LEASE_CEILING_MS);
        assert!(lease.renew_ms >= limits::MIN_RENEW_MS);
        assert!(u128::from(lease.renew_ms) * 2 <= u128::from(lease.ttl_ms));
    }
});
