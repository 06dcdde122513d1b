//! release: remove exactly this holder id's holding or queue entry. Idempotent, and safe when
//! acquire never reached the front (or never ran).
//!
//! Release is deadline-bounded rather than attempt-bounded: the protected work is done, so
//! waiting costs only this step's clock while giving up leaves a slot taken.
//!
//! Results: `released` (the holding was removed), `queue-cleaned` (only a queue entry was),
//! `noop` (nothing of this holder id, confirmed by a compare-and-swap write on the version that
//! showed it absent, so a stale read can never turn into a leaked slot), and
//! `release-unrecorded` (the budget ran out before the removal was recorded).

use crate::engine::{Decision, PlanCtx, Planner, Provenance};
use crate::input::{RawInputs, Reader};
use crate::policy::limits::{
    CLEANUP_DEADLINE_SECONDS, DEFAULT_RELEASE_DEADLINE_SECONDS, RELEASE_DEADLINE_SECONDS_RANGE,
};
use crate::policy::RetryPolicy;
use crate::wire::time::Millis;
use crate::wire::{
    ChangeAction, Failure, FailureCode, InputError, LifecycleReport, LockState, Outcome,
    ResultWord, RunIdentity,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub holder_id: String,
    /// This job's run attempt: a holding of a newer attempt is never removed.
    pub run_attempt: u32,
    /// This job, as its context names it: a holding with this job's holder id that another job
    /// of the attempt made (a matrix cell or a caller of the same reusable workflow without a
    /// `holder-suffix`, told apart by its runner or job id) is not this job's to remove, unless
    /// `holder-id` was given explicitly (a fallback job releasing another's holding).
    pub run: Box<RunIdentity>,
    pub explicit_holder: bool,
    /// 0 means attempt-bounded retries instead of a deadline.
    pub deadline_ms: Millis,
    pub retry: RetryPolicy,
    /// Cleanup (the acquire action's post step): remove only this exact claim (holder id and
    /// nonce), never a holding a rerun has taken over since.
    pub claim_nonce: Option<String>,
    /// Whether an absence read from GitHub is confirmed with a compare-and-swap write. Release
    /// does (a stale read must never leak a slot); the best-effort post-step cleanup does not,
    /// since the explicit release step is the primary path and a write per job would be waste.
    pub confirm_noop: bool,
    /// Cleanup only: `release-on-exit: false` switches it off (it then sends nothing).
    pub enabled: bool,
    /// Cleanup only: the last revision the acquire step saw; older answers are stale.
    pub min_revision: Option<u64>,
    /// How the work on a pool's resource went (`outcome`, `retry-at`), if said.
    pub pool_outcome: Option<super::pool::RunOutcome>,
    /// The cleanup report (`cleanup`, `health`, `reason`), judged under the lifecycle.
    pub report: super::lifecycle::Report,
    /// The version acquire left for this step (its sha and document), planned on first.
    pub carried: Option<Box<(String, LockState)>>,
}

impl ReleaseSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let (lock, repository, state_branch) = r.lock_target()?;
        let mut run = r.run_identity()?;
        let holder_id = r.holder_id(&run)?;
        let explicit_holder = r.get_exact("holder-id").is_some();
        // The job's id, as acquire records it (the check run id): two entries of one holder id
        // that both name a job id are told apart by it, on runners of one name too.
        run.job_id = super::job_id::check_run_id(
            &mut r,
            "telling this job's entries from another's by runner name only",
        );
        let deadline_s = r.int_or_warn(
            "release-deadline-seconds",
            DEFAULT_RELEASE_DEADLINE_SECONDS,
            |n| n == 0 || RELEASE_DEADLINE_SECONDS_RANGE.contains(&n),
            &format!(
                "must be 0 or a whole number from {} to {}",
                RELEASE_DEADLINE_SECONDS_RANGE.start(),
                RELEASE_DEADLINE_SECONDS_RANGE.end()
            ),
        );
        let retry = r.retry_policy();
        let pool_outcome = super::pool::parse_outcome(&r)?;
        let report = super::lifecycle::Report::parse(&r);
        let carried = r
            .get_exact("carried")
            .and_then(|v| crate::store::carry::decode(v, &repository, &state_branch, &lock))
            .map(Box::new);
        let settings = ReleaseSettings {
            lock,
            repository,
            state_branch,
            holder_id,
            run_attempt: run.run_attempt,
            run: Box::new(run),
            explicit_holder,
            deadline_ms: deadline_s * 1000,
            retry,
            claim_nonce: None,
            confirm_noop: true,
            enabled: true,
            min_revision: None,
            pool_outcome,
            report,
            carried,
        };
        Ok((settings, r.warnings))
    }

    /// The acquire action's post step: `holder-id` and `nonce` come from the saved state of
    /// the acquire step it follows.
    pub fn parse_cleanup(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let (mut s, mut warnings) = Self::parse(raw)?;
        let mut r = Reader::new(raw);
        s.enabled = r.bool_or_warn("release-on-exit", true);
        // Saved by the acquire step; a bad value only loses the protection, never the cleanup.
        s.min_revision = r.get("min-revision").and_then(|v| v.parse().ok());
        warnings.append(&mut r.warnings);
        let nonce = r.nonce()?;
        s.claim_nonce = Some(nonce);
        s.carried = None;
        s.confirm_noop = false;
        s.deadline_ms = CLEANUP_DEADLINE_SECONDS * 1000;
        Ok((s, warnings))
    }
}

pub struct ReleasePlanner {
    pub s: ReleaseSettings,
    started_at: Millis,
    /// Whether the state has been read once: the first phase (reaching the state) is over.
    reached: bool,
    deadline: Option<Millis>,
    /// What this release set out to remove, once it saw it present.
    intent: Option<ResultWord>,
    /// What the lifecycle made of it (ops/lifecycle.rs), once planned.
    lifecycle: Option<LifecycleReport>,
    /// The report applied to the quarantine a removal left of this holding (its lease ran out
    /// before the release came), once planned.
    applied: Option<Box<LifecycleReport>>,
}

impl ReleasePlanner {
    pub fn new(s: ReleaseSettings) -> Self {
        ReleasePlanner {
            s,
            started_at: 0,
            reached: false,
            deadline: None,
            intent: None,
            lifecycle: None,
            applied: None,
        }
    }

    fn outcome(&self, result: ResultWord) -> Outcome {
        let success = matches!(
            result,
            ResultWord::Released
                | ResultWord::QueueCleaned
                | ResultWord::Noop
                | ResultWord::Skipped
        );
        let mut o = Outcome::new(result, success, &self.s.lock, &self.s.holder_id);
        o.released = Some(result == ResultWord::Released);
        super::lifecycle::release_outcome(&mut o, self.lifecycle.clone(), &self.s.report);
        // What the report did to the removal's quarantine, on the version this release's own
        // write made (`noop`); a record in doubt claims nothing (as `release_outcome` says).
        if let (Some(applied), ResultWord::Noop) = (&self.applied, result) {
            o.success &= !applied.report_degraded;
            o.lifecycle = Some((**applied).clone());
        }
        o
    }
}

impl ReleasePlanner {
    /// An entry of a later run attempt than this one: not this release's to remove.
    fn newer(&self, attempt: u32) -> bool {
        let newer = attempt > self.s.run_attempt;
        #[cfg(feature = "planted-bugs")]
        let newer = newer && !crate::planted::active(crate::planted::Bug::ReleaseIgnoresAttempt);
        newer
    }

    /// An entry this release may remove by its nonce (the post step's cleanup names the one
    /// its acquire made; a release, none).
    fn ours(&self, nonce: &str) -> bool {
        self.s.claim_nonce.as_deref().is_none_or(|n| n == nonce)
    }

    /// Without its nonce or an explicit holder id, release goes by the holder id alone: an
    /// entry of this attempt made by another job (acquire refused this one as a
    /// `holder-collision`) is that job's, and stays. Says why, when it is.
    fn anothers(&self, run: &RunIdentity) -> Option<String> {
        (self.s.claim_nonce.is_none()
            && !self.s.explicit_holder
            && run.run_attempt == self.s.run_attempt)
            .then(|| super::job_id::apart(&self.s.run, run))
            .flatten()
    }

    /// Whether this release removes a holding on `st` (frees a slot): the holding `plan`
    /// removes, by the same tests.
    fn frees_slot(&self, st: &LockState) -> bool {
        st.holder(&self.s.holder_id).is_some_and(|h| {
            self.anothers(&h.run).is_none() && self.ours(&h.nonce) && !self.newer(h.run.run_attempt)
        })
    }

    /// A `rate-limited` outcome is about the resource the holding had: with the holding gone
    /// (its lease ran out, the reaper removed it) that resource is not known, and nothing backs
    /// it off. Said, never dropped in silence.
    fn outcome_unrecorded(&self, ctx: &mut PlanCtx<'_>) {
        if let Some(super::pool::RunOutcome::RateLimited { .. }) = self.s.pool_outcome {
            ctx.warn(format!(
                "outcome rate-limited not recorded: {} holds no resource of {} (a holding it had was removed before this release, or it never held one), so no resource is backed off",
                self.s.holder_id, self.s.lock
            ));
        }
    }
}

impl Planner for ReleasePlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        false
    }

    /// A state the lifecycle is on for needs the config: its cooldown decides the slot. So
    /// does a slot this release frees while someone waits: the write hands it on, which takes
    /// a fresh config record (the engine reads the config only when it knows no fresh record,
    /// as once nobody has written one into the state for five minutes: a waiter's polls write
    /// nothing). Without it the slot would sit free until the next waiter's poll noticed.
    fn needs_config_for(&self, doc: &LockState) -> bool {
        doc.schema >= crate::store::lifecycle::LIFECYCLE_SCHEMA
            || (!doc.queue.is_empty() && self.frees_slot(doc))
    }

    /// The config read's phase: until five eighths of the budget (the state read has the first
    /// half), so the write keeps at least three eighths.
    fn config_deadline(&self) -> Option<Millis> {
        self.deadline?;
        Some(self.started_at + self.s.deadline_ms / 8 * 5)
    }

    /// Without the config the state's own record of the lifecycle decides: a release never
    /// fails for a config it could not read.
    fn config_optional(&self) -> bool {
        true
    }

    fn start(&mut self, now: Millis) -> Option<Outcome> {
        self.started_at = now;
        self.deadline = (self.s.deadline_ms > 0).then(|| now + self.s.deadline_ms);
        (!self.s.enabled).then(|| self.outcome(ResultWord::Skipped))
    }

    fn branch_missing(&self, _now: Millis) -> Option<Outcome> {
        // No state branch, so no state. The post step's cleanup leaves it at that. Release
        // confirms the absence like any other: it creates the branch and writes the empty state
        // without a sha, so that an acquire's create still on its way (sent before its job gave
        // up on it) is refused (422) instead of landing afterwards with nobody left to release it.
        (!self.s.confirm_noop).then(|| self.outcome(ResultWord::Noop))
    }

    /// Two phases with absolute deadlines, so neither starves the other: reaching the state
    /// (the first successful read) may use the first half of the budget; recording (the write,
    /// and any read-back or re-read after a conflict) has until the end. An outage that eats
    /// the first half still leaves the write time to land and, if its answer is lost, to be
    /// read back. A phase that ends early hands its remainder on.
    fn retry_deadline(&self) -> Option<Millis> {
        let end = self.deadline?;
        Some(if self.reached {
            end
        } else {
            self.started_at + self.s.deadline_ms / 2
        })
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        // Running out of budget leaves the record in doubt: say so distinctly. A refusal or an
        // unreadable state is a plain failure.
        let unrecorded = matches!(
            failure.code,
            FailureCode::ApiUnavailable | FailureCode::StaleReads | FailureCode::Contention
        );
        let mut o = self.outcome(if unrecorded {
            ResultWord::ReleaseUnrecorded
        } else {
            ResultWord::Failed
        });
        o.released = None;
        o.error = Some(failure);
        o
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        self.reached = true;
        // A report applied on another version (the write conflicted, or was overtaken) is
        // planned again on this one, or not at all: never claimed for a version it was not on.
        if ctx.provenance == Provenance::Read {
            self.applied = None;
        }
        let id = self.s.holder_id.as_str();
        let st = ctx.state;
        let mut doc = st.clone();
        let entry = st
            .holder(id)
            .map(|h| &h.run)
            .or_else(|| st.queue_index(id).map(|i| &st.queue[i].run));
        if let Some(why) = entry.and_then(|run| self.anothers(run)) {
            // A read may be stale (this job's own holding may have followed the other's):
            // confirm on the latest version first, as for a newer attempt's entry.
            if ctx.provenance == Provenance::Read {
                return Decision::Write {
                    doc,
                    action: ChangeAction::ReleaseCheck,
                };
            }
            ctx.warn(format!(
                "{id} is held or queued by another job of this run attempt ({why}), not this one: left alone. Give each matrix cell (and each caller of a reusable workflow) its own `holder-suffix`"
            ));
            return Decision::Finish(self.outcome(ResultWord::Noop));
        }
        if let Some(h) = st.holder(id).filter(|h| self.ours(&h.nonce)) {
            if self.newer(h.run.run_attempt) {
                // A read may be stale (this job may have acquired again since): confirm first.
                if ctx.provenance == Provenance::Read {
                    return Decision::Write {
                        doc,
                        action: ChangeAction::ReleaseCheck,
                    };
                }
                ctx.warn(format!(
                    "{id} is held by run attempt {}, newer than this attempt {}; leaving it",
                    h.run.run_attempt, self.s.run_attempt
                ));
                return Decision::Finish(self.outcome(ResultWord::Noop));
            }
            if let Some(outcome) = self.s.pool_outcome {
                super::pool::record_outcome(&mut doc, id, outcome, ctx.server_now);
            }
            let holder = h.clone();
            let known = super::pool::pool_of(ctx.admission.as_ref())
                .map(|p| &p.config)
                .or_else(|| st.config.as_ref().and_then(|c| c.pool.as_ref()));
            super::pool::mark_last_use(&mut doc, &holder, known, ctx.server_now);
            let lifecycle = super::lifecycle::release_lifecycle(st, ctx);
            let by = if self.s.claim_nonce.is_some() {
                "cleanup"
            } else {
                "release"
            };
            self.lifecycle = super::lifecycle::leave(
                &mut doc,
                &holder,
                &self.s.report,
                lifecycle.as_ref(),
                ctx.server_now,
                by,
            );
            // Hand the slot on in the same write when the capacity is known to be fresh.
            #[cfg(feature = "planted-bugs")]
            if crate::planted::active(crate::planted::Bug::ReleaseKeepsSlot) {
                ctx.admission = None;
            }
            let admitted = ctx.admit(&mut doc);
            if !admitted.is_empty() {
                ctx.info(format!("handing the slot to {}", admitted.join(", ")));
            }
            self.intent = Some(ResultWord::Released);
            return Decision::Write {
                doc,
                action: ChangeAction::Release,
            };
        }
        if let Some(i) = st
            .queue_index(id)
            .filter(|&i| self.ours(&st.queue[i].nonce))
        {
            if self.newer(st.queue[i].run.run_attempt) {
                if ctx.provenance == Provenance::Read {
                    return Decision::Write {
                        doc,
                        action: ChangeAction::ReleaseCheck,
                    };
                }
                ctx.warn(format!(
                    "{id} is queued by a newer run attempt {}; leaving it",
                    st.queue[i].run.run_attempt
                ));
                return Decision::Finish(self.outcome(ResultWord::Noop));
            }
            doc.queue.remove(i);
            // In a pool a waiter ahead holds back the later ones its partition conflicts with:
            // its leaving may let them in, in this write.
            ctx.admit(&mut doc);
            self.intent.get_or_insert(ResultWord::QueueCleaned);
            return Decision::Write {
                doc,
                action: ChangeAction::LeaveQueue,
            };
        }
        // Absent, and a removal (an acquire's of the expired lease, the reaper's) left its slot
        // quarantined: the report is about that slot, and applied to it. A blocked resource must
        // raise the incident whoever removed the holding. Found after this release's own write
        // conflicted, it also shows that write did not land (nobody removes a holding twice).
        if let (Some(_), Provenance::Written) = (&self.applied, ctx.provenance) {
            return Decision::Finish(self.outcome(ResultWord::Noop));
        }
        if self.s.report.given {
            let lifecycle = super::lifecycle::release_lifecycle(st, ctx);
            let q =
                super::lifecycle::removal_quarantine(st, id, self.s.run.run_id, self.s.run_attempt)
                    // This job's own, as for a holding (`anothers`: another job of this attempt
                    // under the same holder id).
                    .filter(|q| self.anothers(&q.run).is_none());
            if let (Some(lifecycle), Some(q)) = (lifecycle, q.cloned()) {
                let (changed, report) = super::lifecycle::report_on_removed(
                    &mut doc,
                    &q,
                    &self.s.report,
                    &lifecycle,
                    ctx.server_now,
                );
                ctx.warn(format!(
                    "{id} no longer holds {}: its lease ran out and the {} left its slot quarantined as {}; this release's report applies to that slot ({})",
                    self.s.lock,
                    if q.by == "reaper" { "reaper" } else { "next acquire" },
                    q.id,
                    report.cleanup_result.map_or("", |c| c.as_str())
                ));
                self.intent = None;
                self.lifecycle = None;
                self.applied = Some(Box::new(report));
                return Decision::Write {
                    doc,
                    action: if changed {
                        ChangeAction::Release
                    } else {
                        ChangeAction::ReleaseCheck
                    },
                };
            }
        }
        // Absent. If our own write made this version, our removal landed. Absence in a mere
        // read proves nothing yet: it may be stale, and a holder id can come back (a rerun
        // acquires again), so it is confirmed by a compare-and-swap write below.
        if let (Some(result), Provenance::Written) = (self.intent, ctx.provenance) {
            ctx.info(format!(
                "{} {id} from {}",
                if result == ResultWord::Released {
                    "released"
                } else {
                    "removed queue entry of"
                },
                self.s.lock
            ));
            return Decision::Finish(self.outcome(result));
        }
        if !self.s.confirm_noop && self.intent.is_none() {
            ctx.info(format!(
                "{id} (this claim) neither holds nor waits for {}: nothing to clean up",
                self.s.lock
            ));
            self.outcome_unrecorded(ctx);
            return Decision::Finish(self.outcome(ResultWord::Noop));
        }
        match ctx.provenance {
            Provenance::Written => {
                ctx.info(format!(
                    "{id} neither holds nor waits for {}: nothing to release",
                    self.s.lock
                ));
                self.outcome_unrecorded(ctx);
                Decision::Finish(self.outcome(ResultWord::Noop))
            }
            // A read may be stale (even a 404 just after the file was created): confirm the
            // absence with a compare-and-swap on this version. For a missing file that is a
            // write without a sha, which GitHub refuses if the file exists after all.
            Provenance::Read => Decision::Write {
                doc,
                action: ChangeAction::ReleaseCheck,
            },
        }
    }
}
