// Runs `node dist/cli.mjs claims …` as a process against an emulator, and reads a claim ref's
// full history from the emulator's bare repository.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './action-runner.mjs';

export const CLI = join(ROOT, 'dist/cli.mjs');

/**
 * Runs the CLI with `args` (`--repository octo/app` added unless given); resolves to
 * { code, doc (stdout's one JSON document, or null), stdout, stderr, lines (stderr's JSON lines) }.
 * Throws when stdout holds anything but one JSON document.
 */
export function runCli(emu, args, { env = {}, repository = 'octo/app', token = 'test-token' } = {}) {
  const argv = [CLI, ...args];
  if (repository && !args.includes('--repository') && args[0] === 'claims') {
    const at = args.indexOf('--');
    argv.splice(at >= 0 ? at + 1 : argv.length, 0, '--repository', repository);
  }
  return runProcess(process.execPath, argv, { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: token, ...env });
}

/** Runs a printed `next` line as printed, through sh. */
export function runLine(emu, line, { env = {}, token = 'test-token' } = {}) {
  return runProcess('sh', ['-c', line], { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: token, ...env });
}

/** Runs `file` with `argv` and exactly `env`, stdin closed; resolves as runCli does. */
export function runProcess(file, argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let doc = null;
      const text = stdout.trim();
      if (text) {
        try {
          doc = JSON.parse(text);
        } catch {
          doc = undefined; // not one document: the caller decides (guard's stdout is the child's)
        }
      }
      const lines = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      resolve({ code, doc, stdout, stderr, lines });
    });
  });
}

/** Every version a claim ref pointed at, oldest first: [{ oid, payload }] (none: no ref). */
export function refHistory(emu, ns, key) {
  const ref = `refs/leasehold/claims/${ns}/${key}`;
  let oids;
  try {
    oids = execFileSync('git', ['--git-dir', emu.gitDir, 'rev-list', '--reverse', ref], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
  return oids.map((oid) => ({ oid, payload: JSON.parse(execFileSync('git', ['--git-dir', emu.gitDir, 'show', `${oid}:claim.json`], { encoding: 'utf8' })) }));
}

/** Requests the emulator answered since `from` (an index into its log), as "METHOD path". */
export const requestsSince = (emu, from) => emu.log.slice(from).map((e) => `${e.method} ${e.path}`);
