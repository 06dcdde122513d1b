//! A cancel heard with an answer (`cancelledReply`) by an operation outside the engine, each of
//! which stops on `cancel` in any phase: kept apart so that every such operation can use it
//! without depending on the others.
//!
//! The answer is handed over as an answer, and the cancel is held until the operation next
//! sleeps, where the driver would have told it: an answer that starts a read-back (a post whose
//! answer was lost, a create that may have landed) is read back first, never given up on.

use crate::wire::{Command, Error, Event, Step};

/// One of those operations: its own `step`.
pub trait Steps {
    fn step(&mut self, event: Event) -> Result<Step, Error>;
}

/// An operation outside the engine, with the cancel an answer brought held until it sleeps.
pub struct Cancellable<T> {
    op: T,
    pending: bool,
}

impl<T: Steps> Cancellable<T> {
    pub fn new(op: T) -> Self {
        Cancellable { op, pending: false }
    }

    pub fn step(&mut self, event: Event) -> Result<Step, Error> {
        let now = event.now();
        let event = match event {
            Event::CancelledReply { now, reply } => {
                self.pending = true;
                Event::Reply { now, reply }
            }
            Event::Cancel { now } => {
                self.pending = false;
                Event::Cancel { now }
            }
            other => other,
        };
        let mut step = self.op.step(event)?;
        if self.pending && matches!(step.command, Command::Sleep { .. }) {
            self.pending = false;
            let then = self.op.step(Event::Cancel { now })?;
            step.log.extend(then.log);
            step.command = then.command;
        }
        Ok(step)
    }
}
