//! The driver loop every operation runs through, as `actions/lib/driver.mjs` runs it: feed
//! `start`; perform each request command and feed its reply (`cancelledReply` once if the job
//! began to be cancelled while it was in flight); sleep until `untilMs` (on the client's own
//! clock) and feed `timer`, or `cancel` once when the job is being cancelled; stop
//! at `finish`, and go on to the job's next step. What the core is told, and what it finished
//! with, is fed to the checker as it happens.

use leasehold_core::guard::Phase;
use leasehold_core::{
    Call, Command, Entropy, Event, FailureCode, Operation, OperationKind, Outcome, Reply,
    ResultWord, SleepReason,
};

use crate::checker::Feed;
use crate::fault::Fault;
use crate::github::wire::{actions_index, describe, describe_reply};
use crate::github::{Request, WriteRec};
use crate::planted::PlantedBug;
use crate::types::{fmt_t, Fed, Invariant, Stage, T0};
use crate::world::Ev;

use super::env::Env;

impl Env<'_> {
    pub(crate) fn start_op(&mut self, c: usize, kind: OperationKind) {
        let inputs = self.inputs(c, kind);
        let nonce = match kind {
            OperationKind::Acquire => self.clients[c].nonce.clone(),
            _ => format!("{:016x}", self.world.rng.next_u64()),
        };
        let entropy = Entropy {
            seed: self.world.rng.next_u64(),
            nonce,
        };
        let (op, _plan) =
            Operation::new(kind, &inputs, &entropy).expect("the simulation's inputs are valid");
        let cl = &mut self.clients[c];
        cl.op = Some(op);
        cl.op_started = self.now;
        cl.op_gen += 1;
        cl.epoch += 1;
        cl.sleeping = false;
        self.tell(Feed::OperationStarted { client: c, kind });
        let cl = &mut self.clients[c];
        if kind == OperationKind::Reap {
            cl.stage = Stage::Reap;
            self.world.counters.reaper.runs += 1;
            self.log(|w| format!("{} Reap starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if kind == OperationKind::ReportUsage {
            // A reporter's one operation: a scheduled run's, as a reap is.
            cl.stage = Stage::Reap;
            self.world.counters.usage_reports += 1;
            self.log(|w| format!("{} ReportUsage starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if kind == OperationKind::Recover {
            // An operator's one operation: a run of its own, as a reap is.
            cl.stage = Stage::Reap;
            self.log(|w| format!("{} Recover starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if kind == OperationKind::Renew {
            // The guard's renewal runs within the work step: the belief stays as it is.
            cl.stage = Stage::Hold;
            self.world.counters.renews += 1;
            self.log(|w| format!("{} Renew starts", w.who(c)));
            let now = self.clients[c].clock.local(self.now);
            return self.feed(c, Event::Start { now });
        }
        if cl.stage == Stage::Hold {
            cl.hold_gen += 1;
        }
        cl.guard = None;
        cl.belief_until = None;
        cl.stage = match kind {
            OperationKind::Acquire => Stage::Acquire,
            OperationKind::Release => Stage::Release,
            OperationKind::Cleanup => Stage::Cleanup,
            _ => unreachable!("jobs run acquire, the guard's renew, release and cleanup only"),
        };
        match kind {
            OperationKind::Acquire => self.world.counters.acquires += 1,
            OperationKind::Release => self.world.counters.releases += 1,
            _ => self.world.counters.cleanups += 1,
        }
        self.log(|w| format!("{} {:?} starts", w.who(c), kind));
        let now = self.clients[c].clock.local(self.now);
        self.feed(c, Event::Start { now });
    }

    pub(crate) fn feed(&mut self, c: usize, event: Event) {
        self.world.counters.client_ops += 1;
        let result = self.clients[c]
            .op
            .as_mut()
            .expect("a running operation")
            .step(event);
        match result {
            Err(e) => {
                self.violate(
                    Invariant::Protocol,
                    format!("{}: the core refused an event: {e}", self.who(c)),
                );
            }
            Ok(step) => {
                if self.world.trace.is_some() {
                    for line in &step.log {
                        let text = format!("{} core says: {}", self.who(c), line.text);
                        self.log(|_| text);
                    }
                }
                self.perform(c, step.command);
            }
        }
    }

    pub(crate) fn perform(&mut self, c: usize, command: Command) {
        match command {
            Command::Sleep { until_ms, reason } => {
                let cl = &mut self.clients[c];
                if cl.cancelled && !cl.cancel_told && cl.stage == Stage::Acquire {
                    // The driver does not sleep once the cancel signal arrived: it tells the core.
                    return self.tell_cancel(c);
                }
                cl.sleeping = true;
                cl.epoch += 1;
                let epoch = cl.epoch;
                let at = cl.clock.real_at(until_ms, self.now);
                self.log(|w| format!("{} sleeps {:?} for {} ms", w.who(c), reason, at - w.now));
                if reason == SleepReason::Poll {
                    self.world.counters.polls += 1;
                }
                self.push(at, Ev::Timer(c, epoch));
            }
            Command::Finish { outcome } => self.finished(c, *outcome),
            request => self.send(c, request, None),
        }
    }

    pub(crate) fn send(&mut self, c: usize, command: Command, write: Option<usize>) {
        self.world.counters.requests += 1;
        let timeout = match &command {
            Command::Request {
                call: Call::ReadFile { .. },
                timeout_ms,
            } => {
                self.world.counters.reads += 1;
                *timeout_ms
            }
            Command::Request {
                call: Call::WriteFile { .. },
                timeout_ms,
            } => {
                self.world.counters.writes += 1;
                *timeout_ms
            }
            Command::Request {
                call: Call::CreateTree { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::CreateCommit { .. },
                timeout_ms,
            }
            | Command::Request {
                call:
                    Call::CreateBranch { .. }
                    | Call::Graphql { .. }
                    | Call::CreateRef { .. }
                    | Call::GetRef { .. }
                    | Call::ListMatchingRefs { .. }
                    | Call::ListCommits { .. },
                timeout_ms,
            } => {
                self.world.counters.creates += 1;
                *timeout_ms
            }
            // The simulation's clients name no pull request and post no receipt or alert.
            Command::Request {
                call:
                    Call::GetViewer
                    | Call::ListComments { .. }
                    | Call::CreateComment { .. }
                    | Call::GetPullRequest { .. }
                    | Call::ListWorkflowRuns { .. }
                    | Call::ListIssues { .. }
                    | Call::CreateIssue { .. }
                    | Call::UpdateIssue { .. },
                timeout_ms,
            } => *timeout_ms,
            Command::Request {
                call: Call::GetRunAttempt { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::GetJob { .. },
                timeout_ms,
            }
            | Command::Request {
                call: Call::ListJobs { .. },
                timeout_ms,
            } => {
                self.world.counters.reaper.actions_requests[actions_index(&command)] += 1;
                *timeout_ms
            }
            Command::Sleep { .. } | Command::Finish { .. } => unreachable!("not a request"),
        };
        // A new write of the state: a contents write, or the state branch's ref with the state
        // in its commit.
        let written = match &command {
            Command::Request {
                call: Call::WriteFile { .. },
                ..
            } => true,
            Command::Request {
                call: Call::CreateBranch { branch, sha },
                ..
            } => self.gh.store.state_in(branch, sha).is_some(),
            _ => false,
        };
        let write = match write {
            Some(w) => {
                self.gh.writes[w].sends += 1;
                Some(w)
            }
            None if written => {
                self.gh.writes.push(WriteRec {
                    client: c,
                    sends: 1,
                });
                Some(self.gh.writes.len() - 1)
            }
            None => None,
        };
        let req = self.gh.requests.len();
        self.log(|w| format!("{} → {}", w.who(c), describe(&command)));
        let what = match &command {
            Command::Request {
                call: Call::ReadFile { path, .. },
                ..
            } if path.ends_with(".config.json") => "GET config",
            Command::Request {
                call: Call::ReadFile { .. },
                ..
            } => "GET state",
            Command::Request {
                call: Call::WriteFile { .. },
                ..
            } => "PUT state",
            Command::Request {
                call: Call::GetRunAttempt { .. },
                ..
            }
            | Command::Request {
                call: Call::GetJob { .. },
                ..
            }
            | Command::Request {
                call: Call::ListJobs { .. },
                ..
            } => "GET actions",
            _ => "POST git",
        };
        self.tell(Feed::RequestSent { client: c, what });
        let written = match &command {
            Command::Request {
                call: Call::WriteFile { sha, content, .. },
                ..
            } => Some((sha.clone(), content.clone())),
            Command::Request {
                call: Call::CreateBranch { branch, sha },
                ..
            } => self
                .gh
                .store
                .state_in(branch, sha)
                .map(|content| (None, content.to_string())),
            _ => None,
        };
        if let (Some(w), Some((sha, content))) = (write, &written) {
            // A new write of the core (the planted driver bug's re-sends are not).
            if self.gh.writes[w].sends == 1 {
                let (base, content) = (sha.as_deref(), content.as_str());
                let feed = Feed::WriteSent {
                    client: c,
                    write: w,
                    base,
                    content,
                };
                let breach = self.checker.feed(self.now, feed);
                self.breach(breach);
            }
        }
        let op_gen = self.clients[c].op_gen;
        self.gh.requests.push(Request {
            client: c,
            op_gen,
            command,
            write,
            reply: None,
            answered_at: self.now,
            answered: false,
            served: None,
        });
        let p = &self.world.params.profile;
        let (not_sent, late, crash) = (p.not_sent_ppm, p.late_arrival_ppm, p.crash_in_flight_ppm);
        let faulty = self.faulty();
        if faulty && self.world.rng.ppm(not_sent) {
            self.count(Fault::NotSent);
            self.gh.requests[req].reply = Some(Reply::Transport {
                sent: false,
                message: "ECONNREFUSED".into(),
            });
            let at = self.now + self.world.rng.between(1, 100);
            self.push(at, Ev::Respond(req));
            return;
        }
        let up = if faulty && self.world.rng.ppm(late) {
            self.count(Fault::LateArrival);
            timeout + self.world.rng.between(1, 10_000)
        } else {
            self.world.rng.between(5, 250)
        };
        if !self.clients[c].is_reaper() {
            self.gh.jobs_in_flight += 1;
        }
        self.push(self.now + up, Ev::Arrive(req));
        self.push(self.now + timeout, Ev::Timeout(req));
        if faulty && self.world.rng.ppm(crash) {
            self.crash(c, Fault::CrashInFlight);
        }
    }

    /// An answer (or the client's own timeout) reaches the driver.
    pub(crate) fn deliver(&mut self, c: usize, req: usize, reply: Reply) {
        if let Some(w) = self.gh.requests[req].write {
            if self.world.cfg.planted == Some(PlantedBug::ResendUnknownWrite)
                && Fed::of(&reply) == Fed::Unknown
                && self.gh.writes[w].sends < 3
            {
                // Planted (driver side): a naive HTTP retry of a write whose outcome is unknown,
                // hiding the first answer from the core.
                let command = self.gh.requests[req].command.clone();
                self.log(|w| {
                    format!(
                        "{} (planted bug) re-sends the write after {}",
                        w.who(c),
                        describe_reply(&reply)
                    )
                });
                self.send(c, command, Some(w));
                return;
            }
            if matches!(reply, Reply::Written { .. } | Reply::Created { .. })
                && self.faulty()
                && self
                    .world
                    .rng
                    .ppm(self.world.params.profile.crash_after_write_ppm)
            {
                self.crash(c, Fault::CrashAfterWrite);
                return;
            }
            let fed = match (&reply, &self.gh.requests[req].command) {
                // The ref carrying the state was created: the write's version is the state
                // file's blob id (what the core carries on), not the commit's.
                (
                    Reply::Created { .. },
                    Command::Request {
                        call: Call::CreateBranch { branch, sha },
                        ..
                    },
                ) => match self.gh.store.state_in(branch, sha) {
                    Some(content) => Fed::Success(leasehold_core::blob_sha(content)),
                    None => Fed::of(&reply),
                },
                _ => Fed::of(&reply),
            };
            self.tell(Feed::WriteTold { write: w, fed });
        }
        if let (Some(version), Reply::File { .. } | Reply::NotModified { .. }) =
            (self.gh.requests[req].served, &reply)
        {
            let file = matches!(reply, Reply::File { .. });
            self.tell(Feed::Shown {
                client: c,
                version,
                file,
            });
        }
        let dated = match &reply {
            Reply::File { date, .. }
            | Reply::Written { date, .. }
            | Reply::Http { date, .. }
            | Reply::Run { date, .. }
            | Reply::Job { date, .. }
            | Reply::Jobs { date, .. } => date.is_some(),
            _ => false,
        };
        let answered_at = self.gh.requests[req].answered_at;
        if self.clients[c].is_reaper() {
            self.record_told(c, &reply, answered_at);
        }
        self.log(|w| format!("{} ← {}", w.who(c), describe_reply(&reply)));
        let transport = matches!(reply, Reply::Transport { .. });
        self.tell(Feed::Answered {
            client: c,
            answered_at,
            dated,
            transport,
        });
        let now = self.clients[c].clock.local(self.now);
        let cl = &mut self.clients[c];
        if cl.cancelled && !cl.cancel_told && cl.stage == Stage::Acquire {
            // As the driver does: a cancel that came while the request was in flight goes with
            // its answer.
            cl.cancel_told = true;
            cl.sleeping = false;
            self.world.counters.cancelled_replies += 1;
            self.feed(c, Event::CancelledReply { now, reply });
        } else {
            self.feed(c, Event::Reply { now, reply });
        }
    }

    pub(crate) fn finished(&mut self, c: usize, outcome: Outcome) {
        let result = outcome.result;
        let stage = self.clients[c].stage;
        let what = match stage {
            Stage::Acquire => "acquire",
            Stage::Hold
                if self.clients[c]
                    .guard
                    .as_ref()
                    .is_some_and(|g| g.machine.phase() == Phase::Verifying) =>
            {
                "guard-verify"
            }
            Stage::Hold => "renew",
            Stage::Release => "release",
            Stage::Reap if self.runs[self.clients[c].run].usage.is_some() => "report-usage",
            Stage::Reap if self.runs[self.clients[c].run].operator.is_some() => "recover",
            Stage::Reap => "reap",
            _ => "cleanup",
        };
        *self
            .world
            .counters
            .results
            .entry(format!("{what} {}", result.as_str()))
            .or_default() += 1;
        self.clients[c].op = None;
        self.log(|w| {
            format!(
                "{} {:?} finishes: {}{}{}{}",
                w.who(c),
                stage,
                result.as_str(),
                outcome
                    .fence
                    .map(|f| format!(" fence {f}"))
                    .unwrap_or_default(),
                outcome
                    .lease
                    .as_ref()
                    .map(|l| format!(
                        " (lease: expiresAt {}, local deadline in {} ms)",
                        fmt_t(l.expires_at),
                        l.local_deadline as i64 - w.clients[c].clock.local(w.now) as i64
                    ))
                    .unwrap_or_default(),
                outcome
                    .error
                    .as_ref()
                    .map(|e| format!(" ({}: {})", e.code, e.message))
                    .unwrap_or_default()
            )
        });
        // 28: an acquire told of the job's cancel (at a sleep, or with an answer) leaves what it
        // joined: it never finishes `acquired` (a cancelled job would keep the slot).
        if stage == Stage::Acquire && self.clients[c].cancel_told && result == ResultWord::Acquired
        {
            self.violate(
                Invariant::CancelHeard,
                format!(
                    "{} was told the job's cancel and finished its acquire acquired (fence {:?})",
                    self.who(c),
                    outcome.fence
                ),
            );
            return;
        }
        let quiet = self.clients[c].op_started >= T0 + self.world.params.profile.until;
        let excused = match stage {
            // A cancelled acquire ends `cancelled`, a failure by design; the steps after it are
            // not excused.
            // So is `incident` where a run reports its resource blocked: nobody is admitted.
            Stage::Acquire => {
                self.clients[c].cancelled
                    || (result == ResultWord::Incident
                        && self
                            .world
                            .params
                            .lifecycle
                            .as_ref()
                            .is_some_and(|l| l.incidents()))
            }
            // A renewal the guard no longer waits for, or one started when the proven lease's
            // deadline had passed (the verification after an acquire answered late), may find
            // the holding expired and removed.
            Stage::Hold => !self.renewal_counts(c),
            // A release whose report the run gave invalid on purpose fails its step by design
            // once it has left (the report degraded to a quarantine); a valid one never does.
            Stage::Release => {
                let invalid = self.world.params.lifecycle.as_ref().is_some_and(|l| {
                    l.reports
                        .get(self.clients[c].run)
                        .is_some_and(|r| r.degrades())
                });
                let degraded = outcome
                    .lifecycle
                    .as_ref()
                    .is_some_and(|l| l.report_degraded);
                invalid
                    && degraded
                    && matches!(
                        result,
                        ResultWord::Released | ResultWord::QueueCleaned | ResultWord::Noop
                    )
            }
            // An operator's recovery fails by design when told a wrong id or no confirmation,
            // and when what it read is gone by the time it runs (reclaimed, recovered by the
            // reaper or another of its runs).
            // A usage reading drawn ahead of GitHub's clock (6 to 20 minutes past its start) is
            // refused as from the future, unless faults held it back until GitHub's clock came
            // within 5 minutes of it.
            Stage::Reap if self.runs[self.clients[c].run].usage.is_some() => {
                let run = &self.runs[self.clients[c].run];
                let ahead = run
                    .usage
                    .and_then(|i| self.world.params.pool.as_ref()?.readings.get(i))
                    .is_some_and(|r| r.observed_at > crate::types::T0 + r.start_ms + 5 * 60_000);
                ahead
                    && outcome
                        .error
                        .as_ref()
                        .is_some_and(|e| e.code == FailureCode::InvalidInput)
            }
            Stage::Reap => self.runs[self.clients[c].run]
                .operator
                .as_ref()
                .is_some_and(|act| {
                    act.refused()
                        || outcome.error.as_ref().is_some_and(|e| {
                            matches!(
                                e.code,
                                FailureCode::NoSuchReservation | FailureCode::NoSuchIncident
                            )
                        })
                }),
            _ => false,
        };
        if outcome
            .lifecycle
            .as_ref()
            .is_some_and(|l| l.report_degraded)
        {
            self.world.counters.lifecycle.degraded += 1;
        }
        if quiet && self.clients[c].zombie_since.is_none() && !excused && !outcome.success {
            let error = outcome
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.code, e.message))
                .unwrap_or_default();
            self.violate(
                Invariant::Liveness,
                format!(
                    "{} {:?} started after faults stopped and ended {} ({error})",
                    self.who(c),
                    stage,
                    result.as_str()
                ),
            );
            return;
        }
        match stage {
            Stage::Acquire => {
                self.clients[c].acquire_result = Some(result);
                self.clients[c].acquire_revision = outcome.state.as_ref().map(|s| s.revision);
                self.clients[c].acquire_carry = outcome.carry.as_ref().map(|c| c.value.clone());
                self.check_sweep_acquire(c, result);
                if self.world.violation.is_some() {
                    return;
                }
                if result == ResultWord::Acquired {
                    let fence = outcome.fence.unwrap_or(0);
                    let nonce = outcome.nonce.clone().unwrap_or_default();
                    let Some(lease) = outcome.lease.clone() else {
                        return self.violate(
                            Invariant::Protocol,
                            format!("{} acquired without a lease in its outcome", self.who(c)),
                        );
                    };
                    // The real instant of the deadline, even past (a pause before the answer).
                    let until = self.clients[c].clock.real_of(lease.local_deadline);
                    if until <= self.now {
                        // Acquired, but the deadline has passed (a pause longer than the lease
                        // between the write and its answer): no work under this lease.
                        self.world.counters.acquired_past_deadline += 1;
                        self.log(|w| {
                            format!(
                                "{} acquired with its lease's local deadline already past",
                                w.who(c)
                            )
                        });
                    }
                    let feed = Feed::Acquired {
                        client: c,
                        fence,
                        nonce: &nonce,
                        lease: &lease,
                    };
                    let breach = self.checker.feed(self.now, feed);
                    self.breach(breach);
                    self.clients[c].belief_until = Some(until);
                    self.start_guard(c, lease);
                } else {
                    self.start_op(c, OperationKind::Release);
                }
            }
            Stage::Release => {
                self.clients[c].release_result = Some(result);
                let kind = OperationKind::Release;
                self.tell(Feed::ReleaseEnded {
                    client: c,
                    kind,
                    result,
                });
                if self.world.violation.is_none() {
                    self.start_op(c, OperationKind::Cleanup);
                }
            }
            Stage::Cleanup => {
                self.clients[c].stage = Stage::Done;
                // The cleanup's noop is not confirmed by a write (best effort): only the release
                // step's success, or a cleanup that removed the claim, leaves the lock clean.
                let removed = matches!(result, ResultWord::Released | ResultWord::QueueCleaned);
                let kind = OperationKind::Cleanup;
                self.tell(Feed::ReleaseEnded {
                    client: c,
                    kind,
                    result,
                });
                let released = self.clients[c].release_result.is_some_and(|r| {
                    matches!(
                        r,
                        ResultWord::Released | ResultWord::QueueCleaned | ResultWord::Noop
                    )
                });
                self.job_ended(c, released || removed);
            }
            Stage::Hold => self.renewal_finished(c, outcome),
            Stage::Reap if self.runs[self.clients[c].run].operator.is_some() => {
                self.operator_finished(c, &outcome);
                self.clients[c].stage = Stage::Done;
                self.job_ended(c, outcome.success);
            }
            Stage::Reap if self.runs[self.clients[c].run].usage.is_some() => {
                self.clients[c].stage = Stage::Done;
                self.job_ended(c, outcome.success);
            }
            Stage::Reap => {
                self.reap_finished(c, &outcome);
                self.clients[c].stage = Stage::Done;
                self.job_ended(c, outcome.success);
            }
            Stage::NotStarted | Stage::Done => unreachable!("no operation runs in {stage:?}"),
        }
    }
}
