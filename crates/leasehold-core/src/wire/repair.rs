//! What `repair` reports: the broken state it found, the history it read to keep fences
//! increasing, and what it wrote (or, as a dry run, would write).

use serde::Serialize;

use super::exit::Status;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    pub status: Status,
    /// The state file (`locks/<lock>.json`) and its branch.
    pub path: String,
    pub branch: String,
    /// What is wrong with the current version (absent: nothing, or no file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Versions of the file in the branch's history that were read.
    pub versions_read: u32,
    /// Of those, the ones that carried no readable fence (not JSON, or absent), skipped.
    pub versions_skipped: u32,
    /// The highest fence any version handed out (or counted): the counter the new state keeps,
    /// so the next fence is above every fence ever handed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    /// The revision of the new state, above every revision seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// The new state, as written (or as a dry run would write it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Whether it was written.
    pub written: bool,
    /// Whether `confirm` was given (without it, nothing is ever written).
    pub confirm: bool,
    /// Why, for people.
    pub detail: String,
}
