// The job summaries' timeline: acquire, release, status and reap (their bundles, run as the
// runner runs them against the emulator) each write a Mermaid gantt of the lock's holdings,
// built from the state and its lastChange. The gantt is drawn by the `mermaid` package in
// headless Chromium, and the drawing has one bar per holding (and per waiter, below). Where no
// browser is installed the drawing is skipped, and the test says so; the gantt's text is
// checked either way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT, jobContext, runAction } from './helpers/action-runner.mjs';
import { mermaidGantt, timelineOf } from '../actions/lib/timeline.mjs';

const MERMAID = join(ROOT, 'node_modules/mermaid/dist/mermaid.min.js');
const BROWSER = ['chromium', 'chromium-browser', 'google-chrome'].find((b) => spawnSync(b, ['--version'], { encoding: 'utf8' }).status === 0);

let emu;
let scratch;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app', files: { 'locks/tl.config.json': '{"capacity": 2}' } });
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-summary-'));
});
after(async () => {
  await emu.close();
  rmSync(scratch, { recursive: true, force: true });
});

const gantts = (summary) => [...summary.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]);
const barLines = (gantt, section) => {
  const body = gantt.split(`  section ${section}\n`)[1]?.split('\n  section ')[0] ?? '';
  return body.split('\n').filter((l) => /:(active, |done, )?[hq]\d+, \d+, \d+$/.test(l));
};

/**
 * Draws each gantt in headless Chromium with the mermaid package; returns, per gantt, the ids
 * of the task bars drawn (`h0`, `q0`, …), or throws with what the page said.
 */
function draw(diagrams) {
  const page = join(scratch, `page-${Date.now()}.html`);
  const escape = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  writeFileSync(
    page,
    `<!doctype html><html><body>
${diagrams.map((d, i) => `<pre class="mermaid" id="d${i}">\n${escape(d)}\n</pre>`).join('\n')}
<script src="${pathToFileURL(MERMAID)}"></script>
<script>
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
mermaid.run({ querySelector: 'pre.mermaid' }).then(
  () => document.body.setAttribute('data-drawn', 'ok'),
  (e) => document.body.setAttribute('data-drawn', 'error: ' + e.message));
</script></body></html>`,
  );
  const r = spawnSync(BROWSER, ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu', '--allow-file-access-from-files', '--virtual-time-budget=20000', '--dump-dom', pathToFileURL(page).href], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  const dom = r.stdout ?? '';
  const drawn = /data-drawn="([^"]*)"/.exec(dom)?.[1];
  assert.equal(drawn, 'ok', `mermaid drew the page (${drawn ?? 'nothing'}; exit ${r.status}; ${r.error?.message ?? ''})`);
  return diagrams.map((_, i) => {
    const part = dom.split(`id="d${i}"`)[1]?.split('</pre>')[0] ?? '';
    return [...part.matchAll(/<rect id="[^"]*-([hq]\d+)"[^>]*class="task[ "]/g)].map((m) => m[1]);
  });
}

test('mermaid is a devDependency only, and no bundle of dist/ carries it', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.ok(pkg.devDependencies.mermaid, 'mermaid is a devDependency');
  assert.equal(pkg.dependencies.mermaid, undefined);
  for (const f of readdirSync(join(ROOT, 'dist')).filter((n) => n.endsWith('.mjs'))) {
    assert.doesNotMatch(readFileSync(join(ROOT, 'dist', f), 'utf8'), /mermaidAPI|from ["']mermaid["']/, f);
  }
});

test('timelineOf: current holdings run to now, ended ones end at lastChange, waiters below', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const state = {
    lock: 'gpu',
    holders: [{ holderId: 'octo/a:1:build', fence: 3, acquiredAt: '2026-12-01T11:50:00.000Z' }],
    queue: [{ holderId: 'octo/b:2:build', enqueuedAt: '2026-12-01T11:55:00.000Z' }],
    lastChange: { at: '2026-12-01T11:50:00.000Z', by: 'octo/a:1:build', action: 'acquire', removed: [{ holderId: 'octo/c:3:build', fence: 2, expiresAt: '2026-12-01T11:40:00.000Z', reason: 'lease-expired' }] },
  };
  const t = timelineOf(state, now);
  assert.deepEqual(t.holdings.map((h) => [h.fence, h.open, h.startKnown]), [[2, false, false], [3, true, true]]);
  assert.equal(t.holdings[1].end, now);
  assert.equal(t.holdings[0].end, Date.parse('2026-12-01T11:50:00Z'));
  assert.equal(t.queue.length, 1);
  const released = timelineOf({ ...state, lastChange: { ...state.lastChange, action: 'release', by: 'octo/d:4:build', removed: [] } }, now);
  assert.ok(released.holdings.some((h) => h.holderId === 'octo/d:4:build' && !h.open), 'a release ends its writer\'s holding');
  const gantt = mermaidGantt(state, now);
  assert.equal(barLines(gantt, 'holdings').length, 2);
  assert.equal(barLines(gantt, 'queue').length, 1);
  assert.doesNotMatch(gantt.split('\n').slice(4).map((l) => l.split(' :')[0]).join('\n'), /[:#;]/, 'task names carry no Mermaid syntax');
});

test('the summaries of acquire, release, status and reap draw one bar per holding', { timeout: 240_000 }, async (t) => {
  const ctx = (runId) => jobContext({ runId });
  const a = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'tl', 'record-job-id': 'false' }, context: ctx(8101) });
  assert.equal(a.outputs.result, 'acquired', a.stdout);
  const b = await runAction('acquire', { apiUrl: emu.url, inputs: { lock: 'tl', 'record-job-id': 'false' }, context: ctx(8102) });
  assert.equal(b.outputs.result, 'acquired', b.stdout);

  // A queue and a last change that ended holdings, written as another job would have left them:
  // one waiter, one holding removed for its lease and one released by its holder.
  const state = JSON.parse(await emu.readFile('leasehold-state', 'locks/tl.json'));
  const holder = state.holders[0];
  const waiter = { holderId: 'octo/app:8103:build', nonce: 'aaaaaaaaaaaaaaaa', run: { ...holder.run, runId: 8103 }, leaseMs: holder.leaseMs, enqueuedAt: holder.acquiredAt, lastSeenAt: holder.acquiredAt };
  state.queue = [waiter];
  state.revision += 1;
  state.lastChange = { at: holder.acquiredAt, by: 'octo/app:8100:build', action: 'release', removed: [{ holderId: 'octo/app:8099:build', fence: 99, expiresAt: holder.acquiredAt, reason: 'lease-expired' }] };
  await emu.writeFile('leasehold-state', 'locks/tl.json', `${JSON.stringify(state, null, 2)}\n`);

  const status = await runAction('status', { apiUrl: emu.url, inputs: { lock: 'tl' }, context: ctx(8104) });
  assert.equal(status.outputs.result, 'status', status.stdout);
  const reap = await runAction('reap', { apiUrl: emu.url, inputs: { lock: 'tl' }, context: ctx(8105) });
  const release = await runAction('release', { apiUrl: emu.url, inputs: { lock: 'tl' }, context: ctx(8101) });
  assert.equal(release.outputs.result, 'released', release.stdout);

  // What each summary's state holds, so how many bars its gantt must have.
  const expected = {
    acquire: { holdings: 2, queue: 0 }, // the second acquire: two holders
    status: { holdings: 4, queue: 1 }, // two holders, the removed one, the released one
    reap: { holdings: 4, queue: 1 }, // nothing proven over: as status saw it
    release: { holdings: 3, queue: 0 }, // the releaser's holding ended, the other kept, the waiter admitted
  };
  const summaries = { acquire: b.summary, status: status.summary, release: release.summary, reap: reap.summary };
  const diagrams = [];
  for (const [kind, summary] of Object.entries(summaries)) {
    const [gantt, ...more] = gantts(summary);
    assert.ok(gantt, `the ${kind} summary has a Mermaid gantt:\n${summary}`);
    assert.equal(more.length, 0);
    diagrams.push(gantt);
  }
  const counts = diagrams.map((g) => ({ holdings: barLines(g, 'holdings').length, queue: barLines(g, 'queue').length }));
  assert.deepEqual(counts[0], expected.acquire, diagrams[0]);
  assert.deepEqual(counts[1], expected.status, diagrams[1]);
  assert.deepEqual(counts[2], expected.release, diagrams[2]);
  assert.deepEqual(counts[3], expected.reap, diagrams[3]);

  if (!BROWSER || !existsSync(MERMAID)) {
    t.diagnostic(`SKIPPED the drawing: ${!BROWSER ? 'no chromium on PATH (bash .ci/setup installs it with apt-get)' : 'the mermaid package is not installed (npm ci)'}; the gantt text was checked`);
    t.skip('no browser to draw the Mermaid gantt');
    return;
  }
  const drawn = draw(diagrams);
  diagrams.forEach((g, i) => {
    const bars = drawn[i];
    const want = [...barLines(g, 'holdings'), ...barLines(g, 'queue')].map((l) => /:(?:active, |done, )?([hq]\d+),/.exec(l)[1]);
    assert.deepEqual(bars.sort(), want.sort(), `diagram ${i}: one drawn bar per holding and waiter\n${g}`);
  });
  t.diagnostic(`drawn with ${BROWSER}: ${drawn.map((b) => b.length).join(', ')} bars`);
});
