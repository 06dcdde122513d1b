//! Policy.

pub mod lease;
pub mod retry;
