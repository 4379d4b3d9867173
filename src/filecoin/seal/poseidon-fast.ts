/**
 * A tighter evaluation of neptune's optimized Poseidon (compressed round constants, sparse matrices)
 * for the sealer's many tree and column hashes: no per-round allocation, one reduction per output
 * word of each matrix product. Same function as `poseidonHash`; tested against it
 * (test/seal-parts.test.ts). Inputs must be canonical (< r); that is not re-checked here.
 */
import { FR_MODULUS as P } from '../../field/layout.js';
import { poseidonOptimizedConstants } from '../hash/poseidon.js';
import { nativeHashGroups } from '../hash/poseidon-native.js';

interface Prepared {
  readonly t: number;
  readonly half: number;
  readonly partial: number;
  readonly tag: bigint;
  readonly crc: readonly bigint[];
  /** Dense matrices, column-major for the row-vector product: col[j][i] = M[i][j]. */
  readonly mdsCols: readonly (readonly bigint[])[];
  readonly preCols: readonly (readonly bigint[])[];
  readonly wHat: readonly (readonly bigint[])[];
  readonly vRest: readonly (readonly bigint[])[];
  readonly state: bigint[];
  readonly tmp: bigint[];
}

const cache = new Map<number, Prepared>();

function prepare(arity: number): Prepared {
  let p = cache.get(arity);
  if (p === undefined) {
    const c = poseidonOptimizedConstants(arity);
    const t = c.width;
    const cols = (m: readonly (readonly bigint[])[]): bigint[][] => Array.from({ length: t }, (_, j) => m.map((row) => row[j]));
    p = {
      t,
      half: c.fullRounds / 2,
      partial: c.partialRounds,
      tag: c.domainTag,
      crc: c.compressedRoundConstants,
      mdsCols: cols(c.mds),
      preCols: cols(c.preSparseMatrix),
      wHat: c.sparseMatrices.map((s) => s.wHat),
      vRest: c.sparseMatrices.map((s) => s.vRest),
      state: new Array<bigint>(t).fill(0n),
      tmp: new Array<bigint>(t).fill(0n),
    };
    cache.set(arity, p);
  }
  return p;
}

function pow5(x: bigint): bigint {
  const x2 = (x * x) % P;
  const x4 = (x2 * x2) % P;
  return (x4 * x) % P;
}

function dense(p: Prepared, cols: readonly (readonly bigint[])[]): void {
  const { t, state, tmp } = p;
  for (let j = 0; j < t; j++) {
    const col = cols[j];
    let s = 0n;
    for (let i = 0; i < t; i++) s += state[i] * col[i];
    tmp[j] = s % P;
  }
  for (let j = 0; j < t; j++) state[j] = tmp[j];
}

/** Poseidon (MerkleTree domain tag) of `inputs`; arity = inputs.length ∈ {2, 4, 8, 11, …}. */
export function fastPoseidon(inputs: readonly bigint[]): bigint {
  const p = prepare(inputs.length);
  const { t, half, partial, crc, state } = p;
  state[0] = (p.tag + crc[0]) % P;
  for (let i = 1; i < t; i++) state[i] = (inputs[i - 1] + crc[i]) % P;
  let offset = t;
  // first half of the full rounds; the last of them mixes with the pre-sparse matrix
  for (let r = 0; r < half; r++) {
    for (let i = 0; i < t; i++) state[i] = (pow5(state[i]) + crc[offset + i]) % P;
    offset += t;
    dense(p, r === half - 1 ? p.preCols : p.mdsCols);
  }
  // partial rounds with sparse matrices
  for (let r = 0; r < partial; r++) {
    const s0 = (pow5(state[0]) + crc[offset++]) % P;
    const w = p.wHat[r];
    const v = p.vRest[r];
    let first = s0 * w[0];
    for (let i = 1; i < t; i++) first += state[i] * w[i];
    for (let j = 1; j < t; j++) state[j] = (state[j] + v[j - 1] * s0) % P;
    state[0] = first % P;
  }
  // second half: t−1 rounds with constants, the last one without
  for (let r = 1; r < half; r++) {
    for (let i = 0; i < t; i++) state[i] = (pow5(state[i]) + crc[offset + i]) % P;
    offset += t;
    dense(p, p.mdsCols);
  }
  for (let i = 0; i < t; i++) state[i] = pow5(state[i]);
  dense(p, p.mdsCols);
  return state[1];
}

// ---------------------------------------------------------------------------------------------
// Flat buffers of 32-byte little-endian field elements

const M64 = (1n << 64n) - 1n;

/** Reads the 32-byte LE value at byte `offset` (4 × u64 instead of 32 byte steps). */
export function readFrLE(dv: DataView, offset: number): bigint {
  return dv.getBigUint64(offset, true)
    | (dv.getBigUint64(offset + 8, true) << 64n)
    | (dv.getBigUint64(offset + 16, true) << 128n)
    | (dv.getBigUint64(offset + 24, true) << 192n);
}

export function writeFrLE(dv: DataView, offset: number, x: bigint): void {
  dv.setBigUint64(offset, x & M64, true);
  dv.setBigUint64(offset + 8, (x >> 64n) & M64, true);
  dv.setBigUint64(offset + 16, (x >> 128n) & M64, true);
  dv.setBigUint64(offset + 24, x >> 192n, true);
}

/**
 * Poseidon of consecutive groups: group g hashes elements [g·arity, (g+1)·arity) of `input`, for
 * g in [from, to); hash g is written at element g of `output`. `tick` is called every 256 hashes.
 */
export function hashGroupsInto(
  input: Uint8Array, arity: number, output: Uint8Array, from: number, to: number, tick?: (n: number) => void,
): void {
  // natively (hash/poseidon-native.ts) in runs of 256 groups when the addon loads: the same hashes, ~50× faster; a
  // run it refuses (an element ≥ r, which the sealer never makes) is hashed here as before
  for (let g = from; g < to; ) {
    const end = Math.min(to, g + 256);
    const hashes = native ? nativeRun(input.subarray(g * arity * 32, end * arity * 32), arity) : undefined;
    if (hashes === undefined) hashGroupsInTs(input, arity, output, g, end); // no addon, not its arity, or refused
    else output.set(hashes, g * 32);
    tick?.(end - g);
    g = end;
  }
}

/** Whether hashGroupsInto tries the native addon (useNativeGroups). */
let native = true;

/** hashGroupsInto natively when it can (default) or always in TypeScript (false: the twin the tests compare). */
export function useNativeGroups(on: boolean): void {
  native = on;
}

function nativeRun(bytes: Uint8Array, arity: number): Uint8Array | undefined {
  try {
    // the addon takes no view of a SharedArrayBuffer (the pool's inputs): a copy of the run (≤ 256 groups)
    return nativeHashGroups(arity, bytes.buffer instanceof SharedArrayBuffer ? bytes.slice() : bytes);
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

function hashGroupsInTs(input: Uint8Array, arity: number, output: Uint8Array, from: number, to: number): void {
  const din = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const dout = new DataView(output.buffer, output.byteOffset, output.byteLength);
  const xs = new Array<bigint>(arity);
  for (let g = from; g < to; g++) {
    const base = g * arity * 32;
    for (let k = 0; k < arity; k++) xs[k] = readFrLE(din, base + k * 32);
    writeFrLE(dout, g * 32, fastPoseidon(xs));
  }
}
