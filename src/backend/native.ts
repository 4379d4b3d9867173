/**
 * The native CPU backend: the C++ addon `build/Release/kiln_native.node` (native/API.md), built by
 * `npm install` through node-gyp. Every heavy call runs off the JS thread on the addon's thread
 * pool and returns a Promise; argument errors surface as a rejected promise with a TypeError or
 * RangeError (never a crash).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, Capabilities, CsrMatrix, MsmOptions, MsmResult, PointGroup, SetupScalars, SetupScalarsInput } from './backend.js';

export type FieldName = 'fr' | 'fq' | 'fq2';
export type FieldOpName = 'add' | 'sub' | 'mul' | 'sqr' | 'neg' | 'inv';
export type CurveOpName = 'add' | 'double' | 'neg' | 'mul';

/** The raw functions exported by the addon (see native/API.md). */
/** A witness program as the interpreter takes it (r1cs/program.ts `WitnessProgram` has this shape). */
export interface WitnessProgramCode {
  readonly numInputs: number;
  readonly numAux: number;
  readonly numSlots: number;
  readonly coeffs: Uint8Array;
  readonly blocks: Uint32Array[];
  readonly segments: readonly { block: number; auxBase: number; inputBase: number; slotBase: number }[];
}

export interface NativeAddon {
  version(): string;
  capabilities(): Capabilities & { mulx: boolean; ifma: boolean };
  /** A point as precomputed tables store it (AVX-512 IFMA path: its own Montgomery form). */
  msmTableForm(group: Group, point: Uint8Array): Uint8Array;
  /** Sets the pool size (0 = hardware concurrency); returns the new size. */
  setThreads(n: number): number;
  /** Keeps the MSMs and NTTs off the AVX-512 IFMA kernels (true) or lets them use them where the CPU has them
   *  (false), process-wide; returns whether they run on IFMA now. The choice is fixed by the first kernel that
   *  runs (precomputed tables are stored in its form): changing it after that throws. Absent from addons built
   *  before it. */
  setNoIfma?(noIfma: boolean): boolean;
  alloc(bytes: number): ArrayBuffer;
  release(buf: ArrayBuffer | ArrayBufferView): void;
  fieldOp(field: FieldName, op: FieldOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  /** Registers Poseidon's optimized constants of an arity (canonical little-endian 32-byte Fr elements). */
  poseidonSetup(arity: number, fullRounds: number, partialRounds: number, crc: Uint8Array, preSparse: Uint8Array, mds: Uint8Array, wHat: Uint8Array, vRest: Uint8Array): void;
  /** inputs.length / (32·arity) Poseidon hashes (tag: 32 bytes, default the MerkleTree tag 2^arity − 1). */
  poseidonHash(arity: number, inputs: Uint8Array, tag?: Uint8Array): Uint8Array;
  g1Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  g2Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  msmG1(bases: Uint8Array, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<NativeMsmResult>;
  msmG2(bases: Uint8Array, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<NativeMsmResult>;
  /** The window c of a precomputed table over n bases (cost model, pool size). */
  msmPrecomputeWindow(n: number): number;
  /** Whether a table over n bases beats the plain path for `others` scalars neither 0 nor 1. */
  msmPrecomputePays(n: number, others: number): boolean;
  /** table (n·⌈256/c⌉ points) ← 2^(c·j)·bases[k] at point k·⌈256/c⌉ + j. */
  msmPrecomputeG1(bases: Uint8Array, c: number, table: Uint8Array): Promise<void>;
  msmPrecomputeG2(bases: Uint8Array, c: number, table: Uint8Array): Promise<void>;
  /** msmG1 over a table from msmPrecomputeG1 (same result). */
  msmPrecomputedG1(table: Uint8Array, c: number, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<NativeMsmResult>;
  msmPrecomputedG2(table: Uint8Array, c: number, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<NativeMsmResult>;
  batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array>;
  /** Σ scalars[k]·bases[k] for at most 256 points, synchronously (the proof's assembly). */
  lincombG1(bases: Uint8Array, scalars: Uint8Array): Uint8Array;
  lincombG2(bases: Uint8Array, scalars: Uint8Array): Uint8Array;
  ntt(values: Uint8Array, inverse: boolean, coset: boolean): Promise<void>;
  quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void>;
  csrMatVec(
    rows: number,
    cols: number,
    rowPtr: Uint32Array,
    colIdx: Uint32Array,
    coeffIdx: Uint32Array,
    coeffs: Uint8Array,
    w: Uint8Array,
    out: Uint8Array,
  ): Promise<void>;
  fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;
  fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array>;
  /** The CPU development setup's scalars (native/src/setup/scalars.hpp) into h, l, ic, a, b (Montgomery Fr). */
  devSetupScalars?(
    n: number, m: number, ni: number, na: number,
    aRowPtr: Uint32Array, aColIdx: Uint32Array, aCoeffIdx: Uint32Array, aCoeffs: Uint8Array,
    bRowPtr: Uint32Array, bColIdx: Uint32Array, bCoeffIdx: Uint32Array, bCoeffs: Uint8Array,
    cRowPtr: Uint32Array, cColIdx: Uint32Array, cCoeffIdx: Uint32Array, cCoeffs: Uint8Array,
    qa: Uint32Array, qb: Uint32Array, consts: Uint8Array,
    h: Uint8Array, l: Uint8Array, ic: Uint8Array, a: Uint8Array, b: Uint8Array,
  ): Promise<void>;
  /** Diagnostics: ns per operation of a dependent chain (fq_mul, fq_sqr, fq_add, fq_inv, fr_mul,
   *  fq2_mul). */
  microBench(op: string, iterations: number): number;
  witnessRun(
    blocks: Uint32Array[],
    segments: Uint32Array,
    coeffs: Uint8Array,
    numInputs: number,
    numAux: number,
    tape: Uint8Array,
    out: Uint8Array,
  ): Promise<{ ms: number; segments: number }>;
  /** zcash uncompressed points (96 B each) → native layout (dst: 96 B per point). Rejects a bad
   *  point with an Error whose `code` is 'KILN_BAD_POINT', `pointIndex` the first bad point and
   *  `reason` the wording of src/curve/codec.ts; wrong lengths are RangeErrors. */
  decodeG1Uncompressed(src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void>;
  /** The same for G2 (192 B; the wire writes c1 before c0, native c0 first). */
  decodeG2Uncompressed(src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void>;
  /** Native layout → zcash uncompressed (identity → the infinity encoding). */
  encodeG1Uncompressed(src: Uint8Array, dst: Uint8Array): Promise<void>;
  encodeG2Uncompressed(src: Uint8Array, dst: Uint8Array): Promise<void>;
}

/** The addon's MSM result: the timings also count the scalars and say which path ran. */
export interface NativeMsmResult extends MsmResult {
  timings: MsmResult['timings'] & {
    /** Scalars equal to 1 (bases not the identity). */
    ones: number;
    /** Scalars neither 0 nor 1 (bases not the identity). */
    others: number;
    /** The precomputed-table Pippenger ran (not the plain one over the table's first column). */
    precomputed: boolean;
  };
}

/** A point group, for the codec calls. */
export type { PointGroup };

const ADDON_RELATIVE = join('build', 'Release', 'kiln_native.node');

/** The package root: the nearest directory at or above this module holding package.json and
 *  binding.gyp (works from src/ under a TS runner and from dist/src/ once compiled). */
function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'binding.gyp'))) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
        if (pkg.name === 'kiln') return dir;
      } catch {
        /* not ours: keep looking */
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

let cached: NativeAddon | undefined;

/** Loads the addon once. `path` overrides where the .node file is looked for. Throws an Error that
 *  says how to build it when it is missing. */
export function loadNative(path?: string): NativeAddon {
  if (cached && path === undefined) return cached;
  const root = packageRoot();
  const file = path ?? (root ? join(root, ADDON_RELATIVE) : undefined);
  if (!file || !existsSync(file)) {
    throw new Error(
      `kiln native addon not found${file ? ` at ${file}` : ''}: build it with \`npm install\` ` +
        '(or `npx node-gyp rebuild`), which needs python3, make and g++; ' +
        'or use the reference backend (--backend reference)',
    );
  }
  const require = createRequire(import.meta.url);
  const addon = require(file) as NativeAddon;
  if (path === undefined) cached = addon;
  return addon;
}

/** True when the addon can be loaded (for tests and capability reports). */
export function nativeAvailable(): boolean {
  try {
    loadNative();
    return true;
  } catch {
    return false;
  }
}

export interface NativeBackendOptions {
  /** Thread pool size for the whole process (the pool is shared by every NativeBackend). */
  threads?: number;
  /** An already loaded addon (tests). */
  addon?: NativeAddon;
  /** Memory (bytes) this backend may hold in precomputed MSM tables of fixed bases (the SRS
   *  queries); 0 disables them. Default 1 GiB (DEFAULT_MSM_PRECOMPUTE_BYTES). */
  msmPrecomputeBytes?: number;
  /** A base vector gets a table on its second MSM when the first had at least this many scalars
   *  that are neither 0 nor 1 (default 8192; below that the plain path is as fast), and at least a
   *  quarter of its bases. */
  msmPrecomputeMinScalars?: number;
  /** Keep the process's CPU kernels off AVX-512 IFMA (true), or on it where the CPU has it (false): applied to
   *  the addon (applyNativeTuning), which is process-wide. Default: leave the addon as it is (IFMA when the CPU
   *  has it, unless an edge set it from $KILN_NO_IFMA). */
  noIfma?: boolean;
}

/**
 * Applies what the edge's Tuning (src/util/tuning.ts) says about the CPU addon, process-wide: `noIfma`
 * (KILN_NO_IFMA) through the addon's setNoIfma. The CLI and the daemon call it once when they start, before
 * any kernel runs; NativeBackend's constructor with its `noIfma` option too. Nothing to do when noIfma is
 * undefined. Throws when the addon predates setNoIfma, or when the choice was fixed the other way already (a
 * kernel ran).
 */
export function applyNativeTuning(t: { noIfma?: boolean }, addon?: NativeAddon): void {
  if (t.noIfma === undefined) return;
  addon ??= loadNative();
  if (typeof addon.setNoIfma !== 'function') throw new Error('this build of the kiln native addon cannot turn its IFMA kernels off (no setNoIfma): rebuild it (`npx node-gyp rebuild`)');
  addon.setNoIfma(t.noIfma);
}

/** Default memory cap of the precomputed MSM tables of one NativeBackend. */
export const DEFAULT_MSM_PRECOMPUTE_BYTES = 2 ** 30;
const DEFAULT_MSM_PRECOMPUTE_MIN_SCALARS = 8192;

type Group = 'G1' | 'G2';
const POINT_BYTES: Record<Group, number> = { G1: 96, G2: 192 };

/** What the backend knows about one base vector (keyed by the buffer object). */
interface BasesEntry {
  group: Group;
  /** MSMs run on these bases so far. */
  uses: number;
  /** Scalars neither 0 nor 1 in the last MSM. */
  others: number;
  /** The table once built (native memory from alloc) and its window. */
  table?: Uint8Array;
  c?: number;
  /** A precomputation in flight. */
  building?: Promise<boolean>;
}

export class NativeBackend implements Backend {
  readonly name = 'native';
  readonly addon: NativeAddon;

  /** Memory cap of the precomputed tables (bytes; 0: none are built). */
  readonly msmPrecomputeBytes: number;
  readonly msmPrecomputeMinScalars: number;
  private readonly bases = new WeakMap<Uint8Array, BasesEntry>();
  /** Base vectors seen by an MSM (weakly held), for precomputeSeen(). */
  private readonly seen = new Set<WeakRef<Uint8Array>>();
  /** Tables built and not released (weakly held: a table goes with its bases). */
  private readonly tables = new Set<WeakRef<Uint8Array>>();

  constructor(opts: NativeBackendOptions = {}) {
    this.addon = opts.addon ?? loadNative();
    applyNativeTuning({ noIfma: opts.noIfma }, this.addon);
    if (opts.threads !== undefined) this.addon.setThreads(opts.threads);
    const cap = opts.msmPrecomputeBytes ?? DEFAULT_MSM_PRECOMPUTE_BYTES;
    if (!(Number.isSafeInteger(cap) && cap >= 0)) throw new RangeError('msmPrecomputeBytes must be a non-negative integer');
    this.msmPrecomputeBytes = cap;
    const min = opts.msmPrecomputeMinScalars ?? DEFAULT_MSM_PRECOMPUTE_MIN_SCALARS;
    if (!(Number.isSafeInteger(min) && min >= 0)) throw new RangeError('msmPrecomputeMinScalars must be a non-negative integer');
    this.msmPrecomputeMinScalars = min;
  }

  capabilities(): Capabilities {
    const c = this.addon.capabilities();
    const cpuFeatures = [...(c.mulx ? ['mulx/adx'] : []), ...(c.ifma ? ['avx512-ifma'] : [])];
    return { backend: c.backend, threads: c.threads, cuda: c.cuda, gpus: c.gpus, cpuFeatures };
  }

  /** Resizes the process-wide pool (0 = hardware concurrency); returns the new size. */
  setThreads(n: number): number {
    return this.addon.setThreads(n);
  }

  version(): string {
    return this.addon.version();
  }

  alloc(bytes: number): Uint8Array {
    return new Uint8Array(this.addon.alloc(bytes));
  }

  /** Frees a buffer from `alloc` now, and the precomputed MSM table of it if there is one. */
  release(buf: Uint8Array): void {
    this.dropPrecomputed(buf);
    this.addon.release(buf);
  }

  async msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<NativeMsmResult> {
    return this.msm('G1', bases, scalars, opts?.scalarIndex);
  }

  async msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<NativeMsmResult> {
    return this.msm('G2', bases, scalars, opts?.scalarIndex);
  }

  /**
   * Query MSMs over fixed bases. A base vector seen a second time, whose previous MSM had at
   * least `msmPrecomputeMinScalars` scalars other than 0 and 1, a quarter of the bases or more, and
   * enough for the table's path to beat the plain one (cost model), gets a table of its window shifts
   * (2^(c·j)·P for every window j: n·⌈256/c⌉ points, c = 16 at 2^16: 96 MiB per G1 vector of 2^16)
   * if it fits in `msmPrecomputeBytes`; later MSMs on it use one set of buckets for all windows
   * (about 20 % faster with full-width scalars). Tables are keyed by the buffer object: the bases
   * must not change afterwards (the SRS never does; a sample of points is re-checked per call).
   */
  private async msm(group: Group, bases: Uint8Array, scalars: Uint8Array, idx?: Uint32Array): Promise<NativeMsmResult> {
    const e = bases instanceof Uint8Array ? this.bases.get(bases) : undefined;
    if (e !== undefined && e.group === group) {
      if (e.table === undefined && e.uses >= 1 && this.qualifies(bases, e)) {
        await this.precompute(bases, group).catch(() => false); // e.g. out of memory: stay on the plain path
      }
      if (e.table !== undefined && e.c !== undefined) {
        if (this.tableMatches(bases, e)) {
          e.uses++;
          const res =
            group === 'G1'
              ? await this.addon.msmPrecomputedG1(e.table, e.c, scalars, idx)
              : await this.addon.msmPrecomputedG2(e.table, e.c, scalars, idx);
          e.others = res.timings.others;
          return res;
        }
        this.dropPrecomputed(bases);
      }
    }
    const res = group === 'G1' ? await this.addon.msmG1(bases, scalars, idx) : await this.addon.msmG2(bases, scalars, idx);
    // Only vectors that could ever qualify are tracked (others ≤ bases).
    if (bases.length / POINT_BYTES[group] < Math.max(1, this.msmPrecomputeMinScalars) || this.msmPrecomputeBytes === 0) return res;
    let entry = this.bases.get(bases);
    if (entry === undefined || entry.group !== group) {
      if (this.seen.size >= 1024) for (const ref of this.seen) if (ref.deref() === undefined) this.seen.delete(ref);
      entry = { group, uses: 0, others: 0 };
      this.bases.set(bases, entry);
      this.seen.add(new WeakRef(bases));
    }
    entry.uses++;
    entry.others = res.timings.others;
    return res;
  }

  /** The last MSM on these bases had enough non-trivial scalars for a table to pay: at least
   *  `msmPrecomputeMinScalars`, at least a quarter of the bases (mostly-0/1 queries such as PoRep's
   *  L, A, B would pay their build for a few percent, over hundreds of proofs), and the cost model
   *  prefers the table's path for that many. */
  private qualifies(bases: Uint8Array, e: BasesEntry): boolean {
    const n = bases.length / POINT_BYTES[e.group];
    return e.others >= this.msmPrecomputeMinScalars && 4 * e.others >= n && this.addon.msmPrecomputePays(n, e.others);
  }

  /** A few base points still equal their copies in column 0 of the table. */
  private tableMatches(bases: Uint8Array, e: BasesEntry): boolean {
    const size = POINT_BYTES[e.group];
    const n = bases.length / size;
    const table = e.table as Uint8Array;
    if (table.length === 0 || n === 0 || table.length % (n * size) !== 0) return false;
    const W = table.length / (n * size);
    for (let s = 0; s < 8; s++) {
      const k = Math.floor((s * (n - 1)) / 7);
      const a = k * size, b = k * W * size;
      const base = this.addon.msmTableForm(e.group, bases.subarray(a, a + size));
      for (let i = 0; i < size; i++) if (base[i] !== table[b + i]) return false;
    }
    return true;
  }

  /** Bytes held in precomputed tables now. */
  precomputedBytes(): number {
    let total = 0;
    for (const ref of this.tables) {
      const t = ref.deref();
      if (t === undefined || t.length === 0) this.tables.delete(ref);
      else total += t.length;
    }
    return total;
  }

  /** The table size (bytes) and window that `precompute` would use for `bases`. */
  precomputePlan(bases: Uint8Array, group: Group): { c: number; windows: number; bytes: number } {
    const size = POINT_BYTES[group];
    if (!(bases instanceof Uint8Array) || bases.length % size !== 0) throw new RangeError(`precompute: bases length is not a multiple of ${size}`);
    const n = bases.length / size;
    const c = this.addon.msmPrecomputeWindow(n);
    const windows = Math.ceil(256 / c);
    return { c, windows, bytes: n * windows * size };
  }

  /**
   * Builds the precomputed table of `bases` now (a one-time cost per SRS: ~255 doublings per
   * base). Resolves true when a table exists afterwards, false when it would exceed
   * `msmPrecomputeBytes` (the MSMs then stay on the plain path).
   */
  async precompute(bases: Uint8Array, group: Group): Promise<boolean> {
    const plan = this.precomputePlan(bases, group);
    let e = this.bases.get(bases);
    if (e === undefined || e.group !== group) {
      e = { group, uses: 0, others: 0 };
      this.bases.set(bases, e);
    }
    if (e.table !== undefined) return true;
    if (e.building !== undefined) return e.building;
    if (plan.bytes === 0 || this.precomputedBytes() + plan.bytes > this.msmPrecomputeBytes) return false;
    const entry = e;
    entry.building = (async () => {
      const table = new Uint8Array(this.addon.alloc(plan.bytes));
      try {
        if (group === 'G1') await this.addon.msmPrecomputeG1(bases, plan.c, table);
        else await this.addon.msmPrecomputeG2(bases, plan.c, table);
      } catch (err) {
        this.addon.release(table);
        throw err;
      } finally {
        entry.building = undefined;
      }
      if (this.bases.get(bases) !== entry) {
        this.addon.release(table); // released or dropped while building
        return false;
      }
      entry.table = table;
      entry.c = plan.c;
      this.tables.add(new WeakRef(table));
      return true;
    })();
    return entry.building;
  }

  /**
   * Builds now the tables that the next MSMs would build on their own: for every base vector seen
   * whose last MSM had enough scalars other than 0 and 1 (see msm(); under the memory cap). After one warm-up proof this moves the one-time cost out of the timed proofs.
   * Returns the number of tables built and their bytes.
   */
  async precomputeSeen(): Promise<{ tables: number; bytes: number }> {
    let tables = 0;
    let bytes = 0;
    for (const ref of [...this.seen]) {
      const bases = ref.deref();
      const e = bases === undefined ? undefined : this.bases.get(bases);
      if (bases === undefined || e === undefined) {
        this.seen.delete(ref);
        continue;
      }
      if (e.table !== undefined || !this.qualifies(bases, e)) continue;
      if (await this.precompute(bases, e.group)) {
        tables++;
        bytes += this.bases.get(bases)?.table?.length ?? 0;
      }
    }
    return { tables, bytes };
  }

  /** Frees the precomputed table of `bases` (true when there was one). */
  dropPrecomputed(bases: Uint8Array): boolean {
    const e = bases instanceof Uint8Array ? this.bases.get(bases) : undefined;
    if (e === undefined) return false;
    this.bases.delete(bases);
    if (e.table === undefined) return false;
    for (const ref of this.tables) if (ref.deref() === e.table) this.tables.delete(ref);
    this.addon.release(e.table);
    return true;
  }

  async batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array> {
    return this.addon.batchAddG1(bases, indices);
  }

  /** Σ scalars[k]·bases[k] for a few points (≤ 256), on the calling thread: a full-width G1
   *  scalar costs ~0.1 ms, a G2 one ~0.3 ms. */
  async lincombG1(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.addon.lincombG1(bases, scalars);
  }

  async lincombG2(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.addon.lincombG2(bases, scalars);
  }

  async ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void> {
    return this.addon.ntt(values, !!opts?.inverse, !!opts?.coset);
  }

  async quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void> {
    return this.addon.quotient(a, b, c);
  }

  /** a, b, c (32 B per element each) and the quotient's scratch and twiddle tables: up to 120 B per
   *  domain element on the AVX-512 IFMA path (52-bit limbs), 32 B on the scalar one. */
  partitionWorkingSetBytes(domainSize: number): number {
    const scratch = this.addon.capabilities().ifma ? 120 : 32;
    return (3 * 32 + scratch) * domainSize;
  }

  async csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void> {
    return this.addon.csrMatVec(m.rows, m.cols, m.rowPtr, m.colIdx, m.coeffIdx, m.coeffs, w, out);
  }

  /**
   * Runs a witness program (r1cs/program.ts) over a tape (Montgomery Fr, encodeTape) into `out`
   * ((numInputs + numAux)·32 bytes, e.g. from `alloc`): the assignment WitnessGenerator writes.
   * Segments run in parallel on the pool.
   */
  async runWitnessProgram(p: WitnessProgramCode, tape: Uint8Array, out: Uint8Array): Promise<{ ms: number }> {
    if (tape.length !== p.numSlots * 32) throw new RangeError(`runWitnessProgram: tape of ${tape.length / 32} values, the program reads ${p.numSlots}`);
    const table = new Uint32Array(p.segments.length * 4);
    p.segments.forEach((g, i) => table.set([g.block, g.auxBase, g.inputBase, g.slotBase], i * 4));
    return this.addon.witnessRun(p.blocks, table, p.coeffs, p.numInputs, p.numAux, tape, out);
  }

  /** The development setup's scalars natively (absent with an addon built before devSetupScalars). */
  get devSetupScalars(): ((input: SetupScalarsInput) => Promise<SetupScalars>) | undefined {
    const f = this.addon.devSetupScalars;
    if (typeof f !== 'function') return undefined;
    return async ({ shape, n, qa, qb, consts }) => {
      const out = {
        h: new Uint8Array((n - 1) * 32),
        l: new Uint8Array(shape.numAux * 32),
        ic: new Uint8Array(shape.numInputs * 32),
        a: new Uint8Array(qa.length * 32),
        b: new Uint8Array(qb.length * 32),
      };
      const m = (x: CsrMatrix): [Uint32Array, Uint32Array, Uint32Array, Uint8Array] => [x.rowPtr, x.colIdx, x.coeffIdx, x.coeffs];
      await f.call(this.addon, n, shape.numConstraints, shape.numInputs, shape.numAux, ...m(shape.a), ...m(shape.b), ...m(shape.c), qa, qb, consts, out.h, out.l, out.ic, out.a, out.b);
      return out;
    };
  }

  async fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.addon.fixedBaseMulG1(base, scalars);
  }

  async fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.addon.fixedBaseMulG2(base, scalars);
  }

  /**
   * Decodes zcash *uncompressed* points (bellperson .params/.vk: big-endian Fq, flag bits, G2 c1
   * first) from `src` into native-layout points in `dst` (exactly as many points), on the thread
   * pool. Always checks the flags and that every coordinate is canonical (< p); `checkOnCurve`
   * adds y² = x³ + b, `checkSubgroup` (implies the curve check) membership of the order-r
   * subgroup ([r]P = O: ~0.1 ms per G1 point, ~0.4 ms per G2 point per core). A bad point rejects
   * with an Error carrying `code: 'KILN_BAD_POINT'`, `pointIndex` (the first bad point) and
   * `reason`; dst is then partly written. `src` and `dst` must not overlap or change during the call.
   */
  async decodePoints(
    group: PointGroup,
    src: Uint8Array,
    dst: Uint8Array,
    checkOnCurve: boolean,
    checkSubgroup = false,
  ): Promise<void> {
    if (group === 'G1') return this.addon.decodeG1Uncompressed(src, dst, checkOnCurve, checkSubgroup);
    if (group === 'G2') return this.addon.decodeG2Uncompressed(src, dst, checkOnCurve, checkSubgroup);
    throw new RangeError(`decodePoints: group must be 'G1' or 'G2', got ${String(group)}`);
  }

  /** Encodes native-layout points of `src` as zcash uncompressed points into `dst` (96 / 192 B
   *  each; the all-zero identity becomes the infinity encoding), on the thread pool. */
  async encodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array): Promise<void> {
    if (group === 'G1') return this.addon.encodeG1Uncompressed(src, dst);
    if (group === 'G2') return this.addon.encodeG2Uncompressed(src, dst);
    throw new RangeError(`encodePoints: group must be 'G1' or 'G2', got ${String(group)}`);
  }

  /** Elementwise field operation on packed Montgomery vectors (test helper, synchronous). */
  fieldOp(field: FieldName, op: FieldOpName, a: Uint8Array, b?: Uint8Array): Uint8Array {
    return this.addon.fieldOp(field, op, a, b);
  }

  /** Elementwise G1 operation on packed affine points; `mul` takes a Montgomery Fr vector. */
  g1Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array {
    return this.addon.g1Op(op, a, b);
  }

  g2Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array {
    return this.addon.g2Op(op, a, b);
  }
}
