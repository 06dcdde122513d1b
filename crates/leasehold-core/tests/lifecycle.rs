//! The lifecycle's schedule, through the public protocol: a waiter behind a cooldown sleeps
//! until the cooldown's end (plus at most the wake jitter), not for its whole poll interval,
//! and is admitted by the read that follows. Beside the fixtures because the jitter is a range,
//! which a fixture's exact match cannot state.

mod common;

use common::{entropy, raw_inputs, DEPLOY_JOB};
use leasehold_core::limits::COOLDOWN_WAKE_JITTER_MS;
use leasehold_core::{Event, Operation, OperationKind};
use serde_json::{json, Value};

const T: u64 = 1_800_000_000_000;

fn iso(ms: u64) -> String {
    leasehold_core::time::format_rfc3339(ms)
}

fn state(revision: u64, with_cooldown: bool) -> String {
    let run = json!({"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1"});
    let mut s = json!({
        "schema": 2, "lock": "deploy", "revision": revision, "fence": 4,
        "config": {"capacity": 1, "readAt": iso(T - 60_000), "lifecycle": {"cooldownSeconds": 30}},
        "holders": [],
        "queue": [{"holderId": "octo/app:77:deploy", "nonce": "00000000000000aa", "run": run, "leaseMs": 3_600_000, "enqueuedAt": iso(T - 1_000), "lastSeenAt": iso(T - 1_000)}],
    });
    if with_cooldown {
        s["reservations"] = json!([{"id": "c4", "kind": "cooldown", "holderId": "octo/web:5:ship", "fence": 4,
            "run": {"repository": "octo/web", "runId": 5, "runAttempt": 1, "job": "ship"},
            "at": iso(T - 20_000), "endsAt": iso(T + 10_000), "by": "release"}]);
    }
    format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
}

fn step(op: &mut Operation, event: Value) -> Value {
    let event: Event = serde_json::from_value(event).unwrap();
    serde_json::to_value(op.step(event).unwrap().command).unwrap()
}

/// An operation of the job `octo/app` run 77 on the lock `deploy` (runner `r1`), with `extra`
/// inputs and the entropy `seed`.
fn job_op(kind: OperationKind, extra: &[(&str, &str)], seed: u64) -> Operation {
    let inputs = raw_inputs(DEPLOY_JOB, extra);
    Operation::new(kind, &inputs, &entropy(seed, "00000000000000aa"))
        .unwrap()
        .0
}

#[test]
fn a_waiter_wakes_at_the_cooldowns_end_not_a_poll_later() {
    for seed in 0..20 {
        let mut op = job_op(
            OperationKind::Acquire,
            &[("poll-seconds", "600"), ("timeout-minutes", "60")],
            seed,
        );
        assert_eq!(
            step(&mut op, json!({"kind": "start", "now": T}))["kind"],
            "readFile"
        );
        let file = |rev, cooldown| json!({"kind": "reply", "now": T + 10, "reply": {"kind": "file", "sha": "s5", "content": state(rev, cooldown)}});
        let sleep = step(&mut op, file(5, true));
        assert_eq!(sleep["kind"], "sleep", "{sleep}");
        let until = sleep["untilMs"].as_u64().unwrap();
        let end = T + 10_000;
        assert!(
            until > end && until <= end + 1 + COOLDOWN_WAKE_JITTER_MS,
            "seed {seed}: woke at {until}, the cooldown ends at {end}"
        );
        // At that time the cooldown is over: the waiter is admitted in its own write.
        assert_eq!(
            step(&mut op, json!({"kind": "timer", "now": until}))["kind"],
            "readFile"
        );
        let write = step(
            &mut op,
            json!({"kind": "reply", "now": until + 10, "reply": {"kind": "file", "sha": "s5", "content": state(5, true)}}),
        );
        assert_eq!(write["kind"], "writeFile", "{write}");
        let doc: Value = serde_json::from_str(write["content"].as_str().unwrap()).unwrap();
        assert_eq!(doc["holders"][0]["holderId"], "octo/app:77:deploy");
        assert!(
            doc.get("reservations").is_none(),
            "the cooldown freed itself"
        );
    }
    // Without a cooldown the same waiter, behind a long holding, sleeps minutes, not seconds.
    let mut op = job_op(OperationKind::Acquire, &[("poll-seconds", "600")], 1);
    step(&mut op, json!({"kind": "start", "now": T}));
    let mut s: Value = serde_json::from_str(&state(5, false)).unwrap();
    s["holders"] = json!([{"holderId": "octo/web:5:ship", "nonce": "bbbbbbbbbbbbbbbb", "fence": 4, "run": {"repository": "octo/web", "runId": 5, "runAttempt": 1, "job": "ship"}, "acquiredAt": iso(T - 3_000_000), "expiresAt": iso(T + 3_600_000), "leaseMs": 3_600_000, "ceilingAt": iso(T + 3_600_000)}]);
    let sleep = step(
        &mut op,
        json!({"kind": "reply", "now": T + 10, "reply": {"kind": "file", "sha": "s5", "content": format!("{}\n", serde_json::to_string_pretty(&s).unwrap())}}),
    );
    // (The handoff policy, policy/handoff.rs, polls the next in line at a tenth of the oldest
    // holding's age while it has seen no hold end: 300 s for this 50-minute-old holding.)
    assert!(sleep["untilMs"].as_u64().unwrap() >= T + 60_000, "{sleep}");
}

/// Acquire on `content` (a free slot), then release with the version acquire carried: the
/// release's first command.
fn release_after_carry(content: String) -> Value {
    let mut op = job_op(OperationKind::Acquire, &[], 3);
    step(&mut op, json!({"kind": "start", "now": T}));
    let write = step(
        &mut op,
        json!({"kind": "reply", "now": T + 10, "reply": {"kind": "file", "sha": "s5", "content": content}}),
    );
    assert_eq!(write["kind"], "writeFile", "{write}");
    let event: Event = serde_json::from_value(
        json!({"kind": "reply", "now": T + 20, "reply": {"kind": "written", "sha": "s6"}}),
    )
    .unwrap();
    let done = serde_json::to_value(op.step(event).unwrap().command).unwrap();
    assert_eq!(done["kind"], "finish", "{done}");
    let carry = done["outcome"]["carry"]["value"]
        .as_str()
        .expect("acquire carries its version")
        .to_string();
    let carried = serde_json::to_string(&vec![carry]).unwrap();
    let mut op = job_op(OperationKind::Release, &[("carried", &carried)], 3);
    step(&mut op, json!({"kind": "start", "now": T + 60_000}))
}

/// A release on a carried version has had no dated answer: GitHub's clock is its local one. Under
/// the lifecycle it writes and frees cooldowns by GitHub's clock (`endsAt`), so it reads first
/// (found by the simulation: a job's clock behind GitHub's freed a cooldown up to 70 s early).
#[test]
fn a_release_under_the_lifecycle_reads_before_it_writes_even_with_a_carry() {
    let mut s: Value = serde_json::from_str(&state(5, false)).unwrap();
    s["queue"] = json!([]);
    let lifecycle = format!("{}\n", serde_json::to_string_pretty(&s).unwrap());
    assert_eq!(release_after_carry(lifecycle)["kind"], "readFile");
    // Without the lifecycle the carry still saves the read.
    let o = s.as_object_mut().unwrap();
    o["schema"] = json!(1);
    o["config"].as_object_mut().unwrap().remove("lifecycle");
    let plain = format!("{}\n", serde_json::to_string_pretty(&s).unwrap());
    assert_eq!(release_after_carry(plain)["kind"], "writeFile");
}

/// A waiter's state with the lock's incident standing (its queue entry still in).
fn incident_state(revision: u64) -> String {
    let mut s: Value = serde_json::from_str(&state(revision, false)).unwrap();
    s["incident"] = json!({"id": "deploy-incident-3", "holderId": "octo/web:5:ship", "fence": 3,
        "run": {"repository": "octo/web", "runId": 5, "runAttempt": 1, "job": "ship"},
        "at": iso(T - 5_000), "reason": "account-blocked"});
    format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
}

/// Acquire (a minute's timeout) meets the incident with its own queue entry in: it must remove
/// the entry first. Its write is answered 502 (applied or not, nobody knows); after that every
/// read answers `after_write` (a reply). Returns the commands it gave, the finish last.
fn acquire_in_an_incident(after_write: impl Fn(u64) -> Value) -> Vec<Value> {
    let mut op = job_op(OperationKind::Acquire, &[("timeout-minutes", "1")], 5);
    let mut seen = vec![step(&mut op, json!({"kind": "start", "now": T}))];
    let write = step(
        &mut op,
        json!({"kind": "reply", "now": T + 10, "reply": {"kind": "file", "sha": "s5", "content": incident_state(5)}}),
    );
    assert_eq!(write["kind"], "writeFile", "{write}");
    let doc: Value = serde_json::from_str(write["content"].as_str().unwrap()).unwrap();
    assert_eq!(doc["queue"], json!([]), "the write removes its own entry");
    assert!(
        doc["holders"].as_array().unwrap().is_empty(),
        "and admits nobody"
    );
    seen.push(write);
    let mut next = step(
        &mut op,
        json!({"kind": "reply", "now": T + 20, "reply": {"kind": "http", "status": 502, "message": "Server Error"}}),
    );
    let mut now = T + 20;
    for _ in 0..500 {
        seen.push(next.clone());
        next = match next["kind"].as_str().unwrap() {
            "finish" => return seen,
            "sleep" => {
                now = now.max(next["untilMs"].as_u64().unwrap());
                step(&mut op, json!({"kind": "timer", "now": now}))
            }
            _ => {
                now += 10;
                step(
                    &mut op,
                    json!({"kind": "reply", "now": now, "reply": after_write(now)}),
                )
            }
        };
    }
    panic!("acquire never finished: {seen:?}");
}

/// Acquire during an incident removes its own queue entry first; when that removal cannot be
/// confirmed (its write answered 502, and every read after fails until the deadline passes) it
/// finishes `incident-cleanup-failed`, naming the incident, never `incident`.
#[test]
fn acquire_in_an_incident_whose_queue_removal_is_unconfirmed_finishes_cleanup_failed() {
    let seen = acquire_in_an_incident(
        |_| json!({"kind": "http", "status": 503, "message": "Service Unavailable"}),
    );
    let done = seen.last().unwrap();
    let o = &done["outcome"];
    assert_eq!(o["result"], "incident-cleanup-failed", "{done}");
    assert_eq!(o["success"], false);
    assert_eq!(o["acquired"], false);
    assert_eq!(o["error"]["code"], "incident-cleanup-failed", "{done}");
    assert_eq!(o["lifecycle"]["incidentId"], "deploy-incident-3", "{done}");
    // It tried to read again (it never took the 502 as a removal), and wrote only once.
    let reads = seen.iter().filter(|c| c["kind"] == "readFile").count();
    let writes = seen.iter().filter(|c| c["kind"] == "writeFile").count();
    assert!(reads >= 2, "{seen:?}");
    assert_eq!(writes, 1, "{seen:?}");

    // The control: the re-read shows its entry gone (the 502 was applied). It confirms that
    // absence with a compare-and-swap of the version it read, then finishes `incident`.
    let gone = {
        let mut s: Value = serde_json::from_str(&incident_state(6)).unwrap();
        s["queue"] = json!([]);
        format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
    };
    let answers = std::cell::Cell::new(0);
    let seen = acquire_in_an_incident(|_| {
        answers.set(answers.get() + 1);
        if answers.get() == 1 {
            json!({"kind": "file", "sha": "s6", "content": gone})
        } else {
            json!({"kind": "written", "sha": "s7"})
        }
    });
    let done = seen.last().unwrap();
    assert_eq!(done["outcome"]["result"], "incident", "{seen:?}");
    assert_eq!(
        done["outcome"]["lifecycle"]["incidentId"],
        "deploy-incident-3"
    );
}

/// This job's holding was removed for its expired lease before its release came (the cleanup
/// command ran past it), and the removal left the slot quarantined (`q4` by `expired`).
fn removed_state(revision: u64) -> String {
    let run = json!({"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1"});
    let s = json!({
        "schema": 2, "lock": "deploy", "revision": revision, "fence": 4,
        "config": {"capacity": 1, "readAt": iso(T - 60_000), "lifecycle": {"cooldownSeconds": 30}},
        "holders": [], "queue": [],
        "reservations": [{"id": "q4", "kind": "quarantine", "holderId": "octo/app:77:deploy", "fence": 4,
            "run": run, "at": iso(T - 20_000), "by": "expired"}],
    });
    format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
}

/// The same lock a moment before: this job still holds it (fence 4).
fn held_state(revision: u64) -> String {
    let run = json!({"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1"});
    let s = json!({
        "schema": 2, "lock": "deploy", "revision": revision, "fence": 4,
        "config": {"capacity": 1, "readAt": iso(T - 60_000), "lifecycle": {"cooldownSeconds": 30}},
        "holders": [{"holderId": "octo/app:77:deploy", "nonce": "00000000000000aa", "fence": 4, "run": run,
            "acquiredAt": iso(T - 3_600_000), "expiresAt": iso(T - 30_000), "leaseMs": 3_600_000, "ceilingAt": iso(T + 3_600_000)}],
        "queue": [],
    });
    format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
}

/// Runs a release with `report` against [`removed_state`] (with `raced`: its first read shows the
/// holding, and its write conflicts with the removal); returns its outcome and the last state
/// it wrote, if any.
fn release_after_removal(report: &[(&str, &str)]) -> (Value, Option<Value>) {
    release_after_removal_raced(report, false)
}

/// Drives `op` from its start to its finish: a sleep ends at once (time is virtual), and every
/// request is answered by `answer` (the config read with this lifecycle's config). Returns the
/// outcome.
fn drive(mut op: Operation, capacity: u32, mut answer: impl FnMut(&Value) -> Value) -> Value {
    let mut command = step(&mut op, json!({"kind": "start", "now": T}));
    let mut now = T;
    for _ in 0..40 {
        now += 10;
        let event = match command["kind"].as_str().unwrap() {
            "finish" => return command["outcome"].clone(),
            "sleep" => {
                now = now.max(command["untilMs"].as_u64().unwrap());
                json!({"kind": "timer", "now": now})
            }
            "readFile" if command["path"].as_str().unwrap().ends_with(".config.json") => {
                let config = format!(
                    "{{\"capacity\": {capacity}, \"lifecycle\": {{\"cooldownSeconds\": 30}}}}\n"
                );
                json!({"kind": "reply", "now": now, "reply": {"kind": "file", "sha": "c1", "content": config}})
            }
            _ => json!({"kind": "reply", "now": now, "reply": answer(&command)}),
        };
        command = step(&mut op, event);
    }
    panic!("did not finish")
}

fn release_after_removal_raced(report: &[(&str, &str)], raced: bool) -> (Value, Option<Value>) {
    let mut written = None;
    let mut reads = 0;
    let outcome = drive(
        job_op(OperationKind::Release, report, 3),
        1,
        |command| match command["kind"].as_str().unwrap() {
            "readFile" => {
                reads += 1;
                if raced && reads == 1 {
                    json!({"kind": "file", "sha": "s4", "content": held_state(4)})
                } else {
                    json!({"kind": "file", "sha": "s5", "content": removed_state(5)})
                }
            }
            "writeFile" if raced && command["sha"] == "s4" => {
                json!({"kind": "http", "status": 409, "message": "locks/deploy.json does not match s4"})
            }
            "writeFile" => {
                written = Some(serde_json::from_str(command["content"].as_str().unwrap()).unwrap());
                json!({"kind": "written", "sha": "s6"})
            }
            other => panic!("unexpected {other}: {command}"),
        },
    );
    (outcome, written)
}

/// A `blocked` report is about the slot whoever removed the holding: it raises the incident, so
/// the quarantine (which the reaper frees once the run is over, or a waiter on the same runner
/// reclaims) never hands the blocked resource to the next job. It used to end `noop`, exit 0,
/// with no incident.
#[test]
fn a_blocked_report_after_the_holding_was_removed_raises_the_incident() {
    let (outcome, written) =
        release_after_removal(&[("health", "blocked"), ("reason", "account-blocked")]);
    let written = written.expect("a write");
    assert_eq!(
        written["incident"]["holderId"], "octo/app:77:deploy",
        "{written}"
    );
    assert_eq!(written["incident"]["fence"], 4);
    assert_eq!(
        outcome["lifecycle"]["cleanupResult"], "incident",
        "{outcome}"
    );
    assert_eq!(
        outcome["lifecycle"]["incidentId"],
        written["incident"]["id"]
    );
    assert_eq!(outcome["lifecycle"]["reservationId"], "q4");
    // A clean report leaves the quarantine as it is (only a recovery, a reclaim or the reaper
    // frees one), and says which.
    let (outcome, written) =
        release_after_removal(&[("cleanup", "confirmed"), ("health", "healthy")]);
    let written = written.expect("the absence confirmed");
    assert!(written["incident"].is_null());
    assert_eq!(written["reservations"][0]["id"], "q4");
    assert_eq!(
        outcome["lifecycle"]["cleanupResult"], "quarantined",
        "{outcome}"
    );
    assert_eq!(outcome["lifecycle"]["reservationId"], "q4");
    assert_eq!(outcome["result"], "noop");
}

/// The same, when the removal lands between this release's read and its write: the write
/// conflicts, and the version read after it shows the removal's quarantine, so the release did not
/// remove the holding (it reported a cooldown or an incident that existed nowhere). The report
/// applies to the quarantine, as above.
#[test]
fn a_release_overtaken_by_the_removal_applies_its_report_to_the_quarantine() {
    let (outcome, written) = release_after_removal_raced(
        &[("health", "blocked"), ("reason", "account-blocked")],
        true,
    );
    let written = written.expect("a write");
    assert_eq!(written["incident"]["fence"], 4, "{written}");
    assert_eq!(
        outcome["lifecycle"]["incidentId"], written["incident"]["id"],
        "{outcome}"
    );
    assert_eq!(outcome["released"], false);
    let (outcome, _) =
        release_after_removal_raced(&[("cleanup", "confirmed"), ("health", "healthy")], true);
    assert_eq!(
        outcome["lifecycle"]["cleanupResult"], "quarantined",
        "{outcome}"
    );
    assert_eq!(outcome["lifecycle"]["reservationId"], "q4");
}

/// A lock with `reservations` and `incident`, as another writer left it at `revision`.
fn recover_state(revision: u64, reservations: Value, incident: Value) -> String {
    let mut s = json!({
        "schema": 2, "lock": "deploy", "revision": revision, "fence": 7,
        "config": {"capacity": 2, "readAt": iso(T - 60_000), "lifecycle": {"cooldownSeconds": 30}},
        "holders": [], "queue": [], "reservations": reservations,
    });
    if !incident.is_null() {
        s["incident"] = incident;
    }
    format!("{}\n", serde_json::to_string_pretty(&s).unwrap())
}

/// Runs `recover` with `inputs`: its write is answered 502 (it may have landed), and every read
/// after it shows `after` (our write landed and another writer followed). Returns the outcome.
fn recover_with_lost_write(inputs: &[(&str, &str)], before: String, after: String) -> Value {
    let mut wrote = false;
    drive(
        job_op(OperationKind::Recover, inputs, 5),
        2,
        |command| match command["kind"].as_str().unwrap() {
            "readFile" if !wrote => json!({"kind": "file", "sha": "s5", "content": before}),
            "readFile" => json!({"kind": "file", "sha": "s7", "content": after}),
            "writeFile" if !wrote => {
                wrote = true;
                json!({"kind": "http", "status": 502, "message": "Bad Gateway"})
            }
            other => panic!("unexpected {other}: {command}"),
        },
    )
}

/// A recovery whose write's answer was lost, overtaken by another writer: the version read back
/// is not its own, but its goal is met there (the quarantine a cooldown, the incident ended). It
/// is recovered, never `recover-refused` "nothing was written" for a write that landed.
#[test]
fn a_recovery_whose_lost_write_was_overtaken_is_recovered() {
    let run = json!({"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1"});
    let q = json!({"id": "q7", "kind": "quarantine", "holderId": "octo/app:77:deploy", "fence": 7, "run": run, "at": iso(T - 600_000), "by": "release"});
    let c = json!({"id": "c7", "kind": "cooldown", "holderId": "octo/app:77:deploy", "fence": 7, "run": run, "at": iso(T), "endsAt": iso(T + 30_000), "by": "recover"});
    let outcome = recover_with_lost_write(
        &[
            ("operation", "recover"),
            ("reservation-id", "q7"),
            ("resource-safe", "true"),
        ],
        recover_state(5, json!([q]), Value::Null),
        recover_state(7, json!([c]), Value::Null),
    );
    assert_eq!(outcome["result"], "recovered", "{outcome}");
    assert_eq!(outcome["lifecycle"]["reservationId"], "c7");
    let incident = json!({"id": "deploy-incident-3", "holderId": "octo/app:77:deploy", "fence": 7, "run": run, "at": iso(T - 600_000)});
    let outcome = recover_with_lost_write(
        &[
            ("operation", "recover-incident"),
            ("incident-id", "deploy-incident-3"),
            ("confirmed", "true"),
        ],
        recover_state(5, json!([q]), incident),
        recover_state(7, json!([q]), Value::Null),
    );
    assert_eq!(outcome["result"], "incident-recovered", "{outcome}");
}

/// The incident write of a report applied to the removal's quarantine is refused (409): an
/// operator recovered the quarantine meanwhile. On the version read after, there is nothing of
/// this holding to report on: the release confirms the absence and claims no incident or
/// quarantine that was never written.
#[test]
fn an_applied_report_refused_claims_nothing_of_the_version_it_was_planned_on() {
    let run = json!({"repository": "octo/app", "runId": 77, "runAttempt": 1, "job": "deploy", "runnerName": "r1"});
    let c = json!([{"id": "c4", "kind": "cooldown", "holderId": "octo/app:77:deploy", "fence": 4, "run": run, "at": iso(T), "endsAt": iso(T + 30_000), "by": "recover"}]);
    let recovered = recover_state(6, c, Value::Null);
    let mut refused = false;
    let outcome = drive(
        job_op(OperationKind::Release, &[("health", "blocked")], 3),
        1,
        |command| match command["kind"].as_str().unwrap() {
            "readFile" if !refused => {
                json!({"kind": "file", "sha": "s5", "content": removed_state(5)})
            }
            "readFile" => json!({"kind": "file", "sha": "s6", "content": recovered}),
            "writeFile" if !refused => {
                refused = true;
                json!({"kind": "http", "status": 409, "message": "locks/deploy.json does not match s5"})
            }
            "writeFile" => json!({"kind": "written", "sha": "s7"}),
            other => panic!("unexpected {other}: {command}"),
        },
    );
    assert_eq!(outcome["result"], "noop", "{outcome}");
    assert!(outcome["lifecycle"]["incidentId"].is_null(), "{outcome}");
    assert_ne!(outcome["lifecycle"]["reservationId"], "q4", "{outcome}");
}

/// A quarantine of another job of this run attempt under the same holder id (a matrix cell
/// without `holder-suffix`, told apart by its runner) is not this release's to report on.
#[test]
fn another_jobs_quarantine_under_the_same_holder_id_is_left_alone() {
    let other = removed_state(5).replace("\"runnerName\": \"r1\"", "\"runnerName\": \"r9\"");
    let mut written = None;
    let outcome = drive(
        job_op(OperationKind::Release, &[("health", "blocked")], 3),
        1,
        |command| match command["kind"].as_str().unwrap() {
            "readFile" => json!({"kind": "file", "sha": "s5", "content": other}),
            "writeFile" => {
                written = Some(command["content"].as_str().unwrap().to_string());
                json!({"kind": "written", "sha": "s6"})
            }
            other => panic!("unexpected {other}: {command}"),
        },
    );
    assert!(
        !written.unwrap_or_default().contains("\"incident\""),
        "{outcome}"
    );
    assert_ne!(
        outcome["lifecycle"]["cleanupResult"], "incident",
        "{outcome}"
    );
}

/// A report applied to the removal's quarantine whose write may have landed (its answer lost)
/// and could not be read back before the budget ran out: the release ends `release-unrecorded`
/// and claims no incident and no quarantine for a version nobody has seen.
#[test]
fn an_applied_report_in_doubt_claims_nothing() {
    let mut wrote = false;
    let outcome = drive(
        job_op(OperationKind::Release, &[("health", "blocked")], 3),
        1,
        |command| match command["kind"].as_str().unwrap() {
            "readFile" if !wrote => {
                json!({"kind": "file", "sha": "s5", "content": removed_state(5)})
            }
            "writeFile" if !wrote => {
                wrote = true;
                json!({"kind": "http", "status": 502, "message": "Server Error"})
            }
            "readFile" => json!({"kind": "http", "status": 502, "message": "Server Error"}),
            other => panic!("unexpected {other}: {command}"),
        },
    );
    assert!(wrote);
    assert_eq!(outcome["result"], "release-unrecorded", "{outcome}");
    assert_eq!(outcome["success"], false, "{outcome}");
    assert!(outcome["lifecycle"]["incidentId"].is_null(), "{outcome}");
    assert!(outcome["lifecycle"]["reservationId"].is_null(), "{outcome}");
}
