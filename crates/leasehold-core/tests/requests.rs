//! What each lock cycle costs in requests, and the storms the deliberate waits prevent: jobs
//! run the real operations against the GitHub model in virtual time, each request answered
//! after a fixed latency, and every request and sleep is counted. Counts, never times: the
//! benchmarks (`npm run bench`) measure how long things take.

use std::collections::BTreeMap;

use leasehold_core::{
    Call, Command, Entropy, Event, Millis, Operation, OperationKind, Outcome, Reply, SleepReason,
};
use leasehold_github_model::{http, http_date, GitHub};

const T0: Millis = 1_800_000_000_000;
/// Every request is answered this long after it is sent (and applied when it is sent).
const LATENCY: Millis = 80;
const STATE: &str = "locks/deploy.json";

fn inputs(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A request sent: which operation sent it, the call, the failure status if any, when it was
/// sent, and when its operation started.
type Sent = (OperationKind, String, Option<u16>, Millis, Millis);

/// One job: acquire, hold for `hold_ms`, release with the version acquire carried.
struct Job {
    n: usize,
    hold_ms: Millis,
    /// Release at this instant rather than `hold_ms` after acquiring.
    release_at: Option<Millis>,
    poll_seconds: u64,
    op: Option<Operation>,
    stage: Stage,
    next_at: Millis,
    /// The reply to deliver at `next_at` (else a timer or the start).
    reply: Option<Reply>,
    event_start: bool,
    carry: Option<String>,
    /// Release without the version acquire carried (reads first).
    no_carry: bool,
    /// The release's reads of the config are refused (403), as for a token that may not read it.
    refuse_config: bool,
    // What happened.
    /// Every request: which operation sent it (and its start, to tell one release from
    /// another), the call, the failure status if any, and when it was sent.
    requests: Vec<Sent>,
    op_started: Millis,
    sleeps: Vec<(OperationKind, SleepReason, Millis)>,
    acquired: Option<Outcome>,
    released: Option<Outcome>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Acquire,
    Hold,
    Release,
    Done,
}

impl Job {
    fn new(n: usize, start_at: Millis, hold_ms: Millis) -> Self {
        Job {
            n,
            hold_ms,
            release_at: None,
            poll_seconds: 2,
            op: None,
            stage: Stage::Acquire,
            next_at: start_at,
            reply: None,
            event_start: true,
            carry: None,
            no_carry: false,
            refuse_config: false,
            requests: Vec::new(),
            op_started: 0,
            sleeps: Vec::new(),
            acquired: None,
            released: None,
        }
    }

    fn context(&self) -> Vec<(&'static str, String)> {
        vec![
            ("lock", "deploy".into()),
            ("GITHUB_REPOSITORY", format!("octo/repo-{}", self.n % 3)),
            ("GITHUB_RUN_ID", (5000 + self.n).to_string()),
            ("GITHUB_RUN_ATTEMPT", "1".into()),
            ("GITHUB_JOB", "build".into()),
            ("RUNNER_NAME", format!("runner-{}", self.n)),
        ]
    }

    fn kind(&self) -> OperationKind {
        if self.stage == Stage::Release {
            OperationKind::Release
        } else {
            OperationKind::Acquire
        }
    }

    fn begin(&mut self, kind: OperationKind) {
        let mut pairs = self.context();
        if kind == OperationKind::Acquire {
            pairs.push(("poll-seconds", self.poll_seconds.to_string()));
            pairs.push(("timeout-minutes", "30".into()));
        } else if let Some(carry) = &self.carry {
            pairs.push(("carried", serde_json::to_string(&vec![carry]).unwrap()));
        }
        let entropy = Entropy {
            seed: 11 + self.n as u64 * 7 + u64::from(kind == OperationKind::Release),
            nonce: format!("{:016x}", self.n + 1),
        };
        self.op = Some(
            Operation::new(kind, &inputs(&pairs), &entropy)
                .expect("inputs")
                .0,
        );
        self.event_start = true;
    }

    /// Takes this job's next step at `now` (its `next_at`).
    fn step(&mut self, gh: &mut GitHub) {
        let now = self.next_at;
        if self.stage == Stage::Hold {
            self.stage = Stage::Release;
            self.begin(OperationKind::Release);
        }
        if self.op.is_none() {
            self.begin(OperationKind::Acquire);
        }
        let kind = self.kind();
        let op = self.op.as_mut().unwrap();
        let event = if std::mem::take(&mut self.event_start) {
            self.op_started = now;
            Event::Start { now }
        } else if let Some(reply) = self.reply.take() {
            Event::Reply { now, reply }
        } else {
            Event::Timer { now }
        };
        let step = op.step(event).expect("a legal event");
        match step.command {
            ref c @ Command::Request { ref call, .. } => {
                let refused = self.refuse_config
                    && kind == OperationKind::Release
                    && matches!(call, Call::ReadFile { path, .. } if path.ends_with(".config.json"));
                let mut answer = if refused {
                    http(403, "Resource not accessible by integration")
                } else {
                    gh.answer(c, now).reply
                };
                // GitHub dates every answer, errors included.
                if let Reply::Http { date: d @ None, .. } = &mut answer {
                    *d = Some(http_date(now));
                }
                let status = match &answer {
                    Reply::Http { status, .. } => Some(*status),
                    _ => None,
                };
                self.requests
                    .push((kind, call.name().to_string(), status, now, self.op_started));
                self.reply = Some(answer);
                self.next_at = now + LATENCY;
            }
            Command::Sleep { until_ms, reason } => {
                self.sleeps
                    .push((kind, reason, until_ms.saturating_sub(now)));
                self.next_at = until_ms.max(now);
            }
            Command::Finish { outcome } => {
                self.op = None;
                if kind == OperationKind::Acquire {
                    assert_eq!(
                        outcome.result.as_str(),
                        "acquired",
                        "job {}: {outcome:?}",
                        self.n
                    );
                    self.carry = outcome
                        .carry
                        .as_ref()
                        .filter(|_| !self.no_carry)
                        .map(|c| c.value.clone());
                    self.acquired = Some(*outcome);
                    self.stage = Stage::Hold;
                    self.next_at = self.release_at.unwrap_or(now + self.hold_ms).max(now);
                } else {
                    assert_eq!(
                        outcome.result.as_str(),
                        "released",
                        "job {}: {outcome:?}",
                        self.n
                    );
                    self.released = Some(*outcome);
                    self.stage = Stage::Done;
                }
            }
        }
    }
}

/// Runs the jobs to their end, each step at its own time, earliest first.
fn run(gh: &mut GitHub, jobs: &mut [Job]) {
    for _ in 0..1_000_000 {
        let Some(j) = jobs
            .iter_mut()
            .filter(|j| j.stage != Stage::Done)
            .min_by_key(|j| (j.next_at, j.n))
        else {
            return;
        };
        j.step(gh);
    }
    panic!("the jobs never finished");
}

fn config(gh: &mut GitHub, capacity: u32) {
    gh.commit_file(
        "main",
        "locks/deploy.config.json",
        &format!("{{\"capacity\": {capacity}}}\n"),
        T0 - 60_000,
    );
}

/// A lock used a moment ago by another job (its state holds a fresh config record).
fn warm(gh: &mut GitHub) -> Millis {
    let mut first = [Job::new(100, T0, 500)];
    run(gh, &mut first);
    first[0].next_at
}

/// The calls one job's release sent, with the failure status of each.
fn release_calls(j: &Job) -> Vec<(&str, Option<u16>)> {
    j.requests
        .iter()
        .filter(|r| r.0 == OperationKind::Release)
        .map(|r| (r.1.as_str(), r.2))
        .collect()
}

/// A lock of `capacity` used a moment ago by another job, and an instant ten seconds later.
fn warm_lock(capacity: u32) -> (GitHub, Millis) {
    let mut gh = GitHub::new("main");
    config(&mut gh, capacity);
    let at = warm(&mut gh) + 10_000;
    (gh, at)
}

#[test]
fn an_uncontended_acquire_and_release_take_three_requests() {
    let mut gh = GitHub::new("main");
    config(&mut gh, 1);
    let idle = warm(&mut gh) + 10_000;
    let mut jobs = [Job::new(1, idle, 1_000)];
    run(&mut gh, &mut jobs);
    let j = &jobs[0];
    let calls: Vec<&str> = j.requests.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        calls,
        ["readFile", "writeFile", "writeFile"],
        "{:?}",
        j.requests
    );
    assert!(
        j.sleeps.iter().all(|s| s.1 != SleepReason::WriteSpacing),
        "{:?}",
        j.sleeps
    );
}

#[test]
fn a_release_on_an_out_of_date_carried_version_reads_then_releases() {
    let (mut gh, at) = warm_lock(2);
    // Job 1 acquires and holds; job 2 acquires while it holds, so job 1's carried version is
    // out of date by the time it releases.
    let mut jobs = [Job::new(1, at, 3_000), Job::new(2, at + 1_000, 3_000)];
    run(&mut gh, &mut jobs);
    let release = release_calls(&jobs[0]);
    assert_eq!(
        release,
        [
            ("writeFile", Some(409)),
            ("readFile", None),
            ("writeFile", None)
        ]
    );
    // No backoff after that conflict (the carried version was merely old): only the second
    // between two writes of one operation that GitHub asks for.
    let waits: Vec<_> = jobs[0]
        .sleeps
        .iter()
        .filter(|s| s.0 == OperationKind::Release)
        .collect();
    assert!(
        waits
            .iter()
            .all(|s| s.1 == SleepReason::WriteSpacing && s.2 <= 1_000),
        "{waits:?}"
    );
    let last = gh.current("leasehold-state", STATE);
    let text = &last.expect("state").text;
    assert!(text.contains("\"holders\": []"), "{text}");
}

#[test]
fn acquire_carries_its_version_only_when_it_holds_the_lock_alone() {
    // Job 1 acquires while job 0 holds a lock of capacity 2: by job 1's release, job 0's
    // release or any arrival will most likely have changed the version, and writing on a stale
    // carried one costs a conflict, a read and the second another write waits. So nothing is
    // carried, and release reads first: two requests, no wait.
    let (mut gh, at) = warm_lock(2);
    let mut jobs = [Job::new(0, at, 10_000), Job::new(1, at + 1_000, 3_000)];
    run(&mut gh, &mut jobs);
    assert!(jobs[0].carry.is_some(), "job 0 acquired alone and carries");
    assert!(jobs[1].carry.is_none(), "job 1 acquired beside job 0");
    let release = release_calls(&jobs[1]);
    assert_eq!(release, [("readFile", None), ("writeFile", None)]);
}

#[test]
fn a_release_among_arrivals_is_not_put_off() {
    // Job 0 holds a lock of capacity 1; four jobs arrive a moment before it releases, so its
    // release reads a version another job enqueued on less than a second ago. The settle
    // deferral is for arrivals (`policy::settle`): the release writes at once, since it is
    // what the crowd waits for. GitHub's `date` has whole seconds, and the deferral judges
    // by it: the release reads late in a second, the crowd arrives earlier in the same one.
    let mut deferred_enqueues = 0;
    for lead in (300..=800).step_by(100) {
        let (mut gh, at) = warm_lock(1);
        let release_at = (at / 1_000 + 5) * 1_000 + 900;
        let mut jobs: Vec<Job> = (0..5)
            .map(|i| Job::new(i, release_at - lead + i as Millis * 30, 500))
            .collect();
        jobs[0] = Job::new(0, at, 0);
        jobs[0].release_at = Some(release_at);
        jobs[0].no_carry = true;
        run(&mut gh, &mut jobs);
        let release: Vec<_> = jobs[0]
            .requests
            .iter()
            .filter(|r| r.0 == OperationKind::Release)
            .collect();
        assert_eq!(release[0].1, "readFile");
        assert_eq!(release[1].1, "writeFile");
        assert_eq!(
            release[1].3 - release[0].3,
            LATENCY,
            "lead {lead} ms: {release:?}"
        );
        deferred_enqueues += jobs[1..]
            .iter()
            .flat_map(|j| &j.sleeps)
            .filter(|s| s.0 == OperationKind::Acquire && s.1 == SleepReason::WriteSpacing)
            .count();
    }
    // The arrivals did put each other off: the crowd the release went ahead of was there.
    assert!(deferred_enqueues > 0);
}

/// `n` jobs starting `gap_ms` apart on a warm lock of capacity 2, each holding `hold_ms`: the
/// requests and compare-and-swap conflicts of all of them.
fn crowd(n: usize, gap_ms: Millis, hold_ms: Millis) -> (usize, usize, Vec<Job>) {
    let (mut gh, at) = warm_lock(2);
    let mut jobs: Vec<Job> = (0..n)
        .map(|i| Job::new(i, at + i as Millis * gap_ms, hold_ms))
        .collect();
    run(&mut gh, &mut jobs);
    let requests = jobs.iter().map(|j| j.requests.len()).sum();
    let conflicts = jobs
        .iter()
        .flat_map(|j| &j.requests)
        .filter(|r| matches!(r.2, Some(409 | 422)))
        .count();
    (requests, conflicts, jobs)
}

/// Write attempts (successful or not) of `kind` in the busiest minute of the run.
fn busiest_minute(jobs: &[Job], kind: OperationKind) -> usize {
    busiest_minute_of(jobs, |r| r.0 == kind)
}

/// Write attempts (successful or not) of every operation in the busiest minute of the run.
fn busiest_writes(jobs: &[Job]) -> usize {
    busiest_minute_of(jobs, |_| true)
}

/// Write attempts (successful or not) that `counts` in the busiest minute of the run.
fn busiest_minute_of(jobs: &[Job], counts: impl Fn(&Sent) -> bool) -> usize {
    let mut at: Vec<Millis> = jobs
        .iter()
        .flat_map(|j| &j.requests)
        .filter(|r| r.1 == "writeFile" && counts(r))
        .map(|r| r.3)
        .collect();
    at.sort_unstable();
    (0..at.len())
        .map(|i| at[i..].iter().take_while(|&&t| t < at[i] + 60_000).count())
        .max()
        .unwrap_or(0)
}

#[test]
fn a_crowd_arriving_together_lets_the_lock_settle() {
    // 24 jobs starting 20 ms apart on a lock of capacity 2, each holding 1 s: each that reads
    // another's fresh enqueue waits for it to settle and reads again. The deferral costs reads
    // (this crowd makes 244 requests with it, 225 without) and saves writes, the scarcer of
    // GitHub's limits: 18 conflicts and 66 write attempts in the busiest minute with it; 35 and
    // 83 without (`policy::settle_delay` never deferring), past GitHub's 80 writes a minute,
    // where it answers with secondary rate limits.
    let (requests, conflicts, jobs) = crowd(24, 20, 1_000);
    let busiest = busiest_writes(&jobs);
    assert!(
        conflicts <= 25,
        "{conflicts} conflicts, {requests} requests"
    );
    assert!(
        busiest <= 80,
        "{busiest} write attempts in the busiest minute"
    );
    assert!(jobs.iter().all(|j| j.released.is_some()));
}

#[test]
fn conflicts_back_off_so_a_crowd_of_releases_does_not_storm() {
    // 40 holders of a lock of capacity 40 release at the same instant (a matrix finishing
    // together): a release is no arrival, so nothing lets the lock settle, and every conflict
    // but the first of each is followed by a growing, jittered backoff. Without it the
    // releases retry about once a second each: 820 write attempts in the busiest minute,
    // against 165 with it. (Even 165 is past GitHub's 80 a minute for one token: a crowd of
    // this size is then also paced by GitHub's rate-limit answers, which the retry policy
    // honours.)
    let (mut gh, at) = warm_lock(40);
    let mut jobs: Vec<Job> = (0..40)
        .map(|i| {
            let mut j = Job::new(i, at + i as Millis * 1_500, 0);
            j.release_at = Some(at + 120_000);
            j
        })
        .collect();
    run(&mut gh, &mut jobs);
    let busiest = busiest_minute(&jobs, OperationKind::Release);
    assert!(
        busiest <= 200,
        "{busiest} release write attempts in a minute"
    );
}

#[test]
fn the_writes_of_one_operation_are_a_second_apart() {
    let (_, _, jobs) = crowd(16, 0, 1_000);
    let mut close = 0;
    for j in &jobs {
        let writes: Vec<_> = j.requests.iter().filter(|r| r.1 == "writeFile").collect();
        for pair in writes.windows(2) {
            if pair[0].4 == pair[1].4 && pair[1].3 < pair[0].3 + 1_000 {
                close += 1;
            }
        }
    }
    assert_eq!(close, 0);
}

#[test]
fn an_acquire_right_after_another_jobs_release_does_not_wait() {
    let mut gh = GitHub::new("main");
    config(&mut gh, 1);
    let released = warm(&mut gh);
    let mut jobs = [Job::new(1, released + 50, 1_000)];
    run(&mut gh, &mut jobs);
    let calls: Vec<&str> = jobs[0].requests.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(calls, ["readFile", "writeFile", "writeFile"]);
    assert!(jobs[0].sleeps.is_empty(), "{:?}", jobs[0].sleeps);
}

#[test]
fn first_use_of_a_lock_repository_takes_five_requests() {
    let mut gh = GitHub::new("main");
    let mut jobs = [Job::new(1, T0, 1_000)];
    run(&mut gh, &mut jobs);
    let acquire: Vec<&str> = jobs[0]
        .requests
        .iter()
        .filter(|r| r.0 == OperationKind::Acquire)
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(
        acquire,
        [
            "readFile",
            "readFile",
            "createTree",
            "createCommit",
            "createBranch"
        ],
        "{:?}",
        jobs[0].requests
    );
    assert!(jobs[0].sleeps.is_empty(), "{:?}", jobs[0].sleeps);
    // The state rode in the branch's first commit, at the version git names its content: the
    // release writes on it, once, unrefused.
    let release: Vec<_> = jobs[0]
        .requests
        .iter()
        .filter(|r| r.0 == OperationKind::Release)
        .map(|r| (r.1.as_str(), r.2))
        .collect();
    assert_eq!(release, [("writeFile", None)], "{:?}", jobs[0].requests);
}

#[test]
fn jobs_starting_together_on_a_new_repository_create_the_branch_once() {
    let mut gh = GitHub::new("main");
    config(&mut gh, 2);
    let mut jobs: Vec<Job> = (0..8)
        .map(|i| Job::new(i, T0 + i as Millis * 50, 1_000))
        .collect();
    run(&mut gh, &mut jobs);
    let all: Vec<_> = jobs.iter().flat_map(|j| &j.requests).collect();
    let created = all
        .iter()
        .filter(|r| r.1 == "createBranch" && r.2.is_none())
        .count();
    assert_eq!(created, 1);
    // Nobody sends a write to learn that the branch is missing, or reads it missing twice.
    let missing_writes = all
        .iter()
        .filter(|r| r.1 == "writeFile" && r.2 == Some(404))
        .count();
    assert_eq!(missing_writes, 0);
    for j in &jobs {
        let missing_reads = j
            .requests
            .iter()
            .filter(|r| r.1 == "readFile" && r.2 == Some(404) && r.0 == OperationKind::Acquire)
            .count();
        assert!(missing_reads <= 2, "job {}: {:?}", j.n, j.requests); // the state and the config
    }
    assert!(jobs.iter().all(|j| j.released.is_some()));
}

#[test]
fn a_release_conflict_on_a_small_lock_backs_off_briefly_and_rereads_when_it_may_write() {
    // The two holders of a lock of capacity 2 release at the same instant (each reading first):
    // one write conflicts. A release contends only with the other holdings (and arrivals, which
    // back off on their own), so its backoff is sized by the two holdings: at most a quarter of
    // the 2 s an arrival's first conflict may wait, which is within the second GitHub asks
    // between two writes. The re-read then waits for that second, and the write goes on its
    // answer: planned on a version read a moment ago, not one read a second before (which, on
    // a busy lock, is how one release was refused four times in a row). Ten pairs, each with
    // its own entropy.
    let mut retries = Vec::new();
    for pair in 0..10 {
        let (mut gh, at) = warm_lock(2);
        let mut jobs = [
            Job::new(2 * pair, at, 0),
            Job::new(2 * pair + 1, at + 500, 0),
        ];
        for j in &mut jobs {
            j.release_at = Some(at + 5_000);
            j.no_carry = true;
        }
        run(&mut gh, &mut jobs);
        let refused: Vec<&Job> = jobs
            .iter()
            .filter(|j| {
                j.requests
                    .iter()
                    .any(|r| r.0 == OperationKind::Release && r.2 == Some(409))
            })
            .collect();
        assert_eq!(refused.len(), 1, "pair {pair}");
        let j = refused[0];
        let release: Vec<_> = j
            .requests
            .iter()
            .filter(|r| r.0 == OperationKind::Release)
            .collect();
        let calls: Vec<_> = release.iter().map(|r| (r.1.as_str(), r.2)).collect();
        assert_eq!(
            calls,
            [
                ("readFile", None),
                ("writeFile", Some(409)),
                ("readFile", None),
                ("writeFile", None)
            ],
            "pair {pair}"
        );
        let (refused_at, reread_at, written_at) = (release[1].3, release[2].3, release[3].3);
        assert_eq!(reread_at, refused_at + 1_000, "pair {pair}: {release:?}");
        assert_eq!(written_at, reread_at + LATENCY, "pair {pair}: {release:?}");
        assert!(
            j.sleeps
                .iter()
                .filter(|s| s.0 == OperationKind::Release)
                .all(|s| s.1 == SleepReason::Contention),
            "pair {pair}: {:?}",
            j.sleeps
        );
        retries.push(written_at - refused_at);
    }
    assert!(
        retries.iter().all(|&ms| ms <= 1_000 + LATENCY),
        "{retries:?}"
    );
}

#[test]
fn a_release_after_the_config_record_went_stale_still_hands_the_slot_on() {
    // Job 0 holds a lock of capacity 1 for six minutes; job 1 waits from the start. By the
    // release the config record in the state is older than the five minutes it is trusted for
    // (a waiter's polls read the config but write nothing): the release must still admit job 1
    // in its own write, the config read again if need be, rather than leave the slot free
    // until job 1's next poll notices it.
    let (mut gh, at) = warm_lock(1);
    let hold: Millis = 6 * 60 * 1000;
    let mut jobs = [Job::new(0, at, hold), Job::new(1, at + 2_000, 1_000)];
    jobs[0].no_carry = true;
    run(&mut gh, &mut jobs);
    let released = jobs[0].released.as_ref().expect("released");
    assert_eq!(released.result.as_str(), "released");
    let versions = gh.history("leasehold-state", STATE).expect("the state");
    // The release's own write: the last version written before job 1's release.
    let release_write = jobs[0]
        .requests
        .iter()
        .filter(|r| r.0 == OperationKind::Release && r.1 == "writeFile" && r.2.is_none())
        .map(|r| r.3)
        .next_back()
        .expect("the release wrote");
    let after: &leasehold_github_model::Version = versions
        .iter()
        .find(|v| v.at == release_write)
        .expect("the release's version");
    let state: serde_json::Value = serde_json::from_str(&after.text).unwrap();
    let holders: Vec<&str> = state["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["holderId"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        holders,
        ["octo/repo-1:5001:build"],
        "the release's version: {}",
        after.text
    );
    // One more request than a release that finds the record fresh: the config read.
    let calls = release_calls(&jobs[0]);
    assert!(
        calls.iter().filter(|c| c.0 == "readFile").count() == 2,
        "{calls:?}"
    );
}

#[test]
fn a_release_whose_config_read_is_refused_still_releases() {
    // As above, with the release's read of the config refused: a release never fails for a
    // config it could not read. It releases by the state's own (stale) record, admitting
    // nobody in its write; job 1 notices the free slot at its next poll and takes it.
    let (mut gh, at) = warm_lock(1);
    let mut jobs = [
        Job::new(0, at, 6 * 60 * 1000),
        Job::new(1, at + 2_000, 1_000),
    ];
    jobs[0].no_carry = true;
    jobs[0].refuse_config = true;
    run(&mut gh, &mut jobs);
    let calls = release_calls(&jobs[0]);
    assert_eq!(
        calls,
        [
            ("readFile", None),
            ("readFile", Some(403)),
            ("writeFile", None)
        ],
        "{calls:?}"
    );
    assert!(jobs[1].released.is_some());
}
