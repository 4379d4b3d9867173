/** NTT, coset NTT and the Groth16 quotient of the native addon against naive bigint transforms. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NativeBackend } from '../src/backend/native.js';
import { frVector, frVectorToBigints, mod, modInverse } from '../src/field/layout.js';
import { powMod, r } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();
const next = rng(31);
const G = 7n;

/** Primitive n-th root of unity, 7^((r−1)/n): independent of the addon's 2^32-th root table. */
function omega(n: number): bigint {
  return powMod(G, (r - 1n) / BigInt(n), r);
}

/** Naive DFT: out_j = Σ_i a_i·(shift^i)·w^(ij). */
function dft(a: bigint[], w: bigint, shift = 1n): bigint[] {
  const n = a.length;
  return Array.from({ length: n }, (_, j) => {
    let acc = 0n;
    const wj = powMod(w, BigInt(j), r);
    let x = 1n;
    let s = 1n;
    for (let i = 0; i < n; i++) {
      acc += a[i] * s * x;
      x = (x * wj) % r;
      s = (s * shift) % r;
    }
    return mod(acc, r);
  });
}

function naiveInverse(vals: bigint[], coset: boolean): bigint[] {
  const n = vals.length;
  const w = modInverse(omega(n), r);
  const ninv = modInverse(BigInt(n), r);
  const gi = modInverse(G, r);
  return dft(vals, w).map((x, i) => mod(x * ninv * (coset ? powMod(gi, BigInt(i), r) : 1n), r));
}

test('ntt matches the naive DFT for n = 1 … 32, plain and coset, both directions', async () => {
  for (const n of [1, 2, 4, 8, 16, 32]) {
    const a = Array.from({ length: n }, (_, i) => (i === 1 ? r - 1n : next()));
    for (const coset of [false, true]) {
      const fwd = frVector(a);
      await be.ntt(fwd, { inverse: false, coset });
      assert.deepEqual(frVectorToBigints(fwd), dft(a, omega(n), coset ? G : 1n), `fwd n=${n} coset=${coset}`);
      const inv = frVector(a);
      await be.ntt(inv, { inverse: true, coset });
      assert.deepEqual(frVectorToBigints(inv), naiveInverse(a, coset), `inv n=${n} coset=${coset}`);
    }
  }
});

test('ntt ∘ intt is the identity up to 2^16 (plain and coset)', async () => {
  for (const log of [6, 10, 12, 13, 16]) {
    const n = 1 << log;
    const a = Array.from({ length: n }, () => next());
    const buf = frVector(a);
    const orig = buf.slice();
    await be.ntt(buf, { inverse: false, coset: false });
    assert.notDeepEqual(buf, orig);
    await be.ntt(buf, { inverse: true, coset: false });
    assert.deepEqual(buf, orig, `plain 2^${log}`);
    await be.ntt(buf, { inverse: false, coset: true });
    await be.ntt(buf, { inverse: true, coset: true });
    assert.deepEqual(buf, orig, `coset 2^${log}`);
  }
});

test('ntt at 2^14 spot-checked against direct evaluation', async () => {
  const n = 1 << 14;
  const a = Array.from({ length: n }, () => next());
  const buf = frVector(a);
  await be.ntt(buf, { inverse: false, coset: true });
  const w = omega(n);
  for (const j of [0, 1, 5000, n - 1]) {
    const x = (G * powMod(w, BigInt(j), r)) % r;
    let acc = 0n;
    for (let i = n - 1; i >= 0; i--) acc = (acc * x + a[i]) % r;
    assert.equal(frVectorToBigints(buf.subarray(j * 32, j * 32 + 32))[0], acc, `j=${j}`);
  }
});

function polyMul(a: bigint[], b: bigint[]): bigint[] {
  const out = new Array<bigint>(a.length + b.length - 1).fill(0n);
  for (let i = 0; i < a.length; i++) for (let j = 0; j < b.length; j++) out[i + j] += a[i] * b[j];
  return out.map((x) => mod(x, r));
}

/** Divides by x^n − 1, asserting a zero remainder. */
function divideByVanishing(num: bigint[], n: number): bigint[] {
  const q = num.slice();
  const out = new Array<bigint>(Math.max(0, q.length - n)).fill(0n);
  for (let d = q.length - 1; d >= n; d--) {
    const c = q[d];
    out[d - n] = c;
    q[d] = 0n;
    q[d - n] = mod(q[d - n] + c, r);
  }
  for (let i = 0; i < n; i++) assert.equal(q[i], 0n, 'remainder must vanish');
  return out;
}

test('quotient on a satisfied toy system equals (a·b − c)/Z computed naively', async () => {
  for (const n of [2, 4, 8, 16]) {
    const a = Array.from({ length: n }, () => next());
    const b = Array.from({ length: n }, (_, i) => (i === 0 ? 0n : next()));
    const c = a.map((x, i) => mod(x * b[i], r));
    const A = frVector(a), B = frVector(b), C = frVector(c);
    await be.quotient(A, B, C);
    const h = frVectorToBigints(A);
    const pa = naiveInverse(a, false), pb = naiveInverse(b, false), pc = naiveInverse(c, false);
    const num = polyMul(pa, pb);
    for (let i = 0; i < n; i++) num[i] = mod(num[i] - pc[i], r);
    const want = divideByVanishing(num, n);
    while (want.length < n) want.push(0n);
    assert.equal(h[n - 1], 0n, `last coefficient, n=${n}`);
    assert.deepEqual(h, want, `n=${n}`);
  }
});

test('quotient at 2^14: h(z)·(z^n − 1) = A(z)B(z) − C(z) at a random point', async () => {
  const n = 1 << 14;
  const a = Array.from({ length: n }, () => next());
  const b = Array.from({ length: n }, () => next());
  const c = a.map((x, i) => mod(x * b[i], r));
  const A = frVector(a), B = frVector(b), C = frVector(c);
  const coeffs = [frVector(a), frVector(b), frVector(c)];
  for (const v of coeffs) await be.ntt(v, { inverse: true, coset: false });
  await be.quotient(A, B, C);
  const h = frVectorToBigints(A);
  assert.equal(h[n - 1], 0n);
  const z = next();
  const evalAt = (p: bigint[]) => p.reduceRight((acc, x) => (acc * z + x) % r, 0n);
  const [pa, pb, pc] = coeffs.map((v) => frVectorToBigints(v));
  const lhs = mod(evalAt(h) * (powMod(z, BigInt(n), r) - 1n), r);
  assert.equal(lhs, mod(evalAt(pa) * evalAt(pb) - evalAt(pc), r));
});

test('ntt and quotient reject bad input', async () => {
  await assert.rejects(be.ntt(new Uint8Array(96), { inverse: false, coset: false }), /not a power of two/);
  await assert.rejects(be.ntt(new Uint8Array(0), { inverse: false, coset: false }), RangeError);
  await assert.rejects(be.ntt(new Uint8Array(33), { inverse: false, coset: false }), RangeError);
  await assert.rejects(be.ntt(new Float64Array(4) as unknown as Uint8Array, { inverse: true, coset: false }), TypeError);
  const x = new Uint8Array(128);
  await assert.rejects(be.quotient(x, new Uint8Array(128), new Uint8Array(64)), RangeError);
  await assert.rejects(be.quotient(x, x, new Uint8Array(128)), /overlap/);
  await assert.rejects(be.quotient(new Uint8Array(96), new Uint8Array(96), new Uint8Array(96)), RangeError);
});

/** Raw little-endian limbs of each element (Montgomery form: value·R mod r). Transforms are linear,
 *  so they can be checked on raw values directly (a common factor R on both sides). */
function rawVector(buf: Uint8Array): bigint[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Array<bigint>(buf.length / 32);
  for (let i = 0; i < out.length; i++) {
    const o = i * 32;
    out[i] =
      dv.getBigUint64(o, true) |
      (dv.getBigUint64(o + 8, true) << 64n) |
      (dv.getBigUint64(o + 16, true) << 128n) |
      (dv.getBigUint64(o + 24, true) << 192n);
  }
  return out;
}

/** n random field elements (raw Montgomery limbs < r), quickly. */
function randomRaw(n: number, seed: number): Uint8Array {
  const buf = new Uint8Array(n * 32);
  const dv = new DataView(buf.buffer);
  const next = rng(seed);
  for (let i = 0; i < n * 8; i++) dv.setUint32(i * 4, next.u32(), true);
  for (let i = 0; i < n; i++) buf[i * 32 + 31] &= 0x3f; // < 2^254 < r
  return buf;
}

test('ntt and quotient at 2^21 (several column passes): spot checks, round trip, h·Z = AB − C', async () => {
  const log = 21;
  const n = 1 << log;
  const a = randomRaw(n, 5);
  const fwd = a.slice();
  await be.ntt(fwd, { inverse: false, coset: true });
  const av = rawVector(a), fv = rawVector(fwd);
  const w = omega(n);
  for (const j of [n - 3]) {
    const x = (G * powMod(w, BigInt(j), r)) % r;
    let acc = 0n;
    for (let i = n - 1; i >= 0; i--) acc = (acc * x + av[i]) % r;
    assert.equal(fv[j], acc, `coset ntt output ${j}`);
  }
  await be.ntt(fwd, { inverse: true, coset: true });
  assert.deepEqual(fwd, a, 'coset round trip');
  const plain = a.slice();
  await be.ntt(plain, { inverse: true, coset: false });
  await be.ntt(plain, { inverse: false, coset: false });
  assert.deepEqual(plain, a, 'plain round trip');

  // quotient of a random (unsatisfied) system: h·(z^n − 1) = A(z)B(z) − C(z) holds only up to the
  // remainder, so use c = a·b pointwise (a satisfied system) and compare at a random point.
  const b = randomRaw(n, 6);
  const c = be.fieldOp('fr', 'mul', a, b);
  const coeffs = [a.slice(), b.slice(), c.slice()];
  for (const v of coeffs) await be.ntt(v, { inverse: true, coset: false });
  const A = a.slice(), B = b.slice(), C = c.slice();
  await be.quotient(A, B, C);
  const h = rawVector(A);
  assert.equal(h[n - 1], 0n);
  const z = next();
  const evalAt = (p: bigint[]): bigint => {
    let acc = 0n;
    for (let i = p.length - 1; i >= 0; i--) acc = (acc * z + p[i]) % r;
    return acc;
  };
  const [pa, pb, pc] = coeffs.map((v) => evalAt(rawVector(v)));
  const rInv = modInverse((1n << 256n) % r, r); // raw values carry a factor R
  const lhs = mod(evalAt(h) * (powMod(z, BigInt(n), r) - 1n), r);
  assert.equal(lhs, mod(pa * pb * rInv - pc, r));
});
