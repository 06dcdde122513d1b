//! claim, takeover, family claim: absent or released → held (`acquired`); held past expiry,
//! grace and skew → taken over (`taken-over`), unless `no-takeover` (`expired`, with the token a
//! takeover supersedes); held and live → `contended` (with `eligibleAt`); held by this very job
//! → `already-held`. A family is written only when every member can be, in one `updateRefs`;
//! otherwise nothing is written (`family-aborted`).

use super::{takeable, ClaimPlanner, Verb, Verdict};
use crate::store::ClaimSet;
use crate::wire::time::Millis;
use crate::wire::{AcquiredFrom, ChangeAction, ClaimState, Status};

pub(super) fn plan(p: &ClaimPlanner, set: &ClaimSet, now: Millis) -> Verdict {
    let mut new = set.clone();
    let mut per = Vec::new();
    let mut took_over = false;
    let mut blocked: Option<Status> = None;
    // takeover: the ref is no longer at the version it names (why it is contended).
    let mut moved: Option<String> = None;
    for m in &set.members {
        let seq = m.payload.as_ref().map_or(0, |x| x.seq);
        let status = match &m.payload {
            None => Status::Acquired,
            Some(x) if x.state == ClaimState::Released => Status::Acquired,
            Some(x)
                if p.s.holder.is_some()
                    && x.run
                        .as_ref()
                        .map(|r| crate::input::holder_id(&r.repository, r.run_id, &r.job, ""))
                        == p.s.holder.clone()
                    && !takeable(&p.s.lease, x, now) =>
            {
                Status::AlreadyHeld
            }
            Some(x) if !takeable(&p.s.lease, x, now) => Status::Contended,
            Some(_) if p.s.no_takeover => Status::Expired,
            Some(_) => Status::TakenOver,
        };
        // takeover names the token it supersedes: anything else there is not what it judged.
        let status = match (p.s.verb, status) {
            (Verb::Takeover, Status::TakenOver | Status::Acquired) if m.oid != p.s.supersedes => {
                moved.get_or_insert(format!(
                    "the ref is no longer at {} (it is at {}, {}): nothing taken over; run claim to take it as it is now",
                    p.s.supersedes.as_deref().unwrap_or_default(),
                    m.oid.as_deref().unwrap_or("nothing"),
                    match &m.payload {
                        Some(x) if x.state == ClaimState::Released => "released",
                        Some(_) => "held",
                        None => "absent",
                    }
                ));
                Status::Contended
            }
            (_, s) => s,
        };
        per.push((m.key.clone(), status));
        match status {
            Status::Acquired | Status::TakenOver => {
                let action = if status == Status::TakenOver {
                    took_over = true;
                    ChangeAction::from_word("takeover")
                } else {
                    ChangeAction::Acquire
                };
                let mut payload = p.held(&m.key, now, seq, action);
                match &m.payload {
                    Some(x) if x.state == ClaimState::Released => {
                        payload.acquired_from = Some(AcquiredFrom {
                            released: m.oid.clone().unwrap_or_default(),
                            token: x.releases.clone().unwrap_or_default(),
                            run_id: x.run_id.clone(),
                        });
                    }
                    Some(_) => payload.supersedes = m.oid.clone(),
                    None => {}
                }
                new.set(&m.key, payload);
            }
            other => {
                blocked.get_or_insert(other);
            }
        }
    }
    let family = p.s.verb == Verb::FamilyClaim;
    match blocked {
        Some(_) if family => Verdict::Done(
            Status::FamilyAborted,
            per,
            "a member is not free: nothing of the family was written".into(),
        ),
        Some(status) => {
            let detail = match status {
                _ if moved.is_some() => moved.unwrap_or_default(),
                Status::Expired => "expired: run the printed takeover to take it".to_string(),
                Status::AlreadyHeld => "this job holds it already".to_string(),
                _ => "held by another run".to_string(),
            };
            Verdict::Done(status, per, detail)
        }
        None => Verdict::Write(
            new,
            if took_over {
                Status::TakenOver
            } else {
                Status::Acquired
            },
        ),
    }
}
