//! A resource pool end to end, against GitHub as `leasehold-github-model` has it: 12 jobs from 3
//! repositories, each an acquire then (after its work) a release, interleaved request by request
//! on a virtual clock, against 3 resources of caps 1, 2 and 2 with preference chains, two
//! partitions and a consumer limit. Every version of the state file that was ever committed is
//! checked: no resource above its cap, no two intersecting partitions held at once, no consumer
//! above its limit; every job is admitted exactly once and told its resource.

use std::collections::{BTreeMap, BTreeSet};

use leasehold_core::{
    conflict, parse_config, Command, Entropy, Event, LockState, LogLine, Operation, OperationKind,
    Outcome, ResultWord,
};
use leasehold_github_model::GitHub;

const T: u64 = 1_800_000_000_000;
const BRANCH: &str = "leasehold-state";
const STATE: &str = "locks/pool.json";
const CONFIG: &str = r#"{
  "resources": {
    "solo": { "capacity": 1, "tags": ["fast"] },
    "duo-a": { "capacity": 2, "tags": ["fast", "gpu"] },
    "duo-b": { "capacity": 2, "tags": ["gpu"] }
  },
  "consumers": { "o/ops": { "maxConcurrent": 1 }, "o/web": { "resources": ["duo-a", "duo-b"] } },
  "affinitySeconds": 300
}"#;

struct Job {
    inputs: BTreeMap<String, String>,
    op: Operation,
    /// The command to perform next, and when.
    next: Command,
    at: u64,
    releasing: bool,
    acquired: Option<Outcome>,
    released: Option<Outcome>,
    log: Vec<LogLine>,
    hold_ms: u64,
}

fn inputs(repo: &str, run: u64, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [
        ("lock", "pool"),
        ("repository", "octo/locks"),
        ("GITHUB_REPOSITORY", repo),
        ("GITHUB_RUN_ATTEMPT", "1"),
        ("GITHUB_JOB", "build"),
        ("record-job-id", "false"),
        ("poll-seconds", "5"),
        ("timeout-minutes", "120"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    m.insert("GITHUB_RUN_ID".into(), run.to_string());
    m.insert("RUNNER_NAME".into(), format!("runner-{run}"));
    for (k, v) in extra {
        m.insert(k.to_string(), v.to_string());
    }
    m
}

fn start(
    kind: OperationKind,
    inputs: &BTreeMap<String, String>,
    seed: u64,
    now: u64,
) -> (Operation, Command, Vec<LogLine>) {
    let entropy = Entropy {
        seed,
        nonce: format!("{seed:016x}"),
    };
    let (mut op, _) = Operation::new(kind, inputs, &entropy).expect("valid inputs");
    let step = op.step(Event::Start { now }).expect("a first step");
    (op, step.command, step.log)
}

/// Runs every job to its end; returns the jobs and the model.
fn run_pool(jobs: Vec<(BTreeMap<String, String>, u64)>) -> (Vec<Job>, GitHub) {
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", CONFIG, T);
    let mut jobs: Vec<Job> = jobs
        .into_iter()
        .enumerate()
        .map(|(i, (inputs, hold_ms))| {
            let at = T + i as u64 * 97;
            let (op, next, log) = start(OperationKind::Acquire, &inputs, i as u64 + 1, at);
            Job {
                inputs,
                op,
                next,
                at,
                releasing: false,
                acquired: None,
                released: None,
                log,
                hold_ms,
            }
        })
        .collect();
    for _ in 0..200_000 {
        let Some(i) = (0..jobs.len())
            .filter(|&i| jobs[i].released.is_none())
            .min_by_key(|&i| (jobs[i].at, i))
        else {
            return (jobs, github);
        };
        let job = &mut jobs[i];
        let now = job.at;
        let step = match job.next.clone() {
            Command::Finish { outcome } if !job.releasing => {
                assert_eq!(outcome.result, ResultWord::Acquired, "{:?}", outcome.error);
                job.acquired = Some(*outcome);
                job.releasing = true;
                let at = now + job.hold_ms;
                let (op, next, log) =
                    start(OperationKind::Release, &job.inputs, i as u64 + 100, at);
                job.op = op;
                job.next = next;
                job.at = at;
                job.log.extend(log);
                continue;
            }
            Command::Finish { outcome } => {
                assert_eq!(outcome.result, ResultWord::Released, "{:?}", outcome.error);
                job.released = Some(*outcome);
                continue;
            }
            Command::Sleep { until_ms, .. } => {
                job.at = until_ms.max(now);
                job.op.step(Event::Timer { now: job.at }).expect("a step")
            }
            c @ Command::Request { .. } => {
                let answer = github.answer(&c, now);
                job.at = now + 50;
                job.op
                    .step(Event::Reply {
                        now: job.at,
                        reply: answer.reply,
                    })
                    .expect("a step")
            }
        };
        job.next = step.command;
        job.log.extend(step.log);
    }
    panic!("the jobs never finished");
}

fn twelve_jobs() -> Vec<(BTreeMap<String, String>, u64)> {
    let m = 60_000;
    let spec: [(&str, &[(&str, &str)]); 12] = [
        ("o/api", &[("prefer", "solo,duo-a"), ("partition", "db")]),
        ("o/api", &[("prefer", "fast"), ("partition", "db")]),
        ("o/api", &[("prefer", "gpu"), ("affinity", "api")]),
        ("o/api", &[("prefer", "solo")]),
        ("o/web", &[("prefer", "duo-b,duo-a"), ("partition", "ui")]),
        ("o/web", &[("requires", "gpu"), ("partition", "ui")]),
        ("o/web", &[("prefer", "fast")]),
        ("o/web", &[]),
        ("o/ops", &[("prefer", "solo"), ("partition", "db,ui")]),
        ("o/ops", &[("requires", "fast")]),
        ("o/ops", &[("prefer", "duo-b")]),
        ("o/ops", &[("partition", "db")]),
    ];
    spec.iter()
        .enumerate()
        .map(|(i, (repo, extra))| {
            (
                inputs(repo, 100 + i as u64, extra),
                (3 + (i as u64 * 7) % 11) * m,
            )
        })
        .collect()
}

#[test]
fn every_commit_respects_caps_partitions_and_consumers_and_every_job_is_admitted_once() {
    let (jobs, github) = run_pool(twelve_jobs());
    let pool = parse_config("c", CONFIG).unwrap().pool.unwrap();
    let history = github
        .history(BRANCH, STATE)
        .expect("the state was written");
    // Every job joined and released (a release hands its slot on in the same write).
    assert!(history.len() >= 24, "{} versions", history.len());
    let mut admitted: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for v in history {
        let st = LockState::parse(&v.text, "pool").expect("every version reads");
        for r in &pool.resources {
            let n = st
                .holders
                .iter()
                .filter(|h| h.pool.as_ref().map(|s| &s.resource) == Some(&r.name))
                .count();
            assert!(
                n <= r.capacity as usize,
                "{} holds {n} > {} in revision {}",
                r.name,
                r.capacity,
                st.revision
            );
        }
        for (i, a) in st.holders.iter().enumerate() {
            let seat = a.pool.as_ref().expect("every holding of a pool has a seat");
            for b in &st.holders[i + 1..] {
                let other = b.pool.as_ref().unwrap();
                assert!(
                    !conflict(&pool, &seat.partition, &other.partition),
                    "{} and {} hold intersecting partitions in revision {}",
                    a.holder_id,
                    b.holder_id,
                    st.revision
                );
            }
            admitted
                .entry(a.holder_id.clone())
                .or_default()
                .insert(a.fence);
        }
        let ops = st
            .holders
            .iter()
            .filter(|h| h.run.repository == "o/ops")
            .count();
        assert!(ops <= 1, "o/ops holds {ops} in revision {}", st.revision);
        assert!(
            st.holders
                .iter()
                .filter(|h| h.run.repository == "o/web")
                .all(|h| h.pool.as_ref().unwrap().resource != "solo"),
            "o/web's allowlist"
        );
    }
    assert_eq!(admitted.len(), 12, "every job held");
    assert!(
        admitted.values().all(|f| f.len() == 1),
        "each admitted once: {admitted:?}"
    );
    for job in &jobs {
        let o = job.acquired.as_ref().unwrap();
        let resource = o.resource.as_deref().expect("resource output");
        let tags = o.resource_tags.as_ref().expect("resource-tags output");
        let declared = pool
            .resources
            .iter()
            .find(|r| r.name == resource)
            .expect("a declared resource");
        assert_eq!(tags, &declared.tags);
    }
    let last = LockState::parse(&history.last().unwrap().text, "pool").unwrap();
    assert!(last.holders.is_empty() && last.queue.is_empty());
    let waited: Vec<&LogLine> = jobs
        .iter()
        .flat_map(|j| &j.log)
        .filter(|l| l.text.contains("waiting because: "))
        .collect();
    assert!(!waited.is_empty(), "a waiter says why");
    assert!(
        waited.iter().any(|l| l.text.contains("no-resource (")
            || l.text.contains("partition")
            || l.text.contains("consumer-limit")),
        "{:?}",
        waited.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
}

#[test]
fn a_full_preferred_resource_gives_the_next_in_the_chain_and_a_broken_config_writes_nothing() {
    let m = 60_000;
    let first = inputs("o/api", 1, &[("prefer", "solo,duo-b")]);
    let second = inputs("o/api", 2, &[("prefer", "solo,duo-b")]);
    let (jobs, _) = run_pool(vec![(first, 30 * m), (second, m)]);
    let got: Vec<&str> = jobs
        .iter()
        .map(|j| j.acquired.as_ref().unwrap().resource.as_deref().unwrap())
        .collect();
    assert_eq!(got, ["solo", "duo-b"]);

    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file(
        "main",
        "locks/pool.config.json",
        r#"{"resources": {"a": {"capacity": 1}}, "consumers": {"o/r": {"resources": ["b"]}}}"#,
        T,
    );
    let (mut op, mut next, _) = start(OperationKind::Acquire, &inputs("o/api", 3, &[]), 9, T);
    let mut now = T;
    let outcome = loop {
        match next {
            Command::Finish { outcome } => break *outcome,
            Command::Sleep { until_ms, .. } => {
                now = until_ms;
                next = op.step(Event::Timer { now }).unwrap().command;
            }
            c => {
                let reply = github.answer(&c, now).reply;
                now += 50;
                next = op.step(Event::Reply { now, reply }).unwrap().command;
            }
        }
    };
    let error = outcome.error.expect("failed");
    assert_eq!(error.code.as_str(), "config-invalid");
    assert!(
        error.message.contains("pool rule undeclared-resource"),
        "{}",
        error.message
    );
    assert_eq!(
        github.history(BRANCH, STATE).map(<[_]>::len),
        Some(0),
        "nothing written"
    );
}

/// Runs one operation to its end against `github`, from `now`; returns its outcome.
fn drive(
    github: &mut GitHub,
    kind: OperationKind,
    inputs: &BTreeMap<String, String>,
    seed: u64,
    now: &mut u64,
) -> Outcome {
    let (mut op, mut next, _) = start(kind, inputs, seed, *now);
    for _ in 0..1_000 {
        match next {
            Command::Finish { outcome } => return *outcome,
            Command::Sleep { until_ms, .. } => {
                *now = until_ms.max(*now);
                next = op.step(Event::Timer { now: *now }).unwrap().command;
            }
            c => {
                let reply = github.answer(&c, *now).reply;
                *now += 50;
                next = op.step(Event::Reply { now: *now, reply }).unwrap().command;
            }
        }
    }
    panic!("{kind:?} never finished");
}

#[test]
fn a_rate_limited_renewal_backs_the_resource_off_once_even_when_not_due() {
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", CONFIG, T);
    let mut now = T;
    let job = inputs("o/api", 1, &[("prefer", "solo")]);
    let acquired = drive(&mut github, OperationKind::Acquire, &job, 1, &mut now);
    assert_eq!(acquired.resource.as_deref(), Some("solo"));
    let nonce = acquired.nonce.clone().unwrap();
    let mut renew = job.clone();
    renew.insert("nonce".into(), nonce);
    renew.insert("if-due".into(), "true".into());
    renew.insert("outcome".into(), "rate-limited".into());
    let writes_before = github.history(BRANCH, STATE).unwrap().len();
    let expires_before = acquired.lease.as_ref().unwrap().expires_at;
    let renewed = drive(&mut github, OperationKind::Renew, &renew, 2, &mut now);
    // The write recorded the outcome only: the lease was not due, and the result says so.
    assert_eq!(renewed.result, ResultWord::NotDue, "{:?}", renewed.error);
    assert!(renewed.success);
    assert_eq!(renewed.lease.as_ref().unwrap().expires_at, expires_before);
    let history = github.history(BRANCH, STATE).unwrap();
    assert_eq!(
        history.len(),
        writes_before + 1,
        "one write records the outcome, though not due"
    );
    let st = LockState::parse(&history.last().unwrap().text, "pool").unwrap();
    let backoff = st.pool.as_ref().unwrap().backoff["solo"].clone();
    let backoff = &backoff;
    assert_eq!(backoff.hits, 1);
    assert!(backoff.until >= T + 15 * 60_000);
    assert_eq!(st.holders.len(), 1, "the holding stays");
    assert_eq!(st.holders[0].expires_at, expires_before, "not extended");
    // Another job that prefers solo gets the next resource while solo backs off.
    let other = drive(
        &mut github,
        OperationKind::Acquire,
        &inputs("o/web", 2, &[("prefer", "solo,duo-b")]),
        3,
        &mut now,
    );
    assert_eq!(other.resource.as_deref(), Some("duo-b"));
    // The release reports a success while solo still backs off: the work began before the
    // limit hit, so the backoff stands.
    let mut release = job.clone();
    release.insert("outcome".into(), "success".into());
    let released = drive(&mut github, OperationKind::Release, &release, 4, &mut now);
    assert_eq!(released.result, ResultWord::Released);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    assert_eq!(st.pool.as_ref().unwrap().backoff["solo"], *backoff);
    // A success after the backoff ended resets it.
    now = now.max(backoff.until);
    let again = inputs("o/api", 5, &[("prefer", "solo")]);
    let acquired = drive(&mut github, OperationKind::Acquire, &again, 5, &mut now);
    assert_eq!(acquired.resource.as_deref(), Some("solo"));
    let mut release = again.clone();
    release.insert("outcome".into(), "success".into());
    drive(&mut github, OperationKind::Release, &release, 6, &mut now);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    assert!(st
        .pool
        .as_ref()
        .is_none_or(|b| !b.backoff.contains_key("solo")));
}

#[test]
fn a_rate_limited_renewal_that_is_due_extends_the_lease_and_says_renewed() {
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", CONFIG, T);
    let mut now = T;
    let job = inputs("o/api", 1, &[("prefer", "solo")]);
    let acquired = drive(&mut github, OperationKind::Acquire, &job, 1, &mut now);
    let expires_before = acquired.lease.as_ref().unwrap().expires_at;
    let mut renew = job.clone();
    renew.insert("nonce".into(), acquired.nonce.clone().unwrap());
    renew.insert("outcome".into(), "rate-limited".into());
    now += 60_000;
    let renewed = drive(&mut github, OperationKind::Renew, &renew, 2, &mut now);
    assert_eq!(renewed.result, ResultWord::Renewed, "{:?}", renewed.error);
    assert!(renewed.lease.as_ref().unwrap().expires_at > expires_before);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    assert_eq!(st.pool.as_ref().unwrap().backoff["solo"].hits, 1);
    assert!(st.holders[0].expires_at > expires_before, "one write, both");
}

/// A pool's config that cannot be read at all (a syntax error, or the file deleted) while a
/// waiter is queued: the state is a pool's, so the pool admits nobody new, and never by a plain
/// lock's FIFO with no resource. The waiter times out; no version ever has a holding without a
/// seat; and a new claim is refused with `config-invalid`, writing nothing.
fn a_queued_waiter_under_a_config_that_cannot_be_read(break_config: impl Fn(&mut GitHub, u64)) {
    let m = 60_000;
    let config = r#"{"resources": {"a": {"capacity": 1}}}"#;
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", config, T);
    let mut now = T;
    let holder = inputs("o/api", 1, &[]);
    let acquired = drive(&mut github, OperationKind::Acquire, &holder, 1, &mut now);
    assert_eq!(acquired.resource.as_deref(), Some("a"));
    // The waiter queues, then the config breaks.
    let waiter = inputs("o/api", 2, &[("timeout-minutes", "20")]);
    let (mut op, mut next, _) = start(OperationKind::Acquire, &waiter, 2, now);
    let mut wait_log = Vec::new();
    let step = |op: &mut Operation, next: Command, github: &mut GitHub, now: &mut u64| {
        let s = match next {
            Command::Sleep { until_ms, .. } => {
                *now = until_ms.max(*now);
                op.step(Event::Timer { now: *now }).unwrap()
            }
            c => {
                let reply = github.answer(&c, *now).reply;
                *now += 50;
                op.step(Event::Reply { now: *now, reply }).unwrap()
            }
        };
        (s.command, s.log)
    };
    while LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool")
        .unwrap()
        .queue
        .is_empty()
    {
        let (n, log) = step(&mut op, next, &mut github, &mut now);
        next = n;
        wait_log.extend(log);
    }
    break_config(&mut github, now);
    // The holder releases once the state's record of the config is stale: with a waiter queued
    // it reads the broken config itself, and the pool that closes admits nobody.
    let mut release_at = T + 8 * m;
    let mut released = None;
    let outcome = loop {
        if released.is_none() {
            let due = match &next {
                Command::Sleep { until_ms, .. } => *until_ms >= release_at,
                _ => false,
            };
            if due {
                let r = drive(
                    &mut github,
                    OperationKind::Release,
                    &holder,
                    3,
                    &mut release_at,
                );
                released = Some(r.result);
            }
        }
        if let Command::Finish { outcome } = next {
            break *outcome;
        }
        let (n, log) = step(&mut op, next, &mut github, &mut now);
        next = n;
        wait_log.extend(log);
    };
    assert_eq!(released, Some(ResultWord::Released));
    assert_eq!(outcome.result, ResultWord::Timeout, "{:?}", outcome.error);
    for v in github.history(BRANCH, STATE).unwrap() {
        let st = LockState::parse(&v.text, "pool").unwrap();
        assert!(
            st.holders.iter().all(|h| h.pool.is_some()),
            "a holding without a seat in revision {}",
            st.revision
        );
    }
    assert!(
        wait_log
            .iter()
            .any(|l| l.text.contains("waiting because: closed")),
        "{:?}",
        wait_log.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
    let writes = github.history(BRANCH, STATE).unwrap().len();
    let newcomer = drive(
        &mut github,
        OperationKind::Acquire,
        &inputs("o/web", 4, &[]),
        4,
        &mut now,
    );
    assert_eq!(
        newcomer.error.as_ref().map(|e| e.code.as_str()),
        Some("config-invalid"),
        "{newcomer:?}"
    );
    assert_eq!(github.history(BRANCH, STATE).unwrap().len(), writes);
}

#[test]
fn a_pool_config_that_is_not_json_admits_nobody_new() {
    a_queued_waiter_under_a_config_that_cannot_be_read(|github, now| {
        github.commit_file(
            "main",
            "locks/pool.config.json",
            r#"{"resources": {"a": {"capacity": 1},}}"#,
            now,
        );
    });
}

#[test]
fn a_pool_config_deleted_admits_nobody_new() {
    a_queued_waiter_under_a_config_that_cannot_be_read(|github, _| {
        github.delete_file("main", "locks/pool.config.json");
    });
}

/// Steps `inputs`' acquire until its claim is queued in the state; returns the operation and its
/// next command (the waiter left waiting, as a job whose next poll has not come).
fn queue_up(
    github: &mut GitHub,
    inputs: &BTreeMap<String, String>,
    seed: u64,
    now: &mut u64,
) -> (Operation, Command) {
    let queued = |github: &GitHub| {
        github.current(BRANCH, STATE).map_or(0, |v| {
            LockState::parse(&v.text, "pool").unwrap().queue.len()
        })
    };
    let before = queued(github);
    let (mut op, mut next, _) = start(OperationKind::Acquire, inputs, seed, *now);
    while queued(github) == before {
        next = match next {
            Command::Sleep { until_ms, .. } => {
                *now = until_ms.max(*now);
                op.step(Event::Timer { now: *now }).unwrap().command
            }
            Command::Finish { outcome } => panic!("finished before queueing: {outcome:?}"),
            c => {
                let reply = github.answer(&c, *now).reply;
                *now += 50;
                op.step(Event::Reply { now: *now, reply }).unwrap().command
            }
        };
    }
    (op, next)
}

/// A waiter that leaves the queue (its job's release cleans its entry) may be what held a later
/// waiter back: in a pool a waiter ahead holds back the later ones whose partition conflicts with
/// its own. The release's write admits them, as every write that frees room does.
#[test]
fn a_waiter_leaving_the_queue_lets_those_it_held_back_in_the_same_write() {
    let config = r#"{"resources": {"solo": {"capacity": 1, "tags": ["fast"]}, "duo": {"capacity": 2, "tags": ["gpu"]}}}"#;
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", config, T);
    let mut now = T;
    let holder = inputs("o/api", 1, &[("requires", "fast")]);
    let held = drive(&mut github, OperationKind::Acquire, &holder, 1, &mut now);
    assert_eq!(held.resource.as_deref(), Some("solo"));
    let ahead = inputs("o/api", 2, &[("requires", "fast"), ("partition", "db")]);
    let _a = queue_up(&mut github, &ahead, 2, &mut now);
    let behind = inputs("o/api", 3, &[("requires", "gpu"), ("partition", "db")]);
    let _b = queue_up(&mut github, &behind, 3, &mut now);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    assert_eq!(
        st.queue.len(),
        2,
        "behind waits for ahead (one partition, FIFO)"
    );
    let left = drive(&mut github, OperationKind::Release, &ahead, 4, &mut now);
    assert_eq!(left.result, ResultWord::QueueCleaned, "{:?}", left.error);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    assert!(st.queue.is_empty(), "{:?}", st.queue);
    assert_eq!(
        st.holders
            .iter()
            .map(|h| h.pool.as_ref().unwrap().resource.as_str())
            .collect::<Vec<_>>(),
        ["solo", "duo"],
        "behind admitted in the release's write"
    );
}

/// A resource stays warm for `affinitySeconds` from its key's last use, its release, not from
/// its grant: a job of key `api` that held duo-b for 20 minutes steers the next `api` job to
/// duo-b a minute after it released (cold, config order would give duo-a).
#[test]
fn affinity_counts_from_the_release() {
    let m = 60_000;
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", CONFIG, T);
    let mut now = T;
    let first = inputs("o/api", 1, &[("prefer", "duo-b"), ("affinity", "api")]);
    let a = drive(&mut github, OperationKind::Acquire, &first, 1, &mut now);
    assert_eq!(a.resource.as_deref(), Some("duo-b"));
    now += 20 * m;
    let r = drive(&mut github, OperationKind::Release, &first, 2, &mut now);
    assert_eq!(r.result, ResultWord::Released);
    now += m;
    let next = inputs("o/api", 2, &[("requires", "gpu"), ("affinity", "api")]);
    let b = drive(&mut github, OperationKind::Acquire, &next, 3, &mut now);
    assert_eq!(
        b.resource.as_deref(),
        Some("duo-b"),
        "warm from its last use"
    );
    let cold = inputs("o/api", 3, &[("requires", "gpu")]);
    let c = drive(&mut github, OperationKind::Acquire, &cold, 4, &mut now);
    assert_eq!(
        c.resource.as_deref(),
        Some("duo-a"),
        "unrelated work avoids it"
    );
}

/// A release reporting `rate-limited` after its holding was removed cannot back off a resource it
/// no longer knows: it says so rather than drop the outcome in silence.
#[test]
fn a_rate_limit_reported_after_the_holding_went_is_said_not_dropped() {
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", CONFIG, T);
    let mut now = T;
    let other = inputs("o/api", 1, &[]);
    drive(&mut github, OperationKind::Acquire, &other, 1, &mut now);
    let mut gone = inputs("o/api", 2, &[]);
    gone.insert("outcome".into(), "rate-limited".into());
    let (mut op, mut next, mut log) = start(OperationKind::Release, &gone, 2, now);
    let outcome = loop {
        let step = match next {
            Command::Finish { outcome } => break *outcome,
            Command::Sleep { until_ms, .. } => {
                now = until_ms.max(now);
                op.step(Event::Timer { now }).unwrap()
            }
            c => {
                let reply = github.answer(&c, now).reply;
                now += 50;
                op.step(Event::Reply { now, reply }).unwrap()
            }
        };
        next = step.command;
        log.extend(step.log);
    };
    assert_eq!(outcome.result, ResultWord::Noop);
    assert!(
        log.iter()
            .any(|l| l.text.contains("outcome rate-limited not recorded")),
        "{:?}",
        log.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
}

/// A closed pool's record in the state, young enough to be taken for the config, while the
/// config has been mended: a new claim reads the file and is admitted at once, rather than
/// refused until the record goes stale (5 minutes). Nothing but the file may say it is mended.
#[test]
fn a_closed_pool_in_the_state_does_not_outlive_the_mended_config() {
    let config = r#"{"resources": {"a": {"capacity": 1}}}"#;
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", config, T);
    let mut now = T;
    let first = drive(
        &mut github,
        OperationKind::Acquire,
        &inputs("o/api", 1, &[]),
        1,
        &mut now,
    );
    assert_eq!(first.result, ResultWord::Acquired);
    let released = drive(
        &mut github,
        OperationKind::Release,
        &inputs("o/api", 1, &[]),
        2,
        &mut now,
    );
    assert_eq!(released.result, ResultWord::Released);
    // Another job read the config while it was broken and recorded the closed pool.
    let mut state: serde_json::Value =
        serde_json::from_str(&github.current(BRANCH, STATE).unwrap().text).unwrap();
    state["config"]["pool"] = serde_json::json!({"resources": [], "invalid": "pool.resources"});
    github.commit_file(BRANCH, STATE, &state.to_string(), now);
    let st = LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool").unwrap();
    let record = st.config.expect("the config recorded");
    assert!(
        now - record.read_at < 60_000,
        "young enough to be taken for the config"
    );
    assert!(record.pool.and_then(|p| p.invalid).is_some());
    let mended = drive(
        &mut github,
        OperationKind::Acquire,
        &inputs("o/web", 3, &[]),
        3,
        &mut now,
    );
    assert_eq!(mended.result, ResultWord::Acquired, "{:?}", mended.error);
    assert_eq!(mended.resource.as_deref(), Some("a"));
}

/// A waiter queued under a config it read while valid, and a closed pool's record newer than
/// its own in the state (another job has since read the config broken): neither the holder's
/// release nor the waiter's polls admit it under the broken config, though its own record of
/// the valid one is young (the state's closed record closes the pool to every reader).
#[test]
fn a_newer_closed_pool_in_the_state_admits_nobody_over_a_waiters_older_record() {
    let config = r#"{"resources": {"a": {"capacity": 1}}}"#;
    let mut github = GitHub::new("main");
    github.add_branch(BRANCH);
    github.commit_file("main", "locks/pool.config.json", config, T);
    let mut now = T;
    let holder = inputs("o/api", 1, &[]);
    let held = drive(&mut github, OperationKind::Acquire, &holder, 1, &mut now);
    assert_eq!(held.result, ResultWord::Acquired);
    let waiter = inputs("o/api", 2, &[("timeout-minutes", "20")]);
    let (mut op, mut next, _) = start(OperationKind::Acquire, &waiter, 2, now);
    let step = |op: &mut Operation, next: Command, github: &mut GitHub, now: &mut u64| match next {
        Command::Sleep { until_ms, .. } => {
            *now = until_ms.max(*now);
            op.step(Event::Timer { now: *now }).unwrap().command
        }
        c => {
            let reply = github.answer(&c, *now).reply;
            *now += 50;
            op.step(Event::Reply { now: *now, reply }).unwrap().command
        }
    };
    let queued = |github: &GitHub| {
        LockState::parse(&github.current(BRANCH, STATE).unwrap().text, "pool")
            .unwrap()
            .queue
            .len()
    };
    for _ in 0..100 {
        if queued(&github) == 1 {
            break;
        }
        next = step(&mut op, next, &mut github, &mut now);
    }
    assert_eq!(queued(&github), 1, "the waiter is queued");
    // The config breaks; another job reads it so and records the closed pool, newer than the
    // waiter's record of the valid config.
    now += 1_000;
    github.commit_file(
        "main",
        "locks/pool.config.json",
        r#"{"resources": {}}"#,
        now,
    );
    let mut state: serde_json::Value =
        serde_json::from_str(&github.current(BRANCH, STATE).unwrap().text).unwrap();
    state["config"]["pool"] = serde_json::json!({"resources": [], "invalid": "pool.resources"});
    state["config"]["readAt"] = serde_json::json!(leasehold_core::time::format_rfc3339(now));
    state["revision"] = serde_json::json!(state["revision"].as_u64().unwrap() + 1);
    github.commit_file(BRANCH, STATE, &state.to_string(), now);
    let released = drive(&mut github, OperationKind::Release, &holder, 3, &mut now);
    assert_eq!(released.result, ResultWord::Released);
    // A minute of polls, inside the waiter's own record's five minutes.
    let until = now + 60_000;
    while now < until {
        if let Command::Finish { outcome } = &next {
            panic!("the waiter finished {:?}", outcome.result);
        }
        next = step(&mut op, next, &mut github, &mut now);
    }
    for v in github.history(BRANCH, STATE).unwrap() {
        let st = LockState::parse(&v.text, "pool").unwrap();
        assert!(
            st.holders.iter().all(|h| !h.holder_id.contains(":2:")),
            "the waiter was admitted in revision {} under the broken config",
            st.revision
        );
    }
}
