//! What a slot allocation reports, and the record its ref points at.

use serde::Serialize;

use super::exit::Status;

/// The `kind` of the record a slot ref's commit carries (`slot.json`).
pub const SLOT_KIND: &str = "leasehold-slot";
/// Its schema version.
pub const SLOT_SCHEMA: u32 = 1;

/// What `slots allocate` reports (in [`super::Outcome::slots`]); its status decides the exit
/// code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct SlotReport {
    pub status: Status,
    pub repository: String,
    pub namespace: String,
    pub prefix: String,
    /// The number allocated (dry run: the one an allocation would try first; unknown outcome:
    /// the one whose create may have landed). Absent when no number was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// `<prefix><NN>`, the number zero-padded to at least two digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `refs/leasehold/slots/<namespace>/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ref")]
    pub ref_name: Option<String>,
    /// The commit this allocation made for its ref (its record: who and when), once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The highest number the full listing showed (absent: none yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest: Option<u64>,
    /// Numbers found taken by someone else between the listing and this allocation's create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taken: Vec<u64>,
    /// The allocation was confirmed by reading the ref back after an unknown outcome.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_back: bool,
    /// Why, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub dry_run: bool,
}
