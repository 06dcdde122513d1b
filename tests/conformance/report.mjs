// Validates every exchange recorded under a directory (a test run with
// LEASEHOLD_CONFORMANCE_DIR=DIR) and prints the figures and any mismatch:
//   LEASEHOLD_CONFORMANCE_DIR=DIR node --test --test-concurrency=2 tests/
//   node tests/conformance/report.mjs DIR
import process from 'node:process';
import { combine, figuresLine } from './checker.mjs';
import { readExchanges, validateAll } from './validate.mjs';

const dir = process.argv[2] ?? process.env.LEASEHOLD_CONFORMANCE_DIR;
if (!dir) {
  console.error('usage: node tests/conformance/report.mjs DIR');
  process.exit(2);
}
const summary = validateAll(readExchanges(dir));
const total = combine([summary]);
console.log(`conformance (api.github.com, @octokit/openapi ${summary.specVersion}): ${figuresLine(total, { long: true })}`);
for (const [source, n] of [...summary.sources].sort()) console.log(`  ${source}: ${n} exchanges`);
for (const m of summary.mismatches) console.log(`MISMATCH ${m.text}`);
process.exitCode = summary.mismatches.length ? 1 : 0;
