//! The simulation runner.
//!
//! ```text
//! cargo run --release -p leasehold-sim -- --seeds N [--seed S] [--clients K] [--threads T]
//! cargo run --release -p leasehold-sim -- --seed S [--clients K] [--trace]        (replay one seed)
//! cargo run --release -p leasehold-sim --features planted-bugs -- --recall [--seeds MAX]
//! ... [--planted NAME]   run with one planted bug (core-side ones need --features planted-bugs)
//! ... [--long-faults]    faults may last past the longest pause (see the crate docs)
//! ```
//!
//! Standard output is deterministic (a seed, or a batch, prints the same bytes on every run and
//! any thread count); the wall-clock throughput goes to standard error.
//! Exit codes: 0 no violation (every planted bug caught, with `--recall`); 1 a violation (a
//! planted bug not caught); 2 bad arguments.

use std::process::ExitCode;
use std::time::Instant;

use leasehold_sim::{first_catch, report, run_seed, run_seeds, PlantedBug, SimConfig};

struct Args {
    seeds: Option<u64>,
    seed: Option<u64>,
    clients: Option<usize>,
    threads: usize,
    planted: Option<PlantedBug>,
    trace: bool,
    recall: bool,
    long_faults: bool,
}

const USAGE: &str = "usage: leasehold-sim [--seeds N] [--seed S] [--clients K] [--threads T] [--planted BUG] [--trace] [--recall] [--long-faults]";

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seeds: None,
        seed: None,
        clients: None,
        threads: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        planted: None,
        trace: false,
        recall: false,
        long_faults: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let num = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name}: not a whole number: {v:?}"))
        };
        match flag.as_str() {
            "--seeds" => a.seeds = Some(num("--seeds", value("--seeds")?)?),
            "--seed" => a.seed = Some(num("--seed", value("--seed")?)?),
            "--clients" => {
                let k = num("--clients", value("--clients")?)?;
                if !(1..=64).contains(&k) {
                    return Err("--clients must be 1 to 64".into());
                }
                a.clients = Some(k as usize);
            }
            "--threads" => {
                a.threads = num("--threads", value("--threads")?)?.clamp(1, 256) as usize
            }
            "--planted" => {
                let name = value("--planted")?;
                let bug = PlantedBug::parse(&name).ok_or_else(|| {
                    format!(
                        "--planted: unknown bug {name:?}; one of {}",
                        PlantedBug::ALL.map(|b| b.name()).join(", ")
                    )
                })?;
                if !bug.available() {
                    return Err(format!("--planted {name} is planted in the core: build with --features planted-bugs"));
                }
                a.planted = Some(bug);
            }
            "--trace" => a.trace = true,
            "--recall" => a.recall = true,
            "--long-faults" => a.long_faults = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.seeds == Some(0) {
        return Err("--seeds must be at least 1".into());
    }
    if a.seeds.is_none() && a.seed.is_none() && !a.recall {
        return Err("give --seeds N, --seed S or --recall".into());
    }
    Ok(a)
}

fn replay_command(seed: u64, a: &Args) -> String {
    let features = if a.planted.is_some_and(PlantedBug::in_core) {
        " --features planted-bugs"
    } else {
        ""
    };
    let clients = a
        .clients
        .map(|k| format!(" --clients {k}"))
        .unwrap_or_default();
    let planted = a
        .planted
        .map(|b| format!(" --planted {}", b.name()))
        .unwrap_or_default();
    let long = if a.long_faults { " --long-faults" } else { "" };
    format!("cargo run --release -p leasehold-sim{features} -- --seed {seed}{clients}{planted}{long} --trace")
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("leasehold-sim: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let cfg = SimConfig {
        clients: a.clients,
        planted: a.planted,
        trace: a.trace,
        long_faults: a.long_faults,
    };
    let clients = a
        .clients
        .map(|k| k.to_string())
        .unwrap_or_else(|| "2 to 6, drawn per seed".into());
    let long = if a.long_faults {
        format!(
            "; long faults (stop within {} s)",
            leasehold_sim::fault::LONG_FAULTS_UNTIL_MS / 1_000
        )
    } else {
        String::new()
    };
    let wall = Instant::now();

    if a.recall {
        let max = a.seeds.unwrap_or(20_000);
        println!(
            "leasehold-sim recall: each planted bug, seeds 1..={max}, clients {clients}{long}"
        );
        println!(
            "{:<26} {:<40} {:>16}  first violation",
            "bug", "planted in", "seeds to catch"
        );
        let mut missed = 0;
        for bug in PlantedBug::ALL {
            if !bug.available() {
                println!(
                    "{:<26} {:<40} {:>16}  (build with --features planted-bugs)",
                    bug.name(),
                    bug.site(),
                    "not built"
                );
                missed += 1;
                continue;
            }
            match first_catch(bug, max, &cfg, a.threads) {
                Some(v) => println!(
                    "{:<26} {:<40} {:>16}  invariant {}: {}",
                    bug.name(),
                    bug.site(),
                    v.seed,
                    v.invariant.label(),
                    v.message
                ),
                None => {
                    println!(
                        "{:<26} {:<40} {:>16}",
                        bug.name(),
                        bug.site(),
                        format!("not in {max}")
                    );
                    missed += 1;
                }
            }
        }
        eprintln!(
            "wall time {:.1} s on {} threads",
            wall.elapsed().as_secs_f64(),
            a.threads
        );
        return if missed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    let planted = a.planted.map(|b| b.name()).unwrap_or("none");
    let (counters, violations) = match (a.seeds, a.seed) {
        (None, Some(seed)) => {
            let o = run_seed(seed, &cfg);
            println!("leasehold-sim: seed {seed}; clients {clients}; planted bug: {planted}{long}");
            println!("params: {}", o.params);
            if let Some(t) = &o.trace {
                print!("{t}");
            }
            (o.counters, o.violation.into_iter().collect::<Vec<_>>())
        }
        (Some(n), first) => {
            let first = first.unwrap_or(1);
            println!("leasehold-sim: seeds {first}..={}; clients {clients}; planted bug: {planted}{long}", first + n - 1);
            let b = run_seeds(first, n, &cfg, a.threads);
            (b.counters, b.violations)
        }
        (None, None) => unreachable!("checked in parse"),
    };
    print!(
        "{}",
        report::render(&counters, &violations, &|seed| replay_command(seed, &a))
    );
    let secs = wall.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "throughput: {} seeds in {:.2} s wall on {} threads: {:.0} seeds/s, {:.0} client operations/s, {:.0} requests/s, {:.0}x simulated time",
        counters.seeds,
        secs,
        a.threads,
        counters.seeds as f64 / secs,
        counters.client_ops as f64 / secs,
        counters.requests as f64 / secs,
        counters.sim_ms as f64 / 1_000.0 / secs,
    );
    if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
