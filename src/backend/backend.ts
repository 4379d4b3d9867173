/**
 * The prover's compute backend. Three implementations share this contract:
 *  - `native` (src/backend/native.ts): the C++ addon, multithreaded, off the JS thread;
 *  - `reference` (src/backend/reference.ts): TypeScript/bigint + @noble/curves, the slow twin
 *    every fast path is tested against.
 *  - `cuda` (src/backend/cuda.ts): the GPU addon, which also proves a whole partition on the device
 *    (`provePartition`).
 *
 * All buffers use the layout of src/field/layout.ts (Montgomery Fr/Fq limbs, affine points,
 * identity = all zero bytes). Lengths are validated at the boundary: a wrong length throws a
 * RangeError (or rejects the promise) and never crashes the process. The sparse matrices
 * (CsrMatrix) are the layout of src/field/csr.ts; the point codec (decodePoints / encodePoints) is
 * the contract of src/curve/codec.ts (PointCodec).
 */
import type { PointCodec, PointGroup } from '../curve/codec.js';
import type { CsrMatrix } from '../field/csr.js';
import type { Section } from './section.js';

export type { CsrMatrix };
export type { PointGroup };

export interface MsmOptions {
  /** Base k is paired with scalar scalarIndex[k] (a query's dense subset of the witness).
   *  Without it, base k pairs with scalar k and the counts must be equal. */
  scalarIndex?: Uint32Array;
}

/** Timings (milliseconds) of one query MSM split into its parts. */
export interface MsmTimings {
  classify: number;
  batchAdd: number;
  msm: number;
}

export interface MsmResult {
  /** Affine point in native layout (96 B for G1, 192 B for G2). */
  point: Uint8Array;
  timings: MsmTimings;
}

export interface Capabilities {
  backend: string;
  threads: number;
  cuda: boolean;
  gpus: { ordinal: number; name: string; memoryBytes: number }[];
  /** CPU instruction sets the host kernels use (e.g. "mulx/adx", "avx512-ifma"), when known. */
  cpuFeatures?: string[];
}

/** Everything a whole-partition proof needs (Backend.provePartition). `shape` identifies the
 *  circuit across proofs (a backend may keep its matrices resident, keyed by this object); the SRS
 *  sections likewise by their objects (Uint8Arrays, or PointSections: src/backend/section.ts). */
export interface PartitionInput {
  shape: {
    numConstraints: number;
    numInputs: number;
    numAux: number;
    a: CsrMatrix;
    b: CsrMatrix;
    c: CsrMatrix;
  };
  /** Domain 2^logN (≥ numConstraints + numInputs). */
  logN: number;
  /** Variable of each A-query / B-query base (the query's dense subset of the witness). */
  aIdx: Uint32Array;
  bIdx: Uint32Array;
  srs: { h: Section; l: Section; a: Section; bG1: Section; bG2: Section };
  /** (numInputs + numAux) Montgomery Fr, ONE first. */
  witness: Uint8Array;
}

/** The five MSM sums of a partition (affine, native layout) and per-phase milliseconds. */
export interface PartitionSums {
  h: Uint8Array;
  l: Uint8Array;
  a: Uint8Array;
  b1: Uint8Array;
  b2: Uint8Array;
  /** matvec (incl. the witness upload), ntt_h, msm_h, msm_l, msm_a, msm_b1, msm_b2 (without their
   *  batched additions), batch_add; release (freeing scratch) when the backend measures it. */
  timings: Record<'matvec' | 'ntt_h' | 'msm_h' | 'msm_l' | 'msm_a' | 'msm_b1' | 'msm_b2' | 'batch_add', number> & { release?: number };
}

export interface Backend extends PointCodec {
  readonly name: string;
  capabilities(): Capabilities;

  /** A buffer of `bytes` zeroed bytes in backend memory (native: outside the JS heap, 64-byte
   *  aligned). Free it with `release` when done; it is also freed when garbage collected. */
  alloc(bytes: number): Uint8Array;
  /** Frees a buffer from `alloc` now. Using it afterwards is an error (it is detached). */
  release(buf: Uint8Array): void;

  /** Σ scalar_k · base_k in G1. Scalars 0 are skipped; scalars equal to 1 are summed by batched
   *  affine addition; the rest go through Pippenger with signed digits. */
  msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult>;
  /** Same in G2. */
  msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult>;
  /** Σ bases[indices[k]] in G1 (the batched addition of the bases whose scalar is 1). */
  batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array>;

  /** Σ scalar_k · base_k for a few points (at most 256; the proof's assembly: r·δ, s·A, …),
   *  computed directly: no caching of the bases, no device upload. Returns one affine point.
   *  Optional: a backend without it leaves the assembly to the prover's @noble/curves path. */
  lincombG1?(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;
  /** Same in G2. */
  lincombG2?(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;

  /** In-place radix-2 NTT over Fr of a power-of-two length vector. `inverse` computes the inverse
   *  transform (with the 1/n factor); `coset` evaluates on (or interpolates from) the coset g·H with
   *  g = 7, as bellperson does. */
  ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void>;
  /** The Groth16 quotient: given evaluations a, b, c over H (length n = 2^k each, modified in place),
   *  computes the coefficients of h = (a·b − c)/Z: iNTT, coset NTT, pointwise (a·b − c)·Z(g)^-1,
   *  coset iNTT. Returns h in `a` (n coefficients; the last is zero for a satisfied system). */
  quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void>;

  /** out = M · w over Fr. `out` has M.rows elements; w has M.cols elements. */
  csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void>;

  /** [scalar_k]·base for every scalar: the fixed-base multiplications of a setup. Returns n affine
   *  points. */
  fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;
  fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;

  /** Bytes of backend memory one partition proof over a domain of `domainSize` (2^k) elements
   *  takes besides the witness: the a, b, c evaluations and the quotient's scratch and twiddle
   *  tables, as this backend's kernels size them. The engine's memory budget reserves it per
   *  partition in flight. */
  partitionWorkingSetBytes(domainSize: number): number;

  /** Optional: host bytes this backend holds for loaded parameters whose five query sections take
   *  `srsBytes` in the native layout (the engine's SRS cache reserves them in the memory budget).
   *  Without it, `srsBytes`: the sections live in host memory. The CUDA backend receives them
   *  streamed from the file onto the device and holds only the loader's staging buffers. */
  srsHostBytes?(srsBytes: number): number;

  /** Optional: a, b, c, the quotient and the five MSMs of one partition in one call, without the
   *  intermediate vectors leaving the backend (the CUDA backend keeps them on the device). The
   *  prover uses it when present; the result equals the step-by-step path's. */
  provePartition?(input: PartitionInput): Promise<PartitionSums>;
}
