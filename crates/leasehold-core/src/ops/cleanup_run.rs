//! The cleanup command's run, as a sans-IO state machine: when it starts, when it is stopped,
//! which signal goes to its process group and when, and what its end is. The driver
//! (`actions/lib/cleanup.mjs`) spawns the command, keeps the one timer, signals the group and
//! feeds back what happened; every time and every choice is here. What the end means for the
//! resource is [`classify`]'s, and the [`CleanupCommand::Finish`] carries both.
//!
//! ```text
//!  signal received (before start) → (remembered)
//!  started           → spawn, wait-until(deadline)     | finish signalled (a signal came first)
//!  timer (deadline)  → signal SIGTERM, wait-until(now + kill grace)
//!  timer (kill)      → signal SIGKILL, wait-until(now + kill grace: SIGKILL again)
//!  signal received   → signal (the same; SIGBREAK as SIGTERM), wait-until(the SIGKILL it brings)
//!  child exited      → (SIGKILL to the group, after the deadline or a signal) finish
//! ```
//!
//! A signal this process receives while the command runs (the runner cancelling: SIGINT, then
//! SIGTERM 7.5 s later, then the step killed 2.5 s after that) is passed on to the group, and
//! SIGKILL follows as [`signal_kill_after`] says (7 s after the first, 1 s after a second, never
//! later than the kill grace), whichever comes first, so the command never outlives the step and the release in it. A
//! SIGKILL that did not end the command (a forced stop that failed, on Windows) goes again a
//! kill grace later, until the command has ended: the run never waits on nothing.

use serde::Serialize;

use crate::input::RawInputs;
use crate::ops::cleanup_command::{classify, CleanupReport, CommandEnd, CommandSettings};
use crate::ops::guard::{signal_kill_after, ChildExit, Signal};
use crate::wire::time::Millis;
use crate::wire::{Error, InputError, Level, LogLine, ProtocolError};

/// What the driver tells the run. `now` is the local clock, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, leasehold_derive::Read)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CleanupEvent {
    /// The run starts (after any signal received before it).
    Started { now: Millis },
    /// The armed timer fired.
    TimerFired { now: Millis },
    /// The command ended (or could not be started).
    ChildExited { now: Millis, exit: ChildExit },
    /// This process received SIGINT, SIGTERM, SIGHUP or SIGBREAK (Windows' Ctrl-Break: passed on
    /// as SIGTERM).
    SignalReceived { now: Millis, signal: Signal },
}

impl CleanupEvent {
    fn name(&self) -> String {
        crate::wire::tag_of(self, "kind").unwrap_or_default()
    }
}

/// What the driver does, in the order given; none of these blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CleanupCommand {
    /// Start `argv` (no shell, its own process group, the scrubbed environment) and forward the
    /// signals this process receives from now on (`signal-received`).
    Spawn { argv: Vec<String> },
    /// Arm the timer for `at` (local clock), replacing the one armed before; `timer-fired` then.
    #[serde(rename_all = "camelCase")]
    WaitUntil { at: Millis },
    /// Send `signal` to the command's process group.
    Signal { signal: Signal },
    /// Done: how the command ended, and what that says about the resource.
    Finish {
        end: CommandEnd,
        report: CleanupReport,
    },
}

/// The run's answer to one event.
#[must_use]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CleanupStep {
    pub commands: Vec<CleanupCommand>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogLine>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Ready,
    Running,
    Finished,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Ready => "ready",
            Phase::Running => "running",
            Phase::Finished => "finished",
        }
    }
}

/// The cleanup command's run.
#[derive(Clone, Debug)]
pub struct CleanupRun {
    settings: CommandSettings,
    phase: Phase,
    /// A signal received before the command started: it then never starts.
    cancelled: Option<Signal>,
    /// When the command is stopped (`timeout-seconds` after it started).
    deadline: Millis,
    /// Stopped at the deadline (SIGTERM sent).
    timed_out: bool,
    /// When SIGKILL goes to the group next (the deadline's kill grace, a signal's, or a kill
    /// grace after one that did not end the command), and how many went.
    kill_at: Option<Millis>,
    kills: u32,
    /// Signals received while the command runs (a second one brings the SIGKILL closer).
    signals: u32,
}

impl CleanupRun {
    /// Reads the command's inputs (`command`, `timeout-seconds`, `kill-grace-seconds`,
    /// `blocked-exit-code`, `job-status`); an error names the input.
    pub fn new(inputs: &RawInputs) -> Result<CleanupRun, InputError> {
        Ok(CleanupRun::with_settings(CommandSettings::parse(inputs)?))
    }

    pub fn with_settings(settings: CommandSettings) -> CleanupRun {
        CleanupRun {
            settings,
            phase: Phase::Ready,
            cancelled: None,
            deadline: 0,
            timed_out: false,
            kill_at: None,
            kills: 0,
            signals: 0,
        }
    }

    pub fn settings(&self) -> &CommandSettings {
        &self.settings
    }

    /// Feeds one event; returns what to do, in order.
    pub fn step(&mut self, event: CleanupEvent) -> Result<CleanupStep, Error> {
        let mut out = CleanupStep {
            commands: Vec::new(),
            log: Vec::new(),
        };
        match (self.phase, &event) {
            (Phase::Ready, CleanupEvent::SignalReceived { signal, .. })
                if *signal != Signal::Kill =>
            {
                self.cancelled.get_or_insert(*signal);
            }
            (Phase::Ready, CleanupEvent::Started { now }) => match self.cancelled {
                Some(signal) => {
                    say(
                        &mut out,
                        Level::Warning,
                        format!(
                            "{} was received before the cleanup command started; it does not run",
                            signal.as_str()
                        ),
                    );
                    self.finish(
                        CommandEnd::Signalled {
                            signal: signal.as_str().into(),
                        },
                        &mut out,
                    );
                }
                None => {
                    if let Some(asked) = self.settings.cancelled_from_ms {
                        say(
                            &mut out,
                            Level::Warning,
                            format!(
                                "the job was cancelled: the cleanup command gets {} s (not its timeout-seconds of {} s), so it and the release fit in the 5 minutes GitHub gives a cancelled job",
                                self.settings.timeout_ms / 1000,
                                asked / 1000
                            ),
                        );
                    }
                    self.phase = Phase::Running;
                    self.deadline = now + self.settings.timeout_ms;
                    out.commands.push(CleanupCommand::Spawn {
                        argv: self.settings.argv.clone(),
                    });
                    self.wake(&mut out);
                }
            },
            (Phase::Running, CleanupEvent::TimerFired { now }) => {
                let now = *now;
                if self.kill_at.is_some_and(|at| now >= at) {
                    let why = match (self.kills, self.timed_out) {
                        (0, true) => "the cleanup command did not stop within the kill grace",
                        (0, false) => "the cleanup command did not end after the signal",
                        _ => "the cleanup command is still running after SIGKILL",
                    };
                    say(
                        &mut out,
                        Level::Warning,
                        format!("{why}; SIGKILL to its process group"),
                    );
                    out.commands.push(CleanupCommand::Signal {
                        signal: Signal::Kill,
                    });
                    self.kills += 1;
                    self.kill_at = Some(now + self.settings.kill_grace_ms);
                }
                if !self.timed_out && now >= self.deadline {
                    self.timed_out = true;
                    self.kill_sooner(now + self.settings.kill_grace_ms);
                    say(
                        &mut out,
                        Level::Warning,
                        format!(
                            "the cleanup command is still running after {} s; stopping it (SIGTERM{})",
                            self.settings.timeout_ms / 1000,
                            self.kill_in(now)
                        ),
                    );
                    out.commands.push(CleanupCommand::Signal {
                        signal: Signal::Term,
                    });
                }
                self.wake(&mut out);
            }
            (Phase::Running, CleanupEvent::SignalReceived { now, signal })
                if *signal != Signal::Kill =>
            {
                self.signals += 1;
                self.kill_sooner(
                    now + signal_kill_after(self.signals, self.settings.kill_grace_ms),
                );
                let forwarded = signal.forwarded();
                let passed = if forwarded == *signal {
                    String::new()
                } else {
                    format!(" as {}", forwarded.as_str())
                };
                say(
                    &mut out,
                    Level::Info,
                    format!(
                        "received {}; passing it on to the cleanup command{passed} ({})",
                        signal.as_str(),
                        self.kill_in(*now).trim_start_matches(", ")
                    ),
                );
                out.commands
                    .push(CleanupCommand::Signal { signal: forwarded });
                self.wake(&mut out);
            }
            (Phase::Running, CleanupEvent::ChildExited { exit, .. }) => {
                // What the command left running dies with it once it was told to stop (its
                // deadline, or a signal passed on).
                if self.timed_out || self.signals > 0 {
                    out.commands.push(CleanupCommand::Signal {
                        signal: Signal::Kill,
                    });
                }
                let end = if self.timed_out {
                    CommandEnd::TimedOut
                } else {
                    match exit {
                        ChildExit::Exited { code } => CommandEnd::Exited { code: *code },
                        ChildExit::Signalled { signal, .. } => CommandEnd::Signalled {
                            signal: signal.clone(),
                        },
                        ChildExit::SpawnFailed { message } => CommandEnd::SpawnFailed {
                            message: message.clone(),
                        },
                    }
                };
                self.finish(end, &mut out);
            }
            _ => {
                return Err(Error::Protocol(ProtocolError {
                    event: event.name(),
                    state: format!("the cleanup command's run is {}", self.phase.as_str()),
                }))
            }
        }
        Ok(out)
    }

    /// SIGKILL at `at`, unless it is due sooner.
    fn kill_sooner(&mut self, at: Millis) {
        self.kill_at = Some(self.kill_at.map_or(at, |t| t.min(at)));
    }

    /// `, SIGKILL in N s unless it ends`, by the SIGKILL due.
    fn kill_in(&self, now: Millis) -> String {
        let at = self.kill_at.unwrap_or(now);
        let again = if self.kills > 0 { " again" } else { "" };
        format!(
            ", SIGKILL{again} in {} s unless it ends",
            at.saturating_sub(now).div_ceil(1000)
        )
    }

    /// Arms the one timer for what comes next: the deadline, or the SIGKILL due.
    fn wake(&self, out: &mut CleanupStep) {
        let deadline = (!self.timed_out).then_some(self.deadline);
        if let Some(at) = [deadline, self.kill_at].into_iter().flatten().min() {
            out.commands.push(CleanupCommand::WaitUntil { at });
        }
    }

    fn finish(&mut self, end: CommandEnd, out: &mut CleanupStep) {
        self.phase = Phase::Finished;
        let report = classify(&self.settings, &end);
        out.commands.push(CleanupCommand::Finish { end, report });
    }
}

fn say(out: &mut CleanupStep, level: Level, text: String) {
    out.log.push(LogLine { level, text });
}

/// The run, as transcripts: each event and the commands it must answer with.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::cleanup_command::CleanupReason;
    use CleanupCommand as C;
    use CleanupEvent as E;

    fn run() -> CleanupRun {
        // timeout 60 s, kill grace 10 s, a signal's SIGKILL 7 s after it, a second's 1 s.
        let inputs: RawInputs = [
            ("command", "seat\nreturn"),
            ("timeout-seconds", "60"),
            ("kill-grace-seconds", "10"),
            ("blocked-exit-code", "42"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        CleanupRun::new(&inputs).unwrap()
    }

    fn commands(run: &mut CleanupRun, event: CleanupEvent) -> Vec<CleanupCommand> {
        run.step(event).unwrap().commands
    }

    fn signal(run: &mut CleanupRun, now: Millis, signal: Signal) -> Vec<CleanupCommand> {
        commands(run, E::SignalReceived { now, signal })
    }

    fn timer(run: &mut CleanupRun, now: Millis) -> Vec<CleanupCommand> {
        commands(run, E::TimerFired { now })
    }

    fn sig(signal: Signal) -> CleanupCommand {
        C::Signal { signal }
    }

    fn started(run: &mut CleanupRun) {
        assert_eq!(
            commands(run, E::Started { now: 1_000 }),
            [
                C::Spawn {
                    argv: vec!["seat".into(), "return".into()]
                },
                C::WaitUntil { at: 61_000 },
            ]
        );
    }

    fn reason(commands: &[CleanupCommand]) -> (CommandEnd, CleanupReason) {
        match commands.last() {
            Some(C::Finish { end, report }) => (end.clone(), report.reason),
            other => panic!("not finished: {other:?}"),
        }
    }

    const TERM: C = C::Signal {
        signal: Signal::Term,
    };
    const KILL: C = C::Signal {
        signal: Signal::Kill,
    };

    #[test]
    fn an_exit_finishes_with_the_cores_report() {
        for (code, want) in [
            (0, CleanupReason::Completed),
            (42, CleanupReason::Blocked),
            (1, CleanupReason::Failed),
        ] {
            let mut r = run();
            started(&mut r);
            let c = commands(
                &mut r,
                E::ChildExited {
                    now: 5_000,
                    exit: ChildExit::Exited { code },
                },
            );
            assert_eq!(c.len(), 1, "{c:?}");
            assert_eq!(reason(&c), (CommandEnd::Exited { code }, want));
        }
        let mut r = run();
        started(&mut r);
        let c = commands(
            &mut r,
            E::ChildExited {
                now: 1_000,
                exit: ChildExit::SpawnFailed {
                    message: "ENOENT".into(),
                },
            },
        );
        assert_eq!(
            reason(&c),
            (
                CommandEnd::SpawnFailed {
                    message: "ENOENT".into()
                },
                CleanupReason::Failed
            )
        );
    }

    #[test]
    fn the_deadline_stops_the_command_and_kills_its_group_after_the_grace() {
        let mut r = run();
        started(&mut r);
        // Early: the timer is armed again for the deadline.
        assert_eq!(timer(&mut r, 30_000), [C::WaitUntil { at: 61_000 }]);
        assert_eq!(timer(&mut r, 61_000), [TERM, C::WaitUntil { at: 71_000 }]);
        // SIGKILL, and again a kill grace later unless the command has ended by then.
        assert_eq!(timer(&mut r, 71_000), [KILL, C::WaitUntil { at: 81_000 }]);
        let step = r.step(E::TimerFired { now: 81_000 }).unwrap();
        assert_eq!(step.commands, [KILL, C::WaitUntil { at: 91_000 }]);
        assert!(
            step.log[0].text.contains("still running after SIGKILL"),
            "{:?}",
            step.log
        );
        // The command ends by the SIGKILL: timed out, and its group gets SIGKILL again (what it
        // left running goes with it).
        let c = commands(
            &mut r,
            E::ChildExited {
                now: 71_010,
                exit: ChildExit::Signalled {
                    signal: "SIGKILL".into(),
                    number: 9,
                },
            },
        );
        assert_eq!(c[0], KILL);
        assert_eq!(reason(&c), (CommandEnd::TimedOut, CleanupReason::Timeout));
    }

    #[test]
    fn a_command_that_exits_on_sigterm_after_its_deadline_timed_out() {
        let mut r = run();
        started(&mut r);
        let _ = timer(&mut r, 61_000);
        let c = commands(
            &mut r,
            E::ChildExited {
                now: 62_000,
                exit: ChildExit::Exited { code: 0 },
            },
        );
        assert_eq!(c[0], KILL);
        assert_eq!(reason(&c), (CommandEnd::TimedOut, CleanupReason::Timeout));
    }

    #[test]
    fn a_signal_goes_on_and_sigkill_follows_sooner_after_a_second() {
        let mut r = run();
        started(&mut r);
        // The runner's SIGINT: passed on, SIGKILL 7 s later.
        let step = r
            .step(E::SignalReceived {
                now: 10_000,
                signal: Signal::Int,
            })
            .unwrap();
        assert_eq!(
            step.commands,
            [sig(Signal::Int), C::WaitUntil { at: 17_000 }]
        );
        assert!(
            step.log[0].text.contains("SIGKILL in 7 s"),
            "{:?}",
            step.log
        );
        // Its SIGTERM 5 s later: SIGKILL 1 s after it.
        assert_eq!(
            signal(&mut r, 15_000, Signal::Term),
            [TERM, C::WaitUntil { at: 16_000 }]
        );
        // SIGKILL, and again a kill grace later unless the command has ended.
        assert_eq!(timer(&mut r, 16_000), [KILL, C::WaitUntil { at: 26_000 }]);
        let c = commands(
            &mut r,
            E::ChildExited {
                now: 16_005,
                exit: ChildExit::Signalled {
                    signal: "SIGKILL".into(),
                    number: 9,
                },
            },
        );
        // Its group gets SIGKILL too (what it left running goes with it).
        assert_eq!(c.len(), 2);
        assert_eq!(c[0], KILL);
        assert_eq!(
            reason(&c),
            (
                CommandEnd::Signalled {
                    signal: "SIGKILL".into()
                },
                CleanupReason::Cancelled
            )
        );
    }

    #[test]
    fn a_command_that_ends_on_the_signal_takes_its_group_with_it() {
        let mut r = run();
        started(&mut r);
        let _ = signal(&mut r, 10_000, Signal::Int);
        let c = commands(
            &mut r,
            E::ChildExited {
                now: 10_200,
                exit: ChildExit::Exited { code: 130 },
            },
        );
        assert_eq!(c[0], KILL);
        assert_eq!(
            reason(&c),
            (CommandEnd::Exited { code: 130 }, CleanupReason::Failed)
        );
    }

    #[test]
    fn ctrl_break_goes_on_as_sigterm_and_is_named_as_received() {
        let mut r = run();
        started(&mut r);
        let step = r
            .step(E::SignalReceived {
                now: 10_000,
                signal: Signal::Break,
            })
            .unwrap();
        assert_eq!(step.commands, [TERM, C::WaitUntil { at: 17_000 }]);
        assert!(
            step.log[0]
                .text
                .starts_with("received SIGBREAK; passing it on to the cleanup command as SIGTERM"),
            "{:?}",
            step.log
        );
        let mut r = run();
        let _ = signal(&mut r, 500, Signal::Break);
        let c = commands(&mut r, E::Started { now: 1_000 });
        assert_eq!(
            reason(&c).0,
            CommandEnd::Signalled {
                signal: "SIGBREAK".into()
            }
        );
    }

    #[test]
    fn a_kill_grace_under_the_signals_grace_bounds_it() {
        let inputs: RawInputs = [("command", "seat"), ("kill-grace-seconds", "2")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut r = CleanupRun::new(&inputs).unwrap();
        let _ = commands(&mut r, E::Started { now: 0 });
        assert_eq!(
            signal(&mut r, 1_000, Signal::Int),
            [sig(Signal::Int), C::WaitUntil { at: 3_000 }]
        );
    }

    #[test]
    fn a_later_signal_never_puts_the_sigkill_off() {
        let mut r = run();
        started(&mut r);
        let _ = timer(&mut r, 61_000); // SIGKILL due at 71 s
        assert_eq!(
            signal(&mut r, 66_000, Signal::Int),
            [sig(Signal::Int), C::WaitUntil { at: 71_000 }]
        );
        // A signal's SIGKILL sooner than the deadline's stays due through the deadline.
        let mut r = run();
        started(&mut r);
        let _ = signal(&mut r, 58_000, Signal::Int); // SIGKILL due at 65 s
        assert_eq!(timer(&mut r, 61_000), [TERM, C::WaitUntil { at: 65_000 }]);
        assert_eq!(timer(&mut r, 65_000), [KILL, C::WaitUntil { at: 75_000 }]);
        // A second signal brings the next SIGKILL closer.
        assert_eq!(
            signal(&mut r, 65_500, Signal::Term),
            [TERM, C::WaitUntil { at: 66_500 }]
        );
    }

    #[test]
    fn after_a_signals_sigkill_the_deadline_still_kills() {
        // A SIGKILL that did not end the command (a forced stop that failed) must not leave the
        // run waiting on nothing: the deadline's SIGTERM is followed by SIGKILL again.
        let mut r = run();
        started(&mut r);
        let _ = signal(&mut r, 10_000, Signal::Hup);
        assert_eq!(timer(&mut r, 17_000), [KILL, C::WaitUntil { at: 27_000 }]);
        assert_eq!(timer(&mut r, 27_000), [KILL, C::WaitUntil { at: 37_000 }]);
        let mut r = run();
        started(&mut r);
        let _ = signal(&mut r, 55_000, Signal::Hup);
        assert_eq!(timer(&mut r, 61_000), [TERM, C::WaitUntil { at: 62_000 }]);
        assert_eq!(timer(&mut r, 62_000), [KILL, C::WaitUntil { at: 72_000 }]);
        assert_eq!(timer(&mut r, 72_000), [KILL, C::WaitUntil { at: 82_000 }]);
    }

    #[test]
    fn a_signal_before_the_start_keeps_the_command_from_running() {
        let mut r = run();
        assert_eq!(signal(&mut r, 500, Signal::Term), []);
        let step = r.step(E::Started { now: 1_000 }).unwrap();
        assert_eq!(step.commands.len(), 1, "{:?}", step.commands);
        assert_eq!(
            reason(&step.commands),
            (
                CommandEnd::Signalled {
                    signal: "SIGTERM".into()
                },
                CleanupReason::Cancelled
            )
        );
        assert_eq!(step.log[0].level, Level::Warning);
    }

    #[test]
    fn events_out_of_order_are_protocol_errors() {
        let mut r = run();
        assert!(matches!(
            r.step(E::TimerFired { now: 0 }),
            Err(Error::Protocol(_))
        ));
        started(&mut r);
        let _ = commands(
            &mut r,
            E::ChildExited {
                now: 2_000,
                exit: ChildExit::Exited { code: 0 },
            },
        );
        let err = r.step(E::TimerFired { now: 3_000 }).unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(p) if p.event == "timer-fired" && p.state.ends_with("finished")),
            "{err:?}"
        );
    }
}
