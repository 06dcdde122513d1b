// The shared transcripts of fixtures/*.json, run against the built wasm in dist/ (the same
// files cargo test runs against the Rust core), so the boundary is tested with the same cases.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadCore } from '../dist/leasehold-core.mjs';
import { ROOT } from './helpers/action-runner.mjs';

const { Operation } = loadCore();
const dir = join(ROOT, 'fixtures');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** Partial match: every key named in `expected` must match; arrays must have equal length. */
function match(expected, actual, path) {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    assert.ok(actual && typeof actual === 'object', `${path}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      if (key === 'contentJson') match(value, JSON.parse(actual.content), `${path}.content`);
      else match(value, actual[key] ?? null, `${path}.${key}`);
    }
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${path}: expected ${expected.length} items, got ${JSON.stringify(actual)}`);
    expected.forEach((value, i) => match(value, actual[i], `${path}[${i}]`));
  } else {
    assert.deepEqual(actual, expected, `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

test('there are shared fixtures', () => assert.ok(files.length >= 5));

for (const file of files) {
  const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  test(`fixture ${file}: ${fixture.name}`, () => {
    if (fixture.error) {
      let error;
      try {
        new Operation(fixture.operation, fixture.inputs, fixture.entropy);
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof Error, 'expected the operation to be refused with an Error');
      match(fixture.error, { code: error.code, input: error.input, message: error.message }, 'error');
      return;
    }
    const op = new Operation(fixture.operation, fixture.inputs, fixture.entropy);
    let lastWrite = null;
    fixture.steps.forEach((step, i) => {
      const event = structuredClone(step.event);
      if (event.reply?.content === '$lastWrite') event.reply.content = lastWrite;
      if (step.protocolError) {
        assert.throws(() => op.step(event), (e) => e instanceof Error && e.code === 'protocol', `step ${i}`);
        return;
      }
      const out = op.step(event);
      const command = out.command;
      if (command.kind === 'writeFile') lastWrite = command.content;
      match(step.expect, command, `step ${i}`);
      if (step.logIncludes !== undefined) {
        const lines = (out.log ?? []).map((l) => l.text);
        assert.ok(lines.some((t) => t.includes(step.logIncludes)), `step ${i}: no log line includes ${JSON.stringify(step.logIncludes)}: ${JSON.stringify(lines)}`);
      }
    });
  });
}
