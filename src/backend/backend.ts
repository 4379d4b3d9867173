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
import type { CircuitFootprint, DevicePlan } from './device-plan.js';
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
  /** A latency-critical proof (a WinningPoSt's): a backend whose device other proofs share lets it go before
   *  the ones waiting (the CUDA backend's device lock), so it waits at most for the proof running now. */
  urgent?: boolean;
}

/** The five MSM sums of a partition (affine, native layout) and per-phase milliseconds. */
export interface PartitionSums {
  h: Uint8Array;
  l: Uint8Array;
  a: Uint8Array;
  b1: Uint8Array;
  b2: Uint8Array;
  /** matvec (incl. the witness upload), ntt_h, msm_h, msm_l, msm_a, msm_b1, msm_b2 (without their
   *  batched additions), batch_add; release (freeing scratch) and device_wait (waiting for a device
   *  another proof holds) when the backend measures them. */
  timings: Record<'matvec' | 'ntt_h' | 'msm_h' | 'msm_l' | 'msm_a' | 'msm_b1' | 'msm_b2' | 'batch_add', number> & {
    release?: number;
    device_wait?: number;
    /** GPU ms the compute waited for streamed data (SRS sections, matrices) not hidden under compute. */
    stream_wait?: number;
    /** ms the call spent bringing the circuit's matrices to the device (its first proof, unless
     *  prepareCircuit did it ahead) and the SRS sections it did not hold yet. */
    circuit_upload?: number;
    /** ms of the call that the device's own timings do not cover: waiting for a thread of the pool native
     *  calls share (libuv's), the results' conversion. The prover's span then accounts for the whole call. */
    host_wait?: number;
    /** ms a step-by-step proof (the CPU backends) paused between its steps while a latency-critical proof
     *  (a WinningPoSt's) had the machine's threads (lanes.ts: the urgent lane). */
    urgent_wait?: number;
  };
  /** A few words per MSM phase on what its time went to, where the backend knows (the CUDA backend: window,
   *  Pippenger passes, batch-affine levels); shown beside the phase's span. */
  notes?: Partial<Record<'msm_h' | 'msm_l' | 'msm_a' | 'msm_b1' | 'msm_b2', string>>;
}

/** What Backend.devSetupInsecure needs: the circuit (as for provePartition: a backend may keep it
 *  resident, keyed by the `shape` object), the setup's constants, and where the five query sections
 *  go. INSECURE development parameters only (the constants come from a public seed). */
export interface DevSetupInput {
  shape: PartitionInput['shape'];
  /** Domain 2^logN (≥ numConstraints + numInputs). */
  logN: number;
  /** Variable of each A-query / B-query point (queryIndices). */
  aIdx: Uint32Array;
  bIdx: Uint32Array;
  /** τ, α, β, 1/γ, 1/δ, Z(τ)/δ: 6 Montgomery Fr (groth16/setup-constants.ts setupConstantsBytes). */
  constants: Uint8Array;
  /** The .params file: opened for writing (never truncated); the sections start at `offset`. */
  path: string;
  offset: number;
  /** Write back as it goes and fsync at the end. */
  fsync: boolean;
  /** G1 points per pipeline chunk (G2: half); default the backend's. Tests use small ones. */
  chunkPoints?: number;
  /** Writer threads (default the backend's). */
  writers?: number;
  /** Written while the call runs: [phase (0 preparing, 1 h, 2 l, 3 a, 4 b_g1, 5 b_g2, 6 ic, 7 fsync,
   *  8 done), points of the phase done, points of the phase, bytes written, bytes in all]. */
  progress?: Float64Array;
}

/** Milliseconds of one section of a device setup: wall clock (including waits for the disk) and the
 *  kernels' own time. */
export interface DevSetupSectionTimings {
  wall: number;
  gpu: number;
}

export interface DevSetupTimings {
  /** Circuit upload (0 when it was already resident). */
  upload: number;
  lagrange: number;
  evals: number;
  tables: number;
  h: DevSetupSectionTimings;
  l: DevSetupSectionTimings;
  a: DevSetupSectionTimings;
  b1: DevSetupSectionTimings;
  b2: DevSetupSectionTimings;
  ic: DevSetupSectionTimings;
  /** The device side waiting for a free staging buffer (the disk slower than the GPU). */
  writeWait: number;
  /** After the last chunk, waiting for the writers. */
  drain: number;
  fsync: number;
  /** Inside the backend, from the call to the last byte written (and synced). */
  total: number;
}

export interface DevSetupResult {
  /** numInputs IC points, native G1 layout (the caller writes the verifying key). */
  ic: Uint8Array;
  /** Points per section: h, l, a, b_g1, b_g2. */
  counts: [number, number, number, number, number];
  /** The file offset after the b_g2 section (the file's size). */
  endOffset: number;
  /** Columns of more than 256 terms (summed piecewise). */
  longColumns: number;
  /** Pinned host memory of the staging buffers. */
  stagingBytes: number;
  /** The device memory pool's high-water mark during the call (besides the resident circuit). */
  devicePeakBytes: number;
  timings: DevSetupTimings;
}

/** A device's memory as its driver reports it (cudaMemGetInfo). */
export interface DeviceMemory {
  totalBytes: number;
  freeBytes: number;
}

/** One circuit's device-memory plan on a GPU (src/backend/device-plan.ts), as the status shows it. */
export interface CircuitMemoryPlanStatus {
  /** The circuit: its id when the backend was told it, else "2^27 domain, 130278541 constraints". */
  circuit: string;
  /** One line: what stays on the device and what streams, e.g. "matrices resident; SRS h, l, a,
   *  b_g1, b_g2 streamed in 768 MiB chunks; quotient in place (2 buffers); MSM scratch 3.0 GiB". */
  summary: string;
  /** Device bytes this circuit keeps resident (its SRS sections and matrices there). */
  residentBytes: number;
  /** Bytes copied host → device per partition proof (the streamed SRS sections and matrices). */
  streamedBytesPerPartition: number;
  /** Pinned host bytes that hold the streamed sections. */
  hostBytes: number;
  /** Device bytes one partition proof is planned to take at its peak besides the resident ones. */
  workingBytes: number;
}

/** A GPU's memory plan: the budget plans work within, and each loaded circuit's plan. */
export interface DeviceMemoryPlanStatus {
  /** Bytes the plans may use: min(free memory when the backend started, [gpus] memory_limit) less a reserve. */
  budgetBytes: number;
  /** [gpus] memory_limit in bytes, when set. */
  limitBytes?: number;
  /** Device bytes resident now for every circuit (SRS, matrices) and the NTT twiddles. */
  residentBytes: number;
  circuits: CircuitMemoryPlanStatus[];
  /** The last partition proof: bytes copied host → device, the copy engine's busy ms, the GPU's ms. */
  lastPartition?: { streamedBytes: number; copyMs: number; gpuMs: number };
  /** Re-plans after an out-of-memory failure since the backend started. */
  replans: number;
}

export interface Backend extends PointCodec {
  readonly name: string;
  capabilities(): Capabilities;
  /** The GPU ordinal this backend drives, for backends bound to one device (the CUDA one; an engine
   *  drives several GPUs through one backend each). Absent for the CPU backends. */
  readonly device?: number;
  /** Optional: the device's memory now (total and free); undefined when it cannot be had. */
  deviceMemory?(): DeviceMemory | undefined;
  /** Optional: the device-memory plan (GPU backends): what is resident, what streams. */
  memoryPlan?(): DeviceMemoryPlanStatus | undefined;

  /** A buffer of `bytes` zeroed bytes in backend memory (native: outside the JS heap, 64-byte
   *  aligned). Free it with `release` when done; it is also freed when garbage collected. */
  alloc(bytes: number): Uint8Array;
  /** Optional: `alloc` off the event loop, for backends whose allocation takes long (the CUDA backend's
   *  pinned memory: ~1.6 s for a 32 GiB partition's 4.2 GB witness, which held every other request). */
  allocAsync?(bytes: number): Promise<Uint8Array>;
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

  /** The CPU development setup's scalars (h, l, ic, a, b: Montgomery Fr) computed natively; absent: the
   *  TypeScript twin (groth16/setup.ts setupScalarsTs) computes them. */
  readonly devSetupScalars?: (input: SetupScalarsInput) => Promise<SetupScalars>;

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

  /** Optional (GPU backends): the device-memory plan of a circuit on this backend's device
   *  (src/backend/device-plan.ts), made once per `key` (the circuit's shape object) and kept while
   *  the circuit is loaded: what stays resident, what streams from pinned host memory. Throws an
   *  Error naming the memory needed and the memory available when the circuit cannot fit at all. */
  planCircuit?(key: object, footprint: CircuitFootprint, label?: string): DevicePlan;

  /** Optional: a, b, c, the quotient and the five MSMs of one partition in one call, without the
   *  intermediate vectors leaving the backend (the CUDA backend keeps them on the device). The
   *  prover uses it when present; the result equals the step-by-step path's. */
  provePartition?(input: PartitionInput): Promise<PartitionSums>;

  /** Optional: brings a circuit to the device ahead of its first proof, as provePartition would (the CUDA
   *  backend's matrices: seconds for a 32 GiB circuit, which were a hole in that proof's span). The SRS
   *  cache calls it when it loads the circuit's parameters onto this device (PreloadSRS included). */
  prepareCircuit?(input: Pick<PartitionInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'>): Promise<void>;

  /** Optional: the INSECURE development setup computed on the backend's device (the CUDA backend),
   *  its five query sections written to `input.path` (groth16/setup-gpu.ts drives it and writes the
   *  verifying key). The same bytes as the CPU setup (groth16/setup.ts) for the same constants. */
  devSetupInsecure?(input: DevSetupInput): Promise<DevSetupResult>;
}

/** What Backend.devSetupScalars needs: the shape, the domain size, the A and B query indices, the constants (τ, α,
 *  β, 1/γ, 1/δ, Z(τ)/δ as setup-constants.ts setupConstantsBytes lays them out). */
export interface SetupScalarsInput {
  /** The circuit's counts and matrices (an r1cs CircuitShape). */
  shape: { numConstraints: number; numInputs: number; numAux: number; a: CsrMatrix; b: CsrMatrix; c: CsrMatrix };
  n: number;
  qa: Uint32Array;
  qb: Uint32Array;
  consts: Uint8Array;
}

/** The scalars of the fixed-base multiplications of a setup, Montgomery Fr: h (n − 1), l (aux), ic (inputs), a, b. */
export interface SetupScalars {
  h: Uint8Array;
  l: Uint8Array;
  ic: Uint8Array;
  a: Uint8Array;
  b: Uint8Array;
}
