/** Point arithmetic of the native addon (G1, G2) against @noble/curves, including the identity,
 *  P + P and P + (−P), and fixed-base multiplication. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NativeBackend } from '../src/backend/native.js';
import {
  G1,
  G1_BYTES,
  G2,
  G2_BYTES,
  frVector,
  g1Vector,
  g2Vector,
  readG1,
  readG2,
  type G1Point,
  type G2Point,
} from '../src/field/layout.js';
import { g1Mul, g2Mul, r } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();

function g1List(buf: Uint8Array): G1Point[] {
  const out: G1Point[] = [];
  for (let i = 0; i < buf.length / G1_BYTES; i++) out.push(readG1(buf, i));
  return out;
}
function g2List(buf: Uint8Array): G2Point[] {
  const out: G2Point[] = [];
  for (let i = 0; i < buf.length / G2_BYTES; i++) out.push(readG2(buf, i));
  return out;
}

const next = rng(11);
const P1 = [G1.BASE, g1Mul(G1.BASE, next()), g1Mul(G1.BASE, next()), g1Mul(G1.BASE, 2n)];
const P2 = [G2.BASE, g2Mul(G2.BASE, next()), g2Mul(G2.BASE, 3n)];

test('G1 add: random, P+P, P+(−P), identity on either side', () => {
  const [A, B, C] = [P1[1], P1[2], P1[3]];
  const pairs: [G1Point, G1Point][] = [
    [A, B], [B, C], [A, A], [C, C], [A, A.negate()], [G1.ZERO, A], [A, G1.ZERO], [G1.ZERO, G1.ZERO],
    [G1.BASE, C], [C, G1.BASE],
  ];
  const got = g1List(be.g1Op('add', g1Vector(pairs.map((x) => x[0])), g1Vector(pairs.map((x) => x[1]))));
  pairs.forEach(([x, y], i) => assert.ok(got[i].equals(x.add(y)), `pair ${i}`));
});

test('G1 double, neg and mul (scalars 0, 1, −1, 2, random)', () => {
  const pts = [...P1, G1.ZERO];
  const dbl = g1List(be.g1Op('double', g1Vector(pts)));
  const neg = g1List(be.g1Op('neg', g1Vector(pts)));
  pts.forEach((x, i) => {
    assert.ok(dbl[i].equals(x.double()), `double ${i}`);
    assert.ok(neg[i].equals(x.negate()), `neg ${i}`);
  });
  const ks = [0n, 1n, r - 1n, 2n, next(), next(), next(), next(), 5n];
  const bases = ks.map((_, i) => pts[i % pts.length]);
  const got = g1List(be.g1Op('mul', g1Vector(bases), frVector(ks)));
  ks.forEach((k, i) => assert.ok(got[i].equals(g1Mul(bases[i], k)), `mul ${i}`));
});

test('G2 add, double, neg, mul', () => {
  const [A, B] = [P2[1], P2[2]];
  const pairs: [G2Point, G2Point][] = [[A, B], [A, A], [A, A.negate()], [G2.ZERO, B], [B, G2.ZERO]];
  const got = g2List(be.g2Op('add', g2Vector(pairs.map((x) => x[0])), g2Vector(pairs.map((x) => x[1]))));
  pairs.forEach(([x, y], i) => assert.ok(got[i].equals(x.add(y)), `add ${i}`));
  const pts = [...P2, G2.ZERO];
  const dbl = g2List(be.g2Op('double', g2Vector(pts)));
  const neg = g2List(be.g2Op('neg', g2Vector(pts)));
  pts.forEach((x, i) => {
    assert.ok(dbl[i].equals(x.double()), `double ${i}`);
    assert.ok(neg[i].equals(x.negate()), `neg ${i}`);
  });
  const ks = [0n, 1n, r - 1n, next(), next()];
  const bases = ks.map((_, i) => pts[i % pts.length]);
  const mul = g2List(be.g2Op('mul', g2Vector(bases), frVector(ks)));
  ks.forEach((k, i) => assert.ok(mul[i].equals(g2Mul(bases[i], k)), `mul ${i}`));
});

test('fixedBaseMulG1 matches noble (edge and random scalars)', async () => {
  const base = P1[1];
  const ks = [0n, 1n, 2n, r - 1n, r - 2n, 1n << 128n, (1n << 255n) % r];
  for (let i = 0; i < 40; i++) ks.push(next());
  const got = g1List(await be.fixedBaseMulG1(g1Vector([base]), frVector(ks)));
  assert.equal(got.length, ks.length);
  ks.forEach((k, i) => assert.ok(got[i].equals(g1Mul(base, k)), `k #${i}`));
  // identity base → all identity; empty scalars → empty result
  const zero = await be.fixedBaseMulG1(new Uint8Array(G1_BYTES), frVector([3n, 4n]));
  assert.deepEqual(zero, new Uint8Array(2 * G1_BYTES));
  assert.equal((await be.fixedBaseMulG1(g1Vector([base]), new Uint8Array(0))).length, 0);
});

test('fixedBaseMulG1 at 2^12 scalars (large windows) spot-checked against noble', async () => {
  const n = 1 << 12;
  const ks = Array.from({ length: n }, () => next());
  const got = await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(ks));
  for (const i of [0, 1, 777, 2048, n - 1]) assert.ok(readG1(got, i).equals(g1Mul(G1.BASE, ks[i])), `#${i}`);
});

test('fixedBaseMulG2 matches noble', async () => {
  const base = P2[1];
  const ks = [0n, 1n, r - 1n, next(), next(), next()];
  const got = g2List(await be.fixedBaseMulG2(g2Vector([base]), frVector(ks)));
  ks.forEach((k, i) => assert.ok(got[i].equals(g2Mul(base, k)), `k #${i}`));
});

test('curve ops reject bad input', async () => {
  assert.throws(() => be.g1Op('add', new Uint8Array(96), new Uint8Array(192)), RangeError);
  assert.throws(() => be.g1Op('mul', new Uint8Array(96), new Uint8Array(64)), RangeError);
  assert.throws(() => be.g1Op('triple' as 'add', new Uint8Array(96)), RangeError);
  assert.throws(() => be.g2Op('neg', new Uint8Array(96)), RangeError);
  await assert.rejects(be.fixedBaseMulG1(new Uint8Array(95), frVector([1n])), RangeError);
  await assert.rejects(be.fixedBaseMulG2(new Uint8Array(192), new Uint8Array(33)), RangeError);
  await assert.rejects(be.fixedBaseMulG1('x' as unknown as Uint8Array, frVector([1n])), TypeError);
});
