// Small helpers shared by the emulator's files: hashing, GitHub's node ids and timestamps,
// path and ref-name checks, pattern matching for fault rules and stale reads, an abortable
// sleep.

import crypto from 'node:crypto';

export const sha1 = (s) => crypto.createHash('sha1').update(s).digest('hex');

export const definedOnly = (o) => Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined));

export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

// Ids for repositories, owners, workflows, check suites, jobs and runners: one counter, so no
// two objects of the emulator share an id.
let nextId = 100000;
export const newId = () => nextId++;

export const encodePath = (p) => p.split('/').map(encodeURIComponent).join('/');

export function isoSeconds(ms) {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function nodeId(prefix, key) {
  return `${prefix}_kwDO${Buffer.from(sha1(key).slice(0, 18), 'hex').toString('base64url')}`;
}

/** Matches a string|RegExp|undefined pattern against any of the candidates. */
export function matchPattern(pattern, ...candidates) {
  if (pattern == null) return true;
  if (pattern instanceof RegExp) {
    return candidates.some((c) => {
      pattern.lastIndex = 0;
      return pattern.test(c);
    });
  }
  return candidates.includes(pattern);
}

/** A repository file path GitHub would accept: no empty, "." or ".." segments, no ".git". */
export function validRepoPath(p) {
  if (!p || p.includes('\0')) return false;
  return p.split('/').every((s) => s && s !== '.' && s !== '..' && s.toLowerCase() !== '.git');
}

/** A ref name we are willing to hand to git (never an option, never a revision expression). */
export function safeRefName(ref) {
  return (
    typeof ref === 'string' &&
    ref.length > 0 &&
    !ref.startsWith('-') &&
    !/[\0-\x20\x7f~^:?*[\\]/.test(ref) &&
    !ref.includes('..') &&
    !ref.includes('@{')
  );
}
