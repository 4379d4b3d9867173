/**
 * INSECURE development setup: Groth16 parameters for tests and benchmarks ONLY.
 *
 * The toxic waste (τ, α, β, γ, δ) is derived from a public seed, so anyone can recompute it and
 * forge proofs. Real proving uses the parameters of the Filecoin trusted setup (keys.ts reads
 * them). The names say so: `insecureDevSetup`, `loadOrCreateDevParams`, files `dev-<digest>.params`.
 *
 * The QAP follows bellperson's generator: rows are the circuit's constraints then one
 * `input_i · 0 = 0` per input (row numConstraints + i has A = input_i), the domain is the next
 * power of two; with L_j(τ) the Lagrange basis of the domain at τ,
 *   A_i(τ) = Σ_rows A[row][i]·L_row(τ)  (likewise B, C),
 *   h_i = τ^i·Z(τ)/δ (i < n − 1),  l_j = (β·A_j + α·B_j + C_j)/δ (aux),  ic_i = (…)/γ (inputs),
 *   a = A(τ) over queryIndices(shape).a, b_g1/b_g2 = B(τ) over queryIndices(shape).b.
 * The query selection follows the shape's densities (which the prover uses), so a dense variable
 * whose coefficients cancel exactly keeps an identity point rather than shifting every later base.
 *
 * Field work is TypeScript bigint with batch inversion (no per-element exponentiation): a few
 * million multiplications for 2^17 constraints. Every point multiplication goes through the
 * backend's fixedBaseMulG1/G2.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Backend, SetupScalars } from '../backend/backend.js';
import {
  FR_BYTES,
  FR_MODULUS,
  G1,
  G1_BYTES,
  G2,
  G2_BYTES,
  mod,
  modInverse,
  powMod,
  readFr,
  readG1,
  writeG1,
  writeG2,
  type G1Point,
} from '../field/layout.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { viewOf, writeFrFast } from '../curve/codec.js';
import {
  ParamsFormatError,
  PARAMS_SECTIONS,
  decodeVerifyingKey,
  readParamsLayout,
  verifyingKeyByteLength,
  writeParamsFile,
  writeVerifyingKeyFile,
  type AnyParameters,
  type Parameters,
} from './keys.js';
import { loadParams } from './params-native.js';
import { compiledOf, type CircuitLike } from './compiled.js';
import { domainSize } from './queries.js';
import {
  insecureToxicWaste,
  setupConstants,
  setupConstantsBytes,
  verifyingKeyPoints,
  type DevSetupOptions,
  type SetupConstants,
  type ToxicWaste,
} from './setup-constants.js';
import { writeInsecureDevParamsGpu, type DevSetupProgress, type GpuDevParamsResult } from './setup-gpu.js';

export {
  DEV_SETUP_DEFAULT_SEED,
  insecureToxicWaste,
  setupConstants,
  setupConstantsBytes,
  verifyingKeyPoints,
  type DevSetupOptions,
  type SetupConstants,
  type ToxicWaste,
} from './setup-constants.js';

const R = FR_MODULUS;
/** Multiplicative generator of Fr* (bellperson's coset shift); ω_n = 7^((r−1)/n). */
const FR_GENERATOR = 7n;

const powR = (base: bigint, exp: bigint): bigint => powMod(base, exp, R);

/** In-place batch inversion (Montgomery's trick): 3 multiplications per element, one inverse. */
function batchInvert(xs: bigint[]): void {
  const n = xs.length;
  if (n === 0) return;
  const prefix = new Array<bigint>(n);
  let acc = 1n;
  for (let i = 0; i < n; i++) {
    prefix[i] = acc;
    acc = (acc * xs[i]) % R;
  }
  let inv = modInverse(acc, R);
  for (let i = n - 1; i >= 0; i--) {
    const x = xs[i];
    xs[i] = (inv * prefix[i]) % R;
    inv = (inv * x) % R;
  }
}

/**
 * L_j(τ) for j < count over the domain of size n:  L_j(τ) = Z(τ)/n · ω^j / (τ − ω^j).
 * (The same values as bellperson's iFFT of [1, τ, τ², …], in O(count) multiplications.)
 */
export function lagrangeAt(tau: bigint, n: number, count: number): bigint[] {
  const omega = powR(FR_GENERATOR, (R - 1n) / BigInt(n));
  const z = mod(powR(tau, BigInt(n)) - 1n, R);
  if (z === 0n) throw new RangeError('τ lies in the evaluation domain');
  const scale = (z * modInverse(BigInt(n), R)) % R;
  const omegas = new Array<bigint>(count);
  const denoms = new Array<bigint>(count);
  let w = 1n;
  for (let j = 0; j < count; j++) {
    omegas[j] = w;
    denoms[j] = mod(tau - w, R);
    w = (w * omega) % R;
  }
  batchInvert(denoms);
  for (let j = 0; j < count; j++) denoms[j] = (((scale * omegas[j]) % R) * denoms[j]) % R;
  return denoms;
}

/** A_i(τ), B_i(τ), C_i(τ) for every variable (columns of the full assignment), input constraints
 *  included. One pass over each CSR matrix, accumulating unreduced products per column. */
export function qapEvaluations(shape: CircuitShape, lagrange: readonly bigint[]): { a: bigint[]; b: bigint[]; c: bigint[] } {
  const cols = shape.numInputs + shape.numAux;
  const evalMatrix = (m: CircuitShape['a'], name: string): bigint[] => {
    if (m.rows !== shape.numConstraints || m.cols !== cols) {
      throw new RangeError(`shape: matrix ${name} is ${m.rows}×${m.cols}, expected ${shape.numConstraints}×${cols}`);
    }
    const coeffs = new Array<bigint>(m.coeffs.length / FR_BYTES);
    for (let k = 0; k < coeffs.length; k++) coeffs[k] = readFr(m.coeffs, k);
    const acc = new Array<bigint>(cols).fill(0n);
    for (let row = 0; row < m.rows; row++) {
      const l = lagrange[row];
      for (let k = m.rowPtr[row]; k < m.rowPtr[row + 1]; k++) acc[m.colIdx[k]] += coeffs[m.coeffIdx[k]] * l;
    }
    return acc;
  };
  const a = evalMatrix(shape.a, 'A');
  const b = evalMatrix(shape.b, 'B');
  const c = evalMatrix(shape.c, 'C');
  for (let i = 0; i < shape.numInputs; i++) a[i] += lagrange[shape.numConstraints + i];
  for (const v of [a, b, c]) for (let k = 0; k < cols; k++) v[k] %= R;
  return { a, b, c };
}

function frBuffer(values: ArrayLike<bigint>, count = values.length, pick?: (k: number) => bigint): Uint8Array {
  const out = new Uint8Array(count * FR_BYTES);
  const v = viewOf(out);
  for (let k = 0; k < count; k++) writeFrFast(v, k, pick ? pick(k) : values[k]);
  return out;
}

/**
 * INSECURE: builds Groth16 parameters for `shape` from seeded toxic waste. For tests and benchmarks
 * only; proofs made with these parameters prove nothing.
 */
export async function insecureDevSetup(shape: CircuitLike, backend: Backend, opts: DevSetupOptions = {}): Promise<Parameters> {
  return setupWithToxicWaste(shape, backend, insecureToxicWaste(opts.seed));
}

/**
 * The CPU setup's steps and their weights (microseconds per element, measured in the 2 KiB PoRep setup of a
 * `kiln prove` on the busy 2-core dev machine: 630 s, of which the Lagrange basis 122 s, A/B/C 75 s, the scalars
 * 76 s, the G1 sections 317 s, b in G2 30 s, the file 10 s), so that progress in these `work` units moves at a
 * steady pace and gives an ETA. `nativeScalars`: the backend computes the first three natively (devSetupScalars:
 * 2.8 s where TypeScript took 23.9 s, 2026-12-07), a tenth of the work.
 */
export function cpuSetupSteps(circuit: CircuitLike, nativeScalars = false): { step: string; work: number }[] {
  const c = compiledOf(circuit);
  const { shape, queries: q } = c;
  const n = domainSize(shape);
  const nnz = shape.a.colIdx.length + shape.b.colIdx.length + shape.c.colIdx.length;
  const rows = shape.numConstraints + shape.numInputs;
  const f = nativeScalars ? 0.1 : 1;
  return [
    { step: 'Lagrange basis at τ', work: rows * 45 * f },
    { step: 'A, B, C at τ', work: nnz * 5 * f },
    { step: 'query scalars', work: (n + shape.numAux + shape.numInputs + q.a.length + q.b.length) * 7 * f },
    { step: 'h (G1)', work: (n - 1) * 30 },
    { step: 'l (G1)', work: shape.numAux * 30 },
    { step: 'a (G1)', work: q.a.length * 30 },
    { step: 'b (G1)', work: q.b.length * 30 },
    { step: 'b (G2)', work: q.b.length * 45 },
    { step: 'ic (G1)', work: shape.numInputs * 30 },
    { step: 'write the file', work: devParamsLayout(c).bytes * 0.01 },
  ];
}

/** Progress of a setup in weighted work units (cpuSetupSteps): the step under way, work done, work in all. */
export type SetupStepProgress = (step: string, done: number, total: number) => void;

/** Walks cpuSetupSteps, reporting each step as it starts (the work of the ones before it done). */
class SetupSteps {
  private readonly steps: { step: string; work: number }[];
  private readonly total: number;
  private done = 0;
  private k = 0;

  constructor(
    circuit: CircuitLike,
    private readonly report: SetupStepProgress,
    nativeScalars: boolean,
  ) {
    this.steps = cpuSetupSteps(circuit, nativeScalars);
    this.total = this.steps.reduce((t, x) => t + x.work, 0);
  }

  next(): void {
    if (this.k > 0) this.done += this.steps[this.k - 1]?.work ?? 0;
    this.report(this.k < this.steps.length ? this.steps[this.k]!.step : 'done', Math.min(this.done, this.total), this.total);
    this.k++;
  }
}

/**
 * The setup's scalars in TypeScript (the slow twin of Backend.devSetupScalars, native/src/setup/scalars.hpp; the
 * same bytes): the Lagrange basis at τ, A/B/C at τ, then h_i = τ^i·Z(τ)/δ, l_j = (β·A + α·B + C)_{aux j}/δ,
 * ic_i = (β·A + α·B + C)_i/γ, a = A(τ) over the A query, b = B(τ) over the B query (Montgomery Fr). `next` marks
 * the steps (cpuSetupSteps' first three).
 */
export function setupScalarsTs(shape: CircuitShape, q: { a: Uint32Array; b: Uint32Array }, k: SetupConstants, n: number, next: () => void = () => {}): SetupScalars {
  const { tau, alpha, beta, gammaInv, deltaInv, hScale } = k;
  const numInputs = shape.numInputs;
  const numAux = shape.numAux;
  next();
  const lagrange = lagrangeAt(tau, n, shape.numConstraints + numInputs);
  next();
  const { a: at, b: bt, c: ct } = qapEvaluations(shape, lagrange);
  next();

  const lc = (i: number): bigint => (beta * at[i] + alpha * bt[i] + ct[i]) % R;

  // h_i = τ^i · Z(τ)/δ
  const h = new Uint8Array((n - 1) * FR_BYTES);
  {
    const v = viewOf(h);
    let t = hScale;
    for (let i = 0; i < n - 1; i++) {
      writeFrFast(v, i, t);
      t = (t * tau) % R;
    }
  }
  return {
    h,
    l: frBuffer(at, numAux, (j) => (lc(numInputs + j) * deltaInv) % R),
    ic: frBuffer(at, numInputs, (i) => (lc(i) * gammaInv) % R),
    a: frBuffer(at, q.a.length, (i) => at[q.a[i]]),
    b: frBuffer(bt, q.b.length, (i) => bt[q.b[i]]),
  };
}

/** The setup for given toxic waste (tests pin it; insecureDevSetup derives it from a seed). */
export async function setupWithToxicWaste(circuit: CircuitLike, backend: Backend, tw: ToxicWaste, steps?: SetupSteps): Promise<Parameters> {
  const { shape, queries: q } = compiledOf(circuit);
  const n = domainSize(shape);
  const numInputs = shape.numInputs;
  const k = setupConstants(tw, n);
  const next = (): void => steps?.next();

  let scalars: SetupScalars;
  if (backend.devSetupScalars !== undefined) {
    // natively (native/src/setup/scalars.hpp): the three field steps at once
    next();
    scalars = await backend.devSetupScalars({ shape, n, qa: q.a, qb: q.b, consts: setupConstantsBytes(k) });
    next();
    next();
  } else {
    scalars = setupScalarsTs(shape, q, k, n, next);
  }
  const { h: hScalars, l: lScalars, ic: icScalars, a: aScalars, b: bScalars } = scalars;

  const g1 = new Uint8Array(G1_BYTES);
  writeG1(g1, 0, G1.BASE);
  const g2 = new Uint8Array(G2_BYTES);
  writeG2(g2, 0, G2.BASE);

  next();
  const h = await backend.fixedBaseMulG1(g1, hScalars);
  next();
  const l = await backend.fixedBaseMulG1(g1, lScalars);
  next();
  const a = await backend.fixedBaseMulG1(g1, aScalars);
  next();
  const bG1 = await backend.fixedBaseMulG1(g1, bScalars);
  next();
  const bG2 = await backend.fixedBaseMulG2(g2, bScalars);
  next();
  const icPoints = await backend.fixedBaseMulG1(g1, icScalars);
  const ic: G1Point[] = [];
  for (let i = 0; i < numInputs; i++) ic.push(readG1(icPoints, i));

  return { vk: { ...verifyingKeyPoints(tw), ic }, h, l, a, bG1, bG2 };
}

export interface DevParamsFileOptions extends DevSetupOptions {
  /** The toxic waste itself (tests); default: derived from `seed`. */
  toxicWaste?: ToxicWaste;
  /** Also write the verifying key here (bellperson's .vk layout: the head of the .params file). */
  vkPath?: string;
  /** Each step as it starts, in weighted work units (cpuSetupSteps; 'done' at the end). */
  onStep?: SetupStepProgress;
}

/**
 * INSECURE: the CPU development setup written as a bellperson .params file (and .vk when asked):
 * the slow twin of the GPU setup (setup-gpu.ts writeInsecureDevParamsGpu), same seed, same bytes.
 * The sections pass through backend buffers, so this serves circuits whose parameters fit in
 * memory. Not atomic (see ensureDevParamsFile). Returns the parameters.
 */
export async function writeInsecureDevParamsCpu(
  circuit: CircuitLike,
  backend: Backend,
  paramsPath: string,
  opts: DevParamsFileOptions = {},
): Promise<Parameters> {
  const c = compiledOf(circuit);
  const steps = opts.onStep ? new SetupSteps(c, opts.onStep, backend.devSetupScalars !== undefined) : undefined;
  const params = await setupWithToxicWaste(c, backend, opts.toxicWaste ?? insecureToxicWaste(opts.seed), steps);
  steps?.next(); // the file
  await writeParamsFile(paramsPath, params, { codec: backend });
  if (opts.vkPath !== undefined) await writeVerifyingKeyFile(opts.vkPath, params.vk);
  steps?.next(); // done
  return params;
}

/** `<cacheDir>/dev-<shapeDigest>.params`. */
export function devParamsPath(circuit: CircuitLike, cacheDir: string): string {
  return devParamsPathForDigest(compiledOf(circuit).digest, cacheDir);
}

/** devParamsPath of the shape whose digest (shapeDigest) is `digest`, without the shape. */
export function devParamsPathForDigest(digest: string, cacheDir: string): string {
  return join(cacheDir, `dev-${digest}.params`);
}

/** The .vk beside a .params file (`…/dev-<digest>.vk`). */
export function vkPathOf(paramsPath: string): string {
  return paramsPath.replace(/\.params$/, '') + '.vk';
}

/** Whether development parameters for `shape` are made on the backend's device (a backend with
 *  devSetupInsecure: the CUDA one with a recent addon) rather than on the CPU. */
export function devSetupOnDevice(backend: Backend): boolean {
  return typeof backend.devSetupInsecure === 'function';
}

/** The expected byte length and section counts (h, l, a, b_g1, b_g2) of the .params file of `shape`. */
export function devParamsLayout(circuit: CircuitLike): { bytes: number; vkBytes: number; counts: number[] } {
  const want = compiledOf(circuit).expectedParamsCounts();
  const counts = PARAMS_SECTIONS.map((s) => want[s.section]);
  const vkBytes = verifyingKeyByteLength(want.ic);
  let bytes = vkBytes;
  PARAMS_SECTIONS.forEach((s, k) => (bytes += 4 + counts[k] * (s.group === 'G1' ? 96 : 192)));
  return { bytes, vkBytes, counts };
}

/**
 * Whether the .params file at `path` has the layout of `shape`'s parameters: every count consistent
 * with the file's size (keys.ts readParamsLayout), the IC and section counts the shape implies, and
 * a verifying key that parses. A quick check (small reads; the points of the sections are not read),
 * for files too large to load here.
 */
export async function devParamsFileFits(path: string, circuit: CircuitLike): Promise<boolean> {
  try {
    const layout = await readParamsLayout(path);
    const want = compiledOf(circuit).expectedParamsCounts();
    if (layout.icCount !== want.ic) return false;
    for (const s of PARAMS_SECTIONS) if (layout.sections[s.section].count !== want[s.section]) return false;
    await decodeVerifyingKey(layout.vkBytes, { checkPoints: false });
    return true;
  } catch {
    return false;
  }
}

export interface EnsureDevParamsOptions extends DevSetupOptions {
  /** Progress of a device setup (setup-gpu.ts), every `progressIntervalMs` (default 1000). */
  onProgress?: (p: DevSetupProgress) => void;
  /** Progress of a CPU setup: each step as it starts, in weighted work units (cpuSetupSteps). */
  onStep?: SetupStepProgress;
  progressIntervalMs?: number;
  /** The circuit's name in a GPU backend's memory plan (loadOrCreateDevParams). */
  label?: string;
}

export interface EnsureDevParamsResult {
  /** The .params file (`<cacheDir>/dev-<digest>.params`) and its .vk beside it. */
  path: string;
  vkPath: string;
  /** Whether it was made now (false: a fitting file was there). */
  created: boolean;
  /** Where it was made: 'gpu' (devSetupInsecure) or 'cpu'. */
  on?: 'gpu' | 'cpu';
  /** The device setup's figures (counts, timings, memory) when made on the GPU. */
  gpu?: GpuDevParamsResult;
  /** Wall milliseconds of making it. */
  ms: number;
}

/**
 * INSECURE development parameters for `shape` as files in `cacheDir` (`dev-<digest>.params` and
 * `.vk`), made when missing or not fitting the shape (devParamsFileFits): on the backend's device
 * when it can (devSetupOnDevice: the CUDA backend, streamed from the device to the file, never held
 * in host memory), else on the CPU. Written to a temporary name and renamed, so concurrent callers
 * never see a half-written file. Does not load them.
 */
export async function ensureDevParamsFile(
  circuit: CircuitLike,
  backend: Backend,
  cacheDir: string,
  opts: EnsureDevParamsOptions = {},
): Promise<EnsureDevParamsResult> {
  const c = compiledOf(circuit);
  const path = devParamsPath(c, cacheDir);
  const vkPath = vkPathOf(path);
  if (await devParamsFileFits(path, c)) return { path, vkPath, created: false, ms: 0 };
  const t0 = performance.now();
  await mkdir(cacheDir, { recursive: true });
  const tag = `tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const tmp = `${path}.${tag}`;
  const tmpVk = `${vkPath}.${tag}`;
  try {
    let gpu: GpuDevParamsResult | undefined;
    if (devSetupOnDevice(backend)) {
      gpu = await writeInsecureDevParamsGpu(c, backend, tmp, {
        seed: opts.seed,
        vkPath: tmpVk,
        onProgress: opts.onProgress,
        progressIntervalMs: opts.progressIntervalMs,
      });
    } else {
      await writeInsecureDevParamsCpu(c, backend, tmp, { seed: opts.seed, vkPath: tmpVk, onStep: opts.onStep });
    }
    await rename(tmpVk, vkPath);
    await rename(tmp, path);
    return { path, vkPath, created: true, on: gpu ? 'gpu' : 'cpu', gpu, ms: performance.now() - t0 };
  } catch (e) {
    await rm(tmp, { force: true });
    await rm(tmpVk, { force: true });
    throw e;
  }
}

/**
 * INSECURE development parameters for `shape`, cached on disk by the shape's digest
 * (`<cacheDir>/dev-<digest>.params`, and its `.vk`), and read through the same loader as official
 * files (params-native.ts loadParams: host sections in the CPU backend's native memory, sections
 * streamed to the device for the GPU backend). A cached file that is unreadable or does not fit the
 * shape is rebuilt by ensureDevParamsFile (on the GPU when the backend can, else on the CPU; written
 * atomically) and then loaded like a cached one.
 */
export async function loadOrCreateDevParams(
  circuitLike: CircuitLike,
  backend: Backend,
  cacheDir: string,
  opts: EnsureDevParamsOptions = {},
): Promise<AnyParameters> {
  const circuit = compiledOf(circuitLike);
  const path = devParamsPath(circuit, cacheDir);
  const load = async (): Promise<AnyParameters> => {
    const params = await loadParams(path, backend, { checkVerifyingKey: false, expected: circuit.expectedParamsCounts(), circuit, label: opts.label });
    circuit.checkParams(params);
    return params;
  };
  try {
    return await load();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && !(e instanceof ParamsFormatError) && !(e instanceof RangeError)) throw e;
  }
  // Unreadable or unfitting: make it again (removing it first, so ensureDevParamsFile's quick check
  // cannot keep a file whose layout fits but whose points do not).
  await rm(path, { force: true });
  await ensureDevParamsFile(circuit, backend, cacheDir, opts);
  return load();
}
