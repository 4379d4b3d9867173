/**
 * The one byte layout shared by TypeScript and the native addon (see native/API.md).
 *
 *  Fr element : 32 bytes, 4 little-endian u64 limbs, Montgomery form (R = 2^256 mod r).
 *  Fq element : 48 bytes, 6 little-endian u64 limbs, Montgomery form (R = 2^384 mod p).
 *  G1 affine  : 96 bytes, x ‖ y (Fq each); the identity is 96 zero bytes ((0,0) is not on the curve).
 *  G2 affine  : 192 bytes, x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1; the identity is 192 zero bytes.
 *               (Native order is c0 first; the zcash *encoding* writes c1 first: see curve/encoding.ts.)
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';

export const FR_MODULUS = bls12_381.fields.Fr.ORDER;
export const FQ_MODULUS = bls12_381.fields.Fp.ORDER;
export const FR_BYTES = 32;
export const FQ_BYTES = 48;
export const G1_BYTES = 96;
export const G2_BYTES = 192;

/** Montgomery constants: R = 2^256 mod r (Fr), R = 2^384 mod p (Fq), and their inverses. Defined
 *  here only (src/r1cs/witness.ts keeps its own copy of the Fr pair for now). */
export const FR_R = (1n << 256n) % FR_MODULUS;
export const FQ_R = (1n << 384n) % FQ_MODULUS;
export const FR_RINV = modInverse(FR_R, FR_MODULUS);
export const FQ_RINV = modInverse(FQ_R, FQ_MODULUS);

/** zcash / blstrs point encodings (docs/filecoin.md §4; curve/encoding.ts, curve/codec.ts): sizes and the
 *  flag bits of the first byte. */
export const G1_COMPRESSED_BYTES = 48;
export const G1_UNCOMPRESSED_BYTES = 96;
export const G2_COMPRESSED_BYTES = 96;
export const G2_UNCOMPRESSED_BYTES = 192;
export const FLAG_COMPRESSED = 0x80;
export const FLAG_INFINITY = 0x40;
export const FLAG_SORT = 0x20;
export const FLAG_MASK = 0xe0;

export function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

export function powMod(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

export function modInverse(a: bigint, m: bigint): bigint {
  let [r0, r1] = [mod(a, m), m];
  let [s0, s1] = [1n, 0n];
  if (r0 === 0n) throw new RangeError('inverse of zero');
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return mod(s0, m);
}

function writeLimbsLE(x: bigint, out: Uint8Array, offset: number, bytes: number): void {
  let v = x;
  for (let i = 0; i < bytes; i++) {
    out[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function readLimbsLE(buf: Uint8Array, offset: number, bytes: number): bigint {
  let v = 0n;
  for (let i = bytes - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[offset + i]);
  return v;
}

/** Writes canonical x (0 ≤ x < r) into `out` at element index `i` in Montgomery form. */
export function writeFr(out: Uint8Array, i: number, x: bigint): void {
  writeLimbsLE(mod(x * FR_R, FR_MODULUS), out, i * FR_BYTES, FR_BYTES);
}

/** Reads element `i` of a Montgomery Fr buffer as a canonical bigint. */
export function readFr(buf: Uint8Array, i: number): bigint {
  return mod(readLimbsLE(buf, i * FR_BYTES, FR_BYTES) * FR_RINV, FR_MODULUS);
}

export function writeFq(out: Uint8Array, offset: number, x: bigint): void {
  writeLimbsLE(mod(x * FQ_R, FQ_MODULUS), out, offset, FQ_BYTES);
}

export function readFq(buf: Uint8Array, offset: number): bigint {
  return mod(readLimbsLE(buf, offset, FQ_BYTES) * FQ_RINV, FQ_MODULUS);
}

/** Packs canonical Fr values into a new Montgomery buffer. */
export function frVector(values: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(values.length * FR_BYTES);
  values.forEach((v, i) => writeFr(out, i, v));
  return out;
}

export function frVectorToBigints(buf: Uint8Array): bigint[] {
  const n = buf.length / FR_BYTES;
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = readFr(buf, i);
  return out;
}

export type G1Point = InstanceType<typeof bls12_381.G1.Point>;
export type G2Point = InstanceType<typeof bls12_381.G2.Point>;
export const G1 = bls12_381.G1.Point;
export const G2 = bls12_381.G2.Point;

export function writeG1(out: Uint8Array, i: number, p: G1Point): void {
  const o = i * G1_BYTES;
  if (p.is0()) {
    out.fill(0, o, o + G1_BYTES);
    return;
  }
  const a = p.toAffine();
  writeFq(out, o, a.x);
  writeFq(out, o + FQ_BYTES, a.y);
}

export function readG1(buf: Uint8Array, i: number): G1Point {
  const o = i * G1_BYTES;
  if (isZero(buf, o, G1_BYTES)) return G1.ZERO;
  const p = G1.fromAffine({ x: readFq(buf, o), y: readFq(buf, o + FQ_BYTES) });
  p.assertValidity();
  return p;
}

export function writeG2(out: Uint8Array, i: number, p: G2Point): void {
  const o = i * G2_BYTES;
  if (p.is0()) {
    out.fill(0, o, o + G2_BYTES);
    return;
  }
  const a = p.toAffine();
  writeFq(out, o, a.x.c0);
  writeFq(out, o + FQ_BYTES, a.x.c1);
  writeFq(out, o + 2 * FQ_BYTES, a.y.c0);
  writeFq(out, o + 3 * FQ_BYTES, a.y.c1);
}

export function readG2(buf: Uint8Array, i: number): G2Point {
  const o = i * G2_BYTES;
  if (isZero(buf, o, G2_BYTES)) return G2.ZERO;
  const x = { c0: readFq(buf, o), c1: readFq(buf, o + FQ_BYTES) };
  const y = { c0: readFq(buf, o + 2 * FQ_BYTES), c1: readFq(buf, o + 3 * FQ_BYTES) };
  const p = G2.fromAffine({ x, y });
  p.assertValidity();
  return p;
}

export function g1Vector(points: readonly G1Point[]): Uint8Array {
  const out = new Uint8Array(points.length * G1_BYTES);
  points.forEach((p, i) => writeG1(out, i, p));
  return out;
}

export function g2Vector(points: readonly G2Point[]): Uint8Array {
  const out = new Uint8Array(points.length * G2_BYTES);
  points.forEach((p, i) => writeG2(out, i, p));
  return out;
}

function isZero(buf: Uint8Array, o: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (buf[o + k] !== 0) return false;
  return true;
}
