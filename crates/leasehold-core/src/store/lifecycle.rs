//! The lifecycle's rules as stored: the reviewed `lifecycle` block (`"lifecycle":
//! {"cooldownSeconds": N, "reasons": [...]}`), checked by named rules (`lifecycle.<rule>`);
//! the lock state's schema 2 (reservations and the incident) and the one-way way there; what
//! lifecycle applies to a version of the state given the config known. docs/lifecycle.md says
//! why each rule is what it is.
//!
//! The schema moves one way. A state is schema 1 until a config with `lifecycle` meets it
//! empty (no holder, no waiter): that write makes it schema 2, and nothing writes it back as 1.
//! A config with `lifecycle` meeting a busy schema-1 state is refused (activation would turn
//! holdings admitted without it into ones released under it). A config without `lifecycle`
//! meeting reservations or an incident is refused too: a configuration outage must never free
//! what the lifecycle keeps.

use serde_json::Value;

use crate::policy::limits::{MAX_COOLDOWN_SECONDS, MAX_POOL_LIST};
use crate::wire::time::Millis;
use crate::wire::{
    ConfigRecord, Holder, Incident, LifecycleConfig, LockState, Removal, Reservation,
    ReservationKind,
};

use super::pool_config::check_word;

/// The schema of a lock state the lifecycle has been turned on for.
pub const LIFECYCLE_SCHEMA: u64 = 2;

/// The reason words every lifecycle allows; a config's `reasons` adds to them.
pub const BUILTIN_REASONS: &[&str] = &[
    "completed",
    "failed",
    "cancelled",
    "timeout",
    "reset",
    "leaked",
    "rate-limited",
    "account-blocked",
    "maintenance",
];

crate::wire::words! {
    /// The rules of a `lifecycle` block, each named (`lifecycle.<rule>`) where it is broken.
    pub enum LifecycleRule {
        /// `lifecycle` is not an object, or has a key other than `cooldownSeconds` and `reasons`.
        Shape = "shape",
        /// `cooldownSeconds` is missing or not an integer from 0 to a day.
        CooldownSeconds = "cooldown-seconds",
        /// `reasons` is not a list of at most 32 words `[A-Za-z0-9._:-]{1,64}`.
        Reasons = "reasons",
        /// A reason has a credential's shape.
        CredentialShape = "credential-shape",
        /// `lifecycle` beside `resources`: a pool's reservations are not kept yet.
        WithPool = "with-pool",
    }
}

/// A broken rule: its name, what broke it (never the rejected value when it is
/// credential-shaped) and where (a JSON pointer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleProblem {
    pub rule: LifecycleRule,
    pub message: String,
    pub pointer: String,
}

/// Reads a config's `lifecycle` block (`None`: absent, the lifecycle is off).
pub fn parse_lifecycle(config: &Value) -> Result<Option<LifecycleConfig>, LifecycleProblem> {
    // `null` is the key absent, as a `lease` block's `null` is.
    let Some(block) = config.get("lifecycle").filter(|b| !b.is_null()) else {
        return Ok(None);
    };
    let broke = |rule, message: String, pointer: &str| LifecycleProblem {
        rule,
        message: format!("\"lifecycle\": {message}"),
        pointer: pointer.into(),
    };
    if super::pool_config::declares_pool(config) {
        return Err(broke(
            LifecycleRule::WithPool,
            "a pool's lifecycle is not supported yet; remove it or the resources".into(),
            "/lifecycle",
        ));
    }
    let Some(obj) = block.as_object() else {
        return Err(broke(
            LifecycleRule::Shape,
            "must be an object {\"cooldownSeconds\": N, \"reasons\": [...]}".into(),
            "/lifecycle",
        ));
    };
    if let Some(key) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "cooldownSeconds" | "reasons"))
    {
        let shown = if check_word("a key", key).is_ok() {
            format!("{key:?}")
        } else {
            "a key that is not a word".into()
        };
        return Err(broke(
            LifecycleRule::Shape,
            format!("unknown key {shown} (a lifecycle has cooldownSeconds and reasons)"),
            "/lifecycle",
        ));
    }
    let cooldown_seconds = match obj.get("cooldownSeconds").and_then(Value::as_u64) {
        Some(n) if n <= MAX_COOLDOWN_SECONDS => n,
        _ => {
            return Err(broke(
                LifecycleRule::CooldownSeconds,
                format!("\"cooldownSeconds\" must be an integer from 0 to {MAX_COOLDOWN_SECONDS}"),
                "/lifecycle/cooldownSeconds",
            ))
        }
    };
    let mut reasons = Vec::new();
    if let Some(list) = obj.get("reasons") {
        let rule = format!(
            "\"reasons\" must be a list of at most {MAX_POOL_LIST} words [A-Za-z0-9._:-]{{1,64}}"
        );
        let items = list
            .as_array()
            .filter(|a| a.len() <= MAX_POOL_LIST)
            .ok_or_else(|| broke(LifecycleRule::Reasons, rule.clone(), "/lifecycle/reasons"))?;
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("/lifecycle/reasons/{i}");
            let word = item
                .as_str()
                .ok_or_else(|| broke(LifecycleRule::Reasons, rule.clone(), &pointer))?;
            if let Err(e) = check_word("a reason", word) {
                let credential = e.rule == super::pool_config::PoolRule::CredentialShape;
                return Err(if credential {
                    broke(LifecycleRule::CredentialShape, e.detail, &pointer)
                } else {
                    broke(LifecycleRule::Reasons, rule, &pointer)
                });
            }
            if !reasons.iter().any(|r| r == word) {
                reasons.push(word.to_string());
            }
        }
    }
    Ok(Some(LifecycleConfig {
        cooldown_seconds,
        reasons,
    }))
}

/// Whether `word` is a reason this lifecycle allows.
pub fn allows_reason(lifecycle: &LifecycleConfig, word: &str) -> bool {
    BUILTIN_REASONS.contains(&word) || lifecycle.reasons.iter().any(|r| r == word)
}

/// The structural rules of the lifecycle's part of a state (`check` in `lock.rs` keeps the
/// rest): schema 1 carries none of it; reservation ids are unique; at most as many
/// reservations and holders together as the largest capacity; a cooldown has an end and a
/// quarantine none.
pub fn check_state(state: &LockState, max_capacity: u32) -> Result<(), String> {
    if state.schema < LIFECYCLE_SCHEMA {
        if !state.reservations.is_empty() || state.incident.is_some() {
            return Err("a schema-1 state carries reservations or an incident".into());
        }
        if state.config.as_ref().is_some_and(|c| c.lifecycle.is_some()) {
            return Err("a schema-1 state records a lifecycle".into());
        }
        return Ok(());
    }
    if state.holders.len() + state.reservations.len() > max_capacity as usize {
        return Err(format!(
            "{} holders and {} reservations, more than the maximum capacity {max_capacity}",
            state.holders.len(),
            state.reservations.len()
        ));
    }
    let mut ids: Vec<&str> = state.reservations.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("reservation id {:?} appears twice", w[0]));
    }
    for r in &state.reservations {
        match (r.kind, r.ends_at) {
            (ReservationKind::Cooldown, None) => {
                return Err(format!("cooldown {:?} has no end", r.id));
            }
            (ReservationKind::Quarantine, Some(_)) => {
                return Err(format!("quarantine {:?} has an end", r.id));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What lifecycle applies to a version of the state, given the config known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Off: the state is schema 1 and the config has no lifecycle (or is not known).
    Off,
    /// On, with this config. `activate`: the state is schema 1 and empty, and this write makes
    /// it schema 2.
    On {
        config: LifecycleConfig,
        activate: bool,
    },
    /// The config turns the lifecycle on while the schema-1 state is busy: refused.
    ActivationBusy,
    /// The config has no lifecycle while the state keeps reservations or an incident:
    /// refused; `kept` is the lifecycle the state recorded, for what must go on regardless (a
    /// release).
    Downgrade { kept: Option<LifecycleConfig> },
}

/// The lifecycle for `state` under the config `record` (the freshest known, if any).
pub fn applies(state: &LockState, record: Option<&ConfigRecord>) -> Applies {
    let recorded = state.config.as_ref().and_then(|c| c.lifecycle.clone());
    let wanted = match record {
        Some(r) => r.lifecycle.clone(),
        // No config known: the state's own record decides.
        None => recorded.clone(),
    };
    let on = state.schema >= LIFECYCLE_SCHEMA;
    match (wanted, on) {
        (Some(config), true) => Applies::On {
            config,
            activate: false,
        },
        (Some(config), false) if is_idle(state) => Applies::On {
            config,
            activate: true,
        },
        (Some(_), false) => Applies::ActivationBusy,
        (None, true) if keeps_anything(state) => Applies::Downgrade { kept: recorded },
        (None, _) => Applies::Off,
    }
}

/// No holder and no waiter: the lifecycle may be turned on.
pub fn is_idle(state: &LockState) -> bool {
    state.holders.is_empty() && state.queue.is_empty()
}

/// Reservations or an incident: what a config without lifecycle may not drop.
pub fn keeps_anything(state: &LockState) -> bool {
    !state.reservations.is_empty() || state.incident.is_some()
}

/// Makes a schema-1 state schema 2 (one way; a schema-2 state is left as it is).
pub fn migrate(state: &mut LockState) {
    if state.schema < LIFECYCLE_SCHEMA {
        state.schema = LIFECYCLE_SCHEMA;
    }
}

/// The id of the reservation a holding with `fence` leaves: `q<fence>` for a quarantine,
/// `c<fence>` for a cooldown. A fence is handed out once over the lock's life and a holding
/// leaves at most one quarantine and one cooldown (its recovery), so ids never repeat.
pub fn reservation_id(kind: ReservationKind, fence: u64) -> String {
    match kind {
        ReservationKind::Cooldown => format!("c{fence}"),
        ReservationKind::Quarantine => format!("q{fence}"),
    }
}

/// The id of an incident raised by the write of `revision`: revisions never repeat.
pub fn incident_id(lock: &str, revision: u64) -> String {
    format!("{lock}-incident-{revision}")
}

/// A reservation for `holder`, made at `now` (GitHub's clock) by `by`.
pub fn reserve(
    holder: &Holder,
    kind: ReservationKind,
    cooldown_ms: Millis,
    reason: Option<String>,
    now: Millis,
    by: &str,
) -> Reservation {
    Reservation {
        id: reservation_id(kind, holder.fence),
        kind,
        holder_id: holder.holder_id.clone(),
        fence: holder.fence,
        run: holder.run.clone(),
        at: now,
        ends_at: (kind == ReservationKind::Cooldown).then(|| now.saturating_add(cooldown_ms)),
        reason,
        by: by.into(),
    }
}

/// The incident a blocked report raises (the next revision names it), for the holding of
/// `holder_id` with `fence` in `run`: a holder leaving, or the quarantine a removal left of it.
pub fn raise(
    state: &LockState,
    (holder_id, fence, run): (&str, u64, &crate::wire::RunIdentity),
    reason: Option<String>,
    now: Millis,
) -> Incident {
    Incident {
        id: incident_id(&state.lock, state.revision + 1),
        holder_id: holder_id.to_string(),
        fence,
        run: run.clone(),
        at: now,
        reason,
    }
}

/// Holdings removed for someone else (an expired lease) become quarantines: nobody proved their
/// resources clean. `before` is the holders as they were before the removal.
pub fn quarantine_removed(
    state: &mut LockState,
    before: &[Holder],
    removed: &[Removal],
    now: Millis,
    by: &str,
) -> Vec<String> {
    let mut ids = Vec::new();
    for r in removed {
        if let Some(h) = before
            .iter()
            .find(|h| h.holder_id == r.holder_id && h.fence == r.fence)
        {
            let q = reserve(h, ReservationKind::Quarantine, 0, None, now, by);
            if !state.reservations.iter().any(|x| x.id == q.id) {
                ids.push(q.id.clone());
                state.reservations.push(q);
            }
        }
    }
    ids
}

/// The lifecycle a config file meant, when the file is broken elsewhere: its `lifecycle` block
/// if that block alone passes its rules (ignoring a pool beside it), else none.
pub fn meant(text: &str) -> Option<LifecycleConfig> {
    let value: Value = serde_json::from_str(text).ok()?;
    let block = value.get("lifecycle")?.clone();
    let alone: Value = serde_json::json!({ "lifecycle": block });
    parse_lifecycle(&alone).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::lifecycle::{next_free_at, sweep};
    use crate::store::Document;
    use crate::test_support::{queue_entry, run_identity};
    use crate::wire::{QueueEntry, StateError};

    fn holder(id: &str, fence: u64) -> Holder {
        Holder {
            holder_id: id.into(),
            nonce: "n".into(),
            fence,
            run: run_identity("r1"),
            acquired_at: 0,
            expires_at: 60_000,
            lease_ms: 60_000,
            ceiling_at: 600_000,
            claimed_at: None,
            pool: None,
        }
    }

    fn record(lifecycle: Option<LifecycleConfig>) -> ConfigRecord {
        ConfigRecord {
            capacity: 1,
            lease: None,
            sha: None,
            read_at: 0,
            pool: None,
            lifecycle,
        }
    }

    fn on() -> Option<LifecycleConfig> {
        Some(LifecycleConfig {
            cooldown_seconds: 5,
            reasons: Vec::new(),
        })
    }

    #[test]
    fn schema_two_round_trips_and_newer_fails_closed() {
        let mut s = LockState::empty("x");
        migrate(&mut s);
        s.fence = 3;
        s.set_config_record(record(on()));
        s.reservations.push(reserve(
            &holder("a", 3),
            ReservationKind::Cooldown,
            5_000,
            Some("completed".into()),
            1_000,
            "release",
        ));
        let h = holder("a", 3);
        s.incident = Some(raise(&s, (&h.holder_id, h.fence, &h.run), None, 1_000));
        let text = s.render();
        assert!(text.contains("\"schema\": 2"), "{text}");
        assert!(
            text.contains("\"endsAt\": \"1970-01-01T00:00:06.000Z\""),
            "{text}"
        );
        assert_eq!(LockState::parse(&text, "x").unwrap(), s);
        let newer = text.replacen("\"schema\": 2", "\"schema\": 3", 1);
        assert!(matches!(
            LockState::parse(&newer, "x"),
            Err(StateError::NewerSchema {
                found: 3,
                supported: 2,
                ..
            })
        ));
        // Schema 1 carries none of it.
        let old = text.replacen("\"schema\": 2", "\"schema\": 1", 1);
        assert!(matches!(
            LockState::parse(&old, "x"),
            Err(StateError::Invalid { .. })
        ));
        // A cooldown without an end, a quarantine with one, a repeated id: refused.
        let mut bad = s.clone();
        bad.reservations[0].ends_at = None;
        assert!(LockState::parse(&bad.render(), "x").is_err());
        let mut twice = s.clone();
        twice.reservations.push(twice.reservations[0].clone());
        assert!(LockState::parse(&twice.render(), "x").is_err());
        // A plain schema-1 state renders as it always did: no lifecycle field at all.
        let plain = LockState::empty("x").render();
        assert!(
            !plain.contains("reservations")
                && !plain.contains("incident")
                && plain.contains("\"schema\": 1")
        );
    }

    #[test]
    fn activation_needs_an_idle_state_and_a_downgrade_is_refused() {
        let mut s = LockState::empty("x");
        assert_eq!(applies(&s, Some(&record(None))), Applies::Off);
        assert_eq!(
            applies(&s, Some(&record(on()))),
            Applies::On {
                config: on().unwrap(),
                activate: true
            }
        );
        s.holders.push(holder("a", 1));
        s.fence = 1;
        assert_eq!(applies(&s, Some(&record(on()))), Applies::ActivationBusy);
        let mut q = LockState::empty("x");
        q.queue.push(QueueEntry {
            lease_ms: 1,
            ..queue_entry("b", "n", run_identity("r1"))
        });
        assert_eq!(applies(&q, Some(&record(on()))), Applies::ActivationBusy);
        // Schema 2: on while busy; off by config only once nothing is kept.
        migrate(&mut s);
        s.set_config_record(record(on()));
        assert_eq!(
            applies(&s, Some(&record(on()))),
            Applies::On {
                config: on().unwrap(),
                activate: false
            }
        );
        assert_eq!(applies(&s, Some(&record(None))), Applies::Off);
        s.reservations.push(reserve(
            &holder("z", 1),
            ReservationKind::Quarantine,
            0,
            None,
            0,
            "release",
        ));
        assert_eq!(
            applies(&s, Some(&record(None))),
            Applies::Downgrade { kept: on() }
        );
        // The record keeps the lifecycle while reservations stand.
        s.set_config_record(record(None));
        assert_eq!(s.config.as_ref().unwrap().lifecycle, on());
        // No config known: the state's record decides.
        assert_eq!(
            applies(&s, None),
            Applies::On {
                config: on().unwrap(),
                activate: false
            }
        );
        // Migration is one way.
        let mut two = LockState::empty("x");
        migrate(&mut two);
        migrate(&mut two);
        assert_eq!(two.schema, LIFECYCLE_SCHEMA);
    }

    #[test]
    fn cooldowns_free_themselves_at_their_end_and_quarantines_never() {
        let mut s = LockState::empty("x");
        migrate(&mut s);
        s.reservations.push(reserve(
            &holder("a", 1),
            ReservationKind::Cooldown,
            5_000,
            None,
            1_000,
            "release",
        ));
        s.reservations.push(reserve(
            &holder("b", 2),
            ReservationKind::Quarantine,
            0,
            None,
            1_000,
            "release",
        ));
        assert_eq!(next_free_at(&s), Some(6_000));
        assert!(sweep(&mut s, 5_999).is_empty());
        assert_eq!(sweep(&mut s, 6_000), vec!["c1".to_string()]);
        assert!(sweep(&mut s, u64::MAX).is_empty());
        assert_eq!(s.reservations.len(), 1);
        assert_eq!(next_free_at(&s), None);
    }
}
