//! The invariant checker. It keeps its own books, fed by the world as things happen
//! ([`Feed`]): every attempt's identity (its holder id, nonce, clock and kill grace) when it
//! starts, GitHub's view of it whenever that changes, every committed version of the state file
//! (its document, sha and the write that made it), every write a core sent (its base sha) and
//! what its driver told the core about it, the versions each operation was shown, what each
//! operation finished with, what each job believes it holds (from acquire's outcome and from the
//! leases its guard machine took in as proven, until a renewal proves the holding lost or the
//! step ends), its work starting and stopping, pauses, zombies, crashes, what the Actions API told
//! each reaper, the reaper's ticks and the end of the seed. From those alone it checks the
//! invariants (documented in the crate docs, `lib.rs`) and answers each feed with the breach it
//! finds, if any; it reads nothing of the world, the clients or the store.

use std::collections::{BTreeMap, VecDeque};

use leasehold_core::time::Millis;
use leasehold_core::{
    Holder, LeasePolicy, LeaseView, LockState, OperationKind, Outcome, RemovalReason, ResultWord,
    RunIdentity,
};
use leasehold_github_model::Timing;

use crate::types::{
    fmt_t, Breach, ClientId, Fed, Invariant, Stage, Told, VersionId, Work, WriteId,
};
use crate::world::Clock;

/// Invariant 8: at most this many requests by one job attempt in any window of
/// [`RATE_WINDOW_MS`]. Legitimate bursts stay far below it: the quickest polls are those of a
/// waiter next in line whose admission is due, `limits::HANDOFF_POLL_MS` (500 ms) apart, 120
/// a minute (`policy/handoff.rs`); writes are at least 1 s apart, backoffs at least 500 ms, stale
/// re-reads 2 s, and a re-read after a conflict (after a full-jitter backoff,
/// `limits::CONFLICT_BACKOFF_MS` doubling per conflict in a row, or at once on a carried
/// version) follows a write, so a conflict loop is held to the write spacing. The planted
/// `poll-hot-loop` (polls 50 ms apart) is caught by it.
pub const RATE_LIMIT_REQUESTS: usize = 150;
pub const RATE_WINDOW_MS: Millis = 60_000;
/// An answer processed this long after GitHub sent it was held up in a paused process (no
/// request takes this long): named in a violation, to explain it.
pub const LATE_ANSWER_MS: Millis = 20_000;

/// What the checker knows before the seed runs.
#[derive(Clone, Debug)]
pub struct Setup {
    pub lock: String,
    /// The capacity in force (assumed fixed for the seed).
    pub capacity: u32,
    /// The lock's lease policy (the unconfigured one when its config sets none).
    pub policy: LeasePolicy,
    /// With a reaper: how long a claim whose attempt GitHub completed may stay, from the instant
    /// it could be reaped.
    pub reaper_bound_ms: Option<Millis>,
    /// The real instant faults stop.
    pub faults_stop: Millis,
    /// The liveness bound, ms after the seed's start (named in a violation).
    pub bound_ms: Millis,
    /// The state the history starts from (the empty state before the file exists).
    pub initial: LockState,
    /// A pool seed's pool, for invariants 17 to 21 (FIFO, 7, is then the pool's own rule).
    pub pool: Option<crate::pool::PoolBooks>,
    /// A lifecycle seed: invariants 22 to 26, and schema 2 allowed.
    pub lifecycle: bool,
    /// In a lifecycle seed, the holder ids whose release reports a confirmed cleanup (what the
    /// checker reads a release's verdict by: any other report, an expiry, the post step's
    /// cleanup leave a quarantine).
    pub confirmed: Vec<String>,
    /// In a lifecycle seed, its `cooldownSeconds`, in ms.
    pub cooldown_ms: Millis,
}

/// One event the checker is fed. Clients are named by their index, in the order they were made
/// (every one is announced by [`Feed::AttemptStarted`] first); writes by the order they were
/// first sent; versions by their place in the history.
#[derive(Clone, Debug)]
pub enum Feed<'a> {
    /// A job attempt (or a reaper run) exists: its identity, its clock, its guard's kill grace.
    AttemptStarted {
        client: ClientId,
        run_id: u64,
        attempt: u32,
        holder_id: &'a str,
        nonce: &'a str,
        reaper: bool,
        /// A simulated operator's run (`recover`, `recover-incident`), and what it was told.
        operator: Option<&'a crate::lifecycle::OperatorAct>,
        clock: Clock,
        kill_grace_ms: Millis,
    },
    /// GitHub's view of a job attempt (its job and run attempt) is now this.
    GitHubView {
        client: ClientId,
        timing: &'a Timing,
    },
    /// A version of the state file was there before the seed began (committed by nobody).
    StartVersion {
        state: &'a Result<LockState, String>,
        sha: &'a str,
    },
    /// A client's operation starts (for a job, a step starts with it, except a renewal).
    OperationStarted {
        client: ClientId,
        kind: OperationKind,
    },
    /// An acquired job's guarded work step starts (its guard machine is made).
    GuardStarted { client: ClientId },
    /// A request leaves the client (`what` names it: "GET state", "PUT state", …).
    RequestSent {
        client: ClientId,
        what: &'static str,
    },
    /// A core's state write is sent for the first time: its content and the sha it is planned
    /// on (none: a create).
    WriteSent {
        client: ClientId,
        write: WriteId,
        base: Option<&'a str>,
        content: &'a str,
    },
    /// GitHub committed a version of the state file (by this write, if a client's).
    Committed {
        version: VersionId,
        state: &'a Result<LockState, String>,
        sha: &'a str,
        write: Option<WriteId>,
    },
    /// An answer (or the client's own time limit) is fed to the client's core: when GitHub
    /// answered it, whether it carried a `date`, whether it is a transport failure.
    Answered {
        client: ClientId,
        answered_at: Millis,
        dated: bool,
        transport: bool,
    },
    /// A read answer fed to the client's core served this version (`file`: a 200, not a 304).
    Shown {
        client: ClientId,
        version: VersionId,
        file: bool,
    },
    /// What the driver told the core about its write.
    WriteTold { write: WriteId, fed: Fed },
    /// Acquire finished `acquired`: the job believes it holds, under this lease.
    Acquired {
        client: ClientId,
        fence: u64,
        nonce: &'a str,
        lease: &'a LeaseView,
    },
    /// The guard machine took in a newly proven lease (the verification's, or a renewal's):
    /// the belief lasts until its local deadline.
    Proven {
        client: ClientId,
        local_deadline: Millis,
        from: String,
    },
    /// A renewal proved the holding lost, and the job took it in: the belief ends.
    BeliefLost { client: ClientId },
    /// A renewal (the guard's verification included) finished.
    RenewalEnded {
        client: ClientId,
        outcome: &'a Outcome,
    },
    /// A release or a cleanup finished with this result.
    ReleaseEnded {
        client: ClientId,
        kind: OperationKind,
        result: ResultWord,
    },
    /// The guard started the work.
    WorkStarted { client: ClientId },
    /// The work has exited.
    WorkGone { client: ClientId },
    /// The guarded work step is over (the release step is next).
    WorkStepEnded { client: ClientId },
    /// The client's process is paused from now until `until`.
    Paused { client: ClientId, until: Millis },
    /// GitHub declared the attempt lost while its process is alive: a zombie from now on.
    Zombie { client: ClientId },
    /// The client's process was killed (no release, no post step).
    Crashed { client: ClientId },
    /// The client is over (its last step finished, or it crashed).
    Ended { client: ClientId },
    /// The Actions API told a reaper's operation this.
    ReaperTold { client: ClientId, told: Told },
    /// The reaper's schedule fired.
    ReaperTick,
    /// The seed is over: `unsettled`, the next event's time when the bound passed first;
    /// `rerun_owed`, a run still owed a rerun.
    EndOfSeed {
        unsettled: Option<Millis>,
        rerun_owed: Option<u64>,
    },
}

/// What the checker counts for the report: what reaps removed and renewed, expiries, and how
/// long claims of completed attempts stayed.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub removed_holdings: BTreeMap<String, u64>,
    pub removed_queue: BTreeMap<String, u64>,
    pub renewed: u64,
    pub renewed_outdated: u64,
    pub acquire_expired: u64,
    pub expiry_min_margin_ms: Option<u64>,
    pub expiry_max_slack_ms: u64,
    pub reapable_removed: u64,
    pub max_reap_wait_permille: u64,
    /// What the lifecycle's checks saw (invariants 22 to 26).
    pub lifecycle: crate::report::LifecycleCounters,
}

/// One committed version, as the checker was told it.
struct Version {
    state: Result<LockState, String>,
    sha: String,
    /// The write that produced it; `None` for the version the seed started with.
    write: Option<WriteId>,
}

/// A write, as the checker was told it.
struct WriteBook {
    client: ClientId,
    /// Versions it produced.
    applied: Vec<VersionId>,
    fed: Option<Fed>,
    /// When it was first sent.
    sent_at: Millis,
    /// The step of its client's attempt that sent it. A write may commit after that step ended
    /// (an acquire killed with its write in flight): what the write is, is the sender's.
    stage: Stage,
    /// When its operation was last fed an answer with a `date` before it planned this write
    /// (its estimate of GitHub's clock dates from then).
    dated_at: Option<Millis>,
    /// Its operation had sent a config read before it (invariant 29).
    config_asked: bool,
}

/// An attempt, as the checker was told it.
struct Attempt {
    run_id: u64,
    attempt: u32,
    holder_id: String,
    nonce: String,
    reaper: bool,
    /// An operator's run (`recover`, `recover-incident`), not a job's: what it was told.
    operator: Option<crate::lifecycle::OperatorAct>,
    clock: Clock,
    kill_grace_ms: Millis,
    stage: Stage,
    zombie_since: Option<Millis>,
    /// GitHub's view of it (jobs only).
    gh: Option<Timing>,
    /// Every pause of its process: (from, until).
    pauses: Vec<(Millis, Millis)>,
    /// When a claim with its nonce last appeared in the committed state.
    entry_since: Millis,
    /// The fence it believes it holds, until the real instant of its last proven lease's local
    /// deadline (`belief_until`), proven by `belief_from`.
    holding: Option<u64>,
    belief_until: Option<Millis>,
    belief_from: String,
    /// How old the answer it acquired (or last proved a lease) on was, when older than
    /// [`LATE_ANSWER_MS`].
    acquired_late: Option<Millis>,
    work: Work,
    /// Send times of its last requests (invariant 8).
    recent_sends: VecDeque<(Millis, &'static str)>,
    // What its current operation has been told.
    /// The newest version it was shown (a read's, or its own write's).
    seen_version: Option<VersionId>,
    /// The age of the last answer, when older than [`LATE_ANSWER_MS`].
    stale_answer_ms: Option<Millis>,
    /// A release or cleanup read a version in which an earlier run attempt held or waited
    /// under this holder id.
    read_predecessor: bool,
    last_dated_at: Option<Millis>,
    /// The last write sent: its content, and the `last_dated_at` when it was planned.
    last_write: Option<(String, Option<Millis>)>,
    /// What the Actions API told this operation (reapers).
    told: Vec<Told>,
    /// Its current operation has sent a config read (invariant 29).
    config_asked: bool,
}

/// What a commit's removal checks leave for the caller to record.
#[derive(Default)]
struct CommitEffects {
    /// Clients whose claim appeared in this version.
    appeared: Vec<usize>,
    removed_holdings: Vec<String>,
    removed_queue: Vec<String>,
    renewed: u64,
    renewed_outdated: u64,
    acquire_expired: u64,
    /// For each claim of a completed attempt that left the lock after it could be reaped: how
    /// long it stayed from then, in thousandths of the reaper's bound.
    reapable: Vec<u64>,
    /// For each expiry: how long after its lease could be taken it committed, and the drift
    /// slack allowed.
    expiries: Vec<(Millis, Millis)>,
}

/// Every claim (holder id, nonce) in a state, holding or waiting.
fn claims(st: &LockState) -> Vec<(&str, &str)> {
    st.holders
        .iter()
        .map(|h| (h.holder_id.as_str(), h.nonce.as_str()))
        .chain(
            st.queue
                .iter()
                .map(|q| (q.holder_id.as_str(), q.nonce.as_str())),
        )
        .collect()
}

fn short(holder_id: &str) -> &str {
    holder_id.rsplit(':').nth(1).unwrap_or(holder_id)
}

fn holders(st: &LockState) -> String {
    let h: Vec<String> = st
        .holders
        .iter()
        .map(|h| format!("{}#{}/f{}", short(&h.holder_id), h.run.run_attempt, h.fence))
        .collect();
    let q: Vec<String> = st
        .queue
        .iter()
        .map(|q| format!("{}#{}", short(&q.holder_id), q.run.run_attempt))
        .collect();
    format!("holders [{}] queue [{}]", h.join(" "), q.join(" "))
}

/// The checker of one seed.
pub struct Checker {
    setup: Setup,
    now: Millis,
    history: Vec<Version>,
    writes: Vec<WriteBook>,
    attempts: Vec<Attempt>,
    /// The highest fence ever handed out.
    max_fence: u64,
    pub tally: Tally,
}

impl Checker {
    pub fn new(setup: Setup) -> Self {
        Checker {
            max_fence: setup.initial.fence,
            setup,
            now: 0,
            history: Vec::new(),
            writes: Vec::new(),
            attempts: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Takes in one event at real time `now`; returns the first breach it finds.
    pub fn feed(&mut self, now: Millis, feed: Feed<'_>) -> Option<Breach> {
        self.now = now;
        match feed {
            Feed::AttemptStarted {
                client,
                run_id,
                attempt,
                holder_id,
                nonce,
                reaper,
                operator,
                clock,
                kill_grace_ms,
            } => {
                assert_eq!(
                    client,
                    self.attempts.len(),
                    "attempts are announced in order"
                );
                self.attempts.push(Attempt {
                    run_id,
                    attempt,
                    holder_id: holder_id.into(),
                    nonce: nonce.into(),
                    reaper,
                    operator: operator.cloned(),
                    clock,
                    kill_grace_ms,
                    stage: Stage::NotStarted,
                    zombie_since: None,
                    gh: None,
                    pauses: Vec::new(),
                    entry_since: 0,
                    holding: None,
                    belief_until: None,
                    belief_from: String::new(),
                    acquired_late: None,
                    work: Work::NotStarted,
                    recent_sends: VecDeque::new(),
                    seen_version: None,
                    stale_answer_ms: None,
                    read_predecessor: false,
                    last_dated_at: None,
                    last_write: None,
                    told: Vec::new(),
                    config_asked: false,
                });
                None
            }
            Feed::GitHubView { client, timing } => {
                self.attempts[client].gh = Some(timing.clone());
                None
            }
            Feed::StartVersion { state, sha } => {
                self.history.push(Version {
                    state: state.clone(),
                    sha: sha.into(),
                    write: None,
                });
                None
            }
            Feed::OperationStarted { client, kind } => {
                let a = &mut self.attempts[client];
                a.seen_version = None;
                a.stale_answer_ms = None;
                a.read_predecessor = false;
                a.config_asked = false;
                a.last_dated_at = None;
                a.last_write = None;
                a.told.clear();
                a.stage = match kind {
                    OperationKind::Acquire => Stage::Acquire,
                    OperationKind::Release => Stage::Release,
                    OperationKind::Cleanup => Stage::Cleanup,
                    OperationKind::Reap | OperationKind::ReportUsage | OperationKind::Recover => {
                        Stage::Reap
                    }
                    OperationKind::Renew | OperationKind::Status => Stage::Hold,
                    // Claims are not simulated yet: no client starts one.
                    _ => Stage::Hold,
                };
                if matches!(
                    kind,
                    OperationKind::Acquire | OperationKind::Release | OperationKind::Cleanup
                ) {
                    // A new step: the work step's belief and work are over.
                    a.holding = None;
                    a.belief_until = None;
                    a.work = Work::NotStarted;
                }
                None
            }
            Feed::GuardStarted { client } => {
                let a = &mut self.attempts[client];
                a.stage = Stage::Hold;
                a.work = Work::NotStarted;
                None
            }
            Feed::RequestSent { client, what } => {
                if what == "GET config" {
                    self.attempts[client].config_asked = true;
                }
                self.check_rate(client, what)
            }
            Feed::WriteSent {
                client,
                write,
                base,
                content,
            } => {
                assert_eq!(write, self.writes.len(), "writes are announced in order");
                // The clock estimate the write was planned with dates from the last answer with
                // a `date` before it was planned: before this send, or, for a write repeated as
                // is (after a rate limit), before its first send.
                let a = &mut self.attempts[client];
                let dated_at = match &a.last_write {
                    Some((last, at)) if last == content => *at,
                    _ => a.last_dated_at,
                };
                a.last_write = Some((content.to_string(), dated_at));
                let (stage, config_asked) = (a.stage, a.config_asked);
                self.writes.push(WriteBook {
                    client,
                    applied: Vec::new(),
                    fed: None,
                    sent_at: now,
                    stage,
                    dated_at,
                    config_asked,
                });
                self.check_write_base(client, base)
            }
            Feed::Committed {
                version,
                state,
                sha,
                write,
            } => {
                assert_eq!(
                    version,
                    self.history.len(),
                    "versions are committed in order"
                );
                self.history.push(Version {
                    state: state.clone(),
                    sha: sha.into(),
                    write,
                });
                if let Some(w) = write {
                    self.writes[w].applied.push(version);
                }
                self.on_commit(version)
            }
            Feed::Answered {
                client,
                answered_at,
                dated,
                transport,
            } => {
                let a = &mut self.attempts[client];
                if dated {
                    a.last_dated_at = Some(now);
                }
                let age = now - answered_at;
                a.stale_answer_ms = (age > LATE_ANSWER_MS && !transport).then_some(age);
                None
            }
            Feed::Shown {
                client,
                version,
                file,
            } => {
                let a = &self.attempts[client];
                let earlier =
                    file && matches!(a.stage, Stage::Release | Stage::Cleanup)
                        && self.history[version].state.as_ref().is_ok_and(|st| {
                            st.holders.iter().any(|h| {
                                h.holder_id == a.holder_id && h.run.run_attempt < a.attempt
                            }) || st.queue.iter().any(|q| {
                                q.holder_id == a.holder_id && q.run.run_attempt < a.attempt
                            })
                        });
                let a = &mut self.attempts[client];
                a.read_predecessor |= earlier;
                a.seen_version = Some(a.seen_version.map_or(version, |s| s.max(version)));
                None
            }
            Feed::WriteTold { write, fed } => {
                let rec = &mut self.writes[write];
                let shown = match &fed {
                    Fed::Success(_) => rec.applied.first().copied(),
                    _ => None,
                };
                rec.fed = Some(fed);
                let breach = self.check_write_view(write);
                if let Some(v) = shown {
                    let a = &mut self.attempts[self.writes[write].client];
                    a.seen_version = Some(a.seen_version.map_or(v, |s| s.max(v)));
                }
                breach
            }
            Feed::Acquired {
                client,
                fence,
                nonce,
                lease,
            } => {
                let until = self.attempts[client].clock.real_of(lease.local_deadline);
                // Acquired with the deadline already past (a pause longer than the lease
                // between the write and its answer): no work under this lease, nothing to hold.
                let breach = (until > now)
                    .then(|| self.check_acquired(client, fence, nonce))
                    .flatten();
                let a = &mut self.attempts[client];
                a.holding = Some(fence);
                a.belief_until = Some(until);
                a.belief_from = "acquire".into();
                a.acquired_late = a.stale_answer_ms;
                breach
            }
            Feed::Proven {
                client,
                local_deadline,
                from,
            } => {
                let a = &mut self.attempts[client];
                a.belief_until = Some(a.clock.real_of(local_deadline));
                a.belief_from = from;
                a.acquired_late = a.stale_answer_ms;
                None
            }
            Feed::BeliefLost { client } => {
                self.attempts[client].holding = None;
                None
            }
            Feed::RenewalEnded { client, outcome } => match outcome.result {
                ResultWord::Renewed => self.check_renewed(client, outcome),
                ResultWord::Lost => self.check_lost(client),
                _ => None,
            },
            Feed::ReleaseEnded {
                client,
                kind,
                result,
            } => {
                // The cleanup's noop is not confirmed by a write (best effort): only release's
                // noop is held to the history.
                let held = match kind {
                    OperationKind::Release => matches!(
                        result,
                        ResultWord::Released | ResultWord::QueueCleaned | ResultWord::Noop
                    ),
                    _ => matches!(result, ResultWord::Released | ResultWord::QueueCleaned),
                };
                held.then(|| self.check_released(client, result)).flatten()
            }
            Feed::WorkStarted { client } => {
                self.attempts[client].work = Work::Running;
                None
            }
            Feed::WorkGone { client } => {
                let breach = self.check_work_stop(client);
                self.attempts[client].work = Work::Gone;
                breach
            }
            Feed::WorkStepEnded { client } => self.check_work_stop(client),
            Feed::Paused { client, until } => {
                self.attempts[client].pauses.push((now, until));
                None
            }
            Feed::Zombie { client } => {
                self.attempts[client].zombie_since = Some(now);
                None
            }
            Feed::Crashed { client } => {
                // SIGKILL: the work stops with the job.
                let breach = (self.attempts[client].stage == Stage::Hold)
                    .then(|| self.check_work_stop(client))
                    .flatten();
                let a = &mut self.attempts[client];
                a.holding = None;
                a.work = Work::Gone;
                breach
            }
            Feed::Ended { client } => {
                self.attempts[client].stage = Stage::Done;
                None
            }
            Feed::ReaperTold { client, told } => {
                self.attempts[client].told.push(told);
                None
            }
            Feed::ReaperTick => {
                // 6: no claim of a completed attempt is left past the reaper's bound.
                let st = self.committed()?.clone();
                self.overdue_claim(&st, &[])
                    .map(|message| (Invariant::Liveness, message))
            }
            Feed::EndOfSeed {
                unsettled,
                rerun_owed,
            } => self.final_checks(unsettled, rerun_owed),
        }
    }

    /// The state committed right now (the initial state before the file exists).
    fn committed(&self) -> Option<&LockState> {
        match self.history.last() {
            None => Some(&self.setup.initial),
            Some(v) => v.state.as_ref().ok(),
        }
    }

    /// How the trace names client `c`.
    fn who(&self, c: ClientId) -> String {
        let a = &self.attempts[c];
        let zombie = if a.zombie_since.is_some() {
            " zombie"
        } else {
            ""
        };
        format!("c{c}({}#{}{zombie})", a.run_id, a.attempt)
    }

    /// GitHub's view of job client `c`'s attempt.
    fn gh(&self, c: ClientId) -> &Timing {
        self.attempts[c]
            .gh
            .as_ref()
            .expect("every job attempt is in the Actions view")
    }

    /// The client that made the claim (holder id, nonce), if a simulated one did.
    fn owner(&self, holder_id: &str, nonce: &str) -> Option<ClientId> {
        self.attempts
            .iter()
            .position(|a| a.nonce == nonce && a.holder_id == holder_id)
    }

    /// The last answer reaper `rc` was fed about this entry's attempt (or job): the key the
    /// core asks by (`EvidenceKey::of`).
    fn told(&self, rc: ClientId, run: &RunIdentity) -> Option<&Told> {
        self.attempts[rc]
            .told
            .iter()
            .rev()
            .find(|t| match run.job_id {
                Some(job) => t.job_id == Some(job),
                None => {
                    t.job_id.is_none() && t.run_id == run.run_id && t.attempt == run.run_attempt
                }
            })
    }

    /// Invariants 0, 1, 2, 7 on the transition into version `v`, and 5 for every believer.
    fn on_commit(&mut self, v: VersionId) -> Option<Breach> {
        let state = match &self.history[v].state {
            Ok(s) => s,
            Err(e) => {
                let message = format!("version {v} is not a lock state: {e}");
                return Some((Invariant::Structure, message));
            }
        };
        let prev = match v.checked_sub(1) {
            Some(p) => match &self.history[p].state {
                Ok(s) => s,
                Err(_) => return None,
            },
            None => &self.setup.initial,
        };
        let mut problems: Vec<(Invariant, String)> = Vec::new();

        // 0. Structure.
        // A lifecycle seed's state moves to schema 2 once, and never back.
        let schema_ok = state.schema == leasehold_core::SCHEMA
            || (self.setup.lifecycle
                && state.schema == leasehold_core::lifecycle::LIFECYCLE_SCHEMA);
        if !schema_ok || state.schema < prev.schema || state.lock != self.setup.lock {
            problems.push((
                Invariant::Structure,
                format!(
                    "version {v} has schema {} lock {:?}",
                    state.schema, state.lock
                ),
            ));
        }
        if state.revision != prev.revision + 1 {
            problems.push((
                Invariant::Structure,
                format!(
                    "version {v} has revision {} but replaced revision {} (a lost update)",
                    state.revision, prev.revision
                ),
            ));
        }
        let mut ids: Vec<&str> = state
            .holders
            .iter()
            .map(|h| h.holder_id.as_str())
            .chain(state.queue.iter().map(|q| q.holder_id.as_str()))
            .collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            problems.push((
                Invariant::Structure,
                format!("version {v}: holder id {} appears twice", short(w[0])),
            ));
        }

        // 1. Capacity.
        if state.holders.len() > self.setup.capacity as usize {
            problems.push((
                Invariant::Capacity,
                format!(
                    "version {v} has {} holders, capacity {}: {}",
                    state.holders.len(),
                    self.setup.capacity,
                    holders(state)
                ),
            ));
        }

        // 2. Fences: a holding keeps its fence while the same claim (nonce) holds it; every
        //    grant, an admission or a takeover by another claim under the same holder id (a
        //    later run attempt adopting it), gets a fence above every fence ever handed out, in
        //    order; the counter never goes back.
        let mut admitted: Vec<&Holder> = Vec::new();
        let mut granted: Vec<(&Holder, &str)> = Vec::new();
        for h in &state.holders {
            match prev.holder(&h.holder_id) {
                Some(p) if p.nonce == h.nonce => {
                    if p.fence != h.fence {
                        problems.push((
                            Invariant::Fences,
                            format!(
                                "version {v}: {} held fence {} and now {}",
                                short(&h.holder_id),
                                p.fence,
                                h.fence
                            ),
                        ));
                    }
                }
                Some(_) => granted.push((h, "taken over")),
                None => {
                    admitted.push(h);
                    granted.push((h, "admitted"));
                }
            }
        }
        let mut max = self.max_fence;
        for (h, how) in &granted {
            if h.fence <= max {
                problems.push((
                    Invariant::Fences,
                    format!("version {v}: {} {how} with fence {}, not above the last fence handed out ({max})", short(&h.holder_id), h.fence),
                ));
            }
            max = max.max(h.fence);
        }
        if state.fence < max || state.fence < prev.fence {
            problems.push((
                Invariant::Fences,
                format!(
                    "version {v}: fence counter {} below {} (or below the previous {})",
                    state.fence, max, prev.fence
                ),
            ));
        }

        // 7. FIFO: rank every entry by its place in the previous queue (new entries after all of
        //    them, in the order they appear); no one admitted may rank after one still waiting,
        //    and the waiting keep their order.
        let rank = |id: &str, fresh: &mut Vec<String>| -> usize {
            if let Some(i) = prev.queue_index(id) {
                return i;
            }
            if let Some(j) = fresh.iter().position(|f| f == id) {
                return prev.queue.len() + j;
            }
            fresh.push(id.to_string());
            prev.queue.len() + fresh.len() - 1
        };
        // A waiter that reclaims a quarantine left on its own runner goes first by design: it
        // is not a FIFO admission (invariant 24 holds it to its runner).
        // So may one in the slot a holding leaves in this very write without a confirmed
        // cleanup (its quarantine is made and reclaimed at once).
        let mut quarantines: Vec<&str> = prev
            .reservations
            .iter()
            .filter(|r| {
                r.kind == leasehold_core::lifecycle::ReservationKind::Quarantine
                    && !state.reservations.iter().any(|s| s.id == r.id)
            })
            .map(|r| r.run.runner_name.as_str())
            .collect();
        if self.setup.lifecycle {
            let writer = self.history[v]
                .write
                .map(|w| (&self.attempts[self.writes[w].client], self.writes[w].stage));
            quarantines.extend(
                prev.holders
                    .iter()
                    .filter(|h| !state.holders.iter().any(|s| s.holder_id == h.holder_id))
                    .filter(|h| {
                        let own_release = writer.is_some_and(|(a, stage)| {
                            a.holder_id == h.holder_id && stage == Stage::Release
                        });
                        !(own_release && self.setup.confirmed.contains(&h.holder_id))
                    })
                    .map(|h| h.run.runner_name.as_str()),
            );
        }
        admitted.retain(|h| {
            match quarantines
                .iter()
                .position(|r| !r.is_empty() && *r == h.run.runner_name)
            {
                Some(i) => {
                    quarantines.remove(i);
                    false
                }
                None => true,
            }
        });
        let mut fresh = Vec::new();
        let admitted_ranks: Vec<(usize, &str)> = admitted
            .iter()
            .map(|h| (rank(&h.holder_id, &mut fresh), h.holder_id.as_str()))
            .collect();
        let waiting_ranks: Vec<(usize, &str)> = state
            .queue
            .iter()
            .map(|q| (rank(&q.holder_id, &mut fresh), q.holder_id.as_str()))
            .collect();
        if let (Some((ra, a)), None) = (admitted_ranks.iter().max(), &self.setup.pool) {
            if let Some((rw, w)) = waiting_ranks.iter().find(|(rw, _)| rw < ra) {
                problems.push((
                    Invariant::Fifo,
                    format!("version {v}: {} (queue place {ra}) admitted ahead of {} (queue place {rw}), still waiting", short(a), short(w)),
                ));
            }
        }
        if waiting_ranks.windows(2).any(|p| p[0].0 > p[1].0) {
            problems.push((
                Invariant::Fifo,
                format!("version {v}: the queue was reordered: {}", holders(state)),
            ));
        }

        // 17 to 21: a pool's own rules (crate::pool).
        if let Some(mut pool) = self.setup.pool.take() {
            let (attempts, now) = (&self.attempts, self.now);
            let live = |holder_id: &str, nonce: &str| {
                attempts.iter().any(|a| {
                    a.holder_id == holder_id
                        && a.nonce == nonce
                        && a.stage == Stage::Acquire
                        && a.zombie_since.is_none()
                        && !a
                            .pauses
                            .iter()
                            .any(|&(from, until)| from <= now && now < until)
                })
            };
            let longest = leasehold_core::limits::MAX_POLL_MS.max(pool.poll_max_ms);
            let faults_over = now > self.setup.faults_stop + longest + longest / 4 + pool.slack_ms;
            problems.extend(pool.check(v, prev, state, now, faults_over, &live));
            self.setup.pool = Some(pool);
        }

        // 5. Everyone who believes it holds (and is not a zombie) is still a holder.
        for (c, cl) in self.attempts.iter().enumerate() {
            let (Some(fence), None, Stage::Hold) = (cl.holding, cl.zombie_since, cl.stage) else {
                continue;
            };
            if cl.belief_until.is_some_and(|until| self.now >= until) {
                continue;
            }
            let held = state
                .holders
                .iter()
                .any(|h| h.holder_id == cl.holder_id && h.nonce == cl.nonce && h.fence == fence);
            if !held {
                let late = cl
                    .acquired_late
                    .map(|ms| format!("; it acted on an answer GitHub sent {ms} ms earlier"))
                    .unwrap_or_default();
                let left = cl
                    .belief_until
                    .map(|u| {
                        format!(
                            " ({} ms before the local deadline of its lease from {})",
                            u - self.now,
                            cl.belief_from
                        )
                    })
                    .unwrap_or_default();
                problems.push((
                    Invariant::Belief,
                    format!(
                        "{} believes it holds fence {fence}{left}, but version {v} has {}{late}",
                        self.who(c),
                        holders(state)
                    ),
                ));
            }
        }

        // 29. Handoff: a release (or an acquire's cleanup) that removes its own holding while
        //     someone waits hands the freed slot on in the same write. It may leave it free only
        //     when it asked for the config and its write kept the config record of the version
        //     it replaced (the read failed: no record of its own, no capacity to admit by), in
        //     an incident, or in a pool (21 holds a pool's idle slots). A release that read the
        //     config stamps its record into its write unless the version holds a newer one,
        //     which it then admits by. No clock is compared: a record is judged fresh on the
        //     writer's estimate of GitHub's, which the checker does not know.
        if let (Some(w), None, None) = (self.history[v].write, &self.setup.pool, &state.incident) {
            let book = &self.writes[w];
            let writer = &self.attempts[book.client];
            let own = writer.holder_id.as_str();
            let capacity = state
                .config
                .as_ref()
                .map_or(self.setup.capacity, |c| c.capacity.min(self.setup.capacity));
            let taken = state.holders.len() + state.reservations.len();
            // Excused: it asked for the config, and wrote no record of its own.
            let excused = book.config_asked && state.config == prev.config;
            if matches!(book.stage, Stage::Release | Stage::Cleanup)
                && !excused
                && prev.holder(own).is_some()
                && state.holder(own).is_none()
                && !state.queue.is_empty()
                && taken < capacity as usize
            {
                problems.push((
                    Invariant::Handoff,
                    format!(
                        "{} released in version {v} and left {} of {capacity} slots free while {} waited ({}): {}",
                        self.who(book.client),
                        capacity as usize - taken,
                        state.queue.len(),
                        if book.config_asked {
                            "with a config record of its own"
                        } else {
                            "without asking for the config"
                        },
                        holders(state)
                    ),
                ));
            }
        }

        // 22 to 26: the lifecycle's rules (crate::lifecycle).
        if self.setup.lifecycle {
            let completed = |run_id: u64, attempt: u32| {
                self.attempts
                    .iter()
                    .filter(|a| !a.reaper && a.run_id == run_id && a.attempt == attempt)
                    .find_map(|a| a.gh.as_ref()?.completed_at)
            };
            let w = self.history[v].write;
            let writer = match w.map(|w| (w, &self.attempts[self.writes[w].client])) {
                Some((_, a)) if a.operator.is_some() => {
                    crate::lifecycle::Writer::Operator(a.operator.as_ref().expect("an operator"))
                }
                Some((w, a)) if a.reaper => crate::lifecycle::Writer::Reaper {
                    sent_at: self.writes[w].sent_at,
                    completed: &completed,
                },
                _ => crate::lifecycle::Writer::Job,
            };
            let mut seen = std::mem::take(&mut self.tally.lifecycle);
            problems.extend(crate::lifecycle::check(
                &crate::lifecycle::Commit {
                    v,
                    prev,
                    state,
                    capacity: self.setup.capacity,
                    now: self.now,
                    slack: w.map_or(0, |w| self.drift_slack(w)),
                    writer,
                    confirmed_release: w
                        .filter(|&w| self.writes[w].stage == Stage::Release)
                        .map(|w| &self.attempts[self.writes[w].client])
                        .filter(|a| self.setup.confirmed.contains(&a.holder_id))
                        .map(|a| a.holder_id.as_str()),
                    cooldown_ms: self.setup.cooldown_ms,
                },
                &mut seen,
            ));
            self.tally.lifecycle = seen;
        }

        // 6 (with a reaper), 10, 11: what left the state, by whom and on what proof.
        let effects = self.removal_checks(v, prev, state, &mut problems);
        for c in effects.appeared {
            self.attempts[c].entry_since = self.now;
        }
        let r = &mut self.tally;
        for reason in effects.removed_holdings {
            *r.removed_holdings.entry(reason).or_default() += 1;
        }
        for reason in effects.removed_queue {
            *r.removed_queue.entry(reason).or_default() += 1;
        }
        r.renewed += effects.renewed;
        r.renewed_outdated += effects.renewed_outdated;
        r.acquire_expired += effects.acquire_expired;
        for (margin, slack) in effects.expiries {
            r.expiry_min_margin_ms = Some(r.expiry_min_margin_ms.map_or(margin, |m| m.min(margin)));
            r.expiry_max_slack_ms = r.expiry_max_slack_ms.max(slack);
        }
        for permille in effects.reapable {
            r.reapable_removed += 1;
            r.max_reap_wait_permille = r.max_reap_wait_permille.max(permille);
        }

        self.max_fence = max.max(self.max_fence);
        problems.into_iter().min_by_key(|(inv, _)| *inv)
    }
    /// How far ahead of GitHub's true clock write `w`'s estimate of it may be: the engine's
    /// estimate (`low = date - read_at`) is at most GitHub's clock when the answer is read (the
    /// header is truncated to the second and was made before it was read), and then runs on the
    /// client's clock, which gains at most its drift (2000 ppm at most) over the time since that
    /// answer. The write was planned after it and before it was sent: a bound of drift × (sent
    /// − dated), rounded up. Nothing for the header's one-second resolution: it only makes the
    /// estimate earlier.
    fn drift_slack(&self, w: usize) -> Millis {
        let rec = &self.writes[w];
        let drift = self.attempts[rec.client].clock.drift_ppm.max(0) as u64;
        rec.dated_at.map_or(0, |dated| {
            (rec.sent_at.saturating_sub(dated) * drift).div_ceil(1_000_000)
        })
    }

    /// How far past the reaper's bound client `c`'s entry is, reapable `from`, its attempt
    /// completed in GitHub's view at `done`.
    fn overdue_by(&self, c: usize, from: Millis, done: Millis) -> String {
        let bound = self.setup.reaper_bound_ms.expect("a reaper");
        format!(
            "{} ms after it could be reaped ({}: completed in GitHub's view {}, faults stopped {}, in the lock since {}), past the reaper's bound of {} ms",
            self.now - from,
            fmt_t(from),
            fmt_t(done),
            fmt_t(self.setup.faults_stop),
            fmt_t(self.attempts[c].entry_since),
            bound
        )
    }

    /// 6, with a reaper: a claim in `st` whose attempt GitHub completed, still there past the
    /// reaper's bound (`fresh`: clients whose claim appears in `st` just now).
    fn overdue_claim(&self, st: &LockState, fresh: &[usize]) -> Option<String> {
        let bound = self.setup.reaper_bound_ms?;
        let faults_stop = self.setup.faults_stop;
        for (id, nonce) in claims(st) {
            let Some(c) = self.owner(id, nonce).filter(|c| !fresh.contains(c)) else {
                continue;
            };
            let cl = &self.attempts[c];
            let Some(done) = self.gh(c).completed_at else {
                continue;
            };
            let from = done.max(faults_stop).max(cl.entry_since);
            if self.now > from + bound {
                return Some(format!(
                    "{}'s entry is still in the lock at {}, {}",
                    self.who(c),
                    fmt_t(self.now),
                    self.overdue_by(c, from, done)
                ));
            }
        }
        None
    }

    /// The checks on what version `v` removed from `prev` (and what it renewed), for invariants
    /// 6 (an entry whose attempt GitHub completed is gone within the reaper's bound), 10 and 11;
    /// returns what the caller records (entries that appeared, counts).
    fn removal_checks(
        &self,
        v: usize,
        prev: &LockState,
        state: &LockState,
        problems: &mut Vec<(Invariant, String)>,
    ) -> CommitEffects {
        let mut fx = CommitEffects::default();
        let (before, after) = (claims(prev), claims(state));
        for claim in after.iter().filter(|x| !before.contains(x)) {
            fx.appeared.extend(self.owner(claim.0, claim.1));
        }
        // 6, with a reaper: a claim whose attempt GitHub completed is gone within the bound.
        if let Some(bound) = self.setup.reaper_bound_ms {
            let faults_stop = self.setup.faults_stop;
            for claim in before.iter().filter(|x| !after.contains(x)) {
                let Some(c) = self.owner(claim.0, claim.1) else {
                    continue;
                };
                let cl = &self.attempts[c];
                let Some(done) = self.gh(c).completed_at else {
                    continue;
                };
                let from = done.max(faults_stop).max(cl.entry_since);
                let limit = from + bound;
                if self.now >= from {
                    fx.reapable.push((self.now - from) * 1_000 / bound);
                }
                if self.now > limit {
                    problems.push((
                        Invariant::Liveness,
                        format!(
                            "{}'s entry left the lock in version {v}, {}",
                            self.who(c),
                            self.overdue_by(c, from, done)
                        ),
                    ));
                }
            }
        }
        if let Some(message) = self.overdue_claim(state, &fx.appeared) {
            problems.push((Invariant::Liveness, message));
        }
        let Some(w) = self.history[v].write else {
            return fx;
        };
        let wc = self.writes[w].client;
        let sent = self.writes[w].sent_at;
        let policy = &self.setup.policy;
        let removals = state
            .last_change
            .as_ref()
            .map(|ch| ch.removed.as_slice())
            .unwrap_or_default();
        // 10: an expiry (by a reaper or an acquire) is past expiresAt + grace + skew by GitHub's
        // true clock when it commits, allowing only for the writer's clock drift since its
        // last answer with a date.
        let slack = self.drift_slack(w);
        for r in removals
            .iter()
            .filter(|r| r.reason == RemovalReason::LeaseExpired)
        {
            let expires = prev
                .holders
                .iter()
                .find(|h| h.holder_id == r.holder_id && h.fence == r.fence)
                .map_or(r.expires_at, |h| h.expires_at);
            let takeable = policy.takeable_after(expires);
            fx.expiries.push((self.now.saturating_sub(takeable), slack));
            if self.now + slack <= takeable {
                problems.push((
                    Invariant::ReaperProof,
                    format!(
                        "{} removed {} (fence {}) as lease-expired in version {v} at {}, {} ms before its lease could be taken (expiresAt {} + grace {} ms + skew {} ms; clock slack {slack} ms)",
                        self.who(wc),
                        short(&r.holder_id),
                        r.fence,
                        fmt_t(self.now),
                        takeable - self.now,
                        fmt_t(expires),
                        policy.grace_ms,
                        policy.skew_ms
                    ),
                ));
            }
            if !self.attempts[wc].reaper {
                fx.acquire_expired += 1;
            }
        }
        if !self.attempts[wc].reaper {
            return fx;
        }
        let who = self.who(wc);
        let view =
            |c: Option<usize>, t: Millis| c.map_or("unknown to GitHub", |c| self.gh(c).status(t));
        for h in &prev.holders {
            let owner = self.owner(&h.holder_id, &h.nonce);
            if let Some(n) = state.holders.iter().find(|n| n.holder_id == h.holder_id) {
                if n.nonce != h.nonce || n.fence != h.fence || n.ceiling_at != h.ceiling_at {
                    problems.push((Invariant::ReaperProof, format!("{who} rewrote {}'s holding in version {v} (a reaper only removes or renews)", short(&h.holder_id))));
                }
                if n.expires_at == h.expires_at {
                    continue;
                }
                // 11: a renewal by the reaper.
                fx.renewed += 1;
                if owner.is_some_and(|c| self.gh(c).status(self.now) == "completed") {
                    fx.renewed_outdated += 1;
                }
                if n.expires_at > n.ceiling_at || n.expires_at < h.expires_at {
                    problems.push((
                        Invariant::ReaperRenewal,
                        format!("{who} moved {}'s expiresAt from {} to {} in version {v}: past its ceiling {} or back", short(&h.holder_id), fmt_t(h.expires_at), fmt_t(n.expires_at), fmt_t(n.ceiling_at)),
                    ));
                }
                let proven = self.told(wc, &h.run).filter(|t| t.status != "completed");
                match proven {
                    Some(t) if view(owner, t.at) == "in_progress" => {}
                    Some(t) => problems.push((
                        Invariant::ReaperRenewal,
                        format!(
                            "{who} renewed {} in version {v} on an answer ({}, at {}) while GitHub's view had its attempt {}",
                            short(&h.holder_id),
                            t.status,
                            fmt_t(t.at),
                            view(owner, t.at)
                        ),
                    )),
                    None => problems.push((
                        Invariant::ReaperRenewal,
                        format!("{who} renewed {} in version {v} without an answer that its attempt (job) was in progress", short(&h.holder_id)),
                    )),
                }
                continue;
            }
            // Removed by this reap write: on what proof?
            let reason = removals
                .iter()
                .find(|r| r.holder_id == h.holder_id && r.fence == h.fence)
                .map(|r| r.reason.as_str());
            fx.removed_holdings
                .push(reason.unwrap_or("(none)").to_string());
            let what = format!("{} (fence {})", short(&h.holder_id), h.fence);
            match reason {
                Some(reason @ ("run-completed" | "job-completed")) => {
                    if (reason == "job-completed") != h.run.job_id.is_some() {
                        problems.push((Invariant::ReaperProof, format!("{who} removed {what} as {reason} in version {v}, though its entry {} a job id", if h.run.job_id.is_some() { "has" } else { "has no" })));
                    }
                    let completed = owner
                        .and_then(|c| self.gh(c).completed_at)
                        .is_some_and(|t| t <= sent);
                    if !completed {
                        let live = owner.is_some_and(|c| {
                            self.attempts[c].zombie_since.is_none_or(|z| z > sent)
                        });
                        problems.push((
                            Invariant::ReaperProof,
                            format!(
                                "{who} removed {what} as {reason} in version {v}, but GitHub's view had its attempt {} when the write was sent at {}{}",
                                view(owner, sent),
                                fmt_t(sent),
                                if live { " (a live holder)" } else { "" }
                            ),
                        ));
                    }
                }
                Some("lease-expired") => {
                    // Past its expiry (checked above, for every writer); never one GitHub told
                    // this reap was running.
                    if let Some(t) = self.told(wc, &h.run).filter(|t| t.status != "completed") {
                        problems.push((
                            Invariant::ReaperProof,
                            format!("{who} removed {what} as lease-expired in version {v}, though GitHub told it at {} that its attempt was {}", fmt_t(t.at), t.status),
                        ));
                    }
                }
                other => problems.push((
                    Invariant::ReaperProof,
                    format!("{who} removed {what} in version {v} with reason {other:?}"),
                )),
            }
        }
        for q in &prev.queue {
            if state.queue.iter().any(|x| x.holder_id == q.holder_id)
                || state.holders.iter().any(|x| x.holder_id == q.holder_id)
            {
                continue;
            }
            let reason = if q.run.job_id.is_some() {
                "job-completed"
            } else {
                "run-completed"
            };
            fx.removed_queue.push(reason.to_string());
            let owner = self.owner(&q.holder_id, &q.nonce);
            let completed = owner
                .and_then(|c| self.gh(c).completed_at)
                .is_some_and(|t| t <= sent);
            if !completed {
                problems.push((
                    Invariant::ReaperProof,
                    format!(
                        "{who} removed {}'s queue entry in version {v}, but GitHub's view had its attempt {} when the write was sent at {}",
                        short(&q.holder_id),
                        view(owner, sent),
                        fmt_t(sent)
                    ),
                ));
            }
        }
        fx
    }

    fn check_acquired(&self, c: usize, fence: u64, nonce: &str) -> Option<Breach> {
        let cl = &self.attempts[c];
        if cl.zombie_since.is_some() {
            return None;
        }
        let ok = self.committed().is_some_and(|st| {
            st.holders
                .iter()
                .any(|h| h.holder_id == cl.holder_id && h.nonce == nonce && h.fence == fence)
        }) && nonce == cl.nonce;
        if !ok {
            let now = self.committed().map(holders).unwrap_or_default();
            let late = cl
                .stale_answer_ms
                .map(|ms| format!("; it acted on an answer GitHub sent {ms} ms earlier"))
                .unwrap_or_default();
            let message = format!("{} finished acquired with fence {fence}, which the committed state does not hold: {now}{late}", self.who(c));
            return Some((Invariant::ActsOnHistory, message));
        }
        None
    }

    /// 4c: a renewal that finished `renewed`, its lease's deadline still ahead, holds exactly
    /// (holder id, nonce, fence) in the committed state, with at least the expiry it reports.
    fn check_renewed(&self, c: usize, outcome: &Outcome) -> Option<Breach> {
        let cl = &self.attempts[c];
        let Some(lease) = outcome.lease.as_ref() else {
            let message = format!("{} finished renew renewed without a lease", self.who(c));
            return Some((Invariant::Protocol, message));
        };
        if cl.zombie_since.is_some() || cl.clock.real_of(lease.local_deadline) <= self.now {
            return None;
        }
        let ok = outcome.nonce.as_deref() == Some(cl.nonce.as_str())
            && self.committed().is_some_and(|st| {
                st.holders.iter().any(|h| {
                    h.holder_id == cl.holder_id
                        && h.nonce == cl.nonce
                        && Some(h.fence) == outcome.fence
                        && h.expires_at >= lease.expires_at
                })
            });
        if !ok {
            let now = self.committed().map(holders).unwrap_or_default();
            let late = cl
                .stale_answer_ms
                .map(|ms| format!("; it acted on an answer GitHub sent {ms} ms earlier"))
                .unwrap_or_default();
            let message = format!(
                "{} finished renew renewed (fence {:?}, expiresAt {}), which the committed state does not hold: {now}{late}",
                self.who(c),
                outcome.fence,
                fmt_t(lease.expires_at)
            );
            return Some((Invariant::ActsOnHistory, message));
        }
        None
    }

    /// 4d: a renewal that finished `lost` proved it: the committed state does not hold the claim.
    fn check_lost(&self, c: usize) -> Option<Breach> {
        let cl = &self.attempts[c];
        if self.committed().is_some_and(|st| {
            st.holders
                .iter()
                .any(|h| h.holder_id == cl.holder_id && h.nonce == cl.nonce)
        }) {
            let now = self.committed().map(holders).unwrap_or_default();
            let message = format!(
                "{} finished renew lost, but its claim is committed: {now}",
                self.who(c)
            );
            return Some((Invariant::ActsOnHistory, message));
        }
        None
    }

    /// 5, the work's side: the guarded work stops by the local deadline of the last proven lease
    /// (checked whenever it stops: on its own, killed, cancelled, crashed). Time the process
    /// spent paused does not count (a paused work does not act), and a process paused across
    /// the deadline may run on for its kill grace once resumed (the guard re-checks the deadline
    /// first on resuming, then stops the work; assumption (ii)). Zombies are excluded.
    fn check_work_stop(&self, c: usize) -> Option<Breach> {
        let cl = &self.attempts[c];
        if matches!(cl.work, Work::NotStarted | Work::Gone) || cl.zombie_since.is_some() {
            return None;
        }
        let until = cl.belief_until?;
        if self.now <= until {
            return None;
        }
        let paused: Millis = cl
            .pauses
            .iter()
            .map(|&(from, to)| to.min(self.now).saturating_sub(from.max(until)))
            .sum();
        let active = self.now - until - paused;
        let paused_at_deadline = cl
            .pauses
            .iter()
            .any(|&(from, to)| from <= until && until < to);
        let allowed = if paused_at_deadline {
            cl.kill_grace_ms
        } else {
            0
        };
        if active <= allowed {
            return None;
        }
        let message = format!(
            "{} worked until {}, {} ms past the local deadline ({}) of its last proven lease (from {}), {active} ms of it not paused",
            self.who(c),
            fmt_t(self.now),
            self.now - until,
            fmt_t(until),
            cl.belief_from
        );
        Some((Invariant::Belief, message))
    }

    /// 4b: a release that finished released, queue-cleaned or noop left nothing of this
    /// attempt's claim in the committed state.
    fn check_released(&self, c: usize, result: ResultWord) -> Option<Breach> {
        let cl = &self.attempts[c];
        let left = self.committed().is_some_and(|st| {
            st.holders
                .iter()
                .any(|h| h.holder_id == cl.holder_id && h.nonce == cl.nonce)
                || st
                    .queue
                    .iter()
                    .any(|q| q.holder_id == cl.holder_id && q.nonce == cl.nonce)
        });
        if left {
            let now = self.committed().map(holders).unwrap_or_default();
            let hint = if cl.read_predecessor {
                "; it read a version in which an earlier attempt held this holder id"
            } else {
                ""
            };
            let message = format!(
                "{} finished release {} but its claim is still committed: {now}{hint}",
                self.who(c),
                result.as_str()
            );
            return Some((Invariant::ActsOnHistory, message));
        }
        None
    }

    /// 8, as each request is sent (`what` names the request: "GET config", "PUT state", …).
    fn check_rate(&mut self, c: usize, what: &'static str) -> Option<Breach> {
        let now = self.now;
        let sent = &mut self.attempts[c].recent_sends;
        sent.push_back((now, what));
        if sent.len() > RATE_LIMIT_REQUESTS {
            let (oldest, _) = *sent.front().expect("non-empty");
            if now - oldest < RATE_WINDOW_MS {
                let mut kinds: Vec<(usize, &str)> = Vec::new();
                for (_, k) in sent.iter() {
                    match kinds.iter_mut().find(|(_, name)| name == k) {
                        Some((n, _)) => *n += 1,
                        None => kinds.push((1, k)),
                    }
                }
                kinds.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
                let message = format!(
                    "{} sent {} requests within {} ms, mostly {} ({} of them): a hot loop (at most {RATE_LIMIT_REQUESTS} per {RATE_WINDOW_MS} ms)",
                    self.who(c),
                    RATE_LIMIT_REQUESTS + 1,
                    now - oldest,
                    kinds[0].1,
                    kinds[0].0,
                );
                self.attempts[c].recent_sends.clear();
                return Some((Invariant::RequestRate, message));
            }
            self.attempts[c].recent_sends.pop_front();
        }
        None
    }

    /// 9, as each state write is sent: it is planned on a version no older than the newest one
    /// this operation has been shown (a create, on no version at all, only before any).
    fn check_write_base(&self, c: usize, sha: Option<&str>) -> Option<Breach> {
        let seen = self.attempts[c].seen_version?;
        let base = sha.and_then(|s| {
            (0..self.history.len())
                .rev()
                .find(|&i| self.history[i].sha == s)
        });
        if base.is_some_and(|b| b >= seen) {
            return None;
        }
        let on = base
            .map(|b| format!("version {b}"))
            .unwrap_or_else(|| "an absent file".into());
        let message = format!("{} planned a write on {on} after it had been shown version {seen}: it acted on a stale read", self.who(c));
        Some((Invariant::MonotonicView, message))
    }

    /// 3, as each answer is fed: a success names the version this write committed; a definite
    /// failure names a write that committed nothing.
    fn check_write_view(&self, w: usize) -> Option<Breach> {
        let rec = &self.writes[w];
        let problem = match &rec.fed {
            Some(Fed::Success(sha)) => {
                let ok = rec.applied.len() == 1 && self.history[rec.applied[0]].sha == *sha;
                (!ok).then(|| {
                    format!(
                        "told written (sha {}) but the history has {} versions from this write",
                        &sha[..8],
                        rec.applied.len()
                    )
                })
            }
            Some(Fed::Definite(why)) if !rec.applied.is_empty() => Some(format!(
                "told {why} (not applied) but the write is version {} of the history",
                rec.applied[0]
            )),
            _ => None,
        };
        problem.map(|p| {
            (
                Invariant::WriteViews,
                format!("{}: {p}", self.who(rec.client)),
            )
        })
    }

    /// 3 over the whole history, and 6 once everything has run.
    fn final_checks(&self, unsettled: Option<Millis>, rerun_owed: Option<u64>) -> Option<Breach> {
        for w in 0..self.writes.len() {
            let rec = &self.writes[w];
            if rec.applied.len() > 1 {
                let message = format!(
                    "{}: one write committed {} versions",
                    self.who(rec.client),
                    rec.applied.len()
                );
                return Some((Invariant::WriteViews, message));
            }
            if let Some(breach) = self.check_write_view(w) {
                return Some(breach);
            }
        }
        if let Some(at) = unsettled {
            let running: Vec<String> = (0..self.attempts.len())
                .filter(|&c| self.attempts[c].stage != Stage::Done)
                .map(|c| format!("{} {:?}", self.who(c), self.attempts[c].stage))
                .collect();
            let message = format!(
                "not settled by the bound +{} ms (next event at {}): running {}; {}",
                self.setup.bound_ms,
                fmt_t(at),
                if running.is_empty() {
                    "nobody".into()
                } else {
                    running.join(", ")
                },
                self.committed().map(holders).unwrap_or_default()
            );
            return Some((Invariant::Liveness, message));
        }
        if let Some(c) = (0..self.attempts.len()).find(|&c| self.attempts[c].stage != Stage::Done) {
            let message = format!(
                "{} never finished ({:?})",
                self.who(c),
                self.attempts[c].stage
            );
            return Some((Invariant::Liveness, message));
        }
        if let Some(run_id) = rerun_owed {
            let message = format!("run {run_id} still needs a rerun at the end");
            return Some((Invariant::Liveness, message));
        }
        if let Some(st) = self.committed() {
            if !st.holders.is_empty() || !st.queue.is_empty() {
                let message = format!(
                    "every job ended but the lock is not empty (a leaked slot): {}",
                    holders(st)
                );
                return Some((Invariant::Liveness, message));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    //! The checker itself, fed hand-made events: every invariant that no planted bug reaches is
    //! seen failing here (a check that was never seen failing proves nothing).
    use super::*;
    use crate::types::{REPOSITORY, T0};
    use crate::world::params::ReaperParams;
    use leasehold_core::{Change, QueueEntry, Removal};

    const GRACE: Millis = 10_000;

    /// A checker and what the tests feed it: the instant, and the versions and writes so far.
    struct Books {
        ck: Checker,
        now: Millis,
        versions: usize,
        writes: usize,
    }

    fn setup(capacity: u32) -> Setup {
        Setup {
            lock: "sim".into(),
            capacity,
            policy: LeasePolicy::unconfigured(),
            reaper_bound_ms: None,
            faults_stop: T0,
            bound_ms: 0,
            initial: LockState::empty("sim"),
            pool: None,
            lifecycle: false,
            confirmed: Vec::new(),
            cooldown_ms: 0,
        }
    }

    fn holder_of(run_id: u64) -> String {
        leasehold_core::holder_id(REPOSITORY, run_id, "build", "")
    }

    fn nonce_of(client: ClientId) -> String {
        format!("{:016x}", client + 1)
    }

    impl Books {
        fn new(setup: Setup) -> Self {
            Books {
                ck: Checker::new(setup),
                now: T0,
                versions: 0,
                writes: 0,
            }
        }

        fn feed(&mut self, feed: Feed<'_>) -> Option<Invariant> {
            self.ck.feed(self.now, feed).map(|(inv, _)| inv)
        }

        /// Job client `client` of run `run_id` (attempt 1), exact clock, queued in GitHub's view.
        fn job(&mut self, client: ClientId, run_id: u64) {
            let (holder_id, nonce) = (holder_of(run_id), nonce_of(client));
            let clock = Clock {
                offset_ms: 0,
                drift_ppm: 0,
            };
            let started = Feed::AttemptStarted {
                client,
                run_id,
                attempt: 1,
                holder_id: &holder_id,
                nonce: &nonce,
                reaper: false,
                operator: None,
                clock,
                kill_grace_ms: GRACE,
            };
            assert_eq!(self.feed(started), None);
            self.view(client, |_| {});
        }

        fn reaper(&mut self, client: ClientId, run_id: u64) {
            let holder_id = format!("reaper {REPOSITORY}:{run_id}:reap");
            let clock = Clock {
                offset_ms: 0,
                drift_ppm: 0,
            };
            let started = Feed::AttemptStarted {
                client,
                run_id,
                attempt: 1,
                holder_id: &holder_id,
                nonce: &nonce_of(client),
                reaper: true,
                operator: None,
                clock,
                kill_grace_ms: 0,
            };
            assert_eq!(self.feed(started), None);
        }

        /// GitHub's view of `client`'s attempt: queued, then as `change` makes it.
        fn view(&mut self, client: ClientId, change: impl FnOnce(&mut Timing)) {
            let mut timing = self.ck.attempts[client]
                .gh
                .clone()
                .unwrap_or_else(Timing::queued);
            change(&mut timing);
            let timing = &timing;
            assert_eq!(self.feed(Feed::GitHubView { client, timing }), None);
        }

        /// Commits `st` now, as no client's write.
        fn commit(&mut self, st: &LockState) -> Option<Invariant> {
            self.commit_by(None, st)
        }

        fn commit_by(&mut self, write: Option<WriteId>, st: &LockState) -> Option<Invariant> {
            let version = self.versions;
            self.versions += 1;
            let (state, sha) = (&Ok(st.clone()), &format!("{version:040}"));
            self.feed(Feed::Committed {
                version,
                state,
                sha,
                write,
            })
        }

        /// A write by `writer`, sent `sent_ago` ms ago (on no version: a create), committing
        /// `st` now.
        fn written(
            &mut self,
            writer: ClientId,
            sent_ago: Millis,
            st: &LockState,
        ) -> Option<Invariant> {
            let write = self.send(writer, sent_ago, None);
            assert_eq!(write.1, None);
            self.commit_by(Some(write.0), st)
        }

        /// `writer` sends a write planned on `base` (a version's sha), `sent_ago` ms ago.
        fn send(
            &mut self,
            writer: ClientId,
            sent_ago: Millis,
            base: Option<&str>,
        ) -> (WriteId, Option<Invariant>) {
            let write = self.writes;
            self.writes += 1;
            let now = self.now;
            self.now -= sent_ago;
            let content = format!("write {write}");
            let breach = self.feed(Feed::WriteSent {
                client: writer,
                write,
                base,
                content: &content,
            });
            self.now = now;
            (write, breach)
        }

        fn told(&mut self, reaper: ClientId, run_id: u64, status: &str, at: Millis) {
            let told = Told {
                run_id,
                attempt: 1,
                job_id: None,
                status: status.into(),
                at,
            };
            assert_eq!(
                self.feed(Feed::ReaperTold {
                    client: reaper,
                    told
                }),
                None
            );
        }
    }

    fn entry(holder_id: &str, nonce: &str, run_id: u64) -> QueueEntry {
        let run = RunIdentity {
            repository: REPOSITORY.into(),
            run_id,
            run_attempt: 1,
            job: "build".into(),
            runner_name: String::new(),
            url: String::new(),
            job_id: None,
        };
        QueueEntry {
            holder_id: holder_id.into(),
            nonce: nonce.into(),
            run,
            lease_ms: 60_000,
            enqueued_at: 0,
            last_seen_at: 0,
            pool: None,
        }
    }

    /// An entry of a run that no client of the checker's books made.
    fn stranger(id: &str) -> QueueEntry {
        entry(&format!("octo/app:{id}:build"), &format!("{id:0>16}"), 1)
    }

    /// Feeds `states` to a fresh checker as one history; the first breach.
    fn check(capacity: u32, states: &[LockState]) -> Option<Invariant> {
        let mut b = Books::new(setup(capacity));
        states.iter().find_map(|st| b.commit(st))
    }

    fn next(prev: &LockState, f: impl FnOnce(&mut LockState)) -> LockState {
        let mut s = prev.clone();
        s.revision += 1;
        f(&mut s);
        s
    }

    #[test]
    fn a_good_history_passes() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![stranger("1"), stranger("2"), stranger("3")];
            s.admit(2, 0, 3_600_000);
        });
        let s2 = next(&s1, |s| {
            s.holders.remove(0);
            s.admit(2, 0, 3_600_000);
        });
        assert_eq!(check(2, &[s1, s2]), None);
    }

    /// 29: a release that removes its holding while someone waits hands the slot on, unless it
    /// asked for the config and could not renew its record of it; an incident excuses it too.
    #[test]
    fn a_release_that_keeps_its_slot_from_a_waiter_is_caught() {
        // `record`: the write stamps a config record of its own (the version before has none).
        let case = |kind, asked: bool, record: bool, incident: bool, handed_on: bool| {
            let mut b = Books::new(setup(1));
            b.job(0, 4000);
            let held = next(&LockState::empty("sim"), |s| {
                s.queue = vec![entry(&holder_of(4000), &nonce_of(0), 4000), stranger("2")];
                s.admit(1, 0, 3_600_000);
            });
            assert_eq!(b.commit(&held), None);
            let started = Feed::OperationStarted { client: 0, kind };
            assert_eq!(b.feed(started), None);
            if asked {
                let what = "GET config";
                assert_eq!(b.feed(Feed::RequestSent { client: 0, what }), None);
            }
            let (w, _) = b.send(0, 0, Some(&format!("{:040}", 0)));
            let released = next(&held, |s| {
                s.holders.clear();
                if handed_on {
                    s.admit(1, 0, 3_600_000);
                }
                s.config = record.then_some(leasehold_core::ConfigRecord {
                    capacity: 1,
                    lease: None,
                    sha: None,
                    read_at: T0,
                    pool: None,
                    lifecycle: None,
                });
                if incident {
                    let (holder_id, run) = (holder_of(4000), s.queue[0].run.clone());
                    s.incident = Some(leasehold_core::lifecycle::Incident {
                        id: "i-1".into(),
                        holder_id,
                        fence: 1,
                        run,
                        at: T0,
                        reason: None,
                    });
                }
            });
            b.commit_by(Some(w), &released)
        };
        let (release, cleanup) = (OperationKind::Release, OperationKind::Cleanup);
        let caught = Some(Invariant::Handoff);
        assert_eq!(case(release, false, false, false, false), caught);
        assert_eq!(case(cleanup, false, false, false, false), caught);
        assert_eq!(case(release, false, false, false, true), None, "handed on");
        assert_eq!(
            case(release, true, false, false, false),
            None,
            "it asked for the config and wrote no record of its own"
        );
        assert_eq!(
            case(release, true, true, false, false),
            caught,
            "it read the config and still kept the slot"
        );
        assert_eq!(
            case(release, false, false, true, false),
            None,
            "an incident"
        );
    }

    #[test]
    fn over_capacity_is_caught() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![stranger("1"), stranger("2"), stranger("3")];
            s.admit(3, 0, 3_600_000);
        });
        assert_eq!(check(2, &[s1]), Some(Invariant::Capacity));
    }

    #[test]
    fn a_lost_update_is_caught() {
        let s1 = next(&LockState::empty("sim"), |s| s.queue = vec![stranger("1")]);
        // Planned on the empty state again (revision 1), though version 1 replaced it.
        let s2 = next(&LockState::empty("sim"), |s| s.queue = vec![stranger("2")]);
        assert_eq!(check(1, &[s1, s2]), Some(Invariant::Structure));
    }

    #[test]
    fn a_reused_fence_and_a_jump_in_the_queue_are_caught() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![stranger("1")];
            s.admit(1, 0, 3_600_000);
        });
        let s2 = next(&s1, |s| {
            s.holders.clear();
            s.fence = 0;
            s.queue = vec![stranger("2")];
            s.admit(1, 0, 3_600_000);
        });
        assert_eq!(check(1, &[s1.clone(), s2]), Some(Invariant::Fences));
        let s2 = next(&s1, |s| s.queue = vec![stranger("2"), stranger("3")]);
        let s3 = next(&s2, |s| {
            s.holders.clear();
            s.queue.swap(0, 1);
            s.admit(1, 0, 3_600_000);
        });
        assert_eq!(check(1, &[s1, s2, s3]), Some(Invariant::Fifo));
    }

    #[test]
    fn a_takeover_needs_a_new_fence() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![stranger("1")];
            s.admit(1, 0, 3_600_000);
        });
        let takeover = |s: &mut LockState, fence: u64| {
            s.fence = fence;
            let h = &mut s.holders[0];
            h.nonce = "a later attempt".into();
            h.run.run_attempt = 2;
            h.fence = fence;
        };
        let kept = next(&s1, |s| takeover(s, s1.fence));
        assert_eq!(
            check(1, &[s1.clone(), kept]),
            Some(Invariant::Fences),
            "the attempts share a fence"
        );
        let fresh = next(&s1, |s| takeover(s, s1.fence + 1));
        assert_eq!(check(1, &[s1.clone(), fresh]), None);
        // The same claim keeps its fence.
        let moved = next(&s1, |s| s.holders[0].fence += 1);
        assert_eq!(check(1, &[s1, moved]), Some(Invariant::Fences));
    }

    /// Client 0 acquired (version 0 holds it), its guard started, a renewal proved a lease whose
    /// local deadline is `until`, and its work runs: the books, and the version that holds it.
    fn believer(until: Millis) -> (Books, LockState) {
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        let mut st = next(&LockState::empty("sim"), |s| {
            s.queue = vec![entry(&holder_of(4000), &nonce_of(0), 4000)];
            s.admit(1, T0, 600_000);
        });
        st.holders[0].expires_at = T0 + 600_000;
        assert_eq!(b.commit(&st), None);
        let lease = LeaseView {
            expires_at: T0 + 600_000,
            ceiling_at: T0 + 900_000,
            local_deadline: T0 + 50_000,
            renew_at: T0 + 50_000,
            renew_ms: 60_000,
            ttl_ms: 600_000,
        };
        let fence = st.holders[0].fence;
        let nonce = nonce_of(0);
        let acquired = Feed::Acquired {
            client: 0,
            fence,
            nonce: &nonce,
            lease: &lease,
        };
        assert_eq!(b.feed(acquired), None, "acquire's holding is committed");
        assert_eq!(b.feed(Feed::GuardStarted { client: 0 }), None);
        let proven = Feed::Proven {
            client: 0,
            local_deadline: until,
            from: "renewal 3".into(),
        };
        assert_eq!(b.feed(proven), None);
        assert_eq!(b.feed(Feed::WorkStarted { client: 0 }), None);
        (b, st)
    }

    #[test]
    fn the_belief_window_ends_at_the_deadline_of_the_last_proven_lease() {
        for (at, caught) in [(T0 + 99_999, true), (T0 + 100_000, false)] {
            let (mut b, st) = believer(T0 + 100_000);
            b.now = at;
            let gone = next(&st, |s| s.holders.clear());
            assert_eq!(
                b.commit(&gone),
                caught.then_some(Invariant::Belief),
                "removed at {at}"
            );
        }
        // A holding proven lost is no longer believed in.
        let (mut b, st) = believer(T0 + 100_000);
        b.now = T0 + 1_000;
        assert_eq!(b.feed(Feed::BeliefLost { client: 0 }), None);
        assert_eq!(b.commit(&next(&st, |s| s.holders.clear())), None);
    }

    /// The work of `believer(until)` stops at `at`, its process paused as `pauses` says.
    fn work_stops(until: Millis, pauses: &[(Millis, Millis)], at: Millis) -> Option<Invariant> {
        let (mut b, _) = believer(until);
        for &(from, to) in pauses {
            b.now = from;
            assert_eq!(
                b.feed(Feed::Paused {
                    client: 0,
                    until: to
                }),
                None
            );
        }
        b.now = at;
        b.feed(Feed::WorkGone { client: 0 })
    }

    #[test]
    fn work_past_its_proven_deadline_is_caught_unless_paused_across_it() {
        let until = T0 + 100_000;
        assert_eq!(
            work_stops(until, &[], until),
            None,
            "stopped by the deadline"
        );
        assert_eq!(
            work_stops(until, &[], until + 1),
            Some(Invariant::Belief),
            "one ms late"
        );
        // Paused across the deadline: the kill grace after resuming, not counting paused time.
        let first = (until - 5_000, until + 400_000);
        assert_eq!(work_stops(until, &[first], until + 400_000 + GRACE), None);
        assert_eq!(
            work_stops(until, &[first], until + 400_000 + GRACE + 1),
            Some(Invariant::Belief)
        );
        let second = (until + 400_000 + 10, until + 900_000);
        assert_eq!(
            work_stops(until, &[first, second], until + 900_000 + GRACE - 10),
            None,
            "a second pause does not count either"
        );
        assert_eq!(
            work_stops(until, &[first, second], until + 900_000 + GRACE - 9),
            Some(Invariant::Belief)
        );
        // The step's end and a crash are stops too; work that never started, or is gone, is not.
        let (mut b, _) = believer(until);
        b.now = until + 1;
        assert_eq!(
            b.feed(Feed::WorkStepEnded { client: 0 }),
            Some(Invariant::Belief)
        );
        let (mut b, _) = believer(until);
        b.now = until + 1;
        assert_eq!(b.feed(Feed::Crashed { client: 0 }), Some(Invariant::Belief));
        let (mut b, _) = believer(until);
        assert_eq!(b.feed(Feed::WorkGone { client: 0 }), None);
        b.now = until + 1;
        assert_eq!(
            b.feed(Feed::WorkStepEnded { client: 0 }),
            None,
            "gone already"
        );
        // A zombie is not held to it.
        let (mut b, _) = believer(until);
        assert_eq!(b.feed(Feed::Zombie { client: 0 }), None);
        b.now = until + 1;
        assert_eq!(b.feed(Feed::WorkGone { client: 0 }), None);
    }

    #[test]
    fn a_renewal_is_held_to_what_it_reports() {
        let (mut b, st) = believer(T0 + 100_000);
        let ahead = T0 + 3_600_000;
        let outcome = |result: ResultWord, expires_at: Millis| {
            let mut o = Outcome::new(result, true, "sim", &holder_of(4000));
            o.nonce = Some(nonce_of(0));
            o.fence = Some(st.holders[0].fence);
            o.lease = Some(LeaseView {
                expires_at,
                ceiling_at: T0 + 900_000,
                local_deadline: ahead,
                renew_at: ahead,
                renew_ms: 60_000,
                ttl_ms: 600_000,
            });
            o
        };
        let held = outcome(ResultWord::Renewed, T0 + 600_000);
        let longer = outcome(ResultWord::Renewed, T0 + 600_001);
        let lost = outcome(ResultWord::Lost, T0 + 600_000);
        let ended = |o| Feed::RenewalEnded {
            client: 0,
            outcome: o,
        };
        assert_eq!(b.feed(ended(&held)), None);
        assert_eq!(
            b.feed(ended(&longer)),
            Some(Invariant::ActsOnHistory),
            "an expiry the state does not have"
        );
        assert_eq!(
            b.feed(ended(&lost)),
            Some(Invariant::ActsOnHistory),
            "lost, though committed"
        );
        assert_eq!(b.feed(Feed::BeliefLost { client: 0 }), None);
        assert_eq!(b.commit(&next(&st, |s| s.holders.clear())), None);
        assert_eq!(b.feed(ended(&lost)), None);
        assert_eq!(
            b.feed(ended(&held)),
            Some(Invariant::ActsOnHistory),
            "renewed, though gone"
        );
        let mut bare = held.clone();
        bare.lease = None;
        assert_eq!(b.feed(ended(&bare)), Some(Invariant::Protocol));
    }

    #[test]
    fn an_acquire_and_a_release_are_held_to_the_history() {
        let (mut b, st) = believer(T0 + 100_000);
        let lease = LeaseView {
            expires_at: T0 + 600_000,
            ceiling_at: T0 + 900_000,
            local_deadline: T0 + 50_000,
            renew_at: T0 + 50_000,
            renew_ms: 60_000,
            ttl_ms: 600_000,
        };
        let wrong = st.holders[0].fence + 1;
        let nonce = nonce_of(0);
        let acquired = |fence| Feed::Acquired {
            client: 0,
            fence,
            nonce: &nonce,
            lease: &lease,
        };
        assert_eq!(b.feed(acquired(wrong)), Some(Invariant::ActsOnHistory));
        b.now = T0 + 50_000;
        assert_eq!(
            b.feed(acquired(wrong)),
            None,
            "acquired past its deadline: nothing to hold"
        );
        let released = |kind, result| Feed::ReleaseEnded {
            client: 0,
            kind,
            result,
        };
        let (release, cleanup) = (OperationKind::Release, OperationKind::Cleanup);
        assert_eq!(
            b.feed(released(release, ResultWord::Noop)),
            Some(Invariant::ActsOnHistory),
            "noop, though still committed"
        );
        assert_eq!(
            b.feed(released(cleanup, ResultWord::Noop)),
            None,
            "the cleanup's noop is best effort"
        );
        assert_eq!(
            b.feed(released(cleanup, ResultWord::Released)),
            Some(Invariant::ActsOnHistory)
        );
        assert_eq!(b.feed(Feed::BeliefLost { client: 0 }), None);
        assert_eq!(b.commit(&next(&st, |s| s.holders.clear())), None);
        assert_eq!(b.feed(released(release, ResultWord::Released)), None);
    }

    #[test]
    fn a_write_on_a_stale_read_is_caught() {
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        let mut st = LockState::empty("sim");
        for _ in 0..3 {
            st.revision += 1;
            assert_eq!(b.commit(&st), None);
        }
        let sha = |i: usize| format!("{i:040}");
        let started = Feed::OperationStarted {
            client: 0,
            kind: OperationKind::Acquire,
        };
        assert_eq!(b.feed(started.clone()), None);
        // Nothing shown yet: any base will do, a create included.
        assert_eq!(b.send(0, 0, None).1, None);
        let shown = Feed::Shown {
            client: 0,
            version: 1,
            file: true,
        };
        assert_eq!(b.feed(shown), None);
        for ok in [1, 2] {
            assert_eq!(
                b.send(0, 0, Some(&sha(ok))).1,
                None,
                "a write on version {ok} after version 1 was shown"
            );
        }
        assert_eq!(
            b.send(0, 0, Some(&sha(0))).1,
            Some(Invariant::MonotonicView)
        );
        assert_eq!(
            b.send(0, 0, None).1,
            Some(Invariant::MonotonicView),
            "a create after a version was shown"
        );
        // A new operation starts from nothing shown.
        assert_eq!(b.feed(started), None);
        assert_eq!(b.send(0, 0, Some(&sha(0))).1, None);
        // A write told written shows its own version.
        let (w, _) = b.send(0, 0, Some(&sha(2)));
        st.revision += 1;
        assert_eq!(b.commit_by(Some(w), &st), None);
        let fed = Fed::Success(sha(3));
        assert_eq!(b.feed(Feed::WriteTold { write: w, fed }), None);
        assert_eq!(
            b.send(0, 0, Some(&sha(2))).1,
            Some(Invariant::MonotonicView)
        );
    }

    #[test]
    fn a_write_is_held_to_what_its_driver_was_told() {
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        let mut st = LockState::empty("sim");
        st.revision = 1;
        let (landed, _) = b.send(0, 0, None);
        assert_eq!(b.commit_by(Some(landed), &st), None);
        let (lost, _) = b.send(0, 0, None);
        let told = |write, fed| Feed::WriteTold { write, fed };
        assert_eq!(
            b.feed(told(landed, Fed::Success(format!("{:040}", 0)))),
            None
        );
        assert_eq!(
            b.feed(told(landed, Fed::Success(format!("{:040}", 9)))),
            Some(Invariant::WriteViews),
            "another sha"
        );
        assert_eq!(
            b.feed(told(landed, Fed::Definite("HTTP 409".into()))),
            Some(Invariant::WriteViews),
            "refused, though it landed"
        );
        assert_eq!(b.feed(told(lost, Fed::Definite("HTTP 409".into()))), None);
        assert_eq!(b.feed(told(landed, Fed::Unknown)), None);
        // A late arrival of the refused write: caught at the end of the seed.
        st.revision = 2;
        assert_eq!(b.commit_by(Some(lost), &st), None);
        let end = Feed::EndOfSeed {
            unsettled: None,
            rerun_owed: None,
        };
        assert_eq!(b.feed(end), Some(Invariant::WriteViews));
    }

    #[test]
    fn the_end_of_the_seed_needs_everything_settled() {
        let end = |unsettled, rerun_owed| Feed::EndOfSeed {
            unsettled,
            rerun_owed,
        };
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        assert_eq!(
            b.feed(end(None, None)),
            Some(Invariant::Liveness),
            "never finished"
        );
        assert_eq!(b.feed(Feed::Ended { client: 0 }), None);
        assert_eq!(b.feed(end(None, None)), None);
        assert_eq!(b.feed(end(Some(T0), None)), Some(Invariant::Liveness));
        assert_eq!(b.feed(end(None, Some(4000))), Some(Invariant::Liveness));
        let left = next(&LockState::empty("sim"), |s| s.queue = vec![stranger("1")]);
        assert_eq!(b.commit(&left), None);
        assert_eq!(
            b.feed(end(None, None)),
            Some(Invariant::Liveness),
            "a leaked slot"
        );
    }

    /// Books with a reaper (client 2), a lease policy, job clients 0 and 1 (runs 4000 and 4001),
    /// and client 0 holding in version 0 (its attempt running in GitHub's view).
    fn reaped_world() -> (Books, ClientId, LockState) {
        let mut b = Books::new(Setup {
            policy: LeasePolicy {
                ttl_ms: 120_000,
                renew_ms: 40_000,
                grace_ms: 10_000,
                max_ttl_ms: 480_000,
                skew_ms: 5_000,
                min_remaining_ms: 0,
                reaper_renews: true,
            },
            reaper_bound_ms: Some(reaper_bound()),
            ..setup(1)
        });
        b.job(0, 4000);
        b.job(1, 4001);
        b.reaper(2, 90_000);
        let mut st = next(&LockState::empty("sim"), |s| {
            s.queue = vec![entry(&holder_of(4000), &nonce_of(0), 4000)];
            s.admit(1, T0, 480_000);
        });
        st.holders[0].expires_at = T0 + 120_000;
        assert_eq!(b.commit(&st), None);
        b.view(0, |t| t.started_at = Some(T0));
        (b, 2, st)
    }

    fn reaper_bound() -> Millis {
        ReaperParams {
            interval_ms: 300_000,
            scan_s: 60,
            first_ms: 0,
        }
        .removal_bound_ms()
    }

    fn removed(st: &LockState, reason: &RemovalReason, by: &str) -> LockState {
        let h = st.holders[0].clone();
        next(st, |s| {
            s.holders.clear();
            s.last_change = Some(Change {
                at: 0,
                by: by.into(),
                action: "reap".into(),
                removed: vec![Removal {
                    holder_id: h.holder_id,
                    fence: h.fence,
                    expires_at: h.expires_at,
                    reason: reason.clone(),
                }],
            });
        })
    }

    #[test]
    fn a_reaper_that_removes_a_running_attempt_is_caught() {
        let run_completed = RemovalReason::RunCompleted;
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        assert_eq!(
            b.written(r, 10, &removed(&st, &run_completed, "reaper")),
            Some(Invariant::ReaperProof),
            "running when the write was sent"
        );
        // Completed after the write was sent: still no proof when it was sent.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        b.view(0, |t| t.completed_at = Some(T0 + 59_995));
        assert_eq!(
            b.written(r, 10, &removed(&st, &run_completed, "reaper")),
            Some(Invariant::ReaperProof)
        );
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        b.view(0, |t| t.completed_at = Some(T0 + 59_990));
        assert_eq!(
            b.written(r, 10, &removed(&st, &run_completed, "reaper")),
            None,
            "completed before it was sent"
        );
        // The reason must say what the question was about: this entry has no job id.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        b.view(0, |t| t.completed_at = Some(T0));
        assert_eq!(
            b.written(r, 10, &removed(&st, &RemovalReason::JobCompleted, "reaper")),
            Some(Invariant::ReaperProof)
        );
        // A queue entry likewise.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        let mut queued = st.clone();
        queued
            .queue
            .push(entry(&holder_of(4001), &nonce_of(1), 4001));
        queued.revision += 1;
        assert_eq!(b.written(0, 10, &queued), None);
        b.view(1, |t| t.started_at = Some(T0));
        assert_eq!(
            b.written(r, 10, &next(&queued, |s| s.queue.clear())),
            Some(Invariant::ReaperProof)
        );
    }

    #[test]
    fn an_expiry_before_its_time_is_caught_for_reapers_and_acquires() {
        let expired = RemovalReason::LeaseExpired;
        // Takeable after expiresAt + grace + skew = T0 + 135 s.
        for (at, writer_is_reaper, caught) in [
            (T0 + 135_000, true, true),
            (T0 + 135_001, true, false),
            (T0 + 135_000, false, true),
            (T0 + 135_001, false, false),
        ] {
            let (mut b, r, st) = reaped_world();
            b.now = at;
            let writer = if writer_is_reaper { r } else { 1 };
            assert_eq!(
                b.written(writer, 0, &removed(&st, &expired, "x")),
                caught.then_some(Invariant::ReaperProof),
                "at {at}, reaper {writer_is_reaper}"
            );
        }
        // Past its expiry, but GitHub told the reaper the attempt runs: kept, whatever the lease.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 200_000;
        b.told(r, 4000, "in_progress", T0 + 190_000);
        assert_eq!(
            b.written(r, 0, &removed(&st, &expired, "reaper")),
            Some(Invariant::ReaperProof)
        );
        // What an earlier operation was told does not count.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 200_000;
        b.told(r, 4000, "in_progress", T0 + 190_000);
        let reap = Feed::OperationStarted {
            client: r,
            kind: OperationKind::Reap,
        };
        assert_eq!(b.feed(reap), None);
        assert_eq!(b.written(r, 0, &removed(&st, &expired, "reaper")), None);
    }

    #[test]
    fn a_reaper_renewal_is_held_to_its_ceiling_and_its_proof() {
        let renewed = |st: &LockState, to: Millis| next(st, |s| s.holders[0].expires_at = to);
        // No answer that the attempt runs.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        assert_eq!(
            b.written(r, 10, &renewed(&st, T0 + 180_000)),
            Some(Invariant::ReaperRenewal)
        );
        // An answer saying it runs, given while GitHub's view had it running: fine; past the
        // ceiling (T0 + 480 s): not.
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        b.told(r, 4000, "in_progress", T0 + 50_000);
        let st2 = renewed(&st, T0 + 180_000);
        assert_eq!(b.written(r, 10, &st2), None);
        b.now += 1_000;
        assert_eq!(
            b.written(r, 10, &renewed(&st2, T0 + 480_001)),
            Some(Invariant::ReaperRenewal)
        );
        // The answer said running while GitHub's view had it completed (a lying API).
        let (mut b, r, st) = reaped_world();
        b.now = T0 + 60_000;
        b.view(0, |t| t.completed_at = Some(T0 + 40_000));
        b.told(r, 4000, "in_progress", T0 + 50_000);
        assert_eq!(
            b.written(r, 10, &renewed(&st, T0 + 180_000)),
            Some(Invariant::ReaperRenewal)
        );
    }

    #[test]
    fn a_completed_attempt_left_past_the_reapers_bound_is_caught() {
        let bound = reaper_bound();
        for (after, caught) in [(bound, false), (bound + 1, true)] {
            let (mut b, _, st) = reaped_world();
            b.view(0, |t| t.completed_at = Some(T0 + 1_000));
            b.now = T0 + 1_000 + after;
            // Removed by anybody (here an acquire's expiry, which is due): too late is too late.
            assert_eq!(
                b.written(1, 0, &removed(&st, &RemovalReason::LeaseExpired, "x")),
                caught.then_some(Invariant::Liveness),
                "{after} ms after"
            );
            // Still there at a reaper's tick: the same.
            let (mut b, _, _) = reaped_world();
            b.view(0, |t| t.completed_at = Some(T0 + 1_000));
            b.now = T0 + 1_000 + after;
            assert_eq!(
                b.feed(Feed::ReaperTick),
                caught.then_some(Invariant::Liveness)
            );
        }
    }

    #[test]
    fn a_hot_loop_is_caught() {
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        let sent = Feed::RequestSent {
            client: 0,
            what: "GET state",
        };
        let mut breach = None;
        for i in 0..=RATE_LIMIT_REQUESTS as u64 {
            breach = b.ck.feed(T0 + i * 100, sent.clone());
        }
        let (inv, message) = breach.expect("151 requests in 15 s");
        assert_eq!(inv, Invariant::RequestRate);
        assert!(
            message.contains("mostly GET state (151 of them)"),
            "{message}"
        );
        let mut b = Books::new(setup(1));
        b.job(0, 4000);
        for i in 0..1_000u64 {
            assert_eq!(
                b.ck.feed(T0 + i * 500, sent.clone()),
                None,
                "two requests a second is no hot loop"
            );
        }
    }
}
