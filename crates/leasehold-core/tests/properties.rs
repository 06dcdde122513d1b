//! Property tests: whatever the interleaving of clients and whatever faults GitHub throws in
//! (conflicts, 5xx, writes applied but answered with an error or a reset, stale reads), no
//! committed state admits more holders than capacity, and no fence is ever handed out twice.
//!
//! GitHub is `leasehold-github-model` (the contents API's compare-and-swap: a write carries the
//! sha it was planned on and is refused with 409 when the file moved; a write without a sha to
//! an existing file is 422), shared with the simulator; the faults are this test's, on top.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{entropy, raw_inputs};
use leasehold_core::{
    Call, Command, Event, LockState, Operation, OperationKind, Reply, ResultWord,
};
use leasehold_github_model::{file_reply, http, GitHub};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Fault {
    None,
    /// Another writer's commit won: 409, not applied.
    Conflict,
    /// 502 before anything was applied.
    ServerError,
    /// The write lands, then the answer is a 502.
    AppliedThen502,
    /// The write lands, then the connection resets.
    AppliedThenReset,
    /// The request never left.
    NotSent,
    /// A read answers with the version before the current one.
    StaleRead,
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        10 => Just(Fault::None),
        2 => Just(Fault::Conflict),
        1 => Just(Fault::ServerError),
        1 => Just(Fault::AppliedThen502),
        1 => Just(Fault::AppliedThenReset),
        1 => Just(Fault::NotSent),
        2 => Just(Fault::StaleRead),
    ]
}

/// The honest GitHub of `leasehold-github-model`, with this test's faults layered on top.
struct Store {
    github: GitHub,
}

const BRANCH: &str = "leasehold-state";
const STATE: &str = "locks/prop.json";

impl Store {
    fn new(config: Option<String>) -> Self {
        let mut github = GitHub::new("main");
        if let Some(text) = config {
            github.commit_file("main", "locks/prop.config.json", &text, 0);
        }
        Store { github }
    }

    /// Performs `command` at `now` with `fault`: the answer, and the text of the state version
    /// it committed, if any.
    fn perform(&mut self, command: &Command, fault: Fault, now: u64) -> (Reply, Option<String>) {
        let not_sent = || Reply::Transport {
            sent: false,
            message: "ECONNREFUSED".into(),
        };
        match command.call().expect("a request") {
            Call::ReadFile {
                path,
                git_ref,
                if_none_match,
                ..
            } => {
                match fault {
                    Fault::ServerError => return (http(502, "Server Error"), None),
                    Fault::NotSent => return (not_sent(), None),
                    Fault::StaleRead if !path.ends_with(".config.json") => {
                        // The version before the current one.
                        let history = self
                            .github
                            .history(git_ref.as_deref().unwrap_or("main"), path)
                            .unwrap_or_default();
                        if history.len() >= 2 {
                            let old = &history[history.len() - 2];
                            return (file_reply(old, if_none_match.as_deref(), now), None);
                        }
                    }
                    _ => {}
                }
                (self.github.answer(command, now).reply, None)
            }
            Call::WriteFile { .. } => {
                match fault {
                    Fault::Conflict => return (http(409, "is at x but expected y"), None),
                    Fault::ServerError => return (http(502, "Server Error"), None),
                    Fault::NotSent => return (not_sent(), None),
                    _ => {}
                }
                let answer = self.github.answer(command, now);
                let Some(c) = answer.committed else {
                    return (answer.reply, None);
                };
                let text = self.github.history(&c.branch, &c.path).unwrap_or_default()[c.index]
                    .text
                    .clone();
                assert_eq!((c.branch.as_str(), c.path.as_str()), (BRANCH, STATE));
                let reply = match fault {
                    Fault::AppliedThen502 => http(502, "Server Error"),
                    Fault::AppliedThenReset => Reply::Transport {
                        sent: true,
                        message: "ECONNRESET".into(),
                    },
                    _ => answer.reply,
                };
                (reply, Some(text))
            }
            Call::GetRunAttempt { .. } | Call::GetJob { .. } | Call::ListJobs { .. } => {
                unreachable!("no acquire here records its job id")
            }
            // Git data: no faults.
            _ => (self.github.answer(command, now).reply, None),
        }
    }
}

struct Client {
    id: usize,
    op: Operation,
    pending: Command,
    releasing: bool,
    done: bool,
    fence: Option<u64>,
}

fn inputs(id: usize, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    raw_inputs(
        &[
            ("lock", "prop"),
            ("GITHUB_REPOSITORY", "octo/app"),
            ("GITHUB_RUN_ID", &(100 + id).to_string()),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", "build"),
            ("RUNNER_NAME", &format!("runner-{id}")),
            ("poll-seconds", "1"),
            ("timeout-minutes", "5"),
        ],
        extra,
    )
}

fn start(kind: OperationKind, id: usize, now: u64, seed: u64) -> (Operation, Command) {
    let entropy = entropy(seed, &format!("{:016x}", (seed << 8) | id as u64));
    let (mut op, _) = Operation::new(kind, &inputs(id, &[]), &entropy).expect("valid inputs");
    let step = op.step(Event::Start { now }).expect("start");
    (op, step.command)
}

/// Runs `clients` acquire-then-release clients with the chosen interleaving and faults; checks
/// every committed version as it lands. Returns the number of clients that acquired.
fn run(
    capacity: u32,
    clients: usize,
    schedule: &[(usize, Fault)],
    seed: u64,
) -> Result<usize, TestCaseError> {
    let mut store = Store::new(Some(format!("{{\"capacity\": {capacity}}}")));
    let mut now = 1_800_000_000_000u64;
    let mut cs: Vec<Client> = (0..clients)
        .map(|id| {
            let (op, pending) = start(OperationKind::Acquire, id, now, seed + id as u64);
            Client {
                id,
                op,
                pending,
                releasing: false,
                done: false,
                fence: None,
            }
        })
        .collect();
    let mut fences_seen = BTreeSet::new();
    let mut last_fence = 0u64;
    let mut last_revision = 0u64;
    let mut acquired = 0;
    let mut schedule = schedule.iter().cycle();
    for _ in 0..20_000 {
        if cs.iter().all(|c| c.done) {
            break;
        }
        let &(pick, fault) = schedule.next().unwrap();
        let live: Vec<usize> = cs.iter().filter(|c| !c.done).map(|c| c.id).collect();
        let c = &mut cs[live[pick % live.len()]];
        now += 1;
        let event = match &c.pending {
            Command::Sleep { until_ms, .. } => {
                now = now.max(*until_ms);
                Event::Timer { now }
            }
            Command::Finish { .. } => unreachable!(),
            request => {
                let (reply, committed) = store.perform(request, fault, now);
                if let Some(text) = committed {
                    let st = LockState::parse(&text, "prop").map_err(|e| {
                        TestCaseError::fail(format!("committed an unreadable state: {e}"))
                    })?;
                    prop_assert!(
                        st.holders.len() <= capacity as usize,
                        "{} holders over capacity {capacity}",
                        st.holders.len()
                    );
                    prop_assert!(
                        st.revision > last_revision,
                        "revision went from {last_revision} to {}",
                        st.revision
                    );
                    prop_assert!(
                        st.fence >= last_fence,
                        "fence counter went back from {last_fence} to {}",
                        st.fence
                    );
                    for h in &st.holders {
                        if h.fence > last_fence {
                            prop_assert!(
                                fences_seen.insert(h.fence),
                                "fence {} handed out twice",
                                h.fence
                            );
                        }
                    }
                    last_fence = st.fence;
                    last_revision = st.revision;
                }
                Event::Reply { now, reply }
            }
        };
        let step =
            c.op.step(event)
                .map_err(|e| TestCaseError::fail(format!("protocol error: {e}")))?;
        c.pending = step.command;
        if let Command::Finish { outcome } = &c.pending {
            if c.releasing {
                prop_assert!(
                    matches!(
                        outcome.result,
                        ResultWord::Released | ResultWord::ReleaseUnrecorded
                    ),
                    "release of a holder ended {:?}",
                    outcome.result
                );
                c.done = true;
            } else if outcome.result == ResultWord::Acquired {
                acquired += 1;
                c.fence = outcome.fence;
                let (op, pending) = start(OperationKind::Release, c.id, now, seed ^ 0xfeed);
                c.op = op;
                c.pending = pending;
                c.releasing = true;
            } else {
                c.done = true;
            }
        }
    }
    // Fences held by clients that acquired are distinct.
    let held: Vec<u64> = cs.iter().filter_map(|c| c.fence).collect();
    let distinct: BTreeSet<u64> = held.iter().copied().collect();
    prop_assert_eq!(
        held.len(),
        distinct.len(),
        "two clients acquired with the same fence: {:?}",
        held
    );
    Ok(acquired)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn never_over_capacity_never_a_fence_twice(
        capacity in 1u32..=3,
        clients in 1usize..=6,
        schedule in proptest::collection::vec((0usize..6, fault()), 1..400),
        seed in any::<u32>(),
    ) {
        run(capacity, clients, &schedule, u64::from(seed))?;
    }
}

#[test]
fn without_faults_everyone_gets_a_turn() {
    let schedule: Vec<(usize, Fault)> = (0..7).map(|i| (i, Fault::None)).collect();
    let acquired = run(2, 6, &schedule, 42).unwrap();
    assert_eq!(acquired, 6);
}
