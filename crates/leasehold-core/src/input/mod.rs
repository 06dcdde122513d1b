//! Inputs.

pub mod ids;
pub mod reader;
