//! Counters over simulated seeds, and the runner's deterministic report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::check::Violation;
use crate::fault::Fault;

/// What was simulated. Sums are order-independent, so counters from parallel workers add up to
/// the same totals whatever the scheduling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub seeds: u64,
    /// Workflow runs (jobs) and their attempts (first runs plus reruns).
    pub runs: u64,
    pub attempts: u64,
    /// Lock operations started.
    pub acquires: u64,
    pub releases: u64,
    pub cleanups: u64,
    /// Finished operations by kind and result word (`acquire acquired`, `release noop`, …).
    pub results: BTreeMap<String, u64>,
    /// Client operations: events fed to a core operation (start, reply, timer), each one step.
    pub client_ops: u64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub creates: u64,
    pub not_modified: u64,
    /// 409/422 answers from the compare-and-swap itself.
    pub conflicts: u64,
    pub commits: u64,
    pub polls: u64,
    /// Acquires that finished `acquired` with the lease's local deadline already past.
    pub acquired_past_deadline: u64,
    pub faults: [u64; Fault::COUNT],
    pub events: u64,
    /// Simulated time, summed over seeds, and the longest seed.
    pub sim_ms: u64,
    pub max_sim_ms: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.seeds += o.seeds;
        self.runs += o.runs;
        self.attempts += o.attempts;
        self.acquires += o.acquires;
        self.releases += o.releases;
        self.cleanups += o.cleanups;
        for (k, n) in &o.results {
            *self.results.entry(k.clone()).or_default() += n;
        }
        self.client_ops += o.client_ops;
        self.requests += o.requests;
        self.reads += o.reads;
        self.writes += o.writes;
        self.creates += o.creates;
        self.not_modified += o.not_modified;
        self.conflicts += o.conflicts;
        self.commits += o.commits;
        self.polls += o.polls;
        self.acquired_past_deadline += o.acquired_past_deadline;
        for (a, b) in self.faults.iter_mut().zip(o.faults) {
            *a += b;
        }
        self.events += o.events;
        self.sim_ms += o.sim_ms;
        self.max_sim_ms = self.max_sim_ms.max(o.max_sim_ms);
    }
}

fn secs(ms: u64) -> String {
    format!("{}.{:03} s", ms / 1_000, ms % 1_000)
}

/// The report of a batch of seeds. Deterministic: the same seeds give the same text.
pub fn render(c: &Counters, violations: &[Violation], replay: &dyn Fn(u64) -> String) -> String {
    let mut s = String::new();
    let results: Vec<String> = c.results.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let _ = writeln!(s, "seeds: {}", c.seeds);
    let _ = writeln!(s, "jobs: {} runs, {} attempts", c.runs, c.attempts);
    let _ = writeln!(s, "lock operations: {} (acquire {}, release {}, post-step cleanup {})", c.acquires + c.releases + c.cleanups, c.acquires, c.releases, c.cleanups);
    let _ = writeln!(s, "results: {}", results.join(", "));
    let _ = writeln!(s, "acquired with the lease's local deadline already past (no work started): {}", c.acquired_past_deadline);
    let _ = writeln!(s, "client operations (core steps): {}", c.client_ops);
    let _ = writeln!(
        s,
        "requests: {} (reads {}, of which 304 {}; writes {}; git objects {}); commits {}; compare-and-swap conflicts {}; polls {}",
        c.requests, c.reads, c.not_modified, c.writes, c.creates, c.commits, c.conflicts, c.polls
    );
    let total: u64 = c.faults.iter().sum();
    let _ = writeln!(s, "faults injected: {total}");
    for f in Fault::ALL {
        let _ = writeln!(s, "  {:<44} {}", f.name(), c.faults[f.index()]);
    }
    let _ = writeln!(s, "simulated time: {} in all, longest seed {}; events {}", secs(c.sim_ms), secs(c.max_sim_ms), c.events);
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for v in violations {
        *by.entry(v.invariant.label()).or_default() += 1;
    }
    let by: Vec<String> = by.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    let _ = writeln!(s, "violations: {}{}", violations.len(), if by.is_empty() { String::new() } else { format!(" ({})", by.join(", ")) });
    for v in violations.iter().take(20) {
        let _ = writeln!(s, "  {}", v.line());
        let _ = writeln!(s, "    replay: {}", replay(v.seed));
    }
    if violations.len() > 20 {
        let _ = writeln!(s, "  … and {} more", violations.len() - 20);
    }
    s
}
