#!/usr/bin/env node
// Fails when the modules of one Rust crate import each other in a cycle.
//
//   node .ci/check-cycles.mjs crates/leasehold-core/src [--report] [--graph]
//
// It reads every .rs file under the directory, collects the paths that name another module of the
// same crate (`use crate::…`, `crate::…` written inline, `super::…`, `self::…`, and `use child::…`
// of a declared `mod child;`), resolves each to the file that defines the item (following the
// `pub use` re-exports of lib.rs and of each mod.rs, so a facade is looked through), and builds
// two graphs: one between files, one between top-level modules (`src/engine/**` is `engine`,
// `src/time.rs` is `time`). A cycle in either is printed with the files or modules on it, and the
// exit code is 1 (with `--report`, 0: for a crate whose cycles are known and not yet broken).
// `--graph` also prints each top-level module with the modules it depends on.
// Comments and string literals are stripped first; `mod tests` blocks count like any other code.
// Method calls name no path, so they are not seen: the graph is that of the paths in the source.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const args = process.argv.slice(2);
const reportOnly = args.includes('--report');
const showGraph = args.includes('--graph');
const root = args.find((a) => !a.startsWith('--'));
if (!root) {
  console.error('usage: node .ci/check-cycles.mjs <crate>/src [--report]');
  process.exit(2);
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : name.endsWith('.rs') ? [p] : [];
  });
}

/** `engine/mod.rs` → ['engine'], `engine/plan.rs` → ['engine', 'plan'], `lib.rs` → []. */
function modulePath(file) {
  const parts = relative(root, file).split(sep);
  const last = parts.pop().replace(/\.rs$/, '');
  if (parts.length === 0 && (last === 'lib' || last === 'main')) return [];
  if (last !== 'mod') parts.push(last);
  return parts;
}

/** Source without comments, string and char literals (kept as empty quotes). */
function strip(src) {
  let out = '';
  for (let i = 0; i < src.length; ) {
    const c = src[i];
    const n = src[i + 1];
    if (c === '/' && n === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && n === '*') {
      let depth = 1;
      i += 2;
      while (i < src.length && depth > 0) {
        if (src[i] === '/' && src[i + 1] === '*') (depth++, (i += 2));
        else if (src[i] === '*' && src[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
    } else if (c === 'r' && /^r#*"/.test(src.slice(i, i + 10)) && !/[A-Za-z0-9_]/.test(src[i - 1] ?? '')) {
      const hashes = /^r(#*)"/.exec(src.slice(i))[1];
      const end = src.indexOf(`"${hashes}`, i + hashes.length + 2);
      out += '""';
      i = end < 0 ? src.length : end + hashes.length + 1;
    } else if (c === '"') {
      i++;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      out += '""';
      i++;
    } else if (c === "'" && (/^'(\\.|[^\\'])'/.test(src.slice(i, i + 4)) || /^'\\u\{[0-9a-fA-F]+\}'/.test(src.slice(i, i + 12)))) {
      i = src.indexOf("'", i + 2) + 1;
      out += "' '";
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Expands a use tree (`a::{b, c::{d, e}}`) into full paths; `self` in a group names the group. */
function expand(tree) {
  // A rename (`x as y`) names x; strip it before the white space that delimits it goes.
  tree = tree.replace(/\s+as\s+\w+/g, '').replace(/\s+/g, '');
  const open = tree.indexOf('{');
  if (open < 0) return [tree.replace(/::self$/, '')];
  const prefix = tree.slice(0, open);
  const inner = tree.slice(open + 1, tree.lastIndexOf('}'));
  const items = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= inner.length; i++) {
    const ch = inner[i];
    if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if ((ch === ',' || i === inner.length) && depth === 0) {
      const item = inner.slice(start, i);
      if (item) items.push(item);
      start = i + 1;
    }
  }
  return items.flatMap((item) => (item === 'self' ? [prefix.replace(/::$/, '')] : expand(prefix + item)));
}

const files = walk(root).sort();
const byModule = new Map(); // 'engine::plan' → file
const info = new Map(); // file → { mod, code, children, reexports }
for (const file of files) {
  const mod = modulePath(file);
  if (relative(root, file) === 'main.rs' && files.some((f) => relative(root, f) === 'lib.rs')) continue; // a second crate root
  const code = strip(readFileSync(file, 'utf8'));
  const children = new Set([...code.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm)].map((m) => m[1]));
  byModule.set(mod.join('::'), file);
  info.set(file, { mod, code, children, reexports: new Map() });
}

/** Absolute module path of a path written in module `mod` (null when it is not this crate's). */
function absolute(path, mod, children) {
  const segs = path.split('::').filter(Boolean);
  if (segs[0] === 'crate') return segs.slice(1);
  if (segs[0] === 'self') return [...mod, ...segs.slice(1)];
  if (segs[0] === 'super') {
    let base = [...mod];
    while (segs[0] === 'super') (segs.shift(), base.pop());
    return [...base, ...segs];
  }
  if (children.has(segs[0])) return [...mod, ...segs];
  return null;
}

/** Inline modules (`mod tests { … }`): [start, end, name] ranges of the code. */
function inlineModules(code) {
  const out = [];
  for (const m of code.matchAll(/\bmod\s+(\w+)\s*\{/g)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    for (; i < code.length; i++) {
      if (code[i] === '{') depth++;
      else if (code[i] === '}' && --depth === 0) break;
    }
    out.push([m.index, i, m[1]]);
  }
  return out;
}

/** Every path of this crate that a file names, as absolute segments. */
function pathsOf({ mod, code, children }) {
  const blocks = inlineModules(code);
  // The module a position of the file is in: the file's, plus the inline modules around it.
  const at = (pos) => [...mod, ...blocks.filter(([a, b]) => a < pos && pos < b).map(([, , name]) => name)];
  const out = [];
  for (const m of code.matchAll(/\buse\s+([^;]+);/g)) {
    for (const p of expand(m[1])) {
      const abs = absolute(p, at(m.index), children);
      if (abs) out.push({ abs, pub: /\bpub(\([^)]*\))?\s+use\s*$/.test(code.slice(Math.max(0, m.index - 20), m.index + 3)) });
    }
  }
  const inline = code.replace(/\buse\s+[^;]+;/g, (u) => ' '.repeat(u.length));
  for (const m of inline.matchAll(/(?<![\w:])((?:crate|super|self)(?:::\w+)+)/g)) {
    const abs = absolute(m[1], at(m.index), children);
    if (abs) out.push({ abs, pub: false });
  }
  return out;
}

// Re-exports: `pub use x::Name;` in a module makes `module::Name` resolve to x's file.
for (const [, i] of info) {
  for (const { abs, pub } of pathsOf(i)) {
    if (!pub) continue;
    const name = abs[abs.length - 1];
    if (name !== '*') i.reexports.set(name, abs);
  }
}

/** The file that defines what `abs` names. */
function resolve(abs, seen = 0) {
  for (let k = abs.length; k >= 0; k--) {
    const file = byModule.get(abs.slice(0, k).join('::'));
    if (!file) continue;
    const next = abs[k];
    const target = next !== undefined && info.get(file).reexports.get(next);
    if (target && seen < 16 && target.join('::') !== abs.join('::')) return resolve([...target, ...abs.slice(k + 1)], seen + 1);
    return file;
  }
  return null;
}

const fileEdges = new Map(files.map((f) => [f, new Map()]));
for (const [file, i] of info) {
  for (const { abs, pub } of pathsOf(i)) {
    if (pub && i.mod.length <= 1 && abs.slice(0, i.mod.length).join('::') === i.mod.join('::')) continue; // a facade re-exporting its own children
    const target = resolve(abs);
    if (target && target !== file && !fileEdges.get(file).has(target)) fileEdges.get(file).set(target, abs.join('::'));
  }
}

// The crate root declares every top-level module, so a file that depends on the root itself (a
// glob `use crate::*`, or a name the root defines) depends on every module: a cycle.
const rootFile = byModule.get('');
if (rootFile) {
  for (const child of info.get(rootFile).children) {
    const target = byModule.get(child);
    if (target && !fileEdges.get(rootFile).has(target)) fileEdges.get(rootFile).set(target, `mod ${child}`);
  }
}

const top = (file) => (info.get(file).mod[0] ?? '(crate root)');
const modEdges = new Map();
for (const [from, tos] of fileEdges) {
  if (!info.has(from)) continue;
  for (const [to, via] of tos) {
    const a = top(from);
    const b = top(to);
    if (a === b) continue;
    if (!modEdges.has(a)) modEdges.set(a, new Map());
    if (!modEdges.get(a).has(b)) modEdges.get(a).set(b, `${relative(root, from)} names ${via}`);
  }
}

/** Tarjan's strongly connected components; returns the components with a cycle. */
function cycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  let n = 0;
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
  function visit(v) {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) (visit(w), low.set(v, Math.min(low.get(v), low.get(w))));
      else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const comp = [];
      let w;
      do (w = stack.pop()), on.delete(w), comp.push(w);
      while (w !== v);
      if (comp.length > 1) found.push(comp);
    }
  }
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

/** One cycle through a component, as a list of steps `a → b (why)`. */
function loop(edges, comp, label) {
  const inComp = new Set(comp);
  const start = comp.sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const [w] of edges.get(v) ?? []) {
      if (!inComp.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let x = v; prev.get(x) !== null; x = prev.get(x)) path.unshift(prev.get(x));
        path.push(start);
        return path.slice(0, -1).map((a, k) => `  ${label(a)} → ${label(path[k + 1])}   (${edges.get(a).get(path[k + 1])})`).join('\n');
      }
      if (!prev.has(w)) (prev.set(w, v), queue.push(w));
    }
  }
  return '';
}

const rel = (f) => relative(root, f);
const fileCycles = cycles(fileEdges);
const modCycles = cycles(modEdges);
const fileCount = [...fileEdges.values()].reduce((k, m) => k + m.size, 0);
const modCount = [...modEdges.values()].reduce((k, m) => k + m.size, 0);
for (const comp of modCycles) console.log(`cycle between top-level modules ${comp.sort().join(', ')}:\n${loop(modEdges, comp, (m) => m)}`);
for (const comp of fileCycles) console.log(`cycle between files ${comp.map(rel).sort().join(', ')}:\n${loop(fileEdges, comp, rel)}`);
if (showGraph) {
  for (const [a, tos] of [...modEdges].sort()) console.log(`${a} → ${[...tos.keys()].sort().join(', ')}`);
}
const summary = `${root}: ${info.size} files, ${fileCount} file edges, ${modCount} module edges`;
if (modCycles.length + fileCycles.length === 0) {
  console.log(`${summary}: no import cycle`);
} else {
  console.log(`${summary}: ${modCycles.length} module cycle(s), ${fileCycles.length} file cycle(s)`);
  if (!reportOnly) process.exit(1);
}
