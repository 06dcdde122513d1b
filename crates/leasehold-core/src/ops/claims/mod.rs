//! The claim operations: per-item claims kept in git refs (`store::claim`), planned on a
//! [`ClaimSet`] by the engine's read / plan / compare-and-swap loop like every lock operation.
//! One planner, [`ClaimPlanner`], holds what every verb shares (the settings, what this run
//! wrote, the report); each verb's decision on one version is its own file:
//!
//! * `acquire.rs`: claim, takeover and family claim (absent or released → held; expired →
//!   taken over; live → contended);
//! * `renew.rs`: renew (`if-due`, the ceiling, a rotated token);
//! * `release.rs`: release and family release (idempotent; stale tokens named);
//! * `inspect.rs`: verify, read and adopt (read only);
//! * `list.rs`: list, a paginated read of a whole namespace (its own small read loop);
//! * `next.rs`: the `next` lines and the result document.
//!
//! Every transition is one `updateRefs` whose `beforeOid`s are the versions planned on; a
//! family is one call, so it lands whole or not at all. A version this run wrote is recognised
//! by its payload (this run's id and the fields it set), never guessed.

mod acquire;
mod inspect;
pub mod list;
pub mod next;
mod release;
mod renew;
pub mod settings;

use crate::engine::{ClockEstimate, Decision, PlanCtx, Planner, Provenance};
use crate::store::{ClaimMember, ClaimSet};
use crate::wire::time::Millis;
use crate::wire::{
    ChangeAction, ClaimItem, ClaimLease, ClaimPayload, ClaimReport, ClaimState, ClockOffsets,
    Failure, LeasePolicy, LeaseView, Outcome, ResultWord, Status, CLAIM_KIND, CLAIM_SCHEMA,
};
pub use settings::{ClaimSettings, Verb};

pub struct ClaimPlanner {
    pub s: ClaimSettings,
    /// The commits this operation created for its updates: a member at one of them is this
    /// operation's own write (never a payload that merely looks the same: a repeated command
    /// writes an identical payload, and its first run's commit is not this run's write).
    created: Vec<String>,
    /// The (ref, commit) pairs of the last write: an unknown outcome's `candidate`s.
    last_created: Vec<(String, String)>,
    /// The job is being cancelled (SIGINT, SIGTERM): a claim or renewal writes nothing more; a
    /// write that landed is still reported (its token is what gives it back).
    cancelled: bool,
    /// A write's outcome is unknown and no plan has seen a read since.
    pending_write: bool,
    /// What the first write was (acquire: `acquired` or `taken-over`).
    intent: Option<Status>,
    /// The per-item statuses and detail the write's success reports with `intent` (a family
    /// release that released what was still this run's and names what was not).
    intent_report: (Vec<(String, Status)>, String),
    /// The last version planned on, for a failure's report.
    last: Option<ClaimSet>,
    repository_id: Option<String>,
    /// GitHub's clock as the last plan knew it: turns this run's lease into local deadlines.
    clock: ClockEstimate,
}

/// What a verb decided for one version.
pub(crate) enum Verdict {
    /// Write the set as changed; on success finish with this status.
    Write(ClaimSet, Status),
    /// Write the set as changed; on success finish with this status, these per-item statuses
    /// and this detail.
    WriteThen(ClaimSet, Status, Vec<(String, Status)>, String),
    /// Finish: the status, per-item statuses and a detail for people.
    Done(Status, Vec<(String, Status)>, String),
}

impl ClaimPlanner {
    pub fn new(s: ClaimSettings) -> Self {
        ClaimPlanner {
            repository_id: s.repository_id.clone(),
            s,
            created: Vec::new(),
            last_created: Vec::new(),
            cancelled: false,
            pending_write: false,
            intent: None,
            intent_report: (Vec::new(), String::new()),
            last: None,
            clock: ClockEstimate::default(),
        }
    }

    /// The set as the previous command printed it (renew, release with `prior`), to plan on
    /// without reading.
    pub fn presumed(&self) -> Option<ClaimSet> {
        let prior = self.s.prior.clone()?;
        let key = &self.s.keys[0];
        Some(ClaimSet {
            namespace: self.s.namespace.clone(),
            members: vec![ClaimMember {
                key: key.clone(),
                ref_name: crate::store::claim::claim_ref(&self.s.namespace, key),
                oid: Some(self.s.tokens[0].clone()),
                payload: Some(prior),
                changed: false,
            }],
        })
    }

    /// Whether `m` is at a commit this operation created.
    fn wrote(&self, m: &ClaimMember) -> bool {
        m.oid.as_ref().is_some_and(|oid| self.created.contains(oid))
    }

    /// A new held payload for `key` from `now`.
    fn held(&self, key: &str, now: Millis, seq: u64, action: ChangeAction) -> ClaimPayload {
        let l = &self.s.lease;
        ClaimPayload {
            schema: CLAIM_SCHEMA,
            kind: CLAIM_KIND.into(),
            namespace: self.s.namespace.clone(),
            key: key.into(),
            state: ClaimState::Held,
            seq,
            run_id: self.s.run_id.clone(),
            run: self.s.run.clone(),
            lease: Some(ClaimLease {
                claimed_at: now,
                expires_at: now + l.ttl_ms,
                renew_after: now + l.renew_ms,
                ceiling_at: now + l.max_ttl_ms,
                renew_count: 0,
            }),
            supersedes: None,
            releases: None,
            acquired_from: None,
            metadata: self.s.metadata.clone(),
            action,
            at: now,
        }
    }

    fn report(
        &self,
        status: Status,
        set: Option<&ClaimSet>,
        per: &[(String, Status)],
        detail: String,
    ) -> Outcome {
        let lease = &self.s.lease;
        let items = match set {
            Some(set) => set
                .members
                .iter()
                .map(|m| {
                    let eligible_at = m
                        .payload
                        .as_ref()
                        .and_then(|p| p.lease.as_ref())
                        .filter(|_| status == Status::Contended || status == Status::FamilyAborted)
                        .map(|l| lease.takeable_after(l.expires_at) + 1);
                    ClaimItem {
                        key: m.key.clone(),
                        ref_name: m.ref_name.clone(),
                        token: m.oid.clone(),
                        payload: m.payload.clone(),
                        status: per.iter().find(|(k, _)| k == &m.key).map(|(_, s)| *s),
                        eligible_at,
                        // The commit the write whose answer was lost would have put there.
                        candidate: self
                            .last_created
                            .iter()
                            .filter(|_| status == Status::UnknownOutcome)
                            .find(|(r, _)| r == &m.ref_name)
                            .map(|(_, c)| c.clone()),
                    }
                })
                .collect(),
            None => self
                .s
                .keys
                .iter()
                .map(|k| ClaimItem {
                    key: k.clone(),
                    ref_name: crate::store::claim::claim_ref(&self.s.namespace, k),
                    token: None,
                    payload: None,
                    status: None,
                    eligible_at: None,
                    candidate: None,
                })
                .collect(),
        };
        let report = ClaimReport {
            status,
            repository: self.s.repository.clone(),
            repository_id: self.repository_id.clone(),
            namespace: self.s.namespace.clone(),
            run_id: self.s.run_id.clone(),
            items,
            detail,
            dry_run: self.s.dry_run,
            next: Default::default(),
            clock: match self.clock.offsets() {
                (Some(low_ms), Some(high_ms)) => Some(ClockOffsets { low_ms, high_ms }),
                _ => None,
            },
        };
        let report = next::with_next(report, &self.s);
        let mut o = Outcome::settled(
            ResultWord::Status,
            status.exit_code() == 0,
            &crate::store::claim::set_key(&self.s.namespace, &self.s.keys),
            &self.s.run_id,
        );
        // This run's claims, every one held: their lease as a guard acts on it (local deadlines
        // from the clock estimate's bounds, never late), the earliest of them for a family.
        let members = set.map(|s| s.members.as_slice()).unwrap_or_default();
        let leases: Vec<LeaseView> = members
            .iter()
            .filter_map(|m| m.payload.as_ref())
            .filter(|p| {
                p.state == ClaimState::Held
                    && p.run_id == self.s.run_id
                    && !self.s.run_id.is_empty()
            })
            .filter_map(|p| p.lease.as_ref())
            .map(|l| claim_lease_view(l, lease, &self.clock))
            .collect();
        if !members.is_empty() && leases.len() == members.len() {
            o.lease = leases.into_iter().reduce(earliest);
        }
        o.claims = Some(report);
        o
    }
}

/// A held claim's lease as its holder must act on it: like a lock holding's
/// (`engine::lease_view`), the deadline from the estimate's upper bound, the renewal time from
/// its lower one (renew judges it due by the same), never after the deadline.
pub(crate) fn claim_lease_view(
    l: &ClaimLease,
    policy: &LeasePolicy,
    clock: &ClockEstimate,
) -> LeaseView {
    #[allow(unused_mut)]
    let mut deadline = policy.local_deadline(l.expires_at);
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::ClaimDeadlineAtTakeable) {
        deadline = policy.takeable_after(l.expires_at);
    }
    let local_deadline = clock.local_deadline_for(deadline);
    let renew_at = if l.expires_at >= l.ceiling_at {
        local_deadline
    } else {
        clock.local_time_of(l.renew_after).min(local_deadline)
    };
    LeaseView {
        expires_at: l.expires_at,
        ceiling_at: l.ceiling_at,
        local_deadline,
        renew_at,
        renew_ms: policy.renew_ms,
        ttl_ms: policy.ttl_ms,
    }
}

/// Which of two members' reasons to stop decides for a family's renewal or release: a proven
/// loss first, then a member another run holds, then the rest (a newer token of this run's).
fn rank(s: Status) -> u8 {
    match s {
        Status::Lost => 0,
        Status::NotHeld => 1,
        _ => 2,
    }
}

/// The lease a family is held under: each bound the earliest of its members'.
fn earliest(a: LeaseView, b: LeaseView) -> LeaseView {
    LeaseView {
        expires_at: a.expires_at.min(b.expires_at),
        ceiling_at: a.ceiling_at.min(b.ceiling_at),
        local_deadline: a.local_deadline.min(b.local_deadline),
        renew_at: a.renew_at.min(b.renew_at),
        renew_ms: a.renew_ms,
        ttl_ms: a.ttl_ms,
    }
}

/// Whether a held claim may be taken at `now` (GitHub's clock): strictly past its expiry, the
/// grace and the skew tolerance.
pub(crate) fn takeable(lease: &LeasePolicy, p: &ClaimPayload, now: Millis) -> bool {
    #[cfg(feature = "planted-bugs")]
    if crate::planted::active(crate::planted::Bug::ClaimTakeoverEarly) {
        return true;
    }
    match (&p.state, &p.lease) {
        (ClaimState::Held, Some(l)) => now > lease.takeable_after(l.expires_at),
        _ => true,
    }
}

impl Planner for ClaimPlanner {
    type Doc = ClaimSet;

    fn needs_config(&self) -> bool {
        false
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_, ClaimSet>) -> Decision<ClaimSet> {
        let now = ctx.server_now;
        let set = ctx.state.clone();
        self.last = Some(set.clone());
        self.clock = ctx.clock;
        // The repository id, once a read learned it, goes into every `next` line.
        if self.repository_id.is_none() {
            self.repository_id = ctx.repository_id.clone();
        }
        let written = ctx.provenance == Provenance::Written;
        // A version this operation wrote: done.
        let ours_written = written || set.members.iter().any(|m| self.wrote(m));
        if ours_written {
            if let Some(status) = self.intent {
                self.pending_write = false;
                let (per, detail) = self.intent_report.clone();
                return Decision::Finish(self.report(status, Some(&set), &per, detail));
            }
        }
        self.pending_write = false;
        // Cancelled: a claim, takeover or renewal not yet written is not written (a release is
        // what gives the item back, and a read writes nothing: they go on).
        let stops = matches!(
            self.s.verb,
            Verb::Claim | Verb::Takeover | Verb::FamilyClaim | Verb::Renew | Verb::FamilyRenew
        );
        if self.cancelled && stops {
            return Decision::Finish(self.report(
                Status::Cancelled,
                Some(&set),
                &[],
                "cancelled (SIGINT or SIGTERM) before its write: nothing was written".into(),
            ));
        }
        let verdict = match self.s.verb {
            Verb::Claim | Verb::Takeover | Verb::FamilyClaim => acquire::plan(self, &set, now),
            Verb::Renew | Verb::FamilyRenew => renew::plan(self, &set, now),
            Verb::Release | Verb::FamilyRelease => release::plan(self, &set),
            Verb::Verify | Verb::Read | Verb::Adopt => inspect::plan(self, &set, ctx.now),
        };
        let verdict = match verdict {
            Verdict::WriteThen(new, status, per, detail) => {
                self.intent_report = (per, detail);
                Verdict::Write(new, status)
            }
            Verdict::Write(new, status) => {
                self.intent_report = (Vec::new(), String::new());
                Verdict::Write(new, status)
            }
            done => done,
        };
        match verdict {
            Verdict::WriteThen(..) => unreachable!("turned into a write above"),
            Verdict::Done(status, per, detail) => {
                Decision::Finish(self.report(status, Some(&set), &per, detail))
            }
            // A dry run reports what the write would answer, on the version read.
            Verdict::Write(_, status) if self.s.dry_run => {
                let (per, detail) = self.intent_report.clone();
                let detail = match detail.is_empty() {
                    true => "dry run: nothing was written".to_string(),
                    false => format!("{detail} (dry run: nothing was written)"),
                };
                Decision::Finish(self.report(status, Some(&set), &per, detail))
            }
            Verdict::Write(new, status) => {
                self.intent = Some(status);
                let action = new
                    .members
                    .iter()
                    .find(|m| m.changed)
                    .and_then(|m| m.payload.as_ref())
                    .map_or(ChangeAction::Acquire, |p| p.action.clone());
                Decision::Write { doc: new, action }
            }
        }
    }

    fn write_unknown(&mut self) {
        self.pending_write = true;
    }

    fn cancel(&mut self) {
        self.cancelled = true;
    }

    fn created_commits(&mut self, commits: &[(String, String)]) {
        self.created.extend(commits.iter().map(|(_, c)| c.clone()));
        self.last_created = commits.to_vec();
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        let status = if self.pending_write {
            Status::UnknownOutcome
        } else {
            Status::of_failure(failure.code)
        };
        let mut o = self.report(status, self.last.as_ref(), &[], failure.message.clone());
        o.error = Some(failure);
        o
    }
}
