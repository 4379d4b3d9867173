/**
 * Poseidon over the BLS12-381 scalar field exactly as neptune 11 computes it for Filecoin
 * (docs/filecoin.md §2): x^5 S-box, width t = arity + 1, R_F = 8, R_P from neptune's `Strength::Standard` table,
 * round constants from the Grain LFSR, Cauchy MDS matrix, `HashType::MerkleTree` domain tag
 * (2^arity − 1) in state[0], output state[1].
 *
 * Two evaluations are provided: `poseidonHash` (the plain textbook permutation, neptune's
 * `hash_correct`) and `poseidonHashOptimized` (neptune's `hash_optimized_dynamic`, which uses the
 * compressed round constants and sparse matrices that its legacy bellperson circuit also uses).
 * The optimized constants are exported for the circuit gadget; the tests check both hashes agree.
 */
import { FR_MODULUS as P, modInverse } from '../../field/layout.js';

/** neptune `SparseMatrix`: M'' with a dense first column (`wHat`) and first row (`vRest`), identity elsewhere. */
export interface SparseMatrix {
  /** First column of M'' (length t): result[0] = Σ wHat[i]·state[i]. */
  readonly wHat: readonly bigint[];
  /** First row of M'' without its first entry (length t − 1): result[j] = state[j] + vRest[j−1]·state[0]. */
  readonly vRest: readonly bigint[];
}

export interface PoseidonConstants {
  readonly arity: number;
  readonly width: number;
  readonly fullRounds: number;
  readonly partialRounds: number;
  /** 2^arity − 1 (`HashType::MerkleTree`). */
  readonly domainTag: bigint;
  /** (fullRounds + partialRounds) · width Grain constants, round-major. */
  readonly roundConstants: readonly bigint[];
  /** Cauchy MDS matrix, applied as a row-vector product: state' = state · mds. */
  readonly mds: readonly (readonly bigint[])[];
}

export interface PoseidonOptimizedConstants extends PoseidonConstants {
  /** fullRounds · width + partialRounds constants (neptune `compress_round_constants`, fully preprocessed). */
  readonly compressedRoundConstants: readonly bigint[];
  /** Dense matrix used after the last full round of the first half. */
  readonly preSparseMatrix: readonly (readonly bigint[])[];
  /** One sparse matrix per partial round. */
  readonly sparseMatrices: readonly SparseMatrix[];
  /** Inverse of the MDS matrix. */
  readonly mdsInverse: readonly (readonly bigint[])[];
}

/** Partial rounds for `Strength::Standard` (neptune round_numbers.rs); R_F is 8 for all of them. */
const PARTIAL_ROUNDS: ReadonlyMap<number, number> = new Map([
  [2, 55], [4, 56], [8, 57], [11, 57], [16, 59], [24, 59], [36, 60],
]);
const FULL_ROUNDS = 8;

/** The arities Filecoin uses: 2 (comm_r, 64 GiB top tree), 4, 8 (tree_r_last, comm_c), 11 (32/64 GiB columns). */
export const FILECOIN_ARITIES: readonly number[] = [2, 4, 8, 11];

const mulmod = (a: bigint, b: bigint): bigint => (a * b) % P;
const addmod = (a: bigint, b: bigint): bigint => {
  const s = a + b;
  return s >= P ? s - P : s;
};
const pow5 = (x: bigint): bigint => {
  const x2 = mulmod(x, x);
  return mulmod(mulmod(x2, x2), x);
};

/** Grain LFSR round constants (Poseidon reference generator; field = 1 prime, sbox = 1 x^α, n = 255). */
function grainRoundConstants(width: number, fullRounds: number, partialRounds: number): bigint[] {
  const fieldBits = 255;
  const bits: number[] = [];
  const push = (nbits: number, v: number): void => {
    for (let i = nbits - 1; i >= 0; i--) bits.push(Math.floor(v / 2 ** i) % 2);
  };
  // field = 1 (prime field), sbox = 1 (x^α with α > 0), n, t, R_F, R_P, then 30 ones.
  push(2, 1); push(4, 1); push(12, fieldBits); push(12, width); push(10, fullRounds); push(10, partialRounds);
  push(30, 2 ** 30 - 1);
  const state = Uint8Array.from(bits); // 80 bits, used as a ring buffer
  let head = 0;
  const step = (): number => {
    const at = (i: number): number => state[(head + i) % 80];
    const b = at(62) ^ at(51) ^ at(38) ^ at(23) ^ at(13) ^ at(0);
    state[head] = b;
    head = (head + 1) % 80;
    return b;
  };
  for (let i = 0; i < 160; i++) step();
  // Self-shrinking generator: a pair (b1, b2) yields b2 when b1 = 1, nothing otherwise.
  const nextBit = (): number => {
    for (;;) {
      const b1 = step();
      const b2 = step();
      if (b1 === 1) return b2;
    }
  };
  const count = (fullRounds + partialRounds) * width;
  const out: bigint[] = [];
  while (out.length < count) {
    let v = 0n;
    for (let i = 0; i < fieldBits; i++) v = (v << 1n) | BigInt(nextBit());
    if (v < P) out.push(v);
  }
  return out;
}

function cauchyMds(t: number): bigint[][] {
  // x_i = i, y_j = t + j, entry 1/(x_i + y_j): symmetric by construction.
  return Array.from({ length: t }, (_, i) =>
    Array.from({ length: t }, (_, j) => modInverse(BigInt(i + t + j), P)));
}

const plainCache = new Map<number, PoseidonConstants>();
const optimizedCache = new Map<number, PoseidonOptimizedConstants>();

function checkArity(arity: number): number {
  const rp = PARTIAL_ROUNDS.get(arity);
  if (rp === undefined) throw new RangeError(`unsupported Poseidon arity ${arity}`);
  return rp;
}

/** Round constants, MDS and round numbers for `arity` (computed once, then cached). */
export function poseidonConstants(arity: number): PoseidonConstants {
  let c = plainCache.get(arity);
  if (c === undefined) {
    const partialRounds = checkArity(arity);
    const width = arity + 1;
    c = Object.freeze({
      arity,
      width,
      fullRounds: FULL_ROUNDS,
      partialRounds,
      domainTag: (1n << BigInt(arity)) - 1n,
      roundConstants: Object.freeze(grainRoundConstants(width, FULL_ROUNDS, partialRounds)),
      mds: Object.freeze(cauchyMds(width).map((r) => Object.freeze(r))),
    });
    plainCache.set(arity, c);
  }
  return c;
}

// ---- small matrix toolkit (neptune matrix.rs semantics) ----

/** Row-vector product v·M (neptune `apply_matrix`). */
function applyMatrix(m: readonly (readonly bigint[])[], v: readonly bigint[]): bigint[] {
  const n = v.length;
  const out = new Array<bigint>(n).fill(0n);
  for (let i = 0; i < n; i++) {
    const vi = v[i];
    if (vi === 0n) continue;
    const row = m[i];
    for (let j = 0; j < n; j++) out[j] += row[j] * vi;
  }
  return out.map((x) => x % P);
}

function matMul(a: readonly (readonly bigint[])[], b: readonly (readonly bigint[])[]): bigint[][] {
  const n = a.length;
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => {
      let s = 0n;
      for (let k = 0; k < n; k++) s += a[i][k] * b[k][j];
      return s % P;
    }));
}

function minor00(m: readonly (readonly bigint[])[]): bigint[][] {
  return m.slice(1).map((row) => row.slice(1));
}

/** Gauss-Jordan inverse mod P (the inverse is unique, so the method does not matter). */
function invertMatrix(m: readonly (readonly bigint[])[]): bigint[][] {
  const n = m.length;
  const a = m.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1n : 0n))]);
  for (let col = 0; col < n; col++) {
    let piv = col;
    while (piv < n && a[piv][col] === 0n) piv++;
    if (piv === n) throw new RangeError('matrix is not invertible');
    [a[col], a[piv]] = [a[piv], a[col]];
    const inv = modInverse(a[col][col], P);
    a[col] = a[col].map((x) => mulmod(x, inv));
    for (let r = 0; r < n; r++) {
      if (r === col || a[r][col] === 0n) continue;
      const f = a[r][col];
      a[r] = a[r].map((x, k) => {
        const y = (x - f * a[col][k]) % P;
        return y < 0n ? y + P : y;
      });
    }
  }
  return a.map((row) => row.slice(n));
}

/** neptune `derive_mds_matrices` → (M', M'') with M = M'·M''. */
function primeAndDoublePrime(m: readonly (readonly bigint[])[]): { prime: bigint[][]; doublePrime: bigint[][] } {
  const n = m.length;
  const prime = m.map((row, i) =>
    i === 0 ? row.map((_, j) => (j === 0 ? 1n : 0n)) : row.map((x, j) => (j === 0 ? 0n : x)));
  const mHatInv = invertMatrix(minor00(m));
  const v = m[0].slice(1);
  const w = m.slice(1).map((row) => row[0]);
  const wHat = applyMatrix(mHatInv, w); // neptune 11 uses the row-vector product here
  const doublePrime = m.map((row, i) => {
    if (i === 0) return [row[0], ...v];
    const r = new Array<bigint>(n).fill(0n);
    r[0] = wHat[i - 1];
    r[i] = 1n;
    return r;
  });
  return { prime, doublePrime };
}

/** neptune 11 `factor_to_sparse_matrixes(m, n)`. */
function factorToSparse(m: readonly (readonly bigint[])[], n: number): { preSparse: bigint[][]; sparse: SparseMatrix[] } {
  let curr: bigint[][] = m.map((r) => [...r]);
  const all: bigint[][][] = [];
  for (let i = 0; i < n; i++) {
    const { prime, doublePrime } = primeAndDoublePrime(curr);
    all.push(doublePrime);
    curr = matMul(m, prime);
  }
  all.reverse();
  const sparse = all.map((dp) => Object.freeze({
    wHat: Object.freeze(dp.map((row) => row[0])),
    vRest: Object.freeze(dp[0].slice(1)),
  }));
  return { preSparse: curr, sparse };
}

/** neptune 11 `compress_round_constants` with every partial round preprocessed. */
function compressRoundConstants(c: PoseidonConstants, mInv: readonly (readonly bigint[])[]): bigint[] {
  const t = c.width;
  const rc = c.roundConstants;
  const keys = (r: number): bigint[] => rc.slice(r * t, (r + 1) * t);
  const half = c.fullRounds / 2;
  const res: bigint[] = [...keys(0)];
  for (let i = 0; i < half - 1; i++) res.push(...applyMatrix(mInv, keys(i + 1)));
  const finalRound = half + c.partialRounds;
  const partialKeys: bigint[] = [];
  let acc = keys(finalRound);
  for (let i = 0; i < c.partialRounds; i++) {
    const inverted = applyMatrix(mInv, acc);
    partialKeys.push(inverted[0]);
    inverted[0] = 0n;
    const prev = keys(finalRound - i - 1);
    acc = prev.map((x, k) => addmod(x, inverted[k]));
  }
  res.push(...applyMatrix(mInv, acc));
  for (let i = partialKeys.length - 1; i >= 0; i--) res.push(partialKeys[i]);
  for (let i = 1; i < half; i++) res.push(...applyMatrix(mInv, keys(i + finalRound)));
  return res;
}

/** The plain constants plus neptune's optimized forms (compressed constants, pre-sparse and sparse matrices). */
export function poseidonOptimizedConstants(arity: number): PoseidonOptimizedConstants {
  let o = optimizedCache.get(arity);
  if (o === undefined) {
    const c = poseidonConstants(arity);
    const mdsInverse = invertMatrix(c.mds);
    const { preSparse, sparse } = factorToSparse(c.mds, c.partialRounds);
    const compressed = compressRoundConstants(c, mdsInverse);
    if (compressed.length !== c.fullRounds * c.width + c.partialRounds) throw new Error('compressed constants: wrong count');
    o = Object.freeze({
      ...c,
      compressedRoundConstants: Object.freeze(compressed),
      preSparseMatrix: Object.freeze(preSparse.map((r) => Object.freeze(r))),
      sparseMatrices: Object.freeze(sparse),
      mdsInverse: Object.freeze(mdsInverse.map((r) => Object.freeze(r))),
    });
    optimizedCache.set(arity, o);
  }
  return o;
}

/**
 * The domain tag of `HashType::Custom(CType::Arbitrary(1))`: 1·2^40 (neptune hash_type.rs). storage-proofs-update
 * derives SnapDeals' phi, rho and challenge digests with it (`POSEIDON_CONSTANTS_GEN_RANDOMNESS`, arity 2); the
 * round constants and matrices are those of the arity, only state[0] differs.
 */
export const GEN_RANDOMNESS_DOMAIN_TAG = 1n << 40n;

function initialState(c: PoseidonConstants, inputs: readonly bigint[], domainTag: bigint = c.domainTag): bigint[] {
  const state = [domainTag];
  for (const x of inputs) {
    if (x < 0n || x >= P) throw new RangeError('Poseidon input is not a canonical Fr element');
    state.push(x);
  }
  return state;
}

/**
 * Poseidon with the MerkleTree domain tag; the arity is `inputs.length` (2, 4, 8 or 11 in Filecoin). `domainTag`
 * replaces the tag (e.g. GEN_RANDOMNESS_DOMAIN_TAG).
 */
export function poseidonHash(inputs: readonly bigint[], domainTag?: bigint): bigint {
  const c = poseidonConstants(inputs.length);
  let state = initialState(c, inputs, domainTag);
  const t = c.width;
  const half = c.fullRounds / 2;
  const rounds = c.fullRounds + c.partialRounds;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < t; i++) state[i] = addmod(state[i], c.roundConstants[r * t + i]);
    if (r < half || r >= half + c.partialRounds) state = state.map(pow5);
    else state[0] = pow5(state[0]);
    state = applyMatrix(c.mds, state);
  }
  return state[1];
}

/** neptune `hash_optimized_dynamic`: the same function through the compressed constants and sparse matrices. */
export function poseidonHashOptimized(inputs: readonly bigint[], domainTag?: bigint): bigint {
  const c = poseidonOptimizedConstants(inputs.length);
  let state = initialState(c, inputs, domainTag);
  const t = c.width;
  const half = c.fullRounds / 2;
  const crc = c.compressedRoundConstants;
  let offset = 0;
  let round = 0;
  const mix = (): void => {
    const sparseOffset = half - 1;
    if (round === sparseOffset) state = applyMatrix(c.preSparseMatrix, state);
    else if (round > sparseOffset && round < half + c.partialRounds) {
      const sm = c.sparseMatrices[round - sparseOffset - 1];
      let first = 0n;
      for (let i = 0; i < t; i++) first += sm.wHat[i] * state[i];
      const s0 = state[0];
      state = state.map((x, j) => (j === 0 ? first % P : (x + sm.vRest[j - 1] * s0) % P));
    } else state = applyMatrix(c.mds, state);
    round++;
  };
  const fullRound = (last: boolean): void => {
    for (let i = 0; i < t; i++) state[i] = last ? pow5(state[i]) : addmod(pow5(state[i]), crc[offset + i]);
    if (!last) offset += t;
    mix();
  };
  for (let i = 0; i < t; i++) state[i] = addmod(state[i], crc[i]);
  offset = t;
  for (let i = 0; i < half; i++) fullRound(false);
  for (let i = 0; i < c.partialRounds; i++) {
    state[0] = addmod(pow5(state[0]), crc[offset]);
    offset++;
    mix();
  }
  for (let i = 1; i < half; i++) fullRound(false);
  fullRound(true);
  if (offset !== crc.length) throw new Error('Poseidon: compressed constants not fully consumed');
  return state[1];
}
