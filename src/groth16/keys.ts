/**
 * Groth16 keys in bellperson's byte layout (docs/filecoin.md §4), read and written section by section.
 *
 *   .vk     = α_g1 ‖ β_g1 ‖ β_g2 ‖ γ_g2 ‖ δ_g1 ‖ δ_g2 (zcash uncompressed) ‖ u32 BE count ‖ IC points
 *   .params = .vk ‖ five sections, each u32 BE count ‖ uncompressed points:
 *             h (G1), l (G1), a (G1), b_g1 (G1), b_g2 (G2)
 *
 * In memory the verifying key holds noble points (it is small and the verifier pairs them); the
 * five big queries stay in the native layout (src/field/layout.ts) so the prover hands them to the
 * backend as they are. Files are read in chunks through a FileHandle and decoded straight into the
 * destination buffers: a multi-GB file is never held in one JS buffer. Every count is checked
 * against the bytes that remain before anything is allocated, and a bad file is refused with a
 * ParamsFormatError naming the section, never a crash.
 *
 * This reader is the slow twin of the native loader (params-native.ts: the CPU addon reads the file
 * in native memory, for parameters of any size); `readParamsLayout` is the twin of its layout check.
 *
 * Leniency, on purpose: bellperson refuses the identity anywhere in h, l, a, b; here it is accepted
 * in those five sections (it decodes to the all-zero native point), because a development setup
 * over a circuit with an unconstrained auxiliary variable has an identity l point. It is refused in
 * the verifying key, as bellperson does for IC.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { hostChunks, sectionCount, type Section } from '../backend/section.js';
import { G1, G1_BYTES, G2, G2_BYTES, type G1Point, type G2Point } from '../field/layout.js';
import {
  G1_UNCOMPRESSED_BYTES,
  G2_UNCOMPRESSED_BYTES,
  PointEncodingError,
  decodePoints,
  encodeG1Points,
  encodeG2Points,
  encodePoints,
  errorIndex,
  parseG1Uncompressed,
  parseG2Uncompressed,
  pointCodecOf,
  writeG1Uncompressed,
  type PointCodec,
} from '../curve/codec.js';

export interface VerifyingKey {
  alphaG1: G1Point;
  betaG1: G1Point;
  betaG2: G2Point;
  gammaG2: G2Point;
  deltaG1: G1Point;
  deltaG2: G2Point;
  /** One point per public input, ONE first. */
  ic: G1Point[];
}

/** Proving parameters. The five queries are native-layout affine points (96 B per G1 point, 192 B
 *  per G2 point; identity = zero bytes): Uint8Arrays by default (this reader, the development
 *  setup), or PointSections (src/backend/section.ts) from the native loader (params-native.ts),
 *  in native memory in chunks or resident on a GPU, for sections larger than a typed array can
 *  hold. `AnyParameters` accepts either; the prover, the SRS cache and the backends take it. */
export interface Parameters<S extends Section = Uint8Array> {
  vk: VerifyingKey;
  /** τ^i·Z(τ)/δ for i < n − 1 (G1). */
  h: S;
  /** (β·A_j(τ) + α·B_j(τ) + C_j(τ))/δ for every auxiliary variable j (G1). */
  l: S;
  /** A_i(τ) for every input, then for the A-dense auxiliary variables (G1). */
  a: S;
  /** B_i(τ) for the B-dense inputs, then the B-dense auxiliary variables (G1). */
  bG1: S;
  /** The same selection as bG1, in G2. */
  bG2: S;
}

/** Parameters whose sections may be Uint8Arrays or PointSections. */
export type AnyParameters = Parameters<Section>;

/** The five query sections of a .params file, in file order. */
export type QuerySection = 'h' | 'l' | 'a' | 'b_g1' | 'b_g2';
type QueryKey = 'h' | 'l' | 'a' | 'bG1' | 'bG2';
type Group = 'G1' | 'G2';

export const PARAMS_SECTIONS: readonly { section: QuerySection; key: QueryKey; group: Group }[] = [
  { section: 'h', key: 'h', group: 'G1' },
  { section: 'l', key: 'l', group: 'G1' },
  { section: 'a', key: 'a', group: 'G1' },
  { section: 'b_g1', key: 'bG1', group: 'G1' },
  { section: 'b_g2', key: 'bG2', group: 'G2' },
];

/** The fixed points of the verifying key, in file order. */
const VK_POINTS: readonly { section: string; key: Exclude<keyof VerifyingKey, 'ic'>; group: Group }[] = [
  { section: 'vk.alpha_g1', key: 'alphaG1', group: 'G1' },
  { section: 'vk.beta_g1', key: 'betaG1', group: 'G1' },
  { section: 'vk.beta_g2', key: 'betaG2', group: 'G2' },
  { section: 'vk.gamma_g2', key: 'gammaG2', group: 'G2' },
  { section: 'vk.delta_g1', key: 'deltaG1', group: 'G1' },
  { section: 'vk.delta_g2', key: 'deltaG2', group: 'G2' },
];
const VK_IC_SECTION = 'vk.ic';

const COUNT_BYTES = 4;
const wireBytes = (g: Group): number => (g === 'G1' ? G1_UNCOMPRESSED_BYTES : G2_UNCOMPRESSED_BYTES);
const nativeBytes = (g: Group): number => (g === 'G1' ? G1_BYTES : G2_BYTES);

/** Bytes of the six fixed verifying-key points (864). */
export const VK_FIXED_BYTES = VK_POINTS.reduce((t, p) => t + wireBytes(p.group), 0);

/** Size of a verifying key with `icCount` IC points (2 KiB PoRep, 40 IC: 4,708 bytes). */
export function verifyingKeyByteLength(icCount: number): number {
  return VK_FIXED_BYTES + COUNT_BYTES + icCount * G1_UNCOMPRESSED_BYTES;
}

/** Point counts of each query of a Parameters value. */
export function paramsCounts(p: AnyParameters): Record<QuerySection, number> {
  const out = {} as Record<QuerySection, number>;
  for (const s of PARAMS_SECTIONS) out[s.section] = sectionCount(p[s.key], s.group);
  return out;
}

/** Size of the .params file of `p`. */
export function paramsByteLength(p: AnyParameters): number {
  const counts = paramsCounts(p);
  let total = verifyingKeyByteLength(p.vk.ic.length);
  for (const s of PARAMS_SECTIONS) total += COUNT_BYTES + counts[s.section] * wireBytes(s.group);
  return total;
}

/** A malformed, truncated or inconsistent .params / .vk file. */
export class ParamsFormatError extends Error {
  override name = 'ParamsFormatError';
  constructor(
    /** 'vk.alpha_g1' … 'vk.ic', 'h', 'l', 'a', 'b_g1', 'b_g2', or 'end' (trailing bytes). */
    readonly section: string,
    detail: string,
    /** The file path, or '<memory>'. */
    readonly source = '<memory>',
  ) {
    super(`${source}: section ${section}: ${detail}`);
  }
}

export interface ReadOptions {
  /** Check that every point of the five big sections is on the curve and in the subgroup. Slow
   *  (noble, milliseconds per point); default false. Flags and canonical coordinates are always
   *  checked. */
  checkPoints?: boolean;
  /** Check the verifying key's points the same way; default true. */
  checkVerifyingKey?: boolean;
  /** Where the query buffers come from (e.g. the backend, so they live in native memory).
   *  Default: plain Uint8Arrays. Buffers already allocated are released if reading fails. */
  memory?: { alloc(bytes: number): Uint8Array; release(buf: Uint8Array): void };
  /** Converts the five big sections in chunks off the JS thread (multithreaded; NativeBackend is
   *  one). Default: `memory` when it has `decodePoints`/`encodePoints`, else the TypeScript codec.
   *  `null` forces the TypeScript codec. Same checks, same errors either way. */
  codec?: PointCodec | null;
}

export interface WriteOptions {
  /** As ReadOptions.codec: converts the five big sections natively (e.g. a NativeBackend).
   *  Default: the TypeScript codec. The bytes written are the same either way. */
  codec?: PointCodec | null;
}

// ── writing ──────────────────────────────────────────────────────────────────────────────────────

function u32be(n: number): Uint8Array {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`count ${n} does not fit a u32`);
  const b = new Uint8Array(COUNT_BYTES);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

/** The verifying key in bellperson's layout. */
export function encodeVerifyingKey(vk: VerifyingKey): Uint8Array {
  const out = new Uint8Array(verifyingKeyByteLength(vk.ic.length));
  let o = 0;
  for (const p of VK_POINTS) {
    const pt = vk[p.key];
    if (pt.is0()) throw new RangeError(`verifying key: ${p.section} is the identity`);
    out.set(pt.toBytes(false), o);
    o += wireBytes(p.group);
  }
  out.set(u32be(vk.ic.length), o);
  o += COUNT_BYTES;
  // The IC points without noble's validity checks (they were checked when the key was read or made): a 32 GiB
  // WindowPoSt key has 25,841 of them, and toBytes' subgroup check would take ~35 s on the event loop.
  for (const p of vk.ic) {
    if (p.is0()) throw new RangeError('verifying key: an IC point is the identity');
    writeG1Uncompressed(out, o, p.toAffine());
    o += G1_UNCOMPRESSED_BYTES;
  }
  return out;
}

const WRITE_CHUNK_BYTES = 4 << 20;

/** A section's points as pieces of at most `perPiece` points, in file order: (host buffer, first
 *  point in it, count). Checks that every buffer holds whole points. */
function sectionPieces(sec: Section, section: QuerySection, group: Group, perPiece: number): { count: number; pieces: { buf: Uint8Array; i: number; k: number }[] } {
  const nb = nativeBytes(group);
  const pieces: { buf: Uint8Array; i: number; k: number }[] = [];
  let count = 0;
  for (const { bytes: buf } of hostChunks(sec, group)) {
    if (buf.length % nb !== 0) {
      throw new RangeError(`parameters: ${section} has ${buf.length} bytes, not a multiple of ${nb}`);
    }
    const n = buf.length / nb;
    for (let i = 0; i < n; i += perPiece) pieces.push({ buf, i, k: Math.min(perPiece, n - i) });
    count += n;
  }
  return { count, pieces };
}

/** The .params bytes as a sequence of chunks (each valid until the next is pulled). */
function* paramsChunks(p: AnyParameters): Generator<Uint8Array> {
  yield encodeVerifyingKey(p.vk);
  for (const s of PARAMS_SECTIONS) {
    const wb = wireBytes(s.group);
    const perChunk = Math.max(1, Math.floor(WRITE_CHUNK_BYTES / wb));
    const { count, pieces } = sectionPieces(p[s.key], s.section, s.group, perChunk);
    yield u32be(count);
    const scratch = new Uint8Array(Math.min(count, perChunk) * wb);
    for (const { buf, i, k } of pieces) {
      const chunk = scratch.subarray(0, k * wb);
      if (s.group === 'G1') encodeG1Points(buf, i, k, chunk);
      else encodeG2Points(buf, i, k, chunk);
      yield chunk;
    }
  }
}

/** The whole .params file in memory (tests, small circuits). */
export function encodeParams(p: AnyParameters): Uint8Array {
  const out = new Uint8Array(paramsByteLength(p));
  let o = 0;
  for (const c of paramsChunks(p)) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** As paramsChunks, converting through `codec`: chunk i + 1 is encoded (off the JS thread) while
 *  the caller writes chunk i, so each yielded chunk stays valid until the one after next. */
async function* paramsChunksWith(p: AnyParameters, codec: PointCodec): AsyncGenerator<Uint8Array> {
  yield encodeVerifyingKey(p.vk);
  for (const s of PARAMS_SECTIONS) {
    const wb = wireBytes(s.group);
    const perChunk = Math.max(1, Math.floor(WRITE_CHUNK_BYTES / wb));
    const { count, pieces } = sectionPieces(p[s.key], s.section, s.group, perChunk);
    yield u32be(count);
    const scratch = [0, 1].map(() => new Uint8Array(Math.min(count, perChunk) * wb));
    const encode = (j: number, slot: number): Promise<Uint8Array> => {
      const { buf, i, k } = pieces[j];
      const chunk = scratch[slot].subarray(0, k * wb);
      return encodePoints(s.group, buf, i, k, chunk, codec).then(() => chunk);
    };
    let next: Promise<Uint8Array> | undefined = pieces.length > 0 ? encode(0, 0) : undefined;
    for (let j = 0, slot = 0; next !== undefined; j++, slot ^= 1) {
      const chunk = await next;
      next = j + 1 < pieces.length ? encode(j + 1, slot ^ 1) : undefined;
      try {
        yield chunk;
      } finally {
        // Never leave an encode running over a buffer the caller may drop (return / throw).
        if (next) await next.catch(() => {});
      }
    }
  }
}

/** Writes a .params file chunk by chunk (not atomically: see setup.ts for temp + rename). With
 *  `opts.codec` (e.g. a NativeBackend) the points are converted natively, overlapped with the
 *  writes. */
export async function writeParamsFile(path: string, p: AnyParameters, opts: WriteOptions = {}): Promise<void> {
  const codec = opts.codec ?? undefined;
  const fh = await open(path, 'w');
  try {
    if (codec) for await (const c of paramsChunksWith(p, codec)) await writeAll(fh, c);
    else for (const c of paramsChunks(p)) await writeAll(fh, c);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function writeVerifyingKeyFile(path: string, vk: VerifyingKey): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await writeAll(fh, encodeVerifyingKey(vk));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let o = 0;
  while (o < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, o, bytes.length - o);
    o += bytesWritten;
  }
}

// ── reading ──────────────────────────────────────────────────────────────────────────────────────

/** Sequential bytes, from memory or a file. `read` returns exactly n bytes, valid until the next
 *  read (a file source reuses one scratch buffer). */
interface ByteSource {
  readonly name: string;
  readonly size: number;
  readonly position: number;
  read(n: number): Promise<Uint8Array>;
}

class MemorySource implements ByteSource {
  position = 0;
  constructor(
    private readonly bytes: Uint8Array,
    readonly name = '<memory>',
  ) {}
  get size(): number {
    return this.bytes.length;
  }
  async read(n: number): Promise<Uint8Array> {
    if (this.position + n > this.bytes.length) throw new ShortReadError(n, this.bytes.length - this.position);
    const out = this.bytes.subarray(this.position, this.position + n);
    this.position += n;
    return out;
  }
}

class FileSource implements ByteSource {
  position = 0;
  private scratch = new Uint8Array(0);
  constructor(
    private readonly fh: FileHandle,
    readonly name: string,
    readonly size: number,
  ) {}
  async read(n: number): Promise<Uint8Array> {
    if (this.scratch.length < n) this.scratch = new Uint8Array(n);
    const out = this.scratch.subarray(0, n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.fh.read(out, got, n - got, this.position + got);
      if (bytesRead === 0) throw new ShortReadError(n, got); // the file shrank under us
      got += bytesRead;
    }
    this.position += n;
    return out;
  }
}

class ShortReadError extends Error {
  constructor(wanted: number, got: number) {
    super(`unexpected end of data: wanted ${wanted} bytes, ${got} available`);
  }
}

const READ_CHUNK_BYTES = 4 << 20;

async function readCount(src: ByteSource, section: string): Promise<number> {
  const left = src.size - src.position;
  if (left < COUNT_BYTES) {
    throw new ParamsFormatError(section, `truncated: the data ends before the point count (${left} of 4 bytes left)`, src.name);
  }
  const b = await readOrFail(src, COUNT_BYTES, section);
  return new DataView(b.buffer, b.byteOffset, COUNT_BYTES).getUint32(0);
}

async function readOrFail(src: ByteSource, n: number, section: string): Promise<Uint8Array> {
  try {
    return await src.read(n);
  } catch (e) {
    if (e instanceof ShortReadError) throw new ParamsFormatError(section, e.message, src.name);
    throw e;
  }
}

function checkRoom(src: ByteSource, section: string, count: number, pointBytes: number): void {
  const need = count * pointBytes;
  const left = src.size - src.position;
  if (need > left) {
    throw new ParamsFormatError(
      section,
      `count ${count} needs ${need} bytes (${count} × ${pointBytes}) but only ${left} remain: truncated or inconsistent`,
      src.name,
    );
  }
}

function pointError(e: unknown, section: string, index: number, source: string): unknown {
  if (e instanceof PointEncodingError) {
    return new ParamsFormatError(section, `point ${index + (errorIndex(e) ?? 0)}: ${e.message}`, source);
  }
  return e;
}

function parsePoint(bytes: Uint8Array, o: number, group: Group, check: boolean): G1Point | G2Point | null {
  if (group === 'G1') {
    const a = parseG1Uncompressed(bytes, o);
    if (a === null) return null;
    const p = G1.fromAffine(a);
    if (check) assertValid(p);
    return p;
  }
  const a = parseG2Uncompressed(bytes, o);
  if (a === null) return null;
  const p = G2.fromAffine(a);
  if (check) assertValid(p);
  return p;
}

function assertValid(p: G1Point | G2Point): void {
  try {
    p.assertValidity();
  } catch (e) {
    throw new PointEncodingError(`not a valid point (${(e as Error).message})`);
  }
}

async function readVerifyingKeyFrom(src: ByteSource, check: boolean): Promise<VerifyingKey> {
  const left = src.size - src.position;
  if (left < VK_FIXED_BYTES) {
    const section = VK_POINTS.find((_, k) => fixedOffset(k + 1) > left)?.section ?? VK_POINTS[0].section;
    throw new ParamsFormatError(section, `truncated: ${left} bytes, the verifying key's fixed points need ${VK_FIXED_BYTES}`, src.name);
  }
  const head = await readOrFail(src, VK_FIXED_BYTES, VK_POINTS[0].section);
  const vk = {} as Record<string, G1Point | G2Point>;
  let o = 0;
  for (const p of VK_POINTS) {
    let pt: G1Point | G2Point | null;
    try {
      pt = parsePoint(head, o, p.group, check);
    } catch (e) {
      throw pointError(e, p.section, 0, src.name);
    }
    if (pt === null) throw new ParamsFormatError(p.section, 'point at infinity', src.name);
    vk[p.key] = pt;
    o += wireBytes(p.group);
  }
  const count = await readCount(src, VK_IC_SECTION);
  if (count === 0) throw new ParamsFormatError(VK_IC_SECTION, 'count 0: there must be an IC point for ONE at least', src.name);
  checkRoom(src, VK_IC_SECTION, count, G1_UNCOMPRESSED_BYTES);
  const ic: G1Point[] = new Array(count);
  const perChunk = Math.floor(READ_CHUNK_BYTES / G1_UNCOMPRESSED_BYTES);
  for (let i = 0; i < count; i += perChunk) {
    const k = Math.min(perChunk, count - i);
    const bytes = await readOrFail(src, k * G1_UNCOMPRESSED_BYTES, VK_IC_SECTION);
    for (let j = 0; j < k; j++) {
      let pt: G1Point | null;
      try {
        pt = parsePoint(bytes, j * G1_UNCOMPRESSED_BYTES, 'G1', check) as G1Point | null;
      } catch (e) {
        throw pointError(e, VK_IC_SECTION, i + j, src.name);
      }
      if (pt === null) throw new ParamsFormatError(VK_IC_SECTION, `point ${i + j}: point at infinity`, src.name);
      ic[i + j] = pt;
    }
  }
  return { ...(vk as unknown as Omit<VerifyingKey, 'ic'>), ic };
}

function fixedOffset(points: number): number {
  let o = 0;
  for (let k = 0; k < points; k++) o += wireBytes(VK_POINTS[k].group);
  return o;
}

async function readSection(
  src: ByteSource,
  section: QuerySection,
  group: Group,
  check: boolean,
  alloc: (bytes: number) => Uint8Array,
  expectedCount: { count: number; of: QuerySection } | undefined,
  codec: PointCodec | undefined,
): Promise<Uint8Array> {
  const count = await readCount(src, section);
  const wb = wireBytes(group);
  checkRoom(src, section, count, wb);
  if (expectedCount !== undefined && count !== expectedCount.count) {
    throw new ParamsFormatError(
      section,
      `count ${count} differs from the ${expectedCount.of} count ${expectedCount.count} (the same selection of variables)`,
      src.name,
    );
  }
  const out = alloc(count * nativeBytes(group));
  const perChunk = Math.max(1, Math.floor(READ_CHUNK_BYTES / wb));
  for (let i = 0; i < count; i += perChunk) {
    const k = Math.min(perChunk, count - i);
    const bytes = await readOrFail(src, k * wb, section);
    try {
      await decodePoints(group, bytes, k, out, i, check, codec);
    } catch (e) {
      throw pointError(e, section, i, src.name);
    }
  }
  return out;
}

async function readParamsFrom(src: ByteSource, opts: ReadOptions): Promise<Parameters> {
  const check = opts.checkPoints ?? false;
  const mem = opts.memory ?? { alloc: (n: number) => new Uint8Array(n), release: () => {} };
  const codec = opts.codec === null ? undefined : (opts.codec ?? pointCodecOf(opts.memory));
  const taken: Uint8Array[] = [];
  const alloc = (n: number): Uint8Array => {
    const b = mem.alloc(n);
    taken.push(b);
    return b;
  };
  try {
    const vk = await readVerifyingKeyFrom(src, opts.checkVerifyingKey ?? true);
    const out: Partial<Record<QueryKey, Uint8Array>> = {};
    let bG1Count = 0;
    for (const s of PARAMS_SECTIONS) {
      const expected = s.section === 'b_g2' ? { count: bG1Count, of: 'b_g1' as const } : undefined;
      out[s.key] = await readSection(src, s.section, s.group, check, alloc, expected, codec);
      if (s.section === 'b_g1') bG1Count = out[s.key]!.length / G1_BYTES;
    }
    const left = src.size - src.position;
    if (left !== 0) {
      throw new ParamsFormatError('end', `${left} trailing bytes after the b_g2 section: inconsistent counts`, src.name);
    }
    return { vk, h: out.h!, l: out.l!, a: out.a!, bG1: out.bG1!, bG2: out.bG2! };
  } catch (e) {
    for (const b of taken) mem.release(b);
    throw e;
  }
}

/** Parses a verifying key from bytes (trailing bytes are refused). `source` names the bytes in
 *  errors (default '<memory>'). */
export async function decodeVerifyingKey(bytes: Uint8Array, opts: { checkPoints?: boolean; source?: string } = {}): Promise<VerifyingKey> {
  const src = new MemorySource(bytes, opts.source);
  const vk = await readVerifyingKeyFrom(src, opts.checkPoints ?? true);
  const left = src.size - src.position;
  if (left !== 0) throw new ParamsFormatError('end', `${left} trailing bytes after the verifying key`, src.name);
  return vk;
}

/** Parses a whole .params image held in memory. */
export function decodeParams(bytes: Uint8Array, opts: ReadOptions = {}): Promise<Parameters> {
  return readParamsFrom(new MemorySource(bytes), opts);
}

/** Reads a .params file section by section, in chunks. */
export async function readParamsFile(path: string, opts: ReadOptions = {}): Promise<Parameters> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    return await readParamsFrom(new FileSource(fh, path, size), opts);
  } finally {
    await fh.close();
  }
}

/** Reads a .vk file (or the verifying key at the head of a .params file when `prefix` is set). */
export async function readVerifyingKeyFile(
  path: string,
  opts: { checkPoints?: boolean; prefix?: boolean } = {},
): Promise<VerifyingKey> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const src = new FileSource(fh, path, size);
    const vk = await readVerifyingKeyFrom(src, opts.checkPoints ?? true);
    const left = src.size - src.position;
    if (!opts.prefix && left !== 0) {
      throw new ParamsFormatError('end', `${left} trailing bytes after the verifying key`, path);
    }
    return vk;
  } finally {
    await fh.close();
  }
}

// ── layout ───────────────────────────────────────────────────────────────────────────────────────

export interface SectionLayout {
  group: Group;
  count: number;
  /** File offset of the section's first point (after its count field). */
  offset: number;
}

/** Where everything is in a .params file, every count checked against the file size. */
export interface ParamsLayout {
  path: string;
  /** File bytes. */
  size: number;
  /** The verifying key as stored (fixed points, IC count, IC points). */
  vkBytes: Uint8Array;
  icCount: number;
  sections: Record<QuerySection, SectionLayout>;
}

/** More IC points than this are refused by the layout check (the native loader's limit too). */
export const MAX_IC_POINTS = 2 ** 24;

/**
 * The layout of a .params file from its count fields alone (small reads): each count is checked
 * against the bytes that remain, b_g2 against b_g1, and nothing may trail b_g2, before any point is
 * read. The TypeScript twin of the native loader's check (params-native.ts inspectParamsFile): the
 * same refusals with the same messages.
 */
export async function readParamsLayout(path: string): Promise<ParamsLayout> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const src = new FileSource(fh, path, size);
    if (size < VK_FIXED_BYTES) {
      const section = VK_POINTS.find((_, k) => fixedOffset(k + 1) > size)?.section ?? VK_POINTS[0].section;
      throw new ParamsFormatError(section, `truncated: ${size} bytes, the verifying key's fixed points need ${VK_FIXED_BYTES}`, path);
    }
    src.position = VK_FIXED_BYTES;
    const icCount = await readCount(src, VK_IC_SECTION);
    if (icCount === 0) throw new ParamsFormatError(VK_IC_SECTION, 'count 0: there must be an IC point for ONE at least', path);
    checkRoom(src, VK_IC_SECTION, icCount, G1_UNCOMPRESSED_BYTES);
    if (icCount > MAX_IC_POINTS) {
      throw new ParamsFormatError(VK_IC_SECTION, `count ${icCount} exceeds ${MAX_IC_POINTS} public inputs: not the verifying key of a circuit kiln proves`, path);
    }
    const vkLength = verifyingKeyByteLength(icCount);
    src.position = 0;
    const vkBytes = (await readOrFail(src, vkLength, VK_IC_SECTION)).slice();
    const sections = {} as Record<QuerySection, SectionLayout>;
    for (const s of PARAMS_SECTIONS) {
      const count = await readCount(src, s.section);
      checkRoom(src, s.section, count, wireBytes(s.group));
      if (s.section === 'b_g2' && count !== sections.b_g1.count) {
        throw new ParamsFormatError(s.section, `count ${count} differs from the b_g1 count ${sections.b_g1.count} (the same selection of variables)`, path);
      }
      sections[s.section] = { group: s.group, count, offset: src.position };
      src.position += count * wireBytes(s.group);
    }
    if (src.position !== size) {
      throw new ParamsFormatError('end', `${size - src.position} trailing bytes after the b_g2 section: inconsistent counts`, path);
    }
    return { path, size, vkBytes, icCount, sections };
  } finally {
    await fh.close();
  }
}
