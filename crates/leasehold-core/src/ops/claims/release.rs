//! release and family release: a `released` version is written over this run's holding at the
//! token given (never a deleted ref). Idempotent: a release that landed, or one whose claim this
//! run has since released and re-acquired (the new holding names the release it came from), is
//! `already-released`; a token one or more renewals old is `stale`, naming the current one; a
//! claim this run does not hold is `not-held`. A family releases in one `updateRefs` every
//! member still this run's at its token; a member that is not (taken over, or renewed since) is
//! named, and its status is the family's: holding the others back would only keep them from
//! the next claimer until their leases ran out.

use super::{ClaimPlanner, Verb, Verdict};
use crate::store::{ClaimMember, ClaimSet};
use crate::wire::{ChangeAction, ClaimState, Status};

fn judge(p: &ClaimPlanner, m: &ClaimMember, token: &str) -> (Status, String) {
    let Some(x) = &m.payload else {
        return (Status::NotHeld, "the claim does not exist".into());
    };
    let ours = x.run_id == p.s.run_id;
    let head = m.oid.as_deref() == Some(token);
    let from_release = x.acquired_from.as_ref().is_some_and(|a| a.token == token);
    match x.state {
        ClaimState::Released if x.releases.as_deref() == Some(token) || ours => {
            (Status::AlreadyReleased, String::new())
        }
        ClaimState::Released => (Status::NotHeld, "released by another run".into()),
        ClaimState::Held if head && ours => (Status::Released, String::new()),
        ClaimState::Held if from_release => (
            Status::AlreadyReleased,
            "released, and acquired again since".into(),
        ),
        ClaimState::Held if ours => (
            Status::Stale,
            format!(
                "the token is not the current one; release with {}",
                m.oid.clone().unwrap_or_default()
            ),
        ),
        ClaimState::Held => (
            Status::NotHeld,
            format!("held by another run ({})", x.run_id),
        ),
    }
}

/// Judged on the version alone: a release needs no clock.
pub(super) fn plan(p: &ClaimPlanner, set: &ClaimSet) -> Verdict {
    let mut new = set.clone();
    let mut per = Vec::new();
    let mut worst: Option<(Status, String)> = None;
    let mut writes = 0;
    for (m, token) in set.members.iter().zip(&p.s.tokens) {
        let (status, detail) = judge(p, m, token);
        per.push((m.key.clone(), status));
        match status {
            Status::Released => {
                let mut payload = m.payload.clone().expect("held");
                payload.state = ClaimState::Released;
                payload.lease = None;
                payload.releases = Some(token.clone());
                payload.action = ChangeAction::Release;
                new.set(&m.key, payload);
                writes += 1;
            }
            Status::AlreadyReleased => {}
            other => {
                if worst
                    .as_ref()
                    .is_none_or(|(w, _)| super::rank(other) < super::rank(*w))
                {
                    worst = Some((other, detail));
                }
            }
        }
    }
    if let Some((status, detail)) = worst {
        if p.s.verb == Verb::FamilyRelease && writes > 0 {
            let released: Vec<&str> = per
                .iter()
                .filter(|(_, s)| *s == Status::Released)
                .map(|(k, _)| k.as_str())
                .collect();
            let detail = format!(
                "{detail}; the members still this run's were released ({})",
                released.join(", ")
            );
            return Verdict::WriteThen(new, status, per, detail);
        }
        let detail = if p.s.verb == Verb::FamilyRelease {
            format!("{detail}; nothing of the family was written")
        } else {
            detail
        };
        return Verdict::Done(status, per, detail);
    }
    if writes == 0 {
        return Verdict::Done(Status::AlreadyReleased, per, String::new());
    }
    Verdict::Write(new, Status::Released)
}
