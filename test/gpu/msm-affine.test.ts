/**
 * Batch-affine bucket accumulation (the CUDA addon's setMsmAcc(4), KILN_MSM_ACC=4 at the edges: levels of
 * pairwise affine additions over each bucket's padded run, one inversion per thread by Montgomery's trick,
 * then the XYZZ chunks) against the CPU twin (NativeBackend msmG1/msmG2): random scalars in G1 and G2, runs of
 * equal points (doublings at every level), P next to −P (identities in the levels), zeros and ones mixed in,
 * precomputed bases, and a scratch budget that makes a pass's levels run in slices. Each case also asserts
 * that the levels ran (the MSM's timings: pippenger.affineLevels), so a silent fallback to the XYZZ path
 * cannot pass for them. Without a GPU every test is skipped with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CudaBackend, type CudaMsmResult, type DeviceBases } from '../../src/backend/cuda.js';
import { NativeBackend } from '../../src/backend/native.js';
import { G1, G2, writeG1, writeG2 } from '../../src/field/layout.js';
import { FR_ONE_MONT, randomFrBytes } from '../support.js';
import { hex, log, skip } from './gpu-support.js';

const MiB = 2 ** 20;
const randomFr = randomFrBytes;

test('batch-affine MSM accumulation (setMsmAcc 4) equals the CPU', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const addon = gpu.addon;
  assert.equal(typeof addon.setMsmAcc, 'function', 'the addon has setMsmAcc');
  const g1gen = new Uint8Array(96);
  writeG1(g1gen, 0, G1.BASE);
  const g2gen = new Uint8Array(192);
  writeG2(g2gen, 0, G2.BASE);
  const n1 = 20000;
  const bases1 = await cpu.fixedBaseMulG1(g1gen, randomFr(n1, 61));
  const n2 = 3000;
  const bases2 = await cpu.fixedBaseMulG2(g2gen, randomFr(n2, 62));
  const handles: DeviceBases[] = [];
  const upload = (curve: 1 | 2, b: Uint8Array): DeviceBases => {
    const h = addon.uploadBases(gpu.device, curve, b);
    handles.push(h);
    return h;
  };
  /** GPU over h against the CPU over `bases`; returns the GPU's result (its timings say what ran). */
  const cmp = async (curve: 1 | 2, h: DeviceBases, bases: Uint8Array, sc: Uint8Array, what: string): Promise<CudaMsmResult> => {
    const want = curve === 1 ? await cpu.msmG1(bases, sc) : await cpu.msmG2(bases, sc);
    const got = (await addon.msm(h, sc)) as CudaMsmResult;
    assert.equal(hex(got.point), hex(want.point), `${what}: GPU (batch-affine) ≠ CPU`);
    return got;
  };
  const leveled = (r: CudaMsmResult, what: string): void => {
    assert.ok(r.timings.pippenger.affineLevels >= 2, `${what}: the batch-affine levels ran (levels ${r.timings.pippenger.affineLevels})`);
  };
  const equalScalars = (n: number, seed: number): Uint8Array => {
    const s0 = randomFr(1, seed);
    const out = new Uint8Array(n * 32);
    for (let i = 0; i < n; i++) out.set(s0, i * 32);
    return out;
  };

  addon.setMsmAcc!(4);
  try {
    await t.test('G1 and G2: random scalars, long runs (forced narrow windows)', async () => {
      const h1 = upload(1, bases1);
      addon.setMsmWindow(8);
      const r = await cmp(1, h1, bases1, randomFr(n1, 63), 'G1 20,000 random, c = 8');
      leveled(r, 'G1 random');
      log(`G1 c=8: ${r.timings.pippenger.affineLevels} levels, ${r.timings.pippenger.affineSlices} slices`);
      const mix = randomFr(n1, 64);
      for (let i = 0; i < n1; i += 3) mix.fill(0, i * 32, i * 32 + 32);
      for (let i = 1; i < n1; i += 7) mix.set(FR_ONE_MONT, i * 32);
      leveled(await cmp(1, h1, bases1, mix, 'G1 zeros and ones mixed in'), 'G1 mixed');
      addon.setMsmWindow(5);
      const h2 = upload(2, bases2);
      const r2 = await cmp(2, h2, bases2, randomFr(n2, 65), 'G2 3,000 random, c = 5');
      leveled(r2, 'G2 random');
      log(`G2 c=5: ${r2.timings.pippenger.affineLevels} levels`);
      leveled(await cmp(2, h2, bases2, equalScalars(n2, 66), 'G2 equal scalars'), 'G2 equal scalars');
    });

    await t.test('runs of equal points (doublings) and P beside −P (identities) at every level', async () => {
      addon.setMsmWindow(8);
      // 20 bases, each 1000 times in a row: with equal scalars each window's bucket is one run of them
      const rep = new Uint8Array(n1 * 96);
      for (let i = 0; i < n1; i++) {
        const k = Math.floor(i / 1000);
        rep.set(bases1.subarray(k * 96, k * 96 + 96), i * 96);
      }
      leveled(await cmp(1, upload(1, rep), rep, equalScalars(n1, 67), 'repeated bases, equal scalars'), 'doublings');
      // P, −P, P, P, … : pairs that cancel and pairs that double, then identities meeting points
      const pm = new Uint8Array(8000 * 96);
      for (let i = 0; i < 8000; i++) {
        const k = (i >> 2) % 50;
        const p = bases1.subarray(k * 96, k * 96 + 96);
        pm.set(i % 4 === 1 ? cpu.g1Op('neg', p) : p, i * 96);
      }
      leveled(await cmp(1, upload(1, pm), pm, equalScalars(8000, 68), 'P beside −P, equal scalars'), 'identities');
      // everything cancels: the MSM is the identity
      const zero = new Uint8Array(8000 * 96);
      for (let i = 0; i < 8000; i++) {
        const k = (i >> 1) % 50;
        const p = bases1.subarray(k * 96, k * 96 + 96);
        zero.set(i % 2 === 1 ? cpu.g1Op('neg', p) : p, i * 96);
      }
      const rz = await cmp(1, upload(1, zero), zero, equalScalars(8000, 69), 'P, −P throughout');
      leveled(rz, 'all cancel');
      assert.ok(rz.point.every((x) => x === 0), 'Σ (P − P) is the identity');
    });

    await t.test('over precomputed bases', async () => {
      addon.setMsmWindow(0);
      const h = upload(1, bases1);
      await addon.precomputeBases!(h, 4, 8);
      leveled(await cmp(1, h, bases1, randomFr(n1, 70), 'G1, 4 copies, c = 8'), 'precomputed');
      const h2 = upload(2, bases2);
      await addon.precomputeBases!(h2, 3, 5);
      leveled(await cmp(2, h2, bases2, randomFr(n2, 71), 'G2, 3 copies, c = 5'), 'precomputed G2');
    });

    await t.test('a scratch budget: the levels of a pass in slices', async () => {
      addon.setMsmWindow(8);
      const h = upload(1, bases1);
      const sc = randomFr(n1, 72);
      let sliced = 0;
      try {
        for (const budget of [78, 80, 84, 90, 100, 140]) {
          addon.setMemoryPlan!(gpu.device, budget * MiB, 0, 0);
          const r = await cmp(1, h, bases1, sc, `budget ${budget} MiB`);
          const p = r.timings.pippenger;
          if (p.affineSlices > p.affinePasses) sliced++;
          log(`budget ${budget} MiB: ${p.affineLevels} levels, ${p.affinePasses} passes, ${p.affineSlices} slices`);
        }
      } finally {
        addon.setMemoryPlan!(gpu.device, 0, 0, 0);
      }
      assert.ok(sliced > 0, 'some budget made a pass run its levels in slices');
    });
  } finally {
    addon.setMsmAcc!(5); // the default
    addon.setMsmWindow(0);
    for (const h of handles) addon.freeBases(h);
  }
});
