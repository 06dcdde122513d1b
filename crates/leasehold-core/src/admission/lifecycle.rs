//! Admission under the lifecycle (the lock state's schema 2), around the lock's own rule:
//! nobody is admitted while the incident stands; cooldowns past their end free their slots;
//! a waiter on the runner that left a quarantine takes it over first (its resource is on that
//! machine, and only that runner can clean it); then the rule admits into what holders and
//! reservations leave free. A state with no reservation and no incident is admitted exactly as
//! before (the rule alone).

use super::{Admission, Fifo, LockRule};
use crate::wire::time::Millis;
use crate::wire::{Holder, LockState, Reservation, ReservationKind};

/// Admits waiters of `doc` under `rule` and the lifecycle. Returns the holder ids admitted.
pub fn admit(rule: &LockRule, doc: &mut LockState, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
    #[cfg(feature = "planted-bugs")]
    let incident =
        doc.incident.is_some() && !crate::planted::active(crate::planted::Bug::AdmitDuringIncident);
    #[cfg(not(feature = "planted-bugs"))]
    let incident = doc.incident.is_some();
    if incident {
        return Vec::new();
    }
    if !doc.reservations.is_empty() {
        sweep(doc, now);
    }
    if doc.reservations.is_empty() {
        return rule.admit_alone(doc, now, max_ttl_ms);
    }
    // A pool keeps no reservations (its config refuses `lifecycle`): one that has them anyway
    // (a plain lock's, switched to a pool while they stood) admits nobody new rather than
    // over-run a resource, and reclaims none either (a reclaim would seat a waiter on no
    // resource, past its partition and the pool's caps).
    let LockRule::Fifo(f) = rule else {
        return Vec::new();
    };
    let mut admitted = reclaim(doc, now, max_ttl_ms);
    #[allow(unused_mut)]
    let mut free = f.capacity.saturating_sub(doc.reservations.len() as u32);
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::ReservationsUncounted) {
        free = f.capacity;
    }
    admitted.extend(Fifo { capacity: free }.admit(doc, now, max_ttl_ms));
    admitted
}

/// Same-runner reclaim: for each quarantine left on a named runner, the first waiter on that
/// runner becomes a holder in its slot, with the next fence, in the same write that removes
/// the quarantine. Returns the holder ids admitted.
pub fn reclaim(doc: &mut LockState, now: Millis, max_ttl_ms: Millis) -> Vec<String> {
    let mut admitted = Vec::new();
    let mut i = 0;
    while i < doc.reservations.len() {
        let r = &doc.reservations[i];
        let runner = r.run.runner_name.as_str();
        let waiter = (r.kind == ReservationKind::Quarantine && !runner.is_empty())
            .then(|| {
                doc.queue
                    .iter()
                    .position(|q| same_runner(&q.run.runner_name, runner))
            })
            .flatten();
        let Some(at) = waiter else {
            i += 1;
            continue;
        };
        doc.reservations.remove(i);
        let entry = doc.queue.remove(at);
        doc.fence += 1;
        let lease_ms = entry.lease_ms.min(max_ttl_ms);
        admitted.push(entry.holder_id.clone());
        doc.holders.push(Holder {
            holder_id: entry.holder_id,
            nonce: entry.nonce,
            fence: doc.fence,
            run: entry.run,
            acquired_at: now,
            expires_at: now.saturating_add(lease_ms),
            lease_ms,
            ceiling_at: now.saturating_add(max_ttl_ms),
            claimed_at: Some(entry.last_seen_at),
            pool: None,
        });
    }
    admitted
}

/// Whether a waiter on `waiter`'s runner may reclaim a quarantine left on `runner`.
fn same_runner(waiter: &str, runner: &str) -> bool {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::ReclaimAnyRunner) {
        return true;
    }
    waiter == runner
}

/// Frees every cooldown whose end has passed by GitHub's clock (`server_now`). Returns the ids
/// freed.
pub fn sweep(state: &mut LockState, server_now: Millis) -> Vec<String> {
    #[cfg(feature = "planted-bugs")]
    let ignores_end = crate::planted::active(crate::planted::Bug::CooldownIgnoresEnd);
    #[cfg(not(feature = "planted-bugs"))]
    let ignores_end = false;
    let over = |r: &Reservation| {
        r.kind == ReservationKind::Cooldown
            && (ignores_end || r.ends_at.is_some_and(|end| server_now >= end))
    };
    let freed = state
        .reservations
        .iter()
        .filter(|r| over(r))
        .map(|r| r.id.clone())
        .collect();
    state.reservations.retain(|r| !over(r));
    freed
}

/// The next instant a cooldown frees itself, by GitHub's clock.
pub fn next_free_at(state: &LockState) -> Option<Millis> {
    state.reservations.iter().filter_map(|r| r.ends_at).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{queue_entry, run_identity};
    use crate::wire::{Incident, QueueEntry};

    fn waiter(id: &str, runner: &str) -> QueueEntry {
        queue_entry(id, "n", run_identity(runner))
    }

    fn reservation(
        id: &str,
        kind: ReservationKind,
        runner: &str,
        ends_at: Option<Millis>,
    ) -> Reservation {
        Reservation {
            id: id.into(),
            kind,
            holder_id: "gone".into(),
            fence: 1,
            run: run_identity(runner),
            at: 0,
            ends_at,
            reason: None,
            by: "release".into(),
        }
    }

    fn lock(queue: Vec<QueueEntry>, reservations: Vec<Reservation>) -> LockState {
        let mut s = LockState::empty("x");
        s.schema = 2;
        s.fence = 1;
        s.queue = queue;
        s.reservations = reservations;
        s
    }

    const FIFO2: LockRule = LockRule::Fifo(Fifo { capacity: 2 });

    /// A plain lock's quarantine, standing when its config became a pool's: a waiter on the
    /// quarantine's runner reclaims nothing under the pool's rule (it would hold no resource).
    #[test]
    fn a_pool_with_reservations_reclaims_nothing() {
        use crate::admission::Pool;
        use crate::wire::{PoolConfig, PoolRequest, Resource};
        let rule = LockRule::Pool(Pool {
            config: PoolConfig {
                resources: vec![Resource {
                    name: "a".into(),
                    capacity: 1,
                    tags: Vec::new(),
                }],
                ..PoolConfig::default()
            },
            capacity: 1,
        });
        let mut w = waiter("w", "r9");
        w.pool = Some(PoolRequest {
            partition: Some(vec!["*".into()]),
            ..PoolRequest::default()
        });
        let mut s = lock(
            vec![w],
            vec![reservation("q1", ReservationKind::Quarantine, "r9", None)],
        );
        assert_eq!(admit(&rule, &mut s, 0, 60_000), Vec::<String>::new());
        assert_eq!(s.queue.len(), 1, "still waiting");
        assert_eq!(s.reservations.len(), 1, "the quarantine stands");
        assert_eq!(
            admit(&FIFO2, &mut s, 0, 60_000),
            vec!["w"],
            "a plain lock's reclaim"
        );
    }

    #[test]
    fn reservations_take_capacity_until_a_cooldown_ends() {
        let mut s = lock(
            vec![waiter("a", "r1"), waiter("b", "r2")],
            vec![reservation(
                "c1",
                ReservationKind::Cooldown,
                "r9",
                Some(10_000),
            )],
        );
        assert_eq!(
            admit(&FIFO2, &mut s.clone(), 9_999, 600_000),
            vec!["a".to_string()]
        );
        assert_eq!(
            admit(&FIFO2, &mut s, 10_000, 600_000),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(
            s.reservations.is_empty(),
            "the cooldown freed itself at its end"
        );
        let mut q = lock(
            vec![waiter("a", "r1"), waiter("b", "r2")],
            vec![
                reservation("q1", ReservationKind::Quarantine, "r9", None),
                reservation("q2", ReservationKind::Quarantine, "", None),
            ],
        );
        assert!(
            admit(&FIFO2, &mut q, u64::MAX, 600_000).is_empty(),
            "quarantines never free themselves"
        );
    }

    #[test]
    fn nobody_is_admitted_while_the_incident_stands() {
        let mut s = lock(vec![waiter("a", "r1")], Vec::new());
        s.incident = Some(Incident {
            id: "x-incident-3".into(),
            holder_id: "gone".into(),
            fence: 1,
            run: run_identity("r9"),
            at: 0,
            reason: None,
        });
        assert!(admit(&FIFO2, &mut s, 0, 600_000).is_empty());
        assert_eq!(s.queue.len(), 1);
    }

    #[test]
    fn a_waiter_on_the_quarantines_runner_takes_it_over_first() {
        let mut s = lock(
            vec![waiter("a", "r1"), waiter("b", "r9")],
            vec![
                reservation("q1", ReservationKind::Quarantine, "r9", None),
                reservation("q2", ReservationKind::Quarantine, "r8", None),
            ],
        );
        assert_eq!(admit(&FIFO2, &mut s, 0, 600_000), vec!["b".to_string()]);
        assert_eq!(s.holders[0].fence, 2, "a new fence");
        assert_eq!(
            s.reservations
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>(),
            vec!["q2"]
        );
        assert_eq!(s.queue.len(), 1, "a keeps waiting: q2 holds the other slot");
    }
}
