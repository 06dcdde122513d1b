//! Scale: a lock at its limits, 64 holders and 1,000 waiters. Its document stays within what
//! GitHub's contents API serves as JSON (1 MB, `MAX_STATE_BYTES`), and one more waiter (or a
//! waiter whose entry would take the document past that size) is refused with `queue-full`
//! before any write: never a document nobody could read back. (How long one decision takes on
//! such a document is a benchmark: `npm run bench`, BENCHMARKS.md.)

use std::collections::BTreeMap;

use leasehold_core::{
    limits, Command, Entropy, Event, FailureCode, LockState, Operation, OperationKind, QueueEntry,
    ResultWord, RunIdentity, Status,
};
use leasehold_github_model::GitHub;

const NOW: u64 = 1_800_000_000_000;

fn run(repository: &str, n: u64, job: &str) -> RunIdentity {
    RunIdentity {
        repository: repository.into(),
        run_id: n,
        run_attempt: 1,
        job: job.into(),
        runner_name: format!("runner-{n}"),
        url: format!("https://github.com/{repository}/actions/runs/{n}/attempts/1"),
        job_id: Some(n * 10),
    }
}

/// A lock of capacity 64 with 64 holders and `waiting` waiters, each with a job id of `job`
/// and a holder suffix `suffix`.
fn full(repository: &str, waiting: u64, job: &str, suffix: &str) -> LockState {
    let mut s = LockState::empty("big");
    for n in 0..64 + waiting {
        s.queue.push(QueueEntry {
            holder_id: leasehold_core::holder_id(repository, n, job, suffix),
            nonce: format!("{n:016x}"),
            run: run(repository, n, job),
            lease_ms: 3_600_000,
            enqueued_at: NOW,
            last_seen_at: NOW,
            pool: None,
        });
    }
    s.admit(64, NOW, 6 * 3_600_000);
    s.revision = 1_000;
    s
}

fn inputs(repository: &str, run_id: u64, job: &str, suffix: &str) -> BTreeMap<String, String> {
    [
        ("holder-suffix", suffix),
        ("lock", "big"),
        ("GITHUB_REPOSITORY", repository),
        ("repository", "octo/app"),
        ("GITHUB_RUN_ID", &run_id.to_string()),
        ("GITHUB_RUN_ATTEMPT", "1"),
        ("GITHUB_JOB", job),
        ("timeout-minutes", "1"),
        ("poll-seconds", "20"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// One acquire against a store holding `state`: its outcome and how many writes it sent.
fn acquire(
    repository: &str,
    state: &LockState,
    run_id: u64,
    job: &str,
    suffix: &str,
) -> (leasehold_core::Outcome, usize) {
    let mut github = GitHub::new("main");
    github.commit_file("main", "locks/big.config.json", r#"{"capacity": 64}"#, NOW);
    github.commit_file(
        "leasehold-state",
        "locks/big.json",
        &state.to_document(),
        NOW,
    );
    let entropy = Entropy {
        seed: 1,
        nonce: "00000000000000ff".into(),
    };
    let (mut op, _) = Operation::new(
        OperationKind::Acquire,
        &inputs(repository, run_id, job, suffix),
        &entropy,
    )
    .expect("inputs");
    let mut step = op.step(Event::Start { now: NOW }).unwrap();
    let mut now = NOW;
    let mut writes = 0;
    for _ in 0..1_000 {
        match &step.command {
            Command::Finish { outcome } => return ((**outcome).clone(), writes),
            Command::Sleep { until_ms, .. } => {
                now = now.max(*until_ms);
                step = op.step(Event::Timer { now }).unwrap();
            }
            Command::Request { call, .. } => {
                writes += usize::from(matches!(call, leasehold_core::Call::WriteFile { .. }));
                let reply = github.answer(&step.command, now).reply;
                now += 10;
                step = op.step(Event::Reply { now, reply }).unwrap();
            }
        }
    }
    panic!("acquire did not finish");
}

#[test]
fn a_full_lock_fits_the_contents_api_and_refuses_one_more_waiter() {
    let state = full("octo/app", limits::MAX_QUEUE as u64, "build", "");
    let text = state.to_document();
    assert!(
        text.len() <= leasehold_core::MAX_STATE_BYTES,
        "64 holders and 1,000 waiters are {} bytes",
        text.len()
    );
    assert_eq!(LockState::parse(&text, "big").unwrap(), state);
    let (outcome, writes) = acquire("octo/app", &state, 5_000, "build", "");
    assert_eq!(outcome.result, ResultWord::Failed);
    assert_eq!(outcome.error.as_ref().unwrap().code, FailureCode::QueueFull);
    assert_eq!(Status::of_outcome(&outcome), Status::QueueFull);
    assert_eq!(Status::QueueFull.exit_code(), 10);
    assert_eq!(writes, 0, "nothing was written");
    // One place less, and the same waiter joins.
    let (outcome, writes) = acquire(
        "octo/app",
        &full("octo/app", limits::MAX_QUEUE as u64 - 1, "build", ""),
        5_000,
        "build",
        "",
    );
    assert_eq!(outcome.result, ResultWord::Timeout, "{outcome:?}");
    assert!(writes >= 1);
}

#[test]
fn a_waiter_whose_entry_would_pass_the_size_limit_is_refused() {
    // The longest names GitHub allows (a 39-character owner, a 100-character repository, a
    // 100-character job id) and the longest holder suffix make each entry large: fewer than
    // 1,000 of them reach 1 MB.
    let repository = format!("{}/{}", "o".repeat(39), "r".repeat(100));
    let job = format!("j{}", "x".repeat(99));
    let suffix = "s".repeat(200);
    // As many waiters as fit: the document is at most 1 MB, and one entry more would pass it.
    let fits = |w: u64| {
        full(&repository, w, &job, &suffix).to_document().len() <= leasehold_core::MAX_STATE_BYTES
    };
    let mut waiting = 0;
    for step in [100, 10, 1] {
        while fits(waiting + step) {
            waiting += step;
        }
    }
    let state = full(&repository, waiting, &job, &suffix);
    assert!(
        state.queue.len() < limits::MAX_QUEUE,
        "{}",
        state.queue.len()
    );
    let (outcome, writes) = acquire(&repository, &state, 9_000, &job, &suffix);
    assert_eq!(
        outcome.error.as_ref().map(|e| e.code),
        Some(FailureCode::QueueFull),
        "{outcome:?}"
    );
    assert_eq!(writes, 0);
}
