//! The words of a resource's lifecycle after release (the lock state's schema 2): what keeps
//! a slot, a cleanup report's words, why a report was refused, what a release did, and what a
//! release, an acquire or a recovery reports of it. Plain data; the stored shapes
//! (`Reservation`, `Incident`, `LifecycleConfig`) are in `document.rs`, the rules in
//! `store/lifecycle.rs`, the admission in `admission/lifecycle.rs`, the decisions in
//! `ops/lifecycle.rs`.

use serde::Serialize;

use super::time::{self, Millis};
use super::words::words;

words! {
    /// What keeps a slot after its holder left.
    pub enum ReservationKind {
        /// The resource was proven clean; the slot frees itself at `endsAt`.
        Cooldown = "cooldown",
        /// Nobody proved the resource clean; the slot stays taken until it is recovered, taken
        /// over by a waiter on the same runner, or the reaper proves its run over.
        Quarantine = "quarantine",
    }
}

words! {
    /// The `cleanup` input of a release.
    pub enum CleanupStatus {
        Confirmed = "confirmed",
        Unknown = "unknown",
    }
}

words! {
    /// The `health` input of a release.
    pub enum Health {
        Healthy = "healthy",
        Blocked = "blocked",
    }
}

words! {
    /// Why a cleanup report was refused and degraded to unknown (`report-validation-error`).
    pub enum ReportCode {
        /// `cleanup` is not `confirmed` or `unknown`.
        InvalidCleanup = "invalid-cleanup",
        /// `health` is not `healthy` or `blocked`.
        InvalidHealth = "invalid-health",
        /// `reason` is not one of the allowed words.
        InvalidReason = "invalid-reason",
        /// A value has a credential's shape.
        CredentialShape = "credential-shape",
        /// `cleanup: confirmed` with `health: blocked`: a blocked resource was not cleaned.
        ConfirmedButBlocked = "confirmed-blocked-contradiction",
    }
}

words! {
    /// What a release did with the slot (`cleanup-result`).
    pub enum CleanupResult {
        /// The holding was removed and its slot freed (lifecycle off, or a cooldown of 0).
        Released = "released",
        /// The holding was removed; a cooldown keeps its slot until `endsAt`.
        CooldownStarted = "cooldown-started",
        /// The holding was removed; a quarantine keeps its slot until recovered.
        Quarantined = "quarantined",
        /// The holding was removed, quarantined, and the lock's incident raised.
        Incident = "incident",
        QueueCleaned = "queue-cleaned",
        Noop = "noop",
        ReleaseUnrecorded = "release-unrecorded",
    }
}

/// What an operation reports of the lifecycle (`cleanup-result`, `reservation-id`,
/// `incident-id`, `report-degraded`, `report-validation-error`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleReport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_result: Option<CleanupResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub report_degraded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_code: Option<ReportCode>,
    /// When the next reservation frees itself (a waiter's wake-up), if one will.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::rfc3339_opt"
    )]
    pub next_free_at: Option<Millis>,
}
