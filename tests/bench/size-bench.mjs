// `npm run bench:size`: what dist/ ships, per file, raw and gzipped (zlib level 9, as
// `gzip -9`), the wasm and the JavaScript apart, and the total. An action's repository reaches a
// runner as a gzipped archive, so the gzipped total is dist/'s share of what a job downloads. Nothing
// is asserted; run `npm run build` first to measure the sources rather than the committed dist/.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '../../dist');

const rows = readdirSync(DIST)
  .sort()
  .map((name) => {
    const bytes = readFileSync(join(DIST, name));
    return { name, raw: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
  });

const sum = (list) => list.reduce((s, r) => ({ raw: s.raw + r.raw, gzipped: s.gzipped + r.gzipped }), { raw: 0, gzipped: 0 });
const width = Math.max(...rows.map((r) => r.name.length), 'total, JavaScript'.length);
const n = (v) => v.toLocaleString('en-US').padStart(11);
const kb = (v) => `${(v / 1000).toFixed(1)} KB`.padStart(10);
const line = (name, { raw, gzipped }) => console.log(`${name.padEnd(width)} ${n(raw)} ${n(gzipped)} ${kb(gzipped)}`);

console.log(`${'dist/'.padEnd(width)} ${'bytes'.padStart(11)} ${'gzipped'.padStart(11)} ${''.padStart(10)}`);
for (const r of rows) line(r.name, r);
console.log('');
line('total, wasm', sum(rows.filter((r) => r.name.endsWith('.wasm'))));
line('total, JavaScript', sum(rows.filter((r) => r.name.endsWith('.mjs'))));
line('total', sum(rows));
