//! The operations, one file each.

pub mod guard;
