// npm run bench:claims: requests per claim operation, counted from the emulator's request log
// (every request the CLI process sent), each run as `node dist/cli.mjs claims …` against the
// GitHub emulator. Targets (issue 11): an uncontended claim at most 4, a renew and a release at
// most 3 each, a list over 500 claims at most 10. Figures are printed with their conditions;
// nothing here is asserted.
//
//   node tests/bench/claims-bench.mjs [--runs 5] [--claims 500]
import { startEmulator } from '../emulator/emulator.mjs';
import { runCli, runLine } from '../helpers/claims-cli.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 5);
const LISTED = arg('claims', 500);

const emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'README.md': 'app\n' }, limits: { graphqlPerHour: 1_000_000 }, conformance: false });
const counts = { claim: [], 'renew (as printed: --prior)': [], 'renew (no --prior: reads first)': [], 'release (as printed: --prior)': [], 'release (no --prior: reads first)': [] };
const ms = [];
async function measured(name, run) {
  const from = emu.log.length;
  const t0 = Date.now();
  const r = await run();
  ms.push(Date.now() - t0);
  if (r.code !== 0) throw new Error(`${name}: ${r.stdout}${r.stderr}`);
  counts[name]?.push(emu.log.length - from);
  return { doc: r.doc, requests: emu.log.slice(from).map((e) => `${e.method} ${e.path}`) };
}
const noPrior = (line) => line.replace(/ --repository-id \S+ --prior '[^']*'/, '').replace(' --if-due', '');
let shapes = {};
try {
  for (let i = 0; i < RUNS; i++) {
    const c = await measured('claim', () => runCli(emu, ['claims', 'claim', '--namespace', 'bench', '--key', `k${i}`]));
    const r = await measured('renew (as printed: --prior)', () => runLine(emu, c.doc.next.renew.replace(' --if-due', '')));
    const r2 = await measured('renew (no --prior: reads first)', () => runLine(emu, noPrior(r.doc.next.renew)));
    const rel = await measured(i % 2 ? 'release (no --prior: reads first)' : 'release (as printed: --prior)', () => runLine(emu, i % 2 ? noPrior(r2.doc.next.release) : r2.doc.next.release));
    if (i === 0) shapes = { claim: c.requests, renew: r.requests, release: rel.requests };
  }
  // A namespace of LISTED claims, made 20 at a time (family claims), then listed.
  for (let i = 0; i < LISTED; i += 20) {
    const keys = Array.from({ length: Math.min(20, LISTED - i) }, (_, j) => `item-${i + j}`);
    const f = await runCli(emu, ['claims', 'family', 'claim', '--namespace', 'big', '--keys', keys.join(',')]);
    if (f.code !== 0) throw new Error(f.stdout);
  }
  const from = emu.log.length;
  const list = await runCli(emu, ['claims', 'list', '--namespace', 'big']);
  const listed = emu.log.length - from;
  const stale = await runCli(emu, ['claims', 'list', '--namespace', 'big', '--stale']);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  console.log(`claims: requests per operation, from the emulator's request log (${RUNS} runs each; node ${process.version})`);
  for (const [name, xs] of Object.entries(counts)) if (xs.length) console.log(`  ${name.padEnd(34)} ${median(xs)} requests (min ${Math.min(...xs)}, max ${Math.max(...xs)})`);
  console.log(`  list over ${LISTED} claims                  ${listed} requests (${list.doc.claim.items.length} claims listed); --stale ${stale.doc.claim.items.length} of them`);
  console.log(`  what they are: claim ${shapes.claim.join(', ')}; renew ${shapes.renew.join(', ')}; release ${shapes.release.join(', ')}`);
  console.log(`  one CLI process against the local emulator: median ${median(ms)} ms`);
} finally {
  await emu.close();
}
