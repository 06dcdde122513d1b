// The JSON Schema of lock config files (schema/lock-config.schema.json, for editors) against the
// core's own reader (the code acquire and `validate` run, through the built wasm):
// - on the corpus (schema/lock-config.corpus.json): the core names the rule each entry expects,
//   and the schema accepts exactly the files the core accepts plus those whose only broken rule
//   relates two keys (which JSON Schema cannot state; marked `betweenKeys`);
// - on a grid of values around every bound: the schema never refuses a file the core accepts,
//   and a file the schema refuses the core refuses too;
// - the README's config examples pass both;
// - every key the schema describes is one the core reads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import { ROOT } from './helpers/action-runner.mjs';
import { loadCore } from '../dist/leasehold-core.mjs';

const core = loadCore();
const schema = JSON.parse(readFileSync(join(ROOT, 'schema/lock-config.schema.json'), 'utf8'));
const corpus = JSON.parse(readFileSync(join(ROOT, 'schema/lock-config.corpus.json'), 'utf8')).cases;
const check = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

/** Does the schema accept this text? (Text that is not JSON is refused, as an editor would.) */
function schemaAccepts(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  return check(value);
}
const coreRule = (text) => {
  const v = core.checkConfig(text);
  return v.valid ? null : v.problem.rule;
};

test('the core names the rule of every corpus entry, and the schema agrees except where a rule relates two keys', () => {
  const rules = new Set();
  for (const c of corpus) {
    assert.equal(coreRule(c.text), c.rule, `core on ${c.text}`);
    const expected = c.rule === null || c.betweenKeys === true;
    assert.equal(schemaAccepts(c.text), expected, `schema on ${c.text}: ${JSON.stringify(check.errors)}`);
    if (c.betweenKeys) assert.match(c.rule, /^lease\./, 'only lease rules relate keys');
    if (c.rule) rules.add(c.rule.replace(/^lease\..*/, 'lease').replace(/^lifecycle\..*/, 'lifecycle'));
  }
  assert.deepEqual([...rules].sort(), ['capacity', 'json', 'lease', 'lifecycle', 'shape'], 'every kind of rule has a broken example');
});

test('every lease rule of the core has a broken example in the corpus', () => {
  // The core's lease rules, by name, read off the corpus' own refusals: a rule the corpus
  // never breaks is a rule nobody checked against the schema.
  const named = new Set(corpus.map((c) => c.rule).filter((r) => r?.startsWith('lease.')));
  for (const rule of [
    'lease.ttl-at-least-30-seconds',
    'lease.ttl-within-ceiling',
    'lease.ceiling-at-most-a-week',
    'lease.renew-at-most-half-ttl',
    'lease.grace-within-bounds',
    'lease.skew-within-bounds',
    'lease.min-remaining-below-renew',
    'lease.renew-tick-fits',
  ]) {
    assert.ok(named.has(rule), rule);
  }
});

test('on a grid around every bound, the schema refuses only what the core refuses, and never what it accepts', () => {
  const values = {
    ttlSeconds: [null, 29, 30, 60, 900, 23400, 604800, 604801],
    renewSeconds: [null, 9, 10, 30, 300, 302400, 302401],
    graceSeconds: [null, 0, 61, 3600, 3601],
    maxTtlSeconds: [null, 29, 30, 3600, 604800, 604801],
    skewSeconds: [null, 0, 5, 600, 601],
    minRemainingSeconds: [null, 0, 10, 299, 302399, 302400],
  };
  const keys = Object.keys(values);
  let seen = 0;
  let accepted = 0;
  // A deterministic walk over combinations (a mixed-radix counter stepped by a prime), bounded.
  const sizes = keys.map((k) => values[k].length);
  const total = sizes.reduce((a, b) => a * b, 1);
  for (let n = 0; n < 6000; n++) {
    let index = (n * 7919) % total;
    const lease = {};
    keys.forEach((k, i) => {
      const v = values[k][index % sizes[i]];
      index = Math.floor(index / sizes[i]);
      if (v !== null) lease[k] = v;
    });
    for (const capacity of [1, 64]) {
      const text = JSON.stringify({ capacity, lease });
      const coreOk = coreRule(text) === null;
      const schemaOk = schemaAccepts(text);
      if (coreOk) assert.ok(schemaOk, `the schema refuses what the core accepts: ${text} ${JSON.stringify(check.errors)}`);
      if (!schemaOk) assert.ok(!coreOk, `the schema refuses what the core accepts: ${text}`);
      seen++;
      if (coreOk) accepted++;
    }
  }
  assert.ok(accepted > 50 && accepted < seen - 50, `the grid has both sides (${accepted} of ${seen} accepted)`);
});

/** A README block that is a lock config: an object with a top-level capacity and no state fields. */
function isLockConfig(text) {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' && 'capacity' in v && !('schema' in v);
  } catch {
    return false;
  }
}

test("the README's lock config examples pass the core and the schema", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]).filter(isLockConfig);
  assert.ok(blocks.length >= 2, 'the README shows lock configs');
  for (const text of blocks) {
    assert.equal(coreRule(text), null, text);
    assert.ok(schemaAccepts(text), text);
  }
});

test('every key the schema describes is one the core reads, and an unknown key is refused by both', () => {
  for (const key of Object.keys(schema.properties.lease.properties)) {
    const text = JSON.stringify({ capacity: 1, lease: { [key]: null } });
    assert.equal(coreRule(text), null, `the core reads lease.${key}`);
  }
  for (const key of Object.keys(schema.properties).filter((k) => k !== 'capacity')) {
    const v = core.checkConfig(JSON.stringify({ capacity: 1, [key]: null }));
    assert.notEqual(v.problem?.pointer, `/${key}`, `the core reads ${key}`);
  }
  const unknown = '{"capacity": 1, "lease": {"renewEvery": 60}}';
  assert.equal(coreRule(unknown), 'shape');
  assert.equal(schemaAccepts(unknown), false);
});

// The pools' schema (schema/pool-config.schema.json) against the core on a corpus of its own: the
// same agreement, where a rule that relates keys (a consumer naming an undeclared resource) is the
// one the schema cannot state.
test('the pool schema accepts exactly what the core accepts, but for rules between keys', () => {
  const poolSchema = JSON.parse(readFileSync(join(ROOT, 'schema/pool-config.schema.json'), 'utf8'));
  const poolCheck = new Ajv2020({ strict: true, allErrors: true }).compile(poolSchema);
  const r = '"resources": {"a": {"capacity": 2, "tags": ["gpu"]}, "b": {"capacity": 1}}';
  const cases = [
    [`{${r}}`, null],
    [`{${r}, "consumers": {"octo/app": {"resources": ["a"], "maxConcurrent": 2}}, "maxInFlight": 3}`, null],
    [`{${r}, "nonReservingAtoms": ["docs"], "affinitySeconds": 600, "pacing": {"target": 0.8, "burst": 0.1}, "runnerSerialization": true}`, null],
    [`{${r}, "lease": {"ttlSeconds": 600}}`, null],
    [`{${r}, "lifecycle": {"cooldownSeconds": 60}}`, 'lifecycle.with-pool'],
    ['{"resources": {}}', 'pool.resources'],
    ['{"resources": {"a": {"capacity": 0}}}', 'pool.resource-capacity'],
    ['{"resources": {"a": {"capacity": 65}}}', 'pool.resource-capacity'],
    ['{"resources": {"a": {}}}', 'pool.resource-capacity'],
    ['{"resources": {"a": {"capacity": 1, "x": 1}}}', 'pool.resource-key'],
    ['{"resources": {"a b": {"capacity": 1}}}', 'pool.word'],
    ['{"resources": {"a": {"capacity": 1, "tags": ["a b"]}}}', 'pool.word'],
    [`{${r}, "capacity": 2}`, 'pool.capacity-beside-resources'],
    [`{${r}, "colour": 1}`, 'pool.unknown-key'],
    ['{"maxInFlight": 2}', 'pool.needs-resources'],
    [`{${r}, "consumers": {"nobody": {}}}`, 'pool.consumers'],
    [`{${r}, "consumers": {"octo/app": {"x": 1}}}`, 'pool.consumer-key'],
    [`{${r}, "consumers": {"octo/app": {"maxConcurrent": 0}}}`, 'pool.max-concurrent'],
    [`{${r}, "consumers": {"octo/app": {"resources": ["c"]}}}`, 'pool.undeclared-resource', 'betweenKeys'],
    [`{${r}, "maxInFlight": 65}`, 'pool.max-in-flight'],
    [`{${r}, "nonReservingAtoms": ["*"]}`, 'pool.non-reserving-atoms'],
    [`{${r}, "nonReservingAtoms": ["runner:gpu-1"]}`, 'pool.non-reserving-atoms'],
    [`{${r}, "affinitySeconds": 86401}`, 'pool.affinity-seconds'],
    [`{${r}, "pacing": {"target": 0}}`, 'pool.pacing'],
    [`{${r}, "pacing": {"target": 0.00009}}`, 'pool.pacing'],
    [`{${r}, "pacing": {"target": 0.0001}}`, null],
    [`{${r}, "pacing": {"target": 1, "x": 0}}`, 'pool.pacing'],
    [`{${r}, "runnerSerialization": "yes"}`, 'pool.runner-serialization'],
  ];
  for (const [text, rule, betweenKeys] of cases) {
    assert.equal(coreRule(text), rule, `core on ${text}`);
    assert.equal(poolCheck(JSON.parse(text)), rule === null || betweenKeys === 'betweenKeys', `schema on ${text}: ${JSON.stringify(poolCheck.errors)}`);
  }
});
