// The pid a test's command wrote to a file (`sh -c 'sleep 60 & echo $! > FILE; wait'`).
//
// The shell creates FILE before `echo` writes into it, so a file that exists may still be empty,
// and `Number('')` is 0: `process.kill(0, 'SIGKILL')` would then kill the test's whole process
// group (the test runner, npm and CI's shell with it). So this waits for a whole positive pid and
// fails the test otherwise.
import { existsSync, readFileSync } from 'node:fs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function readPid(file, { timeoutMs = 10_000 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (/^[0-9]+\n$/.test(text) && Number(text) > 1) return Number(text);
    if (Date.now() > until) throw new Error(`no pid in ${file} after ${timeoutMs} ms (${JSON.stringify(text)})`);
    await sleep(20);
  }
}

/** Signals `pid`, refusing anything that would reach a process group rather than one process. */
export function killPid(pid, signal) {
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`refusing to signal pid ${pid}`);
  process.kill(pid, signal);
}
