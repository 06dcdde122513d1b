// The driver loop: feed the core events, perform the one command it returns, repeat until it
// finishes. It decides nothing: no retry counts, backoff, admission or timing of its own.

/** A clock for real runs. Tests pass a virtual one. */
export const systemClock = {
  now: () => Date.now(),
  sleepUntil: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now()))),
};

function describe(command) {
  switch (command.kind) {
    case 'readFile':
      return `GET contents/${command.path}${command.ref ? `?ref=${command.ref}` : ''}${command.ifNoneMatch ? ' (if-none-match)' : ''}`;
    case 'writeFile':
      return `PUT contents/${command.path} on ${command.branch}${command.sha ? ` (sha ${command.sha.slice(0, 7)})` : ' (create)'}`;
    case 'createTree':
      return 'POST git/trees';
    case 'createCommit':
      return 'POST git/commits';
    case 'createBranch':
      return `POST git/refs refs/heads/${command.branch}`;
    default:
      return command.kind;
  }
}

function describeReply(reply) {
  switch (reply.kind) {
    case 'http':
      return `${reply.status} ${reply.message ?? ''}`.trim();
    case 'transport':
      return `no answer (${reply.sent ? 'may have been sent' : 'not sent'}): ${reply.message}`;
    case 'notModified':
      return '304 not modified';
    default:
      return reply.kind;
  }
}

/**
 * Runs one operation to its end.
 * op: a core Operation; perform(command) → Promise<reply>; clock: { now, sleepUntil };
 * logger: { debug, info, warning }. Returns the outcome the core finished with.
 */
export async function runOperation({ op, perform, clock = systemClock, logger }) {
  let step = op.step({ kind: 'start', now: clock.now() });
  for (;;) {
    for (const line of step.log ?? []) logger[line.level](line.text);
    const command = step.command;
    if (command.kind === 'finish') return command.outcome;
    if (command.kind === 'sleep') {
      await clock.sleepUntil(command.untilMs);
      step = op.step({ kind: 'timer', now: clock.now() });
      continue;
    }
    const reply = await perform(command);
    logger.debug(`${describe(command)} → ${describeReply(reply)}`);
    step = op.step({ kind: 'reply', now: clock.now(), reply });
  }
}
