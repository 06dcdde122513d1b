//! Several engines in a row under one deadline (a reap of several locks): each runs to its
//! finish, hands what it learnt to the next, and the outcomes are combined into one.

use super::{Engine, Planner};
use crate::wire::time::Millis;
use crate::wire::{Command, Event, Outcome, ProtocolError, Step};

/// A planner that runs as one of several in a row.
pub trait Relay: Planner {
    /// What one engine learnt that the next may use (a reap's answers from the Actions API).
    type Shared;
    /// The common deadline, set on every planner when the first starts.
    fn set_deadline(&mut self, deadline: Millis);
    /// Takes what this planner learnt, to hand on.
    fn take_shared(&mut self) -> Self::Shared;
    /// Starts from what the planners before it learnt.
    fn give_shared(&mut self, shared: Self::Shared);
    /// One outcome for the several (at least one) outcomes, in order.
    fn combine(outcomes: &[Outcome]) -> Outcome;
}

/// Engines run one after another within one deadline, `span_ms` from the first start.
pub struct Several<P: Relay> {
    engines: Vec<Engine<P>>,
    current: usize,
    outcomes: Vec<Outcome>,
    span_ms: Millis,
    /// The engine that heard the job's cancel, once one did: the driver tells it once, so each
    /// engine after it is told at its first sleep.
    told: Option<usize>,
}

impl<P: Relay> Several<P> {
    /// `engines` must not be empty.
    pub fn new(engines: Vec<Engine<P>>, span_ms: Millis) -> Self {
        assert!(!engines.is_empty(), "at least one engine");
        Several {
            engines,
            current: 0,
            outcomes: Vec::new(),
            span_ms,
            told: None,
        }
    }

    /// Feeds one event to the engine running now; returns the one thing to do next.
    pub fn step(&mut self, event: Event) -> Result<Step, ProtocolError> {
        let now = event.now();
        if let (Event::Start { now }, 0) = (&event, self.current) {
            for e in &mut self.engines {
                e.planner.set_deadline(now + self.span_ms);
            }
        }
        if matches!(event, Event::Cancel { .. } | Event::CancelledReply { .. }) {
            self.told = Some(self.current);
        }
        let mut step = self.engines[self.current].step(event)?;
        loop {
            let Command::Finish { outcome } = &step.command else {
                if self.told.is_some_and(|t| t < self.current)
                    && matches!(step.command, Command::Sleep { .. })
                {
                    self.told = Some(self.current);
                    let then = self.engines[self.current].step(Event::Cancel { now })?;
                    let mut log = step.log;
                    log.extend(then.log);
                    step = Step {
                        command: then.command,
                        log,
                    };
                    continue;
                }
                return Ok(step);
            };
            self.outcomes.push((**outcome).clone());
            if self.current + 1 >= self.engines.len() {
                return Ok(Step {
                    command: Command::Finish {
                        outcome: Box::new(P::combine(&self.outcomes)),
                    },
                    log: step.log,
                });
            }
            // The next engine, with what was learnt so far.
            let shared = self.engines[self.current].planner.take_shared();
            self.current += 1;
            self.engines[self.current].planner.give_shared(shared);
            let mut log = step.log;
            let next = self.engines[self.current].step(Event::Start { now })?;
            log.extend(next.log);
            step = Step {
                command: next.command,
                log,
            };
        }
    }
}
