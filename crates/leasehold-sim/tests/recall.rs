//! Planted-bug recall: every deliberate defect must be caught, and this reports how many seeds
//! each took. Needs the core's defects compiled in:
//!
//! ```text
//! cargo test -p leasehold-sim --features planted-bugs --test recall -- --nocapture
//! ```
#![cfg(feature = "planted-bugs")]

use leasehold_sim::{first_catch, PlantedBug, SimConfig};

/// Seeds each bug may take; the slowest (`pool-stops-at-blocked`) takes about four thousand, so
/// the limit leaves it room for changes of the draws.
const MAX_SEEDS: u64 = 10_000;

#[test]
fn every_planted_bug_is_caught() {
    let cfg = SimConfig::default();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4);
    let mut missed = Vec::new();
    println!(
        "{:<26} {:<40} {:>14}  first violation",
        "bug", "planted in", "seeds to catch"
    );
    for bug in PlantedBug::ALL {
        match first_catch(bug, MAX_SEEDS, &cfg, threads) {
            Some(v) => println!(
                "{:<26} {:<40} {:>14}  {}",
                bug.name(),
                bug.site(),
                v.seed,
                v.line()
            ),
            None => {
                println!("{:<26} {:<40} {:>14}", bug.name(), bug.site(), "missed");
                missed.push(bug.name());
            }
        }
    }
    assert!(
        missed.is_empty(),
        "not caught within {MAX_SEEDS} seeds: {missed:?}"
    );
}

#[test]
fn without_a_planted_bug_the_same_seeds_pass() {
    // The recall above is about the bugs, not about seeds that fail anyway.
    let cfg = SimConfig::default();
    let batch = leasehold_sim::run_seeds(1, 300, &cfg, 2);
    assert!(
        batch.violations.is_empty(),
        "{:?}",
        batch.violations.first().map(|v| v.line())
    );
}
