// GitHub's own OpenAPI description of api.github.com (npm @octokit/openapi, a dev dependency:
// never imported by actions/ or dist/), indexed for the conformance checks: which documented
// operation a method + path is, its parameters, its request body schema and the response
// schema for each status, compiled with ajv.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const require = createRequire(import.meta.url);

export const SPEC_PACKAGE = '@octokit/openapi';
export const SPEC_FILE = 'generated/api.github.com.json';

let cached = null;

/** The description, its operations, and a validator factory. Loaded once per process. */
export function loadSpec() {
  if (cached) return cached;
  const pkgDir = path.dirname(require.resolve(`${SPEC_PACKAGE}/package.json`));
  const version = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  const spec = JSON.parse(readFileSync(path.join(pkgDir, SPEC_FILE), 'utf8'));

  const ajv = new Ajv({
    strict: false, // GitHub's schemas use OpenAPI keywords (nullable, discriminator, example…)
    allErrors: true,
    validateFormats: true,
    logger: false,
  });
  addFormats(ajv);
  // Formats ajv-formats does not know. Their meaning is descriptive only.
  for (const name of ['repo.nwo', 'timestamp']) ajv.addFormat(name, true);
  // GitHub's own bot identities are not RFC 5322 addresses
  // ("41898282+github-actions[bot]@users.noreply.github.com"); GitHub sends them where the
  // description says `format: email`, so an address is anything with one "@" between
  // non-empty parts.
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+$/);
  nullableWithoutType(spec.components.schemas);
  nullableWithoutType(spec.paths);
  ajv.addSchema({ $id: 'gh', components: { schemas: spec.components.schemas } });

  const operations = [];
  for (const [template, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(spec, p));
      operations.push(makeOperation(template, method.toUpperCase(), op, parameters));
    }
  }
  // Most specific template first: more literal characters, then fewer parameters.
  operations.sort((a, b) => b.literalChars - a.literalChars || a.paramCount - b.paramCount);

  const compiled = new Map();
  const compile = (key, schema) => {
    if (!compiled.has(key)) compiled.set(key, ajv.compile(rebase(schema)));
    return compiled.get(key);
  };

  cached = {
    version,
    spec,
    operations,
    compile,
    deref: (o) => deref(spec, o),
    /** The operation for a method and a raw (still percent-encoded) path, or null. */
    match(method, rawPath) {
      for (const op of operations) {
        if (op.method !== method) continue;
        const m = op.regex.exec(rawPath);
        if (!m) continue;
        const params = {};
        op.pathParams.forEach((name, i) => (params[name] = m[i + 1] ?? ''));
        return { op, params };
      }
      return null;
    },
    /** An operation by operationId. */
    byId(id) {
      return operations.find((o) => o.id === id) ?? null;
    },
  };
  return cached;
}

function makeOperation(template, method, op, parameters) {
  const multi = new Set(parameters.filter((p) => p.in === 'path' && p['x-multi-segment']).map((p) => p.name));
  const pathParams = [];
  let literalChars = 0;
  let regex = '^';
  const segments = template.split('/').slice(1);
  segments.forEach((seg, i) => {
    const m = /^\{(.+)\}$/.exec(seg);
    if (!m) {
      regex += '/' + seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      literalChars += seg.length + 1;
      return;
    }
    pathParams.push(m[1]);
    if (multi.has(m[1]) && i === segments.length - 1) {
      // A multi-segment parameter (a file path, a ref) may hold "/" and, for contents, be
      // empty (the root directory).
      regex += '(?:/(.*))?';
    } else {
      regex += '/([^/]+)';
    }
  });
  regex += '/?$';
  return {
    id: op.operationId,
    method,
    template,
    op,
    parameters,
    pathParams,
    regex: new RegExp(regex),
    literalChars,
    paramCount: pathParams.length,
  };
}

/** Follows a local "#/components/…" $ref (parameters, responses, headers). */
function deref(spec, o) {
  let cur = o;
  for (let i = 0; cur && cur.$ref && i < 10; i++) {
    cur = cur.$ref.slice(2).split('/').reduce((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return cur;
}

/** A schema from an operation, with its "#/components/…" refs pointed at the shared "gh"
 *  schema that holds every component. */
function rebase(schema) {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"gh#/components/'));
}

/** OpenAPI 3.0's `nullable: true` beside `anyOf` or `oneOf` and no `type` (issue-field-value's
 *  `value`, reached from every issue; an issue write's `milestone`; a commit's `author`): ajv compiles `nullable` only with a `type`, so the same meaning is
 *  written as one more alternative, `{ type: 'null' }`. Nothing else changes. */
function nullableWithoutType(node) {
  if (!node || typeof node !== 'object') return;
  for (const key of ['anyOf', 'oneOf']) {
    if (node.nullable === true && node.type === undefined && Array.isArray(node[key])) {
      delete node.nullable;
      node[key] = [...node[key], { type: 'null' }];
    }
  }
  for (const value of Object.values(node)) nullableWithoutType(value);
}
