// `node dist/cli.mjs slots allocate` end to end against the emulator: concurrent allocations
// get distinct consecutive numbers, a paginated listing is read to its end, --dry-run writes
// nothing, and bad input is refused with exit 2 before any request.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { ROOT } from './helpers/action-runner.mjs';

let emu;

before(async () => {
  // The emulator pages matching-refs 100 a page with a Link header, so the listing must follow
  // it (GitHub has been seen to answer with every ref at once; its description allows pages).
  emu = await startEmulator({ owner: 'octo', repo: 'registry', matchingRefsPageSize: 100 });
});
after(async () => {
  await emu.close();
});

/** Runs `node dist/cli.mjs slots …`; resolves to { code, doc, stdout, stderr }. */
function cli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.mjs'), 'slots', ...args], {
      env: { PATH: process.env.PATH, GITHUB_API_URL: emu.url, GITHUB_TOKEN: 'test-token', GITHUB_REPOSITORY: 'octo/registry', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, `exactly one document on stdout: ${stdout}\n${stderr}`);
      resolve({ code, doc: JSON.parse(lines[0]), stdout, stderr });
    });
  });
}

const git = (...args) => execFileSync('git', args, { cwd: emu.gitDir, encoding: 'utf8' }).trim();
const slotRefs = (ns) =>
  git('for-each-ref', '--format=%(refname)', `refs/leasehold/slots/${ns}/`)
    .split('\n')
    .filter(Boolean);
const requestsSince = (seq) => emu.log.filter((e) => e.seq > seq);
const lastSeq = () => emu.log.at(-1)?.seq ?? 0;

test('8 concurrent allocations in one namespace get 8 distinct consecutive numbers', async () => {
  const runs = await Promise.all(Array.from({ length: 8 }, () => cli(['allocate', '--namespace', 'race', '--prefix', 'acct'])));
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.doc.status, 'allocated');
    assert.equal(r.doc.exitCode, 0);
  }
  const names = runs.map((r) => r.doc.slot.name).sort();
  assert.deepEqual(names, ['acct01', 'acct02', 'acct03', 'acct04', 'acct05', 'acct06', 'acct07', 'acct08']);
  // Each ref points at the commit of the allocation that reported it.
  for (const r of runs) assert.equal(git('rev-parse', r.doc.slot.ref), r.doc.slot.commit);
  assert.equal(slotRefs('race').length, 8);
  // The record the ref points at says who allocated it.
  const record = JSON.parse(git('show', `${runs[0].doc.slot.commit}:slot.json`));
  assert.equal(record.kind, 'leasehold-slot');
  assert.equal(record.namespace, 'race');
});

test('a listing of 250 slots is read across its pages: the next is 251', async () => {
  const head = git('rev-parse', 'HEAD');
  const lines = Array.from({ length: 250 }, (_, i) => `create refs/leasehold/slots/big/shard${String(i + 1).padStart(2, '0')} ${head}\n`).join('');
  execFileSync('git', ['update-ref', '--stdin'], { cwd: emu.gitDir, input: lines });
  const seq = lastSeq();
  const r = await cli(['allocate', '--namespace', 'big', '--prefix', 'shard']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.doc.slot.name, 'shard251');
  assert.equal(r.doc.slot.highest, 250);
  const listings = requestsSince(seq).filter((e) => e.path.includes('/git/matching-refs/'));
  assert.equal(listings.length, 3, 'three pages of 100');
  assert.deepEqual(listings.map((e) => e.query.page ?? '1'), ['1', '2', '3']);
});

test('--dry-run reads the listing, predicts the number and writes nothing', async () => {
  await cli(['allocate', '--namespace', 'dry', '--prefix', 'p']);
  const before = slotRefs('dry');
  const seq = lastSeq();
  const r = await cli(['allocate', '--namespace', 'dry', '--prefix', 'p', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.doc.status, 'allocated');
  assert.equal(r.doc.slot.dryRun, true);
  assert.equal(r.doc.slot.name, 'p02');
  assert.deepEqual(slotRefs('dry'), before);
  const methods = requestsSince(seq).map((e) => e.method);
  assert.deepEqual([...new Set(methods)], ['GET'], 'nothing but reads');
});

test('a bad namespace or prefix is refused with exit 2 before any request', async () => {
  for (const args of [
    ['--namespace', 'a/b', '--prefix', 'acct'],
    ['--namespace', 'ok', '--prefix', 'v1'],
    ['--namespace', 'ghp_0123456789abcdef', '--prefix', 'acct'],
    ['--namespace', 'ok'],
    ['--namespace', 'ok', '--prefix', 'acct', '--bogus'],
  ]) {
    const seq = lastSeq();
    const r = await cli(['allocate', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.doc.status, 'usage');
    assert.equal(r.doc.exitCode, 2);
    assert.equal(requestsSince(seq).length, 0, `${args.join(' ')} sent a request`);
    assert.ok(!r.stdout.includes('ghp_0123456789abcdef'), 'a credential is never echoed');
  }
});
