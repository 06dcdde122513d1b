//! The job id lookup by check run id (`check-run-id`, from `${{ job.check_run_id }}`), and what
//! it decides: which job id is recorded, and whether an entry of the same holder id and run
//! attempt is this job or a matrix sibling whose runner has the same name.

mod common;

use common::{entropy, raw_inputs, DEPLOY_JOB};
use leasehold_core::{
    Call, Event, JobSummary, LockState, Operation, OperationKind, Outcome, Reply, ResultWord,
};

const T: u64 = 1_800_000_000_000;

fn acquire(extra: &[(&str, &str)]) -> (Operation, Vec<String>) {
    let raw = raw_inputs(DEPLOY_JOB, extra);
    let (op, plan) = Operation::new(
        OperationKind::Acquire,
        &raw,
        &entropy(1, "00000000000000aa"),
    )
    .unwrap();
    (op, plan.warnings)
}

fn job(id: u64, run_id: u64, attempt: Option<u32>, status: &str, runner: Option<&str>) -> Reply {
    Reply::Job {
        id,
        run_id,
        run_attempt: attempt,
        name: "deploy (mac)".into(),
        status: status.into(),
        conclusion: None,
        runner_name: runner.map(Into::into),
        completed_at: None,
        date: None,
    }
}

fn absent() -> Reply {
    common::http(404, "Not Found")
}

/// Starts an acquire with `check-run-id: 502` (and `extra`), answers its `getJob` with
/// `answer`, then an absent state and config; a `listJobs` asked then (the fallback) gets `list`.
/// The job id its first write records, its log, and whether it asked the list.
fn recorded_with(
    answer: Reply,
    extra: &[(&str, &str)],
    list: Reply,
) -> (Option<u64>, Vec<String>, bool) {
    let mut inputs = vec![("record-job-id", "true"), ("check-run-id", "502")];
    inputs.extend_from_slice(extra);
    let (mut op, _) = acquire(&inputs);
    let step = op.step(Event::Start { now: T }).unwrap();
    assert!(
        matches!(step.command.call(), Some(Call::GetJob { repository, job_id: 502 }) if repository == "octo/app"),
        "{:?}",
        step.command
    );
    let mut log = Vec::new();
    let mut asked_list = false;
    let mut reply = answer;
    let mut next = vec![list, absent(), absent()];
    for now in 1.. {
        let step = op
            .step(Event::Reply {
                now: T + now * 10,
                reply,
            })
            .unwrap();
        log.extend(step.log.iter().map(|l| l.text.clone()));
        match step.command.call() {
            Some(Call::WriteFile { content, .. }) => {
                let doc = LockState::parse(content, "deploy").unwrap();
                return (doc.holders[0].run.job_id, log, asked_list);
            }
            Some(Call::ListJobs {
                run_id: 77,
                attempt: 1,
                ..
            }) => {
                assert!(!asked_list, "the list is asked once");
                asked_list = true;
                reply = next.remove(0);
            }
            Some(Call::ReadFile { .. }) => reply = next.pop().expect("two reads"),
            other => panic!("{other:?}"),
        }
    }
    unreachable!()
}

fn recorded(answer: Reply) -> (Option<u64>, Vec<String>) {
    let (id, log, asked) = recorded_with(answer, &[], jobs(&[]));
    assert!(!asked, "{log:?}");
    (id, log)
}

/// A `listJobs` answer with these jobs `(id, runner)`, each running `deploy`.
fn jobs(list: &[(u64, &str)]) -> Reply {
    Reply::Jobs {
        total_count: list.len() as u64,
        jobs: list
            .iter()
            .map(|&(id, runner)| JobSummary {
                id,
                name: "deploy".into(),
                status: "in_progress".into(),
                conclusion: None,
                runner_name: Some(runner.into()),
            })
            .collect(),
        date: None,
    }
}

#[test]
fn the_check_run_id_is_recorded_when_github_says_it_is_this_jobs() {
    for attempt in [Some(1), None] {
        let (id, log) = recorded(job(502, 77, attempt, "in_progress", Some("r1")));
        assert_eq!(id, Some(502), "{log:?}");
        assert!(
            log.iter().any(|l| l.contains("recorded job id 502")),
            "{log:?}"
        );
    }
    // A job GitHub still shows queued, or without a runner name yet, is still this job.
    assert_eq!(recorded(job(502, 77, Some(1), "queued", None)).0, Some(502));
}

#[test]
fn a_check_run_id_github_places_elsewhere_records_nothing() {
    for (answer, why) in [
        (
            job(503, 77, Some(1), "in_progress", Some("r1")),
            "answered with job 503",
        ),
        (
            job(502, 78, Some(1), "in_progress", Some("r1")),
            "belongs to run 78",
        ),
        (
            job(502, 77, Some(2), "in_progress", Some("r1")),
            "belongs to attempt 2",
        ),
        (
            job(502, 77, Some(1), "completed", Some("r1")),
            "has completed",
        ),
        (
            job(502, 77, Some(1), "in_progress", Some("r7")),
            "runs on runner \"r7\"",
        ),
        (absent(), "Not Found"),
    ] {
        // The job list is asked instead, once, and its one match recorded.
        let (id, log, asked) =
            recorded_with(answer.clone(), &[], jobs(&[(777, "r1"), (778, "r2")]));
        assert!(asked, "{why}: {log:?}");
        assert_eq!(id, Some(777), "{why}: {log:?}");
        assert!(
            log.iter().any(|l| l.contains("no job id recorded")
                && l.contains(why)
                && l.contains("looking the job up by runner name instead")),
            "{why}: {log:?}"
        );
        // Nothing matches there either: no job id.
        let (id, _, asked) = recorded_with(answer.clone(), &[], jobs(&[(778, "r2")]));
        assert_eq!((id, asked), (None, true), "{why}");
        // Without a runner name there is nothing to match: no second question (and no runner
        // name to hold the answer's against).
        if why.starts_with("runs on runner") {
            continue;
        }
        let (id, log, asked) = recorded_with(answer, &[("RUNNER_NAME", "")], jobs(&[]));
        assert_eq!((id, asked), (None, false), "{why}: {log:?}");
        assert!(
            log.iter()
                .any(|l| l.contains(why) && l.contains("the reaper will judge the run")),
            "{why}: {log:?}"
        );
    }
    // A refusal (no actions: read) asks no list: it would be refused the same way.
    let (id, log, asked) = recorded_with(
        common::http(403, "Resource not accessible by integration"),
        &[],
        jobs(&[(777, "r1")]),
    );
    assert_eq!((id, asked), (None, false), "{log:?}");
}

/// The job list is read one page of 100: a single match there is this job only when the attempt
/// has no more jobs than that page, since runner names can repeat and a job of the same name on
/// a later page would be judged for this holding by the reaper.
#[test]
fn a_match_on_a_first_page_of_many_records_nothing() {
    let run = |total_count: u64| {
        let Reply::Jobs { jobs, date, .. } = jobs(&[(11, "r2"), (12, "r1")]) else {
            unreachable!()
        };
        recorded_with(
            absent(),
            &[],
            Reply::Jobs {
                total_count,
                jobs,
                date,
            },
        )
    };
    let (id, log, asked) = run(2);
    assert!(asked, "{log:?}");
    assert_eq!(id, Some(12), "the whole list was read: {log:?}");
    let (id, log, _) = run(150);
    assert_eq!(id, None, "{log:?}");
    assert!(
        log.iter()
            .any(|l| l.contains("150 jobs") && l.contains("later page")),
        "{log:?}"
    );
}

#[test]
fn without_a_usable_check_run_id_the_lookup_is_by_runner_name() {
    for (value, warned) in [
        ("", false),
        ("${{ job.check_run_id }}", false),
        ("12a", true),
        ("0", true),
        ("5.1725241954E+10", true),
    ] {
        let (mut op, warnings) = acquire(&[("record-job-id", "true"), ("check-run-id", value)]);
        assert_eq!(
            warnings
                .iter()
                .any(|w| w.contains("check-run-id") && w.contains("runner name")),
            warned,
            "{value:?}: {warnings:?}"
        );
        let step = op.step(Event::Start { now: T }).unwrap();
        assert!(
            matches!(step.command.call(), Some(Call::ListJobs { .. })),
            "{value:?}: {:?}",
            step.command
        );
    }
    // record-job-id: false asks nothing, check run id or not.
    let (mut op, _) = acquire(&[("record-job-id", "false"), ("check-run-id", "502")]);
    let step = op.step(Event::Start { now: T }).unwrap();
    assert!(matches!(step.command.call(), Some(Call::ReadFile { .. })));
}

/// The state with one holding of this job's holder id and attempt, on runner `r1` (this job's
/// runner name too), recording `job_id`.
fn sibling_state(job_id: Option<u64>, runner: &str) -> String {
    let job_id = job_id.map_or(String::new(), |id| format!(r#", "jobId": {id}"#));
    format!(
        r#"{{"schema": 1, "lock": "deploy", "revision": 3, "fence": 4,
  "config": {{"capacity": 2, "readAt": "2027-01-15T07:59:59.000Z"}},
  "holders": [{{"holderId": "octo/app:77:deploy", "nonce": "1111111111111111", "fence": 4,
    "run": {{"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "{runner}"{job_id}}},
    "acquiredAt": "2027-01-15T07:59:00.000Z", "expiresAt": "2027-01-15T08:59:00.000Z",
    "leaseMs": 3600000, "ceilingAt": "2027-01-22T07:59:00.000Z"}}],
  "queue": []}}"#
    )
}

/// This job (check run id 502, proven) meets a holding of its holder id on a runner of its name.
fn meet(theirs: Option<u64>, runner: &str) -> Outcome {
    let (mut op, _) = acquire(&[("record-job-id", "true"), ("check-run-id", "502")]);
    let _ = op.step(Event::Start { now: T }).unwrap();
    let _ = op
        .step(Event::Reply {
            now: T + 5,
            reply: job(502, 77, Some(1), "in_progress", Some("r1")),
        })
        .unwrap();
    let step = op
        .step(Event::Reply {
            now: T + 10,
            reply: Reply::File {
                sha: "s3".into(),
                content: sibling_state(theirs, runner),
                etag: None,
                date: None,
            },
        })
        .unwrap();
    match step.command {
        leasehold_core::Command::Finish { outcome } => *outcome,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_sibling_on_a_runner_of_the_same_name_is_told_apart_by_its_job_id() {
    let o = meet(Some(501), "r1");
    assert_eq!(o.result, ResultWord::Failed);
    let e = o.error.as_ref().expect("refused");
    assert_eq!(e.code.as_str(), "holder-collision");
    assert!(
        e.message.contains("job 501, this is job 502"),
        "{}",
        e.message
    );
    assert_eq!(o.stats.writes, 0);
    // The same job id is this job acquiring again: the holding is already its own.
    assert_eq!(meet(Some(502), "r1").result, ResultWord::Acquired);
    // A holding without a job id (an older version, a lookup that failed) can only be judged by
    // the runner's name, as before: the same name is taken as this job.
    assert_eq!(meet(None, "r1").result, ResultWord::Acquired);
    // An entry without a runner name is told apart by its job id alone.
    assert_eq!(meet(Some(501), "").result, ResultWord::Failed);
    assert_eq!(meet(Some(502), "").result, ResultWord::Acquired);
    // Job ids only separate: the same job id on another runner (a wrong check-run-id given by
    // hand, say) is still another job, as one job runs on one runner.
    for id in [Some(502), None] {
        let o = meet(id, "r9");
        assert_eq!(
            o.error.as_ref().map(|e| e.code.as_str()),
            Some("holder-collision"),
            "{id:?}"
        );
    }
}
