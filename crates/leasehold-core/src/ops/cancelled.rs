//! A cancel heard with an answer (`cancelledReply`) by an operation that stops on cancel in any
//! phase: kept apart so that every such operation can use it without depending on the others.

use crate::wire::time::Millis;
use crate::wire::{Command, Error, Event, Reply, Step};

/// `cancelledReply` for an operation that hears a cancel in any phase: the answer, then the
/// cancel at once (unless the answer finished it), as if the next command had been a sleep.
pub(crate) fn answer_then_cancel(
    now: Millis,
    reply: Reply,
    mut step: impl FnMut(Event) -> Result<Step, Error>,
) -> Result<Step, Error> {
    let mut first = step(Event::Reply { now, reply })?;
    if matches!(first.command, Command::Finish { .. }) {
        return Ok(first);
    }
    let then = step(Event::Cancel { now })?;
    first.log.extend(then.log);
    first.command = then.command;
    Ok(first)
}
