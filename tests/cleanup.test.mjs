// Cleanup on cancel: a waiter that gets the runner's SIGTERM leaves the queue before it exits,
// and acquire's post step releases what this job's claim still holds when no release step ran.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmulator } from './emulator/emulator.mjs';
import { jobContext, runAction } from './helpers/action-runner.mjs';

let emu;
before(async () => {
  emu = await startEmulator({ owner: 'octo', repo: 'app' });
});
after(() => emu.close());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stateOf = async (lock) => JSON.parse(await emu.readFile('leasehold-state', `locks/${lock}.json`));
const inputs = (lock, extra = {}) => ({ lock, 'poll-seconds': '1', 'timeout-minutes': '5', ...extra });

async function queued(lock, n = 1) {
  for (let i = 0; i < 200; i++) {
    const text = await emu.readFile('leasehold-state', `locks/${lock}.json`);
    if (text && JSON.parse(text).queue.length >= n) return;
    await sleep(25);
  }
  throw new Error(`nobody queued on ${lock}`);
}

describe('cancellation and the post step', { timeout: 60_000 }, () => {
  test('SIGTERM while waiting: the waiter leaves the queue before it exits', async () => {
    const lock = 'cancel-wait';
    await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: jobContext({ runId: 1 }) });
    let child;
    const waiter = runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: jobContext({ runId: 2 }), onSpawn: (c) => (child = c) });
    await queued(lock);
    child.kill('SIGTERM');
    const w = await waiter;
    assert.equal(w.outputs.result, 'cancelled', w.stdout);
    assert.equal(w.outputs.acquired, 'false');
    assert.match(w.stdout, /cancellation received: leaving the lock before exiting/);
    assert.equal(w.state.result, 'cancelled');
    const state = await stateOf(lock);
    assert.deepEqual(state.queue, []);
    assert.equal(state.lastChange.action, 'cancel');
    assert.equal(state.holders.length, 1, 'the holder is untouched');
  });

  test('post step after a job that held and never released: releases exactly that claim', async () => {
    const lock = 'post-held';
    const ctx = jobContext({ runId: 3 });
    const main = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
    assert.equal(main.outputs.result, 'acquired');
    assert.deepEqual(Object.keys(main.state).sort(), ['holder-id', 'isPost', 'nonce', 'result', 'revision']);
    assert.equal(main.state.nonce, main.outputs.nonce);
    const post = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx, phase: 'post', state: main.state });
    assert.equal(post.code, 0);
    assert.match(post.stdout, /released the lock this job still held/);
    assert.deepEqual((await stateOf(lock)).holders, []);
  });

  test('post step after a main step that failed its input checks: it knows it is the post step, sends nothing and only says so', async () => {
    const ctx = jobContext({ runId: 30 });
    const main = await runAction('acquire', { apiUrl: emu.url, inputs: inputs('bad lock name'), context: ctx });
    assert.notEqual(main.code, 0, 'the bad input fails the main step');
    assert.deepEqual(main.state, { isPost: 'true' });
    const from = emu.log.length;
    const post = await runAction('acquire', { apiUrl: emu.url, inputs: inputs('bad lock name'), context: ctx, phase: 'post', state: main.state });
    assert.equal(post.code, 0, post.stdout);
    assert.match(post.stdout, /acquire did not start; nothing to clean up/);
    assert.doesNotMatch(post.stdout, /::error/);
    assert.equal(emu.log.length, from, 'nothing sent');
  });

  test('post step after a release step ran: one read, no write', async () => {
    const lock = 'post-released';
    const ctx = jobContext({ runId: 4 });
    const main = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
    await runAction('release', { apiUrl: emu.url, inputs: { lock }, context: ctx });
    const from = emu.log.length;
    const post = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx, phase: 'post', state: main.state });
    assert.equal(post.code, 0);
    assert.match(post.stdout, /nothing left to clean up/);
    assert.deepEqual(emu.log.slice(from).map((r) => r.method), ['GET']);
  });

  test('post step after the main step was killed while waiting (SIGKILL): removes the queue entry', async () => {
    const lock = 'post-killed';
    await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: jobContext({ runId: 5 }) });
    const ctx = jobContext({ runId: 6 });
    let child;
    const waiter = runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx, onSpawn: (c) => (child = c) });
    await queued(lock);
    child.kill('SIGKILL');
    const w = await waiter;
    assert.equal(w.signal, 'SIGKILL');
    assert.equal(w.state.result, undefined, 'the main step never finished');
    assert.equal((await stateOf(lock)).queue.length, 1);
    const post = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx, phase: 'post', state: w.state });
    assert.match(post.stdout, /removed this job's queue entry/);
    assert.deepEqual((await stateOf(lock)).queue, []);
  });

  test("post step never removes a rerun's holding, and release-on-exit: false leaves the lock alone", async () => {
    const lock = 'post-rerun';
    const first = jobContext({ runId: 7, runAttempt: 1 });
    const main1 = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: first });
    const second = jobContext({ runId: 7, runAttempt: 2, runner: 'other' });
    const main2 = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: second });
    assert.ok(Number(main2.outputs.fence) > Number(main1.outputs.fence), 'the rerun took the holding over, with a new fence');
    const post1 = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: first, phase: 'post', state: main1.state });
    assert.match(post1.stdout, /nothing left to clean up/);
    assert.equal((await stateOf(lock)).holders[0].nonce, main2.outputs.nonce);
    const kept = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock, { 'release-on-exit': 'false' }), context: second, phase: 'post', state: main2.state });
    assert.match(kept.stdout, /release-on-exit is false/);
    assert.equal((await stateOf(lock)).holders.length, 1);
  });

  test('post step warns and never fails the job when GitHub refuses', async () => {
    const lock = 'post-refused';
    const ctx = jobContext({ runId: 8 });
    const main = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx });
    const rule = emu.faults.add({ method: 'GET', path: /post-refused/, action: { status: 403, body: { message: 'Resource not accessible by integration' } } });
    const post = await runAction('acquire', { apiUrl: emu.url, inputs: inputs(lock), context: ctx, phase: 'post', state: main.state });
    assert.equal(rule.fired, 1);
    assert.equal(post.code, 0);
    assert.match(post.stdout, /::warning::leasehold post post-refused: could not clean up \(failed: .*403/);
  });
});
