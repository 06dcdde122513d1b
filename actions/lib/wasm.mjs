// Loads the decision core (Rust compiled to WebAssembly). The .wasm file travels next to the
// bundle in dist/.
import { readFileSync } from 'node:fs';
import { checkConfig, classifyCleanup, cleanupCommand, credentialShape, exitTable, Guard, guardExitCodes, initSync, Operation, PoolBench, refusalDocument, resultDocument, version } from '../../target/wasm-bindgen/leasehold_wasm.js';

let loaded = null;

export function loadCore() {
  if (!loaded) {
    initSync({ module: readFileSync(new URL('./leasehold.wasm', import.meta.url)) });
    loaded = { Operation, Guard, checkConfig, cleanupCommand, classifyCleanup, exitCodes: guardExitCodes(), exitTable: exitTable(), resultDocument, refusalDocument, credentialShape, version: version() };
  }
  return loaded;
}

/** For benchmarks only (no action calls it): the core's pool admission on a state parsed once. */
export function loadBench() {
  loadCore();
  return { PoolBench };
}
