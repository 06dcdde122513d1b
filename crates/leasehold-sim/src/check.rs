//! The invariant checker. It reads the store's complete write history (every committed version
//! of the state file, when and by which write) and the clients' own views (what each core was
//! told, what each operation finished with, what each job believes it holds). The invariants,
//! their assumptions and where each is enforced are documented in the crate docs (`lib.rs`).

use leasehold_core::time::Millis;
use leasehold_core::{Holder, LeasePolicy, LockState, Outcome, RemovalReason, ResultWord};

use crate::guard::Work;
use crate::world::{fmt_t, Fed, Stage, World, T0};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Invariant {
    /// 0: every committed version is a well-formed state whose revision is one more than the
    /// version it replaced, with each holder id at most once.
    Structure,
    /// 1: no committed state has more holders than capacity.
    Capacity,
    /// 2: fences unique and strictly increasing in admission order.
    Fences,
    /// 3: every write a client saw succeed is in the history; none it saw fail is.
    WriteViews,
    /// 4: no client acts on a holding, a renewal, a loss or a removal that is not in the
    /// history.
    ActsOnHistory,
    /// 5: a client that believes it holds (until the deadline of its last proven lease) is in the
    /// committed holders, and its guarded work stops by that deadline.
    Belief,
    /// 6: no slot leaks once faults stop (an abandoned one is freed by expiry).
    Liveness,
    /// 7: FIFO admission.
    Fifo,
    /// 8: no hot loop: no client sends more than [`RATE_LIMIT_REQUESTS`] requests in any
    /// [`RATE_WINDOW_MS`] of simulated time.
    RequestRate,
    /// 9: no operation plans a write on a version older than one it has already been shown (it
    /// never acts on a stale read).
    MonotonicView,
    /// 10: the reaper removes an entry only on proof: its attempt (job) completed in GitHub's
    /// view before the write was sent, or its lease ran out by GitHub's true clock (so for an
    /// acquire's expiry too), and never one GitHub told it was running.
    ReaperProof,
    /// 11: a holding the reaper renews stays within its ceiling, on an answer that its attempt
    /// (job) was in progress.
    ReaperRenewal,
    /// The core refused an event the driver fed it (a driver or core bug).
    Protocol,
}

impl Invariant {
    pub fn label(self) -> &'static str {
        match self {
            Invariant::Structure => "0 structure",
            Invariant::Capacity => "1 capacity",
            Invariant::Fences => "2 fences",
            Invariant::WriteViews => "3 write views",
            Invariant::ActsOnHistory => "4 acts on history",
            Invariant::Belief => "5 holder belief",
            Invariant::Liveness => "6 liveness",
            Invariant::Fifo => "7 fifo",
            Invariant::RequestRate => "8 request rate",
            Invariant::MonotonicView => "9 monotonic view",
            Invariant::ReaperProof => "10 reaper proof",
            Invariant::ReaperRenewal => "11 reaper renewal",
            Invariant::Protocol => "protocol",
        }
    }
}

/// Invariant 8: at most this many requests by one job attempt in any window of
/// [`RATE_WINDOW_MS`]. Legitimate bursts stay far below it: polls are at least 1 s apart, writes
/// at least 1 s apart, backoffs at least 500 ms, stale re-reads 2 s, and a re-read after a
/// conflict (after a full-jitter backoff, `engine::CONFLICT_BACKOFF_MS` doubling per conflict in
/// a row) follows a write, so a conflict loop is held to the write spacing.
pub const RATE_LIMIT_REQUESTS: usize = 150;
pub const RATE_WINDOW_MS: Millis = 60_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub seed: u64,
    pub invariant: Invariant,
    /// Simulated ms since the seed began.
    pub at: Millis,
    pub message: String,
}

impl Violation {
    pub fn line(&self) -> String {
        format!(
            "VIOLATION seed {} invariant {} at {}: {}",
            self.seed,
            self.invariant.label(),
            fmt_t(T0 + self.at),
            self.message
        )
    }
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

impl World {
    /// The state committed right now (the empty state before the file exists).
    pub(crate) fn committed(&self) -> Option<&LockState> {
        match self.store.current() {
            None => Some(&self.initial),
            Some(v) => self.store.meta(v).state.as_ref().ok(),
        }
    }

    /// Invariants 0, 1, 2, 7 on the transition into version `v`, and 5 for every believer.
    pub(crate) fn on_commit(&mut self, v: usize) {
        let state = match &self.store.meta(v).state {
            Ok(s) => s,
            Err(e) => {
                let message = format!("version {v} is not a lock state: {e}");
                return self.violate(Invariant::Structure, message);
            }
        };
        let prev = match v.checked_sub(1) {
            Some(p) => match &self.store.meta(p).state {
                Ok(s) => s,
                Err(_) => return,
            },
            None => &self.initial,
        };
        let mut problems: Vec<(Invariant, String)> = Vec::new();

        // 0. Structure.
        if state.schema != leasehold_core::SCHEMA || state.lock != crate::world::LOCK {
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
        if state.holders.len() > self.params.capacity as usize {
            problems.push((
                Invariant::Capacity,
                format!(
                    "version {v} has {} holders, capacity {}: {}",
                    state.holders.len(),
                    self.params.capacity,
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
        if let Some((ra, a)) = admitted_ranks.iter().max() {
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

        // 5. Everyone who believes it holds (and is not a zombie) is still a holder.
        for (c, cl) in self.clients.iter().enumerate() {
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

        // 6 (with a reaper), 10, 11: what left the state, by whom and on what proof.
        let effects = self.removal_checks(v, prev, state, &mut problems);
        for c in effects.appeared {
            self.clients[c].entry_since = self.now;
        }
        let r = &mut self.counters.reaper;
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
        if let Some((inv, message)) = problems.into_iter().min_by_key(|(inv, _)| *inv) {
            self.violate(inv, message);
        }
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
        let drift = self.clients[rec.client].clock.drift_ppm.max(0) as u64;
        rec.dated_at.map_or(0, |dated| {
            (rec.sent_at.saturating_sub(dated) * drift).div_ceil(1_000_000)
        })
    }

    /// How far past the reaper's bound client `c`'s entry is, reapable `from`, its attempt
    /// completed in GitHub's view at `done`.
    fn overdue_by(&self, c: usize, from: Millis, done: Millis) -> String {
        let r = self.params.reaper.as_ref().expect("a reaper");
        format!(
            "{} ms after it could be reaped ({}: completed in GitHub's view {}, faults stopped {}, in the lock since {}), past the reaper's bound of {} ms",
            self.now - from,
            fmt_t(from),
            fmt_t(done),
            fmt_t(T0 + self.params.profile.until),
            fmt_t(self.clients[c].entry_since),
            r.removal_bound_ms()
        )
    }

    /// 6, with a reaper: a claim in `st` whose attempt GitHub completed, still there past the
    /// reaper's bound (`fresh`: clients whose claim appears in `st` just now).
    pub(crate) fn overdue_claim(&self, st: &LockState, fresh: &[usize]) -> Option<String> {
        let r = self.params.reaper.as_ref()?;
        let faults_stop = T0 + self.params.profile.until;
        for (id, nonce) in claims(st) {
            let Some(c) = self.owner(id, nonce).filter(|c| !fresh.contains(c)) else {
                continue;
            };
            let cl = &self.clients[c];
            let Some(done) = self.gh(c).completed_at else {
                continue;
            };
            let from = done.max(faults_stop).max(cl.entry_since);
            if self.now > from + r.removal_bound_ms() {
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
        if let Some(r) = &self.params.reaper {
            let faults_stop = T0 + self.params.profile.until;
            for claim in before.iter().filter(|x| !after.contains(x)) {
                let Some(c) = self.owner(claim.0, claim.1) else {
                    continue;
                };
                let cl = &self.clients[c];
                let Some(done) = self.gh(c).completed_at else {
                    continue;
                };
                let from = done.max(faults_stop).max(cl.entry_since);
                let limit = from + r.removal_bound_ms();
                if self.now >= from {
                    fx.reapable
                        .push((self.now - from) * 1_000 / r.removal_bound_ms());
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
        let Some(w) = self.store.meta(v).write else {
            return fx;
        };
        let wc = self.writes[w].client;
        let sent = self.writes[w].sent_at;
        let policy = self
            .params
            .lease
            .clone()
            .unwrap_or_else(LeasePolicy::unconfigured);
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
            if !self.clients[wc].is_reaper() {
                fx.acquire_expired += 1;
            }
        }
        if !self.clients[wc].is_reaper() {
            return fx;
        }
        let who = self.who(wc);
        let view =
            |c: Option<usize>, t: Millis| c.map_or("unknown to GitHub", |c| self.gh_status(c, t));
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
                if owner.is_some_and(|c| self.gh_status(c, self.now) == "completed") {
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
                        let live = owner
                            .is_some_and(|c| self.clients[c].zombie_since.is_none_or(|z| z > sent));
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

    /// 4a: an acquire that finished `acquired` holds exactly that in the committed state.
    pub(crate) fn check_acquired(&mut self, c: usize, fence: u64, nonce: &str) {
        let cl = &self.clients[c];
        if cl.zombie_since.is_some() {
            return;
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
            self.violate(Invariant::ActsOnHistory, message);
        }
    }

    /// 4c: a renewal that finished `renewed`, its lease's deadline still ahead, holds exactly
    /// (holder id, nonce, fence) in the committed state, with at least the expiry it reports.
    pub(crate) fn check_renewed(&mut self, c: usize, outcome: &Outcome) {
        let cl = &self.clients[c];
        let Some(lease) = outcome.lease.as_ref() else {
            let message = format!("{} finished renew renewed without a lease", self.who(c));
            return self.violate(Invariant::Protocol, message);
        };
        if cl.zombie_since.is_some() || cl.clock.real_of(lease.local_deadline) <= self.now {
            return;
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
            self.violate(Invariant::ActsOnHistory, message);
        }
    }

    /// 4d: a renewal that finished `lost` proved it: the committed state does not hold the claim.
    pub(crate) fn check_lost(&mut self, c: usize) {
        let cl = &self.clients[c];
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
            self.violate(Invariant::ActsOnHistory, message);
        }
    }

    /// 5, the work's side: the guarded work stops by the local deadline of the last proven lease
    /// (checked whenever it stops: on its own, killed, cancelled, crashed). Time the process
    /// spent paused does not count (a paused work does not act), and a process paused across
    /// the deadline may run on for its kill grace once resumed (the guard re-checks the deadline
    /// first on resuming, then stops the work; assumption (ii)). Zombies are excluded.
    pub(crate) fn check_work_stop(&mut self, c: usize) {
        let cl = &self.clients[c];
        let Some(g) = cl.guard.as_ref() else { return };
        if matches!(g.work, Work::NotStarted | Work::Gone) || cl.zombie_since.is_some() {
            return;
        }
        let Some(until) = cl.belief_until else { return };
        if self.now <= until {
            return;
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
            self.runs[cl.run].settings.kill_grace_ms
        } else {
            0
        };
        if active <= allowed {
            return;
        }
        let message = format!(
            "{} worked until {}, {} ms past the local deadline ({}) of its last proven lease (from {}), {active} ms of it not paused",
            self.who(c),
            fmt_t(self.now),
            self.now - until,
            fmt_t(until),
            cl.belief_from
        );
        self.violate(Invariant::Belief, message);
    }

    /// 4b: a release that finished released, queue-cleaned or noop left nothing of this
    /// attempt's claim in the committed state.
    pub(crate) fn check_released(&mut self, c: usize, result: ResultWord) {
        let cl = &self.clients[c];
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
            self.violate(Invariant::ActsOnHistory, message);
        }
    }

    /// 8, as each request is sent (`what` names the request: "GET config", "PUT state", …).
    pub(crate) fn check_rate(&mut self, c: usize, what: &'static str) {
        let now = self.now;
        let sent = &mut self.clients[c].recent_sends;
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
                self.clients[c].recent_sends.clear();
                return self.violate(Invariant::RequestRate, message);
            }
            self.clients[c].recent_sends.pop_front();
        }
    }

    /// 9, as each state write is sent: it is planned on a version no older than the newest one
    /// this operation has been shown (a create, on no version at all, only before any).
    pub(crate) fn check_write_base(&mut self, c: usize, sha: Option<&str>) {
        let Some(seen) = self.clients[c].seen_version else {
            return;
        };
        let base = sha.and_then(|s| {
            (0..self.store.len())
                .rev()
                .find(|&i| self.store.version(i).sha == s)
        });
        if base.is_some_and(|b| b >= seen) {
            return;
        }
        let on = base
            .map(|b| format!("version {b}"))
            .unwrap_or_else(|| "an absent file".into());
        let message = format!("{} planned a write on {on} after it had been shown version {seen}: it acted on a stale read", self.who(c));
        self.violate(Invariant::MonotonicView, message);
    }

    /// 3, as each answer is fed: a success names the version this write committed; a definite
    /// failure names a write that committed nothing.
    pub(crate) fn check_write_view(&mut self, w: usize) {
        let rec = &self.writes[w];
        let problem = match &rec.fed {
            Some(Fed::Success(sha)) => {
                let ok = rec.applied.len() == 1 && self.store.version(rec.applied[0]).sha == *sha;
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
        if let Some(p) = problem {
            let message = format!("{}: {p}", self.who(rec.client));
            self.violate(Invariant::WriteViews, message);
        }
    }

    /// 3 over the whole history, and 6 once everything has run.
    pub(crate) fn final_checks(&mut self, unsettled: Option<Millis>) {
        for w in 0..self.writes.len() {
            let rec = &self.writes[w];
            if rec.applied.len() > 1 {
                let message = format!(
                    "{}: one write committed {} versions",
                    self.who(rec.client),
                    rec.applied.len()
                );
                return self.violate(Invariant::WriteViews, message);
            }
            self.check_write_view(w);
            if self.violation.is_some() {
                return;
            }
        }
        if let Some(at) = unsettled {
            let running: Vec<String> = (0..self.clients.len())
                .filter(|&c| self.clients[c].live())
                .map(|c| format!("{} {:?}", self.who(c), self.clients[c].stage))
                .collect();
            let message = format!(
                "not settled by the bound +{} ms (next event at {}): running {}; {}",
                self.params.bound_ms,
                fmt_t(at),
                if running.is_empty() {
                    "nobody".into()
                } else {
                    running.join(", ")
                },
                self.committed().map(holders).unwrap_or_default()
            );
            return self.violate(Invariant::Liveness, message);
        }
        if let Some(c) = (0..self.clients.len()).find(|&c| self.clients[c].live()) {
            let message = format!(
                "{} never finished ({:?})",
                self.who(c),
                self.clients[c].stage
            );
            return self.violate(Invariant::Liveness, message);
        }
        if let Some(r) = self.runs.iter().find(|r| r.needs_rerun || r.rerun_pending) {
            let message = format!("run {} still needs a rerun at the end", r.run_id);
            return self.violate(Invariant::Liveness, message);
        }
        if let Some(st) = self.committed() {
            if !st.holders.is_empty() || !st.queue.is_empty() {
                let message = format!(
                    "every job ended but the lock is not empty (a leaked slot): {}",
                    holders(st)
                );
                self.violate(Invariant::Liveness, message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The checker itself, on hand-made histories: every invariant that no planted bug reaches
    //! is seen failing here (a check that was never seen failing proves nothing).
    use super::*;
    use crate::guard::{Guard, GuardMode};
    use crate::world::{SimConfig, World};
    use leasehold_core::{LeaseView, QueueEntry, RunIdentity};

    fn entry(id: &str) -> QueueEntry {
        let run = RunIdentity {
            repository: "octo/app".into(),
            run_id: 1,
            run_attempt: 1,
            job: "build".into(),
            runner_name: String::new(),
            url: String::new(),
            job_id: None,
        };
        QueueEntry {
            holder_id: format!("octo/app:{id}:build"),
            nonce: format!("{:0>16}", id),
            run,
            lease_ms: 60_000,
            enqueued_at: 0,
            last_seen_at: 0,
        }
    }

    /// A world whose history is replaced by `states`, checked version by version.
    fn check(capacity: u32, states: &[LockState]) -> Option<Violation> {
        let mut w = World::new(1, &SimConfig::default());
        w.params.capacity = capacity;
        w.store.reset_state();
        w.initial = LockState::empty(crate::world::LOCK);
        w.max_fence = 0;
        for st in states {
            w.store.push(&st.to_document(), T0, None);
            w.on_commit(w.store.len() - 1);
            if w.violation.is_some() {
                break;
            }
        }
        w.violation
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
            s.queue = vec![entry("1"), entry("2"), entry("3")];
            s.admit(2, 0, 3_600_000);
        });
        let s2 = next(&s1, |s| {
            s.holders.remove(0);
            s.admit(2, 0, 3_600_000);
        });
        assert_eq!(check(2, &[s1, s2]), None);
    }

    #[test]
    fn over_capacity_is_caught() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![entry("1"), entry("2"), entry("3")];
            s.admit(3, 0, 3_600_000);
        });
        assert_eq!(
            check(2, &[s1]).map(|v| v.invariant),
            Some(Invariant::Capacity)
        );
    }

    #[test]
    fn a_lost_update_is_caught() {
        let s1 = next(&LockState::empty("sim"), |s| s.queue = vec![entry("1")]);
        // Planned on the empty state again (revision 1), though version 1 replaced it.
        let s2 = next(&LockState::empty("sim"), |s| s.queue = vec![entry("2")]);
        assert_eq!(
            check(1, &[s1, s2]).map(|v| v.invariant),
            Some(Invariant::Structure)
        );
    }

    #[test]
    fn a_reused_fence_and_a_jump_in_the_queue_are_caught() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![entry("1")];
            s.admit(1, 0, 3_600_000);
        });
        let s2 = next(&s1, |s| {
            s.holders.clear();
            s.fence = 0;
            s.queue = vec![entry("2")];
            s.admit(1, 0, 3_600_000);
        });
        assert_eq!(
            check(1, &[s1.clone(), s2]).map(|v| v.invariant),
            Some(Invariant::Fences)
        );
        let s2 = next(&s1, |s| s.queue = vec![entry("2"), entry("3")]);
        let s3 = next(&s2, |s| {
            s.holders.clear();
            s.queue.swap(0, 1);
            s.admit(1, 0, 3_600_000);
        });
        assert_eq!(
            check(1, &[s1, s2, s3]).map(|v| v.invariant),
            Some(Invariant::Fifo)
        );
    }

    #[test]
    fn a_takeover_needs_a_new_fence() {
        let s1 = next(&LockState::empty("sim"), |s| {
            s.queue = vec![entry("1")];
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
            check(1, &[s1.clone(), kept]).map(|v| v.invariant),
            Some(Invariant::Fences),
            "the attempts share a fence"
        );
        let fresh = next(&s1, |s| takeover(s, s1.fence + 1));
        assert_eq!(check(1, &[s1.clone(), fresh]), None);
        // The same claim keeps its fence.
        let moved = next(&s1, |s| s.holders[0].fence += 1);
        assert_eq!(
            check(1, &[s1, moved]).map(|v| v.invariant),
            Some(Invariant::Fences)
        );
    }

    /// A world whose client 0 holds under a guard, its work running, believing until `until`
    /// (the deadline of its last proven lease), and the committed version that holds it.
    fn believer(until: Millis) -> (World, LockState) {
        let mut w = World::new(1, &SimConfig::default());
        w.store.reset_state();
        w.initial = LockState::empty(crate::world::LOCK);
        w.max_fence = 0;
        let mut st = next(&LockState::empty(crate::world::LOCK), |s| {
            let mut e = entry("4000");
            e.holder_id = w.clients[0].holder_id.clone();
            e.nonce = w.clients[0].nonce.clone();
            s.queue = vec![e];
            s.admit(1, T0, 600_000);
        });
        st.holders[0].expires_at = T0 + 600_000;
        w.store.push(&st.to_document(), T0, None);
        let lease = LeaseView {
            expires_at: T0 + 600_000,
            ceiling_at: T0 + 900_000,
            local_deadline: until,
            renew_at: until,
            renew_ms: 60_000,
            ttl_ms: 600_000,
        };
        let cl = &mut w.clients[0];
        cl.stage = Stage::Hold;
        cl.holding = Some(st.holders[0].fence);
        cl.belief_until = Some(until);
        cl.belief_from = "renewal 3".into();
        let mut g = Guard::new(GuardMode::Verify, lease, 10_000);
        g.work = Work::Running;
        cl.guard = Some(g);
        (w, st)
    }

    #[test]
    fn the_belief_window_ends_at_the_deadline_of_the_last_proven_lease() {
        for (at, caught) in [(T0 + 99_999, true), (T0 + 100_000, false)] {
            let (mut w, st) = believer(T0 + 100_000);
            w.now = at;
            let gone = next(&st, |s| s.holders.clear());
            w.store.push(&gone.to_document(), at, None);
            w.on_commit(1);
            assert_eq!(
                w.violation.map(|v| v.invariant),
                caught.then_some(Invariant::Belief),
                "removed at {at}"
            );
        }
    }

    #[test]
    fn work_past_its_proven_deadline_is_caught_unless_paused_across_it() {
        let until = T0 + 100_000;
        let (mut w, _) = believer(until);
        w.now = until;
        w.check_work_stop(0);
        assert_eq!(w.violation, None, "stopped by the deadline");
        w.now = until + 1;
        w.check_work_stop(0);
        assert_eq!(
            w.violation.take().map(|v| v.invariant),
            Some(Invariant::Belief),
            "one ms late"
        );
        // Paused across the deadline: the kill grace after resuming, not counting paused time.
        let grace = w.runs[0].settings.kill_grace_ms;
        w.clients[0].pauses = vec![(until - 5_000, until + 400_000)];
        w.now = until + 400_000 + grace;
        w.check_work_stop(0);
        assert_eq!(w.violation, None);
        w.clients[0]
            .pauses
            .push((until + 400_000 + 10, until + 900_000));
        w.now = until + 900_000 + grace - 10;
        w.check_work_stop(0);
        assert_eq!(w.violation, None, "a second pause does not count either");
        w.now += 1;
        w.check_work_stop(0);
        assert_eq!(w.violation.map(|v| v.invariant), Some(Invariant::Belief));
    }

    #[test]
    fn a_renewal_is_held_to_what_it_reports() {
        let (mut w, st) = believer(T0 + 100_000);
        let cl = &w.clients[0];
        let ahead = cl.clock.local(T0) + 3_600_000;
        let outcome = |expires_at: Millis| {
            let mut o = Outcome::new(ResultWord::Renewed, true, "sim", &cl.holder_id);
            o.nonce = Some(cl.nonce.clone());
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
        let (held, longer) = (outcome(T0 + 600_000), outcome(T0 + 600_001));
        w.check_renewed(0, &held);
        assert_eq!(w.violation, None);
        w.check_renewed(0, &longer);
        assert_eq!(
            w.violation.take().map(|v| v.invariant),
            Some(Invariant::ActsOnHistory),
            "an expiry the state does not have"
        );
        w.check_lost(0);
        assert_eq!(
            w.violation.take().map(|v| v.invariant),
            Some(Invariant::ActsOnHistory),
            "lost, though committed"
        );
        let gone = next(&st, |s| s.holders.clear());
        w.store.push(&gone.to_document(), T0, None);
        w.check_lost(0);
        assert_eq!(w.violation, None);
        w.check_renewed(0, &held);
        assert_eq!(
            w.violation.map(|v| v.invariant),
            Some(Invariant::ActsOnHistory),
            "renewed, though gone"
        );
    }

    #[test]
    fn a_write_on_a_stale_read_is_caught() {
        let mut w = World::new(1, &SimConfig::default());
        w.store.reset_state();
        let mut st = LockState::empty("sim");
        for _ in 0..3 {
            st.revision += 1;
            w.store.push(&st.to_document(), T0, None);
        }
        let sha = |w: &World, i: usize| w.store.version(i).sha.clone();
        // Nothing shown yet: any base will do, a create included.
        w.check_write_base(0, None);
        assert_eq!(w.violation, None);
        w.clients[0].seen_version = Some(1);
        for ok in [1, 2] {
            let s = sha(&w, ok);
            w.check_write_base(0, Some(&s));
            assert_eq!(
                w.violation, None,
                "a write on version {ok} after version 1 was shown"
            );
        }
        let s = sha(&w, 0);
        w.check_write_base(0, Some(&s));
        assert_eq!(
            w.violation.take().map(|v| v.invariant),
            Some(Invariant::MonotonicView)
        );
        w.check_write_base(0, None);
        assert_eq!(
            w.violation.map(|v| v.invariant),
            Some(Invariant::MonotonicView),
            "a create after a version was shown"
        );
    }

    /// A world with a reaper (client `r`), a lease policy, and job client 0 holding in
    /// version 0 (its attempt running in GitHub's view): (world, r, that state).
    fn reaped_world() -> (World, usize, LockState) {
        let mut w = World::new(1, &SimConfig::default());
        w.params.reaper = Some(crate::reaper::ReaperParams {
            interval_ms: 300_000,
            scan_s: 60,
            first_ms: 0,
        });
        w.params.lease = Some(LeasePolicy {
            ttl_ms: 120_000,
            renew_ms: 40_000,
            grace_ms: 10_000,
            max_ttl_ms: 480_000,
            skew_ms: 5_000,
            min_remaining_ms: 0,
            reaper_renews: true,
        });
        w.params.profile.until = 0;
        w.store.reset_state();
        w.initial = LockState::empty(crate::world::LOCK);
        w.max_fence = 0;
        let r = w.new_reaper();
        let mut st = next(&LockState::empty(crate::world::LOCK), |s| {
            let mut e = entry("4000");
            e.holder_id = w.clients[0].holder_id.clone();
            e.nonce = w.clients[0].nonce.clone();
            e.run.run_id = w.runs[0].run_id;
            s.queue = vec![e];
            s.admit(1, T0, 480_000);
        });
        st.holders[0].expires_at = T0 + 120_000;
        w.store.push(&st.to_document(), T0, None);
        w.clients[0].entry_since = T0;
        w.set_gh(0, |t| t.started_at = Some(T0));
        (w, r, st)
    }

    /// Commits `st` as written by `writer` (sent `sent_ago` ms before now) and checks it.
    fn commit(w: &mut World, writer: usize, sent_ago: Millis, st: LockState) -> Option<Invariant> {
        let wr = w.writes.len();
        w.writes.push(crate::world::WriteRec {
            client: writer,
            sends: 1,
            applied: Vec::new(),
            fed: None,
            sent_at: w.now - sent_ago,
            dated_at: Some(w.now - sent_ago),
        });
        w.store.push(&st.to_document(), w.now, Some(wr));
        w.on_commit(w.store.len() - 1);
        w.violation.take().map(|v| v.invariant)
    }

    fn removed(st: &LockState, reason: &str, by: &str) -> LockState {
        let h = st.holders[0].clone();
        next(st, |s| {
            s.holders.clear();
            s.last_change = Some(leasehold_core::Change {
                at: 0,
                by: by.into(),
                action: "reap".into(),
                removed: vec![leasehold_core::Removal {
                    holder_id: h.holder_id,
                    fence: h.fence,
                    expires_at: h.expires_at,
                    reason: reason.into(),
                }],
            });
        })
    }

    #[test]
    fn a_reaper_that_removes_a_running_attempt_is_caught() {
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        assert_eq!(
            commit(&mut w, r, 10, removed(&st, "run-completed", "reaper")),
            Some(Invariant::ReaperProof),
            "running when the write was sent"
        );
        // Completed after the write was sent: still no proof when it was sent.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        w.set_gh(0, |t| t.completed_at = Some(T0 + 59_995));
        assert_eq!(
            commit(&mut w, r, 10, removed(&st, "run-completed", "reaper")),
            Some(Invariant::ReaperProof)
        );
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        w.set_gh(0, |t| t.completed_at = Some(T0 + 59_990));
        assert_eq!(
            commit(&mut w, r, 10, removed(&st, "run-completed", "reaper")),
            None,
            "completed before it was sent"
        );
        // The reason must say what the question was about: this entry has no job id.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        w.set_gh(0, |t| t.completed_at = Some(T0));
        assert_eq!(
            commit(&mut w, r, 10, removed(&st, "job-completed", "reaper")),
            Some(Invariant::ReaperProof)
        );
        // A queue entry likewise.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        let mut queued = st.clone();
        let mut e = entry("4001");
        e.holder_id = w.clients[1].holder_id.clone();
        e.nonce = w.clients[1].nonce.clone();
        queued.queue.push(e);
        queued.revision += 1;
        assert_eq!(commit(&mut w, 0, 10, queued.clone()), None);
        w.set_gh(1, |t| t.started_at = Some(T0));
        assert_eq!(
            commit(&mut w, r, 10, next(&queued, |s| s.queue.clear())),
            Some(Invariant::ReaperProof)
        );
    }

    #[test]
    fn an_expiry_before_its_time_is_caught_for_reapers_and_acquires() {
        // Takeable after expiresAt + grace + skew = T0 + 135 s.
        for (at, writer_is_reaper, caught) in [
            (T0 + 135_000, true, true),
            (T0 + 135_001, true, false),
            (T0 + 135_000, false, true),
            (T0 + 135_001, false, false),
        ] {
            let (mut w, r, st) = reaped_world();
            w.now = at;
            let writer = if writer_is_reaper { r } else { 1 };
            assert_eq!(
                commit(&mut w, writer, 0, removed(&st, "lease-expired", "x")),
                caught.then_some(Invariant::ReaperProof),
                "at {at}, reaper {writer_is_reaper}"
            );
        }
        // Past its expiry, but GitHub told the reaper the attempt runs: kept, whatever the lease.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 200_000;
        let run_id = w.runs[0].run_id;
        w.clients[r].told.push(crate::world::Told {
            run_id,
            attempt: 1,
            job_id: None,
            status: "in_progress".into(),
            at: T0 + 190_000,
        });
        assert_eq!(
            commit(&mut w, r, 0, removed(&st, "lease-expired", "reaper")),
            Some(Invariant::ReaperProof)
        );
    }

    #[test]
    fn a_reaper_renewal_is_held_to_its_ceiling_and_its_proof() {
        let renewed = |st: &LockState, to: Millis| next(st, |s| s.holders[0].expires_at = to);
        // No answer that the attempt runs.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        assert_eq!(
            commit(&mut w, r, 10, renewed(&st, T0 + 180_000)),
            Some(Invariant::ReaperRenewal)
        );
        // An answer saying it runs, given while GitHub's view had it running: fine; past the
        // ceiling (T0 + 480 s): not.
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        let run_id = w.runs[0].run_id;
        w.clients[r].told.push(crate::world::Told {
            run_id,
            attempt: 1,
            job_id: None,
            status: "in_progress".into(),
            at: T0 + 50_000,
        });
        assert_eq!(commit(&mut w, r, 10, renewed(&st, T0 + 180_000)), None);
        w.now += 1_000;
        let st2 = w.committed().cloned().expect("a state");
        assert_eq!(
            commit(&mut w, r, 10, renewed(&st2, T0 + 480_001)),
            Some(Invariant::ReaperRenewal)
        );
        // The answer said running while GitHub's view had it completed (a lying API).
        let (mut w, r, st) = reaped_world();
        w.now = T0 + 60_000;
        w.set_gh(0, |t| t.completed_at = Some(T0 + 40_000));
        w.clients[r].told.push(crate::world::Told {
            run_id,
            attempt: 1,
            job_id: None,
            status: "in_progress".into(),
            at: T0 + 50_000,
        });
        assert_eq!(
            commit(&mut w, r, 10, renewed(&st, T0 + 180_000)),
            Some(Invariant::ReaperRenewal)
        );
    }

    #[test]
    fn a_completed_attempt_left_past_the_reapers_bound_is_caught() {
        let bound = crate::reaper::ReaperParams {
            interval_ms: 300_000,
            scan_s: 60,
            first_ms: 0,
        }
        .removal_bound_ms();
        for (after, caught) in [(bound, false), (bound + 1, true)] {
            let (mut w, _, st) = reaped_world();
            w.set_gh(0, |t| t.completed_at = Some(T0 + 1_000));
            w.now = T0 + 1_000 + after;
            // Removed by anybody (here an acquire's expiry, which is due): too late is too late.
            assert_eq!(
                commit(&mut w, 1, 0, removed(&st, "lease-expired", "x")),
                caught.then_some(Invariant::Liveness),
                "{after} ms after"
            );
        }
    }

    #[test]
    fn a_hot_loop_is_caught() {
        let mut w = World::new(1, &SimConfig::default());
        for i in 0..=RATE_LIMIT_REQUESTS as u64 {
            w.now = T0 + i * 100;
            w.check_rate(0, "GET state");
        }
        let v = w.violation.expect("151 requests in 15 s");
        assert_eq!(v.invariant, Invariant::RequestRate);
        assert!(
            v.message.contains("mostly GET state (151 of them)"),
            "{}",
            v.message
        );
        let mut w = World::new(1, &SimConfig::default());
        for i in 0..1_000u64 {
            w.now = T0 + i * 500;
            w.check_rate(0, "GET state");
        }
        assert_eq!(w.violation, None, "two requests a second is no hot loop");
    }
}
