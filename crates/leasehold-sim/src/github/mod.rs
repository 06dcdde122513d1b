//! The simulated GitHub: the lock repository and the Actions view ([`Store`], a thin layer over
//! the honest GitHub of `leasehold-github-model`, whose compare-and-swap rules are the ones the
//! core's own tests use), and the wire the clients reach it over ([`wire`]: the requests in
//! flight and the faults GitHub and the network add to them).
//!
//! **GitHub's view of a job attempt** (the model's `Timing`): `queued` until the job starts,
//! `in_progress` while it runs, `completed` once it ended: at once when its job ends (cleanly or
//! not), some minutes later when its runner died
//! ([`LOST_RUNNER_NOTICE_MS`](crate::world::params::LOST_RUNNER_NOTICE_MS): GitHub notices the
//! lost runner), from the moment GitHub declared a runner lost while its process lives on (a
//! zombie), and at the latest when the run is rerun (an operator cancels a hung attempt before
//! rerunning it). A completed attempt stays completed. The sim's runs have one job (`build`)
//! per attempt, so a run attempt is over exactly when its job is; each job attempt has its own
//! job id ([`JOB_ID_BASE`](crate::types::JOB_ID_BASE) + its client index). The clients change
//! the view as their jobs start and end; the checker is told every change.
//!
//! **The Actions API** answers `getRunAttempt`, `getJob` and `listJobs` from that view, with a
//! `date` header; an unknown run, attempt or job is a 404. While faults last, its requests meet
//! every fault a read meets (5xx, not sent, lost answers, time limits, 401, 403/429 rate limits)
//! and two of its own: 403 "Resource not accessible by integration" and 404 for a run the token
//! cannot see ([`Fault::ActionsForbidden`](crate::fault::Fault::ActionsForbidden),
//! [`Fault::ActionsNotFound`](crate::fault::Fault::ActionsNotFound)). It never writes, and is
//! never stale: no answer says an attempt runs after one said it completed.

pub mod store;
pub mod wire;

pub use store::Store;
pub use wire::{Request, Wire, WriteRec};

/// The simulated GitHub of one seed, and what is on the wire to it.
pub struct GitHub {
    pub store: Store,
    pub requests: Vec<Request>,
    pub writes: Vec<WriteRec>,
    /// Requests of jobs (not reapers) sent and not yet arrived at GitHub.
    pub jobs_in_flight: usize,
}

impl GitHub {
    pub fn new(store: Store) -> Self {
        GitHub {
            store,
            requests: Vec::new(),
            writes: Vec::new(),
            jobs_in_flight: 0,
        }
    }
}
