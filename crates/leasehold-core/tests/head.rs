//! acquire with `pull-request` and `expected-head-sha` against GitHub as
//! `leasehold-github-model` has it: a queued claim whose pull request is pushed to leaves the
//! queue `superseded` and the waiter behind it is admitted; a push between the last read and
//! the admitting write is caught by the read after admission; an unreadable head is
//! `unverified-head`; without the inputs no pull request is ever asked for.

use std::collections::BTreeMap;

use leasehold_core::{
    Call, Command, Entropy, Event, LockState, Operation, OperationKind, Outcome, ResultWord,
    SleepReason,
};
use leasehold_github_model::GitHub;

const T: u64 = 1_800_000_000_000;
const BRANCH: &str = "leasehold-state";
const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn inputs(run: u64, pr: Option<(u64, &str)>) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [
        ("lock", "deploy"),
        ("GITHUB_REPOSITORY", "octo/app"),
        ("GITHUB_RUN_ATTEMPT", "1"),
        ("GITHUB_JOB", "build"),
        ("timeout-minutes", "30"),
        ("poll-seconds", "5"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    m.insert("GITHUB_RUN_ID".into(), run.to_string());
    if let Some((n, sha)) = pr {
        m.insert("pull-request".into(), n.to_string());
        m.insert("expected-head-sha".into(), sha.into());
    }
    m
}

fn op(run: u64, pr: Option<(u64, &str)>) -> Operation {
    let entropy = Entropy {
        seed: run,
        nonce: format!("{run:016x}"),
    };
    Operation::new(OperationKind::Acquire, &inputs(run, pr), &entropy)
        .unwrap()
        .0
}

fn github() -> GitHub {
    let mut g = GitHub::new("main");
    g.add_branch(BRANCH);
    g.commit_file("main", "locks/deploy.config.json", "{\"capacity\":1}\n", T);
    g.set_pull("octo/app", 7, A, "open");
    g
}

/// One client: its operation, the command it waits on, and every request it sent.
struct Client {
    op: Operation,
    command: Command,
    sent: Vec<String>,
    outcome: Option<Outcome>,
}

impl Client {
    fn start(mut op: Operation, now: u64) -> Self {
        let command = op.step(Event::Start { now }).unwrap().command;
        Client {
            op,
            command,
            sent: Vec::new(),
            outcome: None,
        }
    }

    /// Performs the command waiting (a sleep ends at once: time is virtual); `before` runs
    /// just before a request reaches GitHub.
    fn turn(&mut self, g: &mut GitHub, now: &mut u64, before: &mut dyn FnMut(&Call, &mut GitHub)) {
        let event = match &self.command {
            Command::Finish { outcome } => {
                self.outcome = Some((**outcome).clone());
                return;
            }
            Command::Sleep { until_ms, .. } => {
                *now = (*now).max(*until_ms);
                Event::Timer { now: *now }
            }
            Command::Request { call, .. } => {
                self.sent.push(call.name().to_string());
                before(call, g);
                *now += 10;
                Event::Reply {
                    now: *now,
                    reply: g.answer(&self.command, *now).reply,
                }
            }
        };
        self.command = self.op.step(event).unwrap().command;
    }

    fn done(&self) -> bool {
        self.outcome.is_some()
    }
}

fn state(g: &GitHub) -> LockState {
    serde_json::from_str(&g.current(BRANCH, "locks/deploy.json").unwrap().text).unwrap()
}

fn holder_of(g: &GitHub) -> Vec<String> {
    state(g)
        .holders
        .iter()
        .map(|h| h.holder_id.clone())
        .collect()
}

/// Runs `first` to its holding, then `second` (queued behind) until `stop` says so.
fn until(
    c: &mut Client,
    g: &mut GitHub,
    now: &mut u64,
    bound: usize,
    mut hook: impl FnMut(&Call, &mut GitHub),
    stop: impl Fn(&Client, &GitHub) -> bool,
) {
    for _ in 0..bound {
        if matches!(c.command, Command::Finish { .. }) {
            c.turn(g, now, &mut hook);
        }
        if stop(c, g) || c.done() {
            break;
        }
        c.turn(g, now, &mut hook);
    }
}

/// Waiting in the queue for its next poll.
fn queued(c: &Client, _: &GitHub) -> bool {
    matches!(
        c.command,
        Command::Sleep {
            reason: SleepReason::Poll,
            ..
        }
    )
}

fn is_admitting_write(call: &Call, who: &str) -> bool {
    matches!(call, Call::WriteFile { content, .. }
        if serde_json::from_str::<LockState>(content).is_ok_and(|s| s.holders.iter().any(|h| h.holder_id.contains(who))))
}

#[test]
fn a_queued_claim_whose_pull_request_moves_on_leaves_and_the_waiter_behind_is_admitted() {
    let mut g = github();
    let mut now = T;
    // run 1 holds; run 2 (pull request #7 at A) queues; run 3 queues behind it.
    let mut one = Client::start(op(1, None), now);
    until(&mut one, &mut g, &mut now, 50, |_, _| {}, |c, _| c.done());
    assert_eq!(one.outcome.as_ref().unwrap().result, ResultWord::Acquired);
    let mut two = Client::start(op(2, Some((7, A))), now);
    until(&mut two, &mut g, &mut now, 50, |_, _| {}, queued);
    let mut three = Client::start(op(3, None), now);
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, queued);
    assert_eq!(state(&g).queue.len(), 2);
    assert!(
        !two.sent.contains(&"getPullRequest".to_string()),
        "no read before the first poll: {:?}",
        two.sent
    );
    // A push to #7: at its next poll, run 2 reads the head and leaves the queue.
    g.set_pull("octo/app", 7, B, "open");
    until(&mut two, &mut g, &mut now, 50, |_, _| {}, |_, _| false);
    let o = two.outcome.clone().unwrap();
    assert_eq!(o.result, ResultWord::Superseded, "{o:?}");
    assert!(!o.success);
    assert_eq!(o.error.as_ref().unwrap().code.as_str(), "head-moved");
    let s = state(&g);
    assert!(
        s.queue.iter().all(|q| !q.holder_id.contains(":2:")),
        "{:?}",
        s.queue
    );
    // The holder leaves; run 3 is admitted.
    let mut release = Client::start(
        Operation::new(
            OperationKind::Release,
            &inputs(1, None),
            &Entropy {
                seed: 9,
                nonce: "0000000000000009".into(),
            },
        )
        .unwrap()
        .0,
        now,
    );
    until(&mut release, &mut g, &mut now, 50, |_, _| {}, |_, _| false);
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, |_, _| false);
    assert_eq!(three.outcome.unwrap().result, ResultWord::Acquired);
    assert_eq!(holder_of(&g), vec!["octo/app:3:build".to_string()]);
}

#[test]
fn a_push_between_the_last_read_and_the_admitting_write_is_caught_after_admission() {
    // Its own admitting write: a free lock, so the first write admits run 2.
    let mut g = github();
    let mut now = T;
    let mut pushed = false;
    let mut two = Client::start(op(2, Some((7, A))), now);
    until(
        &mut two,
        &mut g,
        &mut now,
        80,
        |call, g| {
            if !pushed && is_admitting_write(call, ":2:") {
                g.set_pull("octo/app", 7, B, "open");
                pushed = true;
            }
        },
        |_, _| false,
    );
    assert!(pushed, "run 2 wrote its admission: {:?}", two.sent);
    let o = two.outcome.clone().unwrap();
    assert_eq!(o.result, ResultWord::Superseded, "{o:?}");
    // One read immediately before the admitting write, one after it.
    let w = two.sent.iter().position(|c| c == "writeFile").unwrap();
    assert_eq!(two.sent[w - 1], "getPullRequest", "{:?}", two.sent);
    assert_eq!(two.sent[w + 1], "getPullRequest", "{:?}", two.sent);
    assert!(holder_of(&g).is_empty(), "the holding was handed back");

    // Admitted by another's write (the holder's release admits the next in line).
    let mut g = github();
    let mut one = Client::start(op(1, None), now);
    until(&mut one, &mut g, &mut now, 50, |_, _| {}, |c, _| c.done());
    let mut two = Client::start(op(2, Some((7, A))), now);
    until(&mut two, &mut g, &mut now, 50, |_, _| {}, queued);
    let mut three = Client::start(op(3, None), now);
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, queued);
    let mut release = Client::start(
        Operation::new(
            OperationKind::Release,
            &inputs(1, None),
            &Entropy {
                seed: 9,
                nonce: "0000000000000009".into(),
            },
        )
        .unwrap()
        .0,
        now,
    );
    let mut pushed = false;
    until(
        &mut release,
        &mut g,
        &mut now,
        50,
        |call, g| {
            if !pushed && is_admitting_write(call, ":2:") {
                g.set_pull("octo/app", 7, B, "open");
                pushed = true;
            }
        },
        |_, _| false,
    );
    assert!(pushed, "the release admitted run 2");
    until(&mut two, &mut g, &mut now, 80, |_, _| {}, |_, _| false);
    assert_eq!(two.outcome.clone().unwrap().result, ResultWord::Superseded);
    assert_eq!(
        holder_of(&g),
        vec!["octo/app:3:build".to_string()],
        "run 2 handed its slot to run 3"
    );
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, |_, _| false);
    assert_eq!(three.outcome.unwrap().result, ResultWord::Acquired);
}

#[test]
fn an_unreadable_head_is_unverified_and_no_inputs_ask_nothing() {
    let mut g = github();
    let mut now = T;
    // #8 does not exist: before admission it cannot be verified.
    let mut two = Client::start(op(2, Some((8, A))), now);
    until(&mut two, &mut g, &mut now, 80, |_, _| {}, |_, _| false);
    let o = two.outcome.clone().unwrap();
    assert_eq!(o.result, ResultWord::UnverifiedHead, "{o:?}");
    assert!(
        g.current(BRANCH, "locks/deploy.json").is_none(),
        "nothing written"
    );
    // A claim without the inputs sends no pull-request request at all.
    let mut three = Client::start(op(3, None), now);
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, |_, _| false);
    assert_eq!(three.outcome.unwrap().result, ResultWord::Acquired);
    assert!(
        !three.sent.iter().any(|c| c == "getPullRequest"),
        "{:?}",
        three.sent
    );
    // A closed pull request is superseded, as is a current one that then closes.
    g.set_pull("octo/app", 9, A, "closed");
    let mut four = Client::start(op(4, Some((9, A))), now);
    until(&mut four, &mut g, &mut now, 80, |_, _| {}, |_, _| false);
    assert_eq!(four.outcome.unwrap().result, ResultWord::Superseded);
}

#[test]
fn the_inputs_come_in_pairs() {
    let entropy = Entropy {
        seed: 1,
        nonce: "0000000000000001".into(),
    };
    let mut only_number = inputs(1, None);
    only_number.insert("pull-request".into(), "7".into());
    let err = Operation::new(OperationKind::Acquire, &only_number, &entropy)
        .err()
        .unwrap();
    assert!(err.to_string().contains("expected-head-sha"), "{err}");
    let mut bad_sha = inputs(1, Some((7, "abc")));
    bad_sha.insert("expected-head-sha".into(), "abc".into());
    assert!(Operation::new(OperationKind::Acquire, &bad_sha, &entropy).is_err());
}

/// A head read current while planning on one version is not fresh for another: a queued claim's
/// poll reads the head current, plans a write that does not admit it (an expired holding removed,
/// the waiter ahead admitted), and that write conflicts. The version read after it admits this
/// claim, so the head is read again before the admitting write: a push since would otherwise be
/// caught only after admission, the slot held a moment by a claim that must leave.
#[test]
fn a_conflicted_write_makes_the_head_read_before_it_stale_for_the_admitting_write() {
    let mut g = github();
    let mut now = T;
    let mut extra = inputs(1, None);
    extra.insert("lease-minutes".into(), "1".into());
    let entropy = Entropy {
        seed: 1,
        nonce: format!("{:016x}", 1),
    };
    let mut one = Client::start(
        Operation::new(OperationKind::Acquire, &extra, &entropy)
            .unwrap()
            .0,
        now,
    );
    until(&mut one, &mut g, &mut now, 50, |_, _| {}, |c, _| c.done());
    assert_eq!(one.outcome.clone().unwrap().result, ResultWord::Acquired);
    let mut three = Client::start(op(3, None), now);
    until(&mut three, &mut g, &mut now, 50, |_, _| {}, queued);
    let mut two = Client::start(op(2, Some((7, A))), now);
    until(&mut two, &mut g, &mut now, 50, |_, _| {}, queued);
    assert_eq!(
        state(&g)
            .queue
            .iter()
            .map(|q| q.holder_id.as_str())
            .collect::<Vec<_>>(),
        ["octo/app:3:build", "octo/app:2:build"]
    );
    // Past run 1's lease (a minute, with grace and skew).
    now += 20 * 60_000;
    let at = now;
    two.sent.clear();
    let mut interfered = false;
    until(
        &mut two,
        &mut g,
        &mut now,
        80,
        |call, g| {
            // Run 2's write removing run 1 and admitting run 3: before it lands, run 3 came and
            // went and run 1 was removed by others, so it conflicts.
            if !interfered && is_admitting_write(call, ":3:") {
                let mut s = state(g);
                s.holders.clear();
                s.queue.retain(|q| q.holder_id.contains(":2:"));
                s.revision += 1;
                g.commit_file(
                    BRANCH,
                    "locks/deploy.json",
                    &serde_json::to_string(&s).unwrap(),
                    at,
                );
                interfered = true;
            }
        },
        |c, g| c.done() || holder_of(g).iter().any(|h| h.contains(":2:")),
    );
    assert!(
        interfered,
        "run 2 planned the write admitting run 3: {:?}",
        two.sent
    );
    let admitted = holder_of(&g).iter().any(|h| h.contains(":2:"));
    assert!(admitted, "{:?}", two.sent);
    // From the conflicted write on: a read, then the head, then the admitting write.
    let conflicted = two.sent.iter().position(|c| c == "writeFile").unwrap();
    let rest = &two.sent[conflicted + 1..];
    let admitting = rest.iter().position(|c| c == "writeFile").unwrap();
    assert!(
        rest[..admitting].iter().any(|c| c == "getPullRequest"),
        "the head is read again on the version that admits: {:?}",
        two.sent
    );
}
