//! The reaper against GitHub as `leasehold-github-model` has it (shared with the simulator): a
//! state file per lock with compare-and-swap, a config file, and the Actions view of run
//! attempts and jobs. This test only adds refusals and a misreporting answer on top.

mod common;

use std::collections::BTreeMap;

use common::{entropy, raw_inputs, DEPLOY_JOB};
use leasehold_core::{
    Call, Command, Event, Holder, JobSummary, LockState, Operation, OperationKind, Outcome,
    QueueEntry, Reply, ResultWord, RunIdentity,
};
use leasehold_github_model::{GitHub, Job, Timing};

const T: u64 = 1_800_000_000_000;
const MIN: u64 = 60_000;

#[derive(Clone)]
enum Answer {
    Status(&'static str),
    Http(u16),
    /// A completed run, but of another attempt than the one asked about.
    OtherAttempt(u32),
    /// The attempt asked about, without its `run_attempt` (GitHub's description does not require
    /// it), with this `status` (which it lets be null).
    Unnumbered(Option<&'static str>),
    /// A completed run attempt, but of another run than the one asked about.
    OtherRun(u64),
    /// A job of run 1 attempt 1 on runner `r` that completed at this time, as GitHub wrote it
    /// (`None`: no `completed_at`, which GitHub's description lets be null).
    CompletedAt(Option<String>),
}

/// Another writer's change, committed just before the next state write.
type Interference = Box<dyn FnMut(&mut LockState)>;

struct Fake {
    /// The honest GitHub: the lock files and the Actions view (registered from `runs` and `jobs`
    /// when a reap starts).
    github: GitHub,
    config: Option<String>,
    /// What GitHub says of each run attempt: its status, or (a fault of this test) a refusal.
    runs: BTreeMap<(u64, u32), Answer>,
    jobs: BTreeMap<u64, (u64, Answer)>,
    /// What a completed job's answer says of its runner and completion (default: runner "r", at T).
    job_facts: BTreeMap<u64, (&'static str, u64)>,
    /// Before applying the next state write, another writer commits this change first.
    interfere: Option<Interference>,
    now: u64,
    questions: Vec<String>,
    writes: usize,
    /// The locks set up.
    locks: Vec<String>,
}

const BRANCH: &str = "leasehold-state";

fn state_path(lock: &str) -> String {
    format!("locks/{lock}.json")
}

fn http(status: u16) -> Reply {
    common::http(status, &format!("HTTP {status}"))
}

fn run(repo: &str, id: u64, attempt: u32, job_id: Option<u64>) -> RunIdentity {
    RunIdentity {
        repository: repo.into(),
        run_id: id,
        run_attempt: attempt,
        job: "build".into(),
        runner_name: "r".into(),
        url: String::new(),
        job_id,
    }
}

fn holder(id: &str, fence: u64, run: RunIdentity, expires_at: u64) -> Holder {
    Holder {
        holder_id: id.into(),
        nonce: format!("{:016x}", fence),
        fence,
        run,
        acquired_at: T - 10 * MIN,
        expires_at,
        lease_ms: 15 * MIN,
        ceiling_at: T + 6 * 60 * MIN,
        claimed_at: None,
        pool: None,
    }
}

fn queued(id: &str, run: RunIdentity) -> QueueEntry {
    QueueEntry {
        holder_id: id.into(),
        nonce: "00000000000000ff".into(),
        run,
        lease_ms: 15 * MIN,
        enqueued_at: T - MIN,
        last_seen_at: T - MIN,
        pool: None,
    }
}

impl Fake {
    fn new() -> Self {
        let mut github = GitHub::new("main");
        github.add_branch(BRANCH);
        Fake {
            github,
            config: None,
            runs: BTreeMap::new(),
            jobs: BTreeMap::new(),
            job_facts: BTreeMap::new(),
            interfere: None,
            now: T,
            questions: Vec::new(),
            writes: 0,
            locks: Vec::new(),
        }
    }

    fn lock(&mut self, name: &str, holders: Vec<Holder>, queue: Vec<QueueEntry>) {
        let mut s = LockState::empty(name);
        s.revision = 3;
        s.fence = holders.iter().map(|h| h.fence).max().unwrap_or(0);
        s.holders = holders;
        s.queue = queue;
        self.locks.push(name.into());
        self.github
            .commit_file(BRANCH, &state_path(name), &s.to_document(), self.now);
    }

    /// The repository of the first entry in the locks that `found` picks (runs and jobs are
    /// registered under it), or `o/a`.
    fn repository_of(&self, found: impl Fn(&RunIdentity) -> bool) -> String {
        for lock in &self.locks {
            let Some(v) = self.github.current(BRANCH, &state_path(lock)) else {
                continue;
            };
            let st: LockState = serde_json::from_str(&v.text).expect("a state");
            let runs = st
                .holders
                .iter()
                .map(|h| &h.run)
                .chain(st.queue.iter().map(|q| &q.run));
            for r in runs {
                if found(r) {
                    return r.repository.clone();
                }
            }
        }
        "o/a".into()
    }

    /// Puts the config file and the Actions view the test set up into the model.
    fn register(&mut self) {
        if let Some(text) = &self.config {
            for lock in &self.locks {
                let path = format!("locks/{lock}.config.json");
                if self.github.current("main", &path).map(|v| &v.text) != Some(text) {
                    self.github.commit_file("main", &path, text, self.now);
                }
            }
        }
        let timing = |status: &str, at: u64, conclusion: &str| match status {
            "completed" => Timing::completed(at, conclusion),
            "queued" => Timing::queued(),
            _ => Timing::running(T - MIN),
        };
        for (&(run_id, attempt), a) in &self.runs {
            if let Answer::Status(st) = a {
                let repository =
                    self.repository_of(|r| r.run_id == run_id && r.run_attempt == attempt);
                self.github.set_run_attempt(
                    &repository,
                    run_id,
                    attempt,
                    timing(st, T, "cancelled"),
                );
            }
        }
        for (&id, (run_id, a)) in &self.jobs {
            if let Answer::Status(st) = a {
                let (runner, completed) = self.job_facts.get(&id).copied().unwrap_or(("r", T));
                let job = Job {
                    repository: self.repository_of(|r| r.job_id == Some(id)),
                    run_id: *run_id,
                    run_attempt: 1,
                    name: "build".into(),
                    runner_name: runner.into(),
                    timing: timing(st, completed, "failure"),
                };
                self.github.set_job(id, job);
            }
        }
    }

    /// This test's faults on top of the model: a refusal, or an answer about another attempt.
    fn refusal(&self, command: &Command) -> Option<Reply> {
        let answer = match command.call()? {
            Call::GetRunAttempt {
                run_id, attempt, ..
            } => self.runs.get(&(*run_id, *attempt)),
            Call::GetJob { job_id, .. } => self.jobs.get(job_id).map(|(_, a)| a),
            _ => None,
        };
        // A run attempt's answer: its run, attempt number (if given) and status (if any).
        let run = |run_id: u64, attempt: Option<u32>, status: Option<&str>| Reply::Run {
            run_id,
            run_attempt: attempt,
            status: status.map(str::to_string),
            conclusion: Some("success".into()).filter(|_| status == Some("completed")),
            date: None,
        };
        match (answer?, command.call()?) {
            (Answer::Http(status), _) => Some(http(*status)),
            (Answer::OtherAttempt(other), Call::GetRunAttempt { run_id, .. }) => {
                Some(run(*run_id, Some(*other), Some("completed")))
            }
            (Answer::OtherRun(other), Call::GetRunAttempt { attempt, .. }) => {
                Some(run(*other, Some(*attempt), Some("completed")))
            }
            (Answer::Unnumbered(status), Call::GetRunAttempt { run_id, .. }) => {
                Some(run(*run_id, None, *status))
            }
            (Answer::CompletedAt(text), Call::GetJob { job_id, .. }) => Some(Reply::Job {
                id: *job_id,
                run_id: 1,
                run_attempt: Some(1),
                name: "build".into(),
                status: "completed".into(),
                conclusion: Some("failure".into()),
                runner_name: Some("r".into()),
                completed_at: text.clone(),
                date: None,
            }),
            _ => None,
        }
    }

    fn perform(&mut self, command: &Command) -> Reply {
        match command.call().expect("a request") {
            Call::GetRunAttempt {
                repository,
                run_id,
                attempt,
                ..
            } => self
                .questions
                .push(format!("{repository} run {run_id}/{attempt}")),
            Call::GetJob { job_id, .. } => self.questions.push(format!("job {job_id}")),
            Call::WriteFile { path, .. } => {
                if let Some(mut f) = self.interfere.take() {
                    let lock = path.trim_start_matches("locks/").trim_end_matches(".json");
                    let mut s = self.state(lock);
                    f(&mut s);
                    s.revision += 1;
                    self.github
                        .commit_file(BRANCH, path, &s.to_document(), self.now);
                }
            }
            Call::ReadFile { .. } => {}
            other => panic!("unexpected command {other:?}"),
        }
        if let Some(reply) = self.refusal(command) {
            return reply;
        }
        let answer = self.github.answer(command, self.now);
        if let Some(c) = &answer.committed {
            let lock = c
                .path
                .trim_start_matches("locks/")
                .trim_end_matches(".json");
            LockState::parse(&self.github.current(BRANCH, &c.path).unwrap().text, lock)
                .expect("a valid state");
            self.writes += 1;
        }
        answer.reply
    }

    /// Runs a reap to its end; `step_ms` is how long each request takes.
    fn reap(&mut self, inputs: &[(&str, &str)], step_ms: u64) -> Outcome {
        let raw = raw_inputs(
            &[
                ("GITHUB_REPOSITORY", "octo/locks"),
                ("GITHUB_RUN_ID", "900"),
                ("GITHUB_JOB", "reap"),
            ],
            inputs,
        );
        let entropy = entropy(5, "0000000000000000");
        let (mut op, _) =
            Operation::new(OperationKind::Reap, &raw, &entropy).expect("valid inputs");
        self.register();
        let mut step = op.step(Event::Start { now: self.now }).unwrap();
        for _ in 0..10_000 {
            let command = step.command.clone();
            match command {
                Command::Finish { outcome } => return *outcome,
                Command::Sleep { until_ms, .. } => {
                    self.now = self.now.max(until_ms);
                    step = op.step(Event::Timer { now: self.now }).unwrap();
                }
                c => {
                    let reply = self.perform(&c);
                    self.now += step_ms;
                    step = op
                        .step(Event::Reply {
                            now: self.now,
                            reply,
                        })
                        .unwrap();
                }
            }
        }
        panic!("the reap never finished");
    }

    fn state(&self, lock: &str) -> LockState {
        let text = &self
            .github
            .current(BRANCH, &state_path(lock))
            .expect("a lock")
            .text;
        LockState::parse(text, lock).expect("a valid state")
    }
}

fn actions(o: &Outcome) -> Vec<(String, String, String)> {
    o.reaped
        .iter()
        .flat_map(|r| r.entries.iter())
        .map(|e| {
            (
                e.holder_id.clone(),
                serde_json::to_value(e.action)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
                e.reason.to_string(),
            )
        })
        .collect()
}

#[test]
fn frees_what_completed_runs_left_and_keeps_the_living_and_the_unknown() {
    let mut f = Fake::new();
    f.config = Some(r#"{"capacity": 3}"#.into());
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, None), T + 10 * MIN),
            holder("o/a:2:build", 2, run("o/a", 2, 1, None), T + 10 * MIN),
            holder("o/a:3:build", 3, run("o/a", 3, 1, None), T + 10 * MIN),
        ],
        vec![
            queued("o/a:4:build", run("o/a", 4, 1, None)),
            queued("o/a:5:build", run("o/a", 5, 2, None)),
        ],
    );
    f.runs.insert((1, 1), Answer::Status("completed"));
    f.runs.insert((2, 1), Answer::Status("in_progress"));
    f.runs.insert((3, 1), Answer::Http(403));
    f.runs.insert((4, 1), Answer::Status("queued"));
    f.runs.insert((5, 2), Answer::Status("completed"));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped, "{o:?}");
    assert!(o.success);
    let st = f.state("deploy");
    // Run 1 is over: its holding is gone and the head of the queue (run 4) took the slot; run 5's
    // waiting entry (attempt 2, completed) is gone; the living (2) and the unknown (3) stay.
    let holders: Vec<&str> = st.holders.iter().map(|h| h.holder_id.as_str()).collect();
    assert_eq!(holders, vec!["o/a:2:build", "o/a:3:build", "o/a:4:build"]);
    assert!(st.queue.is_empty());
    assert_eq!(st.holders[2].fence, 4, "admitted with the next fence");
    let change = st.last_change.as_ref().unwrap();
    assert_eq!(
        (change.action.as_str(), change.by.as_str()),
        ("reap", "reaper octo/locks:900:reap")
    );
    assert_eq!(
        change
            .removed
            .iter()
            .map(|r| (r.holder_id.as_str(), r.reason.as_str()))
            .collect::<Vec<_>>(),
        vec![("o/a:1:build", "run-completed")]
    );
    assert_eq!(f.writes, 1);
    let a = actions(&o);
    assert!(
        a.contains(&(
            "o/a:1:build".into(),
            "removed".into(),
            "run-completed".into()
        )),
        "{a:?}"
    );
    assert!(
        a.contains(&(
            "o/a:5:build".into(),
            "removed".into(),
            "run-completed".into()
        )),
        "{a:?}"
    );
    assert!(
        a.contains(&("o/a:2:build".into(), "kept".into(), "active".into())),
        "{a:?}"
    );
    assert!(
        a.contains(&("o/a:3:build".into(), "kept".into(), "unverified".into())),
        "{a:?}"
    );
    assert_eq!(o.stats.lookups, 5);
}

#[test]
fn a_live_holder_is_never_freed_when_the_actions_api_fails() {
    let mut f = Fake::new();
    f.lock(
        "deploy",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T + 10 * MIN,
        )],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Http(502));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    assert_eq!(f.state("deploy").holders.len(), 1);
    assert_eq!(f.writes, 0);
    assert!(
        o.stats.lookups > 1,
        "a transient failure is asked again: {:?}",
        o.stats
    );
    assert_eq!(
        actions(&o),
        vec![("o/a:1:build".into(), "kept".into(), "unverified".into())]
    );
    // 404 (a deleted run, or a token that cannot see it) proves nothing either.
    f.runs.insert((1, 1), Answer::Http(404));
    f.reap(&[("lock", "deploy")], 100);
    assert_eq!(f.state("deploy").holders.len(), 1);
}

#[test]
fn a_lease_that_ran_out_is_freed_unless_its_run_is_proven_alive() {
    let mut f = Fake::new();
    // Both leases ran out long ago (past grace and skew of the unconfigured policy).
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, None), T - 30 * MIN),
            holder("o/a:2:build", 2, run("o/a", 2, 1, None), T - 30 * MIN),
        ],
        vec![],
    );
    // Run 1 cannot be read (404); run 2 is proven active.
    f.runs.insert((2, 1), Answer::Status("in_progress"));
    let o = f.reap(&[("lock", "deploy")], 100);
    let a = actions(&o);
    assert_eq!(f.questions, vec!["o/a run 1/1", "o/a run 2/1"]);
    assert!(
        a.contains(&(
            "o/a:1:build".into(),
            "removed".into(),
            "lease-expired".into()
        )),
        "{a:?}"
    );
    assert!(
        a.contains(&("o/a:2:build".into(), "kept".into(), "active".into())),
        "a live holder is never freed by the reaper: {a:?}"
    );
    assert_eq!(
        f.state("deploy")
            .holders
            .iter()
            .map(|h| h.holder_id.as_str())
            .collect::<Vec<_>>(),
        vec!["o/a:2:build"]
    );
}

#[test]
fn a_recorded_job_id_is_judged_by_the_job_not_the_run() {
    let mut f = Fake::new();
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build:1", 1, run("o/a", 1, 1, Some(11)), T + 10 * MIN),
            holder("o/a:1:build:2", 2, run("o/a", 1, 1, Some(12)), T + 10 * MIN),
        ],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Status("in_progress"));
    f.jobs.insert(11, (1, Answer::Status("completed")));
    f.jobs.insert(12, (1, Answer::Status("in_progress")));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(f.questions, vec!["job 11", "job 12"]);
    let a = actions(&o);
    assert!(
        a.contains(&(
            "o/a:1:build:1".into(),
            "removed".into(),
            "job-completed".into()
        )),
        "{a:?}"
    );
    assert_eq!(
        f.state("deploy")
            .holders
            .iter()
            .map(|h| h.holder_id.as_str())
            .collect::<Vec<_>>(),
        vec!["o/a:1:build:2"]
    );
}

#[test]
fn a_conflict_plans_again_with_the_answers_already_gathered() {
    let mut f = Fake::new();
    f.lock(
        "deploy",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T + 10 * MIN,
        )],
        vec![queued("o/b:7:ship", run("o/b", 7, 1, None))],
    );
    f.runs.insert((1, 1), Answer::Status("completed"));
    f.runs.insert((7, 1), Answer::Status("queued"));
    // Another job enqueues just before the reaper's write: 409, read again, write again.
    f.interfere = Some(Box::new(|s: &mut LockState| {
        s.queue.push(queued("o/c:8:x", run("o/c", 8, 1, None)))
    }));
    f.runs.insert((8, 1), Answer::Status("queued"));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    assert_eq!(o.stats.conflicts, 1);
    assert_eq!(
        f.questions,
        vec!["o/a run 1/1", "o/b run 7/1", "o/c run 8/1"],
        "nothing asked twice"
    );
    let st = f.state("deploy");
    assert_eq!(
        st.holders
            .iter()
            .map(|h| h.holder_id.as_str())
            .collect::<Vec<_>>(),
        vec!["o/b:7:ship"]
    );
    assert_eq!(
        st.queue
            .iter()
            .map(|q| q.holder_id.as_str())
            .collect::<Vec<_>>(),
        vec!["o/c:8:x"]
    );
}

#[test]
fn the_scan_deadline_writes_what_was_proven_and_fails_visibly() {
    let mut f = Fake::new();
    let holders = (1..=5)
        .map(|i| {
            holder(
                &format!("o/a:{i}:build"),
                i,
                run("o/a", i, 1, None),
                T + 60 * MIN,
            )
        })
        .collect();
    f.lock("deploy", holders, vec![]);
    for i in 1..=5 {
        f.runs.insert((i, 1), Answer::Status("completed"));
    }
    // Each answer takes 12 s; the scan deadline is 60 s: two reads, then three questions fit.
    let o = f.reap(
        &[("lock", "deploy"), ("scan-deadline-seconds", "60")],
        12_000,
    );
    assert_eq!(o.result, ResultWord::Failed);
    assert_eq!(o.error.as_ref().unwrap().code.as_str(), "scan-deadline");
    assert_eq!(f.questions.len(), 3);
    let st = f.state("deploy");
    let left: Vec<&str> = st.holders.iter().map(|h| h.holder_id.as_str()).collect();
    assert_eq!(
        left,
        vec!["o/a:4:build", "o/a:5:build"],
        "only what was proven was removed"
    );
    let a = actions(&o);
    assert!(
        a.contains(&("o/a:4:build".into(), "kept".into(), "unchecked".into())),
        "{a:?}"
    );
}

#[test]
fn checkpoints_every_ten_changes() {
    let mut f = Fake::new();
    let queue = (1..=12)
        .map(|i| queued(&format!("o/a:{i}:build"), run("o/a", i, 1, None)))
        .collect();
    f.lock("deploy", vec![], queue);
    for i in 1..=12 {
        f.runs.insert((i, 1), Answer::Status("completed"));
    }
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    assert_eq!(f.writes, 2, "a checkpoint at ten, then the rest");
    assert!(f.state("deploy").queue.is_empty());
    assert_eq!(actions(&o).iter().filter(|a| a.1 == "removed").count(), 12);
}

#[test]
fn a_proven_live_holder_is_renewed_when_the_policy_says_so_never_past_its_ceiling() {
    let mut f = Fake::new();
    f.config = Some(r#"{"capacity": 2, "lease": {"ttlSeconds": 900, "renewSeconds": 300, "reaperRenews": true}}"#.into());
    let mut near_ceiling = holder("o/a:2:build", 2, run("o/a", 2, 1, None), T + 5 * MIN);
    near_ceiling.ceiling_at = T + 8 * MIN;
    near_ceiling.run.job_id = Some(2);
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, Some(1)), T + 5 * MIN),
            near_ceiling,
        ],
        vec![],
    );
    f.jobs.insert(1, (1, Answer::Status("in_progress")));
    f.jobs.insert(2, (2, Answer::Status("in_progress")));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    let st = f.state("deploy");
    assert!(
        st.holders[0].expires_at >= T + 15 * MIN,
        "renewed by a full lease"
    );
    assert_eq!(
        st.holders[1].expires_at,
        T + 8 * MIN,
        "never past the ceiling"
    );
    // Not due: nothing written.
    let writes = f.writes;
    f.reap(&[("lock", "deploy")], 100);
    assert_eq!(f.writes, writes);
}

#[test]
fn several_locks_share_their_answers() {
    let mut f = Fake::new();
    f.lock(
        "a",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T + 10 * MIN,
        )],
        vec![],
    );
    f.lock(
        "b",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T + 10 * MIN,
        )],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Status("completed"));
    let o = f.reap(&[("lock", "a\nb")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    assert_eq!(o.lock, "a, b");
    assert_eq!(f.questions.len(), 1);
    assert!(f.state("a").holders.is_empty() && f.state("b").holders.is_empty());
    assert_eq!(o.reaped.len(), 2);
}

#[test]
fn bad_reap_inputs_name_the_input() {
    let entropy = entropy(5, "0000000000000000");
    let raw = |pairs: &[(&str, &str)]| raw_inputs(pairs, &[]);
    for (pairs, input) in [
        (vec![("GITHUB_REPOSITORY", "o/r")], "lock"),
        (vec![("lock", ", ,"), ("GITHUB_REPOSITORY", "o/r")], "lock"),
        (
            vec![("lock", "a b/c"), ("GITHUB_REPOSITORY", "o/r")],
            "lock",
        ),
        (
            vec![
                ("lock", "a"),
                ("GITHUB_REPOSITORY", "o/r"),
                ("scan-deadline-seconds", "5"),
            ],
            "scan-deadline-seconds",
        ),
    ] {
        let err = Operation::new(OperationKind::Reap, &raw(&pairs), &entropy)
            .err()
            .expect("refused");
        assert!(err.to_string().contains(input), "{err}");
    }
}

#[test]
fn acquire_records_its_job_id_only_when_exactly_one_job_matches() {
    let job = |id: u64, name: &str, status: &str, runner: &str| JobSummary {
        id,
        name: name.into(),
        status: status.into(),
        conclusion: None,
        runner_name: Some(runner.into()),
    };
    let cases: Vec<(Vec<JobSummary>, Option<u64>)> = vec![
        (
            vec![
                job(1, "deploy", "in_progress", "r1"),
                job(2, "test", "in_progress", "r2"),
            ],
            Some(1),
        ),
        (
            vec![
                job(3, "deploy (linux, 3)", "in_progress", "r1"),
                job(4, "deploy (mac, 3)", "in_progress", "r2"),
            ],
            Some(3),
        ),
        (vec![job(5, "deploy", "completed", "r1")], None),
        (vec![job(6, "Deploy to prod", "in_progress", "r1")], None),
        (
            vec![
                job(7, "deploy", "in_progress", "r1"),
                job(8, "deploy", "in_progress", "r1"),
            ],
            None,
        ),
        (vec![job(9, "deployer", "in_progress", "r1")], None),
    ];
    for (jobs, expected) in cases {
        let raw = raw_inputs(DEPLOY_JOB, &[("record-job-id", "true")]);
        let entropy = entropy(1, "00000000000000aa");
        let (mut op, _) = Operation::new(OperationKind::Acquire, &raw, &entropy).unwrap();
        let step = op.step(Event::Start { now: T }).unwrap();
        assert!(
            matches!(step.command.call(), Some(Call::ListJobs { repository, run_id: 77, attempt: 1 }) if repository == "octo/app"),
            "{:?}",
            step.command
        );
        let reply = Reply::Jobs {
            total_count: jobs.len() as u64,
            jobs: jobs.clone(),
            date: None,
        };
        let step = op.step(Event::Reply { now: T + 10, reply }).unwrap();
        assert!(matches!(step.command.call(), Some(Call::ReadFile { .. })));
        // Absent state, absent config: the write carries the run identity with the job id.
        let _ = op
            .step(Event::Reply {
                now: T + 20,
                reply: http(404),
            })
            .unwrap();
        let step = op
            .step(Event::Reply {
                now: T + 30,
                reply: http(404),
            })
            .unwrap();
        let Some(Call::WriteFile { content, .. }) = step.command.call() else {
            panic!("{:?}", step.command)
        };
        let doc = LockState::parse(content, "deploy").unwrap();
        assert_eq!(doc.holders[0].run.job_id, expected, "{jobs:?}");
    }
    // A refused lookup records nothing and the acquire goes on.
    let raw = raw_inputs(
        &[
            ("lock", "deploy"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_JOB", "deploy"),
            ("RUNNER_NAME", "r1"),
            ("record-job-id", "true"),
        ],
        &[],
    );
    let (mut op, _) = Operation::new(
        OperationKind::Acquire,
        &raw,
        &entropy(1, "00000000000000aa"),
    )
    .unwrap();
    let _ = op.step(Event::Start { now: T }).unwrap();
    let step = op
        .step(Event::Reply {
            now: T + 10,
            reply: http(403),
        })
        .unwrap();
    assert!(
        step.log
            .iter()
            .any(|l| l.text.contains("no job id recorded")),
        "{:?}",
        step.log
    );
    assert!(matches!(step.command.call(), Some(Call::ReadFile { .. })));
}

#[test]
fn a_rate_limited_question_stops_the_questions_and_writes_what_was_proven() {
    let mut f = Fake::new();
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, None), T + 10 * MIN),
            holder("o/a:2:build", 2, run("o/a", 2, 1, None), T + 10 * MIN),
            holder("o/a:3:build", 3, run("o/a", 3, 1, None), T + 10 * MIN),
        ],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Status("completed"));
    f.runs.insert((2, 1), Answer::Http(429));
    f.runs.insert((3, 1), Answer::Status("completed"));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Failed);
    assert_eq!(o.error.as_ref().unwrap().code.as_str(), "rate-limited");
    assert_eq!(
        f.questions,
        vec!["o/a run 1/1", "o/a run 2/1"],
        "no question after the rate limit, and none repeated"
    );
    let st = f.state("deploy");
    let left: Vec<&str> = st.holders.iter().map(|h| h.holder_id.as_str()).collect();
    assert_eq!(
        left,
        vec!["o/a:2:build", "o/a:3:build"],
        "what was proven is written; the rest is left as it is"
    );
}

/// A rate limit met while reaping one lock stops the questions for the rest of the reap: each
/// later lock writes only what is proven (its expiries) and asks nothing, as the README says.
#[test]
fn a_rate_limit_stops_the_questions_for_every_later_lock_of_the_reap() {
    let mut f = Fake::new();
    f.lock(
        "a",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T + 10 * MIN,
        )],
        vec![],
    );
    f.lock(
        "b",
        vec![holder(
            "o/a:2:build",
            2,
            run("o/a", 2, 1, None),
            T + 10 * MIN,
        )],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Http(429));
    f.runs.insert((2, 1), Answer::Status("completed"));
    let o = f.reap(&[("lock", "a\nb")], 100);
    assert_eq!(o.result, ResultWord::Failed);
    assert_eq!(f.questions, vec!["o/a run 1/1"], "no question for lock b");
    assert_eq!(
        f.state("b").holders.len(),
        1,
        "lock b's holding left as it is"
    );
}

#[test]
fn no_question_is_asked_or_repeated_after_the_scan_deadline() {
    let mut f = Fake::new();
    let holders = (1..=3)
        .map(|i| {
            holder(
                &format!("o/a:{i}:build"),
                i,
                run("o/a", i, 1, None),
                T + 60 * MIN,
            )
        })
        .collect();
    f.lock("deploy", holders, vec![]);
    f.runs.insert((1, 1), Answer::Status("completed"));
    f.runs.insert((2, 1), Answer::Http(502));
    f.runs.insert((3, 1), Answer::Status("completed"));
    // Each request takes 10 s; the scan deadline is 40 s: two reads, run 1 (20 s), run 2 (30 s);
    // its retry would come after the deadline.
    let o = f.reap(
        &[("lock", "deploy"), ("scan-deadline-seconds", "40")],
        10_000,
    );
    assert_eq!(
        o.error.as_ref().map(|e| e.code.as_str()),
        Some("scan-deadline")
    );
    assert_eq!(f.questions, vec!["o/a run 1/1", "o/a run 2/1"]);
    assert_eq!(
        f.state("deploy").holders.len(),
        2,
        "run 1's holding was removed all the same"
    );
}

/// GitHub documents its times as ISO 8601 with offsets in its examples: a job's completion time
/// with an offset is the same instant, and one that cannot be read proves nothing (the check
/// that the job completed after the entry was made needs it).
#[test]
fn a_jobs_completion_time_is_read_with_its_offset_and_an_unreadable_one_proves_nothing() {
    // T is 2027-01-15T08:00:00Z.
    for (completed, verdict) in [
        // T - 10 min, before the holding was claimed at T + 1 min: another job's.
        ("2027-01-15T00:50:00-07:00", ("kept", "unverified")),
        // T + 2 min: this holding's job.
        (
            "2027-01-15T01:02:00.000-07:00",
            ("removed", "job-completed"),
        ),
        ("2027-01-15T08:02:00Z", ("removed", "job-completed")),
        ("yesterday", ("kept", "unverified")),
    ] {
        let mut f = Fake::new();
        let mut h = holder("o/a:1:build", 1, run("o/a", 1, 1, Some(30)), T + 10 * MIN);
        h.claimed_at = Some(T + MIN);
        f.lock("deploy", vec![h], vec![]);
        f.jobs
            .insert(30, (1, Answer::CompletedAt(Some(completed.into()))));
        let o = f.reap(&[("lock", "deploy")], 100);
        assert_eq!(
            actions(&o),
            vec![("o/a:1:build".into(), verdict.0.into(), verdict.1.into())],
            "completed at {completed:?}"
        );
    }
}

/// An entry's time is the lower bound of GitHub's clock when it was made, so its own job
/// completed at or after it. A job that completed before (less GitHub's whole second) is an earlier
/// job of the runner, recorded from a lagging job list: no proof, however close (the skew, 60 s
/// here, is no allowance: it took an earlier job's completion 20 s before for this entry's, and
/// freed a live holder). A completed job with no completion time proves nothing either.
#[test]
fn a_job_that_completed_before_the_entry_was_made_is_no_proof_however_close() {
    for (completed, verdict) in [
        (Some("2027-01-15T08:00:40Z"), ("kept", "unverified")),
        (Some("2027-01-15T08:00:59Z"), ("kept", "unverified")),
        (Some("2027-01-15T08:01:00Z"), ("removed", "job-completed")),
        (None, ("kept", "unverified")),
    ] {
        let mut f = Fake::new();
        let mut h = holder("o/a:1:build", 1, run("o/a", 1, 1, Some(30)), T + 10 * MIN);
        h.claimed_at = Some(T + MIN + 500);
        f.lock("deploy", vec![h], vec![]);
        f.jobs
            .insert(30, (1, Answer::CompletedAt(completed.map(str::to_string))));
        let o = f.reap(&[("lock", "deploy")], 100);
        assert_eq!(
            actions(&o),
            vec![("o/a:1:build".into(), verdict.0.into(), verdict.1.into())],
            "completed at {completed:?}"
        );
    }
}

#[test]
fn a_completed_job_proves_nothing_about_an_entry_it_is_not_the_job_of() {
    let mut f = Fake::new();
    let mut later = holder("o/a:1:build:b", 2, run("o/a", 1, 1, Some(21)), T + 10 * MIN);
    later.claimed_at = Some(T + MIN);
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build:a", 1, run("o/a", 1, 1, Some(20)), T + 10 * MIN),
            later,
            holder("o/a:1:build:c", 3, run("o/a", 1, 1, Some(22)), T + 10 * MIN),
        ],
        vec![],
    );
    // Job 20 ran on another runner than the holding names; job 21 completed before holding b was
    // taken (an earlier job of that runner, recorded from a lagging job list); job 22 is b-fine.
    f.jobs.insert(20, (1, Answer::Status("completed")));
    f.job_facts.insert(20, ("someone-else", T));
    f.jobs.insert(21, (1, Answer::Status("completed")));
    f.job_facts.insert(21, ("r", T - 10 * MIN));
    f.jobs.insert(22, (1, Answer::Status("completed")));
    let o = f.reap(&[("lock", "deploy")], 100);
    let a = actions(&o);
    assert!(
        a.contains(&("o/a:1:build:a".into(), "kept".into(), "unverified".into())),
        "{a:?}"
    );
    assert!(
        a.contains(&("o/a:1:build:b".into(), "kept".into(), "unverified".into())),
        "{a:?}"
    );
    assert!(
        a.contains(&(
            "o/a:1:build:c".into(),
            "removed".into(),
            "job-completed".into()
        )),
        "{a:?}"
    );
    // An answer about another attempt, or another run, than the one asked proves nothing either.
    for other in [Answer::OtherAttempt(1), Answer::OtherRun(6)] {
        let mut g = Fake::new();
        g.lock(
            "deploy",
            vec![holder(
                "o/a:5:build",
                1,
                run("o/a", 5, 2, None),
                T + 10 * MIN,
            )],
            vec![],
        );
        g.runs.insert((5, 2), other);
        let o = g.reap(&[("lock", "deploy")], 100);
        assert_eq!(
            actions(&o),
            vec![("o/a:5:build".into(), "kept".into(), "unverified".into())]
        );
    }
}

#[test]
fn a_run_attempt_answered_without_its_number_is_judged_by_the_route_and_without_a_status_proves_nothing(
) {
    // GitHub's description requires neither `run_attempt` nor a non-null `status` of a run
    // attempt: the route (`…/attempts/{n}`) names the attempt, and an answer without a status
    // says nothing of whether the run is over.
    let mut g = Fake::new();
    g.lock(
        "deploy",
        vec![
            holder("o/a:5:build", 1, run("o/a", 5, 2, None), T + 10 * MIN),
            holder("o/a:6:build", 2, run("o/a", 6, 1, None), T + 10 * MIN),
        ],
        vec![],
    );
    g.runs.insert((5, 2), Answer::Unnumbered(Some("completed")));
    g.runs.insert((6, 1), Answer::Unnumbered(None));
    let o = g.reap(&[("lock", "deploy")], 100);
    let mut a = actions(&o);
    a.sort();
    let want = [
        ("o/a:5:build", "removed", "run-completed"),
        ("o/a:6:build", "kept", "unverified"),
    ];
    assert_eq!(a, want.map(|(h, w, r)| (h.into(), w.into(), r.into())));
}

#[test]
fn a_damaged_entry_is_unverified_and_never_stops_the_reap() {
    let mut f = Fake::new();
    let mut damaged = holder("octo:1:build", 1, run("octo", 1, 1, None), T + 10 * MIN);
    damaged.run.repository = "octo".into();
    f.lock(
        "deploy",
        vec![
            damaged,
            holder("o/a:2:build", 2, run("o/a", 2, 1, None), T + 10 * MIN),
        ],
        vec![queued("o/a:3:build", run("o/a", 0, 1, None))],
    );
    f.runs.insert((2, 1), Answer::Status("completed"));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped, "{o:?}");
    assert_eq!(
        f.questions,
        vec!["o/a run 2/1"],
        "nothing is asked about what cannot be asked"
    );
    let a = actions(&o);
    assert!(
        a.contains(&("octo:1:build".into(), "kept".into(), "unverified".into())),
        "{a:?}"
    );
    assert!(
        a.contains(&("o/a:3:build".into(), "kept".into(), "unverified".into())),
        "{a:?}"
    );
    assert!(
        a.contains(&(
            "o/a:2:build".into(),
            "removed".into(),
            "run-completed".into()
        )),
        "{a:?}"
    );
}

#[test]
fn a_checkpoint_holds_at_most_ten_changes_even_of_one_run() {
    let mut f = Fake::new();
    let queue = (1..=25)
        .map(|i| queued(&format!("o/a:1:build:{i}"), run("o/a", 1, 1, None)))
        .collect();
    f.lock("deploy", vec![], queue);
    f.runs.insert((1, 1), Answer::Status("completed"));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(o.result, ResultWord::Reaped);
    assert_eq!(f.questions.len(), 1);
    assert_eq!(f.writes, 3, "10, 10 and 5");
    assert!(f.state("deploy").queue.is_empty());
}

#[test]
fn an_invalid_config_changes_nothing() {
    let mut f = Fake::new();
    f.config = Some(r#"{"capacity": 1, "lease": {"ttlSeconds": 5}}"#.into());
    f.lock(
        "deploy",
        vec![holder(
            "o/a:1:build",
            1,
            run("o/a", 1, 1, None),
            T - 60 * MIN,
        )],
        vec![],
    );
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(
        o.error.as_ref().map(|e| e.code.as_str()),
        Some("config-invalid")
    );
    assert_eq!((f.writes, f.questions.len()), (0, 0));
}

#[test]
fn renewals_need_fresh_evidence_about_the_job_itself_and_never_reach_into_the_past() {
    let mut f = Fake::new();
    f.config = Some(r#"{"capacity": 3, "lease": {"ttlSeconds": 900, "renewSeconds": 300, "reaperRenews": true}}"#.into());
    let mut past_ceiling = holder("o/a:3:build", 3, run("o/a", 3, 1, Some(33)), T - MIN);
    past_ceiling.ceiling_at = T - MIN;
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, None), T + 5 * MIN),
            holder("o/a:2:build", 2, run("o/a", 2, 1, Some(22)), T + 5 * MIN),
            past_ceiling,
        ],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Status("in_progress"));
    f.jobs.insert(22, (2, Answer::Status("in_progress")));
    f.jobs.insert(33, (3, Answer::Status("in_progress")));
    let o = f.reap(&[("lock", "deploy")], 100);
    let st = f.state("deploy");
    assert_eq!(
        st.holders[0].expires_at,
        T + 5 * MIN,
        "a running run attempt does not prove its job runs: not renewed"
    );
    assert!(
        st.holders[1].expires_at > T + 14 * MIN,
        "the job itself is running: renewed"
    );
    assert_eq!(
        st.holders[2].expires_at,
        T - MIN,
        "past its ceiling: never renewed (into the past)"
    );
    let a = actions(&o);
    assert_eq!(
        a.iter().filter(|x| x.0 == "o/a:2:build").count(),
        1,
        "reported once: {a:?}"
    );
    assert!(
        a.contains(&("o/a:2:build".into(), "renewed".into(), "active".into())),
        "{a:?}"
    );
}

#[test]
fn an_expired_holding_left_unchecked_by_the_scan_is_freed_as_any_acquire_would() {
    let mut f = Fake::new();
    f.lock(
        "deploy",
        vec![
            holder("o/a:1:build", 1, run("o/a", 1, 1, None), T + 60 * MIN),
            holder("o/a:2:build", 2, run("o/a", 2, 1, None), T - 60 * MIN),
        ],
        vec![],
    );
    f.runs.insert((1, 1), Answer::Http(502));
    // Each request takes 20 s; scan 50 s: two reads, then the question about run 1 (no time to
    // ask it again after its 502, nor to ask about run 2).
    let o = f.reap(
        &[("lock", "deploy"), ("scan-deadline-seconds", "50")],
        20_000,
    );
    let a = actions(&o);
    assert!(
        a.contains(&(
            "o/a:2:build".into(),
            "removed".into(),
            "lease-expired".into()
        )),
        "{a:?}"
    );
    assert_eq!(f.questions, vec!["o/a run 1/1"]);
}

#[test]
fn a_holding_admitted_after_its_job_completed_is_freed_by_the_job_s_completion() {
    // Claimed (enqueued) while its job ran, admitted from the queue after the job had died and
    // GitHub had marked it completed: the completion is after the claim, so it is this job's.
    let mut f = Fake::new();
    let mut late = holder("o/a:4:build", 4, run("o/a", 4, 1, Some(44)), T + 10 * MIN);
    late.claimed_at = Some(T - 20 * MIN);
    late.acquired_at = T - MIN;
    f.lock("deploy", vec![late], vec![]);
    f.jobs.insert(44, (4, Answer::Status("completed")));
    f.job_facts.insert(44, ("r", T - 5 * MIN));
    let o = f.reap(&[("lock", "deploy")], 100);
    assert_eq!(
        actions(&o),
        vec![(
            "o/a:4:build".into(),
            "removed".into(),
            "job-completed".into()
        )]
    );
}
