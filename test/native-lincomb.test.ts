/** lincombG1 / lincombG2 (the proof's assembly: a few points times full-width scalars) of the native
 *  addon against the reference backend and against noble directly: random and edge scalars (0, 1,
 *  −1, 2, equal scalars), identity bases, P next to ±P, sizes 0 … 256, and bad arguments. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NativeBackend } from '../src/backend/native.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import { G1, G2, frVector, g1Vector, g2Vector, readG1, readG2, type G1Point, type G2Point } from '../src/field/layout.js';
import { g1Mul, g2Mul, r } from './native-helpers.js';
import { rng } from './support.js';

const native = new NativeBackend();
const ref = new ReferenceBackend();
const next = rng(2024);

function nobleG1(ps: G1Point[], ks: bigint[]): G1Point {
  return ps.reduce((acc, p, i) => acc.add(g1Mul(p, ks[i])), G1.ZERO);
}
function nobleG2(ps: G2Point[], ks: bigint[]): G2Point {
  return ps.reduce((acc, p, i) => acc.add(g2Mul(p, ks[i])), G2.ZERO);
}

function randomG1(n: number): G1Point[] {
  return Array.from({ length: n }, () => g1Mul(G1.BASE, next()));
}

test('lincombG1 matches noble and the reference backend (random, edges, identity, ±P)', async () => {
  const P = randomG1(4);
  const cases: [G1Point[], bigint[]][] = [
    [[], []],
    [[P[0]], [0n]],
    [[P[0]], [1n]],
    [[P[0]], [r - 1n]],
    [[P[0]], [2n]],
    [[P[0]], [next()]],
    [[G1.ZERO], [next()]],
    [[P[0], P[0]], [5n, 5n]], // equal scalars and bases: a doubling inside
    [[P[0], P[0].negate()], [7n, 7n]], // cancels to the identity
    [[P[0], P[1], P[2]], [next(), next(), next()]],
    [[P[0], G1.ZERO, P[1], P[2], P[3]], [next(), next(), 1n, 0n, r - 1n]],
    [[P[0], P[1]], [1n, 1n]],
    [[P[0], P[0]], [1n, r - 1n]], // ones-sum and a -1 multiple cancel
    [[P[0], P[1], P[2], P[3]], [0xffffffffn, 1n << 254n, (1n << 128n) + 3n, r - 2n]],
  ];
  for (const [ps, ks] of cases) {
    const want = nobleG1(ps, ks);
    const bases = g1Vector(ps);
    const sc = frVector(ks);
    const got = readG1(await native.lincombG1(bases, sc), 0);
    const got2 = readG1(await ref.lincombG1(bases, sc), 0);
    assert.ok(got.equals(want), `native, ${ps.length} points, scalars ${ks.join(',')}`);
    assert.ok(got2.equals(want), `reference, ${ps.length} points`);
  }
});

test('lincombG1 at sizes 1, 2, 7, 64 and 256 (the limit) equals msmG1 of the same points', async () => {
  for (const n of [1, 2, 7, 64, 256]) {
    const ps = randomG1(Math.min(n, 16));
    const bases = g1Vector(Array.from({ length: n }, (_, i) => ps[i % ps.length]));
    const sc = frVector(Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 1n : i % 7 === 0 ? 0n : next())));
    const lc = readG1(await native.lincombG1(bases, sc), 0);
    const msm = readG1((await native.msmG1(bases, sc)).point, 0);
    assert.ok(lc.equals(msm), `n = ${n}`);
  }
});

test('lincombG2 matches noble and the reference backend', async () => {
  const Q = [g2Mul(G2.BASE, next()), g2Mul(G2.BASE, next()), g2Mul(G2.BASE, 3n)];
  const cases: [G2Point[], bigint[]][] = [
    [[], []],
    [[Q[0]], [0n]],
    [[Q[0]], [1n]],
    [[Q[0]], [r - 1n]],
    [[G2.ZERO, Q[1]], [next(), next()]],
    [[Q[0], Q[0]], [9n, 9n]],
    [[Q[0], Q[0].negate()], [next(), 0n]],
    [[Q[0], Q[1], Q[2]], [1n, next(), 1n]],
    [[Q[0], Q[1], Q[2]], [next(), next(), next()]],
  ];
  for (const [ps, ks] of cases) {
    const want = nobleG2(ps, ks);
    const bases = g2Vector(ps);
    const sc = frVector(ks);
    assert.ok(readG2(await native.lincombG2(bases, sc), 0).equals(want), `native, ${ks.join(',')}`);
    assert.ok(readG2(await ref.lincombG2(bases, sc), 0).equals(want), `reference, ${ks.join(',')}`);
  }
});

test('lincomb rejects mismatched lengths, too many points and wrong types', async () => {
  const P = g1Vector(randomG1(2));
  for (const be of [native, ref]) {
    await assert.rejects(be.lincombG1(P, frVector([1n])), RangeError, be.name);
    await assert.rejects(be.lincombG1(P.subarray(0, 95), frVector([1n])), RangeError, be.name);
    await assert.rejects(be.lincombG1(new Uint8Array(257 * 96), new Uint8Array(257 * 32)), RangeError, be.name);
    await assert.rejects(be.lincombG2(new Uint8Array(192), new Uint8Array(31)), RangeError, be.name);
  }
  await assert.rejects(native.lincombG1(new Uint32Array(24) as unknown as Uint8Array, frVector([1n])), TypeError);
});
