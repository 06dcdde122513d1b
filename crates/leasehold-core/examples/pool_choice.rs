//! Times the pool's admission alone (the choice for every waiter of one pass), natively:
//! `cargo run --release -p leasehold-core --example pool_choice`. The wasm figure, with the
//! state's parsing and rendering, is `tests/bench/pools-bench.mjs`'s. Prints; asserts nothing.

use std::time::Instant;

use leasehold_core::{
    Admission, Holder, LockState, Pool, PoolConfig, PoolRequest, QueueEntry, Resource, RunIdentity,
    Seat,
};

fn run(i: usize) -> RunIdentity {
    RunIdentity {
        repository: format!("octo/repo-{}", i % 7),
        run_id: 10_000 + i as u64,
        run_attempt: 1,
        job: "build".into(),
        runner_name: format!("runner-{i}"),
        url: String::new(),
        job_id: None,
    }
}

fn main() {
    let resources: Vec<Resource> = (0..50)
        .map(|i| Resource {
            name: format!("acct-{i}"),
            capacity: if i < 14 { 2 } else { 1 },
            tags: vec![format!("provider-{}", i % 5), format!("tier-{}", i % 3)],
        })
        .collect();
    let seats: Vec<String> = resources
        .iter()
        .flat_map(|r| std::iter::repeat_n(r.name.clone(), r.capacity as usize))
        .collect();
    let pool = Pool {
        config: PoolConfig {
            resources,
            affinity_seconds: 300,
            ..PoolConfig::default()
        },
        capacity: 64,
    };
    let mut st = LockState::empty("pool");
    // 63 holders: every seat but the last resource's.
    st.holders = (0..63)
        .map(|i| Holder {
            holder_id: format!("h{i}"),
            nonce: format!("{i:016}"),
            fence: i as u64 + 1,
            run: run(i),
            acquired_at: 0,
            expires_at: 3_600_000,
            lease_ms: 3_600_000,
            ceiling_at: 7_200_000,
            claimed_at: None,
            pool: Some(Seat {
                resource: seats[i].clone(),
                partition: Some(vec![format!("area-{}", i % 9)]),
                affinity: None,
            }),
        })
        .collect();
    st.fence = 63;
    // 1,000 waiters; only the last may take the free seat.
    st.queue = (0..1000)
        .map(|i| QueueEntry {
            holder_id: format!("w{i}"),
            nonce: format!("{:016}", 20_000 + i),
            run: run(20_000 + i),
            lease_ms: 3_600_000,
            enqueued_at: 0,
            last_seen_at: 0,
            pool: Some(PoolRequest {
                prefer: if i == 999 {
                    vec!["acct-49".into()]
                } else {
                    vec![format!("provider-{}", i % 5)]
                },
                requires: vec![],
                partition: Some(vec![if i == 999 {
                    "free".into()
                } else {
                    format!("area-{}", i % 9)
                }]),
                affinity: Some(format!("key-{}", i % 40)),
            }),
        })
        .collect();
    let rounds = 50;
    let mut times = Vec::new();
    let mut admitted = Vec::new();
    for _ in 0..rounds {
        let mut doc = st.clone();
        let t = Instant::now();
        admitted = pool.admit(&mut doc, 1_000, 3_600_000);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "pool admission, 50 resources, 63 holders, 1,000 waiters (every waiter judged; {} admitted): median {:.3} ms, min {:.3} ms over {rounds} passes (native, release build)",
        admitted.len(),
        times[rounds / 2],
        times[0]
    );
}
