//! Stored documents.

pub mod config;
pub mod lock;
