//! The engine, through every operation: a lock, a reaper, claims and slot numbers, driven
//! against GitHub (`leasehold-github-model`) whose answers the fuzzer may replace with
//! arbitrary ones (other shas, damaged or foreign documents, any status, lost answers, any
//! `date` and `retry-after`), at arbitrary times (clocks that jump either way). It asserts:
//!
//! * no panic, and only typed errors: once an operation is built, stepping it fails only with
//!   a protocol error, and only when the driver (this target) fed an answer of the wrong kind;
//! * the protocol (`engine/mod.rs`, `wire/command.rs`): every request carries a time limit
//!   within the core's bounds; a contents write goes only to the lock's state file on the state
//!   branch, carries the sha of a version this target handed in (a read's, a write's, or the
//!   blob id of the state a created tree held; or none, only after that file was answered as
//!   missing), holds a state that parses, with a revision one above the version
//!   it was planned on, a fence counter that never goes down and fresh fences for new holders;
//!   a write whose outcome is unknown is never sent again before a read; nothing is requested
//!   after `finish`, and an event after it is refused.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use leasehold_core::{
    limits, time, Call, Command, Entropy, Error, Event, LockState, Operation, OperationKind, Reply,
};
use leasehold_github_model::GitHub;
use libfuzzer_sys::fuzz_target;

const KINDS: &[OperationKind] = &[
    OperationKind::Acquire,
    OperationKind::Release,
    OperationKind::Cleanup,
    OperationKind::Renew,
    OperationKind::Status,
    OperationKind::Reap,
    OperationKind::Claim,
    OperationKind::ClaimRead,
    OperationKind::ClaimList,
    OperationKind::ClaimFamilyClaim,
    OperationKind::SlotAllocate,
    OperationKind::Repair,
];

const LOCK: &str = "deploy";
const STATE: &str = "locks/deploy.json";
const NONCE: &str = "00000000000000aa";
/// About 2027: where most runs start, so that leases and `date` headers are near each other.
const EPOCH: u64 = 1_800_000_000_000;

/// Valid inputs for `kind`, and the same with a few tuning knobs set (which some operations
/// refuse: then the plain ones are used).
fn inputs(
    kind: OperationKind,
    u: &mut Unstructured,
) -> arbitrary::Result<(BTreeMap<String, String>, BTreeMap<String, String>)> {
    let mut m: BTreeMap<String, String> = [
        ("GITHUB_REPOSITORY", "octo/app"),
        ("GITHUB_RUN_ID", "77"),
        ("GITHUB_RUN_ATTEMPT", "1"),
        ("GITHUB_JOB", "build"),
        ("RUNNER_NAME", "r1"),
        ("lock", LOCK),
        ("repository", "octo/app"),
        ("namespace", "deploy"),
        ("prefix", "acct"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    match kind {
        OperationKind::Release | OperationKind::Cleanup | OperationKind::Renew => {
            m.insert("nonce".into(), NONCE.into());
            m.insert("holder-id".into(), "octo/app:77:build".into());
        }
        OperationKind::ClaimFamilyClaim | OperationKind::ClaimFamilyRelease => {
            m.insert("keys".into(), "a,b,c".into());
        }
        OperationKind::Claim | OperationKind::ClaimRead => {
            m.insert("key".into(), "k".into());
        }
        OperationKind::Repair => {
            m.insert("confirm".into(), "true".into());
        }
        _ => {}
    }
    let knobs: &[(&str, &[&str])] = &[
        ("timeout-minutes", &["0", "1", "5"]),
        ("poll-seconds", &["1", "10", "600"]),
        ("lease-minutes", &["1", "60"]),
        ("if-due", &["true", "false"]),
        ("record-job-id", &["true", "false"]),
        ("api-max-attempts", &["1", "3", "100"]),
        ("release-deadline-seconds", &["30", "120"]),
        ("scan-seconds", &["30", "480"]),
        ("holder-suffix", &["cell-1"]),
        ("min-revision", &["1", "5"]),
        ("stale", &["true"]),
    ];
    let mut tuned = m.clone();
    for _ in 0..u.int_in_range(0..=3)? {
        let (name, values) = u.choose(knobs)?;
        tuned.insert(name.to_string(), u.choose(values)?.to_string());
    }
    Ok((m, tuned))
}

/// A time near `now`, or anywhere.
fn time_after(u: &mut Unstructured, now: u64) -> arbitrary::Result<u64> {
    Ok(match u.int_in_range(0..=15)? {
        0 => u64::arbitrary(u)?,
        1 => now.saturating_sub(u.int_in_range(0..=600_000)?),
        _ => now.saturating_add(u.int_in_range(0..=70_000)?),
    })
}

fn date(u: &mut Unstructured, now: u64) -> arbitrary::Result<Option<String>> {
    Ok(match u.int_in_range(0..=5)? {
        0 => None,
        1 => Some(String::arbitrary(u)?),
        2 => Some(leasehold_github_model::http_date(time_after(u, now)?)),
        _ => Some(leasehold_github_model::http_date(now)),
    })
}

fn sha(u: &mut Unstructured) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => String::arbitrary(u)?,
        n => format!("{:040x}", u128::from(n as u8) * 7919),
    })
}

/// A state document: the honest one damaged, or another, or any text.
fn document(u: &mut Unstructured, honest: &str, now: u64) -> arbitrary::Result<String> {
    let Ok(mut state) = LockState::parse(honest, LOCK) else {
        return Ok(if u.ratio(1, 2)? {
            honest.to_string()
        } else {
            String::arbitrary(u)?
        });
    };
    match u.int_in_range(0..=9)? {
        0 => return String::arbitrary(u),
        1 => state.revision = u64::arbitrary(u)?,
        2 => state.revision = state.revision.saturating_sub(u.int_in_range(1..=3)?),
        3 => state.fence = u64::arbitrary(u)?,
        4 => {
            if let Some(h) = state.holders.first_mut() {
                h.expires_at = time_after(u, now)?;
                h.ceiling_at = time_after(u, now)?;
            }
        }
        5 => {
            if let Some(q) = state.queue.pop() {
                state.queue.insert(0, q);
            }
        }
        6 => state.holders.clear(),
        7 => {
            if let Some(h) = state.holders.first_mut() {
                h.nonce = NONCE.into();
                h.holder_id = "octo/app:77:build".into();
                h.run.run_attempt = u.int_in_range(1..=3)?;
            }
        }
        8 => {
            state.config = None;
        }
        _ => {}
    }
    Ok(state.to_document())
}

/// An answer of the kind `call` expects, made up or derived from the honest one.
fn reply_for(
    u: &mut Unstructured,
    call: &Call,
    honest: &Reply,
    now: u64,
) -> arbitrary::Result<Reply> {
    Ok(match u.int_in_range(0..=9)? {
        0 => Reply::Transport {
            sent: bool::arbitrary(u)?,
            message: "ECONNRESET".into(),
        },
        1 | 2 => Reply::Http {
            status: *u.choose(&[304, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504])?,
            message: u
                .choose(&[
                    "",
                    "Not Found",
                    "is at abc but expected def",
                    "sha wasn't supplied",
                    "API rate limit exceeded",
                    "You have exceeded a secondary rate limit",
                    "Bad credentials",
                    "Resource not accessible by integration",
                ])?
                .to_string(),
            retry_after: match u.int_in_range(0..=3)? {
                0 => Some(u.int_in_range(0u64..=120)?.to_string()),
                1 => Some(String::arbitrary(u)?),
                _ => None,
            },
            ratelimit_remaining: Option::<u64>::arbitrary(u)?,
            ratelimit_reset: if u.ratio(1, 2)? {
                Some(time_after(u, now)? / 1000)
            } else {
                None
            },
            date: date(u, now)?,
        },
        _ => match (call, honest) {
            // Now and then something other than a file at the path, the state's or the
            // config's, present or not.
            (Call::ReadFile { .. }, _) if u.ratio(1, 16)? => Reply::NotAFile {
                found: u.choose(&["dir", "symlink", "submodule"])?.to_string(),
                date: date(u, now)?,
            },
            (Call::ReadFile { .. }, Reply::File { content, .. }) => Reply::File {
                sha: sha(u)?,
                content: document(u, content, now)?,
                etag: if u.ratio(1, 2)? { Some(sha(u)?) } else { None },
                date: date(u, now)?,
            },
            (Call::ReadFile { if_none_match, .. }, _) => {
                if if_none_match.is_some() && u.ratio(1, 2)? {
                    Reply::NotModified {
                        date: date(u, now)?,
                    }
                } else {
                    Reply::File {
                        sha: sha(u)?,
                        content: document(u, &LockState::empty(LOCK).to_document(), now)?,
                        etag: None,
                        date: date(u, now)?,
                    }
                }
            }
            (Call::WriteFile { .. }, _) => Reply::Written {
                sha: sha(u)?,
                date: date(u, now)?,
            },
            (
                Call::GetRunAttempt {
                    run_id, attempt, ..
                },
                _,
            ) => Reply::Run {
                run_id: *run_id,
                // GitHub promises neither the number nor a non-null status.
                run_attempt: u.arbitrary::<bool>()?.then_some(*attempt),
                status: u
                    .choose(&[
                        Some("queued"),
                        Some("in_progress"),
                        Some("completed"),
                        Some("weird"),
                        None,
                    ])?
                    .map(str::to_string),
                conclusion: u
                    .choose(&[None, Some("success"), Some("failure"), Some("cancelled")])?
                    .map(str::to_string),
                date: date(u, now)?,
            },
            (Call::GetJob { job_id, .. }, _) => Reply::Job {
                id: *job_id,
                run_id: 77,
                run_attempt: Option::<u32>::arbitrary(u)?,
                name: "build".into(),
                status: u
                    .choose(&["queued", "in_progress", "completed"])?
                    .to_string(),
                conclusion: u.choose(&[None, Some("success")])?.map(str::to_string),
                runner_name: Some("r1".into()),
                completed_at: if u.ratio(1, 2)? {
                    Some(leasehold_core::time::format_rfc3339(time_after(u, now)?))
                } else {
                    None
                },
                date: date(u, now)?,
            },
            _ => honest.clone(),
        },
    })
}

/// Does `reply` answer `call` (so a protocol error for it is the engine's fault)?
fn fits(call: &Call, reply: &Reply) -> bool {
    matches!(
        (call, reply),
        (_, Reply::Http { .. } | Reply::Transport { .. })
            | (Call::ReadFile { .. }, Reply::File { .. } | Reply::NotAFile { .. })
            | (
                Call::ReadFile {
                    if_none_match: Some(_),
                    ..
                },
                Reply::NotModified { .. }
            )
            | (Call::WriteFile { .. }, Reply::Written { .. })
            | (
                Call::CreateTree { .. }
                    | Call::CreateCommit { .. }
                    | Call::CreateBranch { .. }
                    | Call::CreateRef { .. },
                Reply::Created { .. }
            )
            | (
                Call::CreateRef { .. } | Call::GetRef { .. },
                Reply::GitRef { .. }
            )
            | (Call::ListMatchingRefs { .. }, Reply::Refs { .. })
            | (Call::Graphql { .. }, Reply::Graphql { .. })
            | (Call::GetRunAttempt { .. }, Reply::Run { .. })
            | (Call::GetJob { .. }, Reply::Job { .. })
            | (Call::ListJobs { .. }, Reply::Jobs { .. })
    )
}

/// What this target handed the operation about the state file, to judge its writes by.
#[derive(Default)]
struct Books {
    /// sha → the state it names (None: not a state document).
    versions: BTreeMap<String, Option<LockState>>,
    answered_missing: bool,
    /// The last request was a contents write whose outcome is unknown.
    unknown_write: bool,
    /// sha → the text it names: a sha names one content, as a blob sha does on GitHub.
    texts: BTreeMap<String, String>,
}

/// Gives a made-up answer's sha to one content only: a sha already handed in for another text
/// is replaced by the text's own blob sha (GitHub never names two contents with one sha).
fn one_content_per_sha(call: &Call, reply: &mut Reply, books: &mut Books) {
    let (sha, text) = match (call, reply) {
        (_, Reply::File { sha, content, .. }) => (sha, content.clone()),
        (Call::WriteFile { content, .. }, Reply::Written { sha, .. }) => (sha, content.clone()),
        _ => return,
    };
    match books.texts.get(sha.as_str()) {
        Some(known) if *known != text => *sha = leasehold_github_model::blob_sha(&text),
        _ => {}
    }
    books.texts.insert(sha.clone(), text);
}

fn check_request(
    kind: OperationKind,
    call: &Call,
    timeout_ms: u64,
    plan_branch: &str,
    books: &mut Books,
) {
    assert!(
        (limits::MIN_REQUEST_TIMEOUT_MS..=limits::REQUEST_TIMEOUT_MS).contains(&timeout_ms),
        "a request's time limit {timeout_ms} is out of bounds: {call:?}"
    );
    match call {
        Call::ReadFile { .. } => books.unknown_write = false,
        Call::WriteFile {
            path,
            branch,
            content,
            sha,
            ..
        } => {
            assert!(
                !books.unknown_write,
                "a write whose outcome is unknown was followed by a write before any read"
            );
            assert_eq!(path, STATE, "a write outside the lock's state file");
            assert_eq!(branch, plan_branch, "a write outside the state branch");
            let new = LockState::parse(content, LOCK)
                .unwrap_or_else(|e| panic!("a write holds a state that does not parse: {e}"));
            if kind == OperationKind::Repair {
                // A repair replaces a version that does not parse (so it was never planned on)
                // by an empty state keeping every fence and revision ever handed in below it.
                assert!(
                    sha.as_ref().is_some_and(|s| books.versions.contains_key(s)),
                    "a repair's write carries the sha of a version handed in"
                );
                assert!(new.holders.is_empty() && new.queue.is_empty());
                for seen in books.versions.values().flatten() {
                    assert!(
                        new.fence >= seen.fence,
                        "a repair lowered the fence counter"
                    );
                    assert!(new.revision > seen.revision, "a repair reused a revision");
                }
                return;
            }
            let base = match sha {
                Some(sha) => match books.versions.get(sha) {
                    Some(Some(base)) => base.clone(),
                    Some(None) => panic!("a write planned on a version that is not a state"),
                    None => panic!("a write carries a sha never handed in: {sha}"),
                },
                None => {
                    assert!(
                        books.answered_missing,
                        "a write without a sha to a file never answered missing"
                    );
                    LockState::empty(LOCK)
                }
            };
            if sha.is_some() {
                assert_eq!(
                    new.revision,
                    base.revision + 1,
                    "a write's revision is not one above its base"
                );
            } else {
                assert!(new.revision > base.revision);
            }
            assert!(new.fence >= base.fence, "the fence counter went down");
            for h in &new.holders {
                let kept = base.holders.iter().any(|b| {
                    b.holder_id == h.holder_id && b.nonce == h.nonce && b.fence == h.fence
                });
                assert!(
                    kept || h.fence > base.fence,
                    "a new holding has a fence {} not above the base's counter {}",
                    h.fence,
                    base.fence
                );
            }
        }
        _ => {}
    }
}

fn record_reply(call: &Call, reply: &Reply, books: &mut Books) {
    match (call, reply) {
        (Call::ReadFile { path, .. }, Reply::File { sha, content, .. }) if path == STATE => {
            books
                .versions
                .insert(sha.clone(), LockState::parse(content, LOCK).ok());
        }
        (Call::ReadFile { path, .. }, Reply::Http { status: 404, .. }) if path == STATE => {
            books.answered_missing = true;
        }
        (Call::WriteFile { content, .. }, Reply::Written { sha, .. }) => {
            books
                .versions
                .insert(sha.clone(), LockState::parse(content, LOCK).ok());
        }
        // The state branch created with the first state in its first commit: the state file's
        // version is its blob id (what the contents API names it), handed in by the tree.
        (Call::CreateTree { files }, Reply::Created { .. }) => {
            for f in files.iter().filter(|f| f.path == STATE) {
                books.versions.insert(
                    leasehold_github_model::blob_sha(&f.content),
                    LockState::parse(&f.content, LOCK).ok(),
                );
            }
        }
        (Call::WriteFile { .. }, Reply::Transport { sent: true, .. }) => books.unknown_write = true,
        (Call::WriteFile { .. }, Reply::Http { status, .. }) if *status >= 500 => {
            books.unknown_write = true
        }
        _ => {}
    }
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let kind = *u.choose(KINDS)?;
    let (plain, tuned) = inputs(kind, u)?;
    let entropy = Entropy {
        seed: u64::arbitrary(u)?,
        nonce: NONCE.into(),
    };
    let built =
        Operation::new(kind, &tuned, &entropy).or_else(|_| Operation::new(kind, &plain, &entropy));
    let (mut op, plan) = match built {
        Ok(built) => built,
        Err(e) => panic!("the target's inputs are valid for {kind:?}: {e}"),
    };
    let mut github = GitHub::new("main");
    let mut now = if u.ratio(7, 8)? {
        EPOCH + u.int_in_range(0..=1_000_000)?
    } else {
        u.int_in_range(0..=time::LATEST)?
    };
    if u.ratio(3, 4)? {
        let config = match u.int_in_range(0..=4)? {
            0 => String::arbitrary(u)?,
            1 => r#"{"capacity": 2, "lease": {"ttlSeconds": 60, "renewSeconds": 20}}"#.into(),
            _ => format!("{{\"capacity\": {}}}", u.int_in_range(1..=3)?),
        };
        github.commit_file("main", "locks/deploy.config.json", &config, now);
    }
    if u.ratio(1, 2)? {
        github.add_branch(&plan.state_branch);
    }
    // Another holder, seeded through the honest path (its own acquire) is left to the fuzzer's
    // documents: a damaged version of whatever the honest store holds.
    let mut books = Books::default();
    let mut step = op
        .step(Event::Start { now })
        .expect("start is accepted first");
    for _ in 0..400 {
        let event = match &step.command {
            Command::Finish { .. } => {
                let after = op.step(Event::Timer { now });
                assert!(
                    matches!(after, Err(Error::Protocol(_))),
                    "an event after finish was not refused: {after:?}"
                );
                return Ok(());
            }
            Command::Sleep { until_ms, .. } => {
                let until = *until_ms;
                if u.ratio(1, 16)? {
                    Event::Cancel { now }
                } else {
                    now = match u.int_in_range(0..=9)? {
                        0 => time_after(u, now)?,
                        _ => until.max(now).saturating_add(u.int_in_range(0..=2_000)?),
                    };
                    Event::Timer { now }
                }
            }
            Command::Request { call, timeout_ms } => {
                check_request(kind, call, *timeout_ms, &plan.state_branch, &mut books);
                let honest = github.answer(&step.command, now).reply;
                let reply = if u.ratio(1, 2)? {
                    honest
                } else if u.ratio(1, 32)? {
                    // Any answer at all, of any kind.
                    u.choose(&[
                        Reply::NotModified { date: None },
                        Reply::Created { sha: "c".into() },
                        Reply::Written {
                            sha: "w".into(),
                            date: None,
                        },
                        honest.clone(),
                    ])?
                    .clone()
                } else {
                    reply_for(u, call, &honest, now)?
                };
                let mut reply = reply;
                one_content_per_sha(call, &mut reply, &mut books);
                record_reply(call, &reply, &mut books);
                now = time_after(u, now)?;
                let fits = fits(call, &reply) && now <= time::LATEST;
                match op.step(Event::Reply { now, reply }) {
                    Ok(next) => {
                        step = next;
                        continue;
                    }
                    Err(Error::Protocol(_)) if !fits => return Ok(()),
                    Err(e) => panic!("stepping failed with {e:?} on an answer that fits {call:?}"),
                }
            }
        };
        match op.step(event) {
            Ok(next) => step = next,
            Err(Error::Protocol(_)) if now > time::LATEST => return Ok(()),
            Err(e) => panic!("stepping failed on a timer or cancel: {e:?}"),
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
