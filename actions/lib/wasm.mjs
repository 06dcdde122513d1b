// Loads the decision core (Rust compiled to WebAssembly). The .wasm file travels next to the
// bundle in dist/.
//
// Values cross to the wasm as JSON text (one (de)serializer per type in the wasm, not two; see
// crates/leasehold-wasm): these wrappers stringify what they pass and parse what they get back,
// so callers see plain objects as before.
import { readFileSync } from 'node:fs';
import * as wasm from '../../target/wasm-bindgen/leasehold_wasm.js';

/**
 * A value as JSON text for the core; `undefined` is `null`. A BigInt (octokit parses integers
 * beyond 2^53 as BigInt, which JSON.stringify refuses) crosses as the nearest number: only
 * GitHub's GraphQL data passes through unpicked, and the core reads no number from it.
 */
function json(value) {
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v)) ?? 'null';
}

/** One operation of the core as a state machine: `new Operation(kind, inputs, entropy?)`. */
class Operation {
  #inner;
  #plan;
  constructor(kind, inputs, entropy) {
    this.#inner = new wasm.Operation(json(kind), json(inputs), json(entropy));
  }

  /** Where requests go and what the inputs resolved to (the same object on every read). */
  get plan() {
    this.#plan ??= JSON.parse(this.#inner.plan);
    return this.#plan;
  }

  /** Feeds one event and returns the next step. */
  step(event) {
    return JSON.parse(this.#inner.step(json(event)));
  }

  free() {
    this.#inner.free();
  }
}

/**
 * A machine of the core that runs beside an operation (the guard's loop, the cleanup command's
 * run): made from its inputs, it reports its settings and answers one event at a time.
 */
class Machine {
  #inner;
  constructor(Inner, inputs) {
    this.#inner = new Inner(json(inputs));
  }

  get settings() {
    return JSON.parse(this.#inner.settings);
  }

  step(event) {
    return JSON.parse(this.#inner.step(json(event)));
  }

  free() {
    this.#inner.free();
  }
}

/** The guard's loop as a state machine: `new Guard(inputs)`. */
class Guard extends Machine {
  constructor(inputs) {
    super(wasm.Guard, inputs);
  }
}

/** The cleanup command's run as a state machine: `new CleanupRun(inputs)`. */
class CleanupRun extends Machine {
  constructor(inputs) {
    super(wasm.CleanupRun, inputs);
  }
}

/**
 * What a guard says and renews with (the core's `GuardReport`): `new GuardReport(kind, inputs)`
 * checks the renewals' inputs; `inputs` are those the next renewal runs on (a claim's token
 * rotates as `heard` takes each outcome); the documents are the core's.
 */
class GuardReport {
  #inner;
  constructor(kind, inputs) {
    this.#inner = new wasm.GuardReport(json(kind), json(inputs));
  }

  get kind() {
    return JSON.parse(this.#inner.kind);
  }

  get plan() {
    return JSON.parse(this.#inner.plan);
  }

  get inputs() {
    return JSON.parse(this.#inner.inputs);
  }

  heard(verified, outcome) {
    this.#inner.heard(verified, json(outcome));
  }

  unfinished(why) {
    return JSON.parse(this.#inner.unfinished(String(why)));
  }

  startDocument({ pid, argv, lease }) {
    return JSON.parse(this.#inner.startDocument(pid ?? undefined, json(argv), json(lease)));
  }

  finishDocument(finish) {
    return JSON.parse(this.#inner.finishDocument(json(finish)));
  }

  free() {
    this.#inner.free();
  }
}

let loaded = null;

export function loadCore() {
  if (!loaded) {
    wasm.initSync({ module: readFileSync(new URL('./leasehold.wasm', import.meta.url)) });
    loaded = {
      Operation,
      Guard,
      CleanupRun,
      GuardReport,
      checkConfig: (text) => JSON.parse(wasm.checkConfig(text)),
      exitCodes: JSON.parse(wasm.guardExitCodes()),
      exitTable: JSON.parse(wasm.exitTable()),
      resultDocument: (command, outcome) => JSON.parse(wasm.resultDocument(command, json(outcome))),
      refusalDocument: (command, code, message) => JSON.parse(wasm.refusalDocument(command, code, message)),
      validateDocument: (files) => JSON.parse(wasm.validateDocument(json(files))),
      validateSettings: (inputs) => JSON.parse(wasm.validateSettings(json(inputs))),
      credentialShape: wasm.credentialShape,
      version: wasm.version(),
    };
  }
  return loaded;
}

/** For benchmarks only (no action calls it): the core's pool admission on a state parsed once. */
export function loadBench() {
  loadCore();
  return { PoolBench: wasm.PoolBench };
}
