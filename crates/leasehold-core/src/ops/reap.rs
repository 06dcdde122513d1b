//! reap: free what dead jobs left behind, proven from the Actions API, never guessed.
//!
//! For every holding and queue entry of a lock, the reaper asks the Actions API whether the run
//! attempt that owns it (or, when acquire recorded it, the exact job) is still active:
//! * over (`completed`, whatever the conclusion) → the entry is removed (`run-completed`,
//!   `job-completed`), and freed slots are handed to the queue in the same write;
//! * active (queued, waiting, in progress) → kept, and renewed within its ceiling when the
//!   lock's policy says so (`reaperRenews`) and a renewal is due;
//! * the API cannot answer (refused, not found, unavailable) → kept: missing evidence never
//!   frees anything. Such a holding is freed only once its lease has run out (`expiresAt` +
//!   grace + skew, by GitHub's clock, and a lease never passes `ceilingAt`), exactly as any
//!   acquire would free it. A holding whose lease ran out is still asked about: one proven
//!   alive is kept.
//!
//! A matrix job is never inferred from runner timing: without a recorded job id, the run
//! attempt decides, and a running attempt keeps every entry it owns.
//!
//! The scan is bounded: no question is asked after the scan deadline, and what was proven is
//! written by compare-and-swap in checkpoints (every [`REAP_CHECKPOINT_EVERY`] changes, and at the
//! end), so a partial run changes only what it proved. A conflict re-reads the state and plans
//! again with the answers already gathered (an attempt that is over stays over). A scan that
//! ran out of time with entries unchecked fails visibly (`scan-deadline`), after writing what
//! it proved.

use std::collections::BTreeMap;

use crate::engine::{Decision, Engine, PlanCtx, Planner, Provenance, Relay, Several, Target};
use crate::input::{self, RawInputs, Reader};
use crate::policy::limits::{
    DEFAULT_SCAN_SECONDS, MAX_REAP_LOCKS, REAP_CHECKPOINT_EVERY, REAP_WRITE_BUDGET_MS,
    RENEW_EVIDENCE_MAX_AGE_MS, SCAN_SECONDS_RANGE,
};
use crate::policy::RetryPolicy;
use crate::wire::time::{format_rfc3339, parse_github_time, Millis};
use crate::wire::{
    AnswerClass, Call, ChangeAction, Failure, FailureCode, InputError, Level, LockState, LogLine,
    Outcome, Place, ReapAction, ReapEntry, ReapReason, ReapReport, Removal, Reply, ResultWord,
    RunIdentity,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReapSettings {
    pub locks: Vec<String>,
    pub repository: String,
    pub state_branch: String,
    /// Names the reaper in commit messages and `lastChange`.
    pub by: String,
    pub scan_ms: Millis,
    pub retry: RetryPolicy,
}

impl ReapSettings {
    pub fn parse(raw: &RawInputs) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let text = r.required("lock")?;
        let mut locks: Vec<String> = Vec::new();
        for name in text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
        {
            input::validate_lock_name("lock", name)?;
            if !locks.iter().any(|l| l == name) {
                locks.push(name.to_string());
            }
        }
        if locks.is_empty() {
            return Err(InputError::new("lock", "must name at least one lock", text));
        }
        if locks.len() > MAX_REAP_LOCKS {
            return Err(InputError::new(
                "lock",
                &format!("names at most {MAX_REAP_LOCKS} locks"),
                &locks.len().to_string(),
            ));
        }
        let (repository, state_branch) = r.lock_location(|| {
            InputError::new(
                "repository",
                "is required (the lock repository, owner/name) outside a workflow run",
                "",
            )
        })?;
        let scan_s = r.int(
            "scan-deadline-seconds",
            DEFAULT_SCAN_SECONDS,
            *SCAN_SECONDS_RANGE.start(),
            *SCAN_SECONDS_RANGE.end(),
        )?;
        let by = match (
            r.get("GITHUB_REPOSITORY"),
            r.get("GITHUB_RUN_ID"),
            r.get("GITHUB_JOB"),
        ) {
            (Some(repo), Some(run), Some(job)) => {
                // Written into the state as who changed it: never a credential (found by the
                // `inputs` fuzz target, docs/fuzzing.md).
                for (name, value) in [
                    ("GITHUB_REPOSITORY", repo),
                    ("GITHUB_RUN_ID", run),
                    ("GITHUB_JOB", job),
                ] {
                    input::refuse_credential(name, value)?;
                }
                format!("reaper {repo}:{run}:{job}")
            }
            _ => "reaper".to_string(),
        };
        let retry = r.retry_policy();
        let s = ReapSettings {
            locks,
            repository,
            state_branch,
            by,
            scan_ms: scan_s * 1000,
            retry,
        };
        Ok((s, r.warnings))
    }
}

/// What a question is about: a run attempt, or one job of it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EvidenceKey {
    pub repository: String,
    pub run_id: u64,
    pub attempt: u32,
    pub job_id: Option<u64>,
}

impl EvidenceKey {
    pub fn of(run: &RunIdentity) -> Self {
        EvidenceKey {
            repository: run.repository.clone(),
            run_id: run.run_id,
            attempt: run.run_attempt,
            job_id: run.job_id,
        }
    }

    fn question(&self) -> Call {
        match self.job_id {
            Some(job_id) => Call::GetJob {
                repository: self.repository.clone(),
                job_id,
            },
            None => Call::GetRunAttempt {
                repository: self.repository.clone(),
                run_id: self.run_id,
                attempt: self.attempt,
            },
        }
    }

    fn subject(&self) -> String {
        match self.job_id {
            Some(job) => format!(
                "job {job} of {} run {} attempt {}",
                self.repository, self.run_id, self.attempt
            ),
            None => format!(
                "{} run {} attempt {}",
                self.repository, self.run_id, self.attempt
            ),
        }
    }
}

/// What the Actions API said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// Completed (with this conclusion): nothing of it runs any more. For a job, what the answer
    /// said of it, to check that the recorded job id is this entry's job.
    Over {
        conclusion: Option<String>,
        job: Option<JobFacts>,
    },
    /// Queued, waiting or running, as of `at` (GitHub's clock, when asked).
    Active { status: String, at: Millis },
    /// No answer that proves anything.
    Unknown { why: String },
}

/// A completed job's runner and completion time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFacts {
    pub runner_name: Option<String>,
    pub completed_at: Option<Millis>,
}

/// Answers gathered so far, kept across conflicts and across the locks of one reap.
pub type EvidenceCache = BTreeMap<EvidenceKey, Evidence>;

pub struct ReapPlanner {
    pub lock: String,
    pub by: String,
    /// The scan deadline (no question after it), set when the reap starts ([`Relay::set_deadline`]).
    scan_deadline: Millis,
    pub evidence: EvidenceCache,
    /// The question in flight, and GitHub's time when it was asked.
    asking: Option<(EvidenceKey, Millis)>,
    /// Why no more questions are asked (GitHub rate-limited them).
    stopped: Option<String>,
    /// The changes of the write in flight.
    intended: Vec<ReapEntry>,
    /// Changes confirmed written.
    done: Vec<ReapEntry>,
    /// What the last plan kept.
    kept: Vec<ReapEntry>,
}

impl ReapPlanner {
    pub fn new(lock: String, by: String) -> Self {
        ReapPlanner {
            lock,
            by,
            scan_deadline: 0,
            evidence: EvidenceCache::new(),
            asking: None,
            stopped: None,
            intended: Vec::new(),
            done: Vec::new(),
            kept: Vec::new(),
        }
    }

    fn report(&self) -> ReapReport {
        let mut entries = self.done.clone();
        // A holding renewed earlier is still there: report it once, as renewed.
        let renewed = |e: &ReapEntry| {
            self.done.iter().any(|d| {
                d.action == ReapAction::Renewed && d.holder_id == e.holder_id && d.place == e.place
            })
        };
        entries.extend(self.kept.iter().filter(|e| !renewed(e)).cloned());
        ReapReport {
            lock: self.lock.clone(),
            entries,
        }
    }

    fn outcome(&self, result: ResultWord) -> Outcome {
        let mut o = Outcome::new(result, result == ResultWord::Reaped, &self.lock, &self.by);
        o.reaped = vec![self.report()];
        o
    }
}

fn entry(
    holder_id: &str,
    place: Place,
    fence: Option<u64>,
    run: &RunIdentity,
    action: ReapAction,
    reason: ReapReason,
    detail: String,
) -> ReapEntry {
    ReapEntry {
        holder_id: holder_id.into(),
        place,
        fence,
        run: run.clone(),
        action,
        reason,
        detail,
    }
}

/// Whether an entry's run identity can be asked about at all (a damaged or hand-edited entry may
/// name no repository or a run id of 0): one that cannot is unverified, never a reason to fail.
fn unaskable(run: &RunIdentity) -> Option<String> {
    if input::validate_repository("repository", &run.repository).is_err() {
        return Some(format!(
            "its run names no repository leasehold can ask about ({:?})",
            run.repository
        ));
    }
    if run.run_id == 0 || run.run_attempt == 0 || run.job_id == Some(0) {
        return Some(format!(
            "its run identity is incomplete (run {}, attempt {}, job {:?})",
            run.run_id, run.run_attempt, run.job_id
        ));
    }
    None
}

/// How the evidence about an entry's run applies to this entry.
enum Verdict {
    Over { reason: ReapReason, detail: String },
    Active { status: String, at: Millis },
    Unknown { why: String },
    NotAsked,
}

impl ReapPlanner {
    /// Judges one entry by what is known. A completed job proves this entry over only if it is
    /// this entry's job: it ran on the runner the entry names and completed after the entry was
    /// made (a job id recorded from a lagging job list could be an earlier job's on that runner).
    fn verdict(&self, key: &EvidenceKey, run: &RunIdentity, made_at: Millis) -> Verdict {
        if let Some(why) = unaskable(run) {
            return Verdict::Unknown { why };
        }
        match self.evidence.get(key) {
            None => Verdict::NotAsked,
            Some(Evidence::Unknown { why }) => Verdict::Unknown { why: why.clone() },
            Some(Evidence::Active { status, at }) => Verdict::Active {
                status: status.clone(),
                at: *at,
            },
            Some(Evidence::Over { conclusion, job }) => {
                let conclusion = conclusion.as_deref().unwrap_or("no conclusion");
                let Some(job) = job else {
                    return Verdict::Over {
                        reason: ReapReason::RunCompleted,
                        detail: format!("{} completed ({conclusion})", key.subject()),
                    };
                };
                if let Some(r) = job
                    .runner_name
                    .as_deref()
                    .filter(|r| !run.runner_name.is_empty() && *r != run.runner_name)
                {
                    return Verdict::Unknown { why: format!("{} ran on runner {r:?}, not {:?}: the recorded job id is not this entry's job", key.subject(), run.runner_name) };
                }
                // The entry's time is the lower bound of GitHub's clock when it was made, so its
                // own job completed at or after it: only GitHub's whole seconds are allowed for,
                // never the skew (which would take an earlier job of the runner for this one).
                match job.completed_at {
                    Some(at)
                        if at.saturating_add(crate::policy::limits::DATE_RESOLUTION_MS)
                            < made_at =>
                    {
                        return Verdict::Unknown { why: format!("{} completed at {}, before this entry was made: the recorded job id is not this entry's job", key.subject(), format_rfc3339(at)) };
                    }
                    None if made_at > 0 => {
                        return Verdict::Unknown { why: format!("{} completed with no completion time: nothing shows it completed after this entry was made", key.subject()) };
                    }
                    _ => {}
                }
                Verdict::Over {
                    reason: ReapReason::JobCompleted,
                    detail: format!("{} completed ({conclusion})", key.subject()),
                }
            }
        }
    }
}

impl Planner for ReapPlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        // To hand freed slots on in the same write, and for the lease policy.
        true
    }

    fn retry_deadline(&self) -> Option<Millis> {
        Some(self.scan_deadline + REAP_WRITE_BUDGET_MS)
    }

    fn probe_deadline(&self) -> Option<Millis> {
        Some(self.scan_deadline)
    }

    fn branch_missing(&self, _now: Millis) -> Option<Outcome> {
        Some(self.outcome(ResultWord::Reaped))
    }

    fn failed(&self, failure: Failure, _now: Millis) -> Outcome {
        self.outcome(ResultWord::Failed).with_error(failure)
    }

    fn on_probe(&mut self, _sent: &Call, answer: Result<Reply, Failure>, log: &mut Vec<LogLine>) {
        let Some((key, asked_at)) = self.asking.take() else {
            return;
        };
        if let Err(f) = &answer {
            if f.class == Some(AnswerClass::RateLimited) {
                // Every further question would meet the same limit: write what is proven instead.
                log.push(LogLine {
                    level: Level::Warning,
                    text: format!("{}; asking no more questions in this reap", f.message),
                });
                self.stopped = Some(f.message.clone());
                return;
            }
        }
        let evidence = match answer {
            Ok(Reply::Job { run_id, run_attempt, status, conclusion, runner_name, completed_at, .. })
                if run_id == key.run_id && run_attempt.is_none_or(|a| a == key.attempt) =>
            {
                match (status.as_str(), completed_at.as_deref().map(|t| (t, parse_github_time(t)))) {
                    // A completion time that cannot be read is no proof the job is this
                    // entry's (the check against the entry's own time needs it): no verdict.
                    ("completed", Some((text, None))) => Evidence::Unknown {
                        why: format!("job {:?} completed at {text:?}, a time that cannot be read", key.job_id),
                    },
                    ("completed", completed_at) => {
                        let completed_at = completed_at.and_then(|(_, at)| at);
                        Evidence::Over { conclusion, job: Some(JobFacts { runner_name, completed_at }) }
                    }
                    _ => Evidence::Active { status, at: asked_at },
                }
            }
            Ok(Reply::Job { run_id, run_attempt, .. }) => Evidence::Unknown {
                why: format!("job {:?} belongs to run {run_id} attempt {run_attempt:?}, not run {} attempt {}", key.job_id, key.run_id, key.attempt),
            },
            Ok(Reply::Run { run_id, run_attempt, status, conclusion, .. })
                if run_id == key.run_id && run_attempt.is_none_or(|a| a == key.attempt) =>
            {
                match status {
                    Some(s) if s == "completed" => Evidence::Over { conclusion, job: None },
                    Some(status) => Evidence::Active { status, at: asked_at },
                    None => Evidence::Unknown { why: format!("run {} attempt {}: GitHub's answer gave no status", key.run_id, key.attempt) },
                }
            }
            Ok(Reply::Run { run_id, .. }) if run_id != key.run_id => Evidence::Unknown { why: format!("asked for run {}, GitHub answered run {run_id}", key.run_id) },
            Ok(Reply::Run { run_attempt: Some(other), .. }) => Evidence::Unknown { why: format!("asked for attempt {}, GitHub answered attempt {other}", key.attempt) },
            Ok(_) => Evidence::Unknown { why: "an answer of the wrong kind".into() },
            Err(f) => Evidence::Unknown { why: f.message },
        };
        #[cfg(feature = "planted-bugs")]
        let evidence = if crate::planted::active(crate::planted::Bug::ReapUnknownAsOver)
            && matches!(evidence, Evidence::Unknown { .. })
        {
            Evidence::Over {
                conclusion: None,
                job: None,
            }
        } else {
            evidence
        };
        let text = match &evidence {
            Evidence::Over { conclusion, .. } => format!(
                "{}: completed ({})",
                key.subject(),
                conclusion.as_deref().unwrap_or("no conclusion")
            ),
            Evidence::Active { status, .. } => format!("{}: {status}", key.subject()),
            Evidence::Unknown { why } => format!(
                "{}: no answer that proves anything ({why}); keeping what it owns",
                key.subject()
            ),
        };
        let level = if matches!(evidence, Evidence::Unknown { .. }) {
            Level::Warning
        } else {
            Level::Info
        };
        log.push(LogLine { level, text });
        self.evidence.insert(key, evidence);
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        // Our own write made this version: its changes are recorded. Otherwise they are not
        // (yet), and are planned again on this version.
        if ctx.provenance == Provenance::Written {
            self.done.append(&mut self.intended);
        } else {
            self.intended.clear();
        }
        // A config that is present but invalid gives no lease policy to judge by: change nothing.
        if let Some(e) = ctx.config_error {
            let failure = Failure::new(FailureCode::ConfigInvalid, e.to_string());
            return Decision::Finish(self.outcome(ResultWord::Failed).with_error(failure));
        }
        let scanning = ctx.now < self.scan_deadline && self.stopped.is_none();
        let st = ctx.state;
        let policy = ctx.lease.clone();
        let server_now = ctx.server_now;
        let mut doc = st.clone();
        let mut changes: Vec<ReapEntry> = Vec::new();
        let mut removals: Vec<Removal> = Vec::new();
        let mut kept: Vec<ReapEntry> = Vec::new();
        let mut next_question: Option<EvidenceKey> = None;
        let unchecked = || "not checked: the scan ended first".to_string();

        for h in &st.holders {
            // A checkpoint is full: the rest waits for the next plan, after the write.
            if changes.len() >= REAP_CHECKPOINT_EVERY {
                break;
            }
            let key = EvidenceKey::of(&h.run);
            let expired = server_now > policy.takeable_after(h.expires_at);
            let mut remove = |reason: ReapReason, detail: String, changes: &mut Vec<ReapEntry>| {
                doc.holders.retain(|x| x.holder_id != h.holder_id);
                removals.push(Removal {
                    holder_id: h.holder_id.clone(),
                    fence: h.fence,
                    expires_at: h.expires_at,
                    reason: reason.removal().expect("a removal has a removal reason"),
                });
                changes.push(entry(
                    &h.holder_id,
                    Place::Holding,
                    Some(h.fence),
                    &h.run,
                    ReapAction::Removed,
                    reason,
                    detail,
                ));
            };
            let keep = |reason: ReapReason, detail: String, kept: &mut Vec<ReapEntry>| {
                kept.push(entry(
                    &h.holder_id,
                    Place::Holding,
                    Some(h.fence),
                    &h.run,
                    ReapAction::Kept,
                    reason,
                    detail,
                ));
            };
            match self.verdict(&key, &h.run, h.claimed_at.unwrap_or(h.acquired_at)) {
                Verdict::Over { reason, detail } => remove(reason, detail, &mut changes),
                Verdict::Active { status, at } => {
                    // Renewed only on fresh evidence about the job itself: a running run attempt
                    // does not prove that one of its jobs still runs.
                    let target = server_now.saturating_add(h.lease_ms).min(h.ceiling_at);
                    let fresh = key.job_id.is_some()
                        && server_now.saturating_sub(at) <= RENEW_EVIDENCE_MAX_AGE_MS;
                    if policy.reaper_renews
                        && fresh
                        && policy.renewal_due(server_now, h.expires_at, h.lease_ms)
                        && target > h.expires_at
                        && target > server_now
                    {
                        if let Some(x) = doc.holders.iter_mut().find(|x| x.holder_id == h.holder_id)
                        {
                            x.expires_at = target;
                        }
                        changes.push(entry(
                            &h.holder_id,
                            Place::Holding,
                            Some(h.fence),
                            &h.run,
                            ReapAction::Renewed,
                            ReapReason::Active,
                            format!(
                                "{} is {status}: lease renewed until {}",
                                key.subject(),
                                format_rfc3339(target)
                            ),
                        ));
                    } else {
                        keep(
                            ReapReason::Active,
                            format!("{} is {status}", key.subject()),
                            &mut kept,
                        );
                    }
                }
                Verdict::Unknown { why } if expired => {
                    remove(
                        ReapReason::LeaseExpired,
                        format!(
                            "lease ran out at {} and {} could not be proven ({why})",
                            format_rfc3339(h.expires_at),
                            key.subject()
                        ),
                        &mut changes,
                    );
                }
                Verdict::Unknown { why } => {
                    keep(
                        ReapReason::Unverified,
                        format!(
                            "{why}; kept until its lease runs out at {}",
                            format_rfc3339(h.expires_at)
                        ),
                        &mut kept,
                    );
                }
                // Once the scan is over, a lease that ran out frees the holding unasked, as any
                // acquire would; while scanning, it is asked about first, so that a holder proven
                // alive is kept (and renewed, when the policy says so).
                Verdict::NotAsked if expired && !scanning => {
                    remove(
                        ReapReason::LeaseExpired,
                        format!(
                            "lease ran out at {} (not renewed; not checked: the scan ended first)",
                            format_rfc3339(h.expires_at)
                        ),
                        &mut changes,
                    );
                }
                Verdict::NotAsked => {
                    if scanning && next_question.is_none() {
                        next_question = Some(key);
                    }
                    keep(ReapReason::Unchecked, unchecked(), &mut kept);
                }
            }
        }
        for q in &st.queue {
            if changes.len() >= REAP_CHECKPOINT_EVERY {
                break;
            }
            let key = EvidenceKey::of(&q.run);
            match self.verdict(&key, &q.run, q.last_seen_at) {
                Verdict::Over { reason, detail } => {
                    doc.queue.retain(|x| x.holder_id != q.holder_id);
                    changes.push(entry(
                        &q.holder_id,
                        Place::Queue,
                        None,
                        &q.run,
                        ReapAction::Removed,
                        reason,
                        detail,
                    ));
                }
                Verdict::Active { status, .. } => kept.push(entry(
                    &q.holder_id,
                    Place::Queue,
                    None,
                    &q.run,
                    ReapAction::Kept,
                    ReapReason::Active,
                    format!("{} is {status}", key.subject()),
                )),
                Verdict::Unknown { why } => kept.push(entry(
                    &q.holder_id,
                    Place::Queue,
                    None,
                    &q.run,
                    ReapAction::Kept,
                    ReapReason::Unverified,
                    why,
                )),
                Verdict::NotAsked => {
                    if scanning && next_question.is_none() {
                        next_question = Some(key);
                    }
                    kept.push(entry(
                        &q.holder_id,
                        Place::Queue,
                        None,
                        &q.run,
                        ReapAction::Kept,
                        ReapReason::Unchecked,
                        unchecked(),
                    ));
                }
            }
        }
        // The lifecycle: a quarantine whose run is proven over and that aged past the lease
        // becomes a cooldown (ops/lifecycle.rs); never while the lock's incident stands.
        let lifecycle = super::lifecycle::release_lifecycle(st, ctx);
        if let (Some(lc), None) = (&lifecycle, &st.incident) {
            for r in super::lifecycle::aged_quarantines(st, server_now, policy.ttl_ms) {
                if changes.len() >= REAP_CHECKPOINT_EVERY {
                    break;
                }
                // A quarantine a release made (inside its job) is judged as a holding is, by
                // when it was made. One a removal made (an acquire's or the reaper's of an
                // expired lease, the reaper's of a dead holder, an acquire's of an earlier
                // attempt its rerun could not seat) keeps no time that bounds its job: the
                // lease may have run out while the job still ran, and a job id recorded from a
                // lagging job list may be an earlier job's on that runner. Only its run
                // attempt's completion proves it over.
                let by_removal = matches!(r.by.as_str(), "expired" | "reaper" | "rerun");
                let key = if by_removal {
                    EvidenceKey {
                        job_id: None,
                        ..EvidenceKey::of(&r.run)
                    }
                } else {
                    EvidenceKey::of(&r.run)
                };
                let mut keep = |reason, why: String| {
                    kept.push(entry(
                        &r.id,
                        Place::Reservation,
                        Some(r.fence),
                        &r.run,
                        ReapAction::Kept,
                        reason,
                        why,
                    ))
                };
                match self.verdict(&key, &r.run, r.at) {
                    Verdict::Over { reason, detail } => {
                        let id =
                            super::lifecycle::cool_down(&mut doc, &r.id, lc, server_now, "reaper");
                        changes.push(entry(
                            &r.id,
                            Place::Reservation,
                            Some(r.fence),
                            &r.run,
                            ReapAction::Recovered,
                            reason,
                            format!("{detail}; the quarantine became the cooldown {id}"),
                        ));
                    }
                    Verdict::Active { status, .. } => {
                        keep(ReapReason::Active, format!("{} is {status}", key.subject()))
                    }
                    Verdict::Unknown { why } => keep(ReapReason::Unverified, why),
                    Verdict::NotAsked => {
                        if scanning && next_question.is_none() {
                            next_question = Some(key);
                        }
                        keep(ReapReason::Unchecked, unchecked());
                    }
                }
            }
        }
        self.kept = kept;

        // Checkpoint: write what is proven once a checkpoint is full, or once nothing is left to ask.
        if changes.len() >= REAP_CHECKPOINT_EVERY
            || (!changes.is_empty() && next_question.is_none())
        {
            // Under the lifecycle a holding removed for its holder becomes a quarantine.
            if lifecycle.is_some() {
                super::lifecycle::expired(&mut doc, &st.holders, &removals, ctx, "reaper");
            }
            let admitted = ctx.admit(&mut doc);
            if !admitted.is_empty() {
                ctx.info(format!(
                    "handing freed slots of {} to {}",
                    self.lock,
                    admitted.join(", ")
                ));
            }
            for c in &changes {
                let verb = match c.action {
                    ReapAction::Removed => "removing",
                    ReapAction::Renewed => "renewing",
                    ReapAction::Kept => "keeping",
                    ReapAction::Recovered => "recovering",
                };
                ctx.info(format!(
                    "{verb} {} ({}) of {}: {}",
                    c.holder_id,
                    match c.place {
                        Place::Holding => "holding",
                        Place::Queue => "queue entry",
                        Place::Reservation => "quarantine",
                    },
                    self.lock,
                    c.detail
                ));
            }
            ctx.removed.extend(removals);
            self.intended = changes;
            return Decision::Write {
                doc,
                action: ChangeAction::Reap,
            };
        }
        if let Some(key) = next_question {
            let question = key.question();
            self.asking = Some((key, server_now));
            return Decision::Probe(question);
        }
        let unchecked = self
            .kept
            .iter()
            .filter(|e| e.reason == ReapReason::Unchecked)
            .count();
        if unchecked > 0 {
            let (code, why) = match &self.stopped {
                Some(limit) => (
                    FailureCode::RateLimited,
                    format!("GitHub rate-limited the Actions API ({limit})"),
                ),
                None => (
                    FailureCode::ScanDeadline,
                    "the scan deadline passed".to_string(),
                ),
            };
            return Decision::Finish(self.outcome(ResultWord::Failed).with_error(Failure::new(
                code,
                format!(
                    "{why} with {unchecked} entries of {} not checked; they were left as they are",
                    self.lock
                ),
            )));
        }
        let report = self.report();
        let count = |a: ReapAction| report.entries.iter().filter(|e| e.action == a).count();
        ctx.info(format!(
            "reaped {}: {} removed, {} renewed, {} kept",
            self.lock,
            count(ReapAction::Removed),
            count(ReapAction::Renewed),
            count(ReapAction::Kept)
        ));
        Decision::Finish(self.outcome(ResultWord::Reaped))
    }
}

/// A reap of one or more locks: one engine per lock, run one after another within one scan
/// deadline, sharing the answers gathered (a run that owns entries in several locks is asked
/// about once).
pub fn reap_all(s: &ReapSettings, seed: u64) -> Several<ReapPlanner> {
    let engines = s
        .locks
        .iter()
        .enumerate()
        .map(|(i, lock)| {
            let target = Target {
                lock: lock.clone(),
                repository: s.repository.clone(),
                repository_id: None,
                state_branch: s.state_branch.clone(),
                holder_id: s.by.clone(),
                retry: s.retry.clone(),
            };
            Engine::new(
                ReapPlanner::new(lock.clone(), s.by.clone()),
                target,
                seed.wrapping_add(i as u64),
            )
        })
        .collect();
    Several::new(engines, s.scan_ms)
}

impl Relay for ReapPlanner {
    /// The answers gathered, and the rate limit that stopped the questions, if one did: a later
    /// lock of the same reap asks no more questions either (each would meet the same limit).
    type Shared = (EvidenceCache, Option<String>);

    fn set_deadline(&mut self, deadline: Millis) {
        self.scan_deadline = deadline;
    }

    fn take_shared(&mut self) -> Self::Shared {
        (std::mem::take(&mut self.evidence), self.stopped.take())
    }

    fn give_shared(&mut self, (evidence, stopped): Self::Shared) {
        self.evidence = evidence;
        self.stopped = stopped;
    }

    fn combine(outcomes: &[Outcome]) -> Outcome {
        if let [only] = outcomes {
            return only.clone();
        }
        let success = outcomes.iter().all(|o| o.success);
        let locks: Vec<&str> = outcomes.iter().map(|o| o.lock.as_str()).collect();
        let mut o = Outcome::settled(
            ResultWord::Reaped,
            success,
            &locks.join(", "),
            &outcomes[0].holder_id,
        );
        o.error = outcomes.iter().find_map(|x| x.error.clone()).map(|mut e| {
            let failed = outcomes.iter().filter(|x| !x.success).count();
            if failed > 1 {
                e.message = format!("{} (and {} more locks failed)", e.message, failed - 1);
            }
            e
        });
        for x in outcomes {
            o.reaped.extend(x.reaped.iter().cloned());
            o.stats.add(&x.stats);
        }
        o
    }
}
