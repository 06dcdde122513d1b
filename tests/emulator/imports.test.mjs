// The emulator's files import each other without a cycle. Run: node --test tests/emulator/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** file -> the files of this directory it imports (`import … from './x.mjs'`). */
function importGraph(dir) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.mjs') && !f.endsWith('.test.mjs'));
  const imports = (f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/^import\s[^;]*?\sfrom\s+'\.\/([^']+)'/gms)].map((m) => m[1]);
  return new Map(files.map((f) => [f, imports(f)]));
}

/** The first cycle found, as [a, b, ..., a], or null. */
function findCycle(graph) {
  const state = new Map(); // file -> 'open' | 'done'
  const visit = (f, trail) => {
    if (state.get(f) === 'done') return null;
    if (state.get(f) === 'open') return [...trail.slice(trail.indexOf(f)), f];
    state.set(f, 'open');
    for (const d of graph.get(f) ?? []) {
      const cycle = visit(d, [...trail, f]);
      if (cycle) return cycle;
    }
    state.set(f, 'done');
    return null;
  };
  for (const f of graph.keys()) {
    const cycle = visit(f, []);
    if (cycle) return cycle;
  }
  return null;
}

test('no import cycle between the emulator files', (t) => {
  const graph = importGraph(HERE);
  for (const [f, deps] of graph) t.diagnostic(`${f} -> ${deps.join(', ') || '(none)'}`);
  assert.ok(graph.get('emulator.mjs')?.length, 'the entry imports the emulator files');
  for (const [f, deps] of graph) for (const d of deps) assert.ok(graph.has(d), `${f} imports ./${d}, which is not here`);
  assert.equal(findCycle(graph), null);
  // Not vacuous: a cycle is found when there is one.
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
});
