//! The simulation's own tests, in the debug build that `cargo test --workspace` uses: a budget of
//! seeds with zero violations, exact replay, and the planted bug that lives in the simulated
//! driver (core-side ones: `tests/recall.rs`, with `--features planted-bugs`). The large budget
//! belongs to the release-mode runner (see the crate docs).

use leasehold_sim::{first_catch, run_seed, run_seeds, Invariant, PlantedBug, SimConfig};

fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4)
}

#[test]
fn a_budget_of_seeds_has_no_violation() {
    let batch = run_seeds(1, 2_000, &SimConfig::default(), threads());
    let lines: Vec<String> = batch.violations.iter().map(|v| v.line()).collect();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
    let c = &batch.counters;
    assert!(c.client_ops > 100_000, "{} client operations", c.client_ops);
    // The faults the budget is about actually happened.
    assert!(
        c.faults.iter().all(|&n| n > 0),
        "a fault kind never fired: {:?}",
        c.faults
    );
    assert!(c.conflicts > 0 && c.commits > 0);
    // So did every path of the guard contract: renewals of every result, kills at the deadline
    // (also on resuming from a pause) and on a proven loss, renewals at the ceiling, answers
    // ignored, verifications that failed, and holdings freed by expiry (also by the sweep).
    let g = &c.guard;
    let paths = [
        ("renewed", g.renewed),
        ("not-due", g.not_due),
        ("lost", g.lost),
        ("failed", g.failed),
        ("at the ceiling", g.at_ceiling),
        ("ignored", g.ignored),
        ("killed at the deadline", g.kills_deadline),
        ("killed late, after a pause", g.kills_after_pause),
        ("killed on lost", g.kills_lost),
        ("not held", g.not_held),
        ("work done", g.work_done),
        ("expired", g.expired),
        ("sweeps", g.sweeps),
    ];
    for (path, n) in paths {
        assert!(n > 0, "the guard path {path:?} never happened: {g:?}");
    }
    assert!(g.max_renewals >= 10, "no guard renewed many times: {g:?}");
    // And every path of the reaper: entries removed by run attempt and by job id (holdings
    // and queue entries), renewed, kept while running, unverifiable or unchecked; reaps that
    // failed (while faults lasted), overlapped or started late; the Actions API answering
    // both ways.
    let r = &c.reaper;
    let n = |m: &std::collections::BTreeMap<String, u64>, k: &str| m.get(k).copied().unwrap_or(0);
    let paths = [
        ("reaped", n(&c.results, "reap reaped")),
        ("failed", n(&c.results, "reap failed")),
        (
            "holding run-completed",
            n(&r.removed_holdings, "run-completed"),
        ),
        (
            "holding job-completed",
            n(&r.removed_holdings, "job-completed"),
        ),
        ("queue entry removed", r.removed_queue.values().sum()),
        ("renewed", r.renewed),
        ("kept active", n(&r.kept, "active")),
        ("kept unverified", n(&r.kept, "unverified")),
        ("kept unchecked", n(&r.kept, "unchecked")),
        ("overlapping", r.overlapping),
        ("late tick", r.late_ticks),
        ("answered completed", n(&r.actions_answers, "completed")),
        ("answered in_progress", n(&r.actions_answers, "in_progress")),
        ("judged by job id", r.judged_by_job),
        ("reapable claims gone", r.reapable_removed),
    ];
    for (path, n) in paths {
        assert!(n > 0, "the reaper path {path:?} never happened: {r:?}");
    }
}

#[test]
fn many_clients_on_one_lock() {
    let cfg = SimConfig {
        clients: Some(16),
        ..SimConfig::default()
    };
    let batch = run_seeds(1, 40, &cfg, threads());
    let lines: Vec<String> = batch.violations.iter().map(|v| v.line()).collect();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}

#[test]
fn a_seed_replays_exactly() {
    let cfg = SimConfig {
        trace: true,
        ..SimConfig::default()
    };
    for seed in [7, 1_011] {
        let a = run_seed(seed, &cfg);
        let b = run_seed(seed, &cfg);
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.counters, b.counters);
        assert!(a.trace.as_deref().is_some_and(|t| t.lines().count() > 20));
    }
    // Thread count does not change a batch's outcome.
    let one = run_seeds(1, 200, &SimConfig::default(), 1);
    let many = run_seeds(1, 200, &SimConfig::default(), 3);
    assert_eq!(one.counters, many.counters);
    assert_eq!(one.violations, many.violations);
}

#[test]
fn the_driver_side_planted_bug_is_caught() {
    // Re-sending a write whose outcome is unknown: the core is told 409 for a write that landed.
    let v = first_catch(
        PlantedBug::ResendUnknownWrite,
        500,
        &SimConfig::default(),
        threads(),
    )
    .expect("caught within 500 seeds");
    assert_eq!(v.invariant, Invariant::WriteViews, "{}", v.line());
    println!(
        "resend-unknown-write caught at seed {}: {}",
        v.seed,
        v.line()
    );
}

#[test]
fn claim_clients_run_every_verb_under_every_fault() {
    let batch = run_seeds(1, 400, &SimConfig::default(), threads());
    assert!(
        batch.violations.is_empty(),
        "{:?}",
        batch.violations.first().map(|v| v.line())
    );
    let k = &batch.counters.claims;
    assert_eq!(k.seeds, 100, "one seed in four runs claims");
    for verb in [
        "claim",
        "takeover",
        "renew",
        "release",
        "family-claim",
        "family-release",
    ] {
        assert!(
            k.ops.get(verb).copied().unwrap_or(0) > 0,
            "{verb} never ran: {:?}",
            k.ops
        );
    }
    for result in [
        "claim acquired",
        "claim contended",
        "claim taken-over",
        "renew renewed",
        "family-claim family-aborted",
        "family-release released",
    ] {
        assert!(
            k.results.get(result).copied().unwrap_or(0) > 0,
            "no {result}: {:?}",
            k.results
        );
    }
    assert_eq!(
        k.faults.len(),
        6,
        "a claims fault kind never fired: {:?}",
        k.faults
    );
    assert!(k.pauses > 0 && k.crashes > 0 && k.transitions > 0 && k.beliefs > 0);
}
