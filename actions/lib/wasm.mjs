// Loads the decision core (Rust compiled to WebAssembly). The .wasm file travels next to the
// bundle in dist/.
import { readFileSync } from 'node:fs';
import { Guard, guardExitCodes, initSync, Operation, version } from '../../target/wasm-bindgen/leasehold_wasm.js';

let loaded = null;

export function loadCore() {
  if (!loaded) {
    initSync({ module: readFileSync(new URL('./leasehold.wasm', import.meta.url)) });
    loaded = { Operation, Guard, exitCodes: guardExitCodes(), version: version() };
  }
  return loaded;
}
