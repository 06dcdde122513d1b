// Bundles the actions and the CLI into self-contained ES modules under dist/ (no node_modules
// at run time). One build with code splitting: what the entries share (octokit, @actions/core,
// the wasm loader) is one chunk next to them, so dist/ holds it once.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';

const entryPoints = {
  acquire: 'actions/acquire/main.mjs',
  release: 'actions/release/main.mjs',
  status: 'actions/status/main.mjs',
  renew: 'actions/renew/main.mjs',
  guard: 'actions/guard/main.mjs',
  reap: 'actions/reap/main.mjs',
  claim: 'actions/claim/main.mjs',
  validate: 'actions/validate/main.mjs',
  receipt: 'actions/receipt/main.mjs',
  'check-head': 'actions/check-head/main.mjs',
  audit: 'actions/audit/main.mjs',
  'report-usage': 'actions/report-usage/main.mjs',
  cleanup: 'actions/cleanup/main.mjs',
  recover: 'actions/recover/main.mjs',
  cli: 'actions/lib/cli.mjs',
  'leasehold-core': 'actions/lib/core-entry.mjs',
};

// Old bundles and chunks go first, so dist/ holds exactly what this build makes.
for (const f of readdirSync('dist')) if (f.endsWith('.mjs')) rmSync(`dist/${f}`);

await build({
  entryPoints,
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'shared-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Some bundled dependencies still call require() for Node built-ins.
  banner: { js: "import { createRequire as __leaseholdRequire } from 'node:module';\nconst require = __leaseholdRequire(import.meta.url);" },
  legalComments: 'eof',
  logLevel: 'warning',
});
