// The decision core on its own (for tests and scripts): dist/leasehold-core.mjs.
export { loadBench, loadCore } from './wasm.mjs';
