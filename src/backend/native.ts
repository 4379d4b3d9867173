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
import type { Backend, Capabilities, CsrMatrix, MsmOptions, MsmResult } from './backend.js';

export type FieldName = 'fr' | 'fq' | 'fq2';
export type FieldOpName = 'add' | 'sub' | 'mul' | 'sqr' | 'neg' | 'inv';
export type CurveOpName = 'add' | 'double' | 'neg' | 'mul';

/** The raw functions exported by the addon (see native/API.md). */
export interface NativeAddon {
  version(): string;
  capabilities(): Capabilities & { mulx: boolean };
  /** Sets the pool size (0 = hardware concurrency); returns the new size. */
  setThreads(n: number): number;
  alloc(bytes: number): ArrayBuffer;
  release(buf: ArrayBuffer | ArrayBufferView): void;
  fieldOp(field: FieldName, op: FieldOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  g1Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  g2Op(op: CurveOpName, a: Uint8Array, b?: Uint8Array): Uint8Array;
  msmG1(bases: Uint8Array, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<MsmResult>;
  msmG2(bases: Uint8Array, scalars: Uint8Array, scalarIndex?: Uint32Array): Promise<MsmResult>;
  batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array>;
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
  /** Diagnostics: ns per operation of a dependent chain (fq_mul, fq_sqr, fq_add, fq_inv, fr_mul,
   *  fq2_mul). */
  microBench(op: string, iterations: number): number;
  /** zcash uncompressed points (96 B each) → native layout (dst: 96 B per point). Rejects a bad
   *  point with an Error whose `code` is 'KILN_BAD_POINT', `pointIndex` the first bad point and
   *  `reason` the wording of src/groth16/codec.ts; wrong lengths are RangeErrors. */
  decodeG1Uncompressed(src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void>;
  /** The same for G2 (192 B; the wire writes c1 before c0, native c0 first). */
  decodeG2Uncompressed(src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void>;
  /** Native layout → zcash uncompressed (identity → the infinity encoding). */
  encodeG1Uncompressed(src: Uint8Array, dst: Uint8Array): Promise<void>;
  encodeG2Uncompressed(src: Uint8Array, dst: Uint8Array): Promise<void>;
}

/** A point group, for the codec calls. */
export type PointGroup = 'G1' | 'G2';

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
}

export class NativeBackend implements Backend {
  readonly name = 'native';
  readonly addon: NativeAddon;

  constructor(opts: NativeBackendOptions = {}) {
    this.addon = opts.addon ?? loadNative();
    if (opts.threads !== undefined) this.addon.setThreads(opts.threads);
  }

  capabilities(): Capabilities {
    const c = this.addon.capabilities();
    return { backend: c.backend, threads: c.threads, cuda: c.cuda, gpus: c.gpus };
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

  release(buf: Uint8Array): void {
    this.addon.release(buf);
  }

  async msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    return this.addon.msmG1(bases, scalars, opts?.scalarIndex);
  }

  async msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    return this.addon.msmG2(bases, scalars, opts?.scalarIndex);
  }

  async batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array> {
    return this.addon.batchAddG1(bases, indices);
  }

  async ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void> {
    return this.addon.ntt(values, !!opts?.inverse, !!opts?.coset);
  }

  async quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void> {
    return this.addon.quotient(a, b, c);
  }

  async csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void> {
    return this.addon.csrMatVec(m.rows, m.cols, m.rowPtr, m.colIdx, m.coeffIdx, m.coeffs, w, out);
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
