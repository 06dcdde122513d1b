//! renew and family renew: this run's holding at the token given gets a new version (a new
//! token) with its expiry moved to `now + ttl`, never past the ceiling. `if-due` writes only
//! once `renewAfter` has passed. At the ceiling it is `stale` (naming it); a token older than the
//! head that this run still holds is `stale` (naming the head); a holding that is another run's
//! now is `lost`. A family renews all its members in one `updateRefs` (when any of them is due),
//! or none: one member lost, released or stale decides for the family (`lost` before `not-held`
//! before `stale`), as a guard of the family must stop its command when any member is gone.

use super::{ClaimPlanner, Verdict};
use crate::store::{ClaimMember, ClaimSet};
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{ChangeAction, ClaimPayload, ClaimState, Status};

/// One member's renewal: its new payload and whether it was due, or why it cannot be renewed.
enum Judged {
    Renew(Box<ClaimPayload>, bool),
    Stop(Status, String),
}

fn judge(p: &ClaimPlanner, m: &ClaimMember, token: &str, now: Millis) -> Judged {
    let stop = |s: Status, d: String| Judged::Stop(s, d);
    let Some(x) = &m.payload else {
        return stop(Status::NotHeld, "the claim does not exist".into());
    };
    let ours = x.run_id == p.s.run_id;
    if m.oid.as_deref() != Some(token) {
        return match (ours, x.state) {
            (true, ClaimState::Held) => stop(
                Status::Stale,
                format!(
                    "the token is not the current one; renew with {}",
                    m.oid.clone().unwrap_or_default()
                ),
            ),
            (true, ClaimState::Released) => stop(Status::NotHeld, "this run released it".into()),
            (false, _) => stop(
                Status::Lost,
                format!("the claim is another run's now ({})", x.run_id),
            ),
        };
    }
    let (ClaimState::Held, Some(l), true) = (x.state, &x.lease, ours) else {
        return match ours {
            true => stop(Status::NotHeld, "this run released it".into()),
            false => stop(
                Status::Lost,
                format!("the token is another run's ({})", x.run_id),
            ),
        };
    };
    if l.expires_at >= l.ceiling_at {
        return stop(
            Status::Stale,
            format!(
                "at the ceiling {} (claimed at {}): release, and claim again",
                format_rfc3339(l.ceiling_at),
                format_rfc3339(l.claimed_at)
            ),
        );
    }
    let mut payload = x.clone();
    let mut lease = l.clone();
    lease.expires_at =
        p.s.lease
            .renewed_expiry(now, l.ceiling_at)
            .max(l.expires_at);
    lease.renew_after = (now + p.s.lease.renew_ms).min(lease.expires_at);
    lease.renew_count += 1;
    payload.lease = Some(lease);
    payload.action = ChangeAction::Renew;
    payload.run = p.s.run.clone().or(payload.run);
    for (k, v) in &p.s.metadata {
        payload.metadata.insert(k.clone(), v.clone());
    }
    Judged::Renew(Box::new(payload), now >= l.renew_after)
}

pub(super) fn plan(p: &ClaimPlanner, set: &ClaimSet, now: Millis) -> Verdict {
    let mut new = set.clone();
    let mut per = Vec::new();
    let mut worst: Option<(Status, String)> = None;
    let mut due = false;
    let mut not_due_before: Option<Millis> = None;
    for (m, token) in set.members.iter().zip(&p.s.tokens) {
        match judge(p, m, token, now) {
            Judged::Renew(payload, is_due) => {
                per.push((m.key.clone(), Status::Renewed));
                due |= is_due;
                if let Some(l) = m.payload.as_ref().and_then(|x| x.lease.as_ref()) {
                    let at = not_due_before.get_or_insert(l.renew_after);
                    *at = (*at).min(l.renew_after);
                }
                new.set(&m.key, *payload);
            }
            Judged::Stop(status, detail) => {
                per.push((m.key.clone(), status));
                if worst
                    .as_ref()
                    .is_none_or(|(w, _)| super::rank(status) < super::rank(*w))
                {
                    worst = Some((status, detail));
                }
            }
        }
    }
    if let Some((status, detail)) = worst {
        let detail = if set.members.len() > 1 {
            let key = per.iter().find(|(_, s)| *s == status).map(|(k, _)| k);
            format!(
                "{}: {detail}; nothing of the family was written",
                key.map_or("", |k| k.as_str())
            )
        } else {
            detail
        };
        return Verdict::Done(status, per, detail);
    }
    if p.s.if_due && !due {
        let at = not_due_before.unwrap_or(now);
        let per = per.into_iter().map(|(k, _)| (k, Status::NotDue)).collect();
        return Verdict::Done(
            Status::NotDue,
            per,
            format!("not due before {}", format_rfc3339(at)),
        );
    }
    Verdict::Write(new, Status::Renewed)
}
