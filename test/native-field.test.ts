/** Field arithmetic of the native addon (Fr, Fq, Fq2) against bigint arithmetic. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadNative } from '../src/backend/native.js';
import {
  FQ_BYTES,
  FR_BYTES,
  frVector,
  frVectorToBigints,
  mod,
  modInverse,
  readFq,
  writeFq,
} from '../src/field/layout.js';
import { p, r } from './native-helpers.js';
import { rng } from './support.js';

const native = loadNative();

type Op = 'add' | 'sub' | 'mul' | 'sqr' | 'neg' | 'inv';
const OPS: Op[] = ['add', 'sub', 'mul', 'sqr', 'neg', 'inv'];

function expected(op: Op, a: bigint, b: bigint, m: bigint): bigint {
  switch (op) {
    case 'add': return mod(a + b, m);
    case 'sub': return mod(a - b, m);
    case 'mul': return mod(a * b, m);
    case 'sqr': return mod(a * a, m);
    case 'neg': return mod(-a, m);
    case 'inv': return a === 0n ? 0n : modInverse(a, m);
  }
}

function operands(m: bigint, seed: number): [bigint[], bigint[]] {
  const next = rng(seed);
  const edges = [0n, 1n, 2n, m - 1n, m - 2n, (m - 1n) / 2n, (m + 1n) / 2n];
  const a: bigint[] = [];
  const b: bigint[] = [];
  for (const x of edges) for (const y of edges) {
    a.push(x);
    b.push(y);
  }
  for (let i = 0; i < 200; i++) {
    a.push(next(m));
    b.push(i % 3 === 0 ? edges[i % edges.length] : next(m));
  }
  return [a, b];
}

function fqVector(xs: bigint[]): Uint8Array {
  const out = new Uint8Array(xs.length * FQ_BYTES);
  xs.forEach((x, i) => writeFq(out, i * FQ_BYTES, x));
  return out;
}

function fqVectorToBigints(buf: Uint8Array): bigint[] {
  const out: bigint[] = [];
  for (let o = 0; o < buf.length; o += FQ_BYTES) out.push(readFq(buf, o));
  return out;
}

test('Fr: add, sub, mul, sqr, neg, inv match bigint on edges and random values', () => {
  const [a, b] = operands(r, 1);
  const A = frVector(a);
  const B = frVector(b);
  for (const op of OPS) {
    const got = frVectorToBigints(native.fieldOp('fr', op, A, B));
    for (let i = 0; i < a.length; i++) {
      assert.equal(got[i], expected(op, a[i], b[i], r), `fr ${op} #${i}: a=${a[i]} b=${b[i]}`);
    }
  }
});

test('Fq: add, sub, mul, sqr, neg, inv match bigint on edges and random values', () => {
  const [a, b] = operands(p, 2);
  const A = fqVector(a);
  const B = fqVector(b);
  for (const op of OPS) {
    const got = fqVectorToBigints(native.fieldOp('fq', op, A, B));
    for (let i = 0; i < a.length; i++) {
      assert.equal(got[i], expected(op, a[i], b[i], p), `fq ${op} #${i}`);
    }
  }
});

test('Fq2 (u^2 = -1): add, sub, mul, sqr, neg, inv match bigint', () => {
  const next = rng(3);
  const edges = [0n, 1n, p - 1n, 2n];
  const xs: [bigint, bigint][] = [];
  for (const x of edges) for (const y of edges) xs.push([x, y]);
  for (let i = 0; i < 60; i++) xs.push([next(p), next(p)]);
  const ys = xs.map((_, i) => xs[(i * 7 + 3) % xs.length]);
  const pack = (v: [bigint, bigint][]) => fqVector(v.flat());
  const unpack = (buf: Uint8Array): [bigint, bigint][] => {
    const f = fqVectorToBigints(buf);
    const out: [bigint, bigint][] = [];
    for (let i = 0; i < f.length; i += 2) out.push([f[i], f[i + 1]]);
    return out;
  };
  const mul = ([a0, a1]: [bigint, bigint], [b0, b1]: [bigint, bigint]): [bigint, bigint] => [
    mod(a0 * b0 - a1 * b1, p),
    mod(a0 * b1 + a1 * b0, p),
  ];
  const inv = ([a0, a1]: [bigint, bigint]): [bigint, bigint] => {
    const n = mod(a0 * a0 + a1 * a1, p);
    if (n === 0n) return [0n, 0n];
    const t = modInverse(n, p);
    return [mod(a0 * t, p), mod(-a1 * t, p)];
  };
  const A = pack(xs);
  const B = pack(ys);
  const want: Record<Op, (a: [bigint, bigint], b: [bigint, bigint]) => [bigint, bigint]> = {
    add: (a, b) => [mod(a[0] + b[0], p), mod(a[1] + b[1], p)],
    sub: (a, b) => [mod(a[0] - b[0], p), mod(a[1] - b[1], p)],
    mul,
    sqr: (a) => mul(a, a),
    neg: (a) => [mod(-a[0], p), mod(-a[1], p)],
    inv: (a) => inv(a),
  };
  for (const op of OPS) {
    const got = unpack(native.fieldOp('fq2', op, A, B));
    for (let i = 0; i < xs.length; i++) assert.deepEqual(got[i], want[op](xs[i], ys[i]), `fq2 ${op} #${i}`);
  }
  // (a * a^-1) = 1 for non-zero a
  const prod = unpack(native.fieldOp('fq2', 'mul', A, native.fieldOp('fq2', 'inv', A)));
  xs.forEach((x, i) => assert.deepEqual(prod[i], x[0] === 0n && x[1] === 0n ? [0n, 0n] : [1n, 0n]));
});

test('non-canonical limbs (x + r) still reduce correctly through multiplication', () => {
  // Montgomery form of x is x·R mod r; writing a raw value v ≥ r exercises the final subtraction.
  const raw = new Uint8Array(FR_BYTES);
  let v = r - 1n;
  for (let k = 0; k < FR_BYTES; k++) {
    raw[k] = Number(v & 0xffn);
    v >>= 8n;
  }
  const one = frVector([1n]);
  const got = frVectorToBigints(native.fieldOp('fr', 'mul', raw, one))[0];
  // raw limbs represent (r-1)·R^-1 in Montgomery form
  const R = (1n << 256n) % r;
  assert.equal(got, mod((r - 1n) * modInverse(R, r), r));
});

test('fieldOp rejects bad input with TypeError / RangeError', () => {
  assert.throws(() => native.fieldOp('fr', 'add', new Uint8Array(31), new Uint8Array(31)), RangeError);
  assert.throws(() => native.fieldOp('fr', 'add', new Uint8Array(32), new Uint8Array(64)), RangeError);
  assert.throws(() => native.fieldOp('fr', 'add', new Uint8Array(32)), TypeError);
  assert.throws(() => native.fieldOp('fx' as 'fr', 'add', new Uint8Array(32), new Uint8Array(32)), RangeError);
  assert.throws(() => native.fieldOp('fr', 'pow' as 'add', new Uint8Array(32), new Uint8Array(32)), RangeError);
  assert.throws(() => native.fieldOp('fr', 'neg', [1, 2, 3] as unknown as Uint8Array), TypeError);
  assert.throws(() => native.fieldOp('fr', 'neg', new Uint16Array(16) as unknown as Uint8Array), TypeError);
  // misaligned views are fine (the addon reads them with memcpy)
  const buf = new Uint8Array(65);
  buf.set(frVector([5n]), 1);
  assert.deepEqual(frVectorToBigints(native.fieldOp('fr', 'sqr', buf.subarray(1, 33))), [25n]);
});
