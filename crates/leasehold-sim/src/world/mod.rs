//! The world: the scheduler of one seed. A virtual clock (GitHub's real time, `now`), the event
//! queue ordered by (simulated time, sequence number), the seed's one random generator, the
//! counters and the trace, and the seed's fixed draws ([`params`]). Each client reads time on
//! its own [`Clock`]. Nothing here knows what an event means: the simulation (`src/sim.rs`)
//! pops them in order and hands each to the part of the model it concerns.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use leasehold_core::time::Millis;

use crate::fault::Fault;
use crate::report::Counters;
use crate::rng::SimRng;
use crate::types::{fmt_t, ClientId, Invariant, Violation, T0};

mod clock;
pub mod params;

pub use clock::Clock;
pub use params::{Params, SimConfig};

/// One scheduled event. Requests and clients are named by index; a generation number makes an
/// event that outlived what it was for (a new operation, a new timer, a new work step) a no-op.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    JobStart(ClientId),
    /// A request reaches GitHub (a request index).
    Arrive(usize),
    /// Its answer reaches the client.
    Respond(usize),
    /// The client's own time limit for it.
    Timeout(usize),
    /// A sleeping operation's timer: (client, epoch).
    Timer(ClientId, u64),
    /// The guard's own timer (a wait, or the deadline a renewal races): (client, guard timer).
    GuardWake(ClientId, u64),
    /// The work ends on its own: (client, hold generation).
    WorkEnd(ClientId, u64),
    /// The work stopped after the guard's SIGTERM (by SIGKILL at the kill grace at the latest).
    ChildGone(ClientId, u64),
    HoldCrash(ClientId, u64),
    /// A run (its index) is rerun.
    RerunStart(usize),
    /// The run is cancelled: SIGINT to the job's current step.
    Cancel(ClientId),
    /// The runner kills the step 10 s after its first signal (SIGTERM at 7.5 s, then kill).
    KillStep(ClientId, u64),
    /// The expiry sweep job starts.
    SweepStart,
    /// GitHub declares the running attempts of this run lost (their runner stopped answering)
    /// and completes them; the run is rerun shortly after.
    DeclaredLost(usize),
    /// The reaper's schedule fires (the tick's number).
    ReapTick(u64),
    /// A lifecycle seed's operator looks at the lock (the look's number).
    OperatorTick(u64),
}

struct Queued {
    at: Millis,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The event queue: earliest first, and in the order pushed at the same instant.
#[derive(Default)]
pub struct Queue {
    seq: u64,
    heap: BinaryHeap<Reverse<Queued>>,
}

impl Queue {
    pub fn push(&mut self, at: Millis, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse(Queued {
            at,
            seq: self.seq,
            ev,
        }));
    }

    pub fn pop(&mut self) -> Option<(Millis, Ev)> {
        self.heap.pop().map(|Reverse(q)| (q.at, q.ev))
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The generator of the operator's looks: apart from the seed's own.
const OPERATOR_STREAM: u64 = 0x6f70_6572_6174_6f72;

/// The scheduler's state: what every part of the model reads time, randomness and the seed's
/// draws from, and where counters, the trace and the first violation go.
pub struct World {
    pub seed: u64,
    pub cfg: SimConfig,
    pub params: Params,
    pub rng: SimRng,
    /// The operator's looks (`client/operator.rs`): a generator of their own, so a seed's
    /// other draws are what they were until the operator starts a run.
    pub operator_rng: SimRng,
    pub now: Millis,
    pub queue: Queue,
    pub counters: Counters,
    pub trace: Option<String>,
    pub violation: Option<Violation>,
}

impl World {
    /// The seed's world before anything is scheduled: its generator, and the draws of
    /// [`Params`] (the first draws of the seed).
    pub fn new(seed: u64, cfg: &SimConfig) -> Self {
        let mut rng = SimRng::new(seed);
        let params = Params::draw(&mut rng, cfg)
            .with_pool(seed)
            .with_lifecycle(seed);
        World {
            seed,
            cfg: cfg.clone(),
            params,
            rng,
            operator_rng: SimRng::new(seed ^ OPERATOR_STREAM),
            now: T0,
            queue: Queue::default(),
            counters: Counters::default(),
            trace: cfg.trace.then(String::new),
            violation: None,
        }
    }

    /// Whether faults may still happen (before `profile.until`).
    pub fn faulty(&self) -> bool {
        self.now < T0 + self.params.profile.until
    }

    pub fn count(&mut self, fault: Fault) {
        self.counters.faults[fault.index()] += 1;
    }

    pub fn t(&self) -> String {
        fmt_t(self.now)
    }

    /// Appends a line to the trace, when there is one.
    pub fn log_line(&mut self, text: &str) {
        let line = format!("{:>11} {}", self.t(), text);
        if let Some(t) = self.trace.as_mut() {
            t.push_str(&line);
            t.push('\n');
        }
    }

    /// Records a violation at this instant; the first one of a seed is kept.
    pub fn violate(&mut self, invariant: Invariant, message: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation {
                seed: self.seed,
                invariant,
                at: self.now - T0,
                message,
            });
        }
    }
}
