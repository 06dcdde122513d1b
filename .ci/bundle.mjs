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
  'run-check': 'actions/run/check.mjs',
  cli: 'actions/lib/cli.mjs',
  'leasehold-core': 'actions/lib/core-entry.mjs',
};

// @actions/core imports its OIDC client (getIDToken: @actions/http-client, undici, tunnel) and
// its platform module (@actions/exec, @actions/io) at the top of core.js, and none of them says
// it is free of side effects, so esbuild would keep all of it (about 790 KB, undici for the most
// part) though no action asks for an ID token or the platform. Marked side-effect free, they stay
// out of the bundle unless something imports what they export. The bundles make their requests
// with @octokit/request, which uses Node's own fetch.
const UNUSED = /^(undici|tunnel|@actions\/(http-client|exec|io))(\/|$)|^\.\/(oidc-utils|platform)\.js$/;
const sideEffectFree = {
  name: 'side-effect-free',
  setup(b) {
    b.onResolve({ filter: UNUSED }, async (args) => {
      if (args.pluginData === 'side-effect-free') return undefined;
      if (args.path.startsWith('./') && !/[/\\]@actions[/\\]core[/\\]lib$/.test(args.resolveDir)) return undefined;
      const resolved = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'side-effect-free' });
      return { ...resolved, sideEffects: false };
    });
  },
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
  // Minified, with the functions' and classes' own names kept (stack traces and `.name` read as
  // in the sources; about 2.6 KB gzipped). No source maps are shipped.
  minify: true,
  keepNames: true,
  plugins: [sideEffectFree],
  logLevel: 'warning',
});
