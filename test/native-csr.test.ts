/** Sparse matrix-vector products of the native addon against bigint arithmetic. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CsrMatrix } from '../src/field/csr.js';
import { NativeBackend } from '../src/backend/native.js';
import { frVector, frVectorToBigints, mod } from '../src/field/layout.js';
import { r } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();
const next = rng(41);

function randomMatrix(rows: number, cols: number, density: number, coeffs: bigint[]): CsrMatrix {
  const rowPtr = new Uint32Array(rows + 1);
  const colIdx: number[] = [];
  const coeffIdx: number[] = [];
  for (let i = 0; i < rows; i++) {
    const k = Number(next(BigInt(Math.max(1, Math.round(density * 2)))));
    for (let j = 0; j < k; j++) {
      colIdx.push(Number(next(BigInt(cols))));
      coeffIdx.push(Number(next(BigInt(coeffs.length))));
    }
    rowPtr[i + 1] = colIdx.length;
  }
  return {
    rows,
    cols,
    rowPtr,
    colIdx: Uint32Array.from(colIdx),
    coeffIdx: Uint32Array.from(coeffIdx),
    coeffs: frVector(coeffs),
  };
}

function reference(m: CsrMatrix, coeffs: bigint[], w: bigint[]): bigint[] {
  const out: bigint[] = [];
  for (let i = 0; i < m.rows; i++) {
    let acc = 0n;
    for (let k = m.rowPtr[i]; k < m.rowPtr[i + 1]; k++) acc += coeffs[m.coeffIdx[k]] * w[m.colIdx[k]];
    out.push(mod(acc, r));
  }
  return out;
}

test('csrMatVec matches bigint (coefficients 1, −1, 0, 2 and random × witness 0, 1, −1 and random; empty rows)', async () => {
  const coeffs = [1n, r - 1n, 0n, 2n, next(), next()];
  for (const [rows, cols, density] of [[1, 1, 1], [50, 40, 3], [5000, 3000, 4]] as const) {
    const m = randomMatrix(rows, cols, density, coeffs);
    // Witness values: random, and 0, 1, r − 1 (bits skip the multiplication by other coefficients).
    const w = Array.from({ length: cols }, (_, i) => [next(), 0n, 1n, r - 1n][i % 4]);
    const out = new Uint8Array(rows * 32).fill(0xaa);
    await be.csrMatVec(m, frVector(w), out);
    assert.deepEqual(frVectorToBigints(out), reference(m, coeffs, w), `${rows}x${cols}`);
  }
});

test('csrMatVec with zero rows and with trailing unused entries', async () => {
  const coeffs = [1n];
  const empty: CsrMatrix = { rows: 0, cols: 2, rowPtr: new Uint32Array([0]), colIdx: new Uint32Array(0), coeffIdx: new Uint32Array(0), coeffs: frVector(coeffs) };
  await be.csrMatVec(empty, frVector([1n, 2n]), new Uint8Array(0));
  const m: CsrMatrix = { rows: 1, cols: 2, rowPtr: new Uint32Array([0, 2]), colIdx: new Uint32Array([0, 1, 9]), coeffIdx: new Uint32Array([0, 0, 9]), coeffs: frVector(coeffs) };
  const out = new Uint8Array(32);
  await be.csrMatVec(m, frVector([5n, 6n]), out);
  assert.deepEqual(frVectorToBigints(out), [11n]);
});

test('csrMatVec rejects inconsistent matrices', async () => {
  const base = (): CsrMatrix => ({
    rows: 2,
    cols: 3,
    rowPtr: new Uint32Array([0, 1, 2]),
    colIdx: new Uint32Array([0, 2]),
    coeffIdx: new Uint32Array([0, 1]),
    coeffs: frVector([1n, 5n]),
  });
  const w = frVector([1n, 2n, 3n]);
  const out = new Uint8Array(64);
  await be.csrMatVec(base(), w, out);
  assert.deepEqual(frVectorToBigints(out), [1n, 15n]);
  await assert.rejects(be.csrMatVec({ ...base(), colIdx: new Uint32Array([0, 3]) }, w, out), /colIdx\[1\] = 3 out of range/);
  await assert.rejects(be.csrMatVec({ ...base(), coeffIdx: new Uint32Array([0, 2]) }, w, out), /coeffIdx\[1\] = 2 out of range/);
  await assert.rejects(be.csrMatVec({ ...base(), rowPtr: new Uint32Array([0, 1]) }, w, out), RangeError);
  await assert.rejects(be.csrMatVec({ ...base(), rowPtr: new Uint32Array([0, 2, 1]) }, w, out), /non-decreasing/);
  await assert.rejects(be.csrMatVec({ ...base(), rowPtr: new Uint32Array([0, 1, 3]) }, w, out), /exceeds/);
  await assert.rejects(be.csrMatVec(base(), w.subarray(0, 64), out), RangeError);
  await assert.rejects(be.csrMatVec(base(), w, new Uint8Array(32)), RangeError);
  await assert.rejects(be.csrMatVec({ ...base(), rows: -1 }, w, out), RangeError);
  await assert.rejects(be.csrMatVec({ ...base(), colIdx: [0, 2] as unknown as Uint32Array }, w, out), TypeError);
});
