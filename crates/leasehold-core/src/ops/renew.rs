//! renew: extend this claim's lease (checked by holder id *and* nonce), never past its ceiling.
//!
//! Results: `renewed` (the new expiry is written, or the holding is at its ceiling already),
//! `not-due` (`if-due` and the renew time has not come; nothing written), `lost` (the holding is
//! gone or belongs to another claim: proven, never guessed). A transport failure is not a lost
//! holding: it fails with its class, and a guard keeps its child running until its local
//! deadline.
//!
//! Proof of loss: a version that shows this holder id under another nonce (nonces never come
//! back), or this claim absent from a version that our own compare-and-swap write was accepted
//! on. An absence seen only in a read may be a stale cache, so it is confirmed by a write first.

use crate::engine::{lease_view, Decision, PlanCtx, Planner, Provenance};
use crate::input::{RawInputs, Reader};
use crate::policy::RetryPolicy;
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{ChangeAction, Failure, FailureCode, InputError, LockState, Outcome, ResultWord};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenewSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub holder_id: String,
    pub nonce: String,
    /// Renew only when the renew time has passed.
    pub if_due: bool,
    pub retry: RetryPolicy,
    /// This job's run attempt: another nonce under a *newer* attempt proves the claim lost.
    pub run_attempt: u32,
    /// How the work on a pool's resource goes (`outcome`, `retry-at`), if said: recorded with
    /// the renewal (a renewal that changes the books is written even when not due).
    pub pool_outcome: Option<super::pool::RunOutcome>,
}

impl RenewSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let (lock, repository, state_branch) = r.lock_target()?;
        let run = r.run_identity()?;
        let holder_id = r.holder_id(&run)?;
        let nonce = r.nonce()?;
        let if_due = r.bool("if-due")?.unwrap_or(false);
        let retry = r.retry_policy();
        let pool_outcome = super::pool::parse_outcome(&r)?;
        let s = RenewSettings {
            lock,
            repository,
            state_branch,
            holder_id,
            nonce,
            if_due,
            retry,
            run_attempt: run.run_attempt,
            pool_outcome,
        };
        Ok((s, r.warnings))
    }
}

pub struct RenewPlanner {
    pub s: RenewSettings,
    /// The expiry this renewal wrote, once written.
    wrote: Option<Millis>,
    /// The pool outcome is in the books (our write of it was accepted, or nothing to change).
    recorded: bool,
    /// A write carrying the pool outcome was sent.
    outcome_sent: bool,
    /// The last write sent was due (it extended the lease), not only the pool outcome's.
    extending: bool,
    /// The backoff that write put in the books (its resource and entry): found in a version
    /// another writer made after it, the outcome is recorded already (never counted twice).
    sent_backoff: Option<(String, crate::wire::Backoff)>,
    /// The last write's outcome is unknown (it may have landed): only then is a version another
    /// writer made taken to hold its hit. After a conflict it certainly did not.
    in_doubt: bool,
}

impl RenewPlanner {
    pub fn new(s: RenewSettings) -> Self {
        RenewPlanner {
            s,
            wrote: None,
            recorded: false,
            outcome_sent: false,
            extending: false,
            sent_backoff: None,
            in_doubt: false,
        }
    }

    fn outcome(&self, result: ResultWord) -> Outcome {
        let mut o = Outcome::new(
            result,
            matches!(result, ResultWord::Renewed | ResultWord::NotDue),
            &self.s.lock,
            &self.s.holder_id,
        );
        o.nonce = Some(self.s.nonce.clone());
        o
    }

    fn lost(&self, why: String) -> Decision {
        Decision::Finish(
            self.outcome(ResultWord::Lost)
                .with_error(Failure::new(FailureCode::Lost, why)),
        )
    }
}

impl Planner for RenewPlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        true
    }

    /// The version a renewal knew last goes to the job's later steps as acquire's does (the
    /// guard's renewals write, so acquire's is out of date by release), by the same rule.
    fn carries(&self, doc: &LockState) -> bool {
        crate::store::carry::uncontended(doc)
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        self.outcome(ResultWord::Failed).with_error(failure)
    }

    fn write_unknown(&mut self) {
        self.in_doubt = true;
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        let id = self.s.holder_id.as_str();
        let st = ctx.state;
        match st.holder(id) {
            Some(h) if h.nonce == self.s.nonce => {
                let policy = ctx.lease.clone();
                let lease = lease_view(h, &policy, &ctx.clock);
                let finish = |result: ResultWord, planner: &Self| {
                    let mut o = planner.outcome(result);
                    o.fence = Some(h.fence);
                    o.lease = Some(lease.clone());
                    Decision::Finish(o)
                };
                if self.outcome_sent && ctx.provenance == Provenance::Written {
                    self.recorded = true;
                }
                // Our write of a rate limit may have landed, its answer lost, with another
                // writer's version after it: the hit is in the books if its entry (or a later
                // one of the same resource) is.
                if let (Some((resource, mine)), Provenance::Read, true) = (
                    &self.sent_backoff,
                    ctx.provenance,
                    std::mem::take(&mut self.in_doubt),
                ) {
                    let entry = st.pool.as_ref().and_then(|b| b.backoff.get(resource));
                    if entry.is_some_and(|b| b.hits >= mine.hits && b.until >= mine.until) {
                        self.recorded = true;
                    }
                }
                let mut books = st.clone();
                let books_change = match self.s.pool_outcome {
                    Some(outcome) if !self.recorded => {
                        super::pool::record_outcome(&mut books, id, outcome, ctx.server_now)
                    }
                    _ => false,
                };
                if !books_change {
                    self.recorded = true;
                }
                if self.wrote == Some(h.expires_at) && !books_change && !self.extending {
                    // Only the pool outcome was written: the lease was not due and stays as it
                    // was, so this is `not-due`, not `renewed`.
                    ctx.info(format!(
                        "recorded the outcome for {id}'s resource on {}; the lease was not due, it stays until {}",
                        self.s.lock,
                        format_rfc3339(h.expires_at)
                    ));
                    return finish(ResultWord::NotDue, self);
                }
                if self.wrote == Some(h.expires_at) && !books_change {
                    ctx.info(format!(
                        "renewed {id} on {} until {}",
                        self.s.lock,
                        format_rfc3339(h.expires_at)
                    ));
                    return finish(ResultWord::Renewed, self);
                }
                let due =
                    !self.s.if_due || policy.renewal_due(ctx.server_now, h.expires_at, h.lease_ms);
                if !due && !books_change {
                    return finish(ResultWord::NotDue, self);
                }
                let target = h
                    .expires_at
                    .max(ctx.server_now.saturating_add(h.lease_ms).min(h.ceiling_at));
                if target <= h.expires_at && !books_change {
                    // Nothing to extend: at the ceiling, or renewed as far already (by a judge
                    // whose estimate of GitHub's clock was a little ahead of this one's).
                    if h.expires_at >= h.ceiling_at {
                        ctx.warn(format!(
                            "{id} is at its ceiling ({}): the lease cannot be extended",
                            format_rfc3339(h.ceiling_at)
                        ));
                    } else {
                        ctx.info(format!(
                            "{id} is renewed until {} already: nothing to extend",
                            format_rfc3339(h.expires_at)
                        ));
                    }
                    return finish(ResultWord::Renewed, self);
                }
                let mut doc = books;
                if due {
                    if let Some(h) = doc.holders.iter_mut().find(|h| h.holder_id == id) {
                        h.expires_at = h.expires_at.max(target);
                    }
                }
                self.wrote = Some(doc.holder(id).map_or(target, |h| h.expires_at));
                self.outcome_sent |= books_change;
                if books_change {
                    self.sent_backoff = h.pool.as_ref().and_then(|seat| {
                        let entry = doc.pool.as_ref()?.backoff.get(&seat.resource)?;
                        Some((seat.resource.clone(), entry.clone()))
                    });
                }
                self.extending = due;
                Decision::Write {
                    doc,
                    action: ChangeAction::Renew,
                }
            }
            // Another claim holds this holder id. Proven when it is a newer attempt's (nonces
            // and attempts never go back) or when our own write made this version; a read may
            // be stale (from before this claim took the holding over), so confirm otherwise.
            Some(h)
                if h.run.run_attempt > self.s.run_attempt
                    || ctx.provenance == Provenance::Written =>
            {
                self.lost(format!(
                    "{id} on {} now belongs to another claim (run attempt {}, fence {})",
                    self.s.lock, h.run.run_attempt, h.fence
                ))
            }
            Some(_) => Decision::Write {
                doc: st.clone(),
                action: ChangeAction::RenewCheck,
            },
            None => match ctx.provenance {
                Provenance::Written => {
                    let why =
                        match st.last_change.as_ref().and_then(|c| {
                            c.removed.iter().find(|r| r.holder_id == id).map(|r| (c, r))
                        }) {
                            Some((c, r)) => format!(
                                "its lease ran out at {} and {} removed it",
                                format_rfc3339(r.expires_at),
                                c.by
                            ),
                            None => "it was released or removed".to_string(),
                        };
                    self.lost(format!("{id} no longer holds {}: {why}", self.s.lock))
                }
                // A read may be stale: confirm the absence on this version before calling it lost.
                Provenance::Read => Decision::Write {
                    doc: st.clone(),
                    action: ChangeAction::RenewCheck,
                },
            },
        }
    }
}
