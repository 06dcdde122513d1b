//! Which Actions job this acquire runs in (`record-job-id`): the job id the reaper judges the
//! holding by, and the one thing that tells two cells of a matrix apart when their runners
//! share a name.
//!
//! Two ways to learn it, one request each:
//! - **By check run id** (`check-run-id`, which the action fills from `${{ job.check_run_id }}`
//!   where GitHub provides it): `getJob` on that id, recorded when GitHub answers with a job of
//!   this run attempt that has not completed. Exact: no sibling has this id.
//! - **By runner name** (no check run id, e.g. GitHub Enterprise Server): `listJobs` of the run
//!   attempt, recorded when exactly one running job of this job id runs on this runner. Runner
//!   names may repeat among self-hosted runners, so this can only narrow, never prove. It is
//!   also the fallback when GitHub knows no job of the check run id (404) or places it in
//!   another run attempt: a check run id that were not a job id must cost nothing.
//!
//! Whatever the answer, acquire goes on; without a job id the reaper judges the whole run.

use crate::input::Reader;
use crate::wire::{AnswerClass, Call, Failure, JobSummary, Reply, RunIdentity};

/// How this job is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobLookup {
    /// `record-job-id: false`, or nothing to look up by.
    Off,
    /// `getJob` on the job's check run id.
    ByCheckRun(u64),
    /// `listJobs` of the run attempt, matched by job id and runner name.
    ByRunner,
    /// The check run id did not name this job: `listJobs` is asked next (`fallback`).
    FallBack,
}

/// `check-run-id`: this job's check run id, which on GitHub.com is the Actions API's job id too.
/// Not a whole number: reported (`instead` says what happens then) and ignored.
pub(crate) fn check_run_id(r: &mut Reader<'_>, instead: &str) -> Option<u64> {
    match r.get("check-run-id") {
        // The default left unevaluated (a runner evaluates it; something that only imitates one
        // may pass it through): as good as no check run id.
        Some(text) if text.starts_with("${{") && text.ends_with("}}") => None,
        _ => match r.int("check-run-id", 0, 1, u64::MAX) {
            Ok(0) => None,
            Ok(n) => Some(n),
            // The error echoes the value only when it has no credential's shape.
            Err(e) => {
                r.warnings.push(format!(
                    "{e}: this job's check run id, as `${{{{ job.check_run_id }}}}` gives it; {instead}"
                ));
                None
            }
        },
    }
}

impl JobLookup {
    /// From `record-job-id` and `check-run-id`. A `check-run-id` that is not a whole number
    /// is reported and ignored (it only ever narrows the lookup).
    pub(crate) fn parse(r: &mut Reader<'_>, run: &RunIdentity) -> Self {
        let wanted = r.bool_or_warn("record-job-id", false);
        let check_run = check_run_id(r, "looking the job up by runner name instead");
        match (wanted, check_run) {
            (false, _) => JobLookup::Off,
            (true, Some(id)) => JobLookup::ByCheckRun(id),
            // A job without a runner name cannot be matched.
            (true, None) if run.runner_name.is_empty() => JobLookup::Off,
            (true, None) => JobLookup::ByRunner,
        }
    }

    /// The one question to ask before the first read of the state.
    pub fn question(&self, run: &RunIdentity) -> Option<Call> {
        match *self {
            JobLookup::Off | JobLookup::FallBack => None,
            JobLookup::ByCheckRun(job_id) => Some(Call::GetJob {
                repository: run.repository.clone(),
                job_id,
            }),
            JobLookup::ByRunner => Some(Call::ListJobs {
                repository: run.repository.clone(),
                run_id: run.run_id,
                attempt: run.run_attempt,
            }),
        }
    }

    /// The job list to ask after a check run id that did not name this job, once; a job without
    /// a runner name cannot be matched there.
    pub fn fallback(&mut self, run: &RunIdentity) -> Option<Call> {
        if *self != JobLookup::FallBack {
            return None;
        }
        if run.runner_name.is_empty() {
            *self = JobLookup::Off;
            return None;
        }
        *self = JobLookup::ByRunner;
        self.question(run)
    }

    /// Reads the answer: the job id to record (if any) and the line that says so. A check run
    /// id GitHub does not place in this attempt leaves the job list to ask
    /// ([`JobLookup::fallback`]).
    pub fn answer(
        &mut self,
        run: &RunIdentity,
        answer: Result<Reply, Failure>,
    ) -> (Option<u64>, String) {
        let by_check_run = matches!(self, JobLookup::ByCheckRun(_));
        let judged = if by_check_run && !run.runner_name.is_empty() {
            "looking the job up by runner name instead"
        } else {
            "the reaper will judge the run"
        };
        match (*self, answer) {
            (
                JobLookup::ByCheckRun(asked),
                Ok(Reply::Job {
                    id,
                    run_id,
                    run_attempt,
                    name,
                    status,
                    runner_name,
                    ..
                }),
            ) => {
                let wrong = if id != asked {
                    Some(format!("GitHub answered with job {id}"))
                } else if run_id != run.run_id {
                    Some(format!("it belongs to run {run_id}"))
                } else if run_attempt.is_some_and(|a| a != run.run_attempt) {
                    Some(format!(
                        "it belongs to attempt {}",
                        run_attempt.unwrap_or_default()
                    ))
                } else if status == "completed" {
                    Some("it has completed".to_string())
                } else if runner_name.as_deref().is_some_and(|n| {
                    !n.is_empty() && !run.runner_name.is_empty() && n != run.runner_name
                }) {
                    Some(format!(
                        "it runs on runner {:?}",
                        runner_name.unwrap_or_default()
                    ))
                } else {
                    None
                };
                if wrong.is_some() {
                    *self = JobLookup::FallBack;
                }
                match wrong {
                    None => (
                        Some(id),
                        format!("recorded job id {id} ({name:?}, from this job's check run id)"),
                    ),
                    Some(why) => (
                        None,
                        format!(
                            "no job id recorded: job {asked} (this job's check run id) is not a running job of run {} attempt {}: {why}; {judged}",
                            run.run_id, run.run_attempt
                        ),
                    ),
                }
            }
            (
                _,
                Ok(Reply::Jobs {
                    total_count, jobs, ..
                }),
            ) => {
                let mine: Vec<&JobSummary> = jobs
                    .iter()
                    .filter(|j| is_this_job(j, &run.job, &run.runner_name))
                    .collect();
                let unseen = total_count.saturating_sub(jobs.len() as u64);
                match mine.as_slice() {
                    // A runner's name can repeat (self-hosted runners, GitHub Enterprise
                    // Server): one match on the first page is this job only when no page
                    // follows, or the reaper could judge a sibling's job for this holding.
                    [_] if unseen > 0 => (None, format!(
                        "no job id recorded: this run attempt has {total_count} jobs and only the first page of {} was read, so a job {:?} on runner {:?} on a later page cannot be ruled out; {judged}",
                        jobs.len(), run.job, run.runner_name
                    )),
                    [one] => (
                        Some(one.id),
                        format!(
                            "recorded job id {} ({:?} on runner {:?})",
                            one.id, one.name, run.runner_name
                        ),
                    ),
                    [] if unseen > 0 => (None, format!(
                        "no job id recorded: this run attempt has {total_count} jobs and the first page of {} shows none running {:?} on runner {:?}; {judged}",
                        jobs.len(), run.job, run.runner_name
                    )),
                    [] => (None, format!(
                        "no job id recorded: no running job {:?} on runner {:?} in this run attempt; {judged}",
                        run.job, run.runner_name
                    )),
                    many => (None, format!(
                        "no job id recorded: {} running jobs match {:?} on runner {:?}; {judged}",
                        many.len(), run.job, run.runner_name
                    )),
                }
            }
            (_, Ok(_)) => (
                None,
                "no job id recorded: unexpected answer; the reaper will judge the run".to_string(),
            ),
            (_, Err(f)) if f.class == Some(AnswerClass::RateLimited) => (
                None,
                format!(
                    "no job id recorded: the lookup was rate-limited ({}); the reaper will judge the run",
                    f.message
                ),
            ),
            (_, Err(f)) if f.status == Some(404) && by_check_run => {
                *self = JobLookup::FallBack;
                (
                    None,
                    format!("no job id recorded: GitHub knows no job of this job's check run id ({}); {judged}", f.message),
                )
            }
            (_, Err(f)) => (
                None,
                format!(
                    "no job id recorded ({}; the token may lack actions: read); the reaper will judge the run",
                    f.message
                ),
            ),
        }
    }
}

/// A job of the attempt is this job: running on this runner, and named by its job id (a job
/// without `name:` is named by its id; a matrix cell by its id and its values in parentheses).
/// A job with its own `name:` is not recognised, and gets no job id.
fn is_this_job(j: &JobSummary, job: &str, runner: &str) -> bool {
    let named = j.name == job
        || j.name
            .strip_prefix(job)
            .is_some_and(|rest| rest.starts_with(" ("));
    j.status == "in_progress" && j.runner_name.as_deref() == Some(runner) && named
}

/// Whether two entries of the same holder id and run attempt, `mine` and `other`, are
/// different jobs, and if so what tells them apart. Job ids only ever separate: two entries that
/// both recorded one are different jobs when the ids differ, even on runners of the same name
/// (exact when the ids came from the check run id; a job list that lagged could have recorded
/// a sibling's). Runner names separate too: one job runs on one runner (an entry without a name
/// cannot be told apart this way). Otherwise they are one job.
pub fn apart(mine: &RunIdentity, other: &RunIdentity) -> Option<String> {
    match (other.job_id, mine.job_id) {
        (Some(theirs), Some(ours)) if theirs != ours => {
            Some(format!("job {theirs}, this is job {ours}"))
        }
        _ if !mine.runner_name.is_empty()
            && !other.runner_name.is_empty()
            && mine.runner_name != other.runner_name =>
        {
            Some(format!("runner {:?}", other.runner_name))
        }
        _ => None,
    }
}
