//! The guard. A guard runs a child process under a live holding: it verifies the holding with a
//! renewal, starts the child, renews the lease on a timer (one renewal at a time), and stops the
//! child's process group when the holding is proven lost or when the local deadline passes
//! without a proven renewal. A renewal that fails for a transport reason is not a lost holding:
//! the child runs on until the local deadline, and the renewal is retried before it.
//!
//! [`decide`] holds the schedule (when to renew, how long to wait, when to stop); [`Guard`] is
//! the whole loop as a sans-IO state machine around it. A driver (the guard action and
//! `leasehold guard` in `actions/lib/guard.mjs`, and the simulator) feeds it [`GuardEvent`]s and
//! performs the [`GuardCommand`]s each step returns, in order; none of them blocks. The driver
//! keeps at most one timer: a `wait-until` replaces the one armed before.
//!
//! ```text
//!  started           → verify
//!  verified renewed  → spawn, wait-until(renew at)        (or finish 13: deadline already past)
//!  verified other    → finish 14 not-held
//!  timer fired       → renew(until), wait-until(until)   | wait-until(t) | stop
//!  renewal ended     → wait-until(t) | renew… | stop
//!  stop              → signal SIGTERM, wait-until(now + kill grace)
//!  timer (grace)     → signal SIGKILL (to the group, even when the child has exited), finish
//!                      (the child still running: wait-until(now + kill grace), SIGKILL again)
//!  child exited      → finish | (renewal in flight) wait for it until its deadline, then finish
//!  signal received   → signal (the same, to the group)
//! ```

use serde::Serialize;

use crate::input::{RawInputs, Reader};
use crate::wire::time::{format_rfc3339, Millis};
use crate::wire::words;
use crate::wire::{
    AnswerClass, Error, InputError, LeaseView, Level, LogLine, Outcome, ProtocolError, ResultWord,
    Status,
};

use crate::policy::limits::{GUARD_RETRY_DIVISOR, SECOND_SIGNAL_KILL_MS, SIGNAL_KILL_GRACE_MS};
pub use crate::policy::limits::{GUARD_RETRY_FLOOR_MS as RETRY_FLOOR_MS, KILL_GRACE_SECONDS};

/// The guard's exit codes, in one place. A child that ends by itself passes its own code through
/// (`signal_base` + the signal's number when a signal ended it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitCodes {
    /// Bad usage (the command line), or an input that breaks its rule.
    pub usage: i32,
    /// A renewal proved the holding lost; the child was stopped.
    pub lost: i32,
    /// The local deadline passed without a proven renewal; the child was stopped.
    pub deadline: i32,
    /// The holding could not be verified at start; the child never ran.
    pub not_held: i32,
    /// The child could not be started.
    pub spawn_failed: i32,
    /// Added to the number of the signal that ended the child.
    pub signal_base: i32,
}

/// The guard's own verdicts are rows of the one exit-code table (`wire::exit`): usage 2, lost
/// and deadline both 13 (`lost`: stop, the work is forfeit; the finish `reason` tells which),
/// not held at start 14. A child's own code can collide with them: read the JSON's `reason`.
pub const EXIT_CODES: ExitCodes = ExitCodes {
    usage: 2,
    lost: 13,
    deadline: 13,
    not_held: 14,
    spawn_failed: 127,
    signal_base: 128,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "kebab-case")]
pub enum LastRenewal {
    /// No renewal since the holding was verified.
    None,
    Renewed,
    NotDue,
    /// The renewal proved the holding lost.
    Lost,
    /// The renewal could not be completed (GitHub unavailable, rate limited…).
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct GuardInput {
    pub now: Millis,
    /// The lease as last proven (by the verification or the last successful renewal).
    pub lease: LeaseView,
    pub last: LastRenewal,
    /// When the last renewal attempt ended (for spacing retries after a failure).
    #[serde(default)]
    pub last_attempt_at: Option<Millis>,
    /// How long stopping the child may take (SIGTERM, then SIGKILL after this): the stop
    /// starts this long before the local deadline, so the child is gone by it.
    #[serde(default)]
    pub kill_grace_ms: Millis,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum GuardDecision {
    /// Renew now; a renewal not proven by `until` (local clock) proves nothing: stop then.
    #[serde(rename_all = "camelCase")]
    Renew { until: Millis },
    /// Nothing to do before `until` (local clock); then ask again.
    #[serde(rename_all = "camelCase")]
    Wait { until: Millis },
    /// Stop the child's process group.
    Kill { reason: KillReason },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "kebab-case")]
pub enum KillReason {
    /// A renewal proved the holding lost (taken over, released, expired and removed).
    Lost,
    /// The local deadline passed without a proven renewal.
    Deadline,
}

/// The schedule: what a guard whose child runs does next.
pub fn decide(input: &GuardInput) -> GuardDecision {
    // The child must be gone by the local deadline: the stop begins a kill grace before it.
    let deadline = stop_at(&input.lease, input.kill_grace_ms);
    if input.last == LastRenewal::Lost {
        return GuardDecision::Kill {
            reason: KillReason::Lost,
        };
    }
    if input.now >= deadline {
        return GuardDecision::Kill {
            reason: KillReason::Deadline,
        };
    }
    let retry_after =
        |at: Millis| at + (input.lease.renew_ms / GUARD_RETRY_DIVISOR).max(RETRY_FLOOR_MS);
    let next = match (input.last, input.last_attempt_at) {
        // After a failure, try again soon (a tenth of the renew interval, at least 5 s), well
        // before the deadline.
        (LastRenewal::Failed, Some(at)) => retry_after(at),
        // Not due yet by GitHub's clock (the lease given is the one that answer proved): at its
        // renew time, but never sooner than a retry, so clocks that disagree cannot make a loop.
        (LastRenewal::NotDue, Some(at)) => input.lease.renew_at.max(retry_after(at)),
        _ => input.lease.renew_at,
    };
    if input.now >= next {
        GuardDecision::Renew { until: deadline }
    } else {
        GuardDecision::Wait {
            until: next.min(deadline),
        }
    }
}

/// When the stop must begin under `lease`: a kill grace before its local deadline.
fn stop_at(lease: &LeaseView, kill_grace_ms: Millis) -> Millis {
    lease.local_deadline.saturating_sub(kill_grace_ms)
}

/// The guard's own inputs (the renewals' inputs are the renew operation's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct GuardSettings {
    /// `kill-grace-seconds`, in milliseconds: SIGTERM, then SIGKILL this much later.
    pub kill_grace_ms: Millis,
}

impl GuardSettings {
    /// Reads `kill-grace-seconds` (whole seconds, 1 to 300, default 10).
    pub fn parse(inputs: &RawInputs) -> Result<Self, InputError> {
        let (default, min, max) = KILL_GRACE_SECONDS;
        let seconds = Reader::new(inputs).int("kill-grace-seconds", default, min, max)?;
        Ok(GuardSettings {
            kill_grace_ms: seconds * 1_000,
        })
    }
}

words! {
    /// A signal the guard sends or receives. SIGBREAK is Windows' Ctrl-Break, the runner's
    /// second cancellation signal there: it is received, never sent (it goes on as SIGTERM).
    pub enum Signal {
        Int = "SIGINT",
        Term = "SIGTERM",
        Hup = "SIGHUP",
        Kill = "SIGKILL",
        Break = "SIGBREAK",
    }
}

/// How long after the `nth` signal received (1 for the first) SIGKILL goes to the command's
/// group: within the runner's window after a cancel (a second signal brings it closer), never
/// later than the kill grace. The guard and the cleanup command's run both follow it.
pub fn signal_kill_after(nth: u32, kill_grace_ms: Millis) -> Millis {
    match nth {
        0 | 1 => SIGNAL_KILL_GRACE_MS,
        _ => SECOND_SIGNAL_KILL_MS,
    }
    .min(kill_grace_ms)
}

impl Signal {
    /// The signal a received one goes on to the child's group as.
    pub fn forwarded(self) -> Signal {
        match self {
            Signal::Break => Signal::Term,
            other => other,
        }
    }
}

/// How the child ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ChildExit {
    /// It exited with `code`.
    Exited { code: i32 },
    /// A signal ended it (`number` as the platform numbers it).
    Signalled { signal: String, number: i32 },
    /// It could not be started.
    SpawnFailed { message: String },
}

/// What the driver tells the guard. `now` is the local clock, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GuardEvent {
    /// The guard starts.
    Started { now: Millis },
    /// The verifying renewal (after `verify`) ended with `outcome` (a renew operation's).
    Verified { now: Millis, outcome: Box<Outcome> },
    /// A renewal (after `renew`) ended with `outcome` (a renew operation's).
    RenewalEnded { now: Millis, outcome: Box<Outcome> },
    /// The armed timer fired.
    TimerFired { now: Millis },
    /// The child ended (or could not be started).
    ChildExited { now: Millis, exit: ChildExit },
    /// The guard received SIGINT, SIGTERM, SIGHUP or SIGBREAK.
    SignalReceived { now: Millis, signal: Signal },
}

impl GuardEvent {
    /// The event's `kind`, as serde writes it (the one spelling of it).
    fn name(&self) -> String {
        crate::wire::tag_of(self, "kind").unwrap_or_default()
    }
}

/// What the driver does, in the order given; none of these blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GuardCommand {
    /// Start the verifying renewal (a renew operation); its end is `verified`.
    Verify,
    /// Start the child (no shell, in its own process group) under `lease`, and forward the
    /// signals the guard receives from now on (`signal-received`).
    Spawn { lease: LeaseView },
    /// Start a renewal (a renew operation); its end is `renewal-ended`. Not proven by `until`
    /// (local clock), it proves nothing.
    Renew { until: Millis },
    /// Arm the timer for `at` (local clock), replacing the one armed before; `timer-fired` then.
    WaitUntil { at: Millis },
    /// Send `signal` to the child's process group.
    Signal { signal: Signal },
    /// Done: exit with `exit_code`.
    Finish(Finish),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
#[serde(rename_all = "camelCase")]
pub struct Finish {
    pub exit_code: i32,
    pub reason: FinishReason,
    /// How the child ended (none: it never ran).
    pub child: Option<ChildExit>,
    /// Renewals after the verification that ended or were given up on.
    pub renewals: u64,
}

words! {
    /// Why the guard finished.
    pub enum FinishReason {
    /// The child ended by itself.
    ChildExited = "child-exited",
    /// The child could not be started.
    SpawnFailed = "spawn-failed",
    /// A renewal proved the holding lost; the child was stopped.
    Lost = "lost",
    /// The local deadline passed without a proven renewal; the child was stopped (or never
    /// started: the verification's lease was past it already).
    Deadline = "deadline",
    /// The verification did not renew the holding; the child never ran.
    NotHeld = "not-held",
    }
}

/// The guard's answer to one event.
#[must_use]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
pub struct GuardStep {
    pub commands: Vec<GuardCommand>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogLine>,
}

words! {
    /// Where the guard is.
    pub enum Phase {
    /// Not started.
    Ready = "ready",
    /// The verifying renewal runs; no child yet.
    Verifying = "verifying",
    /// The child runs.
    Running = "running",
    /// The child's group got SIGTERM; SIGKILL follows at the kill grace.
    Stopping = "stopping",
    /// The child ended by itself while a renewal ran: waiting for it, until its deadline.
    Draining = "draining",
    Finished = "finished",
    }
}

/// What a renewal's outcome means to the guard.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Renewal {
    Renewed(LeaseView),
    NotDue,
    Lost(String),
    Failed {
        code: String,
        message: String,
    },
    /// Its last write was sent and never answered, and could not be read back.
    Unknown(String),
}

impl Renewal {
    fn of(outcome: &Outcome) -> Renewal {
        let message = || outcome.error.as_ref().map(|e| e.message.clone());
        // A claim's renewal (`claim-renew`): by its status.
        if let Some(claim) = &outcome.claims {
            let detail = || {
                message()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| claim.detail.clone())
            };
            return match (claim.status, &outcome.lease) {
                (Status::Renewed, Some(lease)) => Renewal::Renewed(lease.clone()),
                (Status::NotDue, _) => Renewal::NotDue,
                // Proven: another run's now, or released.
                (Status::Lost | Status::NotHeld, _) => Renewal::Lost(detail()),
                (Status::UnknownOutcome, _) => Renewal::Unknown(detail()),
                // Stale (at the ceiling, or a token not the head) and every failure prove
                // nothing lost: the proven lease stands until its local deadline.
                (status, _) => Renewal::Failed {
                    code: status.as_str().into(),
                    message: detail(),
                },
            };
        }
        match (outcome.result, &outcome.lease) {
            (ResultWord::Renewed, Some(lease)) => Renewal::Renewed(lease.clone()),
            (ResultWord::NotDue, _) => Renewal::NotDue,
            (ResultWord::Lost, _) => {
                Renewal::Lost(message().unwrap_or_else(|| "the holding was lost".into()))
            }
            _ => match &outcome.error {
                Some(e) if e.class == Some(AnswerClass::UnknownOutcome) => {
                    Renewal::Unknown(e.message.clone())
                }
                Some(e) => Renewal::Failed {
                    code: e.code.to_string(),
                    message: e.message.clone(),
                },
                None => Renewal::Failed {
                    code: outcome.result.as_str().into(),
                    message: "ended without a lease".into(),
                },
            },
        }
    }

    fn describe(&self) -> String {
        match self {
            Renewal::Renewed(l) => format!("renewed (expires {})", format_rfc3339(l.expires_at)),
            Renewal::NotDue => "not due".into(),
            Renewal::Lost(m) => format!("lost ({m})"),
            Renewal::Failed { code, message } => format!("failed ({code}: {message})"),
            Renewal::Unknown(m) => format!("unknown outcome: the write may have landed ({m})"),
        }
    }
}

/// A renewal the driver is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InFlight {
    /// Its deadline (none for the verification).
    until: Option<Millis>,
    /// The guard still waits for it (false: given up on at the deadline; its end changes
    /// nothing, but is reported).
    awaited: bool,
}

/// The guard's loop as a state machine.
#[derive(Clone, Debug)]
pub struct Guard {
    settings: GuardSettings,
    phase: Phase,
    /// The lease as last proven: the verification's (or the one the guard started from), then
    /// each awaited renewal's that ended `renewed` in time.
    lease: Option<LeaseView>,
    last: LastRenewal,
    last_attempt_at: Option<Millis>,
    renewals: u64,
    renewal: Option<InFlight>,
    killed: Option<KillReason>,
    /// When SIGKILL goes to the group (stopping, or after a signal the guard received while the
    /// child runs), and whether it went.
    kill_at: Option<Millis>,
    kill_sent: bool,
    /// Signals received so far (the runner's second one brings the SIGKILL closer).
    signals: u32,
    child: Option<ChildExit>,
}

impl Guard {
    /// A guard that verifies the holding with a renewal first (the guard action and the CLI).
    pub fn new(inputs: &RawInputs) -> Result<Guard, Error> {
        Ok(Guard::with_settings(GuardSettings::parse(inputs)?, None))
    }

    /// A guard with its settings; `lease` given, it starts the child under it at once (an
    /// embedder that just acquired), else it verifies first.
    pub fn with_settings(settings: GuardSettings, lease: Option<LeaseView>) -> Guard {
        Guard {
            settings,
            phase: Phase::Ready,
            lease,
            last: LastRenewal::None,
            last_attempt_at: None,
            renewals: 0,
            renewal: None,
            killed: None,
            kill_at: None,
            kill_sent: false,
            signals: 0,
            child: None,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn settings(&self) -> &GuardSettings {
        &self.settings
    }

    /// The lease as last proven.
    pub fn lease(&self) -> Option<&LeaseView> {
        self.lease.as_ref()
    }

    pub fn renewals(&self) -> u64 {
        self.renewals
    }

    /// Whether the guard waits for a renewal that could still prove the holding at `now`: the
    /// verification, or a renewal before its deadline.
    pub fn awaits_renewal(&self, now: Millis) -> bool {
        self.renewal
            .is_some_and(|r| r.awaited && r.until.is_none_or(|until| now < until))
    }

    /// Why the guard stops (or stopped) the child, once it began to.
    pub fn stopping_for(&self) -> Option<KillReason> {
        self.killed
    }

    /// Whether a renewal is still running in the driver (awaited or given up on).
    pub fn renewal_running(&self) -> bool {
        self.renewal.is_some()
    }

    /// Feeds one event; returns what to do, in order.
    pub fn step(&mut self, event: GuardEvent) -> Result<GuardStep, Error> {
        let mut out = GuardStep {
            commands: Vec::new(),
            log: Vec::new(),
        };
        let unexpected = |phase: Phase, event: &GuardEvent| {
            Error::Protocol(ProtocolError {
                event: event.name(),
                state: format!("the guard is {}", phase.as_str()),
            })
        };
        match (self.phase, &event) {
            (Phase::Ready, GuardEvent::Started { now }) => match self.lease.clone() {
                Some(lease) => self.spawn(*now, lease, &mut out),
                None => {
                    self.phase = Phase::Verifying;
                    self.renewal = Some(InFlight {
                        until: None,
                        awaited: true,
                    });
                    out.commands.push(GuardCommand::Verify);
                }
            },
            (Phase::Verifying, GuardEvent::Verified { now, outcome }) => {
                self.renewal = None;
                match Renewal::of(outcome) {
                    Renewal::Renewed(lease) => {
                        self.lease = Some(lease.clone());
                        self.spawn(*now, lease, &mut out);
                    }
                    other => {
                        say(
                            &mut out,
                            Level::Warning,
                            format!(
                                "the holding could not be verified: {}; the command does not run",
                                other.describe()
                            ),
                        );
                        self.finish(FinishReason::NotHeld, &mut out);
                    }
                }
            }
            (
                Phase::Running | Phase::Stopping | Phase::Draining,
                GuardEvent::RenewalEnded { now, outcome },
            ) => {
                let Some(inflight) = self.renewal.take() else {
                    return Err(unexpected(self.phase, &event));
                };
                self.renewal_ended(*now, inflight, &Renewal::of(outcome), &mut out);
            }
            (Phase::Running, GuardEvent::TimerFired { now }) => {
                let now = *now;
                if self.kill_at.is_some_and(|at| now >= at) && !self.kill_sent {
                    // The command outlived the signal's grace: what it started goes too.
                    self.kill_sent = true;
                    say(
                        &mut out,
                        Level::Warning,
                        "the command did not end after the signal: SIGKILL to its process group"
                            .into(),
                    );
                    out.commands.push(GuardCommand::Signal {
                        signal: Signal::Kill,
                    });
                }
                match self.renewal {
                    Some(InFlight {
                        until: Some(until),
                        awaited: true,
                    }) if now < until => {
                        // Early: the renewal's deadline is not here yet.
                        out.commands.push(GuardCommand::WaitUntil { at: until });
                    }
                    Some(r) if r.awaited => {
                        // The deadline came first: a renewal not proven by it proves nothing.
                        self.give_up_renewal(now, &mut out);
                        self.schedule(now, &mut out);
                    }
                    _ => self.schedule(now, &mut out),
                }
            }
            (Phase::Stopping, GuardEvent::TimerFired { now })
                if !self.kill_sent || self.child.is_none() =>
            {
                let kill_at = self.kill_at.unwrap_or(*now);
                if !self.kill_sent && *now < kill_at {
                    out.commands.push(GuardCommand::WaitUntil { at: kill_at });
                } else {
                    if self.kill_sent {
                        // The SIGKILL did not end the child (a forced stop that failed, on
                        // Windows): the guard never waits on nothing while the lease it stopped
                        // renewing runs out.
                        say(
                            &mut out,
                            Level::Warning,
                            "the command is still running after SIGKILL: SIGKILL to its process group again"
                                .into(),
                        );
                    }
                    // To the group even when the child has exited: what it started may live on.
                    self.kill_sent = true;
                    out.commands.push(GuardCommand::Signal {
                        signal: Signal::Kill,
                    });
                    if self.child.is_some() {
                        self.finish_stopped(&mut out);
                    } else {
                        // Again a kill grace later, should this one not end it.
                        out.commands.push(GuardCommand::WaitUntil {
                            at: now + self.settings.kill_grace_ms,
                        });
                    }
                }
            }
            (Phase::Draining, GuardEvent::TimerFired { now }) => match self.renewal {
                Some(InFlight {
                    until: Some(until), ..
                }) if *now < until => out.commands.push(GuardCommand::WaitUntil { at: until }),
                _ => {
                    self.renewal = None;
                    self.renewals += 1;
                    say(&mut out, Level::Warning, "the renewal running when the command ended did not end by the local deadline: its outcome is unknown".into());
                    self.finish_child(&mut out);
                }
            },
            (Phase::Running, GuardEvent::ChildExited { exit, .. }) => {
                self.child = Some(exit.clone());
                if self.renewal.is_some_and(|r| r.awaited) {
                    // Finish the renewal and report it; its deadline timer is armed already.
                    self.phase = Phase::Draining;
                    say(
                        &mut out,
                        Level::Info,
                        "the command ended while a renewal runs: waiting for its outcome".into(),
                    );
                } else {
                    self.finish_child(&mut out);
                }
            }
            (Phase::Stopping, GuardEvent::ChildExited { exit, .. }) if self.child.is_none() => {
                self.child = Some(exit.clone());
                if self.kill_sent {
                    self.finish_stopped(&mut out);
                }
                // Else SIGKILL still goes to the group at the kill grace.
            }
            (
                Phase::Running | Phase::Stopping | Phase::Draining,
                GuardEvent::SignalReceived { now, signal },
            ) if *signal != Signal::Kill => {
                out.commands.push(GuardCommand::Signal {
                    signal: signal.forwarded(),
                });
                self.escalate(*now, &mut out);
            }
            _ => return Err(unexpected(self.phase, &event)),
        }
        // While a signal's SIGKILL is due, no wake armed for anything else may come after it.
        if let (Phase::Running, Some(kill_at), false) = (self.phase, self.kill_at, self.kill_sent) {
            for c in &mut out.commands {
                if let GuardCommand::WaitUntil { at } = c {
                    *at = (*at).min(kill_at);
                }
            }
        }
        Ok(out)
    }

    /// Starts the child under `lease`, unless its stop time has passed already.
    fn spawn(&mut self, now: Millis, lease: LeaseView, out: &mut GuardStep) {
        if now >= stop_at(&lease, self.settings.kill_grace_ms) {
            say(
                out,
                Level::Warning,
                format!(
                    "the local deadline ({}) has passed already: the command does not run",
                    format_rfc3339(lease.local_deadline)
                ),
            );
            return self.finish(FinishReason::Deadline, out);
        }
        self.phase = Phase::Running;
        out.commands.push(GuardCommand::Spawn { lease });
        self.schedule(now, out);
    }

    /// Asks the schedule what to do next while the child runs.
    fn schedule(&mut self, now: Millis, out: &mut GuardStep) {
        let Some(lease) = self.lease.clone() else {
            return; // unreachable: the child runs only under a proven lease
        };
        let input = GuardInput {
            now,
            lease,
            last: self.last,
            last_attempt_at: self.last_attempt_at,
            kill_grace_ms: self.settings.kill_grace_ms,
        };
        match decide(&input) {
            GuardDecision::Renew { until } => {
                self.renewal = Some(InFlight {
                    until: Some(until),
                    awaited: true,
                });
                out.commands.push(GuardCommand::Renew { until });
                out.commands.push(GuardCommand::WaitUntil { at: until });
            }
            GuardDecision::Wait { until } => {
                out.commands.push(GuardCommand::WaitUntil { at: until })
            }
            GuardDecision::Kill { reason } => self.stop(now, reason, out),
        }
    }

    /// After a signal passed on to the child's group: SIGKILL follows within the runner's
    /// window (a second signal brings it closer), so the command cannot outlive the guard,
    /// which the runner kills 10 s after cancelling, while its group lives on.
    fn escalate(&mut self, now: Millis, out: &mut GuardStep) {
        self.signals += 1;
        let grace = signal_kill_after(self.signals, self.settings.kill_grace_ms);
        if self.kill_sent || !matches!(self.phase, Phase::Running | Phase::Stopping) {
            return;
        }
        let soon = self.kill_at.map_or(now + grace, |t| t.min(now + grace));
        self.kill_at = Some(soon);
        if self.signals == 1 {
            say(
                out,
                Level::Info,
                format!(
                    "passed the signal to the command; SIGKILL follows in {} s unless it ends",
                    soon.saturating_sub(now).div_ceil(1000)
                ),
            );
        }
        // The one timer now wakes for the SIGKILL (a renewal's wake waits until then: the
        // command is ending).
        out.commands.push(GuardCommand::WaitUntil { at: soon });
    }

    /// SIGTERM to the group now, SIGKILL at the kill grace.
    fn stop(&mut self, now: Millis, reason: KillReason, out: &mut GuardStep) {
        if self.renewal.is_some_and(|r| r.awaited) {
            self.give_up_renewal(now, out);
        }
        self.phase = Phase::Stopping;
        self.killed = Some(reason);
        let why = match reason {
            KillReason::Lost => "the holding was lost",
            KillReason::Deadline => "the local deadline passed without a proven renewal",
        };
        say(out, Level::Warning, format!("stopping the child ({why})"));
        out.commands.push(GuardCommand::Signal {
            signal: Signal::Term,
        });
        // A signal's SIGKILL due sooner stays due; one already sent goes again at once (the
        // stop's own, which also replaces any wake still armed).
        let grace_end = now + self.settings.kill_grace_ms;
        let kill_at = match (self.kill_sent, self.kill_at) {
            (true, _) => now,
            (false, Some(t)) => t.min(grace_end),
            (false, None) => grace_end,
        };
        self.kill_sent = false;
        self.kill_at = Some(kill_at);
        out.commands.push(GuardCommand::WaitUntil { at: kill_at });
    }

    /// The renewal's deadline came first: it runs on in the driver, but proves nothing.
    fn give_up_renewal(&mut self, now: Millis, out: &mut GuardStep) {
        if let Some(r) = self.renewal.as_mut() {
            r.awaited = false;
        }
        self.renewals += 1;
        self.last_attempt_at = Some(now);
        say(out, Level::Info, "the renewal is not proven by the local deadline: it proves nothing (its outcome is reported if it ends)".into());
    }

    fn renewal_ended(
        &mut self,
        now: Millis,
        inflight: InFlight,
        renewal: &Renewal,
        out: &mut GuardStep,
    ) {
        if !inflight.awaited {
            say(
                out,
                Level::Info,
                format!(
                    "a renewal given up on at the deadline ended: {}; it changes nothing",
                    renewal.describe()
                ),
            );
            return;
        }
        self.renewals += 1;
        self.last_attempt_at = Some(now);
        let late = inflight.until.is_some_and(|until| now >= until);
        let draining = self.phase == Phase::Draining;
        if late {
            say(
                out,
                Level::Info,
                format!(
                    "a renewal answered after its deadline: {}; it proves nothing",
                    renewal.describe()
                ),
            );
        } else {
            match renewal {
                Renewal::Renewed(lease) => {
                    self.lease = Some(lease.clone());
                    self.last = LastRenewal::Renewed;
                }
                // Held, not due yet by GitHub's clock: the lease already proven stands, and the
                // schedule spaces the next try.
                Renewal::NotDue => self.last = LastRenewal::NotDue,
                Renewal::Lost(message) => {
                    self.last = LastRenewal::Lost;
                    say(out, Level::Warning, message.clone());
                }
                Renewal::Failed { .. } | Renewal::Unknown(_) => {
                    self.last = LastRenewal::Failed;
                    if !draining {
                        let until = self.lease.as_ref().map_or(0, |l| l.local_deadline);
                        say(
                            out,
                            Level::Warning,
                            format!(
                                "renewal {}; the child runs on until {}",
                                renewal.describe(),
                                format_rfc3339(until)
                            ),
                        );
                    }
                }
            }
        }
        if draining {
            say(
                out,
                Level::Info,
                format!(
                    "the renewal running when the command ended: {}",
                    renewal.describe()
                ),
            );
            self.finish_child(out);
        } else {
            self.schedule(now, out);
        }
    }

    /// The child was stopped and SIGKILL went to the group.
    fn finish_stopped(&mut self, out: &mut GuardStep) {
        let reason = match self.killed {
            Some(KillReason::Lost) => FinishReason::Lost,
            _ => FinishReason::Deadline,
        };
        self.finish(reason, out);
    }

    /// The child ended by itself (or never started).
    fn finish_child(&mut self, out: &mut GuardStep) {
        let reason = match self.child {
            Some(ChildExit::SpawnFailed { .. }) => FinishReason::SpawnFailed,
            _ => FinishReason::ChildExited,
        };
        self.finish(reason, out);
    }

    fn finish(&mut self, reason: FinishReason, out: &mut GuardStep) {
        if self.renewal.take().is_some() {
            say(
                out,
                Level::Warning,
                "a renewal was still running when the guard finished: its outcome is unknown"
                    .into(),
            );
        }
        let exit_code = match (reason, &self.child) {
            (FinishReason::Lost, _) => EXIT_CODES.lost,
            (FinishReason::Deadline, _) => EXIT_CODES.deadline,
            (FinishReason::NotHeld, _) => EXIT_CODES.not_held,
            (_, Some(ChildExit::Exited { code })) => *code,
            (_, Some(ChildExit::Signalled { number, .. })) => EXIT_CODES.signal_base + number,
            (_, Some(ChildExit::SpawnFailed { .. }) | None) => EXIT_CODES.spawn_failed,
        };
        self.phase = Phase::Finished;
        out.commands.push(GuardCommand::Finish(Finish {
            exit_code,
            reason,
            child: self.child.clone(),
            renewals: self.renewals,
        }));
    }
}

fn say(out: &mut GuardStep, level: Level, text: String) {
    out.log.push(LogLine { level, text });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease() -> LeaseView {
        LeaseView {
            expires_at: 900_000,
            ceiling_at: 9_000_000,
            local_deadline: 780_000,
            renew_at: 300_000,
            renew_ms: 300_000,
            ttl_ms: 900_000,
        }
    }

    fn input(now: Millis, last: LastRenewal, last_attempt_at: Option<Millis>) -> GuardInput {
        GuardInput {
            now,
            lease: lease(),
            last,
            last_attempt_at,
            kill_grace_ms: 0,
        }
    }

    #[test]
    fn table() {
        use GuardDecision::*;
        let cases = [
            (input(0, LastRenewal::None, None), Wait { until: 300_000 }),
            (
                input(300_000, LastRenewal::None, None),
                Renew { until: 780_000 },
            ),
            (
                input(300_000, LastRenewal::Failed, Some(300_000)),
                Wait { until: 330_000 },
            ),
            (
                input(330_000, LastRenewal::Failed, Some(300_000)),
                Renew { until: 780_000 },
            ),
            (
                input(779_999, LastRenewal::Failed, Some(775_000)),
                Wait { until: 780_000 },
            ),
            (
                input(780_000, LastRenewal::Failed, Some(775_000)),
                Kill {
                    reason: KillReason::Deadline,
                },
            ),
            (
                input(10, LastRenewal::Lost, Some(5)),
                Kill {
                    reason: KillReason::Lost,
                },
            ),
            (
                input(790_000, LastRenewal::Renewed, None),
                Kill {
                    reason: KillReason::Deadline,
                },
            ),
            // Not due at 300 s: the next try is a retry interval later, not at once.
            (
                input(300_000, LastRenewal::NotDue, Some(300_000)),
                Wait { until: 330_000 },
            ),
            (
                input(100_000, LastRenewal::NotDue, Some(100_000)),
                Wait { until: 300_000 },
            ),
        ];
        for (i, want) in cases {
            assert_eq!(decide(&i), want, "{i:?}");
        }
        // With a 10 s kill grace the stop starts 10 s before the deadline.
        let graced = |now| GuardInput {
            kill_grace_ms: 10_000,
            ..input(now, LastRenewal::Failed, Some(760_000))
        };
        assert_eq!(decide(&graced(765_000)), Wait { until: 770_000 });
        assert_eq!(
            decide(&graced(770_000)),
            Kill {
                reason: KillReason::Deadline
            }
        );
    }
}

/// The machine, as transcripts: each event and the commands it must answer with.
#[cfg(test)]
mod machine {
    use super::*;
    use crate::wire::{Failure, FailureCode, Stats};
    use GuardCommand as C;

    const GRACE: Millis = 10_000;

    /// `signal` to the group, then the timer armed for `at`.
    fn signal_then_wait(signal: Signal, at: Millis) -> Vec<GuardCommand> {
        vec![C::Signal { signal }, C::WaitUntil { at }]
    }

    fn lease(at: Millis) -> LeaseView {
        LeaseView {
            expires_at: at + 900_000,
            ceiling_at: 9_000_000,
            local_deadline: at + 780_000,
            renew_at: at + 300_000,
            renew_ms: 300_000,
            ttl_ms: 900_000,
        }
    }

    fn outcome(
        result: ResultWord,
        lease: Option<LeaseView>,
        error: Option<(&str, Option<&str>)>,
    ) -> Box<Outcome> {
        Box::new(Outcome {
            result,
            success: matches!(result, ResultWord::Renewed | ResultWord::NotDue),
            lock: "deploy".into(),
            holder_id: "octo/app:7:build".into(),
            acquired: None,
            released: None,
            fence: Some(1),
            nonce: None,
            wait_ms: None,
            queue_position: None,
            capacity: None,
            error: error.map(|(code, class)| Failure {
                code: FailureCode::from_word(code).expect("a failure code"),
                message: format!("{code} happened"),
                class: class.map(|c| AnswerClass::from_word(c).expect("an answer class")),
                status: None,
            }),
            state: None,
            stats: Stats::default(),
            lease,
            reaped: Vec::new(),
            claims: None,
            slots: None,
            report: None,
            resource: None,
            resource_tags: None,
            repair: None,
            lifecycle: None,
            carry: None,
        })
    }

    /// A claim renewal's outcome (`claim-renew`): its status decides, not the result word.
    fn claim_renewal(status: Status, lease: Option<LeaseView>) -> Box<Outcome> {
        let mut o = outcome(ResultWord::Status, lease, None);
        o.claims = Some(crate::wire::ClaimReport {
            status,
            repository: "octo/app".into(),
            repository_id: None,
            namespace: "ns".into(),
            run_id: "run-1".into(),
            items: Vec::new(),
            detail: format!("{} happened", status.as_str()),
            dry_run: false,
            next: Default::default(),
            clock: None,
        });
        o
    }

    #[test]
    fn a_claims_renewal_is_read_by_its_status() {
        let l = lease(0);
        assert_eq!(
            Renewal::of(&claim_renewal(Status::Renewed, Some(l.clone()))),
            Renewal::Renewed(l)
        );
        assert_eq!(
            Renewal::of(&claim_renewal(Status::NotDue, None)),
            Renewal::NotDue
        );
        for proven in [Status::Lost, Status::NotHeld] {
            assert!(matches!(
                Renewal::of(&claim_renewal(proven, None)),
                Renewal::Lost(_)
            ));
        }
        assert!(matches!(
            Renewal::of(&claim_renewal(Status::UnknownOutcome, None)),
            Renewal::Unknown(_)
        ));
        // Stale (at the ceiling) and failures prove nothing lost: the lease stands until its
        // deadline.
        for unproven in [Status::Stale, Status::Transport, Status::Permission] {
            assert!(matches!(
                Renewal::of(&claim_renewal(unproven, None)),
                Renewal::Failed { .. }
            ));
        }
        // Renewed without a lease proves nothing either.
        assert!(matches!(
            Renewal::of(&claim_renewal(Status::Renewed, None)),
            Renewal::Failed { .. }
        ));
    }

    fn renewed(at: Millis) -> Box<Outcome> {
        outcome(ResultWord::Renewed, Some(lease(at)), None)
    }
    fn lost() -> Box<Outcome> {
        outcome(ResultWord::Lost, None, Some(("lost", None)))
    }
    fn failed() -> Box<Outcome> {
        outcome(
            ResultWord::Failed,
            None,
            Some(("api-unavailable", Some("transient"))),
        )
    }
    fn unknown() -> Box<Outcome> {
        outcome(
            ResultWord::Failed,
            None,
            Some(("api-unavailable", Some("unknown-outcome"))),
        )
    }

    fn guard() -> Guard {
        Guard::with_settings(
            GuardSettings {
                kill_grace_ms: GRACE,
            },
            None,
        )
    }

    fn finish(
        exit_code: i32,
        reason: FinishReason,
        child: Option<ChildExit>,
        renewals: u64,
    ) -> GuardCommand {
        C::Finish(super::Finish {
            exit_code,
            reason,
            child,
            renewals,
        })
    }

    fn exited(code: i32) -> ChildExit {
        ChildExit::Exited { code }
    }

    fn signalled(signal: &str, number: i32) -> ChildExit {
        ChildExit::Signalled {
            signal: signal.into(),
            number,
        }
    }

    /// Feeds each event and compares the commands; returns every log line.
    fn transcript(g: &mut Guard, steps: Vec<(GuardEvent, Vec<GuardCommand>)>) -> Vec<String> {
        let mut log = Vec::new();
        for (event, want) in steps {
            let what = format!("{event:?}");
            let step = g.step(event).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(step.commands, want, "after {what}");
            log.extend(step.log.into_iter().map(|l| l.text));
        }
        log
    }

    /// Verified at 0 (lease renewing at 300 s, deadline 780 s, stop at 770 s): the child runs.
    fn running() -> Guard {
        let mut g = guard();
        transcript(
            &mut g,
            vec![
                (GuardEvent::Started { now: 0 }, vec![C::Verify]),
                (
                    GuardEvent::Verified {
                        now: 0,
                        outcome: renewed(0),
                    },
                    vec![C::Spawn { lease: lease(0) }, C::WaitUntil { at: 300_000 }],
                ),
            ],
        );
        g
    }

    #[test]
    fn verifies_spawns_renews_and_passes_the_childs_code_through() {
        let mut g = running();
        transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                ),
                (
                    GuardEvent::RenewalEnded {
                        now: 301_000,
                        outcome: renewed(301_000),
                    },
                    vec![C::WaitUntil { at: 601_000 }],
                ),
                (
                    GuardEvent::ChildExited {
                        now: 400_000,
                        exit: exited(3),
                    },
                    vec![finish(3, FinishReason::ChildExited, Some(exited(3)), 1)],
                ),
            ],
        );
        assert_eq!(g.lease(), Some(&lease(301_000)));
        assert_eq!(g.phase(), Phase::Finished);
    }

    #[test]
    fn a_holding_not_verified_never_starts_the_child() {
        for o in [
            lost(),
            failed(),
            unknown(),
            outcome(ResultWord::NotDue, None, None),
        ] {
            let mut g = guard();
            let log = transcript(
                &mut g,
                vec![
                    (GuardEvent::Started { now: 0 }, vec![C::Verify]),
                    (
                        GuardEvent::Verified { now: 0, outcome: o },
                        vec![finish(14, FinishReason::NotHeld, None, 0)],
                    ),
                ],
            );
            assert!(log[0].contains("could not be verified"), "{log:?}");
        }
    }

    #[test]
    fn a_verification_answered_past_the_deadline_never_starts_the_child() {
        let mut g = guard();
        transcript(
            &mut g,
            vec![
                (GuardEvent::Started { now: 0 }, vec![C::Verify]),
                (
                    GuardEvent::Verified {
                        now: 770_000,
                        outcome: renewed(0),
                    },
                    vec![finish(13, FinishReason::Deadline, None, 0)],
                ),
            ],
        );
    }

    #[test]
    fn an_embedder_starts_from_acquires_lease() {
        let mut g = Guard::with_settings(
            GuardSettings {
                kill_grace_ms: GRACE,
            },
            Some(lease(0)),
        );
        transcript(
            &mut g,
            vec![(
                GuardEvent::Started { now: 10 },
                vec![C::Spawn { lease: lease(0) }, C::WaitUntil { at: 300_000 }],
            )],
        );
    }

    #[test]
    fn a_failed_renewal_is_retried_after_the_floor_and_the_deadline_beats_a_running_renewal() {
        let mut g = running();
        let log = transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                ),
                // A tenth of the renew interval (30 s) later.
                (
                    GuardEvent::RenewalEnded {
                        now: 300_000,
                        outcome: failed(),
                    },
                    vec![C::WaitUntil { at: 330_000 }],
                ),
                // A timer that fires early changes nothing.
                (
                    GuardEvent::TimerFired { now: 329_000 },
                    vec![C::WaitUntil { at: 330_000 }],
                ),
                (
                    GuardEvent::TimerFired { now: 330_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                ),
                (
                    GuardEvent::TimerFired { now: 500_000 },
                    vec![C::WaitUntil { at: 770_000 }],
                ),
                // Still running at the stop time: the deadline wins.
                (
                    GuardEvent::TimerFired { now: 770_000 },
                    signal_then_wait(Signal::Term, 780_000),
                ),
                // Its answer, late, changes nothing.
                (
                    GuardEvent::RenewalEnded {
                        now: 775_000,
                        outcome: renewed(775_000),
                    },
                    vec![],
                ),
                (
                    GuardEvent::ChildExited {
                        now: 776_000,
                        exit: signalled("SIGTERM", 15),
                    },
                    vec![],
                ),
                (
                    GuardEvent::TimerFired { now: 780_000 },
                    vec![
                        C::Signal {
                            signal: Signal::Kill,
                        },
                        finish(
                            13,
                            FinishReason::Deadline,
                            Some(signalled("SIGTERM", 15)),
                            2,
                        ),
                    ],
                ),
            ],
        );
        assert_eq!(g.lease(), Some(&lease(0)), "a late renewal proves nothing");
        assert!(
            log.iter()
                .any(|l| l.contains("renewal failed (api-unavailable")),
            "{log:?}"
        );
        assert!(
            log.iter()
                .any(|l| l.contains("stopping the child (the local deadline")),
            "{log:?}"
        );
    }

    /// Fix: SIGKILL goes to the group at the kill grace even when the child exited on SIGTERM
    /// (what it started may ignore SIGTERM and live on).
    #[test]
    fn sigkill_follows_sigterm_even_when_the_child_has_exited() {
        let mut g = running();
        transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 770_000 },
                    signal_then_wait(Signal::Term, 780_000),
                ),
                (
                    GuardEvent::ChildExited {
                        now: 770_100,
                        exit: signalled("SIGTERM", 15),
                    },
                    vec![],
                ),
                (
                    GuardEvent::TimerFired { now: 780_000 },
                    vec![
                        C::Signal {
                            signal: Signal::Kill,
                        },
                        finish(
                            13,
                            FinishReason::Deadline,
                            Some(signalled("SIGTERM", 15)),
                            0,
                        ),
                    ],
                ),
            ],
        );
    }

    #[test]
    fn a_lost_holding_stops_the_child_term_then_kill() {
        let mut g = running();
        let log = transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                ),
                (
                    GuardEvent::RenewalEnded {
                        now: 300_500,
                        outcome: lost(),
                    },
                    signal_then_wait(Signal::Term, 310_500),
                ),
                (
                    GuardEvent::TimerFired { now: 310_500 },
                    signal_then_wait(Signal::Kill, 320_500),
                ),
                (
                    GuardEvent::ChildExited {
                        now: 310_600,
                        exit: signalled("SIGKILL", 9),
                    },
                    vec![finish(
                        13,
                        FinishReason::Lost,
                        Some(signalled("SIGKILL", 9)),
                        1,
                    )],
                ),
            ],
        );
        assert!(log.iter().any(|l| l == "lost happened"), "{log:?}");
    }

    /// Fix: a renewal in flight when the child exits is waited for, and its outcome reported.
    #[test]
    fn a_renewal_in_flight_when_the_child_exits_is_finished_and_reported() {
        let cases: Vec<(Box<Outcome>, &str)> = vec![
            (renewed(300_000), "renewed"),
            (lost(), "lost"),
            (failed(), "failed (api-unavailable"),
            (unknown(), "unknown outcome"),
        ];
        for (o, said) in cases {
            let mut g = running();
            let log = transcript(
                &mut g,
                vec![
                    (
                        GuardEvent::TimerFired { now: 300_000 },
                        vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                    ),
                    (
                        GuardEvent::ChildExited {
                            now: 300_100,
                            exit: exited(0),
                        },
                        vec![],
                    ),
                    (
                        GuardEvent::SignalReceived {
                            now: 300_150,
                            signal: Signal::Hup,
                        },
                        vec![C::Signal {
                            signal: Signal::Hup,
                        }],
                    ),
                    (
                        GuardEvent::RenewalEnded {
                            now: 300_200,
                            outcome: o,
                        },
                        vec![finish(0, FinishReason::ChildExited, Some(exited(0)), 1)],
                    ),
                ],
            );
            let line = log
                .iter()
                .find(|l| l.starts_with("the renewal running when the command ended:"));
            assert!(line.is_some_and(|l| l.contains(said)), "{said}: {log:?}");
        }
        // Never ending: at its deadline its outcome is named unknown.
        let mut g = running();
        let log = transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                ),
                (
                    GuardEvent::ChildExited {
                        now: 300_100,
                        exit: exited(4),
                    },
                    vec![],
                ),
                (
                    GuardEvent::TimerFired { now: 700_000 },
                    vec![C::WaitUntil { at: 770_000 }],
                ),
                (
                    GuardEvent::TimerFired { now: 770_000 },
                    vec![finish(4, FinishReason::ChildExited, Some(exited(4)), 1)],
                ),
            ],
        );
        assert!(
            log.iter().any(|l| l.contains("its outcome is unknown")),
            "{log:?}"
        );
    }

    /// Fix: SIGINT, SIGTERM and SIGHUP go on to the group, whatever the guard is doing with the
    /// child (running, stopping it, waiting for a renewal after it ended).
    #[test]
    fn signals_received_are_forwarded_to_the_group() {
        for signal in [Signal::Int, Signal::Term, Signal::Hup] {
            let fwd = C::Signal { signal };
            // While the child runs: passed on, and SIGKILL follows 7 s later (the runner kills
            // the guard 10 s after it cancels; the command must not outlive it).
            let mut g = running();
            transcript(
                &mut g,
                vec![
                    passed_on(1_000, signal, 8_000),
                    (
                        GuardEvent::TimerFired { now: 8_000 },
                        signal_then_wait(Signal::Kill, 300_000),
                    ),
                    (
                        GuardEvent::ChildExited {
                            now: 8_100,
                            exit: signalled("SIGKILL", 9),
                        },
                        vec![finish(
                            137,
                            FinishReason::ChildExited,
                            Some(signalled("SIGKILL", 9)),
                            0,
                        )],
                    ),
                ],
            );
            // A child that ends on the signal finishes as it ended; no SIGKILL is sent.
            let mut g = running();
            transcript(
                &mut g,
                vec![
                    passed_on(1_000, signal, 8_000),
                    (
                        GuardEvent::ChildExited {
                            now: 1_200,
                            exit: exited(130),
                        },
                        vec![finish(130, FinishReason::ChildExited, Some(exited(130)), 0)],
                    ),
                ],
            );
            // While stopping: passed on, and the SIGKILL comes no later than 7 s after it.
            let mut g = running();
            transcript(
                &mut g,
                vec![
                    (
                        GuardEvent::TimerFired { now: 770_000 },
                        signal_then_wait(Signal::Term, 780_000),
                    ),
                    passed_on(771_000, signal, 778_000),
                ],
            );
            // Draining (the child ended, a renewal runs): passed on to what it may have left.
            let mut g = running();
            transcript(
                &mut g,
                vec![
                    (
                        GuardEvent::TimerFired { now: 300_000 },
                        vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 770_000 }],
                    ),
                    (
                        GuardEvent::ChildExited {
                            now: 300_100,
                            exit: exited(0),
                        },
                        vec![],
                    ),
                    (
                        GuardEvent::SignalReceived {
                            now: 300_200,
                            signal,
                        },
                        vec![fwd.clone()],
                    ),
                ],
            );
        }
    }

    /// A signal received at `now`, passed on to the group, the one timer then armed at `at`.
    fn passed_on(now: Millis, signal: Signal, at: Millis) -> (GuardEvent, Vec<GuardCommand>) {
        (
            GuardEvent::SignalReceived { now, signal },
            vec![C::Signal { signal }, C::WaitUntil { at }],
        )
    }

    /// The runner cancels with SIGINT, then SIGTERM 7.5 s later: the second signal brings the
    /// SIGKILL to a second after it, within the 2.5 s before the runner kills the guard. A
    /// renewal's wake in between never pushes the SIGKILL back.
    #[test]
    fn the_runners_second_signal_brings_the_sigkill_closer() {
        let mut g = running();
        transcript(
            &mut g,
            vec![
                passed_on(296_000, Signal::Int, 303_000),
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 303_000 }],
                ),
                passed_on(301_500, Signal::Term, 302_500),
                (
                    GuardEvent::TimerFired { now: 302_500 },
                    signal_then_wait(Signal::Kill, 770_000),
                ),
            ],
        );
    }

    /// A holding lost while a signal's SIGKILL is due: the stop keeps the earlier SIGKILL.
    #[test]
    fn a_stop_during_a_signals_grace_keeps_its_sigkill() {
        let mut g = running();
        transcript(
            &mut g,
            vec![
                passed_on(296_000, Signal::Int, 303_000),
                (
                    GuardEvent::TimerFired { now: 300_000 },
                    vec![C::Renew { until: 770_000 }, C::WaitUntil { at: 303_000 }],
                ),
                (
                    GuardEvent::RenewalEnded {
                        now: 301_000,
                        outcome: lost(),
                    },
                    signal_then_wait(Signal::Term, 303_000),
                ),
                (
                    GuardEvent::TimerFired { now: 303_000 },
                    signal_then_wait(Signal::Kill, 313_000),
                ),
            ],
        );
    }

    /// A SIGKILL that did not end the child (a forced stop that failed) goes again a kill grace
    /// later, and again, until the child has ended: the guard never waits on nothing.
    #[test]
    fn a_sigkill_that_does_not_end_the_child_goes_again() {
        let mut g = running();
        let log = transcript(
            &mut g,
            vec![
                (
                    GuardEvent::TimerFired { now: 770_000 },
                    signal_then_wait(Signal::Term, 780_000),
                ),
                (
                    GuardEvent::TimerFired { now: 780_000 },
                    signal_then_wait(Signal::Kill, 790_000),
                ),
                (
                    GuardEvent::TimerFired { now: 790_000 },
                    signal_then_wait(Signal::Kill, 800_000),
                ),
                (
                    GuardEvent::ChildExited {
                        now: 790_100,
                        exit: signalled("SIGKILL", 9),
                    },
                    vec![finish(
                        13,
                        FinishReason::Deadline,
                        Some(signalled("SIGKILL", 9)),
                        0,
                    )],
                ),
            ],
        );
        assert!(
            log.iter()
                .any(|l| l.contains("still running after SIGKILL")),
            "{log:?}"
        );
    }

    #[test]
    fn exit_codes_of_a_child_that_ends_by_itself() {
        let cases = [
            (exited(0), 0, FinishReason::ChildExited),
            (exited(255), 255, FinishReason::ChildExited),
            (signalled("SIGSEGV", 11), 139, FinishReason::ChildExited),
            (
                ChildExit::SpawnFailed {
                    message: "spawn nope ENOENT".into(),
                },
                127,
                FinishReason::SpawnFailed,
            ),
        ];
        for (exit, code, reason) in cases {
            let mut g = running();
            transcript(
                &mut g,
                vec![(
                    GuardEvent::ChildExited {
                        now: 5,
                        exit: exit.clone(),
                    },
                    vec![finish(code, reason, Some(exit), 0)],
                )],
            );
        }
    }

    #[test]
    fn illegal_transitions_are_errors() {
        let protocol = |g: &mut Guard, e: GuardEvent| {
            let err = g.step(e).expect_err("an illegal transition");
            assert_eq!(err.code(), "protocol");
        };
        let mut g = guard();
        protocol(&mut g, GuardEvent::TimerFired { now: 0 });
        protocol(
            &mut g,
            GuardEvent::Verified {
                now: 0,
                outcome: renewed(0),
            },
        );
        let _ = g.step(GuardEvent::Started { now: 0 }).unwrap();
        protocol(&mut g, GuardEvent::Started { now: 0 });
        protocol(&mut g, GuardEvent::TimerFired { now: 0 });
        protocol(
            &mut g,
            GuardEvent::RenewalEnded {
                now: 0,
                outcome: renewed(0),
            },
        );
        // No child yet: a signal is not the guard's to forward.
        protocol(
            &mut g,
            GuardEvent::SignalReceived {
                now: 0,
                signal: Signal::Int,
            },
        );
        protocol(
            &mut g,
            GuardEvent::ChildExited {
                now: 0,
                exit: exited(0),
            },
        );
        let mut g = running();
        protocol(
            &mut g,
            GuardEvent::RenewalEnded {
                now: 1,
                outcome: renewed(1),
            },
        );
        protocol(
            &mut g,
            GuardEvent::Verified {
                now: 1,
                outcome: renewed(1),
            },
        );
        protocol(
            &mut g,
            GuardEvent::SignalReceived {
                now: 1,
                signal: Signal::Kill,
            },
        );
        let _ = g
            .step(GuardEvent::ChildExited {
                now: 2,
                exit: exited(0),
            })
            .unwrap();
        assert_eq!(g.phase(), Phase::Finished);
        protocol(
            &mut g,
            GuardEvent::ChildExited {
                now: 3,
                exit: exited(0),
            },
        );
        protocol(&mut g, GuardEvent::TimerFired { now: 3 });
    }

    #[test]
    fn kill_grace_is_read_like_every_input() {
        let read = |v: Option<&str>| {
            let raw: RawInputs = v
                .map(|v| ("kill-grace-seconds".to_string(), v.to_string()))
                .into_iter()
                .collect();
            Guard::new(&raw).map(|g| g.settings().kill_grace_ms)
        };
        assert_eq!(read(None), Ok(10_000));
        assert_eq!(read(Some("")), Ok(10_000));
        assert_eq!(read(Some(" 1 ")), Ok(1_000));
        assert_eq!(read(Some("300")), Ok(300_000));
        for bad in ["0", "301", "ten", "1.5", "-1", "+5", "1e2"] {
            let Err(Error::Input(e)) = read(Some(bad)) else {
                panic!("{bad} accepted");
            };
            assert_eq!(e.input, "kill-grace-seconds");
            assert_eq!(e.rule, "must be a whole number from 1 to 300");
            assert_eq!(e.value, bad);
        }
        assert_eq!(
            read(Some("0")).unwrap_err().to_string(),
            "`kill-grace-seconds` must be a whole number from 1 to 300 (got \"0\")"
        );
    }

    #[test]
    fn the_wire_shape() {
        let e: GuardEvent = serde_json::from_str(
            r#"{"kind":"child-exited","now":5,"exit":{"kind":"signalled","signal":"SIGTERM","number":15}}"#,
        )
        .unwrap();
        assert_eq!(
            e,
            GuardEvent::ChildExited {
                now: 5,
                exit: signalled("SIGTERM", 15)
            }
        );
        let e: GuardEvent =
            serde_json::from_str(r#"{"kind":"signal-received","now":5,"signal":"SIGHUP"}"#)
                .unwrap();
        assert_eq!(
            e,
            GuardEvent::SignalReceived {
                now: 5,
                signal: Signal::Hup
            }
        );
        let f = finish(13, FinishReason::Deadline, None, 2);
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"kind":"finish","exitCode":13,"reason":"deadline","child":null,"renewals":2}"#
        );
        assert_eq!(
            serde_json::to_string(&C::WaitUntil { at: 9 }).unwrap(),
            r#"{"kind":"wait-until","at":9}"#
        );
        assert_eq!(
            serde_json::to_string(&C::Signal {
                signal: Signal::Kill
            })
            .unwrap(),
            r#"{"kind":"signal","signal":"SIGKILL"}"#
        );
    }

    #[test]
    fn an_events_outcome_reads_back_as_written() {
        // The outcome is read from the event's Value (wire::de::read): the JSON the driver passes
        // back, which is the outcome as the core wrote it, is the same outcome again; a field
        // of the wrong type is still refused.
        for event in [
            GuardEvent::Verified {
                now: 7,
                outcome: claim_renewal(Status::Renewed, Some(lease(9))),
            },
            GuardEvent::RenewalEnded {
                now: 8,
                outcome: renewed(40),
            },
            GuardEvent::RenewalEnded {
                now: 9,
                outcome: lost(),
            },
        ] {
            let text = serde_json::to_string(&event).unwrap();
            let back: GuardEvent = serde_json::from_str(&text).unwrap();
            assert_eq!(back, event, "{text}");
        }
        let wrong =
            r#"{"kind":"renewal-ended","now":1,"outcome":{"result":"renewed","success":"yes"}}"#;
        assert!(serde_json::from_str::<GuardEvent>(wrong).is_err());
    }
}
