/**
 * What a circuit shape implies for its Groth16 parameters: the evaluation domain and the selection
 * of variables of the A and B queries. Setup and prover both derive them from here, so the order of
 * the points in `params.a` / `params.b*` and the scalars the prover pairs them with cannot drift.
 */
import type { CircuitShape } from '../r1cs/cs.js';

/** log2 of the largest domain Fr supports (2-adicity of r − 1). */
export const MAX_DOMAIN_LOG2 = 32;

/** Rows of the QAP: the circuit's constraints plus one `input_i · 0 = 0` per input (ONE included). */
export function qapRows(shape: Pick<CircuitShape, 'numConstraints' | 'numInputs'>): number {
  return shape.numConstraints + shape.numInputs;
}

/** Evaluation domain size n: the smallest power of two ≥ the QAP rows (as bellperson's
 *  EvaluationDomain::from_coeffs). */
export function domainSize(shape: Pick<CircuitShape, 'numConstraints' | 'numInputs'>): number {
  const rows = qapRows(shape);
  let n = 1;
  while (n < rows) n *= 2;
  if (n > 2 ** MAX_DOMAIN_LOG2) throw new RangeError(`domain 2^${Math.log2(n)} exceeds 2^${MAX_DOMAIN_LOG2}`);
  return n;
}

/**
 * Witness positions of the query bases (columns of the full assignment [inputs…, aux…]):
 *  - a: every input (each has its input constraint in A), then the A-dense aux variables;
 *  - b: the B-dense inputs, then the B-dense aux variables (for both b_g1 and b_g2).
 * Base k of a query pairs with scalar w[index[k]] (MsmOptions.scalarIndex).
 */
export interface QueryIndices {
  a: Uint32Array;
  b: Uint32Array;
}

/** The query indices of a shape, computed (a pass over its densities; a CompiledCircuit keeps them: compiled.ts). */
export function queryIndices(shape: CircuitShape): QueryIndices {
  return { a: buildA(shape), b: buildB(shape) };
}

function countOnes(d: Uint8Array): number {
  let n = 0;
  for (let k = 0; k < d.length; k++) if (d[k] !== 0) n++;
  return n;
}

function checkDensity(d: Uint8Array, len: number, what: string): void {
  if (d.length !== len) throw new RangeError(`shape: ${what} has ${d.length} entries, expected ${len}`);
}

function buildA(shape: CircuitShape): Uint32Array {
  checkDensity(shape.aAuxDensity, shape.numAux, 'aAuxDensity');
  const out = new Uint32Array(shape.numInputs + countOnes(shape.aAuxDensity));
  let k = 0;
  for (let i = 0; i < shape.numInputs; i++) out[k++] = i;
  for (let j = 0; j < shape.numAux; j++) if (shape.aAuxDensity[j] !== 0) out[k++] = shape.numInputs + j;
  return out;
}

function buildB(shape: CircuitShape): Uint32Array {
  checkDensity(shape.bInputDensity, shape.numInputs, 'bInputDensity');
  checkDensity(shape.bAuxDensity, shape.numAux, 'bAuxDensity');
  const out = new Uint32Array(countOnes(shape.bInputDensity) + countOnes(shape.bAuxDensity));
  let k = 0;
  for (let i = 0; i < shape.numInputs; i++) if (shape.bInputDensity[i] !== 0) out[k++] = i;
  for (let j = 0; j < shape.numAux; j++) if (shape.bAuxDensity[j] !== 0) out[k++] = shape.numInputs + j;
  return out;
}
