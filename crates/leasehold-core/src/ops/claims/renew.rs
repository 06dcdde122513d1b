//! renew: this run's holding at the token given gets a new version (a new token) with its
//! expiry moved to `now + ttl`, never past the ceiling. `if-due` writes only once `renewAfter`
//! has passed. At the ceiling it is `stale` (naming it); a token older than the head that this
//! run still holds is `stale` (naming the head); a holding that is another run's now is `lost`.

use super::{ClaimPlanner, Verdict};
use crate::store::ClaimSet;
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{ChangeAction, ClaimState, Status};

pub(super) fn plan(p: &ClaimPlanner, set: &ClaimSet, now: Millis) -> Verdict {
    let m = &set.members[0];
    let token = &p.s.tokens[0];
    let one = |s: Status, d: String| Verdict::Done(s, vec![(m.key.clone(), s)], d);
    let Some(x) = &m.payload else {
        return one(Status::NotHeld, "the claim does not exist".into());
    };
    let ours = x.run_id == p.s.run_id;
    if m.oid.as_ref() != Some(token) {
        return match (ours, x.state) {
            (true, ClaimState::Held) => one(
                Status::Stale,
                format!(
                    "the token is not the current one; renew with {}",
                    m.oid.clone().unwrap_or_default()
                ),
            ),
            (true, ClaimState::Released) => one(Status::NotHeld, "this run released it".into()),
            (false, _) => one(
                Status::Lost,
                format!("the claim is another run's now ({})", x.run_id),
            ),
        };
    }
    let (ClaimState::Held, Some(l), true) = (x.state, &x.lease, ours) else {
        return match ours {
            true => one(Status::NotHeld, "this run released it".into()),
            false => one(
                Status::Lost,
                format!("the token is another run's ({})", x.run_id),
            ),
        };
    };
    if l.expires_at >= l.ceiling_at {
        return one(
            Status::Stale,
            format!(
                "at the ceiling {} (claimed at {}): release, and claim again",
                format_rfc3339(l.ceiling_at),
                format_rfc3339(l.claimed_at)
            ),
        );
    }
    if p.s.if_due && now < l.renew_after {
        return one(
            Status::NotDue,
            format!("not due before {}", format_rfc3339(l.renew_after)),
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
    let mut new = set.clone();
    new.set(&m.key, payload);
    Verdict::Write(new, Status::Renewed)
}
