// Bundles the actions into self-contained ES modules under dist/ (no node_modules at run time).
import { build } from 'esbuild';

const entries = {
  acquire: 'actions/acquire/main.mjs',
  release: 'actions/release/main.mjs',
  status: 'actions/status/main.mjs',
  'leasehold-core': 'actions/lib/core-entry.mjs',
};

for (const [name, entry] of Object.entries(entries)) {
  await build({
    entryPoints: [entry],
    outfile: `dist/${name}.mjs`,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // Some bundled dependencies still call require() for Node built-ins.
    banner: { js: "import { createRequire as __leaseholdRequire } from 'node:module';\nconst require = __leaseholdRequire(import.meta.url);" },
    legalComments: 'eof',
    logLevel: 'warning',
  });
}
