//! What a lock's state can hold from others, and what an acquire makes of it: an earlier
//! attempt's holding a rerun finds (`ops/acquire.rs`, the holder id that holds under another
//! nonce), a config record from a writer whose clock ran ahead, a pool consumer spelled in
//! another case than its jobs' repository, a quarantine left by a removal. Driven through
//! `Operation::step` against a store of one file.
use std::collections::BTreeMap;

use leasehold_core::{Call, Command, Entropy, Event, Operation, OperationKind, Outcome, Reply};

fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Drives `op` with `answer` until it finishes; returns the outcome and every write's content.
fn drive(
    op: &mut Operation,
    now: u64,
    mut answer: impl FnMut(&Call) -> Reply,
) -> (Outcome, Vec<String>) {
    let mut step = op.step(Event::Start { now }).unwrap();
    let mut clock = now;
    let mut writes = Vec::new();
    for _ in 0..20_000 {
        match step.command {
            Command::Finish { outcome } => return (*outcome, writes),
            Command::Sleep { until_ms, .. } => {
                clock = clock.max(until_ms);
                step = op.step(Event::Timer { now: clock }).unwrap();
            }
            Command::Request { call, .. } => {
                if let Call::WriteFile { content, .. } = &call {
                    writes.push(content.clone());
                }
                let reply = answer(&call);
                clock += 10;
                step = op.step(Event::Reply { now: clock, reply }).unwrap();
            }
        }
    }
    panic!("did not finish")
}

const NOW: u64 = 1_800_000_000_000; // 2027-01-15T08:00:00Z

fn job(run: &str, attempt: &str) -> Vec<(&'static str, String)> {
    vec![
        ("lock", "deploy".into()),
        ("GITHUB_REPOSITORY", "octo/app".into()),
        ("GITHUB_RUN_ID", run.into()),
        ("GITHUB_RUN_ATTEMPT", attempt.into()),
        ("GITHUB_JOB", "deploy".into()),
        ("RUNNER_NAME", "r1".into()),
        ("GITHUB_SERVER_URL", "https://github.com".into()),
        ("timeout-minutes", "0".into()),
    ]
}

fn op(pairs: &[(&'static str, String)], nonce: &str) -> Operation {
    let raw: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Operation::new(
        OperationKind::Acquire,
        &inputs(&raw),
        &Entropy {
            seed: 7,
            nonce: nonce.into(),
        },
    )
    .expect("inputs")
    .0
}

/// A lock of capacity 1 held by attempt 1 of run 77, its lease ending at `expires`.
fn held_by_attempt_one(expires: &str) -> String {
    format!(
        r#"{{
  "schema": 1, "lock": "deploy", "revision": 3, "fence": 4,
  "config": {{ "capacity": 1, "readAt": "2027-01-15T07:59:59.000Z" }},
  "holders": [ {{
      "holderId": "octo/app:77:deploy", "nonce": "1111111111111111", "fence": 4,
      "run": {{ "repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1" }},
      "acquiredAt": "2027-01-14T07:00:00.000Z", "expiresAt": "{expires}",
      "leaseMs": 3600000, "ceilingAt": "2027-01-21T07:00:00.000Z" }} ],
  "queue": []
}}
"#
    )
}

/// Runs `job` against a store holding `state`; returns its outcome and the state it left.
fn against(
    state: &str,
    job: &[(&'static str, String)],
    nonce: &str,
    now: u64,
) -> (Outcome, String) {
    let mut current = state.to_string();
    let mut version = 3;
    let (o, _) = drive(&mut op(job, nonce), now, |call| match call {
        Call::ReadFile { .. } => Reply::file(&format!("s{version}"), &current),
        Call::WriteFile { content, .. } => {
            current = content.clone();
            version += 1;
            Reply::Written {
                sha: format!("s{version}"),
                date: None,
            }
        }
        other => panic!("unexpected {other:?}"),
    });
    (o, current)
}

/// The outcome acquired (its error, if not).
fn assert_acquired(o: &Outcome) {
    assert_eq!(
        o.result,
        leasehold_core::ResultWord::Acquired,
        "{:?}",
        o.error
    );
}

fn holder_ids(state: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(state).unwrap();
    v["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["holderId"].as_str().unwrap().to_string())
        .collect()
}

/// A rerun takes over its earlier attempt's holding only while that holding is its own: one whose
/// lease ran out (past grace and skew) is any job's to remove, and taking it over with the lease
/// it had would leave the rerun told `acquired` on a lease already over, removed by the next
/// acquire, which would then hold beside it. It is removed as expired, and the rerun is admitted
/// as any job is, on a lease of its own.
#[test]
fn a_rerun_does_not_take_over_a_holding_whose_lease_ran_out() {
    let (rerun, state) = against(
        &held_by_attempt_one("2027-01-14T08:00:00.000Z"),
        &job("77", "2"),
        "00000000000000aa",
        NOW,
    );
    assert_acquired(&rerun);
    let lease = rerun.lease.clone().expect("a lease");
    assert!(lease.expires_at > NOW, "a lease of its own, from now");
    assert!(lease.local_deadline > NOW);
    assert_eq!(holder_ids(&state), ["octo/app:77:deploy"]);
    // The next job a second later finds the lock held, and is not admitted beside it.
    let (other, state) = against(&state, &job("78", "1"), "00000000000000bb", NOW + 1_000);
    assert_ne!(other.result, leasehold_core::ResultWord::Acquired);
    assert_eq!(
        holder_ids(&state),
        ["octo/app:77:deploy"],
        "still the rerun's"
    );
}

/// A live holding taken over gets the rerun's own lease from now (a new fence, as before), not
/// what was left of the earlier attempt's.
#[test]
fn a_rerun_takes_over_a_live_holding_on_a_lease_of_its_own() {
    // Ends a minute from now: still the holder id's own.
    let (rerun, state) = against(
        &held_by_attempt_one("2027-01-15T08:01:00.000Z"),
        &job("77", "2"),
        "00000000000000aa",
        NOW,
    );
    assert_acquired(&rerun);
    assert_eq!(rerun.fence, Some(5), "a new fence");
    let lease = rerun.lease.clone().unwrap();
    assert!(
        (NOW + lease.ttl_ms..NOW + lease.ttl_ms + 1_000).contains(&lease.expires_at),
        "its own lease, from now: {lease:?}"
    );
    assert!(lease.expires_at > NOW + 60_000);
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert!(v["holders"][0]["acquiredAt"]
        .as_str()
        .unwrap()
        .starts_with("2027-01-15T08:00:00"));
    assert_eq!(v["holders"][0]["run"]["runAttempt"], 2);
}

/// A config record in the state from the future (a writer whose answers carried no date while
/// its clock ran ahead, a hand edit) is never fresh. It must not beat the config this acquire
/// reads: every plan would read the config again, without end (10,000 requests, twice a token's
/// hourly limit), and the write that would replace it never came.
#[test]
fn a_config_record_from_the_future_is_read_past_once_and_replaced() {
    let state = r#"{
  "schema": 1, "lock": "deploy", "revision": 3, "fence": 4,
  "config": { "capacity": 1, "readAt": "2027-01-15T09:00:00.000Z" },
  "holders": [], "queue": []
}
"#;
    let mut current = state.to_string();
    let mut config_reads = 0;
    let (o, _) = drive(
        &mut op(&job("78", "1"), "00000000000000bb"),
        NOW,
        |call| match call {
            Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                config_reads += 1;
                Reply::file("c1", "{\"capacity\": 1}\n")
            }
            Call::ReadFile { .. } => Reply::file("s3", &current),
            Call::WriteFile { content, .. } => {
                current = content.clone();
                Reply::Written {
                    sha: "s4".into(),
                    date: None,
                }
            }
            other => panic!("unexpected {other:?}"),
        },
    );
    assert_acquired(&o);
    assert_eq!(config_reads, 1);
    let v: serde_json::Value = serde_json::from_str(&current).unwrap();
    let read_at = v["config"]["readAt"].as_str().unwrap();
    assert!(
        read_at.starts_with("2027-01-15T08:00:00"),
        "replaced by the record read now: {read_at}"
    );
}

/// GitHub's repository names are case-insensitive: a pool consumer spelled `Octo/App` is the
/// jobs of `octo/app` (as `GITHUB_REPOSITORY` spells it), and its `maxConcurrent` holds them.
#[test]
fn a_pool_consumer_is_its_repository_in_any_case() {
    let config =
        r#"{"resources": {"a": {"capacity": 2}}, "consumers": {"Octo/App": {"maxConcurrent": 1}}}"#;
    let mut current = "{\"schema\": 1, \"lock\": \"deploy\", \"revision\": 1, \"fence\": 0, \"holders\": [], \"queue\": []}\n".to_string();
    let mut results = Vec::new();
    for (i, run) in ["77", "78"].iter().enumerate() {
        let (o, _) = drive(
            &mut op(&job(run, "1"), &format!("00000000000000a{i}")),
            NOW + i as u64 * 2_000,
            |call| match call {
                Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                    Reply::file("c1", config)
                }
                Call::ReadFile { .. } => Reply::file("s", &current),
                Call::WriteFile { content, .. } => {
                    current = content.clone();
                    Reply::Written {
                        sha: "s2".into(),
                        date: None,
                    }
                }
                other => panic!("unexpected {other:?}"),
            },
        );
        results.push(o.result);
    }
    assert_eq!(results[0], leasehold_core::ResultWord::Acquired);
    assert_ne!(
        results[1],
        leasehold_core::ResultWord::Acquired,
        "maxConcurrent 1 holds octo/app"
    );
    assert_eq!(holder_ids(&current).len(), 1);
}

fn reap_op() -> Operation {
    Operation::new(
        OperationKind::Reap,
        &inputs(&[("lock", "deploy"), ("repository", "octo/app")]),
        &Entropy {
            seed: 3,
            nonce: "00000000000000cc".into(),
        },
    )
    .expect("inputs")
    .0
}

/// The reaper removes a dead holder whose recorded job it proved completed and, the lifecycle on,
/// leaves a quarantine. The quarantine was made after the job completed, by construction: taking
/// that for "the recorded job is not this entry's" left it a quarantine forever, a slot lost to
/// every later reap (only an operator's recover freed it). It is judged by its run attempt (the
/// quarantine keeps no time that bounds its job): recovered once the attempt is over.
#[test]
fn a_quarantine_a_removal_made_is_recovered_once_its_run_is_proven_over() {
    const H: u64 = 3_600_000;
    let config = r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 60}, "lease": {"ttlSeconds": 900, "renewSeconds": 300}}"#;
    let state = r#"{
  "schema": 2, "lock": "deploy", "revision": 3, "fence": 4,
  "holders": [ {
      "holderId": "octo/app:77:deploy", "nonce": "1111111111111111", "fence": 4,
      "run": { "repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy",
               "runnerName": "GitHub Actions 12", "jobId": 555 },
      "acquiredAt": "2027-01-15T07:00:00.000Z", "claimedAt": "2027-01-15T07:00:00.000Z",
      "expiresAt": "2027-01-15T12:00:00.000Z",
      "leaseMs": 18000000, "ceilingAt": "2027-01-22T07:00:00.000Z" } ],
  "queue": []
}
"#;
    let job_answer = || Reply::Job {
        id: 555,
        run_id: 77,
        run_attempt: Some(1),
        name: "deploy".into(),
        status: "completed".into(),
        conclusion: Some("failure".into()),
        runner_name: Some("GitHub Actions 12".into()),
        completed_at: Some("2027-01-15T07:30:00Z".into()),
        date: None,
    };
    let mut current = state.to_string();
    let answer = |call: &Call, current: &mut String| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => Reply::file("c1", config),
        Call::ReadFile { .. } => Reply::file("s", current),
        Call::GetJob { .. } => job_answer(),
        Call::GetRunAttempt { .. } => Reply::Run {
            run_id: 77,
            run_attempt: Some(1),
            status: Some("completed".into()),
            conclusion: Some("failure".into()),
            date: None,
        },
        Call::WriteFile { content, .. } => {
            *current = content.clone();
            Reply::Written {
                sha: "s2".into(),
                date: None,
            }
        }
        other => panic!("unexpected {other:?}"),
    };
    // Reap 1 at 08:00: the job completed at 07:30 → removed, quarantined.
    let mut r1 = reap_op();
    let (o1, _) = drive(&mut r1, NOW, |c| answer(c, &mut current));
    let _ = &o1;
    let s: serde_json::Value = serde_json::from_str(&current).unwrap();
    assert!(s["holders"].as_array().unwrap().is_empty(), "{o1:?}");
    assert_eq!(s["reservations"][0]["id"], "q4");
    assert_eq!(s["reservations"][0]["kind"], "quarantine");
    // Reap 2 at 10:00, past the 15-minute lease: same job, same answer.
    let mut r2 = reap_op();
    let (o2, _) = drive(&mut r2, NOW + 2 * H, |c| answer(c, &mut current));
    let s: serde_json::Value = serde_json::from_str(&current).unwrap();
    assert_eq!(s["reservations"][0]["kind"], "cooldown", "{:?}", o2.reaped);
}

/// A quarantine the reaper left when a holding's lease ran out (its job could not be proven over)
/// is not freed by a recorded job id that proves nothing about it. Here the id came from a lagging
/// job list: job 555 is an earlier job on the same runner, completed an hour before the holding
/// was claimed. The holding's claim time went with the holding, so the quarantine is judged by
/// its run attempt alone: kept while the attempt runs, recovered once it completed.
#[test]
fn a_quarantine_an_expired_lease_left_is_not_freed_by_a_job_id_that_proves_nothing() {
    const H: u64 = 3_600_000;
    let config = r#"{"capacity": 1, "lifecycle": {"cooldownSeconds": 60}, "lease": {"ttlSeconds": 900, "renewSeconds": 300}}"#;
    let state = r#"{
  "schema": 2, "lock": "deploy", "revision": 3, "fence": 4,
  "holders": [ {
      "holderId": "octo/app:77:deploy", "nonce": "1111111111111111", "fence": 4,
      "run": { "repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy",
               "runnerName": "r1", "jobId": 555 },
      "acquiredAt": "2027-01-15T07:00:00.000Z", "claimedAt": "2027-01-15T07:00:00.000Z",
      "expiresAt": "2027-01-15T07:15:00.000Z",
      "leaseMs": 900000, "ceilingAt": "2027-01-22T07:00:00.000Z" } ],
  "queue": []
}
"#;
    let mut run_status = "in_progress";
    let mut current = state.to_string();
    let answer = |call: &Call, current: &mut String, run_status: &str| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => Reply::file("c1", config),
        Call::ReadFile { .. } => Reply::file("s", current),
        Call::GetJob { .. } => Reply::Job {
            id: 555,
            run_id: 77,
            run_attempt: Some(1),
            name: "deploy".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            runner_name: Some("r1".into()),
            completed_at: Some("2027-01-15T06:00:00Z".into()),
            date: None,
        },
        Call::GetRunAttempt { .. } => Reply::Run {
            run_id: 77,
            run_attempt: Some(1),
            status: Some(run_status.into()),
            conclusion: None,
            date: None,
        },
        Call::WriteFile { content, .. } => {
            *current = content.clone();
            Reply::Written {
                sha: "s2".into(),
                date: None,
            }
        }
        other => panic!("unexpected {other:?}"),
    };
    let quarantine = |current: &str| {
        let s: serde_json::Value = serde_json::from_str(current).unwrap();
        assert!(s["holders"].as_array().unwrap().is_empty(), "{s}");
        s["reservations"][0].clone()
    };
    // Reap 1 at 08:00: job 555 completed before the claim, so it proves nothing; the lease ran
    // out, so the holding is removed and its slot quarantined.
    let (o1, _) = drive(&mut reap_op(), NOW, |c| answer(c, &mut current, run_status));
    let q = quarantine(&current);
    assert_eq!(
        (&q["id"], &q["kind"]),
        (&"q4".into(), &"quarantine".into()),
        "{o1:?}"
    );
    // Reap 2 at 10:00, the quarantine past the lease: the run attempt still runs. Kept.
    let (o2, _) = drive(&mut reap_op(), NOW + 2 * H, |c| {
        answer(c, &mut current, run_status)
    });
    assert_eq!(
        quarantine(&current)["kind"],
        "quarantine",
        "{:?}",
        o2.reaped
    );
    // Reap 3 at 11:00: the run attempt completed. Recovered.
    run_status = "completed";
    let (o3, _) = drive(&mut reap_op(), NOW + 3 * H, |c| {
        answer(c, &mut current, run_status)
    });
    assert_eq!(quarantine(&current)["kind"], "cooldown", "{:?}", o3.reaped);
}

/// A pool of one resource with room for three, one slot a runner.
const SERIAL_POOL: &str = r#"{"resources": {"a": {"capacity": 3}}, "runnerSerialization": true}"#;

/// A pool holding of `holder` (run `run`, attempt `attempt`) on runner `runner`, fence `fence`,
/// its lease ending a minute after `NOW`.
fn pool_holding(holder: &str, run: u64, attempt: u32, runner: &str, fence: u64) -> String {
    format!(
        r#"{{ "holderId": "{holder}", "nonce": "1111111111111111", "fence": {fence},
      "run": {{ "repository": "octo/app", "runId": {run}, "runAttempt": {attempt}, "job": "deploy", "runnerName": "{runner}" }},
      "acquiredAt": "2027-01-15T07:00:00.000Z", "expiresAt": "2027-01-15T08:01:00.000Z",
      "leaseMs": 3660000, "ceilingAt": "2027-01-22T07:00:00.000Z",
      "pool": {{ "resource": "a", "partition": ["runner:{runner}"] }} }}"#
    )
}

fn pool_state(holdings: &[String], fence: u64) -> String {
    format!(
        "{{\"schema\": 1, \"lock\": \"deploy\", \"revision\": 3, \"fence\": {fence}, \"holders\": [{}], \"queue\": []}}\n",
        holdings.join(", ")
    )
}

/// `job` on runner `runner`, waiting at most a minute.
fn job_on(
    run: &str,
    attempt: &str,
    holder_suffix: &str,
    runner: &str,
) -> Vec<(&'static str, String)> {
    let mut pairs: Vec<(&'static str, String)> = job(run, attempt)
        .into_iter()
        .map(|(k, v)| match k {
            "RUNNER_NAME" => (k, runner.to_string()),
            "timeout-minutes" => (k, "1".into()),
            _ => (k, v),
        })
        .collect();
    if !holder_suffix.is_empty() {
        pairs.push(("holder-suffix", holder_suffix.to_string()));
    }
    pairs
}

/// Runs `job` against a pool store holding `state`; returns its outcome and the state it left.
fn against_pool(
    state: &str,
    job: &[(&'static str, String)],
    nonce: &str,
    now: u64,
) -> (Outcome, String, Vec<String>) {
    let mut current = state.to_string();
    let mut version = 3;
    let (o, writes) = drive(&mut op(job, nonce), now, |call| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
            Reply::file("c1", SERIAL_POOL)
        }
        Call::ReadFile { .. } => Reply::file(&format!("s{version}"), &current),
        Call::WriteFile { content, .. } => {
            current = content.clone();
            version += 1;
            Reply::Written {
                sha: format!("s{version}"),
                date: None,
            }
        }
        other => panic!("unexpected {other:?}"),
    });
    (o, current, writes)
}

/// Under runner serialization a holding reserves its runner. A rerun that takes over its earlier
/// attempt's holding from another runner takes the seat onto the runner it now runs on: kept on
/// the earlier runner's atom, a second holding on the new runner (another holder id of the same
/// job, as a matrix or a second lock step) was admitted beside it, two slots on one runner.
#[test]
fn a_rerun_on_another_runner_moves_its_seat_to_that_runner() {
    let state = pool_state(&[pool_holding("octo/app:77:deploy", 77, 1, "r1", 4)], 4);
    let (rerun, state, _) = against_pool(
        &state,
        &job_on("77", "2", "", "r2"),
        "00000000000000aa",
        NOW,
    );
    assert_acquired(&rerun);
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(v["holders"][0]["run"]["runnerName"], "r2");
    assert_eq!(
        v["holders"][0]["pool"]["partition"],
        serde_json::json!(["runner:r2"]),
        "the seat is on the runner the rerun runs on"
    );
    // Another holder id on r2, with the pool's room for two more: r2 holds its one slot.
    let (second, state, _) = against_pool(
        &state,
        &job_on("77", "2", "second", "r2"),
        "00000000000000bb",
        NOW + 1_000,
    );
    assert_ne!(
        second.result,
        leasehold_core::ResultWord::Acquired,
        "one slot a runner"
    );
    assert_eq!(holder_ids(&state), ["octo/app:77:deploy"]);
    // While r1, the earlier runner, is free for another job.
    let (other, _, _) = against_pool(
        &state,
        &job_on("78", "1", "", "r1"),
        "00000000000000cc",
        NOW + 2_000,
    );
    assert_acquired(&other);
}

/// When the runner a rerun runs on already holds a slot, taking the earlier attempt's holding
/// over would put two on one runner. The earlier holding is removed (its run attempt is over:
/// GitHub reruns only a completed run), recorded as removed for the rerun, and the rerun queues
/// for a slot of its own.
#[test]
fn a_rerun_onto_a_runner_that_holds_a_slot_gives_up_the_earlier_holding_and_queues() {
    let state = pool_state(
        &[
            pool_holding("octo/app:77:deploy", 77, 1, "r1", 4),
            pool_holding("octo/app:90:deploy", 90, 1, "r2", 5),
        ],
        5,
    );
    let (rerun, state, writes) = against_pool(
        &state,
        &job_on("77", "2", "", "r2"),
        "00000000000000aa",
        NOW,
    );
    assert_eq!(
        rerun.result,
        leasehold_core::ResultWord::Timeout,
        "{:?}",
        rerun.error
    );
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        holder_ids(&state),
        ["octo/app:90:deploy"],
        "never two holdings on r2"
    );
    // The write that queued it recorded the removal.
    let first: serde_json::Value = serde_json::from_str(&writes[0]).unwrap();
    assert_eq!(
        first["lastChange"]["removed"],
        serde_json::json!([{"holderId": "octo/app:77:deploy", "fence": 4, "expiresAt": "2027-01-15T08:01:00.000Z", "reason": "rerun"}])
    );
    assert_eq!(first["queue"][0]["holderId"], "octo/app:77:deploy");
    assert_eq!(
        v["queue"],
        serde_json::json!([]),
        "the rerun left the queue at its timeout"
    );
}

/// A report-usage of resource `a` of a pool, observed at `observed_at`.
fn usage_op(observed_at: &str) -> Operation {
    Operation::new(
        OperationKind::ReportUsage,
        &inputs(&[
            ("lock", "deploy"),
            ("repository", "octo/app"),
            ("resource", "a"),
            ("used", "0.25"),
            ("window-start", "2027-01-15T07:00:00Z"),
            ("reset-at", "2027-01-15T12:00:00Z"),
            ("observed-at", observed_at),
        ]),
        &Entropy {
            seed: 5,
            nonce: "00000000000000dd".into(),
        },
    )
    .expect("inputs")
    .0
}

/// Runs a report-usage against a pool whose state is `state`; returns its outcome and writes.
fn report(state: &str, observed_at: &str) -> (Outcome, Vec<String>) {
    drive(&mut usage_op(observed_at), NOW, |call| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
            Reply::file("c1", SERIAL_POOL)
        }
        Call::ReadFile { .. } => Reply::file("s3", state),
        Call::WriteFile { .. } => Reply::Written {
            sha: "s4".into(),
            date: None,
        },
        other => panic!("unexpected {other:?}"),
    })
}

/// A usage reading from ahead of GitHub's clock (a reporter's wrong clock, a typo of the year)
/// counts as stale in the choice until GitHub's clock reaches it, and, recorded, kept every true
/// reading out ("an older reading never replaces a newer one"): the resource was passed over
/// until that date, with every report a success. It is refused, naming the input, and one
/// recorded before is replaced by the next true reading.
#[test]
fn a_usage_reading_from_the_future_is_refused_and_one_recorded_before_is_replaced() {
    let empty = pool_state(&[], 0);
    let (o, writes) = report(&empty, "2028-01-15T08:00:00Z");
    assert_eq!(o.result, leasehold_core::ResultWord::Failed);
    let error = o.error.expect("an error");
    assert_eq!(error.code.as_str(), "invalid-input");
    assert!(error.message.contains("observed-at"), "{}", error.message);
    assert!(writes.is_empty(), "nothing written");
    // Within GitHub's 5 minutes of tolerance: recorded.
    let (o, _) = report(&empty, "2027-01-15T08:04:00Z");
    assert_eq!(
        o.result,
        leasehold_core::ResultWord::Recorded,
        "{:?}",
        o.error
    );

    let future = empty.replace(
        "\"queue\": []",
        "\"queue\": [], \"pool\": {\"usage\": {\"a\": {\"usedBp\": 9900, \"windowStart\": \"2028-01-15T07:00:00.000Z\", \"resetAt\": \"2028-01-15T12:00:00.000Z\", \"observedAt\": \"2028-01-15T08:00:00.000Z\", \"status\": \"allowed\"}}}",
    );
    let (o, writes) = report(&future, "2027-01-15T07:59:00Z");
    assert_eq!(
        o.result,
        leasehold_core::ResultWord::Recorded,
        "{:?}",
        o.error
    );
    let v: serde_json::Value = serde_json::from_str(&writes[0]).unwrap();
    assert_eq!(v["pool"]["usage"]["a"]["usedBp"], 2500);
}

/// A lease renewed a moment before as far as this renewal would take it (by a judge whose
/// estimate of GitHub's clock was a little ahead, as the reaper's) has nothing to extend: it is
/// renewed, with nothing written, and the log does not say it is at its ceiling a week away.
#[test]
fn a_lease_renewed_as_far_already_is_not_said_to_be_at_its_ceiling() {
    let state = held_by_attempt_one("2027-01-15T09:00:05.000Z");
    let mut pairs = job("77", "1");
    pairs.push(("nonce", "1111111111111111".into()));
    let raw: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut op = Operation::new(
        OperationKind::Renew,
        &inputs(&raw),
        &Entropy {
            seed: 7,
            nonce: "00000000000000ff".into(),
        },
    )
    .expect("inputs")
    .0;
    let mut step = op.step(Event::Start { now: NOW }).unwrap();
    let mut lines = Vec::new();
    let outcome = loop {
        lines.extend(step.log.iter().map(|l| l.text.clone()));
        match step.command {
            Command::Finish { outcome } => break outcome,
            Command::Request { call, .. } => {
                let reply = match call {
                    Call::ReadFile { .. } => Reply::file("s3", &state),
                    other => panic!("nothing but a read: {other:?}"),
                };
                step = op
                    .step(Event::Reply {
                        now: NOW + 10,
                        reply,
                    })
                    .unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(outcome.result, leasehold_core::ResultWord::Renewed);
    assert!(!lines.iter().any(|l| l.contains("ceiling")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("renewed until")),
        "{lines:?}"
    );
}

/// A seat an earlier version moved to another runner kept its old runner's atom (0.5.0 took a
/// holding over onto the rerun's runner without it). One slot a runner is judged by the runner
/// each holding's run names too, so the new runner is not booked twice.
#[test]
fn a_seat_left_with_another_runners_atom_still_holds_its_runs_runner() {
    let moved = pool_holding("octo/app:77:deploy", 77, 2, "r2", 4).replace(
        "\"partition\": [\"runner:r2\"]",
        "\"partition\": [\"runner:r1\"]",
    );
    let state = pool_state(&[moved], 4);
    let (second, state, _) = against_pool(
        &state,
        &job_on("77", "2", "second", "r2"),
        "00000000000000bb",
        NOW,
    );
    assert_ne!(
        second.result,
        leasehold_core::ResultWord::Acquired,
        "r2 holds its one slot"
    );
    assert_eq!(holder_ids(&state), ["octo/app:77:deploy"]);
    // A rerun of it on r3 moves the seat to r3, its stale atom dropped.
    let (rerun, state, _) = against_pool(
        &state,
        &job_on("77", "3", "", "r3"),
        "00000000000000cc",
        NOW + 1_000,
    );
    assert_acquired(&rerun);
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        v["holders"][0]["pool"]["partition"],
        serde_json::json!(["runner:r3"])
    );
}

/// Without runner serialization a `runner:` atom in a seat is the request's own partition: a
/// rerun on another runner keeps it.
#[test]
fn without_runner_serialization_a_rerun_keeps_its_requests_runner_atom() {
    let state = pool_state(&[pool_holding("octo/app:77:deploy", 77, 1, "r1", 4)], 4);
    let mut current = state.clone();
    let config = r#"{"resources": {"a": {"capacity": 3}}}"#;
    let (o, _) = drive(
        &mut op(&job_on("77", "2", "", "r2"), "00000000000000aa"),
        NOW,
        |call| match call {
            Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                Reply::file("c1", config)
            }
            Call::ReadFile { .. } => Reply::file("s3", &current),
            Call::WriteFile { content, .. } => {
                current = content.clone();
                Reply::Written {
                    sha: "s4".into(),
                    date: None,
                }
            }
            other => panic!("unexpected {other:?}"),
        },
    );
    assert_acquired(&o);
    let v: serde_json::Value = serde_json::from_str(&current).unwrap();
    assert_eq!(v["holders"][0]["run"]["runnerName"], "r2");
    assert_eq!(
        v["holders"][0]["pool"]["partition"],
        serde_json::json!(["runner:r1"])
    );
}

/// The removal of the earlier attempt's holding is written by a rerun that gives up at once
/// (`timeout-minutes: 0`) too; and a holding on the new runner whose lease ran out books no
/// runner (it is removed in the same write), so the rerun takes its holding over there.
#[test]
fn a_rerun_that_cannot_wait_still_removes_and_an_expired_holding_books_no_runner() {
    let busy = pool_state(
        &[
            pool_holding("octo/app:77:deploy", 77, 1, "r1", 4),
            pool_holding("octo/app:90:deploy", 90, 1, "r2", 5),
        ],
        5,
    );
    let now_job: Vec<(&'static str, String)> = job_on("77", "2", "", "r2")
        .into_iter()
        .map(|(k, v)| {
            if k == "timeout-minutes" {
                (k, "0".to_string())
            } else {
                (k, v)
            }
        })
        .collect();
    let (rerun, state, writes) = against_pool(&busy, &now_job, "00000000000000aa", NOW);
    assert_eq!(rerun.result, leasehold_core::ResultWord::Timeout);
    assert_eq!(writes.len(), 1, "the removal is written");
    assert_eq!(holder_ids(&state), ["octo/app:90:deploy"]);
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(v["queue"], serde_json::json!([]));

    // Run 90's holding on r2 ran out an hour ago: it is removed, and the rerun moves onto r2.
    let expired = pool_holding("octo/app:90:deploy", 90, 1, "r2", 5)
        .replace("2027-01-15T08:01:00.000Z", "2027-01-15T07:00:00.000Z");
    let state = pool_state(
        &[pool_holding("octo/app:77:deploy", 77, 1, "r1", 4), expired],
        5,
    );
    let (rerun, state, _) = against_pool(
        &state,
        &job_on("77", "2", "", "r2"),
        "00000000000000bb",
        NOW,
    );
    assert_acquired(&rerun);
    assert_eq!(rerun.fence, Some(6), "taken over, a new fence");
    assert_eq!(holder_ids(&state), ["octo/app:77:deploy"]);
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        v["holders"][0]["pool"]["partition"],
        serde_json::json!(["runner:r2"])
    );
    assert_eq!(
        v["lastChange"]["action"], "adopt",
        "taken over, not removed and queued: {v}"
    );
}

/// The takeover's write that removes an expired holding frees a slot: it admits the waiter that
/// fits now, in the same write, as every write that frees room does.
#[test]
fn a_takeover_that_removes_an_expired_holding_admits_in_the_same_write() {
    let expired = pool_holding("octo/app:90:deploy", 90, 1, "r2", 5)
        .replace("2027-01-15T08:01:00.000Z", "2027-01-15T07:00:00.000Z");
    let state = pool_state(
        &[
            pool_holding("octo/app:77:deploy", 77, 1, "r1", 4),
            expired,
            pool_holding("octo/app:91:deploy", 91, 1, "r4", 6),
        ],
        6,
    );
    let waiter = r#"{ "holderId": "octo/app:92:deploy", "nonce": "2222222222222222",
      "run": { "repository": "octo/app", "runId": 92, "runAttempt": 1, "job": "deploy", "runnerName": "r3" },
      "leaseMs": 3660000, "enqueuedAt": "2027-01-15T07:59:00.000Z", "lastSeenAt": "2027-01-15T07:59:00.000Z",
      "pool": {} }"#;
    let state = state.replace("\"queue\": []", &format!("\"queue\": [{waiter}]"));
    let (rerun, state, writes) = against_pool(
        &state,
        &job_on("77", "2", "", "r2"),
        "00000000000000bb",
        NOW,
    );
    assert_acquired(&rerun);
    assert_eq!(writes.len(), 1, "one write");
    let mut ids = holder_ids(&state);
    ids.sort();
    assert_eq!(
        ids,
        [
            "octo/app:77:deploy",
            "octo/app:91:deploy",
            "octo/app:92:deploy"
        ],
        "the waiter admitted in the takeover's write"
    );
}

/// A renewal reporting a rate limit whose write's answer was lost: the write landed and another
/// writer followed, so the read-back is not its own version. Its hit is in the books there (the
/// backoff it wrote): it is not counted a second time (which doubled the backoff).
#[test]
fn a_rate_limit_whose_write_was_overtaken_is_counted_once() {
    // Its answer lost (a 502): the version read back holds its hit.
    let (hits, writes) = rate_limited_renewal(false);
    assert_eq!(
        (hits, writes),
        (1, 1),
        "counted once, nothing written again"
    );
    // Refused (a 409: another holder of the resource wrote its own hit first): this one's hit
    // is recorded on top of it, never taken for it.
    let (hits, _) = rate_limited_renewal(true);
    assert_eq!(hits, 2, "both hits counted");
}

/// A renewal of run 77's pool holding reporting a rate limit; its first write is answered 502
/// after landing and being followed by another writer (`conflict`: answered 409, another holder
/// of the resource having recorded its own hit first). Returns the backoff's hits and the writes.
fn rate_limited_renewal(conflict: bool) -> (u64, usize) {
    let state = pool_state(&[pool_holding("octo/app:77:deploy", 77, 1, "r1", 4)], 4);
    let mut pairs = job_on("77", "1", "", "r1");
    pairs.push(("nonce", "1111111111111111".into()));
    pairs.push(("outcome", "rate-limited".into()));
    let raw: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut op = Operation::new(
        OperationKind::Renew,
        &inputs(&raw),
        &Entropy {
            seed: 7,
            nonce: "00000000000000ff".into(),
        },
    )
    .expect("inputs")
    .0;
    let mut current = state.clone();
    let mut writes = 0;
    let failed = |status| Reply::Http {
        status,
        message: String::new(),
        retry_after: None,
        ratelimit_remaining: None,
        ratelimit_reset: None,
        date: None,
    };
    let (o, _) = drive(&mut op, NOW, |call| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
            Reply::file("c1", SERIAL_POOL)
        }
        Call::ReadFile { .. } => Reply::file(&format!("s{writes}"), &current),
        Call::WriteFile { content, .. } => {
            writes += 1;
            let mut v: serde_json::Value = serde_json::from_str(content).unwrap();
            if writes > 1 {
                current = content.clone();
                return Reply::Written {
                    sha: format!("s{writes}"),
                    date: None,
                };
            }
            v["revision"] = serde_json::json!(v["revision"].as_u64().unwrap() + 1);
            v["lastChange"]["by"] = serde_json::json!("octo/web:5:ship");
            if conflict {
                // Another holder's hit, a moment later than this one's would be.
                let until = v["pool"]["backoff"]["a"]["until"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let later = leasehold_core::time::format_rfc3339(
                    leasehold_core::time::parse_rfc3339(&until).unwrap() + 1_000,
                );
                v["pool"]["backoff"]["a"]["until"] = serde_json::json!(later);
                v["holders"][0]["expiresAt"] = serde_json::json!("2027-01-15T08:01:00.000Z");
                current = serde_json::to_string(&v).unwrap();
                return failed(409);
            }
            // It landed; another writer came after it; its answer is lost.
            current = serde_json::to_string(&v).unwrap();
            failed(502)
        }
        other => panic!("unexpected {other:?}"),
    });
    assert!(o.success, "{:?}", o.error);
    let v: serde_json::Value = serde_json::from_str(&current).unwrap();
    (v["pool"]["backoff"]["a"]["hits"].as_u64().unwrap(), writes)
}

/// A directory (or a symlink, a submodule) where the lock's state file belongs: the acquire
/// fails `state-invalid`, naming the path, its branch and what is there, and writes nothing.
/// The driver only says what GitHub listed there (`notAFile`); what it means is the core's.
#[test]
fn something_other_than_a_file_at_the_state_path_is_named_and_left_alone() {
    for found in ["dir", "symlink", "submodule", "file in encoding utf-16"] {
        let mut writes = 0;
        let (o, _) = drive(
            &mut op(&job("77", "1"), "00000000000000aa"),
            NOW,
            |call| match call {
                Call::ReadFile { path, .. } if path.ends_with(".config.json") => {
                    Reply::file("c1", r#"{"capacity": 2}"#)
                }
                Call::ReadFile { .. } => Reply::NotAFile {
                    found: found.into(),
                    date: None,
                },
                _ => {
                    writes += 1;
                    leasehold_core::Reply::Http {
                        status: 500,
                        message: String::new(),
                        retry_after: None,
                        ratelimit_remaining: None,
                        ratelimit_reset: None,
                        date: None,
                    }
                }
            },
        );
        assert_eq!(writes, 0, "{found}: nothing sent past the read");
        let e = o.error.expect("failed");
        assert_eq!(e.code, leasehold_core::FailureCode::StateInvalid, "{found}");
        assert!(
            e.message.starts_with(&format!(
                "locks/deploy.json on branch leasehold-state: GitHub lists a {found} there, not a file"
            )),
            "{}",
            e.message
        );
    }
}

/// A directory where the lock's config file belongs: a config that cannot be read. An acquire
/// fails `config-invalid`, naming the path and what is there, and writes nothing; a release goes
/// on by the state's own record, as when its config read is refused, and releases.
#[test]
fn something_other_than_a_file_at_the_config_path_fails_an_acquire_not_a_release() {
    let answer = |state: &str, call: &Call| match call {
        Call::ReadFile { path, .. } if path.ends_with(".config.json") => Reply::NotAFile {
            found: "dir".into(),
            date: None,
        },
        Call::ReadFile { .. } => Reply::file("s3", state),
        Call::WriteFile { .. } => Reply::Written {
            sha: "s4".into(),
            date: None,
        },
        other => panic!("unexpected {other:?}"),
    };
    let empty = r#"{"schema":1,"lock":"deploy","revision":3,"fence":4,"holders":[],"queue":[]}"#;
    let (o, writes) = drive(&mut op(&job("77", "1"), "00000000000000aa"), NOW, |c| {
        answer(empty, c)
    });
    assert!(writes.is_empty());
    let e = o.error.expect("failed");
    assert_eq!(e.code, leasehold_core::FailureCode::ConfigInvalid);
    assert_eq!(
        e.message,
        "config locks/deploy.config.json: GitHub lists a dir there on the default branch, not a file leasehold can read"
    );
    // Held by this job, a job waiting, the state's config record an hour old: the release reads
    // the config to hand the slot on, finds a directory, and releases by the state's record.
    let held = held_by_attempt_one("2027-01-15T08:30:00.000Z")
        .replace("2027-01-15T07:59:59.000Z", "2027-01-15T07:00:00.000Z")
        .replace(
            r#""queue": []"#,
            r#""queue": [ { "holderId": "octo/app:78:deploy", "nonce": "2222222222222222",
      "run": { "repository": "octo/app", "runId": 78, "runAttempt": 1, "job": "deploy" },
      "leaseMs": 60000, "enqueuedAt": "2027-01-15T07:58:00.000Z", "lastSeenAt": "2027-01-15T07:59:58.000Z" } ]"#,
        );
    let context = job("77", "1");
    let raw: Vec<(&str, &str)> = context.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let entropy = Entropy {
        seed: 7,
        nonce: "00000000000000aa".into(),
    };
    let mut release = Operation::new(OperationKind::Release, &inputs(&raw), &entropy)
        .expect("inputs")
        .0;
    let mut config_reads = 0;
    let (o, writes) = drive(&mut release, NOW, |c| {
        if matches!(c, Call::ReadFile { path, .. } if path.ends_with(".config.json")) {
            config_reads += 1;
        }
        answer(&held, c)
    });
    assert_eq!(
        o.result,
        leasehold_core::ResultWord::Released,
        "{:?}",
        o.error
    );
    assert_eq!(config_reads, 1);
    assert_eq!(writes.len(), 1);
    assert!(holder_ids(&writes[0]).is_empty(), "{}", writes[0]);
}
