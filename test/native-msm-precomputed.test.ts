/** MSM over precomputed window shifts of fixed bases (native/src/msm/precomputed.hpp) and the
 *  NativeBackend policy around it: the table against noble, the precomputed MSM against the plain
 *  MSM, noble (small sizes) and the identity Σ s_i·(t_i·G) = (Σ s_i t_i)·G (large sizes), edge
 *  scalars and bases, both the precomputed and the plain-fallback path, thread counts, the memory
 *  cap, release and changed bases. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NativeBackend } from '../src/backend/native.js';
import { G1, G1_BYTES, G2, G2_BYTES, frVector, g1Vector, g2Vector, mod, readG1, readG2, type G1Point } from '../src/field/layout.js';
import { g1Mul, g2Mul, r } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();
const ad = be.addon;
const next = rng(77);

function dot(s: bigint[], t: bigint[]): bigint {
  let acc = 0n;
  for (let i = 0; i < s.length; i++) acc += s[i] * t[i];
  return mod(acc, r);
}

async function g1Bases(n: number): Promise<{ buf: Uint8Array; t: bigint[] }> {
  const t = Array.from({ length: n }, () => next());
  return { buf: await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(t)), t };
}

async function table(group: 'G1' | 'G2', bases: Uint8Array, c: number): Promise<Uint8Array> {
  const size = group === 'G1' ? G1_BYTES : G2_BYTES;
  const t = new Uint8Array((bases.length / size) * Math.ceil(256 / c) * size);
  if (group === 'G1') await ad.msmPrecomputeG1(bases, c, t);
  else await ad.msmPrecomputeG2(bases, c, t);
  return t;
}

/** The bytes a table holds for `want` (its M52 form on the AVX-512 IFMA path, see msmTableForm). */
function tableEntry(group: 'G1' | 'G2', t: Uint8Array, at: number): Uint8Array {
  const size = group === 'G1' ? G1_BYTES : G2_BYTES;
  return t.subarray(at * size, (at + 1) * size);
}

test('msmPrecomputeG1/G2: entry k·W + j is 2^(c·j)·P_k (identity rows stay identity)', async () => {
  const P = [g1Mul(G1.BASE, next()), G1.ZERO, G1.BASE, g1Mul(G1.BASE, r - 1n)];
  for (const c of [2, 5, 8, 13, 16]) {
    const W = Math.ceil(256 / c);
    const t = await table('G1', g1Vector(P), c);
    for (let k = 0; k < P.length; k++)
      for (const j of [0, 1, 2, W - 1]) {
        const want = ad.msmTableForm('G1', g1Vector([g1Mul(P[k], 1n << BigInt(c * j))]));
        assert.deepEqual(tableEntry('G1', t, k * W + j), want, `c = ${c}, k = ${k}, j = ${j}`);
      }
  }
  const Q = [g2Mul(G2.BASE, next()), G2.ZERO];
  const c = 9, W = Math.ceil(256 / c);
  const t2 = await table('G2', g2Vector(Q), c);
  for (let k = 0; k < Q.length; k++)
    for (const j of [0, 1, W - 1]) {
      const want = ad.msmTableForm('G2', g2Vector([g2Mul(Q[k], 1n << BigInt(c * j))]));
      assert.deepEqual(tableEntry('G2', t2, k * W + j), want, `G2 k = ${k}, j = ${j}`);
    }
});

test('msmTableForm: the identity without IFMA, an invertible re-encoding with it', () => {
  const A = g1Vector([g1Mul(G1.BASE, next())]);
  const f = ad.msmTableForm('G1', A);
  if (ad.capabilities().ifma) assert.notDeepEqual(f, A);
  else assert.deepEqual(f, A);
  assert.deepEqual(ad.msmTableForm('G1', g1Vector([G1.ZERO])), g1Vector([G1.ZERO]));
  assert.throws(() => ad.msmTableForm('G1', new Uint8Array(95)), /96 bytes/);
  assert.throws(() => ad.msmTableForm('G3' as 'G1', A), /group must be/);
});

test('msmPrecomputedG1 equals noble and the plain MSM on small inputs with edge scalars and bases', async () => {
  const A = g1Mul(G1.BASE, next());
  const B = g1Mul(G1.BASE, next());
  const k = next();
  const cases: [string, G1Point[], bigint[]][] = [
    ['size 1', [A], [k]],
    ['size 2, −1 and 1', [A, B], [r - 1n, 1n]],
    ['zero scalars', [A, B, A], [0n, 0n, 0n]],
    ['identity bases', [G1.ZERO, A, G1.ZERO, B], [5n, k, 1n, 2n]],
    ['P and −P, equal scalars', [A, A.negate(), B, B.negate()], [k, k, 7n, 7n]],
    ['equal scalars, repeated base', Array(600).fill(A), Array(600).fill(k)],
    ['odd size, mixed', Array.from({ length: 7 }, (_, i) => (i % 2 ? A : B)), [1n, 0n, k, r - 1n, 2n, k, 3n]],
    ['result is identity', [A, A], [k, r - k]],
  ];
  for (const c of [4, 12, 16]) {
    for (const [name, P, s] of cases) {
      const bases = g1Vector(P);
      const want = P.reduce((acc, X, i) => acc.add(g1Mul(X, s[i])), G1.ZERO);
      const t = await table('G1', bases, c);
      const pre = await ad.msmPrecomputedG1(t, c, frVector(s));
      const plain = await ad.msmG1(bases, frVector(s));
      assert.ok(readG1(pre.point, 0).equals(want), `${name}, c = ${c}`);
      assert.deepEqual(pre.point, plain.point, `${name}, c = ${c}`);
    }
  }
});

test('msmPrecomputedG1 at sizes 1000 … 2^14: both paths, scalarIndex, threads', async () => {
  const { buf, t } = await g1Bases(1 << 14);
  const seen = new Set<boolean>();
  for (const n of [1000, 4097, 1 << 14]) {
    const bases = buf.subarray(0, n * G1_BYTES);
    const c = ad.msmPrecomputeWindow(n);
    const tab = await table('G1', bases, c);
    // full scalars (the table path), then mostly 0/1 with a few full ones (the plain fallback)
    for (const dense of [true, false]) {
      const s = Array.from({ length: n }, (_, i) =>
        dense ? (i % 11 === 0 ? 1n : i % 13 === 0 ? 0n : next()) : i % 50 === 0 ? next() : BigInt(i % 2),
      );
      const res = await ad.msmPrecomputedG1(tab, c, frVector(s));
      seen.add(res.timings.precomputed);
      assert.equal(res.timings.precomputed, dense, `n = ${n}, dense = ${dense}`);
      assert.ok(readG1(res.point, 0).equals(g1Mul(G1.BASE, dot(s, t.slice(0, n)))), `n = ${n}, dense = ${dense}`);
      assert.equal(res.timings.ones + res.timings.others, s.filter((x) => x !== 0n).length);
    }
    // scalarIndex with repeats, into a longer scalar vector
    const scalars = Array.from({ length: n + 17 }, () => next());
    const idx = new Uint32Array(n);
    for (let k = 0; k < n; k++) idx[k] = (k * 7 + 3) % (n + 17);
    idx[5] = idx[6];
    const res = await ad.msmPrecomputedG1(tab, c, frVector(scalars), idx);
    assert.ok(readG1(res.point, 0).equals(g1Mul(G1.BASE, dot(Array.from(idx, (j) => scalars[j]), t.slice(0, n)))), `scalarIndex, n = ${n}`);
  }
  assert.deepEqual([...seen].sort(), [false, true]);
  const n = 5000;
  const c = ad.msmPrecomputeWindow(n);
  const tab = await table('G1', buf.subarray(0, n * G1_BYTES), c);
  const s = Array.from({ length: n }, () => next());
  const want = g1Mul(G1.BASE, dot(s, t.slice(0, n)));
  const before = be.capabilities().threads;
  try {
    for (const threads of [1, 3, 8]) {
      be.setThreads(threads);
      assert.ok(readG1((await ad.msmPrecomputedG1(tab, c, frVector(s))).point, 0).equals(want), `${threads} threads`);
    }
  } finally {
    be.setThreads(before);
  }
});

test('msmPrecomputedG2 equals the plain MSM and noble', async () => {
  const t = Array.from({ length: 600 }, () => next());
  const bases = await be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(t));
  const A = readG2(bases, 0);
  const small = g2Vector([A, A.negate(), G2.ZERO, A]);
  const st = await table('G2', small, 10);
  const r1 = await ad.msmPrecomputedG2(st, 10, frVector([5n, 5n, 3n, 1n]));
  assert.ok(readG2(r1.point, 0).equals(A));
  for (const c of [10, ad.msmPrecomputeWindow(600)]) {
    const tab = await table('G2', bases, c);
    const s = t.map((_, i) => (i % 7 === 0 ? 1n : i % 9 === 0 ? 0n : next()));
    const res = await ad.msmPrecomputedG2(tab, c, frVector(s));
    const plain = await ad.msmG2(bases, frVector(s));
    assert.deepEqual(res.point, plain.point, `c = ${c}`);
    assert.ok(readG2(res.point, 0).equals(g2Mul(G2.BASE, dot(s, t))), `c = ${c}`);
  }
});

test('msmPrecompute / msmPrecomputed reject bad arguments', async () => {
  const bases = g1Vector([G1.BASE, G1.BASE]);
  await assert.rejects(async () => ad.msmPrecomputeG1(bases, 16, new Uint8Array(96 * 31)), RangeError); // 2·16 points expected
  await assert.rejects(async () => ad.msmPrecomputeG1(bases, 1, new Uint8Array(96 * 2 * 256)), RangeError);
  await assert.rejects(async () => ad.msmPrecomputeG1(bases, 21, new Uint8Array(96 * 2 * 13)), RangeError);
  await assert.rejects(async () => ad.msmPrecomputeG1(bases, 16, bases), RangeError);
  const t = await table('G1', bases, 16);
  await assert.rejects(async () => ad.msmPrecomputedG1(t, 16, new Uint8Array(32)), /2 bases but 1 scalars/);
  await assert.rejects(async () => ad.msmPrecomputedG1(t, 15, new Uint8Array(64)), RangeError); // 32 points, not a multiple of 18 windows
  await assert.rejects(async () => ad.msmPrecomputedG1(t.subarray(1), 16, new Uint8Array(64)), RangeError);
  await assert.rejects(async () => ad.msmPrecomputedG1(t, 16, new Uint8Array(64), new Uint32Array([0, 2])), RangeError);
  await assert.rejects(async () => ad.msmPrecomputedG2(t, 16, new Uint8Array(64)), RangeError);
});

test('NativeBackend builds a table on the second MSM of a base vector, under the memory cap', async () => {
  const { buf, t } = await g1Bases(3000);
  const other = (await g1Bases(3000)).buf;
  const bytes = 3000 * Math.ceil(256 / ad.msmPrecomputeWindow(3000)) * G1_BYTES;
  // room for exactly one table
  const b = new NativeBackend({ msmPrecomputeBytes: bytes, msmPrecomputeMinScalars: 1000 });
  const s = () => Array.from({ length: 3000 }, (_, i) => (i % 5 === 0 ? 1n : next()));
  const check = async (bases: Uint8Array, tt: bigint[] | undefined, label: string): Promise<boolean> => {
    const sc = s();
    const res = await b.msmG1(bases, frVector(sc));
    if (tt) assert.ok(readG1(res.point, 0).equals(g1Mul(G1.BASE, dot(sc, tt))), label);
    else assert.deepEqual(res.point, (await be.msmG1(bases.slice(), frVector(sc))).point, label);
    return res.timings.precomputed;
  };
  assert.equal(await check(buf, t, 'first use'), false);
  assert.equal(b.precomputedBytes(), 0);
  assert.equal(await check(buf, t, 'second use builds the table'), true);
  assert.equal(b.precomputedBytes(), bytes);
  assert.equal(await check(buf, t, 'third use'), true);
  // the second vector does not fit under the cap: plain path, still correct
  assert.equal(await check(other, undefined, 'other, first'), false);
  assert.equal(await check(other, undefined, 'other, second'), false);
  assert.equal(b.precomputedBytes(), bytes);
  // mostly-0/1 scalars below the threshold never build a table
  const sparse = (await g1Bases(3000)).buf;
  const b2 = new NativeBackend({ msmPrecomputeMinScalars: 1000 });
  for (let i = 0; i < 3; i++) {
    const sc = Array.from({ length: 3000 }, (_, j) => (j % 10 === 0 ? next() : 1n));
    await b2.msmG1(sparse, frVector(sc));
  }
  assert.equal(b2.precomputedBytes(), 0);
  // enough non-trivial scalars in absolute terms but under a quarter of the bases: no table either
  const b3 = new NativeBackend({ msmPrecomputeMinScalars: 100 });
  for (let i = 0; i < 3; i++) {
    const sc = Array.from({ length: 3000 }, (_, j) => (j % 6 === 0 ? next() : BigInt(j % 2)));
    await b3.msmG1(sparse, frVector(sc));
  }
  assert.equal(b3.precomputedBytes(), 0);
  assert.equal(ad.msmPrecomputePays(3000, 3000), true);
  assert.equal(ad.msmPrecomputePays(1 << 16, 0), false);
  assert.equal(ad.msmPrecomputePays(1 << 16, 50), false);
  // a changed base point is noticed (sampled points include the first): the table is dropped
  const changed = buf.slice();
  const c2 = new NativeBackend({ msmPrecomputeMinScalars: 0 });
  assert.equal(await c2.precompute(changed, 'G1'), true);
  changed.set(g1Vector([G1.BASE]), 0);
  const tt = [1n, ...t.slice(1)];
  const sc = s();
  const res = await c2.msmG1(changed, frVector(sc));
  assert.ok(readG1(res.point, 0).equals(g1Mul(G1.BASE, dot(sc, tt))), 'changed bases');
  // dropPrecomputed and release free the table
  assert.equal(b.dropPrecomputed(buf), true);
  assert.equal(b.precomputedBytes(), 0);
  assert.equal(b.dropPrecomputed(buf), false);
  const nb = b.alloc(buf.length);
  nb.set(buf);
  assert.equal(await b.precompute(nb, 'G1'), true);
  assert.equal(b.precomputedBytes(), bytes);
  b.release(nb);
  assert.equal(b.precomputedBytes(), 0);
  // cap 0 disables tables
  const off = new NativeBackend({ msmPrecomputeBytes: 0 });
  assert.equal(await off.precompute(buf, 'G1'), false);
  assert.throws(() => new NativeBackend({ msmPrecomputeBytes: -1 }), RangeError);
});

test('NativeBackend precomputed G2 MSMs match the plain ones', async () => {
  const t = Array.from({ length: 700 }, () => next());
  const bases = await be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(t));
  const b = new NativeBackend({ msmPrecomputeMinScalars: 100 });
  for (let i = 0; i < 3; i++) {
    const s = t.map((_, j) => ((j + i) % 4 === 0 ? 1n : next()));
    const res = await b.msmG2(bases, frVector(s));
    if (i === 0) assert.equal(res.timings.precomputed, false, 'first call: plain');
    assert.ok(readG2(res.point, 0).equals(g2Mul(G2.BASE, dot(s, t))), `call ${i}`);
  }
  assert.equal(b.precomputedBytes(), 700 * Math.ceil(256 / ad.msmPrecomputeWindow(700)) * G2_BYTES);
  const idx = new Uint32Array(700).map((_, k) => (k * 3) % 700);
  const s = Array.from({ length: 700 }, () => next());
  const res = await b.msmG2(bases, frVector(s), { scalarIndex: idx });
  assert.ok(readG2(res.point, 0).equals(g2Mul(G2.BASE, dot(Array.from(idx, (j) => s[j]), t))));
});
