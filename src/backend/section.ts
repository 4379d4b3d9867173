/**
 * A query section of the proving parameters (h, l, a, b_g1, b_g2) held outside the JS heap: the
 * points (native layout, src/field/layout.ts) in native memory in chunks, each a Uint8Array from a
 * backend's `alloc` of at most SECTION_CHUNK_BYTES and a whole number of points, or on a GPU only
 * (the CUDA backend receives a section streamed from the file and keeps no host copy). A section of
 * the official 32 GiB parameters (h: 2^27 − 1 points, 12.9 GB) never sits in one JS typed array,
 * which Node 20 caps at 4 GiB.
 *
 * `Section` is what parameters hold: a plain Uint8Array (the TypeScript reader, the development
 * setup, small circuits) or a PointSection (the native loader, src/groth16/params-native.ts). The
 * helpers here treat both alike; `msmSection` runs a query MSM over either on any backend.
 */
import type { PointGroup } from '../curve/codec.js';
import { G1, G1_BYTES, G2, G2_BYTES, readG1, readG2, writeG1, writeG2 } from '../field/layout.js';
import type { Backend, MsmOptions, MsmResult } from './backend.js';

/** Where a device-resident section lives: `owner` is the backend whose `handle` it is. */
export interface DeviceSection {
  readonly owner: object;
  readonly handle: unknown;
  /** The device ordinal. */
  readonly ordinal: number;
}

export interface PointSection {
  readonly kind: 'points';
  readonly group: PointGroup;
  /** Points in the section. */
  readonly count: number;
  /** The points in order, in chunks of native memory; empty when the section lives on a device only. */
  readonly chunks: readonly Uint8Array[];
  /** Set when the section is resident on a GPU. */
  readonly device?: DeviceSection;
  /** Frees the host chunks (through the backend that allocated them) and the device copy. Idempotent. */
  release(): void;
}

export type Section = Uint8Array | PointSection;

/** Largest host chunk: 3 GiB = 2^25 G1 or 2^24 G2 points (below the 4 GiB of one typed array). */
export const SECTION_CHUNK_BYTES = 3 * 2 ** 30;

export const pointBytes = (g: PointGroup): number => (g === 'G1' ? G1_BYTES : G2_BYTES);

export function isPointSection(s: unknown): s is PointSection {
  return typeof s === 'object' && s !== null && !ArrayBuffer.isView(s) && (s as { kind?: unknown }).kind === 'points';
}

function checkGroup(s: PointSection, group: PointGroup): void {
  if (s.group !== group) throw new RangeError(`the section holds ${s.group} points, not ${group}`);
}

/** Points in a section of `group`. */
export function sectionCount(s: Section, group: PointGroup): number {
  if (!isPointSection(s)) return s.length / pointBytes(group);
  checkGroup(s, group);
  return s.count;
}

/** Bytes the section's points take in the native layout (on the host or on a device). */
export function sectionBytes(s: Section): number {
  return isPointSection(s) ? s.count * pointBytes(s.group) : s.length;
}

/** Host bytes the section holds (0 for a section on a device only). */
export function sectionHostBytes(s: Section): number {
  return isPointSection(s) ? s.chunks.reduce((t, c) => t + c.length, 0) : s.length;
}

/** The host chunks with the index of their first point (a Uint8Array is one chunk). Throws for a
 *  section that lives on a device only. */
export function hostChunks(s: Section, group: PointGroup): { first: number; bytes: Uint8Array }[] {
  if (!isPointSection(s)) return [{ first: 0, bytes: s }];
  checkGroup(s, group);
  if (s.count > 0 && s.chunks.length === 0) {
    throw new Error(`the ${s.count}-point ${group} section lives on device ${s.device?.ordinal ?? '?'} only: there is no host copy`);
  }
  const size = pointBytes(group);
  const out: { first: number; bytes: Uint8Array }[] = [];
  let first = 0;
  for (const c of s.chunks) {
    out.push({ first, bytes: c });
    first += c.length / size;
  }
  return out;
}

/** Point `i` of a section (native layout; a copy). */
export function sectionPoint(s: Section, group: PointGroup, i: number): Uint8Array {
  const size = pointBytes(group);
  for (const c of hostChunks(s, group)) {
    const k = c.bytes.length / size;
    if (i >= c.first && i < c.first + k) return c.bytes.slice((i - c.first) * size, (i - c.first + 1) * size);
  }
  throw new RangeError(`point ${i} out of range (${sectionCount(s, group)} points)`);
}

/** A section's points in one new Uint8Array (tests and small sections: at most 4 GiB). */
export function sectionToBytes(s: Section, group: PointGroup): Uint8Array {
  if (!isPointSection(s)) return s;
  const out = new Uint8Array(sectionBytes(s));
  for (const c of hostChunks(s, group)) out.set(c.bytes, c.first * pointBytes(group));
  return out;
}

/** Frees a section: a PointSection its own memory (and the device copy a backend with `evict`, the
 *  CUDA one, made of its host chunks), a Uint8Array through `backend.release`. */
export function releaseSection(s: Section, backend?: Pick<Backend, 'release'> & { evict?(bases: object): unknown }): void {
  if (isPointSection(s)) {
    backend?.evict?.(s);
    s.release();
  } else if (backend) {
    backend.release(s);
  }
}

/** A host PointSection over `chunks` (in order, whole points each), freed through `release`. */
export function hostSection(group: PointGroup, chunks: Uint8Array[], release: (chunk: Uint8Array) => void): PointSection {
  const size = pointBytes(group);
  let count = 0;
  for (const c of chunks) {
    if (c.length % size !== 0) throw new RangeError(`a ${group} chunk of ${c.length} bytes is not a whole number of points`);
    count += c.length / size;
  }
  let released = false;
  return {
    kind: 'points',
    group,
    count,
    chunks,
    release(): void {
      if (released) return;
      released = true;
      for (const c of chunks.splice(0)) release(c);
    },
  };
}

/**
 * Where the native loader streams sections to (the CUDA backend): device memory filled from pinned
 * staging buffers, so that the host keeps no copy of the SRS.
 */
export interface DeviceTarget {
  /** Pinned host memory for the staging buffers; freed with `release`. */
  alloc(bytes: number): Uint8Array;
  release(buf: Uint8Array): void;
  /** An empty device-resident section of `count` points (no chunks, `device` set). */
  createResident(group: PointGroup, count: number): PointSection;
  /** Copies whole points (native layout) to points [first, …) of a section from createResident.
   *  `bytes` may be reused once the promise settles. */
  writeResident(section: PointSection, first: number, bytes: Uint8Array): Promise<void>;
  /** Optional (GPU backends that stream): takes a host section (chunks from this target's `alloc`) that proofs
   *  stream to the device chunk by chunk instead of uploading it (the device-memory plan's streamed
   *  sections). */
  adoptStreamed?(section: PointSection): void;
}

/** Default size of each of the two staging buffers of a device load (64 MiB: a few ms of PCIe). */
export const STAGING_BYTES = 64 * 2 ** 20;

export function isDeviceTarget(x: unknown): x is DeviceTarget {
  const d = x as Partial<DeviceTarget> | undefined;
  return typeof d?.createResident === 'function' && typeof d.writeResident === 'function' && typeof d.alloc === 'function';
}

/** A backend that runs MSMs over sections resident on its device (CudaBackend). */
export interface ResidentMsm {
  msmResident(section: PointSection, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult>;
}

/**
 * Σ scalar·base over a section. A Uint8Array or a one-chunk section is one backend MSM. Over
 * several chunks the MSM is split at the chunk boundaries (chunk k pairs with scalars
 * [first, first + k), or with its slice of `scalarIndex`) and the partial sums are added: the same
 * point. A section resident on a device goes to its owner's msmResident.
 */
export async function msmSection(
  backend: Backend,
  group: PointGroup,
  s: Section,
  scalars: Uint8Array,
  opts?: MsmOptions,
): Promise<MsmResult> {
  const run = (b: Uint8Array, sc: Uint8Array, o?: MsmOptions): Promise<MsmResult> =>
    group === 'G1' ? backend.msmG1(b, sc, o) : backend.msmG2(b, sc, o);
  if (!isPointSection(s)) return run(s, scalars, opts);
  checkGroup(s, group);
  if (s.device !== undefined && s.device.owner === backend && typeof (backend as Partial<ResidentMsm>).msmResident === 'function') {
    return (backend as unknown as ResidentMsm).msmResident(s, scalars, opts);
  }
  const chunks = hostChunks(s, group);
  const idx = opts?.scalarIndex;
  if (idx !== undefined && idx.length !== s.count) throw new RangeError(`msm: scalarIndex has ${idx.length} entries for ${s.count} bases`);
  if (idx === undefined && scalars.length !== s.count * 32) throw new RangeError(`msm: ${s.count} bases but ${scalars.length / 32} scalars`);
  if (chunks.length === 1) return run(chunks[0].bytes, scalars, opts);
  const size = pointBytes(group);
  const timings = { classify: 0, batchAdd: 0, msm: 0 };
  let g1 = G1.ZERO;
  let g2 = G2.ZERO;
  for (const c of chunks) {
    const k = c.bytes.length / size;
    const r =
      idx !== undefined
        ? await run(c.bytes, scalars, { scalarIndex: idx.subarray(c.first, c.first + k) })
        : await run(c.bytes, scalars.subarray(c.first * 32, (c.first + k) * 32));
    if (group === 'G1') g1 = g1.add(readG1(r.point, 0));
    else g2 = g2.add(readG2(r.point, 0));
    timings.classify += r.timings.classify;
    timings.batchAdd += r.timings.batchAdd;
    timings.msm += r.timings.msm;
  }
  const point = new Uint8Array(size);
  if (group === 'G1') writeG1(point, 0, g1);
  else writeG2(point, 0, g2);
  return { point, timings };
}
