/**
 * The native `.params` loader: bellperson parameter files of any size (the official 32 GiB file is
 * ~47 GB, its h section ~13 GB) read by the CPU addon (native/src/params/, native/API.md
 * "Parameter files") straight into native memory, or streamed through pinned staging buffers onto a
 * GPU; no section ever passes through a JS typed array larger than one chunk.
 *
 *  1. `inspectParamsFile`: the file's layout (the verifying key's bytes, each section's count and
 *     file offset) from its count fields, every count checked against the file size before anything
 *     is trusted: a truncated or inconsistent file is refused with a ParamsFormatError naming the
 *     section and the numbers. With `expected`, the counts must also be the circuit's.
 *  2. `loadParamsFile`: each section read and decoded by the addon's thread pool (zcash uncompressed
 *     → Montgomery affine; flags and canonical coordinates always checked, the curve and the subgroup
 *     with `checkPoints`) into chunks of backend memory (host PointSections), or, with `device`,
 *     into two pinned staging buffers in turn, each copied to the device while the next decodes, so
 *     that the host never holds more than the two buffers.
 *  3. `loadParams`: the one entry point of official and development files alike (kinds/params.ts,
 *     the engine's circuit providers, groth16/setup.ts's cache): host sections for the CPU backend,
 *     sections streamed to the device for a GPU backend, the TypeScript reader without the addon.
 *
 * The TypeScript reader (keys.ts readParamsFile / readParamsLayout) is the slow twin:
 * test/params-native.test.ts compares them byte for byte and error for error.
 */
import type { Backend } from '../backend/backend.js';
import { NativeBackend, nativeAvailable, type NativeAddon } from '../backend/native.js';
import { SECTION_CHUNK_BYTES, STAGING_BYTES, hostSection, isDeviceTarget, pointBytes, type DeviceTarget, type PointSection } from '../backend/section.js';
import type { PointGroup } from '../curve/codec.js';
import type { CompiledCircuit } from './compiled.js';
import {
  PARAMS_SECTIONS,
  ParamsFormatError,
  decodeVerifyingKey,
  readParamsFile,
  readParamsLayout,
  type AnyParameters,
  type Parameters,
  type ParamsLayout,
  type QuerySection,
  type SectionLayout,
  type VerifyingKey,
} from './keys.js';

export type { ParamsLayout, SectionLayout };

/** The CPU addon's parameter-file functions (native/API.md, "Parameter files"). */
export interface ParamsAddon {
  paramsInspect(path: string): Promise<{
    size: number;
    vk: Uint8Array;
    icCount: number;
    sections: { name: QuerySection; group: PointGroup; count: number; offset: number }[];
  }>;
  paramsDecode(
    path: string,
    size: number,
    section: string,
    group: PointGroup,
    offset: number,
    count: number,
    dst: Uint8Array,
    checkOnCurve: boolean,
    checkSubgroup?: boolean,
  ): Promise<void>;
}

/** Point counts a circuit implies (queries.ts expectedParamsCounts); any subset may be given. */
export type ExpectedCounts = Partial<Record<QuerySection | 'ic', number>>;

export interface NativeLoadOptions {
  /** Check that every point of the five sections is on the curve and in the subgroup (slow: [r]P
   *  per point, on the thread pool). Default false; flags and canonical coordinates are always
   *  checked. */
  checkPoints?: boolean;
  /** Check the verifying key's points the same way; default true. */
  checkVerifyingKey?: boolean;
  /** Refuse the file, before reading any point, unless its counts are these. */
  expected?: ExpectedCounts;
  /** The CPU backend: its addon reads the file, its `alloc` holds host sections. Default: a
   *  NativeBackend. */
  backend?: NativeBackend;
  /** Stream the sections to this device instead (the host keeps only two staging buffers). */
  device?: DeviceTarget;
  /** Largest host chunk of a section (bytes, rounded down to whole points); default 3 GiB. */
  chunkBytes?: number;
  /** Size of each of the two staging buffers of `device` (bytes, rounded down to whole G2 points);
   *  default 64 MiB. */
  stagingBytes?: number;
  /** With `device`: the sections that stay in host memory (chunks from the device's pinned `alloc`,
   *  handed to `device.adoptStreamed`) instead of going to the device: the device-memory plan's
   *  streamed sections. Default: every section on the device. */
  hostSections?: readonly QuerySection[];
}

function paramsAddon(addon: NativeAddon): ParamsAddon {
  const a = addon as unknown as Partial<ParamsAddon>;
  if (typeof a.paramsInspect !== 'function' || typeof a.paramsDecode !== 'function') {
    throw new Error('the native addon has no parameter reader (paramsInspect): rebuild it (npm install, or npx node-gyp rebuild)');
  }
  return a as ParamsAddon;
}

/** The addon's rejections as ParamsFormatErrors: a malformed file, or a bad point (its index made
 *  relative to the section by `firstPoint`). */
function asFormatError(e: unknown, path: string, firstPoint = 0): unknown {
  const x = e as { code?: unknown; section?: unknown; detail?: unknown; pointIndex?: unknown; reason?: unknown } | undefined;
  if (x?.code === 'KILN_PARAMS_FORMAT' && typeof x.section === 'string') {
    return new ParamsFormatError(x.section, String(x.detail), path);
  }
  if (x?.code === 'KILN_BAD_POINT' && typeof x.section === 'string' && typeof x.pointIndex === 'number') {
    return new ParamsFormatError(x.section, `point ${firstPoint + x.pointIndex}: ${String(x.reason)}`, path);
  }
  return e;
}

/** Refuses `layout` unless its counts are `expected`'s (before any point is read). */
export function checkExpectedCounts(layout: ParamsLayout, expected: ExpectedCounts): void {
  if (expected.ic !== undefined && layout.icCount !== expected.ic) {
    throw new ParamsFormatError('vk.ic', `count ${layout.icCount} but the circuit has ${expected.ic} public inputs (ONE included)`, layout.path);
  }
  for (const s of PARAMS_SECTIONS) {
    const want = expected[s.section];
    const got = layout.sections[s.section].count;
    if (want !== undefined && got !== want) {
      throw new ParamsFormatError(s.section, `count ${got} but the circuit needs ${want} points`, layout.path);
    }
  }
}

/** The layout of a .params file, read and checked by the addon (small reads: microseconds for any
 *  size). */
export async function inspectParamsFile(path: string, opts: { backend?: NativeBackend; expected?: ExpectedCounts } = {}): Promise<ParamsLayout> {
  const addon = paramsAddon((opts.backend ?? new NativeBackend()).addon);
  let raw: Awaited<ReturnType<ParamsAddon['paramsInspect']>>;
  try {
    raw = await addon.paramsInspect(path);
  } catch (e) {
    throw asFormatError(e, path);
  }
  const sections = {} as Record<QuerySection, SectionLayout>;
  for (const s of raw.sections) sections[s.name] = { group: s.group, count: s.count, offset: s.offset };
  const layout: ParamsLayout = { path, size: raw.size, vkBytes: raw.vk, icCount: raw.icCount, sections };
  if (opts.expected) checkExpectedCounts(layout, opts.expected);
  return layout;
}

function wholePoints(bytes: number, group: PointGroup, what: string): number {
  const k = Math.floor(bytes / pointBytes(group));
  if (!(k >= 1)) throw new RangeError(`${what} must hold one ${group} point at least`);
  return k;
}

async function loadHostSection(
  addon: ParamsAddon,
  backend: Pick<NativeBackend, 'alloc' | 'release'>,
  layout: ParamsLayout,
  name: QuerySection,
  check: boolean,
  chunkBytes: number,
): Promise<PointSection> {
  const { group, count, offset } = layout.sections[name];
  const size = pointBytes(group);
  const per = wholePoints(chunkBytes, group, 'chunkBytes');
  const chunks: Uint8Array[] = [];
  try {
    for (let first = 0; first < count; first += per) {
      const k = Math.min(per, count - first);
      const chunk = backend.alloc(k * size);
      chunks.push(chunk);
      try {
        await addon.paramsDecode(layout.path, layout.size, name, group, offset + first * size, k, chunk, check, check);
      } catch (e) {
        throw asFormatError(e, layout.path, first);
      }
    }
  } catch (e) {
    for (const c of chunks) backend.release(c);
    throw e;
  }
  return hostSection(group, chunks, (c) => backend.release(c));
}

/**
 * One section onto the device: chunk k is decoded into staging buffer k mod 2 (waiting first for
 * the copy that last used that buffer), then its copy to the device starts and chunk k + 1 decodes
 * into the other buffer while it runs.
 */
async function loadDeviceSection(addon: ParamsAddon, device: DeviceTarget, staging: Uint8Array[], layout: ParamsLayout, name: QuerySection, check: boolean): Promise<PointSection> {
  const { group, count, offset } = layout.sections[name];
  const size = pointBytes(group);
  const per = Math.floor(staging[0].length / size);
  const section = device.createResident(group, count);
  const copies: (Promise<void> | undefined)[] = [undefined, undefined];
  try {
    for (let first = 0, slot = 0; first < count; first += per, slot ^= 1) {
      await copies[slot];
      const k = Math.min(per, count - first);
      const dst = staging[slot].subarray(0, k * size);
      try {
        await addon.paramsDecode(layout.path, layout.size, name, group, offset + first * size, k, dst, check, check);
      } catch (e) {
        throw asFormatError(e, layout.path, first);
      }
      const copy = device.writeResident(section, first, dst);
      copy.catch(() => {}); // awaited below (or before the buffer is reused)
      copies[slot] = copy;
    }
    await Promise.all(copies);
  } catch (e) {
    await Promise.allSettled(copies.filter((c) => c !== undefined)); // nothing may still read staging
    section.release();
    throw e;
  }
  return section;
}

/**
 * Reads a .params file with the native loader. The verifying key is parsed (and checked unless
 * `checkVerifyingKey: false`) in TypeScript: it is small. The five sections come back as
 * PointSections in the backend's native memory, or resident on `opts.device`. Everything allocated
 * is released when reading fails.
 */
export async function loadParamsFile(path: string, opts: NativeLoadOptions = {}): Promise<Parameters<PointSection>> {
  const backend = opts.backend ?? new NativeBackend();
  const addon = paramsAddon(backend.addon);
  const layout = await inspectParamsFile(path, { backend, expected: opts.expected });
  const vk: VerifyingKey = await decodeVerifyingKey(layout.vkBytes, { checkPoints: opts.checkVerifyingKey ?? true, source: path });
  const check = opts.checkPoints ?? false;
  const chunkBytes = opts.chunkBytes ?? SECTION_CHUNK_BYTES;
  const out: Partial<Record<QuerySection, PointSection>> = {};
  const staging: Uint8Array[] = [];
  try {
    if (opts.device) {
      const bytes = wholePoints(opts.stagingBytes ?? STAGING_BYTES, 'G2', 'stagingBytes') * pointBytes('G2'); // whole G1 and G2 points
      staging.push(opts.device.alloc(bytes), opts.device.alloc(bytes));
    }
    for (const s of PARAMS_SECTIONS) {
      const device = opts.device;
      if (device && opts.hostSections?.includes(s.section)) {
        // kept in the device's pinned host memory and streamed by each proof
        const sec = await loadHostSection(addon, device, layout, s.section, check, chunkBytes);
        out[s.section] = sec;
        device.adoptStreamed?.(sec);
      } else {
        out[s.section] = device
          ? await loadDeviceSection(addon, device, staging, layout, s.section, check)
          : await loadHostSection(addon, backend, layout, s.section, check, chunkBytes);
      }
    }
  } catch (e) {
    for (const s of Object.values(out)) s?.release();
    throw e;
  } finally {
    for (const b of staging) opts.device?.release(b);
  }
  return { vk, h: out.h!, l: out.l!, a: out.a!, bG1: out.b_g1!, bG2: out.b_g2! };
}

export interface LoadParamsOptions {
  checkPoints?: boolean;
  checkVerifyingKey?: boolean;
  /** Refuse the file, before reading any point, unless its counts are these. */
  expected?: ExpectedCounts;
  /** The circuit: a GPU backend plans its device memory for it (Backend.planCircuit) and keeps the
   *  sections the plan streams in pinned host memory. */
  circuit?: CompiledCircuit;
  /** The circuit's name in the plan and its messages (e.g. its circuit id). */
  label?: string;
}

/** The sections a GPU backend's plan for `circuit` keeps in host memory (none without a plan). */
function planHostSections(backend: Backend, circuit: CompiledCircuit | undefined, label?: string): QuerySection[] {
  if (circuit === undefined || typeof backend.planCircuit !== 'function') return [];
  const plan = backend.planCircuit(circuit.shape, circuit.footprint(), label);
  return PARAMS_SECTIONS.map((s) => s.section).filter((name) => plan.sections[name] === 'streamed');
}

let decoder: NativeBackend | undefined;

/**
 * The parameters at `path` for `backend`: official and development files alike. With the CPU addon
 * built, the native loader: a NativeBackend gets host sections in its native memory; a backend that
 * is a DeviceTarget (the CUDA backend) gets every section streamed to its device, the host keeping
 * no copy. Otherwise (the reference backend without the addon) the TypeScript reader, after the
 * same layout check, with the sections in `backend.alloc` memory (each at most 4 GiB).
 */
export async function loadParams(path: string, backend: Backend, opts: LoadParamsOptions = {}): Promise<AnyParameters> {
  if (backend instanceof NativeBackend) return loadParamsFile(path, { ...opts, backend });
  if (isDeviceTarget(backend) && nativeAvailable()) {
    decoder ??= new NativeBackend();
    const hostSections = planHostSections(backend, opts.circuit, opts.label);
    return loadParamsFile(path, { ...opts, backend: decoder, device: backend, hostSections });
  }
  const layout = await readParamsLayout(path);
  if (opts.expected) checkExpectedCounts(layout, opts.expected);
  return readParamsFile(path, { memory: backend, checkPoints: opts.checkPoints, checkVerifyingKey: opts.checkVerifyingKey });
}

/**
 * Checks `count` points of `section` from point `first` with every check (flags, canonical
 * coordinates, on the curve, in the subgroup), decoding them into scratch native memory that is
 * released after (`kiln params --deep`). A bad point throws a ParamsFormatError naming its index in
 * the section.
 */
export async function checkParamsPoints(layout: ParamsLayout, section: QuerySection, first: number, count: number, backend: NativeBackend = new NativeBackend()): Promise<void> {
  const addon = paramsAddon(backend.addon);
  const { group, count: total, offset } = layout.sections[section];
  if (!(Number.isInteger(first) && Number.isInteger(count) && first >= 0 && count >= 0 && first + count <= total)) {
    throw new RangeError(`points ${first}..${first + count} outside section ${section} (${total} points)`);
  }
  if (count === 0) return;
  const size = pointBytes(group);
  const scratch = backend.alloc(count * size);
  try {
    await addon.paramsDecode(layout.path, layout.size, section, group, offset + first * size, count, scratch, true, true);
  } catch (e) {
    throw asFormatError(e, layout.path, first);
  } finally {
    backend.release(scratch);
  }
}
