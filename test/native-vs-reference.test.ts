/** The native backend against its slow twin, ReferenceBackend (TypeScript + noble), through the
 *  Backend interface only, on the same random inputs: results must be byte-identical. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend, CsrMatrix } from '../src/backend/backend.js';
import { NativeBackend } from '../src/backend/native.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import { G1, G2, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import { g1Mul, g2Mul, r } from './native-helpers.js';
import { rng } from './support.js';

const native: Backend = new NativeBackend();
const reference: Backend = new ReferenceBackend();
const next = rng(61);

async function both<T>(f: (be: Backend) => Promise<T>): Promise<[T, T]> {
  return [await f(native), await f(reference)];
}

test('msmG1 / msmG2 / batchAddG1 agree with the reference backend', async () => {
  const p1 = Array.from({ length: 40 }, (_, i) => (i === 7 ? G1.ZERO : g1Mul(G1.BASE, next())));
  p1[9] = p1[8];
  p1[10] = p1[8].negate();
  const s = Array.from({ length: 60 }, (_, i) => [0n, 1n, r - 1n, next()][i % 4]);
  const idx = Uint32Array.from({ length: 40 }, (_, k) => (k * 13) % 60);
  const B1 = g1Vector(p1);
  const S = frVector(s);
  const [a, b] = await both((be) => be.msmG1(B1, S, { scalarIndex: idx }));
  assert.deepEqual(a.point, b.point);
  const [c, d] = await both((be) => be.msmG1(B1, S.subarray(0, 40 * 32)));
  assert.deepEqual(c.point, d.point);
  const p2 = Array.from({ length: 6 }, () => g2Mul(G2.BASE, next()));
  const [e, f] = await both((be) => be.msmG2(g2Vector(p2), S.subarray(0, 6 * 32)));
  assert.deepEqual(e.point, f.point);
  const sel = Uint32Array.from([0, 8, 9, 10, 7, 3, 3, 39]);
  const [g, h] = await both((be) => be.batchAddG1(B1, sel));
  assert.deepEqual(g, h);
});

test('ntt, quotient and csrMatVec agree with the reference backend', async () => {
  for (const [inverse, coset] of [[false, false], [true, false], [false, true], [true, true]] as const) {
    const v = frVector(Array.from({ length: 64 }, () => next()));
    const [x, y] = [v.slice(), v.slice()];
    await native.ntt(x, { inverse, coset });
    await reference.ntt(y, { inverse, coset });
    assert.deepEqual(x, y, `ntt inverse=${inverse} coset=${coset}`);
  }
  const n = 32;
  const av = Array.from({ length: n }, () => next());
  const bv = Array.from({ length: n }, () => next());
  const cv = av.map((x, i) => (x * bv[i]) % r);
  const bufs = [0, 1].map(() => [frVector(av), frVector(bv), frVector(cv)]);
  await native.quotient(bufs[0][0], bufs[0][1], bufs[0][2]);
  await reference.quotient(bufs[1][0], bufs[1][1], bufs[1][2]);
  assert.deepEqual(bufs[0][0], bufs[1][0]);

  const m: CsrMatrix = {
    rows: 3,
    cols: 4,
    rowPtr: new Uint32Array([0, 2, 2, 5]),
    colIdx: new Uint32Array([0, 3, 1, 2, 1]),
    coeffIdx: new Uint32Array([0, 1, 2, 0, 1]),
    coeffs: frVector([1n, r - 1n, next()]),
  };
  const w = frVector([next(), next(), next(), next()]);
  const [o1, o2] = [new Uint8Array(96), new Uint8Array(96)];
  await native.csrMatVec(m, w, o1);
  await reference.csrMatVec(m, w, o2);
  assert.deepEqual(o1, o2);
});

test('fixedBaseMulG1 / G2 agree with the reference backend', async () => {
  const ks = frVector([0n, 1n, r - 1n, next(), next()]);
  const base = g1Vector([g1Mul(G1.BASE, next())]);
  const [a, b] = await both((be) => be.fixedBaseMulG1(base, ks));
  assert.deepEqual(a, b);
  const [c, d] = await both((be) => be.fixedBaseMulG2(g2Vector([G2.BASE]), ks));
  assert.deepEqual(c, d);
});
