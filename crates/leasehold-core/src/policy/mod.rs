//! Every number and table leasehold decides by: `limits.rs` holds the numbers (timeouts, budgets,
//! spacing, ranges, defaults), `lease.rs` the lease defaults and their rules, `retry.rs` the
//! retry defaults and budgets, `classify.rs` what each answer of GitHub means, `poll.rs` and `handoff.rs` how
//! often a waiter polls, `settle.rs` when a write waits for a busy lock to settle, `jitter.rs` the seeded source of jitter. Pure arithmetic on what is
//! handed in; it depends only on `wire`.

mod classify;
mod handoff;
mod jitter;
mod lease;
pub mod limits;
mod poll;
mod retry;
mod settle;

pub use classify::{
    answered_every_field, classify, directed_limit, names_a_newer_version, retry_after_until,
    Class, RequestKind,
};
pub use handoff::{next_poll, oldest_age, HoldBook};
pub use jitter::Rng;
pub use lease::LeaseRule;
pub use retry::{next_attempt_at, rate_wait, RetryPolicy};
pub use settle::settle_delay;
