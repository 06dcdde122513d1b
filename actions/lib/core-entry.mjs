// The decision core on its own (for tests and scripts): dist/leasehold-core.mjs.
export { loadCore } from './wasm.mjs';
