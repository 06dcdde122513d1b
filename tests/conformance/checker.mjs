// The conformance check every test emulator runs under `node --test` (see conformanceMode in
// tests/emulator/emulator.mjs): it collects each exchange, validates them when the emulator
// closes (close() then rejects, naming every mismatch, which fails the test that closed it),
// and at process exit validates what was never closed, prints this process's figures and
// the run's figures so far, and fails the process on any mismatch.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { loadGraphqlSchema } from './graphql.mjs';
import { loadSpec } from './openapi.mjs';
import { validateAll } from './validate.mjs';

const checkers = [];
let exitHooked = false;

export class ConformanceError extends Error {
  constructor(summary, label) {
    const lines = summary.mismatches.slice(0, 20).map((m) => `  - ${m.text}`);
    const more = summary.mismatches.length > 20 ? [`  … and ${summary.mismatches.length - 20} more`] : [];
    super(
      `conformance: ${summary.mismatches.length} difference(s) between the emulator${label ? ` (${label})` : ''} and GitHub's OpenAPI description ` +
        `(api.github.com, @octokit/openapi ${summary.specVersion}) or GraphQL schema (@octokit/graphql-schema ${loadGraphqlSchema().version}); ` +
        `allow one only by adding it to tests/conformance/deviations.mjs with its source:\n` +
        [...lines, ...more].join('\n'),
    );
    this.summary = summary;
  }
}

/** A checker for one emulator. record(exchange) as an onExchange recorder; finish() validates
 *  and throws ConformanceError on a mismatch (once: later calls return the summary). */
export function createChecker(label = null) {
  loadSpec(); // parse the description now, in the test's setup, not inside a timed test
  loadGraphqlSchema(); // and GitHub's GraphQL schema
  runDir(); // fix the run's directory now, so that processes spawned later share it
  const checker = {
    label,
    exchanges: [],
    summary: null,
    record(exchange) {
      if (checker.summary) return; // after close(): nothing more is checked for this emulator
      checker.exchanges.push(exchange);
    },
    finish() {
      if (!checker.summary) {
        checker.summary = validateAll(checker.exchanges);
        checker.exchanges = [];
        if (checker.summary.mismatches.length) throw new ConformanceError(checker.summary, label);
      }
      return checker.summary;
    },
  };
  checkers.push(checker);
  hookExit();
  return checker;
}

/** Figures of several summaries together. */
export function combine(summaries) {
  const total = { files: new Set(), requests: 0, pairs: 0, resets: 0, refused: 0, mismatches: 0, operations: new Map(), deviations: new Map() };
  for (const s of summaries) {
    if (s.file) total.files.add(s.file);
    total.requests += s.requests;
    total.pairs += s.pairs;
    total.resets += s.resets;
    total.refused += s.refused;
    total.mismatches += typeof s.mismatches === 'number' ? s.mismatches : s.mismatches.length;
    for (const [k, v] of s.operations instanceof Map ? s.operations : Object.entries(s.operations)) total.operations.set(k, (total.operations.get(k) ?? 0) + v);
    for (const [k, v] of s.deviations instanceof Map ? s.deviations : Object.entries(s.deviations)) total.deviations.set(k, (total.deviations.get(k) ?? 0) + v);
  }
  return total;
}

/** Operations that GitHub documents (pseudo-operations of deviations excluded). */
export const documentedOps = (operations) => [...operations.keys()].filter((k) => !k.startsWith('legacy '));

/** The directory where the processes of one test run leave their figures. */
export function runDir() {
  if (process.env.LEASEHOLD_CONFORMANCE_DIR) return process.env.LEASEHOLD_CONFORMANCE_DIR;
  if (!process.env.LEASEHOLD_CONFORMANCE_RUN) {
    // Under `node --test` the parent is the runner: one directory per runner process (its
    // pid and start time), inherited by anything this process spawns.
    let start = '';
    try {
      start = readFileSync(`/proc/${process.ppid}/stat`, 'utf8').split(') ')[1].split(' ')[19];
    } catch {}
    process.env.LEASEHOLD_CONFORMANCE_RUN = `${process.ppid}-${start || 'x'}`;
  }
  const base = path.join(os.tmpdir(), 'leasehold-conformance');
  mkdirSync(base, { recursive: true });
  // Forget runs older than a day.
  for (const name of readdirSync(base)) {
    try {
      if (Date.now() - statSync(path.join(base, name)).mtimeMs > 86_400_000) rmSync(path.join(base, name), { recursive: true, force: true });
    } catch {}
  }
  return path.join(base, `run-${process.env.LEASEHOLD_CONFORMANCE_RUN}`);
}

/** Every process summary left in a run directory. */
export function readRunSummaries(dir = runDir()) {
  let names = [];
  try {
    names = readdirSync(dir).filter((n) => /^summary-\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const out = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(readFileSync(path.join(dir, n), 'utf8')));
    } catch {}
  }
  return out;
}

export function figuresLine(t, { long = false } = {}) {
  const ops = documentedOps(t.operations).sort();
  const deviations = [...t.deviations.keys()].sort();
  return (
    `${t.pairs} request/response pairs validated (and ${t.resets} requests left unanswered on purpose) over ${ops.length} documented operations` +
    (long ? ` (${ops.join(', ')})` : '') +
    `, ${t.refused} invalid requests refused as GitHub refuses them, ${deviations.length} listed deviations used` +
    (long ? ` (${deviations.join(', ') || 'none'})` : '')
  );
}

function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    let failed = false;
    for (const c of checkers) {
      try {
        c.finish();
      } catch (e) {
        if (!(e instanceof ConformanceError)) console.error('conformance: the check itself failed:', e);
      }
      if (c.summary?.mismatches.length) {
        // Thrown by close() it failed the test that closed the emulator (unless that test
        // swallowed it); said again here, and the process fails either way.
        failed = true;
        console.error(new ConformanceError(c.summary, c.label).message);
      }
    }
    const mine = combine(checkers.map((c) => c.summary).filter(Boolean));
    const file = process.argv[1] ? path.relative(process.cwd(), process.argv[1]) : '(unknown)';
    const spec = `api.github.com, @octokit/openapi ${loadSpec().version}, @octokit/graphql-schema ${loadGraphqlSchema().version}`;
    let runLine = '';
    try {
      const dir = runDir();
      mkdirSync(dir, { recursive: true });
      const own = { file, ...mine, files: undefined, operations: Object.fromEntries(mine.operations), deviations: Object.fromEntries(mine.deviations) };
      const tmp = path.join(dir, `.summary-${process.pid}.tmp`);
      writeFileSync(tmp, JSON.stringify(own));
      renameSync(tmp, path.join(dir, `summary-${process.pid}.json`)); // readers never see half a file
      const run = combine(readRunSummaries(dir));
      runLine = `\nconformance, this test run so far (${run.files.size} files): ${figuresLine(run, { long: true })}; ${run.mismatches} mismatches`;
    } catch {}
    console.error(`conformance (${spec}): ${file}: ${figuresLine(mine)}; ${mine.mismatches} mismatches${runLine}`);
    if (failed) process.exitCode = 1;
  });
}
