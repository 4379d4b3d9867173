/**
 * zcash / blstrs point encodings for BLS12-381 (docs/filecoin.md §4), the format of proofs, verifying keys and
 * .params files: the strict slow reference, one point at a time (proofs use it directly; the bulk
 * fast path of parameter files, curve/codec.ts and the backends' decodePoints, is tested against it):
 *
 *   G1 compressed 48 B = x            G1 uncompressed  96 B = x ‖ y
 *   G2 compressed 96 B = x.c1 ‖ x.c0  G2 uncompressed 192 B = x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0
 *
 * Field elements big-endian. The three top bits of the first byte are flags: 0x80 compressed,
 * 0x40 point at infinity (every other bit zero), 0x20 (compressed only) y is the lexicographically
 * largest of ±y (for Fp2: compare c1, then c0).
 *
 * noble's `toBytes`/`fromBytes` already implement this format (checked in test/encoding.test.ts);
 * encoding wraps noble. Decoding adds the strictness noble leaves to the caller — exact length for
 * the form announced by the flag, canonical coordinates (< p), a clear EncodingError — and an
 * explicit `subgroupCheck: false` fast path for bulk parameter loading, where noble's subgroup check
 * (~1 ms per G1 point) would dominate. Conversions to the native affine layout reuse layout.ts.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import {
  FLAG_COMPRESSED,
  FLAG_INFINITY,
  FLAG_SORT,
  FQ_BYTES,
  FQ_MODULUS,
  G1_COMPRESSED_BYTES,
  G1_UNCOMPRESSED_BYTES,
  G2_COMPRESSED_BYTES,
  G2_UNCOMPRESSED_BYTES,
  G1,
  G1_BYTES,
  G2,
  G2_BYTES,
  readFq,
  readG1,
  readG2,
  writeG1,
  writeG2,
  type G1Point,
  type G2Point,
} from '../field/layout.js';

export { G1_COMPRESSED_BYTES, G1_UNCOMPRESSED_BYTES, G2_COMPRESSED_BYTES, G2_UNCOMPRESSED_BYTES };

const Fp = bls12_381.fields.Fp;
const Fp2 = bls12_381.fields.Fp2;
type Fp2Value = { c0: bigint; c1: bigint };
const G1_B = 4n;
const G2_B: Fp2Value = { c0: 4n, c1: 4n }; // 4(1 + u)

/** A byte string that is not a valid encoding of a point of the expected group. */
export class EncodingError extends Error {
  override name = 'EncodingError';
}

export interface DecodeOptions {
  /** Check membership in the prime-order subgroup (default true). The point is always checked to
   *  be on the curve; skip only for data whose integrity is established otherwise (a parameter
   *  file with a known digest), as bellperson's unchecked reader does. */
  subgroupCheck?: boolean;
}

// ---------------------------------------------------------------- encoding (wraps noble)

/** zcash encoding of a G1 point: 48 bytes compressed (default) or 96 uncompressed. */
export function encodeG1(p: G1Point, compressed = true): Uint8Array {
  return p.toBytes(compressed);
}

/** zcash encoding of a G2 point: 96 bytes compressed (default) or 192 uncompressed. */
export function encodeG2(p: G2Point, compressed = true): Uint8Array {
  return p.toBytes(compressed);
}

// ---------------------------------------------------------------- decoding

interface Parsed {
  compressed: boolean;
  infinity: boolean;
  sort: boolean;
}

/** Checks length against flags and the flag combination; returns the flags. */
function parseFlags(bytes: Uint8Array, group: 'G1' | 'G2', width: number): Parsed {
  if (!(bytes instanceof Uint8Array)) throw new EncodingError(`${group}: expected a Uint8Array`);
  if (bytes.length !== width && bytes.length !== 2 * width) {
    throw new EncodingError(
      `${group}: expected ${width} (compressed) or ${2 * width} (uncompressed) bytes, got ${bytes.length}`,
    );
  }
  const top = bytes[0];
  const compressed = (top & FLAG_COMPRESSED) !== 0;
  const infinity = (top & FLAG_INFINITY) !== 0;
  const sort = (top & FLAG_SORT) !== 0;
  const expected = compressed ? width : 2 * width;
  if (bytes.length !== expected) {
    throw new EncodingError(
      `${group}: compression flag says ${compressed ? 'compressed' : 'uncompressed'} (${expected} bytes) but got ${bytes.length} bytes`,
    );
  }
  if (sort && (!compressed || infinity)) {
    throw new EncodingError(`${group}: sign flag set on an ${infinity ? 'infinity' : 'uncompressed'} encoding`);
  }
  if (infinity) {
    if ((top & 0x1f) !== 0 || !allZero(bytes, 1)) {
      throw new EncodingError(`${group}: infinity flag set but the coordinates are not zero`);
    }
  }
  return { compressed, infinity, sort };
}

/** Reads the big-endian field element at `offset` (flag bits of byte 0 cleared), rejecting ≥ p. */
function readCanonicalFp(bytes: Uint8Array, offset: number, group: string): bigint {
  let v = BigInt(bytes[offset] & (offset === 0 ? 0x1f : 0xff));
  for (let k = 1; k < FQ_BYTES; k++) v = (v << 8n) | BigInt(bytes[offset + k]);
  if (v >= FQ_MODULUS) throw new EncodingError(`${group}: coordinate is not canonical (≥ p)`);
  return v;
}

function allZero(bytes: Uint8Array, from: number): boolean {
  for (let k = from; k < bytes.length; k++) if (bytes[k] !== 0) return false;
  return true;
}

/** Lexicographic "largest" test of zcash: y > (p − 1)/2. */
const fpIsLargest = (y: bigint): boolean => y > (FQ_MODULUS - 1n) / 2n;
const fp2IsLargest = (y: Fp2Value): boolean => (y.c1 !== 0n ? fpIsLargest(y.c1) : fpIsLargest(y.c0));

function rethrow(group: string, e: unknown): never {
  const msg = e instanceof Error ? e.message : String(e);
  if (/subgroup/i.test(msg)) throw new EncodingError(`${group}: point is not in the prime-order subgroup`);
  if (/square root|not on curve|equation|compressed|invalid/i.test(msg)) {
    throw new EncodingError(`${group}: point is not on the curve`);
  }
  throw new EncodingError(`${group}: ${msg}`);
}

/**
 * Decodes a zcash G1 encoding (48 bytes compressed or 96 uncompressed, as the flag says), with
 * every check: length, flags, canonical coordinates, on the curve, in the subgroup (unless
 * `subgroupCheck: false`). Throws EncodingError.
 */
export function decodeG1(bytes: Uint8Array, opts: DecodeOptions = {}): G1Point {
  const f = parseFlags(bytes, 'G1', G1_COMPRESSED_BYTES);
  if (f.infinity) return G1.ZERO;
  const x = readCanonicalFp(bytes, 0, 'G1');
  const y = f.compressed ? undefined : readCanonicalFp(bytes, FQ_BYTES, 'G1');
  if (opts.subgroupCheck ?? true) {
    try {
      return G1.fromBytes(bytes); // noble: on curve + subgroup
    } catch (e) {
      rethrow('G1', e);
    }
  }
  const yy = y ?? recoverY1(x, f.sort);
  if (!isOnCurveG1(x, yy)) throw new EncodingError('G1: point is not on the curve');
  return G1.fromAffine({ x, y: yy });
}

/** G2 counterpart of decodeG1 (96 bytes compressed or 192 uncompressed). */
export function decodeG2(bytes: Uint8Array, opts: DecodeOptions = {}): G2Point {
  const f = parseFlags(bytes, 'G2', G2_COMPRESSED_BYTES);
  if (f.infinity) return G2.ZERO;
  const x = { c1: readCanonicalFp(bytes, 0, 'G2'), c0: readCanonicalFp(bytes, FQ_BYTES, 'G2') };
  const y = f.compressed
    ? undefined
    : { c1: readCanonicalFp(bytes, 2 * FQ_BYTES, 'G2'), c0: readCanonicalFp(bytes, 3 * FQ_BYTES, 'G2') };
  if (opts.subgroupCheck ?? true) {
    try {
      return G2.fromBytes(bytes);
    } catch (e) {
      rethrow('G2', e);
    }
  }
  const yy = y ?? recoverY2(x, f.sort);
  if (!isOnCurveG2(x, yy)) throw new EncodingError('G2: point is not on the curve');
  return G2.fromAffine({ x, y: yy });
}

function recoverY1(x: bigint, sort: boolean): bigint {
  let y: bigint;
  try {
    y = Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), G1_B));
  } catch {
    throw new EncodingError('G1: point is not on the curve');
  }
  return fpIsLargest(y) === sort ? y : Fp.neg(y);
}

function recoverY2(x: Fp2Value, sort: boolean): Fp2Value {
  let y: Fp2Value;
  try {
    y = Fp2.sqrt(Fp2.add(Fp2.mul(Fp2.sqr(x), x), G2_B));
  } catch {
    throw new EncodingError('G2: point is not on the curve');
  }
  return fp2IsLargest(y) === sort ? y : Fp2.neg(y);
}

export function isOnCurveG1(x: bigint, y: bigint): boolean {
  return Fp.sqr(y) === Fp.add(Fp.mul(Fp.sqr(x), x), G1_B);
}

export function isOnCurveG2(x: Fp2Value, y: Fp2Value): boolean {
  return Fp2.eql(Fp2.sqr(y), Fp2.add(Fp2.mul(Fp2.sqr(x), x), G2_B));
}

// ---------------------------------------------------------------- native affine layout

/** Reads point `i` of a native G1 buffer checking that it is on the curve but *not* that it is in
 *  the subgroup (layout.ts's readG1 checks both, at ~1 ms per point in noble). For bases already
 *  validated when loaded, e.g. by the reference backend's MSM. */
export function readG1OnCurve(buf: Uint8Array, i: number): G1Point {
  const o = i * G1_BYTES;
  if (allZeroRange(buf, o, G1_BYTES)) return G1.ZERO;
  const x = readFq(buf, o);
  const y = readFq(buf, o + FQ_BYTES);
  if (!isOnCurveG1(x, y)) throw new RangeError(`G1 point ${i} is not on the curve`);
  return G1.fromAffine({ x, y });
}

/** G2 counterpart of readG1OnCurve. */
export function readG2OnCurve(buf: Uint8Array, i: number): G2Point {
  const o = i * G2_BYTES;
  if (allZeroRange(buf, o, G2_BYTES)) return G2.ZERO;
  const x = { c0: readFq(buf, o), c1: readFq(buf, o + FQ_BYTES) };
  const y = { c0: readFq(buf, o + 2 * FQ_BYTES), c1: readFq(buf, o + 3 * FQ_BYTES) };
  if (!isOnCurveG2(x, y)) throw new RangeError(`G2 point ${i} is not on the curve`);
  return G2.fromAffine({ x, y });
}

function allZeroRange(buf: Uint8Array, o: number, n: number): boolean {
  if (o < 0 || o + n > buf.length) throw new RangeError(`point offset ${o} out of range`);
  for (let k = 0; k < n; k++) if (buf[o + k] !== 0) return false;
  return true;
}

/** zcash encoding of point `i` of a native G1 buffer (identity = 96 zero bytes). The point is
 *  checked on the curve, not in the subgroup. */
export function nativeG1ToBytes(buf: Uint8Array, i: number, compressed = true): Uint8Array {
  return encodeG1(readG1OnCurve(buf, i), compressed);
}

export function nativeG2ToBytes(buf: Uint8Array, i: number, compressed = true): Uint8Array {
  return encodeG2(readG2OnCurve(buf, i), compressed);
}

/** Decodes a zcash G1 encoding straight into element `i` of a native buffer. */
export function bytesToNativeG1(bytes: Uint8Array, out: Uint8Array, i: number, opts?: DecodeOptions): void {
  writeG1(out, i, decodeG1(bytes, opts));
}

export function bytesToNativeG2(bytes: Uint8Array, out: Uint8Array, i: number, opts?: DecodeOptions): void {
  writeG2(out, i, decodeG2(bytes, opts));
}

export interface VectorOptions extends DecodeOptions {
  /** The form of every element (default false: uncompressed, as in .params and .vk files). */
  compressed?: boolean;
}

/** Decodes `count` consecutive zcash G1 encodings into a new native buffer (count·96 bytes). */
export function decodeG1Vector(bytes: Uint8Array, count: number, opts: VectorOptions = {}): Uint8Array {
  const width = opts.compressed ? G1_COMPRESSED_BYTES : G1_UNCOMPRESSED_BYTES;
  checkVector(bytes, count, width, 'G1');
  const out = new Uint8Array(count * G1_BYTES);
  for (let i = 0; i < count; i++) {
    const p = decodeVectorElement(() => decodeG1(bytes.subarray(i * width, (i + 1) * width), opts), i);
    writeG1(out, i, p);
  }
  return out;
}

/** Decodes `count` consecutive zcash G2 encodings into a new native buffer (count·192 bytes). */
export function decodeG2Vector(bytes: Uint8Array, count: number, opts: VectorOptions = {}): Uint8Array {
  const width = opts.compressed ? G2_COMPRESSED_BYTES : G2_UNCOMPRESSED_BYTES;
  checkVector(bytes, count, width, 'G2');
  const out = new Uint8Array(count * G2_BYTES);
  for (let i = 0; i < count; i++) {
    const p = decodeVectorElement(() => decodeG2(bytes.subarray(i * width, (i + 1) * width), opts), i);
    writeG2(out, i, p);
  }
  return out;
}

/** Encodes every point of a native G1 buffer, concatenated (uncompressed by default). */
export function encodeG1Vector(native: Uint8Array, compressed = false): Uint8Array {
  const n = vectorCount(native, G1_BYTES, 'G1');
  const width = compressed ? G1_COMPRESSED_BYTES : G1_UNCOMPRESSED_BYTES;
  const out = new Uint8Array(n * width);
  for (let i = 0; i < n; i++) out.set(nativeG1ToBytes(native, i, compressed), i * width);
  return out;
}

/** Encodes every point of a native G2 buffer, concatenated (uncompressed by default). */
export function encodeG2Vector(native: Uint8Array, compressed = false): Uint8Array {
  const n = vectorCount(native, G2_BYTES, 'G2');
  const width = compressed ? G2_COMPRESSED_BYTES : G2_UNCOMPRESSED_BYTES;
  const out = new Uint8Array(n * width);
  for (let i = 0; i < n; i++) out.set(nativeG2ToBytes(native, i, compressed), i * width);
  return out;
}

/** Reads point `i` of a native buffer with full validation (re-exported from layout.ts). */
export { readG1, readG2, writeG1, writeG2 };

function checkVector(bytes: Uint8Array, count: number, width: number, group: string): void {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`${group} vector: bad count ${count}`);
  if (bytes.length !== count * width) {
    throw new EncodingError(`${group} vector: expected ${count} × ${width} = ${count * width} bytes, got ${bytes.length}`);
  }
}

function vectorCount(native: Uint8Array, unit: number, group: string): number {
  if (native.length % unit !== 0) {
    throw new RangeError(`${group} native buffer: length ${native.length} is not a multiple of ${unit}`);
  }
  return native.length / unit;
}

function decodeVectorElement<P>(f: () => P, i: number): P {
  try {
    return f();
  } catch (e) {
    if (e instanceof EncodingError) throw new EncodingError(`element ${i}: ${e.message}`);
    throw e;
  }
}
