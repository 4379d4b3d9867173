/**
 * A circuit compiled for Groth16, in one value: its R1CS shape, the query indices its parameters and proofs are laid
 * out by, its digest (development parameters are named by it) and its witness program (native witness generation).
 * The derived parts are computed on first use and kept in the value, or given when known already: a worker thread
 * that compiled the shape sends them back with it (kinds/shape-cache.ts), a cached shape's digest is read from beside
 * it. A circuit provider hands out one CompiledCircuit per circuit id; nothing is attached to a shape elsewhere.
 *
 * Functions that also serve tests and tools with a bare shape take a CircuitLike and wrap it (compiledOf): their
 * derived parts are then computed for that call.
 */
import type { CircuitShape } from '../r1cs/cs.js';
import type { WitnessProgram } from '../r1cs/program.js';
import { shapeDigest } from '../r1cs/shape.js';
import { footprintOf, type CircuitFootprint } from '../backend/device-plan.js';
import { sectionCount } from '../backend/section.js';
import type { AnyParameters } from './keys.js';
import { domainSize, queryIndices, type QueryIndices } from './queries.js';

/** What is known of a compiled circuit besides its shape. */
export interface CompiledParts {
  queries?: QueryIndices;
  digest?: string;
  /** The witness program, or how to get it (read from the shape cache, or recorded) when first asked for. */
  program?: WitnessProgram | (() => WitnessProgram);
}

export class CompiledCircuit {
  #queries: QueryIndices | undefined;
  #digest: string | undefined;
  #program: WitnessProgram | (() => WitnessProgram) | undefined;

  constructor(
    readonly shape: CircuitShape,
    parts: CompiledParts = {},
  ) {
    if (parts.digest !== undefined && !/^[0-9a-f]{64}$/.test(parts.digest)) throw new RangeError('a shape digest is 64 hex digits');
    this.#queries = parts.queries;
    this.#digest = parts.digest;
    this.#program = parts.program;
  }

  /** The variables of the A and B query bases (queries.ts queryIndices). */
  get queries(): QueryIndices {
    return (this.#queries ??= queryIndices(this.shape));
  }

  /** SHA-256 of the shape's canonical form (r1cs/shape.ts shapeDigest): seconds for a 32 GiB shape, once. */
  get digest(): string {
    return (this.#digest ??= shapeDigest(this.shape));
  }

  /** The digest when known without hashing the shape. */
  get knownDigest(): string | undefined {
    return this.#digest;
  }

  /** The witness program (throws for a circuit compiled without one: the demo circuit, a test's shape). */
  get program(): WitnessProgram {
    const p = this.#program;
    if (p === undefined) throw new Error('this circuit has no witness program');
    if (typeof p === 'function') this.#program = p();
    return this.#program as WitnessProgram;
  }

  /** log2 of the evaluation domain. */
  get logN(): number {
    return Math.log2(domainSize(this.shape));
  }

  /** The point counts of its parameters (the native loader's `expected`: checked against the file's count fields
   *  before any point is read). */
  expectedParamsCounts(): { ic: number; h: number; l: number; a: number; b_g1: number; b_g2: number } {
    const q = this.queries;
    return { ic: this.shape.numInputs, h: domainSize(this.shape) - 1, l: this.shape.numAux, a: q.a.length, b_g1: q.b.length, b_g2: q.b.length };
  }

  /** Throws a RangeError unless `params` have exactly the sizes this circuit implies. */
  checkParams(params: AnyParameters): void {
    const want = this.expectedParamsCounts();
    const problems: string[] = [];
    const expect = (what: string, got: number, n: number): void => {
      if (got !== n) problems.push(`${what} has ${got} points, the circuit needs ${n}`);
    };
    expect('vk.ic', params.vk.ic.length, want.ic);
    expect('h', sectionCount(params.h, 'G1'), want.h);
    expect('l', sectionCount(params.l, 'G1'), want.l);
    expect('a', sectionCount(params.a, 'G1'), want.a);
    expect('b_g1', sectionCount(params.bG1, 'G1'), want.b_g1);
    expect('b_g2', sectionCount(params.bG2, 'G2'), want.b_g2);
    if (problems.length) throw new RangeError(`parameters do not match the circuit: ${problems.join('; ')}`);
  }

  /** The sizes a GPU's device-memory plan needs (backend/device-plan.ts): domain, witness, matrices, query counts. */
  footprint(): CircuitFootprint {
    const q = this.queries;
    return footprintOf({ shape: this.shape, logN: this.logN, na: q.a.length, nb: q.b.length });
  }
}

/** A compiled circuit, or a bare shape (its derived parts then computed for the call). */
export type CircuitLike = CircuitShape | CompiledCircuit;

/** `c` itself when compiled already, else a CompiledCircuit of the bare shape. */
export function compiledOf(c: CircuitLike): CompiledCircuit {
  return c instanceof CompiledCircuit ? c : new CompiledCircuit(c);
}
