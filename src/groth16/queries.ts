/**
 * What a circuit shape implies for its Groth16 parameters: the evaluation domain and the selection
 * of variables of the A and B queries. Setup and prover both derive them from here, so the order of
 * the points in `params.a` / `params.b*` and the scalars the prover pairs them with cannot drift.
 */
import { footprintOf, type CircuitFootprint } from '../backend/device-plan.js';
import { sectionCount } from '../backend/section.js';
import type { CircuitShape } from '../r1cs/cs.js';
import type { AnyParameters } from './keys.js';

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

const indexCache = new WeakMap<CircuitShape, QueryIndices>();

/** Records the query indices of a shape computed elsewhere (a worker thread that compiled it). */
export function rememberQueryIndices(shape: CircuitShape, q: QueryIndices): void {
  indexCache.set(shape, q);
}

/** The query indices of a shape, computed once per shape object. */
export function queryIndices(shape: CircuitShape): QueryIndices {
  let q = indexCache.get(shape);
  if (q === undefined) {
    q = { a: buildA(shape), b: buildB(shape) };
    indexCache.set(shape, q);
  }
  return q;
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

/** The point counts of the parameters of `shape` (the native loader's `expected`: checked against
 *  the file's count fields before any point is read). */
export function expectedParamsCounts(shape: CircuitShape): { ic: number; h: number; l: number; a: number; b_g1: number; b_g2: number } {
  const q = queryIndices(shape);
  return { ic: shape.numInputs, h: domainSize(shape) - 1, l: shape.numAux, a: q.a.length, b_g1: q.b.length, b_g2: q.b.length };
}

/** Throws a RangeError unless `params` have exactly the sizes `shape` implies. */
export function checkParamsForShape(params: AnyParameters, shape: CircuitShape): void {
  const q = queryIndices(shape);
  const n = domainSize(shape);
  const problems: string[] = [];
  const expect = (what: string, got: number, want: number): void => {
    if (got !== want) problems.push(`${what} has ${got} points, the circuit needs ${want}`);
  };
  expect('vk.ic', params.vk.ic.length, shape.numInputs);
  expect('h', sectionCount(params.h, 'G1'), n - 1);
  expect('l', sectionCount(params.l, 'G1'), shape.numAux);
  expect('a', sectionCount(params.a, 'G1'), q.a.length);
  expect('b_g1', sectionCount(params.bG1, 'G1'), q.b.length);
  expect('b_g2', sectionCount(params.bG2, 'G2'), q.b.length);
  if (problems.length) throw new RangeError(`parameters do not match the circuit: ${problems.join('; ')}`);
}

/** The sizes a GPU's device-memory plan needs of a circuit (src/backend/device-plan.ts): its domain,
 *  witness, matrices and query counts (the query indices are cached per shape). */
export function circuitFootprint(shape: CircuitShape): CircuitFootprint {
  const q = queryIndices(shape);
  return footprintOf({ shape, logN: Math.log2(domainSize(shape)), na: q.a.length, nb: q.b.length });
}
