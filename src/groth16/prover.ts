/**
 * The Groth16 prover, as bellperson computes a proof (docs/filecoin.md §4):
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
import type { Backend, MsmResult, PartitionInput, PartitionSums } from '../backend/backend.js';
import { msmSection } from '../backend/section.js';
import { FR_BYTES, FR_MODULUS, G1, G2, readFr, readG1, readG2, type G1Point, type G2Point } from '../field/layout.js';
import type { Span } from '../util/timing.js';
import { assembleOnBackend, type QuerySums } from './assemble.js';
import type { AnyParameters as Parameters } from './keys.js';
import type { Proof } from './proof.js';
import { compiledOf, type CircuitLike } from './compiled.js';

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

/** A, B, C from the five query sums with blinding r, s: on the backend when it offers lincomb,
 *  otherwise with @noble/curves (the same formulas). */
async function assembleProof(backend: Backend, vk: Parameters['vk'], r: bigint, s: bigint, sums: QuerySums): Promise<Proof> {
  const { hSum, lSum, aSum, b1Sum, b2Sum } = sums;
  if (backend.lincombG1 !== undefined && backend.lincombG2 !== undefined) {
    // The same formulas as below, as small linear combinations on the backend (src/groth16/assemble.ts).
    const lc = { lincombG1: backend.lincombG1.bind(backend), lincombG2: backend.lincombG2.bind(backend) };
    return assembleOnBackend(lc, vk, r, s, { hSum, lSum, aSum, b1Sum, b2Sum });
  } else {
    const g1 = (buf: Uint8Array): G1Point => readG1(buf, 0);
    const gA = vk.alphaG1.add(mul(vk.deltaG1, r, G1.ZERO)).add(g1(aSum));
    const gB = vk.betaG2.add(mul(vk.deltaG2, s, G2.ZERO)).add(readG2(b2Sum, 0));
    const gB1 = vk.betaG1.add(mul(vk.deltaG1, s, G1.ZERO)).add(g1(b1Sum));
    const gC = mul(gA, s, G1.ZERO)
      .add(mul(gB1, r, G1.ZERO))
      .subtract(mul(vk.deltaG1, (r * s) % FR_MODULUS, G1.ZERO))
      .add(g1(hSum))
      .add(g1(lSum));
    return { a: gA, b: gB, c: gC };
  }
}

function checkScalar(x: bigint, name: string): void {
  if (typeof x !== 'bigint' || x < 0n || x >= FR_MODULUS) throw new RangeError(`${name} must be a field element in [0, r)`);
}

/** What a partition proof hands the backend: the circuit, its domain and query indices, the SRS
 *  sections and the witness. */
export function partitionInput(params: Parameters, circuit: CircuitLike, witness: Uint8Array): PartitionInput {
  const { shape, queries: q, logN } = compiledOf(circuit);
  return {
    shape,
    logN,
    aIdx: q.a,
    bIdx: q.b,
    srs: { h: params.h, l: params.l, a: params.a, bG1: params.bG1, bG2: params.bG2 },
    witness,
  };
}

/**
 * a, b, c = A·w, B·w, C·w over the domain (circuit rows, then the input constraints a[m + i] = w[i],
 * then zeros), the quotient h, and the five query MSMs, one backend call at a time: what
 * Backend.provePartition does in one call. Wall-clock timings per phase; each MSM's batched addition
 * (reported by the backend) is moved to batch_add.
 */
export async function partitionSumsStepwise(
  backend: Backend,
  input: PartitionInput,
  signal?: AbortSignal,
  pause?: () => Promise<void> | undefined,
): Promise<PartitionSums> {
  const { shape, srs, witness } = input;
  const n = 2 ** input.logN;
  const timings: PartitionSums['timings'] = { matvec: 0, ntt_h: 0, msm_h: 0, msm_l: 0, msm_a: 0, msm_b1: 0, msm_b2: 0, batch_add: 0, release: 0 };
  let t = now();
  const lap = (phase: keyof PartitionSums['timings']): void => {
    const t1 = now();
    timings[phase] = (timings[phase] ?? 0) + t1 - t;
    t = t1;
  };
  const msm = async (phase: 'msm_h' | 'msm_l' | 'msm_a' | 'msm_b1' | 'msm_b2', run: Promise<MsmResult>): Promise<Uint8Array> => {
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
  try {
    // A cancelled proof (signal aborted) stops at the next step boundary: each step is one backend
    // call (native code off the JS thread, not interruptible inside), the buffers are freed below.
    // `pause` (the lanes: a latency-critical proof is proving) holds it there too, its wait timed apart.
    const check = async (): Promise<void> => {
      signal?.throwIfAborted();
      const wait = pause?.();
      if (wait === undefined) return;
      const t0 = now();
      if (signal === undefined) await wait;
      else await Promise.race([wait, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
      const ms = now() - t0;
      timings.urgent_wait = (timings.urgent_wait ?? 0) + ms;
      t += ms; // not the step's time
      signal?.throwIfAborted();
    };
    await check();
    const rowsBytes = shape.numConstraints * FR_BYTES;
    await backend.csrMatVec(shape.a, witness, bufA.subarray(0, rowsBytes));
    await check();
    await backend.csrMatVec(shape.b, witness, bufB.subarray(0, rowsBytes));
    await check();
    await backend.csrMatVec(shape.c, witness, bufC.subarray(0, rowsBytes));
    await check();
    bufA.set(witness.subarray(0, shape.numInputs * FR_BYTES), rowsBytes);
    lap('matvec');
    await backend.quotient(bufA, bufB, bufC);
    lap('ntt_h');
    await check();
    // msmSection: one backend MSM per host chunk of a section (src/backend/section.ts).
    const h = await msm('msm_h', msmSection(backend, 'G1', srs.h, bufA.subarray(0, (n - 1) * FR_BYTES)));
    await check();
    const l = await msm('msm_l', msmSection(backend, 'G1', srs.l, witness.subarray(shape.numInputs * FR_BYTES)));
    await check();
    const a = await msm('msm_a', msmSection(backend, 'G1', srs.a, witness, { scalarIndex: input.aIdx }));
    await check();
    const b1 = await msm('msm_b1', msmSection(backend, 'G1', srs.bG1, witness, { scalarIndex: input.bIdx }));
    await check();
    const b2 = await msm('msm_b2', msmSection(backend, 'G2', srs.bG2, witness, { scalarIndex: input.bIdx }));
    await check();
    return { h, l, a, b1, b2, timings };
  } finally {
    backend.release(bufA);
    backend.release(bufB);
    backend.release(bufC);
    lap('release');
  }
}

/** How a proof shares its backend with others (the lanes set these). */
export interface ProveOptions {
  /** A latency-critical proof (a WinningPoSt's): a backend whose device other proofs share lets it go first. */
  urgent?: boolean;
  /** Step-by-step proofs (backends without provePartition, the CPU's) call it between steps; a promise
   *  returned holds the proof there (while a latency-critical proof has the threads), its wait recorded as
   *  `urgent_wait`. */
  pause?: () => Promise<void> | undefined;
}

/**
 * The deterministic prover: the proof for `assignment` (Montgomery Fr, [inputs…, aux…], ONE first)
 * with blinding factors r and s. Phase timings are returned, and recorded as children of `span`
 * when given.
 */
export async function proveWithRandomness(
  params: Parameters,
  circuitLike: CircuitLike,
  assignment: Uint8Array,
  r: bigint,
  s: bigint,
  backend: Backend,
  span?: Span,
  signal?: AbortSignal,
  opts: ProveOptions = {},
): Promise<ProveResult> {
  signal?.throwIfAborted();
  checkScalar(r, 'r');
  checkScalar(s, 's');
  const circuit = compiledOf(circuitLike);
  const { shape } = circuit;
  const numVars = shape.numInputs + shape.numAux;
  if (!(assignment instanceof Uint8Array) || assignment.length !== numVars * FR_BYTES) {
    throw new RangeError(
      `prove: assignment has ${assignment?.length} bytes, the circuit has ${numVars} variables (${numVars * FR_BYTES} bytes)`,
    );
  }
  if (readFr(assignment, 0) !== 1n) throw new RangeError('prove: assignment[0] (the ONE input) is not 1');
  circuit.checkParams(params);

  const timings = Object.fromEntries(PROVER_PHASES.map((p) => [p, 0])) as Record<ProverPhase, number>;
  const start = now();
  const input = { ...partitionInput(params, circuit, assignment), ...(opts.urgent === true ? { urgent: true } : {}) };
  // The whole partition in one backend call when the backend offers it (the CUDA backend: a, b, c, h
  // and the MSMs stay on the device, timings from CUDA events), else step by step.
  // The whole-partition call (CUDA) cannot be stopped inside: a cancellation is seen after it.
  const sums = backend.provePartition !== undefined ? await backend.provePartition(input) : await partitionSumsStepwise(backend, input, signal, opts.pause);
  signal?.throwIfAborted();
  const { device_wait: deviceWait, stream_wait: streamWait, circuit_upload: upload, host_wait: hostWait, urgent_wait: urgentWait, ...phases } = sums.timings;
  for (const [phase, ms] of Object.entries(phases)) timings[phase as ProverPhase] += ms;
  const t = now();
  const proof = await assembleProof(backend, params.vk, r, s, { hSum: sums.h, lSum: sums.l, aSum: sums.a, b1Sum: sums.b1, b2Sum: sums.b2 });
  timings.assemble += now() - t;
  const totalMs = now() - start;
  if (span !== undefined) {
    // a backend that brought the circuit to the device in this call, and whose call waited for a thread,
    // says so (first); one whose device other proofs share says how long this one waited for it
    if (upload !== undefined) span.record('circuit_upload', upload);
    if (hostWait !== undefined) span.record('host_wait', hostWait);
    if (deviceWait !== undefined) span.record('device_wait', deviceWait);
    if (urgentWait !== undefined) span.record('urgent_wait', urgentWait);
    const notes: Partial<Record<string, string>> = sums.notes ?? {};
    for (const p of PROVER_PHASES) span.record(p, timings[p], notes[p]);
    // a device that streams data from host memory says how long its compute waited for copies
    if (streamWait !== undefined) span.record('stream_wait', streamWait);
  }
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
  shape: CircuitLike,
  assignment: Uint8Array,
  backend: Backend,
  span?: Span,
  signal?: AbortSignal,
  opts: ProveOptions = {},
): Promise<ProveResult> {
  return proveWithRandomness(params, shape, assignment, randomFr(), randomFr(), backend, span, signal, opts);
}
