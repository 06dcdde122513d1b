// The driver loop: feed the core events, perform the one command it returns, repeat until it
// finishes. It decides nothing: no retry counts, backoff, admission or timing of its own.

/** A clock for real runs. Tests pass a virtual one. `sleepUntil` ends early when `signal` aborts. */
export const systemClock = {
  now: () => Date.now(),
  sleepUntil: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms - Date.now()));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * The events a machine of the core (the guard's loop, the cleanup command's run) hears, in the
 * order they happen, and its one timer. `push(event)` queues one; `fail(error)` makes the next
 * `next()` throw it; `next()` waits for the first event; `arm(at)` replaces the armed timer with
 * one that queues `timer-fired` at `at` (on `clock`); `disarm()` stops it.
 */
export function machineEvents(clock) {
  const events = [];
  let wake = null;
  let failure = null;
  let timer = null;
  const push = (event) => {
    events.push(event);
    wake?.();
  };
  const disarm = () => timer?.abort();
  return {
    push,
    fail(error) {
      failure = error;
      wake?.();
    },
    async next() {
      while (events.length === 0 && !failure) await new Promise((resolve) => (wake = resolve));
      wake = null;
      if (failure) throw failure;
      return events.shift();
    },
    arm(at) {
      disarm();
      const controller = (timer = new AbortController());
      clock.sleepUntil(at, controller.signal).then(() => {
        if (!controller.signal.aborted) push({ kind: 'timer-fired', now: clock.now() });
      });
    },
    disarm,
  };
}

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
    case 'createRef':
      return `POST git/refs ${command.ref}`;
    case 'getRef':
      return `GET git/ref/${command.ref}`;
    case 'listMatchingRefs':
      return `GET git/matching-refs/${command.prefix}${command.page > 1 ? `?page=${command.page}` : ''}`;
    case 'getRunAttempt':
      return `GET actions/runs/${command.runId}/attempts/${command.attempt} in ${command.repository}`;
    case 'getJob':
      return `GET actions/jobs/${command.jobId} in ${command.repository}`;
    case 'listJobs':
      return `GET actions/runs/${command.runId}/attempts/${command.attempt}/jobs in ${command.repository}`;
    case 'getViewer':
      return 'GET /user';
    case 'listComments':
      return `GET issues/${command.number}/comments${command.page > 1 ? `?page=${command.page}` : ''} in ${command.repository}`;
    case 'createComment':
      return `POST issues/${command.number}/comments in ${command.repository}`;
    case 'getPullRequest':
      return `GET pulls/${command.number} in ${command.repository}`;
    case 'listWorkflowRuns':
      return `GET actions/workflows/${command.workflow}/runs?event=${command.event} in ${command.repository}`;
    case 'listIssues':
      return `GET issues${command.page > 1 ? `?page=${command.page}` : ''} in ${command.repository}`;
    case 'createIssue':
      return `POST issues in ${command.repository}`;
    case 'updateIssue':
      return `PATCH issues/${command.number} in ${command.repository}`;
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
    case 'notAFile':
      return `200, but a ${reply.found} there, not a file`;
    case 'run':
      return `run ${reply.runId} attempt ${reply.runAttempt}: ${reply.status}${reply.conclusion ? ` (${reply.conclusion})` : ''}`;
    case 'job':
      return `job ${reply.id} (${reply.name}): ${reply.status}${reply.conclusion ? ` (${reply.conclusion})` : ''}${reply.runnerName ? ` on ${reply.runnerName}` : ''}`;
    case 'jobs':
      return `${reply.jobs.length} of ${reply.totalCount} jobs${reply.jobs.length ? ': ' : ''}${reply.jobs.slice(0, 5).map((j) => `${j.name} ${j.status}`).join(', ')}${reply.jobs.length > 5 ? ', …' : ''}`;
    default:
      return reply.kind;
  }
}

/**
 * Runs one operation to its end.
 * op: a core Operation; perform(command) → Promise<reply>; clock: { now, sleepUntil };
 * logger: { debug, info, warning }; cancel: an AbortSignal that fires when the job is being
 * cancelled (the core is then told `cancel` instead of sleeping, or `cancelledReply` with the
 * answer of a request that was in flight). Returns the outcome the core finished with.
 */
export async function runOperation({ op, perform, clock = systemClock, logger, cancel }) {
  let step = op.step({ kind: 'start', now: clock.now() });
  let told = false;
  for (;;) {
    for (const line of step.log ?? []) logger[line.level](line.text);
    const command = step.command;
    if (command.kind === 'finish') return command.outcome;
    if (command.kind === 'sleep') {
      if (!cancel?.aborted || told) await clock.sleepUntil(command.untilMs, told ? undefined : cancel);
      if (cancel?.aborted && !told) {
        told = true;
        logger.info('cancellation received: leaving the lock before exiting');
        step = op.step({ kind: 'cancel', now: clock.now() });
      } else {
        step = op.step({ kind: 'timer', now: clock.now() });
      }
      continue;
    }
    const reply = await perform(command);
    logger.debug(`${describe(command)} → ${describeReply(reply)}`);
    // A cancel that came while the request was in flight goes with its answer: an answer that
    // ends the operation (an admitting write) must not lose it.
    if (cancel?.aborted && !told) {
      told = true;
      logger.info('cancellation received: leaving the lock before exiting');
      step = op.step({ kind: 'cancelledReply', now: clock.now(), reply });
      continue;
    }
    step = op.step({ kind: 'reply', now: clock.now(), reply });
  }
}
