//! verify, read, adopt: read only.
//!
//! * verify: the token is the head and this run's live holding → `held`; inside the last
//!   `minRemaining` of its lease (the ceiling included) → `renew-required`; an older token this
//!   run still holds → `stale`; another run's → `lost`; released or absent → `not-held`.
//! * read: the claim as it is (`ok`).
//! * adopt: after an unknown outcome, proves by the head's payload (its run id) whether the
//!   write was this run's: `adopted` with the token (`renew-required` inside the last
//!   `minRemaining` of its lease, as verify), else `lost`. Never a guess.

use super::{ClaimPlanner, Verb, Verdict};
use crate::store::ClaimSet;
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{ClaimLease, ClaimState, Status};

/// `local_now` is this machine's clock: this run's own deadline is judged on it, by the upper
/// bound of GitHub's clock (`claim_lease_view`'s deadline), so a late answer never makes a
/// lease look longer than it may be.
pub(super) fn plan(p: &ClaimPlanner, set: &ClaimSet, local_now: Millis) -> Verdict {
    let m = &set.members[0];
    let one = |s: Status, d: String| Verdict::Done(s, vec![(m.key.clone(), s)], d);
    // Inside the last `minRemaining` of this run's lease (the ceiling's included): renew first.
    let renew_required = |l: &ClaimLease| {
        if local_now
            < p.clock
                .local_deadline_for(p.s.lease.local_deadline(l.expires_at))
        {
            return None;
        }
        Some(one(
            Status::RenewRequired,
            if l.expires_at >= l.ceiling_at {
                format!(
                    "inside the last minutes before the ceiling {}: release rather than renew",
                    format_rfc3339(l.ceiling_at)
                )
            } else {
                format!(
                    "less than minRemaining left before {}",
                    format_rfc3339(l.expires_at)
                )
            },
        ))
    };
    match p.s.verb {
        Verb::Read => return one(Status::Ok, String::new()),
        Verb::Adopt => {
            return match &m.payload {
                // This run's write landed, but its lease may be near its end (or past it, an
                // unknown outcome resolved late): proceed only on a lease that is not.
                Some(x) if x.run_id == p.s.run_id && x.state == ClaimState::Held => {
                    if let Some(v) = x.lease.as_ref().and_then(renew_required) {
                        return v;
                    }
                    let detail = match (&p.s.candidate, &m.oid) {
                        (Some(c), Some(o)) if c != o => {
                            format!("this run's; the head is {o}, a later version than {c}")
                        }
                        _ => "this run's write landed".into(),
                    };
                    one(Status::Adopted, detail)
                }
                Some(x) => one(
                    Status::Lost,
                    format!("the head is not this run's ({} {:?})", x.run_id, x.state),
                ),
                None => one(
                    Status::Lost,
                    "the claim does not exist: the write did not land".into(),
                ),
            };
        }
        _ => {}
    }
    let token = &p.s.tokens[0];
    let Some(x) = &m.payload else {
        return one(Status::NotHeld, "the claim does not exist".into());
    };
    let ours = x.run_id == p.s.run_id;
    match (x.state, &x.lease) {
        (ClaimState::Held, Some(l)) if ours && m.oid.as_ref() == Some(token) => {
            renew_required(l).unwrap_or_else(|| one(Status::Held, String::new()))
        }
        (ClaimState::Held, _) if ours => one(
            Status::Stale,
            format!(
                "the token is not the current one: {}",
                m.oid.clone().unwrap_or_default()
            ),
        ),
        (ClaimState::Held, _) => one(Status::Lost, format!("held by another run ({})", x.run_id)),
        (ClaimState::Released, _) => one(Status::NotHeld, "released".into()),
    }
}
