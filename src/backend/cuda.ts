/**
 * The CUDA backend: the addon `build/cuda/kiln_cuda.node` (native/cuda/, built by
 * `npm run build:cuda` with nvcc; the CPU addon never needs CUDA). It implements the same Backend
 * contract as the CPU addon and is tested against it (test/gpu/).
 *
 *  - Capability query: `cudaCapabilities()` never throws; with no GPU or no driver (a statically
 *    linked cudart reports cudaErrorInsufficientDriver, 35) it answers `cuda: false` and why.
 *  - `createGpuBackend()` returns a CudaBackend when a GPU is present and the CPU backend otherwise.
 *  - SRS residency: the bases of an MSM are uploaded on first use and kept on the device, keyed by
 *    the Uint8Array object (the parameter vectors of a circuit are the same objects across proofs,
 *    and are treated as immutable once used). `preload` uploads ahead of time; `evict` frees.
 *  - Parameter files of any size: the backend is the native loader's DeviceTarget
 *    (src/groth16/params-native.ts loadParams): `createResident` makes an empty device vector
 *    (createBases), `writeResident` fills it from a pinned staging buffer (writeBases, on a copy
 *    stream), so each section goes from the file to the device through two staging buffers and the
 *    host keeps no copy. Sections in host chunks (PointSections) are uploaded chunk by chunk on
 *    first use (`preloadSection`), keyed by the section object.
 *  - `alloc` returns pinned host memory (cudaHostAlloc): uploads from it run at ~55 GB/s against
 *    ~7 GB/s from pageable memory.
 *  - Per-phase GPU timings (CUDA events) come back in MsmResult.timings, and for the Fr operations
 *    in `lastTimings`.
 *  - Whole partitions (`provePartition`): the circuit's matrices and query indices are uploaded once
 *    per shape object and stay resident with the SRS; a proof uploads the witness (pinned when it
 *    came from `alloc`) on a copy stream before it takes the device, so with two prover lanes the
 *    next proof's upload overlaps the current proof's compute, and gets back the five MSM sums:
 *    a, b, c, the quotient h and every MSM stay on the device. The prover (src/groth16/prover.ts) uses it whenever the backend offers it.
 *  - INSECURE development setup (`devSetupInsecure`, native/cuda/setup.cu; groth16/setup-gpu.ts drives
 *    it): over the same resident circuit, the five query sections computed, encoded and streamed to the
 *    .params file from the device.
 *  - fixedBaseMul (the CPU setup), lincomb (the proof's assembly) and the parameter files' point codec
 *    run on the CPU backend.
 *  - Device-memory plans (src/backend/device-plan.ts): a circuit is planned when its
 *    parameters load (`planCircuit`, from the SRS cache and the loader) within the free memory found at
 *    start, capped by `memoryLimit` ([gpus] memory_limit, or $KILN_GPU_MEMORY_LIMIT read at the edges); the sections the plan streams are read
 *    into pinned host memory (`adoptStreamed`) and become host bases (`hostBases`), a circuit whose
 *    matrices stream is uploaded with `{streamed: true}`, and provePartition passes the plan's quotient
 *    buffers, MSM scratch, staging slots and witness prefetch to the addon; an out-of-memory proof is
 *    retried once with `shrinkPlan`'s smaller one. `memoryPlan()` is the status.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  Backend,
  Capabilities,
  CsrMatrix,
  DeviceMemory,
  DevSetupInput,
  DevSetupResult,
  DevSetupTimings,
  MsmOptions,
  MsmResult,
  PartitionInput,
  PartitionSums,
  PointGroup,
} from './backend.js';
import { G1, G2, G1_BYTES, G2_BYTES, writeG1, writeG2 } from '../field/layout.js';
import { NativeBackend, nativeAvailable } from './native.js';
import { STAGING_BYTES, isPointSection, pointBytes, type DeviceTarget, type PointSection, type ResidentMsm, type Section } from './section.js';
import {
  deviceBudget,
  footprintOf,
  planDeviceMemory,
  shrinkPlan,
  type CircuitFootprint,
  type DevicePlan,
} from './device-plan.js';
import type { DeviceMemoryPlanStatus } from './backend.js';
import { fmtBytes } from '../util/bytes.js';

export interface GpuInfo {
  ordinal: number;
  name: string;
  memoryBytes: number;
  computeCapability: string;
  multiprocessors: number;
}

export interface CudaProbe {
  cuda: boolean;
  gpus: GpuInfo[];
  runtime: string;
  /** Why there is no usable GPU (absent when cuda is true). */
  error?: string;
}

/** GPU milliseconds of Pippenger's parts (CUDA events): digits + sort, bucket accumulation, chunk
 *  trees, window sums (incl. the copy of the windows to the host). */
export interface PippengerTimings {
  sort: number;
  accumulate: number;
  buckets: number;
  windows: number;
  /** Batch-affine accumulation (KILN_MSM_ACC=4): the most levels of a pass (0: none ran), the passes that took
   *  them and their slices (more slices than passes: the levels' memory came in parts). */
  affineLevels: number;
  affinePasses: number;
  affineSlices: number;
  /** Pippenger passes in all (a pass: one sort and accumulation of some windows' digits). Absent from addons built
   *  before it. */
  passes?: number;
}

/** One MSM of a partition in a few words, for its span: the window, the full-width scalars, the Pippenger passes
 *  and whether the batch-affine levels took them (and in how many slices), e.g. "c = 18, 41.9 M others,
 *  2 passes, batch-affine 5 levels in 2 passes (6 slices)"; "0/1 scalars only" without Pippenger. */
export function msmNote(t: PartitionMsmTimings): string {
  if (!t.window) return `0/1 scalars only (${fmtCount(t.ones)} ones)`;
  const p = t.pippenger;
  const parts = [`c = ${t.window}`, `${fmtCount(t.others)} others`];
  if (p.passes !== undefined) parts.push(`${p.passes} pass${p.passes === 1 ? '' : 'es'}`);
  parts.push(
    p.affineLevels > 0
      ? `batch-affine ${p.affineLevels} levels in ${p.affinePasses} pass${p.affinePasses === 1 ? '' : 'es'}${p.affineSlices > p.affinePasses ? ` (${p.affineSlices} slices)` : ''}`
      : 'XYZZ buckets',
  );
  return parts.join(', ');
}
const fmtCount = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : String(n));

export interface CudaMsmResult extends MsmResult {
  timings: MsmResult['timings'] & { pippenger: PippengerTimings };
  /** Pippenger window width (0 when every scalar was 0 or 1). */
  window: number;
  ones: number;
  others: number;
}

/** An opaque handle to bases resident on a device. */
export type DeviceBases = { readonly __deviceBases: unique symbol };
/** An opaque handle to a circuit (CSR matrices and query indices) resident on a device. */
export type DeviceCircuit = { readonly __deviceCircuit: unique symbol };

/** What one MSM of a partition reports (GPU milliseconds, CUDA events). */
export type PartitionMsmTimings = CudaMsmResult['timings'] & { window: number; ones: number; others: number };

/** GPU milliseconds (CUDA events) of a whole-partition proof on the device. */
export interface PartitionTimings {
  /** Host wall ms waiting for the device while another proof held it (two lanes share one GPU). */
  wait: number;
  /** The witness copy's own duration (copy stream, outside the device lock: it may overlap another
   *  proof's compute), and what the compute stream still waited for it. */
  copy: number;
  upload: number;
  matvec: number;
  ntt: number;
  msmH: number;
  msmL: number;
  msmA: number;
  msmB1: number;
  msmB2: number;
  total: number;
  /** Streamed data (SRS sections and matrices from host memory): bytes copied, the copy stream's busy
   *  ms, the ms the compute stream waited for a copy. Absent from addons built before streaming. */
  streamedBytes?: number;
  streamCopy?: number;
  streamWait?: number;
  quotientBuffers?: number;
  msm: { h: PartitionMsmTimings; l: PartitionMsmTimings; a: PartitionMsmTimings; b1: PartitionMsmTimings; b2: PartitionMsmTimings };
}

export interface DeviceCircuitDesc {
  numConstraints: number;
  numInputs: number;
  numAux: number;
  logN: number;
  a: CsrMatrix;
  b: CsrMatrix;
  c: CsrMatrix;
  aIdx: Uint32Array;
  bIdx: Uint32Array;
}

/** provePartition's memory plan (native/cuda/partition.hpp PartitionPlan; absent: the whole-GPU one). */
export interface AddonPartitionPlan {
  quotientBuffers?: 2 | 3 | 4;
  /** 0: as the MSMs need. */
  msmScratchBytes?: number;
  slotBytes?: number;
  slots?: number;
  /** The streamed matrices' two slots (default: slotBytes). */
  matrixSlotBytes?: number;
  prefetchWitness?: boolean;
  /** Take the device before the ordinary calls waiting for it (native/cuda/ctx.cuh DeviceLock); an addon
   *  built before it ignores the field. */
  urgent?: boolean;
}

/** A synthetic partition for benchPartition: sizes, terms per row, and the witness's shares of 0 and
 *  1 (the rest full-width). */
export interface PartitionSpec {
  logN: number;
  numConstraints: number;
  numInputs: number;
  numAux: number;
  na: number;
  nb: number;
  nnzA: number;
  nnzB: number;
  nnzC: number;
  fracZero: number;
  fracOne: number;
  iterations: number;
  /** > 1: the h section with that many precomputed copies (precomputeBases, the cost model's window). */
  preH?: number;
  /** The proofs' plan (absent: the whole-GPU one): quotient buffers 2, 3 or 4 and the MSM scratch budget in bytes
   *  (0: as needed), so that a smaller card runs a shape the whole-GPU plan does not fit. */
  quotientBuffers?: 2 | 3 | 4;
  msmScratchBytes?: number;
}

/** The raw functions of build/cuda/kiln_cuda.node (see native/cuda/addon.cpp). */
/** What precomputeBases made: the copies, the window and windows of buckets MSMs over them use, the bytes the
 *  bases now take on the device and the time it took. */
export interface BasesPrecomputed {
  copies: number;
  window: number;
  windows: number;
  bytes: number;
  ms: number;
}

export interface CudaAddon {
  version(): string;
  probe(): CudaProbe;
  /** The device's free and total memory (cudaMemGetInfo); absent from addons built before it. */
  memInfo?(device: number): { freeBytes: number; totalBytes: number };
  uploadBases(device: number, curve: 1 | 2, bases: Uint8Array): DeviceBases;
  freeBases(handle: DeviceBases): void;
  /** `count` device points, contents undefined until writeBases fills them (the chunked SRS upload). */
  createBases(device: number, curve: 1 | 2, count: number): DeviceBases;
  /** Copies whole points (native layout; from pinned memory for full speed) to points
   *  [first, first + n) of a createBases vector, on the device's copy stream (not under the device
   *  lock, so a proof running on the device does not hold it up). */
  writeBases(handle: DeviceBases, first: number, bytes: Uint8Array): Promise<void>;
  /** Bases that stay in host memory (chunks from alloc, pinned while the handle lives): MSMs and
   *  proofs stream them to the device in chunks. Absent from addons built before it. */
  hostBases?(device: number, curve: 1 | 2, chunks: Uint8Array[]): DeviceBases;
  /** The standalone msm's memory plan: scratch budget (0: as needed), staging slot bytes and slots
   *  (0: unchanged). */
  setMemoryPlan?(device: number, msmBudgetBytes: number, slotBytes: number, slots: number): void;
  /** Waits for the device and returns its pool's cached memory to the driver. */
  trimPool?(device: number): void;
  circuitInfo?(handle: DeviceCircuit): { deviceBytes: number; hostBytes: number; streamed: boolean };
  msm(handle: DeviceBases, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<CudaMsmResult>;
  batchAddG1(handle: DeviceBases, indices: Uint32Array): Promise<Uint8Array>;
  ntt(device: number, values: Uint8Array, inverse: boolean, coset: boolean): Promise<number>;
  quotient(device: number, a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<number>;
  csrMatVec(
    device: number,
    rows: number,
    cols: number,
    rowPtr: Uint32Array,
    colIdx: Uint32Array,
    coeffIdx: Uint32Array,
    coeffs: Uint8Array,
    w: Uint8Array,
    out: Uint8Array,
  ): Promise<number>;
  alloc(bytes: number): ArrayBuffer;
  /** alloc on a thread of the pool (cudaHostAlloc of gigabytes takes seconds); older builds lack it. */
  allocAsync?(bytes: number): Promise<ArrayBuffer>;
  /** Warms device `device` for proofs of domain 2^logN (native/cuda/warm.hpp): the NTT's twiddles made and
   *  the stream-ordered pool grown by `vectors` domain vectors (what a first proof would otherwise pay in its
   *  ntt_h); older builds lack it. */
  warmDevice?(device: number, logN: number, vectors: number): Promise<void>;
  /** true when the buffer came from alloc (it is freed and detached). */
  release(buf: ArrayBuffer | ArrayBufferView): boolean;
  /** Precomputed multiples of resident bases (up to `copies` copies, copy j = 2^(j·window·windows)·P, made
   *  on the device) that every later msm over the handle uses: `windows` windows of buckets instead of
   *  ⌈256/window⌉. window absent or 0: the cost model's. The handle then holds copies × the bases' bytes;
   *  provePartition reads copy 0. Refused for host bases, bases already precomputed and copies × n ≥ 2^31.
   *  Absent from addons built before it. */
  precomputeBases?(handle: DeviceBases, copies: number, window?: number): Promise<BasesPrecomputed>;
  /** A/B: the inverse NTTs' scalings fused into their last stage group (1) or a pass of their own (0);
   *  process-wide, read per call; returns the previous setting. Absent from addons built before it. */
  setNttFused?(fused: 0 | 1): number;
  /** preCopies > 1: the generated bases precomputed first (precomputeBases; preWindow 0: the model's). */
  benchMsm(
    device: number,
    curve: 1 | 2,
    logN: number,
    generator: Uint8Array,
    iterations: number,
    preCopies?: number,
    preWindow?: number,
  ): Promise<{ medianMs: number; minMs: number; window: number; timings: MsmResult['timings']; point: Uint8Array; pre?: BasesPrecomputed }>;
  benchNtt(device: number, logN: number, iterations: number): Promise<{ medianMs: number; minMs: number }>;
  /** The quotient on device buffers (random values), CUDA events. Absent from addons built before it. */
  benchQuotient?(device: number, logN: number, iterations: number): Promise<{ medianMs: number; minMs: number }>;
  /** Diagnostics: force the Pippenger window width (4 … 24; 0 = automatic), process-wide. */
  setMsmWindow(c: number): void;
  /** Diagnostics: threads per block of the MSM accumulation kernels (multiple of 32, 32 … 1024). */
  setMsmThreads(t: number): void;
  /** Diagnostics: fewest pairs per thread of a batch-affine level (a power of two, 8 … 4096; 128 by default),
   *  process-wide. Absent from addons built before it. */
  setMsmAffinePairs?(n: number): void;
  /** Diagnostics: the most scalars of one Pippenger batch (0: the cost model's), process-wide. Absent from
   *  addons built before it. */
  setMsmBatch?(n: number): void;
  /** Diagnostics: the MSM accumulation kernel, 0, 1 (the default), 2 or 3, process-wide, read per call. Absent
   *  from addons built before it. */
  setMsmAcc?(variant: number): void;
  /** `streamed`: the matrices stay in the caller's arrays (page-locked in place; they must outlive
   *  the handle) and each proof streams their rows. */
  uploadCircuit(device: number, desc: DeviceCircuitDesc, opts?: { streamed?: boolean }): Promise<DeviceCircuit>;
  freeCircuit(handle: DeviceCircuit): void;
  /** srs: [h, l, a, b_g1, b_g2] handles. */
  provePartition(
    circuit: DeviceCircuit,
    srs: DeviceBases[],
    witness: Uint8Array,
    plan?: AddonPartitionPlan,
  ): Promise<{ h: Uint8Array; l: Uint8Array; a: Uint8Array; b1: Uint8Array; b2: Uint8Array; timings: PartitionTimings }>;
  benchPartition(
    device: number,
    spec: PartitionSpec,
    g1: Uint8Array,
    g2: Uint8Array,
  ): Promise<{
    runs: PartitionTimings[];
    generateMs: number;
    srsBytes: number;
    circuitBytes: number;
    peakPoolBytes: number;
    preH?: { copies: number; window: number; ms: number };
  }>;
  /** INSECURE development setup over a resident circuit (native/cuda/setup.cu); absent from addons
   *  built before it. */
  devSetupInsecure?(circuit: DeviceCircuit, opts: DevSetupAddonOptions): Promise<DevSetupAddonResult>;
}

/** The options of the addon's devSetupInsecure (DevSetupInput without the circuit, plus the generators). */
export type DevSetupAddonOptions = Omit<DevSetupInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'> & { g1: Uint8Array; g2: Uint8Array };

export interface DevSetupAddonResult {
  ic: Uint8Array;
  counts: number[];
  endOffset: number;
  longColumns: number;
  stagingBytes: number;
  devicePeakBytes: number;
  /** DevSetupTimings without the circuit upload (the backend times that itself). */
  timings: Omit<DevSetupTimings, 'upload'>;
}

/** Where the addon is looked for: build/cuda/ (npm run build:cuda copies it there), then the build
 *  folder native/cuda/.build/ (which survives `node-gyp rebuild`, which deletes build/). */
const ADDON_CANDIDATES = [join('build', 'cuda', 'kiln_cuda.node'), join('native', 'cuda', '.build', 'kiln_cuda.node')];

function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'native', 'cuda'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

let cached: CudaAddon | undefined;
let loadError: string | undefined;

/** Loads the CUDA addon once; throws an Error saying how to build it when it is missing. `path` names another
 *  build (e.g. a variant for an A/B comparison: the edges' Tuning.addonPath, from $KILN_CUDA_ADDON). */
export function loadCuda(path?: string): CudaAddon {
  if (cached && path === undefined) return cached;
  const root = packageRoot();
  const file =
    path ?? (root ? ADDON_CANDIDATES.map((c) => join(root, c)).find((f) => existsSync(f)) ?? join(root, ADDON_CANDIDATES[0]) : undefined);
  if (!file || !existsSync(file)) {
    throw new Error(
      `kiln CUDA addon not found${file ? ` at ${file}` : ''}: build it with \`npm run build:cuda\` (needs nvcc)`,
    );
  }
  const addon = createRequire(import.meta.url)(file) as CudaAddon;
  if (path === undefined) cached = addon;
  return addon;
}

/** What the machine offers, never throwing: no addon, no driver and no GPU all give cuda: false. `addonPath`:
 *  another build of the addon (loadCuda). */
export function cudaCapabilities(addonPath?: string): CudaProbe {
  try {
    return loadCuda(addonPath).probe();
  } catch (e) {
    loadError = (e as Error).message;
    return { cuda: false, gpus: [], runtime: '', error: loadError };
  }
}

export interface CudaBackendOptions {
  /** CUDA device ordinal (default 0). */
  device?: number;
  /** An already loaded addon (tests). */
  addon?: CudaAddon;
  /** Another build of the addon to load when `addon` is not given (loadCuda; $KILN_CUDA_ADDON at the edges). */
  addonPath?: string;
  /** The CPU backend used for fixed-base multiplications (default: a NativeBackend). */
  cpu?: Backend;
  /** Offer the INSECURE development setup on the GPU (devSetupInsecure) when the addon has it.
   *  Default true; false (KILN_DEV_SETUP=cpu at the edges) has development parameters made on the CPU. */
  devSetup?: boolean;
  /** [gpus] memory_limit (or $KILN_GPU_MEMORY_LIMIT, read at the edges): the most device memory this backend's
   *  plans use, in bytes or as a fraction of the card (0 < fraction ≤ 1). Default: no cap beyond the free
   *  memory. */
  memoryLimit?: MemoryLimit;
  /** Diagnostics ($KILN_PLAN_MATRICES=streamed at the edges): 'streamed' makes every plan stream the matrices
   *  even where they would fit (their room goes to the MSMs). Ignored with `planner`. */
  planMatrices?: 'streamed';
  /** Diagnostics ($KILN_GPU_DETAIL=1 at the edges): each partition proof writes one `kiln gpu-detail` JSON line
   *  (the MSM splits and the plan) on stderr. */
  gpuDetail?: boolean;
  /** Diagnostics ($KILN_MSM_BATCH at the edges): the most scalars of one Pippenger batch, set in the addon
   *  (setMsmBatch, process-wide) when the backend starts. */
  msmBatch?: number;
  /** Diagnostics ($KILN_MSM_ACC at the edges): the MSM accumulation kernel, 0, 1, 2, 3, 4 or 5 (the default), set in
   *  the addon (setMsmAcc, process-wide) when the backend starts. */
  msmAcc?: number;
  /** A/B ($KILN_NTT_FUSED at the edges): the inverse NTTs' scalings fused into their last stage group (1) or
   *  a pass of their own (0), set in the addon (setNttFused, process-wide) when the backend starts. */
  nttFused?: 0 | 1;
  /** ($KILN_PRECOMPUTE_H=1 at the edges): the plans keep precomputed copies of a resident h in the memory they
   *  have to spare (DevicePlan.hCopies). Default off until measured end to end. */
  precomputeH?: boolean;
  /** Makes the circuits' plans instead of planDeviceMemory (tests force streaming this way on a big
   *  GPU). */
  planner?: (fp: CircuitFootprint, budgetBytes: number) => DevicePlan;
}

/** A cap on the device memory a backend plans with: bytes, or a fraction of the card. */
export type MemoryLimit = { bytes: number } | { fraction: number };

const FR = 32;

export class CudaBackend implements Backend, DeviceTarget, ResidentMsm {
  readonly name = 'cuda';
  readonly addon: CudaAddon;
  readonly device: number;
  /** GPU milliseconds (CUDA events) of the last Fr operation of each kind. */
  readonly lastTimings: { ntt?: number; quotient?: number; csrMatVec?: number } = {};
  private readonly resident = new WeakMap<object, { g1?: DeviceBases; g2?: DeviceBases }>();
  private readonly handles = new Set<DeviceBases>();
  private readonly circuits = new WeakMap<object, Promise<DeviceCircuit>>();
  private readonly circuitHandles = new Set<DeviceCircuit>();
  private cpu?: Backend;
  /** The INSECURE development setup on this GPU (Backend.devSetupInsecure); undefined when the
   *  addon was built without it. */
  readonly devSetupInsecure?: (input: DevSetupInput) => Promise<DevSetupResult>;
  /** The device-memory plan of each circuit loaded here (keyed by its shape object). */
  private readonly plans = new Map<object, { fp: CircuitFootprint; plan: DevicePlan; label: string }>();
  /** Host sections this backend streams (their chunks pinned) instead of uploading them. */
  private readonly streamedSections = new WeakSet<object>();
  /** The h sections whose precomputed copies were made (or tried) here, keyed by device handle. */
  private readonly precomputed = new WeakMap<object, Promise<void>>();
  /** Circuits uploaded with streamed matrices keep their shape (whose arrays the device reads) alive. */
  private readonly keepShapes = new Map<DeviceCircuit, object>();
  private readonly limit?: MemoryLimit;
  private readonly planner: (fp: CircuitFootprint, budgetBytes: number) => DevicePlan;
  /** CudaBackendOptions.gpuDetail: a `kiln gpu-detail` line per partition proof. */
  private readonly gpuDetail: boolean;
  /** The device's memory when this backend started (the plans' budget). */
  private readonly memAtStart?: { freeBytes: number; totalBytes: number };
  private replans = 0;
  private lastPartition?: { streamedBytes: number; copyMs: number; gpuMs: number };

  constructor(opts: CudaBackendOptions = {}) {
    this.addon = opts.addon ?? loadCuda(opts.addonPath);
    this.device = opts.device ?? 0;
    const p = this.addon.probe();
    if (!p.cuda) throw new Error(`CUDA backend unavailable: ${p.error ?? 'no GPU'}`);
    if (!Number.isInteger(this.device) || this.device < 0 || this.device >= p.gpus.length) {
      throw new RangeError(`CUDA device ${this.device} out of range (${p.gpus.length} GPUs)`);
    }
    this.cpu = opts.cpu;
    this.limit = opts.memoryLimit;
    const forceMatrices = opts.planMatrices;
    if (forceMatrices !== undefined && forceMatrices !== 'streamed') throw new RangeError(`planMatrices ${String(forceMatrices)}: only 'streamed' (or undefined)`);
    const precomputeH = opts.precomputeH === true;
    this.planner = opts.planner ?? ((fp, budget) => planDeviceMemory(fp, budget, { ...(forceMatrices === 'streamed' ? { matrices: 'streamed' as const } : {}), precomputeH }));
    this.gpuDetail = opts.gpuDetail === true;
    // the MSM diagnostics live in the addon, process-wide (read per call there)
    const setting = (name: 'setMsmBatch' | 'setMsmAcc' | 'setNttFused', value: number | undefined): void => {
      if (value === undefined) return;
      const set = this.addon[name] as ((v: number) => unknown) | undefined;
      if (typeof set !== 'function') throw new Error(`this build of the CUDA addon has no ${name}: rebuild it (npm run build:cuda)`);
      set.call(this.addon, value);
    };
    setting('setMsmBatch', opts.msmBatch);
    setting('setMsmAcc', opts.msmAcc);
    setting('setNttFused', opts.nttFused);
    if (typeof this.addon.memInfo === 'function') {
      try {
        this.memAtStart = this.addon.memInfo(this.device);
      } catch {
        // a device that cannot answer now: plans then use the card's size (capped by the limit)
      }
    }
    const devSetup = opts.devSetup ?? true;
    if (devSetup && typeof this.addon.devSetupInsecure === 'function') this.devSetupInsecure = (input) => this.runDevSetup(input);
  }

  capabilities(): Capabilities {
    const p = this.addon.probe();
    return {
      backend: 'cuda',
      threads: 1,
      cuda: p.cuda,
      // the GPU this backend drives (the engine sizes its prover lanes by this list)
      gpus: p.gpus.filter((g) => g.ordinal === this.device).map((g) => ({ ordinal: g.ordinal, name: g.name, memoryBytes: g.memoryBytes })),
    };
  }

  /** The device's memory now (the daemon's GetStatus); undefined when the addon predates memInfo or
   *  the device cannot answer (a faulted context: the engine's health probe says more). */
  deviceMemory(): DeviceMemory | undefined {
    if (typeof this.addon.memInfo !== 'function') return undefined;
    try {
      const m = this.addon.memInfo(this.device);
      return { totalBytes: m.totalBytes, freeBytes: m.freeBytes };
    } catch {
      return undefined;
    }
  }

  /** The bytes this GPU's plans may use (Backend.memoryPlan's budgetBytes). */
  private budget(): { budgetBytes: number; limitBytes?: number } {
    const total = this.memAtStart?.totalBytes ?? this.addon.probe().gpus.find((g) => g.ordinal === this.device)?.memoryBytes ?? 0;
    return deviceBudget(this.memAtStart?.freeBytes ?? total, total, this.limit);
  }

  /**
   * Backend.planCircuit: the plan of a circuit on this GPU (device-plan.ts), within the budget less
   * what the other loaded circuits keep resident. Made once per circuit; a circuit that cannot fit
   * even with everything streamed is refused here, with the memory it needs and the memory there is.
   */
  planCircuit(key: object, fp: CircuitFootprint, label?: string): DevicePlan {
    const known = this.plans.get(key);
    if (known) return known.plan;
    const { budgetBytes, limitBytes } = this.budget();
    let others = 0;
    let twOthers = 0;
    for (const [k, e] of this.plans) {
      if (k === key) continue;
      const tw = 2 ** (e.fp.logN - 1) * FR;
      others += e.plan.residentBytes - tw;
      twOthers = Math.max(twOthers, tw);
    }
    const twMine = 2 ** (fp.logN - 1) * FR;
    const avail = Math.max(0, budgetBytes - others - Math.max(0, twOthers - twMine));
    const plan = this.planner(fp, avail);
    const name = label ?? `2^${fp.logN} domain, ${fp.numVars} variables`;
    if (!plan.feasible) {
      const gpu = this.addon.probe().gpus.find((g) => g.ordinal === this.device);
      throw new Error(
        `GPU ${this.device}${gpu ? ` (${gpu.name})` : ''} is too small for circuit ${name}: it needs at least ${fmtBytes(plan.neededBytes)} of device memory ` +
          `(everything that can stream streamed), ${fmtBytes(avail)} is available` +
          `${limitBytes !== undefined ? ` under [gpus] memory_limit ${fmtBytes(limitBytes)}` : ` of ${fmtBytes(this.memAtStart?.freeBytes ?? 0)} free`}` +
          `${others > 0 ? `, other circuits keep ${fmtBytes(others)} resident` : ''}`,
      );
    }
    this.plans.set(key, { fp, plan, label: name });
    this.addon.setMemoryPlan?.(this.device, plan.msmScratchBytes, plan.slotBytes, plan.slots);
    return plan;
  }

  /** Backend.memoryPlan: the budget and every loaded circuit's plan, for the status. */
  memoryPlan(): DeviceMemoryPlanStatus {
    const { budgetBytes, limitBytes } = this.budget();
    let resident = 0;
    let tw = 0;
    for (const e of this.plans.values()) {
      const t = 2 ** (e.fp.logN - 1) * FR;
      resident += e.plan.residentBytes - t;
      tw = Math.max(tw, t);
    }
    return {
      budgetBytes,
      limitBytes,
      residentBytes: resident + tw,
      circuits: [...this.plans.values()].map((e) => ({
        circuit: e.label,
        summary: e.plan.summary,
        residentBytes: e.plan.residentBytes,
        streamedBytesPerPartition: e.plan.streamedBytesPerPartition,
        hostBytes: e.plan.hostBytes,
        workingBytes: e.plan.workingBytes,
      })),
      lastPartition: this.lastPartition,
      replans: this.replans,
    };
  }

  /** The sections' placement of a planned circuit (the native loader asks before reading them). */
  sectionPlacement(key: object): DevicePlan['sections'] | undefined {
    return this.plans.get(key)?.plan.sections;
  }

  /** DeviceTarget: a host section (chunks from this backend's alloc) that proofs stream to the device
   *  instead of uploading it. */
  adoptStreamed(section: PointSection): void {
    this.streamedSections.add(section);
  }

  private cpuBackend(): Backend {
    this.cpu ??= new NativeBackend();
    return this.cpu;
  }

  alloc(bytes: number): Uint8Array {
    return new Uint8Array(this.addon.alloc(checkedAllocBytes(bytes)));
  }

  /** Backend.allocAsync: the pinned allocation on a thread of the pool, not on the event loop. */
  async allocAsync(bytes: number): Promise<Uint8Array> {
    if (typeof this.addon.allocAsync !== 'function') return this.alloc(bytes);
    return new Uint8Array(await this.addon.allocAsync(checkedAllocBytes(bytes)));
  }

  /** Frees a pinned buffer, and the device copy of it when it was used as MSM bases (the SRS). */
  release(buf: Uint8Array): void {
    this.evict(buf);
    if (!this.addon.release(buf)) throw new TypeError('release: buffer was not allocated by this backend');
  }

  /** Uploads (once) and returns the device copy of `bases`. */
  preload(bases: Uint8Array, curve: 1 | 2): DeviceBases {
    let e = this.resident.get(bases);
    if (!e) {
      e = {};
      this.resident.set(bases, e);
    }
    const key = curve === 1 ? 'g1' : 'g2';
    let h = e[key];
    if (!h) {
      h = this.addon.uploadBases(this.device, curve, bases);
      e[key] = h;
      this.handles.add(h);
    }
    return h;
  }

  /**
   * The device copy of an SRS section: a Uint8Array as `preload`; a PointSection resident on this
   * backend as it is; a PointSection in host chunks uploaded chunk by chunk into one device vector
   * (once, keyed by the section object; freed by `evict(section)` or `evictAll`).
   */
  async preloadSection(s: Section, curve: 1 | 2): Promise<DeviceBases> {
    if (!isPointSection(s)) return this.preload(s, curve);
    const group: PointGroup = curve === 1 ? 'G1' : 'G2';
    if (s.group !== group) throw new RangeError(`preloadSection: the section holds ${s.group} points, not ${group}`);
    if (s.device !== undefined) {
      if (s.device.owner !== this) throw new Error(`preloadSection: the section is resident on another backend (device ${s.device.ordinal})`);
      const h = s.device.handle as DeviceBases;
      if (!this.handles.has(h)) throw new Error('preloadSection: the section was released');
      return h;
    }
    let e = this.resident.get(s);
    if (!e) {
      e = {};
      this.resident.set(s, e);
    }
    const key = curve === 1 ? 'g1' : 'g2';
    const known = e[key];
    if (known) return known;
    if (this.streamedSections.has(s)) {
      // kept in pinned host memory, streamed in chunks by each proof (the plan said so)
      if (typeof this.addon.hostBases !== 'function') throw new Error('the CUDA addon has no hostBases: rebuild it (npm run build:cuda)');
      const hb = this.addon.hostBases(this.device, curve, [...s.chunks]);
      e[key] = hb;
      this.handles.add(hb);
      return hb;
    }
    const h = this.addon.createBases(this.device, curve, s.count);
    try {
      let first = 0;
      for (const c of s.chunks) {
        await this.addon.writeBases(h, first, c);
        first += c.length / pointBytes(group);
      }
      if (first !== s.count) throw new RangeError(`preloadSection: the chunks hold ${first} points, the section ${s.count}`);
    } catch (err) {
      this.addon.freeBases(h);
      throw err;
    }
    const again = e[key]; // a concurrent first use uploaded it too: keep one
    if (again) {
      this.addon.freeBases(h);
      return again;
    }
    e[key] = h;
    this.handles.add(h);
    return h;
  }

  /** DeviceTarget: an empty device-resident section of `count` points, filled by writeResident (the
   *  native parameter loader, src/groth16/params-native.ts). Its `release` frees the device memory. */
  createResident(group: PointGroup, count: number): PointSection {
    const handle = this.addon.createBases(this.device, group === 'G1' ? 1 : 2, count);
    this.handles.add(handle);
    const handles = this.handles;
    const addon = this.addon;
    return {
      kind: 'points',
      group,
      count,
      chunks: [],
      device: { owner: this, handle, ordinal: this.device },
      release(): void {
        if (handles.delete(handle)) addon.freeBases(handle); // not released already, nor by evictAll
      },
    };
  }

  /** DeviceTarget: copies whole points to points [first, …) of a section from createResident (from
   *  pinned memory, e.g. this backend's `alloc`, at PCIe speed). */
  async writeResident(section: PointSection, first: number, bytes: Uint8Array): Promise<void> {
    if (section.device?.owner !== this) throw new Error('writeResident: the section is not resident on this backend');
    const h = section.device.handle as DeviceBases;
    if (!this.handles.has(h)) throw new Error('writeResident: the section was released');
    return this.addon.writeBases(h, first, bytes);
  }

  /** An MSM over a section resident on this device (src/backend/section.ts msmSection). */
  async msmResident(section: PointSection, scalars: Uint8Array, opts?: MsmOptions): Promise<CudaMsmResult> {
    const h = await this.preloadSection(section, section.group === 'G1' ? 1 : 2);
    const idx = opts?.scalarIndex;
    if (idx !== undefined && idx.length !== section.count) throw new RangeError(`msm: scalarIndex has ${idx.length} entries for ${section.count} bases`);
    if (idx === undefined && scalars.length !== section.count * FR) throw new RangeError(`msm: ${section.count} bases but ${scalars.length / FR} scalars`);
    return this.addon.msm(h, scalars, idx);
  }

  /** The host memory parameters take with this backend: the two staging buffers of the native
   *  loader while it streams them to the device, nothing afterwards (without the CPU addon the
   *  TypeScript reader keeps them in pinned host memory). */
  srsHostBytes(srsBytes: number): number {
    return nativeAvailable() ? Math.min(srsBytes, 2 * STAGING_BYTES) : srsBytes;
  }

  /** Frees the device copy of `bases` (a Uint8Array or a host PointSection; both curves); true when
   *  there was one. */
  evict(bases: object): boolean {
    const e = this.resident.get(bases);
    if (!e) return false;
    for (const h of [e.g1, e.g2]) {
      if (h) {
        this.addon.freeBases(h);
        this.handles.delete(h);
      }
    }
    this.resident.delete(bases);
    return true;
  }

  /** Frees every resident base vector and circuit. */
  evictAll(): void {
    for (const h of this.handles) this.addon.freeBases(h);
    this.handles.clear();
    for (const c of this.circuitHandles) this.addon.freeCircuit(c);
    this.circuitHandles.clear();
    this.keepShapes.clear();
    this.plans.clear();
  }

  /** Frees the device copy of a circuit uploaded by provePartition; true when there was one. */
  async evictCircuit(shape: object): Promise<boolean> {
    const p = this.circuits.get(shape);
    if (!p) return false;
    this.circuits.delete(shape);
    const h = await p.catch(() => undefined);
    if (h && this.circuitHandles.delete(h)) this.addon.freeCircuit(h);
    if (h) this.keepShapes.delete(h);
    this.plans.delete(shape);
    return h !== undefined;
  }

  /** The copies of h the circuit's plan keeps (DevicePlan.hCopies), made once per section before its first
   *  proof (concurrent first proofs wait for the same). Should they not fit after all (the pool's cached
   *  memory is trimmed and it is tried once more), the section stays as it was and the plan says why. */
  private async precomputeH(h: DeviceBases, entry: { plan: DevicePlan }): Promise<void> {
    const copies = entry.plan.hCopies;
    if (!(copies > 1) || typeof this.addon.precomputeBases !== 'function') return;
    let p = this.precomputed.get(h);
    if (!p) {
      const make = async (): Promise<void> => {
        let r: BasesPrecomputed;
        try {
          r = await this.addon.precomputeBases!(h, copies);
        } catch (e) {
          if (!isOutOfMemory(e)) throw e;
          this.addon.trimPool?.(this.device);
          r = await this.addon.precomputeBases!(h, copies);
        }
        entry.plan = { ...entry.plan, hCopies: r.copies, summary: `${entry.plan.summary} (h × ${r.copies} made in ${(r.ms / 1000).toFixed(1)} s, window ${r.window})` };
      };
      p = make().catch((e: unknown) => {
        entry.plan = { ...entry.plan, hCopies: 1, summary: `${entry.plan.summary} (h copies not made: ${(e as Error).message})` };
      });
      this.precomputed.set(h, p);
    }
    await p;
  }

  /** The circuit's plan (made on its first proof when no parameters load planned it). */
  private planOf(input: Pick<PartitionInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'>): { fp: CircuitFootprint; plan: DevicePlan; label: string } {
    let e = this.plans.get(input.shape);
    if (!e) {
      this.planCircuit(input.shape, footprintOf({ shape: input.shape, logN: input.logN, na: input.aIdx.length, nb: input.bIdx.length }));
      e = this.plans.get(input.shape)!;
    }
    return e;
  }

  private uploadDesc(input: Pick<PartitionInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'>): DeviceCircuitDesc {
    const { shape } = input;
    return {
      numConstraints: shape.numConstraints,
      numInputs: shape.numInputs,
      numAux: shape.numAux,
      logN: input.logN,
      a: shape.a,
      b: shape.b,
      c: shape.c,
      aIdx: input.aIdx,
      bIdx: input.bIdx,
    };
  }

  private circuitFor(input: Pick<PartitionInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'>): Promise<DeviceCircuit> {
    let p = this.circuits.get(input.shape);
    if (!p) {
      const { shape } = input;
      const streamed = this.planOf(input).plan.matrices === 'streamed';
      p = this.addon.uploadCircuit(this.device, this.uploadDesc(input), streamed ? { streamed } : undefined);
      p.then((h) => {
        this.circuitHandles.add(h);
        if (streamed) this.keepShapes.set(h, shape);
      }).catch(() => this.circuits.delete(shape));
      this.circuits.set(shape, p);
    }
    return p;
  }

  /** Backend.prepareCircuit: the circuit's matrices uploaded (or, when its plan streams them, made ready
   *  to stream) now, as its first proof would. */
  async prepareCircuit(input: Pick<PartitionInput, 'shape' | 'logN' | 'aIdx' | 'bIdx'>): Promise<void> {
    await this.circuitFor(input);
    // the twiddles and the quotient's buffers in the pool too (a first 32 GiB proof paid ~1 s more in its
    // ntt_h); best effort: a device that cannot grow its pool now proves as before
    if (typeof this.addon.warmDevice === 'function') {
      const { plan } = this.planOf(input);
      await this.addon.warmDevice(this.device, input.logN, plan.quotientBuffers + (plan.prefetchWitness ? 1 : 0)).catch(() => undefined);
    }
  }

  /** The whole partition on the device (see the file comment); timings are CUDA events. The
   *  circuit's memory plan decides what streams; a proof that runs out of device memory is retried
   *  once with a smaller plan (the pool trimmed, the quotient in place, less MSM scratch). */
  async provePartition(input: PartitionInput): Promise<PartitionSums & { gpu: PartitionTimings }> {
    const { shape, srs } = input;
    const nv = shape.numInputs + shape.numAux;
    if (!(input.witness instanceof Uint8Array) || input.witness.length !== nv * FR) {
      throw new RangeError(`provePartition: witness has ${input.witness?.length} bytes, the circuit has ${nv} variables`);
    }
    const entry = this.planOf(input);
    const t0 = performance.now();
    const handles = [
      await this.preloadSection(srs.h, 1),
      await this.preloadSection(srs.l, 1),
      await this.preloadSection(srs.a, 1),
      await this.preloadSection(srs.bG1, 1),
      await this.preloadSection(srs.bG2, 2),
    ];
    await this.precomputeH(handles[0], entry);
    const circuit = await this.circuitFor(input);
    const t1 = performance.now();
    let r: Awaited<ReturnType<CudaAddon['provePartition']>>;
    for (;;) {
      const plan = entry.plan;
      try {
        r = await this.addon.provePartition(circuit, handles, input.witness, {
          quotientBuffers: plan.quotientBuffers,
          msmScratchBytes: plan.msmScratchBytes,
          slotBytes: plan.slotBytes || undefined,
          slots: plan.slots || undefined,
          matrixSlotBytes: plan.matrixSlotBytes || undefined,
          prefetchWitness: plan.prefetchWitness,
          ...(input.urgent === true ? { urgent: true } : {}),
        });
        break;
      } catch (e) {
        const next = isOutOfMemory(e) ? shrinkPlan(plan, entry.fp) : undefined;
        if (next === undefined) {
          if (isOutOfMemory(e)) {
            throw new Error(`${(e as Error).message} (GPU ${this.device}, plan: ${plan.summary}; budget ${fmtBytes(plan.budgetBytes)})`);
          }
          throw e;
        }
        this.replans++;
        this.addon.trimPool?.(this.device);
        entry.plan = next;
      }
    }
    const t = r.timings;
    const m = t.msm;
    // Diagnostics (gpuDetail: $KILN_GPU_DETAIL=1 at the edges): each partition's MSM splits and the plan, one line on stderr
    if (this.gpuDetail) {
      process.stderr.write(`kiln gpu-detail ${JSON.stringify({ plan: entry.plan.summary, msmScratchBytes: entry.plan.msmScratchBytes, total: t.total, matvec: t.matvec, ntt: t.ntt, streamWait: t.streamWait, msm: m })}\n`);
    }
    // the call's wall time less what the device timed (its wait for the device, its events): a thread of
    // libuv's pool to run on (shared with every native call and file read), the results' conversion
    const hostWait = Math.max(0, performance.now() - t1 - (t.wait ?? 0) - t.total);
    this.lastPartition = { streamedBytes: t.streamedBytes ?? 0, copyMs: t.streamCopy ?? 0, gpuMs: t.total };
    const streamWait = t.streamedBytes ? { stream_wait: t.streamWait ?? 0 } : {};
    return {
      h: r.h,
      l: r.l,
      a: r.a,
      b1: r.b1,
      b2: r.b2,
      timings: {
        device_wait: t.wait ?? 0,
        matvec: t.upload + t.matvec,
        ntt_h: t.ntt,
        msm_h: t.msmH - m.h.batchAdd,
        msm_l: t.msmL - m.l.batchAdd,
        msm_a: t.msmA - m.a.batchAdd,
        msm_b1: t.msmB1 - m.b1.batchAdd,
        msm_b2: t.msmB2 - m.b2.batchAdd,
        batch_add: m.h.batchAdd + m.l.batchAdd + m.a.batchAdd + m.b1.batchAdd + m.b2.batchAdd,
        ...streamWait,
        circuit_upload: t1 - t0,
        host_wait: hostWait,
      },
      notes: { msm_h: msmNote(m.h), msm_l: msmNote(m.l), msm_a: msmNote(m.a), msm_b1: msmNote(m.b1), msm_b2: msmNote(m.b2) },
      gpu: t,
    };
  }

  /** Backend.devSetupInsecure: the circuit is uploaded as provePartition uploads it (and stays
   *  resident for the proofs that follow; evictCircuit(shape) frees it), then the addon computes and
   *  writes the sections. */
  private async runDevSetup(input: DevSetupInput): Promise<DevSetupResult> {
    const run = this.addon.devSetupInsecure;
    if (run === undefined) throw new Error('the CUDA addon has no devSetupInsecure: rebuild it (npm run build:cuda)');
    const { shape } = input;
    const cols = shape.numInputs + shape.numAux;
    for (const [name, m] of [['A', shape.a], ['B', shape.b], ['C', shape.c]] as const) {
      if (m.rows !== shape.numConstraints || m.cols !== cols) {
        throw new RangeError(`devSetupInsecure: matrix ${name} is ${m.rows}×${m.cols}, expected ${shape.numConstraints}×${cols}`);
      }
    }
    if (!(input.constants instanceof Uint8Array) || input.constants.length !== 6 * FR) {
      throw new RangeError('devSetupInsecure: constants must be 6 Fr elements (192 bytes)');
    }
    const t0 = performance.now();
    const resident = this.circuits.has(shape);
    // the setup reads the matrices on the device: a circuit whose plan streams them gets a resident
    // copy for the setup only (the setup needs the whole GPU's memory anyway)
    const streamed = this.planOf(input).plan.matrices === 'streamed';
    const circuit = streamed ? await this.addon.uploadCircuit(this.device, this.uploadDesc(input)) : await this.circuitFor(input);
    const upload = resident && !streamed ? 0 : performance.now() - t0;
    const g1 = new Uint8Array(G1_BYTES);
    writeG1(g1, 0, G1.BASE);
    const g2 = new Uint8Array(G2_BYTES);
    writeG2(g2, 0, G2.BASE);
    const r = await run(circuit, {
      constants: input.constants,
      g1,
      g2,
      path: input.path,
      offset: input.offset,
      fsync: input.fsync,
      chunkPoints: input.chunkPoints,
      writers: input.writers,
      progress: input.progress,
    }).finally(() => {
      if (streamed) this.addon.freeCircuit(circuit); // the setup's own resident copy
    });
    const [h, l, a, bG1, bG2] = r.counts;
    return {
      ic: r.ic,
      counts: [h, l, a, bG1, bG2],
      endOffset: r.endOffset,
      longColumns: r.longColumns,
      stagingBytes: r.stagingBytes,
      devicePeakBytes: r.devicePeakBytes,
      timings: { upload, ...r.timings },
    };
  }

  private checkMsm(fn: string, bases: Uint8Array, size: number, scalars: Uint8Array, opts?: MsmOptions): void {
    if (!(bases instanceof Uint8Array) || !(scalars instanceof Uint8Array)) throw new TypeError(`${fn}: bases and scalars must be Uint8Arrays`);
    if (bases.length % size !== 0) throw new RangeError(`${fn}: bases length ${bases.length} is not a multiple of ${size}`);
    if (scalars.length % FR !== 0) throw new RangeError(`${fn}: scalars length ${scalars.length} is not a multiple of 32`);
    const nb = bases.length / size;
    const ns = scalars.length / FR;
    const idx = opts?.scalarIndex;
    if (idx === undefined) {
      if (nb !== ns) throw new RangeError(`${fn}: ${nb} bases but ${ns} scalars`);
    } else {
      if (!(idx instanceof Uint32Array)) throw new TypeError(`${fn}: scalarIndex must be a Uint32Array`);
      if (idx.length !== nb) throw new RangeError(`${fn}: scalarIndex has ${idx.length} entries for ${nb} bases`);
    }
  }

  async msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<CudaMsmResult> {
    this.checkMsm('msmG1', bases, 96, scalars, opts);
    return this.addon.msm(this.preload(bases, 1), scalars, opts?.scalarIndex);
  }

  async msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<CudaMsmResult> {
    this.checkMsm('msmG2', bases, 192, scalars, opts);
    return this.addon.msm(this.preload(bases, 2), scalars, opts?.scalarIndex);
  }

  async batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array> {
    if (!(bases instanceof Uint8Array) || bases.length % 96 !== 0) throw new RangeError('batchAddG1: bases length is not a multiple of 96');
    if (!(indices instanceof Uint32Array)) throw new TypeError('batchAddG1: indices must be a Uint32Array');
    return this.addon.batchAddG1(this.preload(bases, 1), indices);
  }

  async ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void> {
    this.lastTimings.ntt = await this.addon.ntt(this.device, values, !!opts?.inverse, !!opts?.coset);
  }

  async quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void> {
    this.lastTimings.quotient = await this.addon.quotient(this.device, a, b, c);
  }

  /** Host memory per partition in flight besides the witness: none. provePartition keeps a, b, c,
   *  the quotient's scratch and the MSMs on the device (stream-ordered device allocations, freed
   *  when the proof ends); only the five sums come back. (The step-by-step path, used by tests and
   *  benches, copies vectors of the domain's size through host memory and is not budgeted.) */
  partitionWorkingSetBytes(_domainSize: number): number {
    return 0;
  }

  async csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void> {
    this.lastTimings.csrMatVec = await this.addon.csrMatVec(
      this.device,
      m.rows,
      m.cols,
      m.rowPtr,
      m.colIdx,
      m.coeffIdx,
      m.coeffs,
      w,
      out,
    );
  }

  /** The proof's assembly (a few points): on the CPU backend, where a handful of scalar
   *  multiplications cost less than a round trip to the device. */
  async lincombG1(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    const cpu = this.cpuBackend();
    if (!cpu.lincombG1) throw new Error('lincombG1: the CPU backend has no lincomb');
    return cpu.lincombG1(bases, scalars);
  }

  async lincombG2(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    const cpu = this.cpuBackend();
    if (!cpu.lincombG2) throw new Error('lincombG2: the CPU backend has no lincomb');
    return cpu.lincombG2(bases, scalars);
  }

  /** The zcash point codec of parameter files (Backend's PointCodec): on the CPU backend, so that
   *  loading parameters through this backend (its pinned `alloc`) is as fast as through the CPU one. */
  decodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void> {
    return this.cpuBackend().decodePoints(group, src, dst, checkOnCurve, checkSubgroup);
  }

  encodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array): Promise<void> {
    return this.cpuBackend().encodePoints(group, src, dst);
  }

  async fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.cpuBackend().fixedBaseMulG1(base, scalars);
  }

  async fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.cpuBackend().fixedBaseMulG2(base, scalars);
  }
}

/**
 * The GPU backend when a GPU is usable, otherwise the CPU backend (`reason` says why). Never
 * throws for a missing GPU, driver or CUDA addon.
 */
/** A CUDA out-of-memory failure (cudaErrorMemoryAllocation from an allocation of a proof). */
export function isOutOfMemory(e: unknown): boolean {
  const msg = (e as Error | undefined)?.message ?? '';
  return /cudaErrorMemoryAllocation|out of memory/i.test(msg);
}

export function createGpuBackend(opts: CudaBackendOptions = {}): { backend: Backend; gpu: boolean; reason?: string } {
  const probe = opts.addon ? opts.addon.probe() : cudaCapabilities(opts.addonPath);
  if (probe.cuda) {
    try {
      return { backend: new CudaBackend(opts), gpu: true };
    } catch (e) {
      if (!nativeAvailable()) throw e;
      return { backend: opts.cpu ?? new NativeBackend(), gpu: false, reason: (e as Error).message };
    }
  }
  return { backend: opts.cpu ?? new NativeBackend(), gpu: false, reason: probe.error ?? 'no GPU' };
}

/** alloc's and allocAsync's size: a non-negative integer (RangeError otherwise). */
function checkedAllocBytes(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError('alloc: bytes must be a non-negative integer');
  return bytes;
}
