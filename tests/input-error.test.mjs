// One rule names a bad input to whoever set it (actions/lib/input-error.mjs): an action's input
// as input `x`, a command line's as --x, the run's context as its environment variable, in an
// error and in a plan's warning alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionInput, cliFlag, describeInputError, describeInputWarning } from '../actions/lib/input-error.mjs';

const invalid = (input, rule, value = '') => Object.assign(new Error(`${input} ${rule}`), { code: 'invalid-input', input, rule, value });

test('an input error names the input as the action, the command line or the environment does', () => {
  const lock = invalid('lock', 'must be 1 to 64 characters', '');
  assert.equal(describeInputError(lock, actionInput), 'input `lock` must be 1 to 64 characters');
  assert.equal(describeInputError(lock, cliFlag), '--lock must be 1 to 64 characters');
  const run = invalid('GITHUB_RUN_ID', 'must be a whole number', 'x');
  for (const nameOf of [actionInput, cliFlag]) assert.equal(describeInputError(run, nameOf), 'environment variable GITHUB_RUN_ID must be a whole number (got "x")');
  const other = Object.assign(new Error('the core broke'), { code: 'internal' });
  assert.equal(describeInputError(other, cliFlag), 'the core broke');
});

test("a plan's warning names its input the same way", () => {
  const w = '`api-max-attempts` must be a whole number from 1 to 20 (got "0"); using 5';
  assert.equal(describeInputWarning(w, actionInput), 'input `api-max-attempts` must be a whole number from 1 to 20 (got "0"); using 5');
  assert.equal(describeInputWarning(w, cliFlag), '--api-max-attempts must be a whole number from 1 to 20 (got "0"); using 5');
  assert.equal(describeInputWarning('`GITHUB_JOB` is long; using it', cliFlag), 'environment variable GITHUB_JOB is long; using it');
  assert.equal(describeInputWarning('no name first', cliFlag), 'no name first');
});
