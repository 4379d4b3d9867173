/**
 * The bellperson-style constraint system interface. A circuit is a function over a
 * ConstraintSystem; the same circuit code runs on every implementation:
 *  - TestConstraintSystem   (test.ts):    names every constraint, reports the first unsatisfied one;
 *  - ShapeRecorder          (shape.ts):   compiles the circuit to CSR matrices A, B, C + densities;
 *  - WitnessGenerator       (witness.ts): only values, written straight into an Fr buffer;
 *  - CountingSystem         (counter.ts): counts constraints and variables, stores nothing.
 *
 * Variables are small integers: inputs are 0, 1, 2, … (input 0 is the constant ONE), auxiliary
 * variables are encoded as -(index + 1). Values are canonical bigints in [0, r); they are
 * `undefined` when the system does not compute values (shape recording, counting).
 */
export type Variable = number;
export const ONE: Variable = 0;

export const isInput = (v: Variable): boolean => v >= 0;
export const auxVariable = (index: number): Variable => -(index + 1);
export const auxIndex = (v: Variable): number => -v - 1;

/** A name, or a function producing it (evaluated only by systems that keep names). */
export type Name = string | (() => string);
/** A name's text (a lazy name is called). */
export const evalName = (name: Name): string => (typeof name === 'function' ? name() : name);

/** Σ coeff_k · var_k. Terms are kept as added (duplicates allowed, like bellperson's). */
export class LinearCombination {
  readonly vars: Variable[] = [];
  readonly coeffs: bigint[] = [];

  static zero(): LinearCombination {
    return new LinearCombination();
  }

  static of(v: Variable, coeff = 1n): LinearCombination {
    return new LinearCombination().add(v, coeff);
  }

  /** Adds coeff·v (coeff is reduced mod r by the consumer). Returns this for chaining. */
  add(v: Variable, coeff = 1n): this {
    this.vars.push(v);
    this.coeffs.push(coeff);
    return this;
  }

  sub(v: Variable, coeff = 1n): this {
    return this.add(v, -coeff);
  }

  addLc(other: LinearCombination, scale = 1n): this {
    for (let k = 0; k < other.vars.length; k++) this.add(other.vars[k], other.coeffs[k] * scale);
    return this;
  }

  get length(): number {
    return this.vars.length;
  }
}

export interface ConstraintSystem {
  /** True when values are computed (test system, witness generator): gadgets may then read them. */
  readonly computesValues: boolean;

  /** A private (auxiliary) variable. `value` is called only when computesValues. */
  alloc(name: Name, value: () => bigint): Variable;
  /** A public input. */
  allocInput(name: Name, value: () => bigint): Variable;
  /** Enforces a · b = c. */
  enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void;

  /** Runs `fn` inside a named namespace (names of constraints and variables are prefixed). */
  namespace<T>(name: Name, fn: () => T): T;

  /** Value of a variable, when computesValues (otherwise undefined). */
  value(v: Variable): bigint | undefined;

  /**
   * Set only while a witness program is recorded (program.ts): gadgets report there, right after
   * each allocation, how its value is computed.
   */
  readonly program?: import('./program.js').WitnessProgramSink;
}

/** Sizes of a synthesized circuit, before the prover's input constraints. */
export interface CircuitCounts {
  constraints: number;
  inputs: number; // including ONE
  aux: number;
}

/** A circuit: synthesizes its constraints into any ConstraintSystem. */
export interface Circuit {
  synthesize(cs: ConstraintSystem): void;
}

/**
 * The compiled shape of a circuit (ShapeRecorder's output). Matrix columns are the full assignment
 * vector: column i < numInputs is input i (0 = ONE), column numInputs + j is aux j. Rows are the
 * circuit's own constraints, in synthesis order; the Groth16 layer appends the `input_i · 0 = 0`
 * constraints itself (row numConstraints + i has A = input_i).
 */
export interface CircuitShape {
  numInputs: number; // including ONE
  numAux: number;
  numConstraints: number; // without the input constraints
  a: import('../field/csr.js').CsrMatrix;
  b: import('../field/csr.js').CsrMatrix;
  c: import('../field/csr.js').CsrMatrix;
  /** 1 where aux j appears in A with a non-zero coefficient (length numAux). */
  aAuxDensity: Uint8Array;
  /** 1 where input i appears in B with a non-zero coefficient (length numInputs). */
  bInputDensity: Uint8Array;
  /** 1 where aux j appears in B with a non-zero coefficient (length numAux). */
  bAuxDensity: Uint8Array;
}
