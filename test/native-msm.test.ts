/** MSM (G1, G2) and batch addition of the native addon. Small sizes are checked against noble
 *  point arithmetic; large sizes against the independent identity Σ s_i·(t_i·G) = (Σ s_i t_i)·G,
 *  where the bases t_i·G come from fixedBaseMul (itself checked against noble). */
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
  mod,
  readG1,
  readG2,
  type G1Point,
  type G2Point,
} from '../src/field/layout.js';
import { g1Mul, g2Mul, r } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();
const next = rng(21);

/** Bases t_i·G (t random) built natively; returns the buffer and the discrete logs. */
async function g1Bases(n: number): Promise<{ buf: Uint8Array; t: bigint[] }> {
  const t = Array.from({ length: n }, () => next());
  return { buf: await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(t)), t };
}
async function g2Bases(n: number): Promise<{ buf: Uint8Array; t: bigint[] }> {
  const t = Array.from({ length: n }, () => next());
  return { buf: await be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(t)), t };
}

function dot(s: bigint[], t: bigint[]): bigint {
  let acc = 0n;
  for (let i = 0; i < s.length; i++) acc += s[i] * t[i];
  return mod(acc, r);
}

function nobleMsmG1(points: G1Point[], s: bigint[]): G1Point {
  return points.reduce((acc, P, i) => acc.add(g1Mul(P, s[i])), G1.ZERO);
}

test('msmG1 sizes 0–9 and 17 vs noble (random points, edge scalars)', async () => {
  const pts = Array.from({ length: 17 }, () => g1Mul(G1.BASE, next()));
  const pool = [0n, 1n, r - 1n, 2n, next(), next(), next()];
  for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17]) {
    const P = pts.slice(0, n);
    const s = P.map((_, i) => (i % 2 ? next() : pool[(i * 5 + n) % pool.length]));
    const { point, timings } = await be.msmG1(g1Vector(P), frVector(s));
    assert.ok(readG1(point, 0).equals(nobleMsmG1(P, s)), `n = ${n}`);
    assert.equal(typeof timings.classify, 'number');
    assert.equal(typeof timings.batchAdd, 'number');
    assert.equal(typeof timings.msm, 'number');
  }
});

test('msmG1 edge cases: zero scalars, ones, −1, identity bases, repeated bases, P and −P', async () => {
  const A = g1Mul(G1.BASE, next());
  const B = g1Mul(G1.BASE, next());
  const k = next();
  const cases: [string, G1Point[], bigint[]][] = [
    ['all zero scalars', [A, B, A], [0n, 0n, 0n]],
    ['all ones', [A, B, A, A], [1n, 1n, 1n, 1n]],
    ['ones cancel', [A, A.negate(), B], [1n, 1n, 1n]],
    ['minus one', [A, B], [r - 1n, r - 1n]],
    ['identity bases', [G1.ZERO, A, G1.ZERO, B], [5n, k, 1n, 1n]],
    ['P and −P with equal scalars', [A, A.negate(), B, B.negate()], [k, k, 7n, 7n]],
    ['repeated base, same scalar', Array(300).fill(A), Array(300).fill(k)],
    ['repeated base, mixed scalars', Array(300).fill(B), Array.from({ length: 300 }, (_, i) => (i % 3 ? k : 1n))],
    ['result is identity', [A, A], [k, r - k]],
  ];
  for (const [name, P, s] of cases) {
    const { point } = await be.msmG1(g1Vector(P), frVector(s));
    assert.ok(readG1(point, 0).equals(nobleMsmG1(P, s)), name);
  }
});

test('msmG1 large repeated-scalar inputs take the conflict path and stay correct', async () => {
  const { buf, t } = await g1Bases(4096);
  const k = next();
  const s = t.map((_, i) => (i % 5 === 0 ? 1n : i % 7 === 0 ? 0n : k));
  const { point } = await be.msmG1(buf, frVector(s));
  assert.ok(readG1(point, 0).equals(g1Mul(G1.BASE, dot(s, t))));
  // every base the same point with the same scalar
  const same = new Uint8Array(4096 * G1_BYTES);
  for (let i = 0; i < 4096; i++) same.set(buf.subarray(0, G1_BYTES), i * G1_BYTES);
  const r2 = await be.msmG1(same, frVector(Array(4096).fill(k)));
  assert.ok(readG1(r2.point, 0).equals(g1Mul(G1.BASE, mod(t[0] * k * 4096n, r))));
});

test('msmG1 2^k sizes up to 2^16 and odd sizes, via Σ s_i t_i', async () => {
  const { buf, t } = await g1Bases(1 << 16);
  for (const n of [31, 255, 1000, 1 << 10, 3333, 1 << 12, 1 << 14, 1 << 16]) {
    const s = Array.from({ length: n }, (_, i) => (i % 11 === 0 ? 1n : i % 13 === 0 ? 0n : next()));
    const { point } = await be.msmG1(buf.subarray(0, n * G1_BYTES), frVector(s));
    assert.ok(readG1(point, 0).equals(g1Mul(G1.BASE, dot(s, t.slice(0, n)))), `n = ${n}`);
  }
});

test('msmG1 with scalarIndex selects scalars (repeats allowed)', async () => {
  const { buf, t } = await g1Bases(500);
  const scalars = Array.from({ length: 2000 }, (_, i) => (i % 9 === 0 ? 1n : i % 10 === 0 ? 0n : next()));
  const idx = new Uint32Array(500);
  for (let k = 0; k < 500; k++) idx[k] = (k * 37 + (k % 3)) % 2000;
  idx[10] = idx[11];
  const { point } = await be.msmG1(buf, frVector(scalars), { scalarIndex: idx });
  const s = Array.from(idx, (j) => scalars[j]);
  assert.ok(readG1(point, 0).equals(g1Mul(G1.BASE, dot(s, t))));
  await assert.rejects(
    be.msmG1(buf, frVector(scalars), { scalarIndex: idx.map((x, k) => (k === 7 ? 2000 : x)) }),
    (e: unknown) => e instanceof RangeError && /scalarIndex\[7\] = 2000 out of range/.test(e.message),
  );
  await assert.rejects(be.msmG1(buf, frVector(scalars), { scalarIndex: idx.subarray(1) }), RangeError);
});

test('msmG2 small sizes vs noble, larger via Σ s_i t_i', async () => {
  const pts = Array.from({ length: 5 }, () => g2Mul(G2.BASE, next()));
  for (const n of [0, 1, 2, 3, 5]) {
    const P = pts.slice(0, n);
    const s = P.map((_, i) => [next(), 1n, r - 1n, 0n, next()][i]);
    const { point } = await be.msmG2(g2Vector(P), frVector(s));
    const want = P.reduce((acc: G2Point, X, i) => acc.add(g2Mul(X, s[i])), G2.ZERO);
    assert.ok(readG2(point, 0).equals(want), `n = ${n}`);
  }
  const A = pts[0];
  const edge = await be.msmG2(g2Vector([A, A.negate(), A, G2.ZERO]), frVector([7n, 7n, 1n, 9n]));
  assert.ok(readG2(edge.point, 0).equals(A));
  const { buf, t } = await g2Bases(1 << 12);
  for (const n of [7, 64, 1000, 1 << 12]) {
    const s = Array.from({ length: n }, (_, i) => (i % 6 === 0 ? 1n : next()));
    const { point } = await be.msmG2(buf.subarray(0, n * G2_BYTES), frVector(s));
    assert.ok(readG2(point, 0).equals(g2Mul(G2.BASE, dot(s, t.slice(0, n)))), `n = ${n}`);
  }
});

test('batchAddG1 vs noble: repeats, P + (−P), identity bases, sizes 0 … 5000', async () => {
  const { buf, t } = await g1Bases(300);
  const A = readG1(buf, 3);
  const extra = g1Vector([A.negate(), G1.ZERO]);
  const bases = new Uint8Array(buf.length + extra.length);
  bases.set(buf);
  bases.set(extra, buf.length);
  const tt = [...t, mod(-t[3], r), 0n];
  for (const n of [0, 1, 2, 3, 100, 1000, 5000]) {
    const idx = new Uint32Array(n);
    for (let k = 0; k < n; k++) idx[k] = k % 4 === 0 ? 3 : k % 4 === 1 ? 300 : k % 17 === 2 ? 301 : (k * 7) % 300;
    const got = readG1(await be.batchAddG1(bases, idx), 0);
    const want = mod(Array.from(idx).reduce((acc, j) => acc + tt[j], 0n), r);
    assert.ok(got.equals(g1Mul(G1.BASE, want)), `n = ${n}`);
  }
  await assert.rejects(be.batchAddG1(bases, new Uint32Array([0, 302])), RangeError);
});

test('msm rejects bad lengths and types without crashing', async () => {
  await assert.rejects(be.msmG1(new Uint8Array(95), new Uint8Array(32)), RangeError);
  await assert.rejects(be.msmG1(new Uint8Array(96), new Uint8Array(31)), RangeError);
  await assert.rejects(be.msmG1(new Uint8Array(192), new Uint8Array(32)), /2 bases but 1 scalars/);
  await assert.rejects(be.msmG2(new Uint8Array(96), new Uint8Array(32)), RangeError);
  await assert.rejects(be.msmG1(null as unknown as Uint8Array, new Uint8Array(32)), TypeError);
  await assert.rejects(
    be.msmG1(new Uint8Array(96), new Uint8Array(32), { scalarIndex: [0] as unknown as Uint32Array }),
    TypeError,
  );
});

test('msmG1 and msmG2 give the same result with 1, 5 and 8 threads (window groups × point chunks)', async () => {
  const { buf, t } = await g1Bases(5000);
  const g2 = await g2Bases(600);
  const s = Array.from({ length: 5000 }, (_, i) => (i % 4 === 0 ? 1n : next()));
  const want1 = g1Mul(G1.BASE, dot(s, t));
  const want2 = g2Mul(G2.BASE, dot(s.slice(0, 600), g2.t));
  const before = be.capabilities().threads;
  try {
    for (const threads of [1, 5, 8]) {
      be.setThreads(threads);
      const { point } = await be.msmG1(buf, frVector(s));
      assert.ok(readG1(point, 0).equals(want1), `G1, ${threads} threads`);
      const r2 = await be.msmG2(g2.buf, frVector(s.slice(0, 600)));
      assert.ok(readG2(r2.point, 0).equals(want2), `G2, ${threads} threads`);
    }
  } finally {
    be.setThreads(before);
  }
});
