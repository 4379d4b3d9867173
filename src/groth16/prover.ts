/**
 * The Groth16 prover, as bellperson computes a proof (FACTS §4):
 *   a = A·w, b = B·w, c = C·w over the domain (circuit rows, then a[numConstraints + i] = w[i] for
 *   the input constraints, zero padded); h = (a·b − c)/Z (backend.quotient);
 *   H = Σ h_i·params.h_i (i < n − 1),  L = Σ w_aux·params.l,
 *   ΣA = Σ w_k·params.a_k, ΣB = Σ w_k·params.b_k over queryIndices(shape) (G1 and G2),
 *   A = α + r·δ + ΣA,  B = β + s·δ + ΣB (G2),  B1 = β + s·δ + ΣB1 (G1),
 *   C = s·A + r·B1 − r·s·δ + H + L      (= s·ΣA + r·ΣB1 + r·s·δ + s·α + r·β + H + L).
 *
 * `proveWithRandomness` is the deterministic core (golden tests pin r and s); `prove` draws them.
 * Phases run one after another so each timing is the phase's own; `batch_add` is taken out of the
 * MSM phases (the backends report it), so the phase timings add up to the whole.
 */
import type { Backend, MsmResult } from '../backend/backend.js';
import { FR_BYTES, FR_MODULUS, G1, G2, readFr, readG1, readG2, type G1Point, type G2Point } from '../field/layout.js';
import type { CircuitShape } from '../r1cs/cs.js';
import type { Span } from '../util/timing.js';
import type { Parameters } from './keys.js';
import type { Proof } from './proof.js';
import { checkParamsForShape, domainSize, queryIndices } from './queries.js';

export const PROVER_PHASES = [
  'matvec',
  'ntt_h',
  'msm_h',
  'msm_l',
  'msm_a',
  'msm_b1',
  'msm_b2',
  'batch_add',
  'assemble',
  'release',
] as const;
export type ProverPhase = (typeof PROVER_PHASES)[number];

export interface ProveResult {
  proof: Proof;
  /** Milliseconds per phase. msm_* exclude their batched additions, which are in batch_add. */
  timings: Record<ProverPhase, number>;
  /** Wall time of the whole proof (≈ the sum of the phases). */
  totalMs: number;
}

const now = (): number => performance.now();

function mul<P extends G1Point | G2Point>(p: P, k: bigint, zero: P): P {
  // noble's constant-time multiply refuses 0; r·P with r = 0 is the identity.
  return (k === 0n || p.is0() ? zero : p.multiply(k)) as P;
}

function checkScalar(x: bigint, name: string): void {
  if (typeof x !== 'bigint' || x < 0n || x >= FR_MODULUS) throw new RangeError(`${name} must be a field element in [0, r)`);
}

/**
 * The deterministic prover: the proof for `assignment` (Montgomery Fr, [inputs…, aux…], ONE first)
 * with blinding factors r and s. Phase timings are returned, and recorded as children of `span`
 * when given.
 */
export async function proveWithRandomness(
  params: Parameters,
  shape: CircuitShape,
  assignment: Uint8Array,
  r: bigint,
  s: bigint,
  backend: Backend,
  span?: Span,
): Promise<ProveResult> {
  checkScalar(r, 'r');
  checkScalar(s, 's');
  const numVars = shape.numInputs + shape.numAux;
  if (!(assignment instanceof Uint8Array) || assignment.length !== numVars * FR_BYTES) {
    throw new RangeError(
      `prove: assignment has ${assignment?.length} bytes, the circuit has ${numVars} variables (${numVars * FR_BYTES} bytes)`,
    );
  }
  if (readFr(assignment, 0) !== 1n) throw new RangeError('prove: assignment[0] (the ONE input) is not 1');
  checkParamsForShape(params, shape);

  const n = domainSize(shape);
  const m = shape.numConstraints;
  const q = queryIndices(shape);
  const timings = Object.fromEntries(PROVER_PHASES.map((p) => [p, 0])) as Record<ProverPhase, number>;
  const start = now();
  let t = start;
  const lap = (phase: ProverPhase): void => {
    const t1 = now();
    timings[phase] += t1 - t;
    t = t1;
  };
  const msm = async (phase: ProverPhase, run: Promise<MsmResult>): Promise<Uint8Array> => {
    const res = await run;
    const t1 = now();
    const batchAdd = Math.min(res.timings.batchAdd, t1 - t);
    timings.batch_add += batchAdd;
    timings[phase] += t1 - t - batchAdd;
    t = t1;
    return res.point;
  };

  const bufA = backend.alloc(n * FR_BYTES);
  const bufB = backend.alloc(n * FR_BYTES);
  const bufC = backend.alloc(n * FR_BYTES);
  let proof: Proof;
  try {
    // a, b, c over the domain: circuit rows, then the input constraints (A = input_i), then zeros.
    const rowsBytes = m * FR_BYTES;
    await backend.csrMatVec(shape.a, assignment, bufA.subarray(0, rowsBytes));
    await backend.csrMatVec(shape.b, assignment, bufB.subarray(0, rowsBytes));
    await backend.csrMatVec(shape.c, assignment, bufC.subarray(0, rowsBytes));
    bufA.set(assignment.subarray(0, shape.numInputs * FR_BYTES), rowsBytes);
    lap('matvec');

    await backend.quotient(bufA, bufB, bufC);
    lap('ntt_h');

    const hSum = await msm('msm_h', backend.msmG1(params.h, bufA.subarray(0, (n - 1) * FR_BYTES)));
    const lSum = await msm('msm_l', backend.msmG1(params.l, assignment.subarray(shape.numInputs * FR_BYTES)));
    const aSum = await msm('msm_a', backend.msmG1(params.a, assignment, { scalarIndex: q.a }));
    const b1Sum = await msm('msm_b1', backend.msmG1(params.bG1, assignment, { scalarIndex: q.b }));
    const b2Sum = await msm('msm_b2', backend.msmG2(params.bG2, assignment, { scalarIndex: q.b }));

    const vk = params.vk;
    const g1 = (buf: Uint8Array): G1Point => readG1(buf, 0);
    const gA = vk.alphaG1.add(mul(vk.deltaG1, r, G1.ZERO)).add(g1(aSum));
    const gB = vk.betaG2.add(mul(vk.deltaG2, s, G2.ZERO)).add(readG2(b2Sum, 0));
    const gB1 = vk.betaG1.add(mul(vk.deltaG1, s, G1.ZERO)).add(g1(b1Sum));
    const gC = mul(gA, s, G1.ZERO)
      .add(mul(gB1, r, G1.ZERO))
      .subtract(mul(vk.deltaG1, (r * s) % FR_MODULUS, G1.ZERO))
      .add(g1(hSum))
      .add(g1(lSum));
    proof = { a: gA, b: gB, c: gC };
    lap('assemble');
  } finally {
    backend.release(bufA);
    backend.release(bufB);
    backend.release(bufC);
    lap('release');
  }
  const totalMs = now() - start;
  if (span !== undefined) for (const p of PROVER_PHASES) span.record(p, timings[p]);
  return { proof, timings, totalMs };
}

/** A uniform element of [0, r) from crypto.getRandomValues (rejection sampling on 255 bits). */
export function randomFr(): bigint {
  const bytes = new Uint8Array(32);
  for (;;) {
    globalThis.crypto.getRandomValues(bytes);
    bytes[0] &= 0x7f; // r < 2^255: keep 255 bits, accept with probability r / 2^255 ≈ 0.45
    let x = 0n;
    for (const b of bytes) x = (x << 8n) | BigInt(b);
    if (x < FR_MODULUS) return x;
  }
}

/** A proof with fresh random r and s. */
export function prove(
  params: Parameters,
  shape: CircuitShape,
  assignment: Uint8Array,
  backend: Backend,
  span?: Span,
): Promise<ProveResult> {
  return proveWithRandomness(params, shape, assignment, randomFr(), randomFr(), backend, span);
}
