/**
 * MSMs over precomputed bases (the CUDA addon's precomputeBases: copy j of the bases = 2^(j·c·wc)·P, made on
 * the device; an MSM spreads a scalar's ⌈256/c⌉ digits over the copies and wc windows of buckets) against the
 * CPU twin (NativeBackend msmG1/msmG2 over the plain bases): several numbers of copies and windows (one window
 * of buckets with every digit in its own copy, and partial ones), the edge scalars (0, 1, equal scalars, ≥ r,
 * P and −P), identity bases, scalarIndex, the chunked runs of a small scratch budget, and the refusals.
 * Without a GPU every test is skipped with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CudaBackend, type DeviceBases } from '../../src/backend/cuda.js';
import { NativeBackend } from '../../src/backend/native.js';
import { G1, G2, writeG1, writeG2 } from '../../src/field/layout.js';
import { FR_ONE_MONT, randomFrBytes, rng } from '../support.js';
import { hex, log, skip } from './gpu-support.js';

const MiB = 2 ** 20;
const randomFr = randomFrBytes;

/** What precomputeBases makes of `copies` for window c: wc = ⌈D/copies⌉ windows, ⌈D/wc⌉ copies (D = ⌈256/c⌉). */
function expected(copies: number, c: number): { copies: number; windows: number } {
  const D = Math.ceil(256 / c);
  const wc = Math.ceil(D / Math.min(copies, D));
  return { copies: Math.ceil(D / wc), windows: wc };
}

test('MSM over precomputed bases equals the CPU (G1 and G2, copies and windows, edges, chunked runs, refusals)', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const addon = gpu.addon;
  assert.equal(typeof addon.precomputeBases, 'function', 'the addon has precomputeBases');
  const precompute = addon.precomputeBases!.bind(addon);
  const g1gen = new Uint8Array(96);
  writeG1(g1gen, 0, G1.BASE);
  const g2gen = new Uint8Array(192);
  writeG2(g2gen, 0, G2.BASE);
  const n1 = 20000;
  const bases1 = await cpu.fixedBaseMulG1(g1gen, randomFr(n1, 1));
  const n2 = 3000;
  const bases2 = await cpu.fixedBaseMulG2(g2gen, randomFr(n2, 2));
  const handles: DeviceBases[] = [];
  const upload = (curve: 1 | 2, b: Uint8Array): DeviceBases => {
    const h = addon.uploadBases(gpu.device, curve, b);
    handles.push(h);
    return h;
  };
  const cmp = async (curve: 1 | 2, h: DeviceBases, bases: Uint8Array, sc: Uint8Array, what: string, idx?: Uint32Array): Promise<void> => {
    const opts = idx ? { scalarIndex: idx } : undefined;
    const want = curve === 1 ? await cpu.msmG1(bases, sc, opts) : await cpu.msmG2(bases, sc, opts);
    const got = await addon.msm(h, sc, idx);
    assert.equal(hex(got.point), hex(want.point), `${what}: GPU over precomputed bases ≠ CPU`);
  };

  try {
    await t.test('copies × windows: every digit in its own copy (one window of buckets) and partial spreads', async () => {
      const cases: [1 | 2, number, number, number][] = [
        // curve, points, copies asked, window
        [1, n1, 2, 16],
        [1, n1, 3, 13],
        [1, n1, 4, 20],
        [1, n1, 22, 12], // D = 22: one window of buckets
        [1, 5000, 12, 22], // D = 12, c = 22: one window of 2^21 buckets over few points
        [1, 1, 8, 16],
        [1, 7, 5, 9],
        [2, n2, 3, 11],
        [2, n2, 26, 10], // D = 26: one window
        [2, 100, 6, 14],
      ];
      for (const [curve, n, copies, c] of cases) {
        const b = curve === 1 ? bases1.subarray(0, n * 96) : bases2.subarray(0, n * 192);
        const h = upload(curve, b);
        const pre = await precompute(h, copies, c);
        const want = expected(copies, c);
        assert.equal(pre.copies, want.copies, `G${curve} n=${n} copies=${copies} c=${c}: copies made`);
        assert.equal(pre.windows, want.windows, `G${curve} n=${n} copies=${copies} c=${c}: windows of buckets`);
        assert.equal(pre.window, c);
        assert.equal(pre.bytes, want.copies * b.length, 'bytes = copies × the bases');
        const r = await addon.msm(h, randomFr(n, 100 + c));
        assert.equal(r.window, c, 'the MSM takes the precomputed window');
        await cmp(curve, h, b, randomFr(n, 200 + c), `G${curve} n=${n}, ${pre.copies} copies, c=${c}, ${pre.windows} window(s)`);
        log(`G${curve} n=${n}: ${pre.copies} copies (c=${c}, ${pre.windows} window(s) of buckets) made in ${pre.ms.toFixed(1)} ms; MSM equals the CPU`);
      }
    });

    await t.test('edges over precomputed bases: 0/1 mix, equal scalars, ≥ r, P and −P, identity bases, scalarIndex', async () => {
      for (const [copies, c] of [[22, 12], [3, 16]] as const) {
        const n = 5000;
        const b = bases1.subarray(0, n * 96);
        const h = upload(1, b);
        await precompute(h, copies, c);
        const tag = `${copies} copies, c=${c}`;
        await cmp(1, h, b, new Uint8Array(n * 32), `${tag}: all zero`);
        const ones = new Uint8Array(n * 32);
        for (let i = 0; i < n; i++) ones.set(FR_ONE_MONT, i * 32);
        await cmp(1, h, b, ones, `${tag}: all one`);
        const mix = randomFr(n, 9);
        const r = rng(3).u32;
        for (let i = 0; i < n; i++) {
          const k = r() % 3;
          if (k === 0) mix.fill(0, i * 32, i * 32 + 32);
          else if (k === 1) mix.set(FR_ONE_MONT, i * 32);
        }
        await cmp(1, h, b, mix, `${tag}: zero/one/other mix`);
        const same = new Uint8Array(n * 32);
        const s0 = randomFr(1, 77);
        for (let i = 0; i < n; i++) same.set(s0, i * 32);
        await cmp(1, h, b, same, `${tag}: one scalar repeated (one huge bucket per digit)`);
        await cmp(1, h, b, new Uint8Array(n * 32).fill(0xff), `${tag}: all-ones bit patterns (≥ r)`);
        const ns = 1700;
        const sc = randomFr(ns, 21);
        for (let i = 0; i < ns; i += 3) sc.set(FR_ONE_MONT, i * 32);
        const idx = new Uint32Array(n);
        for (let i = 0; i < n; i++) idx[i] = r() % ns;
        await cmp(1, h, b, sc, `${tag}: scalarIndex`, idx);
        // repeated bases: copies of equal points meet in a bucket (P + P), P and −P cancel
        const rep = new Uint8Array(3000 * 96);
        for (let i = 0; i < 3000; i++) rep.set(bases1.subarray((i % 3) * 96, (i % 3) * 96 + 96), i * 96);
        const hr = upload(1, rep);
        await precompute(hr, copies, c);
        await cmp(1, hr, rep, same.subarray(0, 3000 * 32), `${tag}: repeated bases and equal scalars`);
        await cmp(1, hr, rep, randomFr(3000, 12), `${tag}: three bases repeated`);
        const pm = new Uint8Array(2 * 96);
        pm.set(bases1.subarray(0, 96), 0);
        pm.set(cpu.g1Op('neg', bases1.subarray(0, 96)), 96);
        const hp = upload(1, pm);
        await precompute(hp, copies, c);
        await cmp(1, hp, pm, new Uint8Array([...s0, ...s0]), `${tag}: P and −P with equal scalars`);
        // identity bases: their copies stay the identity
        const withId = b.slice();
        for (let i = 0; i < n; i += 7) withId.fill(0, i * 96, i * 96 + 96);
        const hi = upload(1, withId);
        await precompute(hi, copies, c);
        await cmp(1, hi, withId, randomFr(n, 10), `${tag}: identity bases`);
      }
      const b2 = bases2.subarray(0, 1000 * 192);
      const withId2 = b2.slice();
      for (let i = 0; i < 1000; i += 5) withId2.fill(0, i * 192, i * 192 + 192);
      const h2 = upload(2, withId2);
      await precompute(h2, 4, 13);
      await cmp(2, h2, withId2, randomFr(1000, 32), 'G2 identity bases, 4 copies');
      const same2 = new Uint8Array(1000 * 32);
      const t0 = randomFr(1, 8);
      for (let i = 0; i < 1000; i++) same2.set(t0, i * 32);
      await cmp(2, h2, withId2, same2, 'G2 equal scalars, 4 copies');
    });

    await t.test('chunked runs (a small MSM scratch budget) over precomputed bases', async () => {
      const h = upload(1, bases1);
      await precompute(h, 4, 13);
      const h2 = upload(2, bases2);
      await precompute(h2, 5, 11);
      try {
        // G1: budgets just above the model's floor (~61 MiB with G1's partials), so the 20,000 points run in
        // chunks of 5,000 and 10,000; G2's floor is ~91 MiB (its 3,000 points are one chunk under a budget)
        for (const budget of [64 * MiB, 66 * MiB, 100 * MiB]) {
          addon.setMemoryPlan!(gpu.device, budget, 0, 0);
          await cmp(1, h, bases1, randomFr(n1, 5), `G1 chunked, budget ${budget / MiB} MiB`);
          const mix = randomFr(n1, 6);
          for (let i = 0; i < n1; i += 2) mix.fill(0, i * 32, i * 32 + 32);
          await cmp(1, h, bases1, mix, `G1 chunked, half zero, budget ${budget / MiB} MiB`);
        }
        addon.setMemoryPlan!(gpu.device, 120 * MiB, 0, 0);
        await cmp(2, h2, bases2, randomFr(n2, 7), 'G2 under a 120 MiB budget');
      } finally {
        addon.setMemoryPlan!(gpu.device, 0, 0, 0);
      }
    });

    await t.test('refusals: twice, a write after, host bases, bad arguments; the model picks a window when none is given', async () => {
      const b = bases1.subarray(0, 1000 * 96);
      const h = upload(1, b);
      const pre = await precompute(h, 6);
      assert.ok(pre.window >= 4 && pre.window <= 22, `the model's window ${pre.window}`);
      await cmp(1, h, b, randomFr(1000, 44), `model's window ${pre.window}, ${pre.copies} copies`);
      await assert.rejects(precompute(h, 2, 16), /already have precomputed copies/);
      await assert.rejects(addon.writeBases(h, 0, bases1.subarray(0, 96)), /precomputed copies/);
      assert.throws(() => void precompute(h, 2, 3), RangeError);
      assert.throws(() => void precompute(h, 2, 25), RangeError);
      // one copy asked (or a window with a single digit per copy already): nothing to make, the bases as they were
      const h1 = upload(1, b);
      const one = await precompute(h1, 1, 16);
      assert.equal(one.copies, 1);
      assert.equal(one.bytes, b.length);
      await cmp(1, h1, b, randomFr(1000, 45), 'one copy: plain MSM');
      if (typeof addon.hostBases === 'function') {
        const piece = gpu.alloc(b.length);
        piece.set(b);
        const hb = addon.hostBases(gpu.device, 1, [piece]);
        try {
          await assert.rejects(precompute(hb, 4, 16), /host memory/);
        } finally {
          addon.freeBases(hb);
          gpu.release(piece);
        }
      }
    });
  } finally {
    for (const h of handles) addon.freeBases(h);
    gpu.evictAll();
  }
});
