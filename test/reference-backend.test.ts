import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CsrMatrix } from '../src/field/csr.js';
import {
  FR_GENERATOR,
  FR_ROOT_OF_UNITY,
  ReferenceBackend,
  powMod,
  rootOfUnity,
} from '../src/backend/reference.js';
import {
  FR_MODULUS,
  G1,
  G2,
  frVector,
  frVectorToBigints,
  g1Vector,
  g2Vector,
  mod,
  readG1,
  readG2,
} from '../src/field/layout.js';
import { rng } from './support.js';

const r = FR_MODULUS;
const be = new ReferenceBackend();


function naiveDft(values: bigint[], omega: bigint): bigint[] {
  const n = values.length;
  return values.map((_, j) => {
    let acc = 0n;
    for (let i = 0; i < n; i++) acc += values[i] * powMod(omega, BigInt(i * j), r);
    return acc % r;
  });
}

test('root of unity has order exactly 2^32', () => {
  assert.equal(powMod(FR_ROOT_OF_UNITY, 1n << 32n, r), 1n);
  assert.notEqual(powMod(FR_ROOT_OF_UNITY, 1n << 31n, r), 1n);
  assert.equal(powMod(rootOfUnity(8), 8n, r), 1n);
  assert.equal(powMod(rootOfUnity(8), 4n, r), r - 1n);
});

test('ntt equals a naive DFT (plain and coset) for n ≤ 16', async () => {
  const rand = rng(1);
  for (const n of [1, 2, 4, 8, 16]) {
    const v = Array.from({ length: n }, rand);
    const buf = frVector(v);
    await be.ntt(buf, { inverse: false, coset: false });
    assert.deepEqual(frVectorToBigints(buf), naiveDft(v, rootOfUnity(n)), `plain n=${n}`);

    const cbuf = frVector(v);
    await be.ntt(cbuf, { inverse: false, coset: true });
    const shifted = v.map((x, i) => (x * powMod(FR_GENERATOR, BigInt(i), r)) % r);
    assert.deepEqual(frVectorToBigints(cbuf), naiveDft(shifted, rootOfUnity(n)), `coset n=${n}`);
  }
});

test('ntt ∘ intt = id (plain and coset), edges 0, 1, −1', async () => {
  const rand = rng(2);
  for (const n of [1, 2, 32, 256]) {
    const v = Array.from({ length: n }, rand);
    if (n >= 4) [v[0], v[1], v[2]] = [0n, 1n, r - 1n];
    for (const coset of [false, true]) {
      const buf = frVector(v);
      await be.ntt(buf, { inverse: false, coset });
      await be.ntt(buf, { inverse: true, coset });
      assert.deepEqual(frVectorToBigints(buf), v, `n=${n} coset=${coset}`);
      await be.ntt(buf, { inverse: true, coset });
      await be.ntt(buf, { inverse: false, coset });
      assert.deepEqual(frVectorToBigints(buf), v);
    }
  }
});

test('ntt rejects lengths that are not a power of two', async () => {
  await assert.rejects(be.ntt(new Uint8Array(3 * 32), { inverse: false, coset: false }), RangeError);
  await assert.rejects(be.ntt(new Uint8Array(33), { inverse: false, coset: false }), RangeError);
});

test('quotient of a satisfied system: h·Z = a·b − c, last coefficient zero', async () => {
  const rand = rng(3);
  const n = 16;
  // evaluations over H with a_i·b_i = c_i
  const a = Array.from({ length: n }, rand);
  const b = Array.from({ length: n }, rand);
  const c = a.map((x, i) => (x * b[i]) % r);
  const ab = frVector(a);
  await be.quotient(ab, frVector(b), frVector(c));
  const h = frVectorToBigints(ab);
  assert.equal(h[n - 1], 0n);
  // check at a random point x: A(x)·B(x) − C(x) = h(x)·(x^n − 1), with A, B, C the interpolants
  const interp = async (ev: bigint[]) => {
    const buf = frVector(ev);
    await be.ntt(buf, { inverse: true, coset: false });
    return frVectorToBigints(buf);
  };
  const evalAt = (coeffs: bigint[], x: bigint) => coeffs.reduceRight((acc, co) => (acc * x + co) % r, 0n);
  const [pa, pb, pc] = [await interp(a), await interp(b), await interp(c)];
  const x = rand();
  const lhs = mod(evalAt(pa, x) * evalAt(pb, x) - evalAt(pc, x), r);
  const rhs = mod(evalAt(h, x) * (powMod(x, BigInt(n), r) - 1n), r);
  assert.equal(lhs, rhs);
});

test('msmG1 equals a sum of scalar multiplications (with 0, 1, −1 and identity bases)', async () => {
  const rand = rng(4);
  const n = 12;
  const points = Array.from({ length: n }, () => G1.BASE.multiply(rand() || 1n));
  points[3] = G1.ZERO;
  const scalars = Array.from({ length: n }, rand);
  [scalars[0], scalars[1], scalars[2], scalars[4]] = [0n, 1n, r - 1n, 1n];
  const expected = points.reduce((acc, p, i) => acc.add(p.multiplyUnsafe(scalars[i])), G1.ZERO);
  const res = await be.msmG1(g1Vector(points), frVector(scalars));
  assert.ok(readG1(res.point, 0).equals(expected));
  for (const t of Object.values(res.timings)) assert.ok(t >= 0);

  // scalarIndex: base k paired with scalar idx[k]
  const idx = new Uint32Array([5, 0, 1, 11]);
  const sub = [points[2], points[7], points[8], points[9]];
  const exp2 = sub.reduce((acc, p, k) => acc.add(p.multiplyUnsafe(scalars[idx[k]])), G1.ZERO);
  const res2 = await be.msmG1(g1Vector(sub), frVector(scalars), { scalarIndex: idx });
  assert.ok(readG1(res2.point, 0).equals(exp2));

  // empty MSM and all-zero scalars give the identity (all zero bytes)
  const empty = await be.msmG1(new Uint8Array(0), new Uint8Array(0));
  assert.ok(empty.point.every((x) => x === 0));
  await assert.rejects(be.msmG1(g1Vector(points), frVector(scalars.slice(1))), RangeError);
  await assert.rejects(be.msmG1(new Uint8Array(95), new Uint8Array(32)), RangeError);
  const offCurve = g1Vector([G1.BASE]);
  offCurve[5] ^= 1;
  await assert.rejects(be.msmG1(offCurve, frVector([2n])), /not on the curve/);
  await assert.rejects(be.msmG1(g1Vector(sub), frVector(scalars), { scalarIndex: new Uint32Array([0, 1, 2, 99]) }), RangeError);
});

test('msmG2 equals a sum of scalar multiplications', async () => {
  const rand = rng(5);
  const n = 5;
  const points = Array.from({ length: n }, () => G2.BASE.multiply(rand() || 1n));
  const scalars = Array.from({ length: n }, rand);
  scalars[0] = 1n;
  scalars[1] = 0n;
  const expected = points.reduce((acc, p, i) => acc.add(p.multiplyUnsafe(scalars[i])), G2.ZERO);
  const res = await be.msmG2(g2Vector(points), frVector(scalars));
  assert.ok(readG2(res.point, 0).equals(expected));
});

test('batchAddG1 sums the indexed bases (repeats allowed)', async () => {
  const points = [1n, 2n, 3n, 4n].map((k) => G1.BASE.multiply(k));
  const out = await be.batchAddG1(g1Vector(points), new Uint32Array([0, 2, 2, 3]));
  assert.ok(readG1(out, 0).equals(G1.BASE.multiply(1n + 3n + 3n + 4n)));
  await assert.rejects(be.batchAddG1(g1Vector(points), new Uint32Array([4])), RangeError);
});

test('fixedBaseMul G1/G2 including scalar 0', async () => {
  const scalars = [0n, 1n, 5n, r - 1n];
  const g1 = await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(scalars));
  const g2 = await be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(scalars));
  scalars.forEach((s, i) => {
    assert.ok(readG1(g1, i).equals(G1.BASE.multiplyUnsafe(s)));
    assert.ok(readG2(g2, i).equals(G2.BASE.multiplyUnsafe(s)));
  });
  await assert.rejects(be.fixedBaseMulG1(new Uint8Array(48), frVector(scalars)), RangeError);
});

test('csrMatVec against a dense product', async () => {
  // M = [[2, 0, −1], [0, 0, 0], [1, 1, 1]]
  const m: CsrMatrix = {
    rows: 3,
    cols: 3,
    rowPtr: new Uint32Array([0, 2, 2, 5]),
    colIdx: new Uint32Array([0, 2, 0, 1, 2]),
    coeffIdx: new Uint32Array([0, 1, 2, 2, 2]),
    coeffs: frVector([2n, r - 1n, 1n]),
  };
  const w = [5n, 7n, 11n];
  const out = new Uint8Array(3 * 32);
  await be.csrMatVec(m, frVector(w), out);
  assert.deepEqual(frVectorToBigints(out), [mod(10n - 11n, r), 0n, 23n]);
  await assert.rejects(be.csrMatVec(m, frVector(w.slice(1)), out), RangeError);
  await assert.rejects(be.csrMatVec({ ...m, colIdx: new Uint32Array([0, 3, 0, 1, 2]) }, frVector(w), out), RangeError);
});

test('alloc returns zeroed memory; release is a no-op', () => {
  const b = be.alloc(64);
  assert.equal(b.length, 64);
  assert.ok(b.every((x) => x === 0));
  be.release(b);
  assert.throws(() => be.alloc(-1), RangeError);
  assert.equal(be.capabilities().backend, 'reference');
});
