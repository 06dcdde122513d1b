// git plumbing: every git command the emulator runs goes through runGit() (asynchronous, so
// concurrent requests really interleave, with a clean environment); git() for the commands
// that must succeed.

import { spawn } from 'node:child_process';
import os from 'node:os';
import process from 'node:process';

// The environment for every git child: nothing from the caller's GIT_* variables (a test run
// from inside a git hook would otherwise inherit GIT_INDEX_FILE and friends), no system or
// global config, literal pathspecs (a path like "a*b" means that file, not a glob).
const GIT_ENV = (() => {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return Object.assign(env, {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_TERMINAL_PROMPT: '0',
    GIT_LITERAL_PATHSPECS: '1',
    LC_ALL: 'C',
    LANG: 'C',
  });
})();

export class GitError extends Error {
  constructor(args, code, stderr) {
    super(`git ${args.join(' ')} exited ${code}: ${stderr.trim()}`);
    this.code = code;
    this.stderr = stderr;
  }
}

/** A tree entry path that runs through a file (Repo.buildTree). */
export class TreeConflict extends Error {}

/** Runs git asynchronously (concurrent requests really interleave). Never throws on a
 *  non-zero exit: returns { code, stdout: Buffer, stderr: string }. */
export function runGit(gitDir, args, { input, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      env: { ...GIT_ENV, GIT_DIR: gitDir, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => {}); // EPIPE when git exits without reading stdin
    child.stdin.end(input ?? undefined);
  });
}

/** Runs git and returns trimmed stdout; throws GitError on failure. */
export async function git(gitDir, args, opts) {
  const r = await runGit(gitDir, args, opts);
  if (r.code !== 0) throw new GitError(args, r.code, r.stderr);
  return r.stdout.toString('utf8').trim();
}

export function gitDate(ms) {
  return `@${Math.floor(ms / 1000)} +0000`;
}
