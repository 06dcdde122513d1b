//! The operations, one file each.

pub mod acquire;
pub mod guard;
pub mod reap;
pub mod release;
pub mod renew;
pub mod status;
