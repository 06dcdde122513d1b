// The pid-file helper of the process tests: an empty pid file (the shell has created it, `echo`
// has not written yet) is waited on, never read as pid 0, and no pid that would signal a process
// group is ever signalled (`process.kill(0, 'SIGKILL')` kills the test runner's whole group).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { killPid, readPid } from './helpers/pid-file.mjs';

test('an empty pid file is waited on, not read as pid 0; pids 0, 1, negative and NaN are refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-pid-'));
  try {
    const file = join(dir, 'pid');
    writeFileSync(file, '');
    setTimeout(() => writeFileSync(file, '4242\n'), 100);
    assert.equal(await readPid(file), 4242);
    writeFileSync(file, '');
    await assert.rejects(readPid(file, { timeoutMs: 100 }), /no pid/);
    for (const pid of [0, 1, -1, -4242, NaN]) assert.throws(() => killPid(pid, 'SIGKILL'), /refusing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
