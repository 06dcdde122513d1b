//! The clients: job attempts and reaper runs, each running the real `leasehold-core`
//! operations through the same driver contract as `actions/lib/driver.mjs` (`driver.rs`), the
//! core's guard machine for the work step as `actions/lib/guard.mjs` drives it (`guard.rs`), the
//! scheduled reaper (`reaper.rs`), a lifecycle seed's operator (`operator.rs`), the expiry
//! sweep (`sweep.rs`), and a client's life: made,
//! paused, cancelled, crashed, declared lost, rerun (`lifecycle.rs`). What the driver keeps is in
//! [`attempt`]; what it acts on is an [`Env`] lent by the simulation for each event. Everything
//! the checker needs is fed to it here, as the client sees it.

pub mod attempt;
mod driver;
mod env;
mod guard;
mod lifecycle;
pub mod operator;
mod reaper;
mod sweep;

pub use attempt::{Client, GuardMode, JobSettings, Jobs, Run};
pub use env::Env;
