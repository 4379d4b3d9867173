/**
 * The reference backend: TypeScript/bigint + @noble/curves, single-threaded and slow on purpose.
 * It is the "slow twin" every fast path (native, CUDA) is tested against on random inputs, so it
 * favours being obviously correct over being fast: textbook radix-2 NTT, noble's Pippenger, noble
 * point arithmetic. Buffers use the layout of src/field/layout.ts; lengths are checked at the
 * boundary and a bad length rejects the promise with a RangeError.
 *
 * MSM and batch-add bases are checked to be on the curve but not in the subgroup (readG1OnCurve:
 * noble's subgroup check made a 1024-point MSM 4× slower); the parameter loader validates them.
 *
 * Variable-time throughout (noble's `*Unsafe` paths and Pippenger): never use it with secrets in
 * production. fixedBaseMul uses noble's constant-time `multiply` for non-zero scalars.
 */
import { pippenger } from '@noble/curves/abstract/curve.js';
import { typescriptPointCodec } from '../curve/codec.js';
import { readG1OnCurve, readG2OnCurve } from '../curve/encoding.js';
import type {
  Backend,
  Capabilities,
  CsrMatrix,
  MsmOptions,
  MsmResult,
  MsmTimings,
  PointGroup,
} from './backend.js';
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
  writeFr,
  writeG1,
  writeG2,
  type G1Point,
  type G2Point,
} from '../field/layout.js';

/** Multiplicative generator of Fr* and the coset shift used by bellperson (docs/filecoin.md §4). */
export const FR_GENERATOR = 7n;
/** 2-adicity of r − 1. */
export const FR_TWO_ADICITY = 32;
/** A primitive 2^32-th root of unity: 7^((r−1)/2^32). */
export const FR_ROOT_OF_UNITY = powMod(FR_GENERATOR, (FR_MODULUS - 1n) >> 32n, FR_MODULUS);

export { powMod };

/** A primitive n-th root of unity for n = 2^k ≤ 2^32. */
export function rootOfUnity(n: number): bigint {
  const k = log2Exact(n, 'domain size');
  if (k > FR_TWO_ADICITY) throw new RangeError(`domain size 2^${k} exceeds 2^${FR_TWO_ADICITY}`);
  return powMod(FR_ROOT_OF_UNITY, 1n << BigInt(FR_TWO_ADICITY - k), FR_MODULUS);
}

function log2Exact(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 1 || (n & (n - 1)) !== 0 || n > 2 ** 32) {
    throw new RangeError(`${what} must be a power of two, got ${n}`);
  }
  return Math.round(Math.log2(n));
}

function checkMultiple(buf: Uint8Array, unit: number, what: string): number {
  if (!(buf instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
  if (buf.length % unit !== 0) {
    throw new RangeError(`${what}: length ${buf.length} is not a multiple of ${unit} bytes`);
  }
  return buf.length / unit;
}

function readFrVector(buf: Uint8Array): bigint[] {
  const n = buf.length / FR_BYTES;
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = readFr(buf, i);
  return out;
}

function writeFrVector(buf: Uint8Array, values: readonly bigint[]): void {
  for (let i = 0; i < values.length; i++) writeFr(buf, i, values[i]);
}

/** Textbook iterative radix-2 Cooley–Tukey NTT, in place, natural order in and out:
 *  out_j = Σ_i in_i · ω^(i·j). */
export function nttBigint(values: bigint[], omega: bigint): void {
  const n = values.length;
  const r = FR_MODULUS;
  // bit-reversal permutation
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) [values[i], values[j]] = [values[j], values[i]];
  }
  for (let len = 2; len <= n; len <<= 1) {
    const w = powMod(omega, BigInt(n / len), r);
    const half = len >> 1;
    // twiddles of this stage
    const tw = new Array<bigint>(half);
    tw[0] = 1n;
    for (let k = 1; k < half; k++) tw[k] = (tw[k - 1] * w) % r;
    for (let start = 0; start < n; start += len) {
      for (let k = 0; k < half; k++) {
        const u = values[start + k];
        const v = (values[start + k + half] * tw[k]) % r;
        values[start + k] = u + v >= r ? u + v - r : u + v;
        values[start + k + half] = u >= v ? u - v : u - v + r;
      }
    }
  }
}

/** Forward/inverse, plain/coset transform on canonical bigints (the maths of `Backend.ntt`). */
export function nttTransform(values: bigint[], inverse: boolean, coset: boolean): void {
  const n = values.length;
  if (n === 0) return;
  const omega = rootOfUnity(n);
  const r = FR_MODULUS;
  if (!inverse) {
    if (coset) scaleByPowers(values, FR_GENERATOR);
    nttBigint(values, omega);
  } else {
    nttBigint(values, modInverse(omega, r));
    const nInv = modInverse(BigInt(n), r);
    for (let i = 0; i < n; i++) values[i] = (values[i] * nInv) % r;
    if (coset) scaleByPowers(values, modInverse(FR_GENERATOR, r));
  }
}

function scaleByPowers(values: bigint[], g: bigint): void {
  let p = 1n;
  for (let i = 0; i < values.length; i++) {
    values[i] = (values[i] * p) % FR_MODULUS;
    p = (p * g) % FR_MODULUS;
  }
}

const now = (): number => performance.now();

export class ReferenceBackend implements Backend {
  readonly name = 'reference';

  capabilities(): Capabilities {
    return { backend: 'reference', threads: 1, cuda: false, gpus: [] };
  }

  alloc(bytes: number): Uint8Array {
    if (!Number.isSafeInteger(bytes) || bytes < 0) {
      throw new RangeError(`alloc: invalid size ${bytes}`);
    }
    return new Uint8Array(bytes);
  }

  release(_buf: Uint8Array): void {
    // Plain JS memory: the garbage collector frees it.
  }

  /** The zcash uncompressed point codec in TypeScript (curve/codec.ts): the slow twin of the CPU
   *  addon's decodePoints / encodePoints. */
  decodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup = false): Promise<void> {
    return typescriptPointCodec.decodePoints(group, src, dst, checkOnCurve, checkSubgroup);
  }

  encodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array): Promise<void> {
    return typescriptPointCodec.encodePoints(group, src, dst);
  }

  async msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    const r = msm(bases, scalars, opts, G1_BYTES, readG1OnCurve, G1, 'msmG1');
    const point = new Uint8Array(G1_BYTES);
    writeG1(point, 0, r.sum);
    return { point, timings: r.timings };
  }

  async msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    const r = msm(bases, scalars, opts, G2_BYTES, readG2OnCurve, G2, 'msmG2');
    const point = new Uint8Array(G2_BYTES);
    writeG2(point, 0, r.sum);
    return { point, timings: r.timings };
  }

  async batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array> {
    const n = checkMultiple(bases, G1_BYTES, 'batchAddG1 bases');
    if (!(indices instanceof Uint32Array)) throw new TypeError('batchAddG1: indices must be a Uint32Array');
    let sum = G1.ZERO;
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      if (i >= n) throw new RangeError(`batchAddG1: index ${i} out of range (${n} bases)`);
      sum = sum.add(readG1OnCurve(bases, i));
    }
    const out = new Uint8Array(G1_BYTES);
    writeG1(out, 0, sum);
    return out;
  }

  /** Σ scalars[k]·bases[k] one multiplication at a time (noble's multiply), ≤ 256 points. */
  async lincombG1(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    const out = new Uint8Array(G1_BYTES);
    writeG1(out, 0, lincomb(bases, scalars, G1_BYTES, readG1OnCurve, G1.ZERO, 'lincombG1'));
    return out;
  }

  async lincombG2(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    const out = new Uint8Array(G2_BYTES);
    writeG2(out, 0, lincomb(bases, scalars, G2_BYTES, readG2OnCurve, G2.ZERO, 'lincombG2'));
    return out;
  }

  async ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void> {
    const n = checkMultiple(values, FR_BYTES, 'ntt values');
    log2Exact(n, 'ntt length');
    const v = readFrVector(values);
    nttTransform(v, opts.inverse, opts.coset);
    writeFrVector(values, v);
  }

  /** a, b, c and the quotient's working copies, counted as 4 more vectors of 32 B per element (the
   *  bigint copies live on the JS heap and are larger; this backend is for tests). */
  partitionWorkingSetBytes(domainSize: number): number {
    return (3 + 4) * FR_BYTES * domainSize;
  }

  async quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void> {
    const n = checkMultiple(a, FR_BYTES, 'quotient a');
    log2Exact(n, 'quotient length');
    if (b.length !== a.length || c.length !== a.length) {
      throw new RangeError(`quotient: a, b, c lengths differ (${a.length}, ${b.length}, ${c.length})`);
    }
    const r = FR_MODULUS;
    const va = readFrVector(a);
    const vb = readFrVector(b);
    const vc = readFrVector(c);
    for (const v of [va, vb, vc]) {
      nttTransform(v, true, false);
      nttTransform(v, false, true);
    }
    // Z(x) = x^n − 1 is the constant g^n − 1 on the whole coset g·H.
    const zInv = modInverse(powMod(FR_GENERATOR, BigInt(n), r) - 1n, r);
    for (let i = 0; i < n; i++) va[i] = mod(((va[i] * vb[i]) % r - vc[i]) * zInv, r);
    nttTransform(va, true, true);
    writeFrVector(a, va);
    writeFrVector(b, vb);
    writeFrVector(c, vc);
  }

  async csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void> {
    checkCsr(m);
    if (w.length !== m.cols * FR_BYTES) {
      throw new RangeError(`csrMatVec: w has ${w.length} bytes, expected ${m.cols * FR_BYTES}`);
    }
    if (out.length !== m.rows * FR_BYTES) {
      throw new RangeError(`csrMatVec: out has ${out.length} bytes, expected ${m.rows * FR_BYTES}`);
    }
    const nCoeffs = m.coeffs.length / FR_BYTES;
    const coeffs = new Array<bigint>(nCoeffs);
    for (let k = 0; k < nCoeffs; k++) coeffs[k] = readFr(m.coeffs, k);
    const r = FR_MODULUS;
    for (let row = 0; row < m.rows; row++) {
      let acc = 0n;
      for (let k = m.rowPtr[row]; k < m.rowPtr[row + 1]; k++) {
        acc += coeffs[m.coeffIdx[k]] * readFr(w, m.colIdx[k]);
      }
      writeFr(out, row, acc % r);
    }
  }

  async fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    if (base.length !== G1_BYTES) throw new RangeError(`fixedBaseMulG1: base must be ${G1_BYTES} bytes`);
    const n = checkMultiple(scalars, FR_BYTES, 'fixedBaseMulG1 scalars');
    const p = readG1OnCurve(base, 0);
    const out = new Uint8Array(n * G1_BYTES);
    for (let i = 0; i < n; i++) writeG1(out, i, mulOrZero(p, readFr(scalars, i), G1.ZERO));
    return out;
  }

  async fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    if (base.length !== G2_BYTES) throw new RangeError(`fixedBaseMulG2: base must be ${G2_BYTES} bytes`);
    const n = checkMultiple(scalars, FR_BYTES, 'fixedBaseMulG2 scalars');
    const p = readG2OnCurve(base, 0);
    const out = new Uint8Array(n * G2_BYTES);
    for (let i = 0; i < n; i++) writeG2(out, i, mulOrZero(p, readFr(scalars, i), G2.ZERO));
    return out;
  }
}

interface PointLike<P> {
  add(other: P): P;
  is0(): boolean;
  multiply(s: bigint): P;
}

function mulOrZero<P extends PointLike<P>>(p: P, s: bigint, zero: P): P {
  // noble's constant-time multiply rejects 0 and the identity; both give the identity.
  return s === 0n || p.is0() ? zero : p.multiply(s);
}

type PointCons = typeof G1 | typeof G2;

/** The most points lincombG1/G2 take (both backends): it is for the proof's assembly. */
export const LINCOMB_MAX_POINTS = 256;

function lincomb<P extends PointLike<P>>(
  bases: Uint8Array,
  scalars: Uint8Array,
  pointBytes: number,
  read: (buf: Uint8Array, i: number) => P,
  zero: P,
  what: string,
): P {
  const n = checkMultiple(bases, pointBytes, `${what} bases`);
  const ns = checkMultiple(scalars, FR_BYTES, `${what} scalars`);
  if (ns !== n) throw new RangeError(`${what}: ${n} bases but ${ns} scalars`);
  if (n > LINCOMB_MAX_POINTS) throw new RangeError(`${what}: at most ${LINCOMB_MAX_POINTS} points`);
  let sum = zero;
  for (let k = 0; k < n; k++) sum = sum.add(mulOrZero(read(bases, k), readFr(scalars, k), zero));
  return sum;
}

function msm<P extends G1Point | G2Point>(
  bases: Uint8Array,
  scalars: Uint8Array,
  opts: MsmOptions | undefined,
  pointBytes: number,
  read: (buf: Uint8Array, i: number) => P,
  cons: PointCons,
  what: string,
): { sum: P; timings: MsmTimings } {
  const nBases = checkMultiple(bases, pointBytes, `${what} bases`);
  const nScalars = checkMultiple(scalars, FR_BYTES, `${what} scalars`);
  const index = opts?.scalarIndex;
  if (index !== undefined) {
    if (!(index instanceof Uint32Array)) throw new TypeError(`${what}: scalarIndex must be a Uint32Array`);
    if (index.length !== nBases) {
      throw new RangeError(`${what}: scalarIndex has ${index.length} entries for ${nBases} bases`);
    }
  } else if (nScalars !== nBases) {
    throw new RangeError(`${what}: ${nBases} bases but ${nScalars} scalars`);
  }

  // classify: scalar 0 → skip, 1 → batched addition, other → Pippenger
  let t = now();
  const ones: number[] = [];
  const others: number[] = [];
  const otherScalars: bigint[] = [];
  for (let k = 0; k < nBases; k++) {
    const si = index ? index[k] : k;
    if (si >= nScalars) throw new RangeError(`${what}: scalarIndex ${si} out of range (${nScalars} scalars)`);
    const s = readFr(scalars, si);
    if (s === 0n) continue;
    if (s === 1n) ones.push(k);
    else {
      others.push(k);
      otherScalars.push(s);
    }
  }
  const classify = now() - t;

  t = now();
  let sumOnes = cons.ZERO as P;
  for (const k of ones) sumOnes = sumOnes.add(read(bases, k) as never) as P;
  const batchAdd = now() - t;

  t = now();
  const points = others.map((k) => read(bases, k));
  const sumOthers = (
    points.length === 0 ? cons.ZERO : pippenger(cons as never, points as never[], otherScalars)
  ) as P;
  const msmMs = now() - t;

  return {
    sum: sumOnes.add(sumOthers as never) as P,
    timings: { classify, batchAdd, msm: msmMs },
  };
}

function checkCsr(m: CsrMatrix): void {
  if (!Number.isInteger(m.rows) || m.rows < 0 || !Number.isInteger(m.cols) || m.cols < 0) {
    throw new RangeError('csr: rows and cols must be non-negative integers');
  }
  if (m.rowPtr.length !== m.rows + 1) {
    throw new RangeError(`csr: rowPtr has ${m.rowPtr.length} entries, expected ${m.rows + 1}`);
  }
  const nnz = m.colIdx.length;
  if (m.coeffIdx.length !== nnz) throw new RangeError('csr: colIdx and coeffIdx lengths differ');
  if (m.rowPtr[0] !== 0 || m.rowPtr[m.rows] !== nnz) throw new RangeError('csr: rowPtr does not span colIdx');
  for (let i = 0; i < m.rows; i++) {
    if (m.rowPtr[i] > m.rowPtr[i + 1]) throw new RangeError(`csr: rowPtr decreases at row ${i}`);
  }
  const nCoeffs = checkMultiple(m.coeffs, FR_BYTES, 'csr coeffs');
  for (let k = 0; k < nnz; k++) {
    if (m.colIdx[k] >= m.cols) throw new RangeError(`csr: column ${m.colIdx[k]} out of range`);
    if (m.coeffIdx[k] >= nCoeffs) throw new RangeError(`csr: coefficient index ${m.coeffIdx[k]} out of range`);
  }
}
