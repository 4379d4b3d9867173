/**
 * The fast path of the zcash *uncompressed* point encoding (bellperson's .params and .vk files):
 * conversions to and from the native layout of src/field/layout.ts, without a noble Point object per point:
 * big-endian bytes → bigint → Montgomery limbs (about 1.5 µs per G1 point here, measured), so a
 * section of 10^6 points decodes in a couple of seconds. Point validity (on the curve, in the
 * subgroup) is optional, because it costs far more than the conversion; the flag bits and the
 * canonical range of every coordinate are always checked.
 *
 * zcash uncompressed: G1 = x ‖ y (48 B big-endian each), G2 = x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0;
 * the top three bits of the first byte are flags: compression (must be 0 here), infinity, sort
 * (must be 0 here). The identity is the infinity flag with every other bit zero.
 * Native: coordinates as 6 little-endian u64 limbs in Montgomery form, c0 before c1, identity =
 * all zero bytes.
 *
 * Its strict slow reference is curve/encoding.ts (noble, one point at a time: test/groth16-keys
 * compares them); its native twin is every Backend's decodePoints/encodePoints (PointCodec below:
 * the CPU addon's multithreaded codec, the reference backend's TypeScript one: this file).
 */
import {
  FLAG_COMPRESSED,
  FLAG_INFINITY,
  FLAG_MASK,
  FLAG_SORT,
  FQ_BYTES,
  FQ_MODULUS,
  FQ_R,
  FQ_RINV,
  FR_BYTES,
  FR_MODULUS,
  FR_R,
  FR_RINV,
  G1,
  G1_BYTES,
  G1_UNCOMPRESSED_BYTES,
  G2,
  G2_BYTES,
  G2_UNCOMPRESSED_BYTES,
} from '../field/layout.js';
import { isOnCurveG1, isOnCurveG2 } from './encoding.js';

export { G1_UNCOMPRESSED_BYTES, G2_UNCOMPRESSED_BYTES };

const P = FQ_MODULUS;

/** A problem with one encoded point; the caller adds the section and the index. */
export class PointEncodingError extends Error {
  override name = 'PointEncodingError';
}

/** A DataView over exactly the bytes of `buf` (which may be a view into a larger buffer). */
export function viewOf(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

// ── Fq ───────────────────────────────────────────────────────────────────────────────────────────

/** Big-endian 48-byte integer at `o`; `topMask` clears flag bits of the first byte. */
function readBE48(v: DataView, o: number, topMask: number): bigint {
  // `>>> 0`: with topMask 0xff the 32-bit AND is negative when bit 31 is set (bit 383 of a
  // coordinate), which would yield a negative bigint that passes the `< p` check.
  const hi = (BigInt((v.getUint32(o) & ((topMask << 24) | 0xffffff)) >>> 0) << 32n) | BigInt(v.getUint32(o + 4));
  const a = (hi << 64n) | v.getBigUint64(o + 8);
  const b = (v.getBigUint64(o + 16) << 64n) | v.getBigUint64(o + 24);
  const c = (v.getBigUint64(o + 32) << 64n) | v.getBigUint64(o + 40);
  return (a << 256n) | (b << 128n) | c;
}

function writeBE48(v: DataView, o: number, x: bigint): void {
  let t = x;
  for (let k = 5; k >= 0; k--) {
    v.setBigUint64(o + 8 * k, BigInt.asUintN(64, t));
    t >>= 64n;
  }
}

function readLE48(v: DataView, o: number): bigint {
  let x = 0n;
  for (let k = 5; k >= 0; k--) x = (x << 64n) | v.getBigUint64(o + 8 * k, true);
  return x;
}

function writeLE48(v: DataView, o: number, x: bigint): void {
  let t = x;
  for (let k = 0; k < 6; k++) {
    v.setBigUint64(o + 8 * k, BigInt.asUintN(64, t), true);
    t >>= 64n;
  }
}

/** Canonical Fq → Montgomery limbs. */
function writeFqMont(v: DataView, o: number, x: bigint): void {
  writeLE48(v, o, (x * FQ_R) % P);
}

/** Montgomery limbs → canonical Fq. */
function readFqMont(v: DataView, o: number): bigint {
  return (readLE48(v, o) * FQ_RINV) % P;
}

function isZeroRange(buf: Uint8Array, o: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (buf[o + k] !== 0) return false;
  return true;
}

/** Checks the flag bits of an uncompressed encoding; returns true for the (canonical) identity. */
function uncompressedFlags(src: Uint8Array, o: number, bytes: number): boolean {
  const flags = src[o] & FLAG_MASK;
  if (flags & FLAG_COMPRESSED) throw new PointEncodingError('compression flag set in an uncompressed point');
  if (flags & FLAG_SORT) throw new PointEncodingError('sort flag set in an uncompressed point');
  if (flags & FLAG_INFINITY) {
    if ((src[o] & ~FLAG_MASK) !== 0 || !isZeroRange(src, o + 1, bytes - 1)) {
      throw new PointEncodingError('infinity flag set but the coordinates are not zero');
    }
    return true;
  }
  return false;
}

function canonical(x: bigint, what: string): bigint {
  if (x >= P) throw new PointEncodingError(`${what} is not a canonical field element (≥ p)`);
  return x;
}

// ── single points as bigints (the verifying key, a handful of points) ──────────────────────────

export interface Fq2 {
  c0: bigint;
  c1: bigint;
}

/** Parses one uncompressed G1 point at byte `o`: affine coordinates, or null for the identity.
 *  Checks flags and canonical coordinates only (not the curve or the subgroup). */
export function parseG1Uncompressed(src: Uint8Array, o: number): { x: bigint; y: bigint } | null {
  if (uncompressedFlags(src, o, G1_UNCOMPRESSED_BYTES)) return null;
  const v = viewOf(src);
  const x = canonical(readBE48(v, o, 0x1f), 'x');
  const y = canonical(readBE48(v, o + FQ_BYTES, 0xff), 'y');
  if (x === 0n && y === 0n) throw new PointEncodingError('(0, 0) without the infinity flag');
  return { x, y };
}

/** Writes one affine G1 point (not the identity) uncompressed at byte `o` of `dst`: the inverse of
 *  parseG1Uncompressed, with no curve or subgroup check (noble's toBytes checks both, ~1 ms a point:
 *  35 s for the 25,841 IC points of a 32 GiB WindowPoSt key). */
export function writeG1Uncompressed(dst: Uint8Array, o: number, p: { x: bigint; y: bigint }): void {
  const v = viewOf(dst);
  writeBE48(v, o, p.x);
  writeBE48(v, o + FQ_BYTES, p.y);
}

/** Parses one uncompressed G2 point at byte `o` (c1 before c0 on the wire). */
export function parseG2Uncompressed(src: Uint8Array, o: number): { x: Fq2; y: Fq2 } | null {
  if (uncompressedFlags(src, o, G2_UNCOMPRESSED_BYTES)) return null;
  const v = viewOf(src);
  const x1 = canonical(readBE48(v, o, 0x1f), 'x.c1');
  const x0 = canonical(readBE48(v, o + FQ_BYTES, 0xff), 'x.c0');
  const y1 = canonical(readBE48(v, o + 2 * FQ_BYTES, 0xff), 'y.c1');
  const y0 = canonical(readBE48(v, o + 3 * FQ_BYTES, 0xff), 'y.c0');
  if (x0 === 0n && x1 === 0n && y0 === 0n && y1 === 0n) {
    throw new PointEncodingError('(0, 0) without the infinity flag');
  }
  return { x: { c0: x0, c1: x1 }, y: { c0: y0, c1: y1 } };
}

// ── points ───────────────────────────────────────────────────────────────────────────────────────

/**
 * Decodes `count` uncompressed G1 points from `src` (at byte 0) into `dst` starting at native point
 * index `dstIndex`. With `checkPoints`, each point is checked to be on the curve and in the
 * subgroup (slow: noble); with 'curve', on the curve only. A bad point throws a PointEncodingError
 * carrying its index in this call.
 */
export function decodeG1Points(
  src: Uint8Array,
  count: number,
  dst: Uint8Array,
  dstIndex: number,
  checkPoints: boolean | 'curve',
): void {
  const sv = viewOf(src);
  const dv = viewOf(dst);
  for (let k = 0; k < count; k++) {
    const so = k * G1_UNCOMPRESSED_BYTES;
    const dOff = (dstIndex + k) * G1_BYTES;
    try {
      if (uncompressedFlags(src, so, G1_UNCOMPRESSED_BYTES)) {
        dst.fill(0, dOff, dOff + G1_BYTES);
        continue;
      }
      const x = canonical(readBE48(sv, so, 0x1f), 'x');
      const y = canonical(readBE48(sv, so + FQ_BYTES, 0xff), 'y');
      if (x === 0n && y === 0n) throw new PointEncodingError('(0, 0) without the infinity flag');
      if (checkPoints === 'curve') {
        if (!isOnCurveG1(x, y)) throw new PointEncodingError('not a valid G1 point (not on the curve)');
      } else if (checkPoints) checkG1(x, y);
      writeFqMont(dv, dOff, x);
      writeFqMont(dv, dOff + FQ_BYTES, y);
    } catch (e) {
      throw withIndex(e, k);
    }
  }
}

/** As decodeG1Points, for G2 (zcash writes c1 before c0; native stores c0 first). */
export function decodeG2Points(
  src: Uint8Array,
  count: number,
  dst: Uint8Array,
  dstIndex: number,
  checkPoints: boolean | 'curve',
): void {
  const sv = viewOf(src);
  const dv = viewOf(dst);
  for (let k = 0; k < count; k++) {
    const so = k * G2_UNCOMPRESSED_BYTES;
    const dOff = (dstIndex + k) * G2_BYTES;
    try {
      if (uncompressedFlags(src, so, G2_UNCOMPRESSED_BYTES)) {
        dst.fill(0, dOff, dOff + G2_BYTES);
        continue;
      }
      const x1 = canonical(readBE48(sv, so, 0x1f), 'x.c1');
      const x0 = canonical(readBE48(sv, so + FQ_BYTES, 0xff), 'x.c0');
      const y1 = canonical(readBE48(sv, so + 2 * FQ_BYTES, 0xff), 'y.c1');
      const y0 = canonical(readBE48(sv, so + 3 * FQ_BYTES, 0xff), 'y.c0');
      if (x0 === 0n && x1 === 0n && y0 === 0n && y1 === 0n) {
        throw new PointEncodingError('(0, 0) without the infinity flag');
      }
      if (checkPoints === 'curve') {
        if (!isOnCurveG2({ c0: x0, c1: x1 }, { c0: y0, c1: y1 })) throw new PointEncodingError('not a valid G2 point (not on the curve)');
      } else if (checkPoints) checkG2(x0, x1, y0, y1);
      writeFqMont(dv, dOff, x0);
      writeFqMont(dv, dOff + FQ_BYTES, x1);
      writeFqMont(dv, dOff + 2 * FQ_BYTES, y0);
      writeFqMont(dv, dOff + 3 * FQ_BYTES, y1);
    } catch (e) {
      throw withIndex(e, k);
    }
  }
}

/** Encodes `count` native G1 points starting at index `srcIndex` into `dst` (uncompressed). */
export function encodeG1Points(src: Uint8Array, srcIndex: number, count: number, dst: Uint8Array): void {
  const sv = viewOf(src);
  const dv = viewOf(dst);
  for (let k = 0; k < count; k++) {
    const so = (srcIndex + k) * G1_BYTES;
    const dOff = k * G1_UNCOMPRESSED_BYTES;
    if (isZeroRange(src, so, G1_BYTES)) {
      dst.fill(0, dOff, dOff + G1_UNCOMPRESSED_BYTES);
      dst[dOff] = FLAG_INFINITY;
      continue;
    }
    writeBE48(dv, dOff, readFqMont(sv, so));
    writeBE48(dv, dOff + FQ_BYTES, readFqMont(sv, so + FQ_BYTES));
  }
}

/** Encodes `count` native G2 points starting at index `srcIndex` into `dst` (uncompressed). */
export function encodeG2Points(src: Uint8Array, srcIndex: number, count: number, dst: Uint8Array): void {
  const sv = viewOf(src);
  const dv = viewOf(dst);
  for (let k = 0; k < count; k++) {
    const so = (srcIndex + k) * G2_BYTES;
    const dOff = k * G2_UNCOMPRESSED_BYTES;
    if (isZeroRange(src, so, G2_BYTES)) {
      dst.fill(0, dOff, dOff + G2_UNCOMPRESSED_BYTES);
      dst[dOff] = FLAG_INFINITY;
      continue;
    }
    writeBE48(dv, dOff, readFqMont(sv, so + FQ_BYTES)); // x.c1
    writeBE48(dv, dOff + FQ_BYTES, readFqMont(sv, so)); // x.c0
    writeBE48(dv, dOff + 2 * FQ_BYTES, readFqMont(sv, so + 3 * FQ_BYTES)); // y.c1
    writeBE48(dv, dOff + 3 * FQ_BYTES, readFqMont(sv, so + 2 * FQ_BYTES)); // y.c0
  }
}

function checkG1(x: bigint, y: bigint): void {
  try {
    G1.fromAffine({ x, y }).assertValidity();
  } catch (e) {
    throw new PointEncodingError(`not a valid G1 point (${(e as Error).message})`);
  }
}

function checkG2(x0: bigint, x1: bigint, y0: bigint, y1: bigint): void {
  try {
    G2.fromAffine({ x: { c0: x0, c1: x1 }, y: { c0: y0, c1: y1 } }).assertValidity();
  } catch (e) {
    throw new PointEncodingError(`not a valid G2 point (${(e as Error).message})`);
  }
}

function withIndex(e: unknown, k: number): Error {
  if (e instanceof PointEncodingError) {
    const err = new PointEncodingError(e.message);
    (err as PointEncodingError & { index: number }).index = k;
    return err;
  }
  return e as Error;
}

/** Index (within the decode call) of the point a PointEncodingError is about, if known. */
export function errorIndex(e: PointEncodingError): number | undefined {
  return (e as PointEncodingError & { index?: number }).index;
}

// ── Fr ───────────────────────────────────────────────────────────────────────────────────────────

/** Writes canonical x (0 ≤ x < r) as Montgomery limbs at element `i` (4 u64 writes, no byte loop). */
export function writeFrFast(v: DataView, i: number, x: bigint): void {
  let t = (x * FR_R) % FR_MODULUS;
  const o = i * FR_BYTES;
  for (let k = 0; k < 4; k++) {
    v.setBigUint64(o + 8 * k, BigInt.asUintN(64, t), true);
    t >>= 64n;
  }
}

/** Reads element `i` of a Montgomery Fr buffer as a canonical bigint. */
export function readFrFast(v: DataView, i: number): bigint {
  const o = i * FR_BYTES;
  const x =
    (v.getBigUint64(o + 24, true) << 192n) |
    (v.getBigUint64(o + 16, true) << 128n) |
    (v.getBigUint64(o + 8, true) << 64n) |
    v.getBigUint64(o, true);
  return (x * FR_RINV) % FR_MODULUS;
}

// ── native fast path ─────────────────────────────────────────────────────────────────────────────

/** The point codec of the Backend contract (backend/backend.ts extends it): whole chunks of
 *  uncompressed points converted at once — off the JS thread on the CPU addon (native/API.md),
 *  with the functions above on the reference backend. Same checks and the same reasons either way.
 *  A bad point rejects with a PointEncodingError carrying `index`, or (the addons) an Error with
 *  `code: 'KILN_BAD_POINT'`, `pointIndex` and `reason`. */
export type PointGroup = 'G1' | 'G2';

export interface PointCodec {
  decodePoints(
    group: PointGroup,
    src: Uint8Array,
    dst: Uint8Array,
    checkOnCurve: boolean,
    checkSubgroup?: boolean,
  ): Promise<void>;
  encodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array): Promise<void>;
}

/** `x` as a PointCodec when it has both methods (every Backend does; a plain allocator does not). */
export function pointCodecOf(x: unknown): PointCodec | undefined {
  if (typeof x !== 'object' || x === null) return undefined;
  const c = x as Partial<PointCodec>;
  return typeof c.decodePoints === 'function' && typeof c.encodePoints === 'function' ? (c as PointCodec) : undefined;
}

/**
 * decodeG1Points / decodeG2Points through `codec` when given (multithreaded, off the JS thread),
 * else the TypeScript path. With `checkPoints` both check the curve and the subgroup. A bad point
 * throws a PointEncodingError with its index in this call either way.
 */
export async function decodePoints(
  group: 'G1' | 'G2',
  src: Uint8Array,
  count: number,
  dst: Uint8Array,
  dstIndex: number,
  checkPoints: boolean,
  codec?: PointCodec,
): Promise<void> {
  if (!codec) {
    if (group === 'G1') decodeG1Points(src, count, dst, dstIndex, checkPoints);
    else decodeG2Points(src, count, dst, dstIndex, checkPoints);
    return;
  }
  const wb = group === 'G1' ? G1_UNCOMPRESSED_BYTES : G2_UNCOMPRESSED_BYTES;
  const nb = group === 'G1' ? G1_BYTES : G2_BYTES;
  try {
    await codec.decodePoints(
      group,
      src.subarray(0, count * wb),
      dst.subarray(dstIndex * nb, (dstIndex + count) * nb),
      checkPoints,
      checkPoints,
    );
  } catch (e) {
    if (e instanceof PointEncodingError) throw e;
    const bad = e as { code?: unknown; pointIndex?: unknown; reason?: unknown };
    if (bad && bad.code === 'KILN_BAD_POINT' && typeof bad.pointIndex === 'number') {
      const err = new PointEncodingError(typeof bad.reason === 'string' ? bad.reason : String((e as Error).message));
      (err as PointEncodingError & { index: number }).index = bad.pointIndex;
      throw err;
    }
    throw e;
  }
}

/** encodeG1Points / encodeG2Points through `codec` when given, else the TypeScript path. */
export async function encodePoints(
  group: 'G1' | 'G2',
  src: Uint8Array,
  srcIndex: number,
  count: number,
  dst: Uint8Array,
  codec?: PointCodec,
): Promise<void> {
  if (!codec) {
    if (group === 'G1') encodeG1Points(src, srcIndex, count, dst);
    else encodeG2Points(src, srcIndex, count, dst);
    return;
  }
  const wb = group === 'G1' ? G1_UNCOMPRESSED_BYTES : G2_UNCOMPRESSED_BYTES;
  const nb = group === 'G1' ? G1_BYTES : G2_BYTES;
  await codec.encodePoints(group, src.subarray(srcIndex * nb, (srcIndex + count) * nb), dst.subarray(0, count * wb));
}

/** The PointCodec pair in TypeScript (the reference backend's decodePoints / encodePoints): exactly
 *  as many points as `dst` (decode) or `src` (encode) holds; lengths are checked (RangeError). */
export const typescriptPointCodec: PointCodec = {
  async decodePoints(group, src, dst, checkOnCurve, checkSubgroup = false) {
    const { wire, native } = pointSizes(group, 'decodePoints');
    if (dst.length % native !== 0 || src.length !== (dst.length / native) * wire) {
      throw new RangeError(`decodePoints: ${src.length} bytes of ${group} points do not fill ${dst.length / native} native points`);
    }
    const count = dst.length / native;
    const check = checkSubgroup ? true : checkOnCurve ? 'curve' : false;
    if (group === 'G1') decodeG1Points(src, count, dst, 0, check);
    else decodeG2Points(src, count, dst, 0, check);
  },
  async encodePoints(group, src, dst) {
    const { wire, native } = pointSizes(group, 'encodePoints');
    if (src.length % native !== 0 || dst.length !== (src.length / native) * wire) {
      throw new RangeError(`encodePoints: ${src.length} native bytes of ${group} points do not fill ${dst.length} encoded bytes`);
    }
    const count = src.length / native;
    if (group === 'G1') encodeG1Points(src, 0, count, dst);
    else encodeG2Points(src, 0, count, dst);
  },
};

function pointSizes(group: string, fn: string): { wire: number; native: number } {
  if (group === 'G1') return { wire: G1_UNCOMPRESSED_BYTES, native: G1_BYTES };
  if (group === 'G2') return { wire: G2_UNCOMPRESSED_BYTES, native: G2_BYTES };
  throw new RangeError(`${fn}: group must be 'G1' or 'G2', got ${String(group)}`);
}
