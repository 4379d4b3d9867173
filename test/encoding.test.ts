import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import {
  EncodingError,
  bytesToNativeG1,
  bytesToNativeG2,
  decodeG1,
  decodeG1Vector,
  decodeG2,
  decodeG2Vector,
  encodeG1,
  encodeG1Vector,
  encodeG2,
  encodeG2Vector,
  nativeG1ToBytes,
  nativeG2ToBytes,
  readG1OnCurve,
} from '../src/curve/encoding.js';
import { FQ_MODULUS, G1, G2, g1Vector, g2Vector, readG1, readG2 } from '../src/field/layout.js';
import { rng } from './support.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const be48 = (x: bigint) => unhex(x.toString(16).padStart(96, '0'));
const cat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const p = FQ_MODULUS;
const Fp = bls12_381.fields.Fp;

// Published vectors (zcash/blstrs, the task brief).
const G1_GEN_COMPRESSED =
  '97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb';
const G2_GEN_COMPRESSED =
  '93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e' +
  '024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8';
// Generator coordinates (the standard constants), for the uncompressed forms.
const G1X = 0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bbn;
const G1Y = 0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1n;
const G2X0 = 0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8n;
const G2X1 = 0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7en;
const G2Y0 = 0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801n;
const G2Y1 = 0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79ben;

const randomScalar = (i: number): bigint => rng(i + 1)();

test('generator encodings match the published vectors', () => {
  assert.equal(hex(encodeG1(G1.BASE)), G1_GEN_COMPRESSED);
  assert.equal(hex(encodeG2(G2.BASE)), G2_GEN_COMPRESSED);
  assert.equal(hex(encodeG1(G1.BASE, false)), hex(cat(be48(G1X), be48(G1Y))));
  assert.equal(hex(encodeG2(G2.BASE, false)), hex(cat(be48(G2X1), be48(G2X0), be48(G2Y1), be48(G2Y0))));
  assert.ok(decodeG1(unhex(G1_GEN_COMPRESSED)).equals(G1.BASE));
  assert.ok(decodeG2(unhex(G2_GEN_COMPRESSED)).equals(G2.BASE));
  assert.ok(decodeG1(cat(be48(G1X), be48(G1Y))).equals(G1.BASE));
});

test('identity: compressed c0…, uncompressed 40…, round trips', () => {
  const c1 = encodeG1(G1.ZERO);
  const u1 = encodeG1(G1.ZERO, false);
  const c2 = encodeG2(G2.ZERO);
  const u2 = encodeG2(G2.ZERO, false);
  assert.deepEqual([c1.length, u1.length, c2.length, u2.length], [48, 96, 96, 192]);
  assert.equal(hex(c1), 'c0' + '00'.repeat(47));
  assert.equal(hex(u1), '40' + '00'.repeat(95));
  assert.equal(hex(c2), 'c0' + '00'.repeat(95));
  assert.equal(hex(u2), '40' + '00'.repeat(191));
  for (const b of [c1, u1]) assert.ok(decodeG1(b).is0());
  for (const b of [c2, u2]) assert.ok(decodeG2(b).is0());
  // infinity with a non-zero coordinate or with the sign flag is rejected
  const bad = c1.slice();
  bad[47] = 1;
  assert.throws(() => decodeG1(bad), EncodingError);
  const bad2 = c1.slice();
  bad2[0] |= 0x20;
  assert.throws(() => decodeG1(bad2), EncodingError);
  const bad3 = u2.slice();
  bad3[0] |= 0x01;
  assert.throws(() => decodeG2(bad3), EncodingError);
  // all-zero bytes without the infinity flag are not the identity in the zcash format
  assert.throws(() => decodeG1(new Uint8Array(96)), EncodingError);
  assert.throws(() => decodeG1(new Uint8Array(48)), EncodingError);
});

test('round trips on random points agree with noble and with the unchecked path', () => {
  for (let i = 0; i < 6; i++) {
    const a = G1.BASE.multiply(randomScalar(i));
    const b = G2.BASE.multiply(randomScalar(i + 100));
    for (const compressed of [true, false]) {
      const ea = encodeG1(a, compressed);
      const eb = encodeG2(b, compressed);
      assert.ok(decodeG1(ea).equals(a));
      assert.ok(decodeG1(ea, { subgroupCheck: false }).equals(a));
      assert.ok(decodeG2(eb).equals(b));
      assert.ok(decodeG2(eb, { subgroupCheck: false }).equals(b));
      assert.ok(G1.fromBytes(ea).equals(a));
      assert.ok(G2.fromBytes(eb).equals(b));
    }
    // the sign flag selects between ±y
    const na = encodeG1(a.negate());
    const ea = encodeG1(a);
    assert.equal(na[0] ^ ea[0], 0x20);
    assert.deepEqual(na.subarray(1), ea.subarray(1));
    assert.ok(decodeG1(na, { subgroupCheck: false }).equals(a.negate()));
    const nb = encodeG2(b.negate());
    assert.equal(nb[0] ^ encodeG2(b)[0], 0x20);
    assert.ok(decodeG2(nb, { subgroupCheck: false }).equals(b.negate()));
  }
});

test('bad lengths and inconsistent flags are rejected', () => {
  const c = unhex(G1_GEN_COMPRESSED);
  const u = encodeG1(G1.BASE, false);
  for (const len of [0, 1, 47, 49, 95, 97, 192]) {
    assert.throws(() => decodeG1(new Uint8Array(len)), EncodingError, `G1 length ${len}`);
  }
  for (const len of [0, 48, 95, 97, 191, 193]) {
    assert.throws(() => decodeG2(new Uint8Array(len)), EncodingError, `G2 length ${len}`);
  }
  // compressed bytes with the compression flag cleared, and the reverse
  const noFlag = c.slice();
  noFlag[0] &= 0x7f;
  assert.throws(() => decodeG1(noFlag), /uncompressed/);
  const withFlag = u.slice();
  withFlag[0] |= 0x80;
  assert.throws(() => decodeG1(withFlag), /compressed/);
  // sign flag on an uncompressed encoding
  const sorted = u.slice();
  sorted[0] |= 0x20;
  assert.throws(() => decodeG1(sorted), EncodingError);
  // infinity flag on a non-identity point
  const inf = c.slice();
  inf[0] |= 0x40;
  assert.throws(() => decodeG1(inf), EncodingError);
  // G2 bytes given to G1 and the reverse
  assert.throws(() => decodeG1(unhex(G2_GEN_COMPRESSED)), EncodingError);
  assert.throws(() => decodeG2(c), EncodingError);
});

test('flipped coordinate bits are rejected (not on curve or not in subgroup)', () => {
  const c1 = unhex(G1_GEN_COMPRESSED);
  const c2 = unhex(G2_GEN_COMPRESSED);
  const u1 = encodeG1(G1.BASE, false);
  for (const bit of [0, 7, 100, 200, 300, 370, 380]) {
    const f1 = c1.slice();
    f1[47 - (bit >> 3)] ^= 1 << (bit & 7);
    assert.throws(() => decodeG1(f1), EncodingError, `G1 compressed bit ${bit}`);
    const f2 = c2.slice();
    f2[95 - (bit >> 3)] ^= 1 << (bit & 7);
    assert.throws(() => decodeG2(f2), EncodingError, `G2 compressed bit ${bit}`);
    const fu = u1.slice();
    fu[95 - (bit >> 3)] ^= 1 << (bit & 7); // a bit of y: off the curve
    assert.throws(() => decodeG1(fu), /not on the curve/, `G1 uncompressed bit ${bit}`);
    assert.throws(() => decodeG1(fu, { subgroupCheck: false }), /not on the curve/);
  }
});

/** A point on E(Fp) outside the prime-order subgroup, with small x and y small enough that x + p
 *  and y + p still fit in 381 bits (for the non-canonical test). */
function nonSubgroupG1(): { x: bigint; y: bigint } {
  for (let x = 1n; ; x++) {
    let y: bigint;
    try {
      y = Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), 4n));
    } catch {
      continue;
    }
    const small = y > (p - 1n) / 2n ? p - y : y; // the smaller root: sign flag clear
    if (small + p < 1n << 381n) return { x, y: small };
  }
}

test('points outside the subgroup are rejected unless subgroupCheck is false', () => {
  const { x, y } = nonSubgroupG1();
  const comp = be48(x);
  comp[0] |= 0x80;
  assert.throws(() => decodeG1(comp), /subgroup/);
  const pt = decodeG1(comp, { subgroupCheck: false });
  assert.equal(pt.toAffine().x, x);
  assert.equal(pt.toAffine().y, y);
  const unc = cat(be48(x), be48(y));
  assert.throws(() => decodeG1(unc), /subgroup/);
  assert.ok(decodeG1(unc, { subgroupCheck: false }).equals(pt));
});

test('non-canonical coordinates (x + p) are rejected', () => {
  const { x, y } = nonSubgroupG1(); // small x, small y: x + p and y + p still fit in 381 bits
  assert.ok(x + p < 1n << 381n && y + p < 1n << 381n);
  const comp = be48(x + p);
  comp[0] |= 0x80;
  assert.throws(() => decodeG1(comp, { subgroupCheck: false }), /canonical/);
  assert.throws(() => decodeG1(cat(be48(x), be48(y + p)), { subgroupCheck: false }), /canonical/);
  // G2: x.c1 + p in the first half
  const g2 = encodeG2(G2.BASE).slice();
  const c0 = g2.subarray(48);
  const nonCanon = cat(be48(1n + p), c0);
  nonCanon[0] |= 0x80;
  assert.throws(() => decodeG2(nonCanon), /canonical/);
});

test('native layout conversions and vectors', () => {
  const pts1 = [G1.BASE, G1.ZERO, G1.BASE.multiply(randomScalar(7))];
  const pts2 = [G2.ZERO, G2.BASE.multiply(randomScalar(8))];
  const n1 = g1Vector(pts1);
  const n2 = g2Vector(pts2);
  pts1.forEach((pt, i) => {
    assert.deepEqual(nativeG1ToBytes(n1, i), encodeG1(pt));
    assert.deepEqual(nativeG1ToBytes(n1, i, false), encodeG1(pt, false));
    const out = new Uint8Array(96 * 2);
    bytesToNativeG1(encodeG1(pt), out, 1);
    assert.ok(readG1(out, 1).equals(pt));
    assert.ok(readG1OnCurve(n1, i).equals(pt));
  });
  pts2.forEach((pt, i) => {
    assert.deepEqual(nativeG2ToBytes(n2, i), encodeG2(pt));
    const out = new Uint8Array(192);
    bytesToNativeG2(encodeG2(pt, false), out, 0);
    assert.ok(readG2(out, 0).equals(pt));
  });
  for (const compressed of [false, true]) {
    const e1 = encodeG1Vector(n1, compressed);
    assert.equal(e1.length, 3 * (compressed ? 48 : 96));
    assert.deepEqual(decodeG1Vector(e1, 3, { compressed }), n1);
    assert.deepEqual(decodeG1Vector(e1, 3, { compressed, subgroupCheck: false }), n1);
    const e2 = encodeG2Vector(n2, compressed);
    assert.deepEqual(decodeG2Vector(e2, 2, { compressed }), n2);
  }
  assert.throws(() => decodeG1Vector(new Uint8Array(95), 1), EncodingError);
  const e = encodeG1Vector(n1);
  e[96 * 2 + 95] ^= 1;
  assert.throws(() => decodeG1Vector(e, 3), /element 2/);
});
