//! acquire: join the lock's FIFO queue, wait to be admitted, or give up at the timeout.
//!
//! The plan for one version of the state, in order:
//! 1. This claim (holder id + nonce) holds → finished: acquired.
//! 2. The holder id holds or waits under another nonce: a predecessor run attempt's entry is
//!    adopted (a rerun takes over what its earlier attempt left); the same attempt on the same
//!    runner is this same job acquiring again (returns the existing holding); the same attempt on
//!    another runner is a second job using the same id (a matrix without `holder-suffix`) and
//!    is refused; a newer attempt's entry is never touched.
//! 3. Enqueue at the back (if not queued yet) and admit from the front while slots are free
//!    (the write may admit waiters ahead of this one too). Admitted → write, then finished.
//! 4. Not admitted: at the timeout, leave the queue (write) and finish with `timeout`; a claim
//!    that never joined the queue (`timeout-minutes: 0` on a full lock) writes nothing.
//!    Otherwise write if anything changed (enqueued), else sleep and poll.
//!
//! With `pull-request` and `expected-head-sha`, the pull request's head is read while queued,
//! before the admitting write and once after admission (`acquire_head.rs`); a head that moved
//! on leaves the lock as a cancellation does, finishing `superseded` (or `unverified-head`).

use super::acquire_head::HeadGate;
use super::head::PrHead;
use super::job_id::{apart, JobLookup};
use super::lifecycle::Gate;
use crate::admission::{reseat, Reseat};
use crate::engine::{lease_view, Decision, PlanCtx, Planner, Provenance};
use crate::input::{self, Entropy, RawInputs, Reader};
use crate::policy::limits::{
    DEFAULT_POLL_SECONDS, DEFAULT_TIMEOUT_MINUTES, MAX_LEASE_MINUTES, MAX_QUEUE,
    MAX_TIMEOUT_MINUTES, POLL_SECONDS_RANGE, TAKEABLE_WAKE_MARGIN_MS,
};
use crate::policy::{next_poll, oldest_age, HoldBook, RetryPolicy};
use crate::store::{ClaimPlace, Document, MAX_STATE_BYTES};
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::{
    Call, ChangeAction, Failure, FailureCode, Holder, InputError, LeasePolicy, LeaseView, Level,
    LockState, LogLine, Outcome, PoolConfig, PoolRequest, QueueEntry, Removal, RemovalReason,
    Reply, ResultWord, RunIdentity,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcquireSettings {
    pub lock: String,
    pub repository: String,
    pub state_branch: String,
    pub holder_id: String,
    pub run: RunIdentity,
    pub nonce: String,
    pub timeout_ms: Millis,
    pub poll_ms: Millis,
    /// The lease asked for with `lease-minutes`; unset, the lock's policy decides.
    pub lease_ms: Option<Millis>,
    pub retry: RetryPolicy,
    /// How this job's numeric id is looked up before enqueueing (`record-job-id`,
    /// `check-run-id`).
    pub job_lookup: JobLookup,
    /// The pull request whose head this job must still be working on (`pull-request`,
    /// `expected-head-sha`).
    pub pr: Option<PrHead>,
    /// What a pool's waiter asks for (`prefer`, `requires`, `partition`, `affinity`), if any.
    pub pool: Option<Box<PoolRequest>>,
}

impl AcquireSettings {
    pub fn parse(raw: &RawInputs, entropy: &Entropy) -> Result<(Self, Vec<String>), InputError> {
        let mut r = Reader::new(raw);
        let (lock, repository, state_branch) = r.lock_target()?;
        let suffix = r.suffix()?;
        let run = r.run_identity()?;
        let timeout_min = r.int(
            "timeout-minutes",
            DEFAULT_TIMEOUT_MINUTES,
            0,
            MAX_TIMEOUT_MINUTES,
        )?;
        let poll_s = r.int(
            "poll-seconds",
            DEFAULT_POLL_SECONDS,
            *POLL_SECONDS_RANGE.start(),
            *POLL_SECONDS_RANGE.end(),
        )?;
        let lease_min = r.int("lease-minutes", 0, 1, MAX_LEASE_MINUTES)?;
        // The action's default is true (the CLI's false).
        let job_lookup = JobLookup::parse(&mut r, &run);
        let holder_id = input::holder_id(&run.repository, run.run_id, &run.job, suffix);
        let pr = PrHead::parse(&r)?;
        let pool = super::pool::parse_request(&r)?.map(Box::new);
        let mut retry = r.retry_policy();
        // Acquire is attempt-bounded (a waiting job holds a runner): no deadline ceiling.
        retry.max_attempts_with_deadline = None;
        let settings = AcquireSettings {
            lock,
            repository,
            state_branch,
            holder_id,
            run,
            nonce: entropy.nonce.clone(),
            timeout_ms: timeout_min * 60_000,
            poll_ms: poll_s * 1_000,
            lease_ms: (lease_min > 0).then_some(lease_min * 60_000),
            retry,
            job_lookup,
            pr,
            pool,
        };
        Ok((settings, r.warnings))
    }
}

pub struct AcquirePlanner {
    pub s: AcquireSettings,
    started_at: Millis,
    queue_position: Option<u32>,
    cancelled: bool,
    head: HeadGate,
    /// The pool's config as last seen (for the granted resource's tags).
    pool_seen: Option<Box<PoolConfig>>,
    /// The lock's incident, once seen (ops/lifecycle.rs): this claim only leaves.
    incident: Option<String>,
    /// The hold times learned from the versions read while waiting: when the next release is due.
    holds: HoldBook,
}

/// How an entry with this holder id but another nonce relates to this claim.
enum Kin {
    /// An earlier run attempt of this job: take it over.
    Predecessor,
    /// This same job (same attempt, same job id or runner): it is ours already.
    SameJob,
    /// Another job with the same holder id in the same attempt, and what tells it apart.
    Collision(String),
    /// A later attempt: not ours to touch.
    Successor,
}

impl AcquirePlanner {
    pub fn new(s: AcquireSettings) -> Self {
        let head = HeadGate::new(s.pr.clone());
        AcquirePlanner {
            s,
            started_at: 0,
            queue_position: None,
            cancelled: false,
            head,
            pool_seen: None,
            incident: None,
            holds: HoldBook::default(),
        }
    }

    fn kin(&self, other: &RunIdentity) -> Kin {
        let mine = &self.s.run;
        if other.run_attempt < mine.run_attempt {
            Kin::Predecessor
        } else if other.run_attempt > mine.run_attempt {
            Kin::Successor
        } else {
            match apart(mine, other) {
                None => Kin::SameJob,
                Some(why) => Kin::Collision(why),
            }
        }
    }

    fn outcome(&self, result: ResultWord, now: Millis) -> Outcome {
        let acquired = result == ResultWord::Acquired;
        let mut o = Outcome::new(
            result,
            matches!(result, ResultWord::Acquired | ResultWord::Timeout),
            &self.s.lock,
            &self.s.holder_id,
        );
        o.acquired = Some(acquired);
        o.wait_ms = Some(now.saturating_sub(self.started_at));
        o.queue_position = self.queue_position;
        self.head.mark(&mut o);
        o
    }

    fn held(&mut self, holder: &Holder, now: Millis, lease: LeaseView) -> Decision {
        let mut o = self.outcome(ResultWord::Acquired, now);
        o.lease = Some(lease);
        o.fence = Some(holder.fence);
        o.nonce = Some(holder.nonce.clone());
        o.queue_position = Some(self.queue_position.unwrap_or(0));
        super::pool::seat_outputs(&mut o, holder, self.pool_seen.as_deref());
        Decision::Finish(o)
    }

    fn refuse(&self, code: FailureCode, message: String, now: Millis) -> Decision {
        Decision::Finish(self.failed(Failure::new(code, message), now))
    }

    /// The lease this claim asks for: `lease-minutes`, within the lock's ceiling, or else the
    /// lock's own lease.
    fn lease_ms(&self, policy: &LeasePolicy) -> Millis {
        self.s
            .lease_ms
            .map_or(policy.ttl_ms, |asked| asked.min(policy.max_ttl_ms))
    }

    fn entry(&self, server_now: Millis, policy: &LeasePolicy) -> QueueEntry {
        QueueEntry {
            holder_id: self.s.holder_id.clone(),
            nonce: self.s.nonce.clone(),
            run: self.s.run.clone(),
            lease_ms: self.lease_ms(policy),
            enqueued_at: server_now,
            last_seen_at: server_now,
            pool: self.s.pool.as_deref().cloned(),
        }
    }

    fn waiting_line(
        &self,
        st: &LockState,
        capacity: Option<u32>,
        position: usize,
        next: Millis,
    ) -> String {
        let holders: Vec<String> = st
            .holders
            .iter()
            .map(|h| {
                let url = if h.run.url.is_empty() {
                    String::new()
                } else {
                    format!(", {}", h.run.url)
                };
                format!(
                    "{} (fence {}, since {}{url})",
                    h.holder_id,
                    h.fence,
                    format_rfc3339(h.acquired_at)
                )
            })
            .collect();
        let cap = capacity
            .map(|c| c.to_string())
            .unwrap_or_else(|| "?".into());
        format!(
            "waiting for {}: position {} of {} in the queue, {}/{} slots held by {}; next poll at {}",
            self.s.lock,
            position + 1,
            st.queue.len(),
            st.holders.len(),
            cap,
            if holders.is_empty() { "nobody".to_string() } else { holders.join("; ") },
            format_rfc3339(next),
        )
    }
}

impl Planner for AcquirePlanner {
    type Doc = LockState;

    fn needs_config(&self) -> bool {
        true
    }

    fn carries(&self, doc: &LockState) -> bool {
        crate::store::carry::uncontended(doc)
    }

    fn start(&mut self, now: Millis) -> Option<Outcome> {
        self.started_at = now;
        None
    }

    fn cancel(&mut self) {
        self.cancelled = true;
    }

    fn first_probe(&mut self) -> Option<Call> {
        self.s.job_lookup.question(&self.s.run)
    }

    fn on_probe(&mut self, sent: &Call, answer: Result<Reply, Failure>, log: &mut Vec<LogLine>) {
        if self.head.owns(sent) {
            self.head.on_answer(answer, log);
            // Superseded or unverified: leave as a cancelled acquire leaves.
            self.cancelled |= self.head.leaving();
            return;
        }
        let (job_id, said) = self.s.job_lookup.answer(&self.s.run, answer);
        self.s.run.job_id = job_id;
        log.push(LogLine {
            level: Level::Info,
            text: said,
        });
    }

    fn failed(&self, failure: Failure, now: Millis) -> Outcome {
        if self.incident.is_some() {
            // The queue entry's removal could not be confirmed.
            let mut o = self.outcome(ResultWord::IncidentCleanupFailed, now);
            o.lifecycle = Some(crate::wire::LifecycleReport {
                incident_id: self.incident.clone(),
                ..Default::default()
            });
            return o.with_error(Failure {
                code: FailureCode::IncidentCleanupFailed,
                ..failure
            });
        }
        self.outcome(ResultWord::Failed, now).with_error(failure)
    }

    fn plan(&mut self, ctx: &mut PlanCtx<'_>) -> Decision {
        if let Some(p) = super::pool::pool_of(ctx.admission.as_ref()) {
            self.pool_seen = Some(Box::new(p.config.clone()));
        }
        let now = ctx.now;
        let st = ctx.state;
        let id = self.s.holder_id.as_str();
        let place = st.find_claim(id, &self.s.nonce);
        // The job list, after a check run id that named no job of this attempt: before the
        // first write, which records the job id.
        if place.is_none() {
            if let Some(question) = self.s.job_lookup.fallback(&self.s.run) {
                return Decision::Probe(question);
            }
        }
        let waiting = matches!(place, Some(ClaimPlace::Queued(_)));
        self.holds.observe(st, ctx.capacity(), waiting);
        let timed_out = self.cancelled || now >= self.started_at.saturating_add(self.s.timeout_ms);
        let gave_up = if self.cancelled {
            ResultWord::Cancelled
        } else {
            ResultWord::Timeout
        };

        // 1. This claim holds.
        if let Some(ClaimPlace::Holding) = place {
            if self.cancelled {
                // Admitted while the job was being cancelled: hand the slot straight back.
                ctx.info(format!(
                    "cancelled after being admitted to {}; giving the slot back",
                    self.s.lock
                ));
                let mut doc = st.clone();
                doc.holders.retain(|h| h.holder_id != id);
                ctx.admit(&mut doc);
                return Decision::Write {
                    doc,
                    action: self.head.action(ChangeAction::Cancel),
                };
            }
            if let Some(question) = self.head.after_admission() {
                return Decision::Probe(question);
            }
            let holder = st.holder(id).expect("claim found").clone();
            if self.queue_position.is_none() {
                self.queue_position = Some(0);
            }
            ctx.info(format!(
                "acquired {} with fence {} after {} ms",
                self.s.lock,
                holder.fence,
                now.saturating_sub(self.started_at)
            ));
            let lease = lease_view(&holder, &ctx.lease, &ctx.clock);
            return self.held(&holder, now, lease);
        }
        // 2. The holder id holds or waits under another nonce.
        let mut doc = st.clone();
        let mut adopted = false;
        // The earlier attempt's holding removed for this rerun (it could not keep its seat):
        // written even by a rerun that gives up at once.
        let mut rerun_removed = false;
        if let Some(h) = st.holder(id) {
            match self.kin(&h.run) {
                // Cancelled: neither return nor take over a holding that is not this claim's.
                Kin::SameJob | Kin::Predecessor if self.cancelled => {
                    return Decision::Finish(self.outcome(ResultWord::Cancelled, now));
                }
                Kin::SameJob => {
                    ctx.info(format!(
                        "{id} already holds {} (fence {}); returning that holding",
                        self.s.lock, h.fence
                    ));
                    let lease = lease_view(h, &ctx.lease, &ctx.clock);
                    return self.held(&h.clone(), now, lease);
                }
                // A holding whose lease ran out is any job's to remove: taken over, the next
                // acquire would remove it from under this one. It is removed below (step 3) as
                // any expired holding is, and this claim queues as any other.
                Kin::Predecessor
                    if h.takeable(ctx.server_now, ctx.lease.grace_ms, ctx.lease.skew_ms) =>
                {
                    ctx.info(format!(
                        "the holding left by run attempt {} of {id} has expired: not taken over",
                        h.run.run_attempt
                    ));
                }
                Kin::Predecessor => match self.reseat(st, ctx) {
                    Reseat::Busy(other) => {
                        ctx.warn(format!(
                            "the holding left by run attempt {} of {id} was on runner {:?}; this attempt runs on {:?}, whose slot {other} holds (runner serialization: one slot a runner). The earlier holding is removed and this attempt queues",
                            h.run.run_attempt, h.run.runner_name, self.s.run.runner_name
                        ));
                        let removal = Removal {
                            holder_id: id.into(),
                            fence: h.fence,
                            expires_at: h.expires_at,
                            reason: RemovalReason::Rerun,
                        };
                        doc.holders.retain(|x| x.holder_id != id);
                        super::lifecycle::expired(
                            &mut doc,
                            &st.holders,
                            std::slice::from_ref(&removal),
                            ctx,
                            "rerun",
                        );
                        ctx.removed.push(removal);
                        adopted = true;
                        rerun_removed = true;
                    }
                    reseat => {
                        ctx.info(format!(
                            "taking over the holding left by run attempt {} of {id}",
                            h.run.run_attempt
                        ));
                        // A new fence: the protected resource must be able to tell the earlier
                        // attempt (which may still be running somewhere) from this one.
                        doc.fence += 1;
                        let fence = doc.fence;
                        let (now, lease_ms) = (ctx.server_now, self.lease_ms(&ctx.lease));
                        let h = doc
                            .holders
                            .iter_mut()
                            .find(|h| h.holder_id == id)
                            .expect("holder");
                        h.nonce = self.s.nonce.clone();
                        h.run = self.s.run.clone();
                        h.fence = fence;
                        h.claimed_at = Some(now);
                        // This attempt's own lease, from now, as an admission grants it: not
                        // what is left of the earlier attempt's.
                        h.acquired_at = now;
                        h.expires_at = now.saturating_add(lease_ms);
                        h.lease_ms = lease_ms;
                        h.ceiling_at = now.saturating_add(ctx.lease.max_ttl_ms);
                        // Under runner serialization the seat carries the runner now running it;
                        // an expired holding there booked no runner and is removed in this write.
                        if let Reseat::Moved(seat) = reseat {
                            h.pool = Some(seat);
                            if self.remove_expired(&mut doc, ctx) {
                                ctx.admit(&mut doc);
                            }
                        }
                        return Decision::Write {
                            doc,
                            action: ChangeAction::Adopt,
                        };
                    }
                },
                Kin::Collision(why) => return self.collision(&why, now),
                Kin::Successor => return self.superseded(h.run.run_attempt, now),
            }
        }
        if let Some(i) = st.queue_index(id) {
            let q = &st.queue[i];
            if q.nonce != self.s.nonce {
                match self.kin(&q.run) {
                    Kin::Predecessor | Kin::SameJob => {
                        ctx.info(format!(
                            "taking over the queue entry left by run attempt {} of {id}",
                            q.run.run_attempt
                        ));
                        let q = &mut doc.queue[i];
                        q.nonce = self.s.nonce.clone();
                        q.run = self.s.run.clone();
                        q.lease_ms = self.lease_ms(&ctx.lease);
                        q.last_seen_at = ctx.server_now;
                        adopted = true;
                    }
                    Kin::Collision(why) => return self.collision(&why, now),
                    Kin::Successor => return self.superseded(q.run.run_attempt, now),
                }
            }
        }
        let mine_queued = doc.queue_index(id);
        // The lifecycle (ops/lifecycle.rs): an incident admits nobody and grows no queue; a
        // refused activation or downgrade writes nothing for a claim not yet queued.
        match super::lifecycle::acquire_gate(&doc, ctx) {
            Gate::Open { activate } => {
                if activate {
                    crate::store::lifecycle::migrate(&mut doc);
                }
            }
            Gate::Incident(incident) => return self.incident(incident, doc, mine_queued, ctx),
            Gate::Refuse(code, message) if mine_queued.is_none() => {
                return self.refuse(code, message, now)
            }
            Gate::Refuse(_, message) => ctx.warn(message),
        }
        if let (Some(i), None, Provenance::Written) =
            (mine_queued, self.queue_position, ctx.provenance)
        {
            self.queue_position = Some(i as u32 + 1);
        }
        // An invalid config stops an acquire that is not queued, whatever its timeout (a zero
        // timeout included: it must never run on a fallback capacity). One that timed out after
        // it wrote has left the queue (or confirms it is not there), and ends `timeout` below.
        // A closed pool's record in the state is not taken for the config (the engine reads the
        // file, which may have been mended), so a closed pool refuses a new claim by that read.
        if mine_queued.is_none() && !(timed_out && ctx.has_written) {
            if let Some(e) = ctx.config_error {
                return self.refuse(FailureCode::ConfigInvalid, e.to_string(), now);
            }
        }
        // The pull request's head, on the poll schedule while queued.
        if let (Some(_), false) = (mine_queued, timed_out) {
            if let Some(question) = self.head.while_queued(st.revision) {
                return Decision::Probe(question);
            }
        }
        // 3. Enqueue and admit from the front.
        let mut changed = adopted;
        let capacity = ctx
            .capacity()
            .expect("acquire plans only with a known capacity");
        if !self.cancelled {
            // Holdings whose lease ran out (by GitHub's clock, past grace and skew) make room.
            changed |= self.remove_expired(&mut doc, ctx);
            if mine_queued.is_none() {
                doc.queue.push(self.entry(ctx.server_now, &ctx.lease));
                changed = true;
            }
            if !ctx.admit(&mut doc).is_empty() {
                changed = true;
            }
            // A queue at its limit (entries, or the bytes GitHub's contents API serves) takes
            // no one more: refuse before writing, never a document nobody could read back.
            if mine_queued.is_none()
                && doc.holder(id).is_none()
                && (doc.queue.len() > MAX_QUEUE || doc.render().len() > MAX_STATE_BYTES)
            {
                return self.refuse(
                    FailureCode::QueueFull,
                    format!(
                        "the queue of {} is full ({} waiting, {} bytes with this entry; at most {MAX_QUEUE} entries and {MAX_STATE_BYTES} bytes): nothing was written",
                        self.s.lock,
                        doc.queue.len() - 1,
                        doc.render().len()
                    ),
                    now,
                );
            }
            if doc.holder(id).is_some() {
                if let Some(question) = self.head.before_admission(st.revision) {
                    return Decision::Probe(question);
                }
                return Decision::Write {
                    doc,
                    action: ChangeAction::Acquire,
                };
            }
        }
        // 4. Not admitted. At the timeout, leave the queue (if this claim ever joined it).
        if timed_out {
            return match mine_queued {
                Some(_) => {
                    let why = if self.cancelled {
                        "cancelled"
                    } else {
                        "timed out"
                    };
                    ctx.info(format!(
                        "{why} after {} ms; leaving the queue of {}",
                        now.saturating_sub(self.started_at),
                        self.s.lock
                    ));
                    let mut doc = st.clone();
                    doc.queue.retain(|q| q.holder_id != id);
                    ctx.admit(&mut doc);
                    Decision::Write {
                        doc,
                        action: if self.cancelled {
                            self.head.action(ChangeAction::Cancel)
                        } else {
                            ChangeAction::Timeout
                        },
                    }
                }
                // Not queued in this version. If this claim ever wrote, a read may be older than
                // its write (a stale cache, or an enqueue whose answer was lost): confirm the
                // absence with a compare-and-swap on this version before saying nothing is left.
                None if ctx.has_written && ctx.provenance == Provenance::Read => Decision::Write {
                    doc: st.clone(),
                    action: if self.cancelled {
                        ChangeAction::CancelCheck
                    } else {
                        ChangeAction::TimeoutCheck
                    },
                },
                // The removal of the earlier attempt's holding stands on its own (nothing of
                // this claim is queued): written, and this claim gives up on the next plan.
                None if rerun_removed && !self.cancelled => {
                    doc.queue.retain(|q| q.holder_id != id);
                    Decision::Write {
                        doc,
                        action: ChangeAction::Timeout,
                    }
                }
                None => {
                    let why = if self.cancelled {
                        "cancelled"
                    } else {
                        "timed out"
                    };
                    ctx.info(format!("{why} waiting for {}", self.s.lock));
                    Decision::Finish(self.outcome(gave_up, now))
                }
            };
        }
        if changed {
            return Decision::Write {
                doc,
                action: ChangeAction::Enqueue,
            };
        }
        let position = mine_queued.expect("queued when nothing changed");
        let deadline = self.started_at.saturating_add(self.s.timeout_ms);
        let starts: Vec<Millis> = st.holders.iter().map(|h| h.acquired_at).collect();
        let wait = next_poll(
            self.s.poll_ms,
            position,
            capacity,
            &starts,
            &self.holds,
            ctx.server_now,
            ctx.rng,
        );
        let oldest = oldest_age(&starts, ctx.server_now).map_or(String::new(), |age| {
            format!(", the oldest holding {age} ms old")
        });
        ctx.debug(match self.holds.typical() {
            Some(t) => format!(
                "hold time about {t} ms (the median of {} seen){oldest}; sleeping {wait} ms",
                self.holds.samples()
            ),
            None => format!("no hold time seen yet{oldest}; sleeping {wait} ms"),
        });
        let mut until = (now + wait).min(deadline);
        // A waiter next in line whose lock is full wakes when the first holding's lease can be
        // taken, if that comes before its next poll, instead of polling blindly.
        if (position as u32) < capacity {
            let takeable = st
                .holders
                .iter()
                .map(|h| ctx.lease.takeable_after(h.expires_at))
                .min();
            if let Some(t) = takeable {
                // The first local instant GitHub's clock may be past it, plus a second.
                let at = ctx
                    .clock
                    .local_deadline_for(t)
                    .saturating_add(TAKEABLE_WAKE_MARGIN_MS)
                    .max(now + TAKEABLE_WAKE_MARGIN_MS);
                until = until.min(at);
            }
        }
        // A cooldown ending first wakes it then (plus a jitter), not a blind poll later.
        let until = super::lifecycle::cooldown_wake(st, ctx, until).min(deadline);
        let mut line = self.waiting_line(st, Some(capacity), position, until);
        if let Some(pool) = super::pool::pool_of(ctx.admission.as_ref()) {
            if let Some(why) = super::pool::why_waiting(pool, st, id, ctx.server_now) {
                line.push_str(&format!("; waiting because: {why}"));
            }
        }
        ctx.info(line);
        self.head.polled();
        Decision::Sleep { until }
    }
}

impl AcquirePlanner {
    /// The lock's incident stands: leave the queue (a write), confirm the absence when this
    /// claim ever wrote, then finish `incident`.
    fn incident(
        &mut self,
        incident: String,
        mut doc: LockState,
        mine_queued: Option<usize>,
        ctx: &mut PlanCtx<'_>,
    ) -> Decision {
        self.incident = Some(incident.clone());
        let id = self.s.holder_id.clone();
        if mine_queued.is_some() {
            ctx.warn(format!(
                "the incident {incident} of {} stands; leaving the queue",
                self.s.lock
            ));
            doc.queue.retain(|q| q.holder_id != id);
            return Decision::Write {
                doc,
                action: ChangeAction::Incident,
            };
        }
        if ctx.has_written && ctx.provenance == Provenance::Read {
            return Decision::Write {
                doc: ctx.state.clone(),
                action: ChangeAction::IncidentCheck,
            };
        }
        let o = self.outcome(ResultWord::Incident, ctx.now);
        Decision::Finish(super::lifecycle::incident_outcome(o, &incident))
    }

    fn collision(&self, why: &str, now: Millis) -> Decision {
        self.refuse(
            FailureCode::HolderCollision,
            format!(
                "holder id {} is already used by another job of this run attempt ({}); give each matrix cell its own `holder-suffix`, e.g. ${{{{ strategy.job-index }}}}",
                self.s.holder_id, why
            ),
            now,
        )
    }

    /// Removes from `doc` every holding whose lease ran out (by GitHub's clock, past grace and
    /// skew), quarantined under the lifecycle, each said and recorded as removed. Returns whether
    /// any was.
    fn remove_expired(&self, doc: &mut LockState, ctx: &mut PlanCtx<'_>) -> bool {
        let before = doc.holders.clone();
        let removed = doc.expire(ctx.server_now, ctx.lease.grace_ms, ctx.lease.skew_ms);
        super::lifecycle::expired(doc, &before, &removed, ctx, "expired");
        for r in &removed {
            ctx.warn(format!(
                "removing {} (fence {}) from {}: its lease ran out at {} and was not renewed",
                r.holder_id,
                r.fence,
                self.s.lock,
                format_rfc3339(r.expires_at)
            ));
        }
        let any = !removed.is_empty();
        ctx.removed.extend(removed);
        any
    }

    /// Where taking over this holder id's holding in `st` leaves its seat (a pool's runner
    /// atom, `admission::reseat`).
    fn reseat(&self, st: &LockState, ctx: &PlanCtx<'_>) -> Reseat {
        match super::pool::pool_of(ctx.admission.as_ref()) {
            Some(p) => reseat(
                &p.config,
                st,
                &self.s.holder_id,
                &self.s.run.runner_name,
                |h: &Holder| !h.takeable(ctx.server_now, ctx.lease.grace_ms, ctx.lease.skew_ms),
            ),
            None => Reseat::Unchanged,
        }
    }

    fn superseded(&self, attempt: u32, now: Millis) -> Decision {
        self.refuse(
            FailureCode::Superseded,
            format!(
                "holder id {} belongs to run attempt {attempt}, newer than this attempt {}; an older attempt never takes over a newer one",
                self.s.holder_id, self.s.run.run_attempt
            ),
            now,
        )
    }
}
