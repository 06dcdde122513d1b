//! What release and acquire decide under the lifecycle (docs/lifecycle.md), kept here so their
//! own files change little: a release's cleanup report read and judged, the holding it leaves
//! turned into a cooldown, a quarantine or the incident; what acquire does on a state with an
//! incident, a refused activation or a refused downgrade; when a waiter wakes for a cooldown.
//!
//! A report never vetoes the release of exactly this holder: a report that is invalid or
//! contradicts itself is judged as no report (the slot is quarantined), says so
//! (`report-degraded`, the code) and fails the step. The rejected value is neither stored nor
//! logged: only its code is.

use crate::engine::PlanCtx;
use crate::input::Reader;
use crate::policy::limits::{COOLDOWN_WAKE_JITTER_MS, MAX_COOLDOWN_SECONDS};
use crate::store::lifecycle::{self as rules, Applies};
use crate::wire::time::Millis;
use crate::wire::{
    credential_shape, CleanupResult, CleanupStatus, Health, Holder, LifecycleConfig,
    LifecycleReport, LockState, ReportCode, ReservationKind,
};

/// A release's cleanup report as read: every word checked, nothing that failed kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub cleanup: Option<CleanupStatus>,
    pub health: Option<Health>,
    /// A reason of word shape; whether the lock allows it is judged with its config.
    pub reason: Option<String>,
    /// The first problem found while reading (the value that caused it is dropped).
    pub problem: Option<ReportCode>,
    /// Whether any of the three inputs was given.
    pub given: bool,
}

impl Report {
    /// Reads `cleanup`, `health` and `reason`. Never fails: a bad value becomes its code.
    /// Reads the report from raw inputs (the simulator's and tools' way in).
    pub fn from_inputs(raw: &crate::input::RawInputs) -> Report {
        Report::parse(&Reader::new(raw))
    }

    pub(crate) fn parse(r: &Reader<'_>) -> Report {
        let mut report = Report::default();
        let note = |report: &mut Report, code| {
            report.problem.get_or_insert(code);
        };
        let raw = [r.get("cleanup"), r.get("health"), r.get("reason")];
        report.given = raw.iter().any(Option::is_some);
        if raw.iter().flatten().any(|v| credential_shape(v).is_some()) {
            // Nothing of a report carrying a credential is trusted or kept.
            note(&mut report, ReportCode::CredentialShape);
            return report;
        }
        if let Some(v) = raw[0] {
            match CleanupStatus::from_word(v) {
                Some(c) => report.cleanup = Some(c),
                None => note(&mut report, ReportCode::InvalidCleanup),
            }
        }
        if let Some(v) = raw[1] {
            match Health::from_word(v) {
                Some(h) => report.health = Some(h),
                None => note(&mut report, ReportCode::InvalidHealth),
            }
        }
        if let Some(v) = raw[2] {
            let word = !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
            if word {
                report.reason = Some(v.to_string());
            } else {
                note(&mut report, ReportCode::InvalidReason);
            }
        }
        report
    }
}

/// What becomes of a holding's slot when its holder leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Freed at once (lifecycle off, or a cooldown of 0).
    Free,
    Cooldown {
        ms: Millis,
    },
    Quarantine,
    /// Quarantined, and the lock's incident raised (or the standing one named).
    Incident,
}

/// Judges a report under a lifecycle: the verdict, the reason kept (only an allowed word) and
/// the problem that degraded it, if any.
pub fn judge(
    report: &Report,
    lifecycle: &LifecycleConfig,
) -> (Verdict, Option<String>, Option<ReportCode>) {
    let mut problem = report.problem;
    let reason = match &report.reason {
        Some(w) if rules::allows_reason(lifecycle, w) => Some(w.clone()),
        Some(_) => {
            problem.get_or_insert(ReportCode::InvalidReason);
            None
        }
        None => None,
    };
    if problem.is_none()
        && report.cleanup == Some(CleanupStatus::Confirmed)
        && report.health == Some(Health::Blocked)
    {
        problem = Some(ReportCode::ConfirmedButBlocked);
    }
    if problem.is_some() {
        return (Verdict::Quarantine, None, problem);
    }
    let verdict = match (report.cleanup, report.health) {
        (_, Some(Health::Blocked)) => Verdict::Incident,
        (Some(CleanupStatus::Confirmed), _) if lifecycle.cooldown_seconds == 0 => Verdict::Free,
        (Some(CleanupStatus::Confirmed), _) => Verdict::Cooldown {
            ms: lifecycle.cooldown_seconds * 1000,
        },
        _ => Verdict::Quarantine,
    };
    (verdict, reason, None)
}

/// The lifecycle a release plans under: the config's when it applies, the state's own record
/// when a config without it is refused (a release is never refused), none when it is off.
pub fn release_lifecycle(st: &LockState, ctx: &PlanCtx<'_>) -> Option<LifecycleConfig> {
    match rules::applies(st, ctx.record.as_ref()) {
        Applies::On { config, .. } => Some(config),
        // Reservations stand but no lifecycle is recorded: the cooldown's length is not known,
        // so a confirmed cleanup gets the longest one (it still frees itself).
        Applies::Downgrade { kept } => Some(kept.unwrap_or(LifecycleConfig {
            cooldown_seconds: MAX_COOLDOWN_SECONDS,
            reasons: Vec::new(),
        })),
        Applies::Off | Applies::ActivationBusy => None,
    }
}

/// Removes `holder` from `doc` as the report says under `lifecycle` (none: freed, as without
/// the lifecycle). `by` names what made the reservation. Returns the report for the outcome.
pub fn leave(
    doc: &mut LockState,
    holder: &Holder,
    report: &Report,
    lifecycle: Option<&LifecycleConfig>,
    now: Millis,
    by: &str,
) -> Option<LifecycleReport> {
    doc.holders.retain(|h| h.holder_id != holder.holder_id);
    let Some(lifecycle) = lifecycle else {
        return report
            .problem
            .map(|code| degraded(CleanupResult::Released, code));
    };
    let (verdict, reason, problem) = judge(report, lifecycle);
    let mut out = LifecycleReport {
        report_degraded: problem.is_some(),
        report_code: problem,
        ..LifecycleReport::default()
    };
    let mut reserve = |kind, ms| {
        let r = rules::reserve(holder, kind, ms, reason.clone(), now, by);
        out.reservation_id = Some(r.id.clone());
        if !doc.reservations.iter().any(|x| x.id == r.id) {
            doc.reservations.push(r);
        }
    };
    out.cleanup_result = Some(match verdict {
        Verdict::Free => CleanupResult::Released,
        Verdict::Cooldown { ms } => {
            reserve(ReservationKind::Cooldown, ms);
            CleanupResult::CooldownStarted
        }
        Verdict::Quarantine => {
            reserve(ReservationKind::Quarantine, 0);
            CleanupResult::Quarantined
        }
        Verdict::Incident => {
            reserve(ReservationKind::Quarantine, 0);
            if doc.incident.is_none() {
                let who = (holder.holder_id.as_str(), holder.fence, &holder.run);
                doc.incident = Some(rules::raise(doc, who, reason.clone(), now));
            }
            out.incident_id = doc.incident.as_ref().map(|i| i.id.clone());
            CleanupResult::Incident
        }
    });
    Some(out)
}

/// The quarantine a removal left of this holder's holding (`holder_id` in `run_id`'s attempt
/// `attempt`), the newest if several: an acquire's of an expired lease, the reaper's of a dead
/// holder. Its release comes after, and its report is about that slot.
pub fn removal_quarantine<'a>(
    st: &'a LockState,
    holder_id: &str,
    run_id: u64,
    attempt: u32,
) -> Option<&'a crate::wire::Reservation> {
    st.reservations
        .iter()
        .filter(|r| {
            r.kind == ReservationKind::Quarantine
                && r.holder_id == holder_id
                && r.run.run_id == run_id
                && r.run.run_attempt == attempt
                && matches!(r.by.as_str(), "expired" | "reaper")
        })
        .max_by_key(|r| r.fence)
}

/// A release's report applied to the quarantine `q` a removal left of its holding (see
/// [`removal_quarantine`]): the slot has been reserved since, so nobody else used the resource
/// and the report still speaks for it. `blocked` raises the incident (no waiter may be handed a
/// blocked resource, and the quarantine alone would be freed by the reaper's proof that the run
/// is over); anything else leaves the quarantine as it is. Returns whether `doc` changed, and
/// the report for the outcome.
pub fn report_on_removed(
    doc: &mut LockState,
    q: &crate::wire::Reservation,
    report: &Report,
    lifecycle: &LifecycleConfig,
    now: Millis,
) -> (bool, LifecycleReport) {
    let (verdict, reason, problem) = judge(report, lifecycle);
    let mut out = LifecycleReport {
        report_degraded: problem.is_some(),
        report_code: problem,
        reservation_id: Some(q.id.clone()),
        ..LifecycleReport::default()
    };
    let mut changed = false;
    out.cleanup_result = Some(match verdict {
        Verdict::Incident => {
            if doc.incident.is_none() {
                let who = (q.holder_id.as_str(), q.fence, &q.run);
                doc.incident = Some(rules::raise(doc, who, reason.clone(), now));
                changed = true;
            }
            out.incident_id = doc.incident.as_ref().map(|i| i.id.clone());
            CleanupResult::Incident
        }
        // A quarantine leaves only by an operator's recovery, a reclaim on its runner or the
        // reaper's proof (docs/lifecycle.md): a clean report that came after it does not free it.
        Verdict::Cooldown { .. } | Verdict::Free | Verdict::Quarantine => {
            CleanupResult::Quarantined
        }
    });
    (changed, out)
}

/// A report of a degraded report where no slot was quarantined (a queue entry, nothing).
pub fn degraded(result: CleanupResult, code: ReportCode) -> LifecycleReport {
    LifecycleReport {
        cleanup_result: Some(result),
        report_degraded: true,
        report_code: Some(code),
        ..LifecycleReport::default()
    }
}

/// When a waiter wakes for the next cooldown's end (on the local clock, plus a jitter of up to
/// [`COOLDOWN_WAKE_JITTER_MS`] from the seeded generator), if one ends before `until`.
pub fn cooldown_wake(st: &LockState, ctx: &mut PlanCtx<'_>, until: Millis) -> Millis {
    if st.incident.is_some() {
        return until;
    }
    match crate::admission::lifecycle::next_free_at(st) {
        Some(end) => {
            let at = ctx
                .clock
                .local_deadline_for(end)
                .saturating_add(1 + ctx.rng.up_to(COOLDOWN_WAKE_JITTER_MS))
                .max(ctx.now + 1);
            until.min(at)
        }
        None => until,
    }
}

/// A release's outcome under the lifecycle: the report of what it did with the slot, or (for
/// a queue entry, nothing, or a record in doubt) the result word as the cleanup result when a
/// report was given; a degraded report fails the step.
pub fn release_outcome(
    o: &mut crate::wire::Outcome,
    planned: Option<LifecycleReport>,
    report: &Report,
) {
    use crate::wire::ResultWord as R;
    let word = match o.result {
        R::QueueCleaned => Some(CleanupResult::QueueCleaned),
        R::Noop => Some(CleanupResult::Noop),
        R::ReleaseUnrecorded => Some(CleanupResult::ReleaseUnrecorded),
        _ => None,
    };
    let mut lifecycle = match (planned, word) {
        // The holding's removal was planned but its record is in doubt: no reservation is
        // claimed (the holder id names any a write GitHub did not acknowledge made).
        (Some(_), Some(CleanupResult::ReleaseUnrecorded)) => Some(LifecycleReport {
            cleanup_result: Some(CleanupResult::ReleaseUnrecorded),
            ..LifecycleReport::default()
        }),
        (Some(l), _) if o.result == R::Released => Some(l),
        (_, Some(w)) if report.given => Some(LifecycleReport {
            cleanup_result: Some(w),
            ..LifecycleReport::default()
        }),
        _ => None,
    };
    if let Some(code) = report.problem {
        let l = lifecycle.get_or_insert_with(LifecycleReport::default);
        l.report_degraded = true;
        l.report_code.get_or_insert(code);
    }
    if lifecycle.as_ref().is_some_and(|l| l.report_degraded) {
        o.success = false;
    }
    o.lifecycle = lifecycle;
}

/// What acquire may do on a version of the state, by the lifecycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Go on; `activate`: this write turns the lifecycle on (schema 1 → 2).
    Open { activate: bool },
    /// The lock's incident stands (its id): leave the queue, admit nobody, fail.
    Incident(String),
    /// The config's lifecycle is refused on this state: a claim not yet queued writes nothing.
    Refuse(crate::wire::FailureCode, String),
}

/// Acquire's gate on `st` with the config known in `ctx`.
pub fn acquire_gate(st: &LockState, ctx: &PlanCtx<'_>) -> Gate {
    use crate::wire::FailureCode as F;
    if let Some(i) = &st.incident {
        return Gate::Incident(i.id.clone());
    }
    match rules::applies(st, ctx.record.as_ref()) {
        Applies::Off => Gate::Open { activate: false },
        Applies::On { activate, .. } => Gate::Open { activate },
        Applies::ActivationBusy => Gate::Refuse(
            F::LifecycleActivationBusy,
            format!(
                "the config of {} turns the lifecycle on, but the lock has {} holders and {} waiters under schema 1: it turns on once the lock is idle; nothing was written",
                st.lock,
                st.holders.len(),
                st.queue.len()
            ),
        ),
        Applies::Downgrade { .. } => Gate::Refuse(
            F::LifecycleDowngrade,
            format!(
                "the config of {} has no \"lifecycle\", but the lock keeps {} reservations{}: a config cannot turn the lifecycle off while they stand; nothing was written",
                st.lock,
                st.reservations.len(),
                if st.incident.is_some() { " and an incident" } else { "" }
            ),
        ),
    }
}

/// Holdings an acquire or the reaper removed (`removed`, from `before`: an expired lease, a dead
/// holder, an earlier attempt a rerun could not seat) become quarantines when the lifecycle is
/// on for `doc`: nobody proved their resources clean. `by` names the removal.
pub fn expired(
    doc: &mut LockState,
    before: &[Holder],
    removed: &[crate::wire::Removal],
    ctx: &mut PlanCtx<'_>,
    by: &str,
) {
    if removed.is_empty() || release_lifecycle(doc, ctx).is_none() {
        return;
    }
    for id in rules::quarantine_removed(doc, before, removed, ctx.server_now, by) {
        ctx.warn(format!(
            "quarantined the slot of the removed holding as {id}"
        ));
    }
}

/// The quarantines of `st` that aged past the lease (`ttl_ms`, by GitHub's clock): the ones
/// the reaper may turn into cooldowns once their runs are proven over.
pub fn aged_quarantines(
    st: &LockState,
    server_now: Millis,
    ttl_ms: Millis,
) -> Vec<crate::wire::Reservation> {
    st.reservations
        .iter()
        .filter(|r| {
            r.kind == ReservationKind::Quarantine && server_now > r.at.saturating_add(ttl_ms)
        })
        .cloned()
        .collect()
}

/// Turns the quarantine `id` of `doc` into a cooldown of the lifecycle's length, made at
/// `now` by `by` (a recovery: the reaper's proof, or an operator's). Returns the cooldown's id.
pub fn cool_down(
    doc: &mut LockState,
    id: &str,
    lifecycle: &LifecycleConfig,
    now: Millis,
    by: &str,
) -> String {
    let Some(q) = doc.reservations.iter().find(|r| r.id == id).cloned() else {
        return String::new();
    };
    let mut c = q.clone();
    c.kind = ReservationKind::Cooldown;
    c.id = rules::reservation_id(ReservationKind::Cooldown, q.fence);
    c.at = now;
    c.ends_at = Some(now.saturating_add(lifecycle.cooldown_seconds.saturating_mul(1000)));
    c.by = by.into();
    doc.reservations.retain(|r| r.id != id);
    if !doc.reservations.iter().any(|r| r.id == c.id) {
        doc.reservations.push(c.clone());
    }
    c.id
}

/// Acquire's outcome when the lock's incident stands: not acquired, the incident's id, failed.
pub fn incident_outcome(mut o: crate::wire::Outcome, incident_id: &str) -> crate::wire::Outcome {
    o.success = false;
    o.acquired = Some(false);
    o.lifecycle = Some(LifecycleReport {
        incident_id: Some(incident_id.to_string()),
        ..LifecycleReport::default()
    });
    o.with_error(crate::wire::Failure::new(
        crate::wire::FailureCode::Incident,
        format!(
            "the lock's incident {incident_id} stands: nobody is admitted until an operator runs recover-incident (docs/lifecycle.md)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::RawInputs;

    fn report(pairs: &[(&str, &str)]) -> Report {
        let raw: RawInputs = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Report::parse(&Reader::new(&raw))
    }

    fn lc(cooldown: u64) -> LifecycleConfig {
        LifecycleConfig {
            cooldown_seconds: cooldown,
            reasons: vec!["vendor-reset".into()],
        }
    }

    #[test]
    fn each_report_has_its_verdict() {
        let j = |pairs: &[(&str, &str)], cooldown| judge(&report(pairs), &lc(cooldown));
        assert_eq!(
            j(&[("cleanup", "confirmed"), ("health", "healthy")], 30),
            (Verdict::Cooldown { ms: 30_000 }, None, None)
        );
        assert_eq!(
            j(&[("cleanup", "confirmed")], 0),
            (Verdict::Free, None, None)
        );
        assert_eq!(
            j(&[("cleanup", "unknown")], 30),
            (Verdict::Quarantine, None, None)
        );
        assert_eq!(j(&[], 30), (Verdict::Quarantine, None, None), "no report");
        assert_eq!(
            j(&[("health", "blocked"), ("reason", "account-blocked")], 30),
            (Verdict::Incident, Some("account-blocked".into()), None)
        );
        assert_eq!(
            j(&[("cleanup", "confirmed"), ("reason", "vendor-reset")], 30),
            (
                Verdict::Cooldown { ms: 30_000 },
                Some("vendor-reset".into()),
                None
            ),
            "a reason the config adds"
        );
    }

    #[test]
    fn every_invalid_report_degrades_to_a_quarantine_and_keeps_nothing_of_it() {
        for (pairs, code) in [
            (
                vec![("cleanup", "confirmed"), ("health", "blocked")],
                ReportCode::ConfirmedButBlocked,
            ),
            (vec![("cleanup", "done")], ReportCode::InvalidCleanup),
            (
                vec![("cleanup", "confirmed"), ("health", "fine")],
                ReportCode::InvalidHealth,
            ),
            (
                vec![("cleanup", "confirmed"), ("reason", "not-a-listed-word")],
                ReportCode::InvalidReason,
            ),
            (
                vec![("cleanup", "confirmed"), ("reason", "two words")],
                ReportCode::InvalidReason,
            ),
            (
                vec![("cleanup", "confirmed"), ("reason", "ghp_0123456789abcdef")],
                ReportCode::CredentialShape,
            ),
            (
                vec![("cleanup", "ghp_0123456789abcdef")],
                ReportCode::CredentialShape,
            ),
        ] {
            let (verdict, reason, problem) = judge(&report(&pairs), &lc(30));
            assert_eq!(
                (verdict, reason, problem),
                (Verdict::Quarantine, None, Some(code)),
                "{pairs:?}"
            );
        }
    }

    fn holder() -> Holder {
        Holder {
            holder_id: "o/r:1:j".into(),
            nonce: "n".into(),
            fence: 7,
            run: crate::wire::RunIdentity {
                repository: "o/r".into(),
                run_id: 1,
                run_attempt: 1,
                job: "j".into(),
                runner_name: "r1".into(),
                url: String::new(),
                job_id: None,
            },
            acquired_at: 0,
            expires_at: 1,
            lease_ms: 1,
            ceiling_at: 1,
            claimed_at: None,
            pool: None,
        }
    }

    fn state() -> LockState {
        let mut s = LockState::empty("l");
        s.schema = rules::LIFECYCLE_SCHEMA;
        s.fence = 7;
        s.revision = 4;
        s.holders.push(holder());
        s
    }

    #[test]
    fn leaving_writes_the_reservation_or_the_incident() {
        let h = holder();
        let mut s = state();
        let out = leave(
            &mut s,
            &h,
            &report(&[("cleanup", "confirmed")]),
            Some(&lc(5)),
            1_000,
            "release",
        )
        .unwrap();
        assert_eq!(out.cleanup_result, Some(CleanupResult::CooldownStarted));
        assert_eq!(out.reservation_id.as_deref(), Some("c7"));
        assert_eq!(s.reservations[0].ends_at, Some(6_000));
        assert!(s.holders.is_empty());

        let mut s = state();
        let out = leave(
            &mut s,
            &h,
            &report(&[("cleanup", "confirmed")]),
            Some(&lc(0)),
            1_000,
            "release",
        )
        .unwrap();
        assert_eq!(out.cleanup_result, Some(CleanupResult::Released));
        assert!(
            s.reservations.is_empty(),
            "a cooldown of 0 writes no reservation"
        );

        let mut s = state();
        let out = leave(
            &mut s,
            &h,
            &report(&[("health", "blocked")]),
            Some(&lc(5)),
            1_000,
            "release",
        )
        .unwrap();
        assert_eq!(out.cleanup_result, Some(CleanupResult::Incident));
        assert_eq!(out.incident_id.as_deref(), Some("l-incident-5"));
        assert_eq!(s.incident.as_ref().unwrap().id, "l-incident-5");
        assert_eq!(s.reservations[0].kind, ReservationKind::Quarantine);
        // A second blocked report names the standing incident; there is only ever one.
        let mut again = s.clone();
        again.revision = 9;
        let mut h2 = h.clone();
        h2.holder_id = "o/r:2:j".into();
        h2.fence = 8;
        again.holders.push(h2.clone());
        let out = leave(
            &mut again,
            &h2,
            &report(&[("health", "blocked")]),
            Some(&lc(5)),
            2_000,
            "release",
        )
        .unwrap();
        assert_eq!(out.incident_id.as_deref(), Some("l-incident-5"));

        let mut s = state();
        let bad = report(&[("cleanup", "confirmed"), ("reason", "ghp_0123456789abcdef")]);
        let out = leave(&mut s, &h, &bad, Some(&lc(5)), 1_000, "release").unwrap();
        assert_eq!(
            (out.cleanup_result, out.report_degraded),
            (Some(CleanupResult::Quarantined), true)
        );
        assert!(
            !s.to_document().contains("ghp_"),
            "the rejected value is never stored"
        );

        // Lifecycle off: freed as always; a bad report still says so.
        let mut s = state();
        assert_eq!(
            leave(
                &mut s,
                &h,
                &report(&[("cleanup", "confirmed")]),
                None,
                1_000,
                "release"
            ),
            None
        );
        assert!(s.holders.is_empty() && s.reservations.is_empty());
    }
}
