/** alloc / release, threads and capabilities of the native addon. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NativeBackend, loadNative } from '../src/backend/native.js';
import { G1, frVector, g1Vector, readG1 } from '../src/field/layout.js';
import { g1Mul } from './native-helpers.js';
import { rng } from './support.js';

const be = new NativeBackend();

test('capabilities and version', () => {
  const c = be.capabilities();
  assert.equal(c.backend, 'native-cpu');
  assert.equal(c.cuda, false);
  assert.deepEqual(c.gpus, []);
  assert.ok(c.threads >= 1);
  assert.match(be.version(), /^\d+\.\d+\.\d+/);
});

test('alloc returns zeroed native memory; release detaches it and is idempotent', () => {
  for (const n of [0, 1, 100, 4096, 3 << 20]) {
    const buf = be.alloc(n);
    assert.equal(buf.length, n);
    assert.ok(buf.every((x) => x === 0));
    buf.fill(7);
    be.release(buf);
    assert.equal(buf.length, 0);
    assert.equal(buf.buffer.byteLength, 0);
    be.release(buf); // second release: no-op
  }
  assert.throws(() => be.release(new Uint8Array(8)), TypeError);
  assert.throws(() => be.release(42 as unknown as Uint8Array), TypeError);
  assert.throws(() => be.alloc(-1), RangeError);
  assert.throws(() => be.alloc(1.5), RangeError);
});

test('native buffers work as inputs and outputs; release during a call is deferred safely', async () => {
  const next = rng(51);
  const t = Array.from({ length: 2048 }, () => next());
  const s = Array.from({ length: 2048 }, () => next());
  const bases = be.alloc(2048 * 96);
  bases.set(await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(t)));
  const scalars = be.alloc(2048 * 32);
  scalars.set(frVector(s));
  const pending = be.msmG1(bases, scalars);
  be.release(bases); // the call holds a pin: memory is freed when it finishes
  be.release(scalars);
  const { point } = await pending;
  let acc = 0n;
  for (let i = 0; i < t.length; i++) acc += t[i] * s[i];
  assert.ok(readG1(point, 0).equals(g1Mul(G1.BASE, acc)));
  // detached buffers read as empty: an empty MSM is the identity
  assert.deepEqual((await be.msmG1(bases, scalars)).point, new Uint8Array(96));
});

test('setThreads resizes the pool; results do not depend on the thread count', async () => {
  const addon = loadNative();
  const before = be.capabilities().threads;
  const next = rng(52);
  const t = Array.from({ length: 3000 }, () => next());
  const s = Array.from({ length: 3000 }, () => next());
  const bases = await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(t));
  const results: Uint8Array[] = [];
  for (const n of [1, 3, 0]) {
    const got = addon.setThreads(n);
    assert.equal(got, n === 0 ? before : n);
    results.push((await be.msmG1(bases, frVector(s))).point);
  }
  assert.deepEqual(results[0], results[1]);
  assert.deepEqual(results[1], results[2]);
  assert.throws(() => addon.setThreads(-2), RangeError);
  assert.equal(be.capabilities().threads, before);
});

test('concurrent calls share the pool', async () => {
  const next = rng(53);
  const t = Array.from({ length: 4096 }, () => next());
  const bases = await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(t));
  const jobs = Array.from({ length: 6 }, async () => {
    const s = Array.from({ length: 4096 }, () => next());
    const { point } = await be.msmG1(bases, frVector(s));
    let acc = 0n;
    for (let i = 0; i < t.length; i++) acc += t[i] * s[i];
    return readG1(point, 0).equals(g1Mul(G1.BASE, acc));
  });
  assert.deepEqual(await Promise.all(jobs), Array(6).fill(true));
});

test('garbage bytes (points off the curve, limbs ≥ modulus) give garbage results, never a crash', async () => {
  const { randomBytes } = await import('node:crypto');
  for (const n of [1, 7, 300]) {
    const junk1 = new Uint8Array(randomBytes(n * 96));
    const junk2 = new Uint8Array(randomBytes(n * 192));
    const sc = new Uint8Array(randomBytes(n * 32));
    junk1.fill(0xff, 0, 96);
    sc.fill(0xff, 0, 32);
    assert.equal((await be.msmG1(junk1, sc)).point.length, 96);
    assert.equal((await be.msmG2(junk2, sc)).point.length, 192);
    assert.equal((await be.batchAddG1(junk1, Uint32Array.from({ length: n }, (_, i) => i))).length, 96);
    assert.equal((await be.fixedBaseMulG1(junk1.subarray(0, 96), sc)).length, n * 96);
    await be.ntt(new Uint8Array(randomBytes(64 * 32)), { inverse: true, coset: true });
  }
});
