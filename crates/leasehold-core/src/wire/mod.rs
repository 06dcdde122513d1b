//! What crosses the boundary.

pub mod error;
pub mod protocol;
pub mod time;
