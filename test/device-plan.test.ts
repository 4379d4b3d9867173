/**
 * The device-memory plan (src/backend/device-plan.ts, issue 24) as a pure function of sizes: a 32 GiB
 * PoRep partition on the GPUs storage providers own (16 and 24 GiB) and on the lent H200, a budget
 * too small, the plan's own bound (resident + working ≤ budget) over random footprints and budgets,
 * monotony in the budget, the re-plan after an out-of-memory failure, the budget from the free memory
 * and [gpus] memory_limit, and the limit's text forms.
 *
 * The 32 GiB footprint: 130,278,541 constraints, 328 inputs and 130,169,893 aux variables
 * (rust-fil-proofs' pinned counts, README), domain 2^27; the matrices' 6.45 GiB and the A/B query
 * sizes (about 57 M each) are kiln's 32 GiB shape as measured on the H200 (bench/RESULTS.md: circuit
 * 6.9 GiB resident, SRS 44.1 GiB).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SECTION_NAMES,
  MAX_H_COPIES,
  deviceBudget,
  footprintOf,
  msmChunkScratch,
  msmPersistent,
  parseMemoryLimit,
  pickWindow,
  planDeviceMemory,
  sectionBytes,
  shrinkPlan,
  singlePassScratch,
  type CircuitFootprint,
} from '../src/backend/device-plan.js';
import { rng } from './support.js';

const GiB = 2 ** 30;
const aux = 130_169_893;
const nq = 57_000_000;
const porep32: CircuitFootprint = {
  logN: 27,
  numVars: 328 + aux,
  matrixBytes: Math.round(6.45 * GiB),
  fixedBytes: 1024 + 2 * nq * 4,
  sections: { h: 2 ** 27 - 1, l: aux, a: nq, b_g1: nq, b_g2: nq },
};
const srsBytes = (fp: CircuitFootprint): number => SECTION_NAMES.reduce((t, s) => t + sectionBytes(s, fp.sections[s]), 0);
/** A card of `gib` GiB as the CUDA backend sees it: its free memory after the context, the default reserve. */
const card = (gib: number): number => deviceBudget(gib * GiB - 0.5 * GiB, gib * GiB).budgetBytes;

test('32 GiB PoRep on the whole H200: everything resident, as before the plan', () => {
  const p = planDeviceMemory(porep32, card(139.8));
  assert.ok(p.feasible);
  assert.equal(p.matrices, 'resident');
  for (const s of SECTION_NAMES) assert.equal(p.sections[s], 'resident', s);
  assert.equal(p.quotientBuffers, 4);
  assert.equal(p.prefetchWitness, true);
  assert.equal(p.msmScratchBytes, 0, 'single-pass MSMs');
  assert.equal(p.streamedBytesPerPartition, 0);
  assert.equal(p.slots, 0);
  assert.equal(p.hostBytes, 0);
  // SRS 44.1 GiB resident as measured
  assert.ok(Math.abs(srsBytes(porep32) / GiB - 44.1) < 0.3, `SRS ${srsBytes(porep32) / GiB} GiB`);
});

test('copies of h (precomputed multiples): the spare memory of a big card, none on small ones, within the budget', () => {
  const on = { precomputeH: true };
  const hb = sectionBytes('h', porep32.sections.h);
  const single = singlePassScratch(porep32);
  for (const gib of [16, 24, 80]) assert.equal(planDeviceMemory(porep32, card(gib), on).hCopies, 1, `${gib} GiB: no copies`);
  const everything = planDeviceMemory(porep32, card(139.8), on);
  assert.equal(planDeviceMemory(porep32, card(139.8)).hCopies, 1, 'none unless asked (precomputeH)');
  assert.ok(everything.hCopies >= 2, `the H200 keeps copies of h (${everything.hCopies})`);
  assert.match(everything.summary, new RegExp(`h × ${everything.hCopies} precomputed`));
  for (const gib of [139.8, 200, 400, 1000]) {
    const b = card(gib);
    const p = planDeviceMemory(porep32, b, on);
    // the copies sit in the resident bytes; with the single pass and one more section (the precompute's old
    // table beside the new one) the plan stays within its budget
    const plain = planDeviceMemory(porep32, b);
    assert.equal(plain.hCopies, 1);
    assert.equal(p.residentBytes - (p.hCopies - 1) * hb, plain.residentBytes - (plain.hCopies - 1) * hb);
    // phase 2 (file comment): the witness (twice, prefetched), h, the single pass's scratch; nothing streams here
    assert.equal(p.slots, 0);
    const phase2 = porep32.numVars * 32 * (p.prefetchWitness ? 2 : 1) + 2 ** porep32.logN * 32 + single;
    assert.ok(p.residentBytes + p.workingBytes <= b);
    assert.ok(p.residentBytes + phase2 + hb <= b, `${gib} GiB: ${p.hCopies} copies within the budget`);
    // and one copy more would not have fit
    if (p.hCopies < MAX_H_COPIES) assert.ok(p.residentBytes + hb + phase2 + hb > b, `${gib} GiB: room for another copy left unused`);
  }
  assert.equal(planDeviceMemory(porep32, card(1000), on).hCopies, MAX_H_COPIES, 'at most MAX_H_COPIES');
  // copies × points < 2^31 (the MSM's base index): a (2^28 − 1)-point h takes at most 8 (8 × (2^28 − 1) = 2^31 − 8)
  const big: CircuitFootprint = { ...porep32, logN: 28, sections: { ...porep32.sections, h: 2 ** 28 - 1 } };
  assert.equal(planDeviceMemory(big, card(4000), on).hCopies, 8);
});

test('32 GiB PoRep on a 24 GiB card: matrices resident, the SRS streamed, the quotient in place', () => {
  const budget = card(24);
  const p = planDeviceMemory(porep32, budget);
  assert.ok(p.feasible, p.summary);
  assert.equal(p.matrices, 'resident');
  for (const s of SECTION_NAMES) assert.equal(p.sections[s], 'streamed', s);
  assert.equal(p.quotientBuffers, 2);
  assert.equal(p.prefetchWitness, false);
  assert.ok(p.residentBytes + p.workingBytes <= budget);
  assert.equal(p.streamedBytesPerPartition, srsBytes(porep32));
  assert.equal(p.hostBytes, srsBytes(porep32));
  assert.ok(p.msmScratchBytes >= 768 * 2 ** 20, `MSM scratch ${p.msmScratchBytes}`);
  assert.match(p.summary, /matrices resident; SRS streamed; staging [23] × [\d.]+ [MG]iB; quotient in place/);
});

test('matrices forced to stream (the A/B of bench/RESULTS.md issue 24 round 3): their room goes to the MSMs and the sections', () => {
  const budget = card(24);
  const base = planDeviceMemory(porep32, budget);
  const p = planDeviceMemory(porep32, budget, { matrices: 'streamed' });
  assert.ok(p.feasible, p.summary);
  assert.equal(p.matrices, 'streamed');
  assert.ok(p.residentBytes + p.workingBytes <= budget);
  assert.equal(p.residentBytes < base.residentBytes + porep32.matrixBytes, true);
  assert.ok(p.msmScratchBytes > base.msmScratchBytes, `${p.msmScratchBytes} > ${base.msmScratchBytes}`);
  assert.ok(p.streamedBytesPerPartition >= porep32.matrixBytes);
  assert.match(p.summary, /^matrices streamed/);
});

test('32 GiB PoRep on a 16 GiB card: the matrices stream too', () => {
  const budget = card(16);
  const p = planDeviceMemory(porep32, budget);
  assert.ok(p.feasible, p.summary);
  assert.equal(p.matrices, 'streamed');
  for (const s of SECTION_NAMES) assert.equal(p.sections[s], 'streamed', s);
  assert.equal(p.quotientBuffers, 2);
  assert.ok(p.residentBytes + p.workingBytes <= budget);
  assert.equal(p.streamedBytesPerPartition, srsBytes(porep32) + porep32.matrixBytes);
  assert.equal(p.hostBytes, srsBytes(porep32), 'the matrices stay in the shape arrays, not in new pinned memory');
});

test('a card too small is refused with the memory needed', () => {
  const budget = card(12);
  const p = planDeviceMemory(porep32, budget);
  assert.equal(p.feasible, false);
  assert.ok(p.neededBytes > budget);
  // the smallest plan: twiddles 2 GiB + tables + witness 3.9 GiB + two 4 GiB quotient buffers + staging
  assert.ok(p.neededBytes > 13.9 * GiB && p.neededBytes < 15 * GiB, `needs ${p.neededBytes / GiB} GiB`);
  assert.match(p.summary, /does not fit: needs [\d.]+ GiB, [\d.]+ GiB available/);
});

test('over random footprints and budgets, a feasible plan stays within its budget, and more memory keeps it feasible', () => {
  const r = rng(24).u32;
  for (let i = 0; i < 300; i++) {
    const logN = 10 + (r() % 18);
    const n = 2 ** logN;
    const vars = Math.max(2, Math.floor(n * (0.5 + (r() % 500) / 1000)));
    const fp: CircuitFootprint = {
      logN,
      numVars: vars,
      matrixBytes: vars * (4 + (r() % 40)),
      fixedBytes: r() % 10000,
      sections: { h: n - 1, l: vars - 1, a: Math.floor(vars * ((r() % 100) / 100)), b_g1: 0, b_g2: 0 },
    };
    fp.sections.b_g1 = fp.sections.b_g2 = Math.floor(vars * ((r() % 100) / 100));
    const b1 = (r() % 200) * 2 ** 26;
    const b2 = b1 + (r() % 100) * 2 ** 26;
    const p1 = planDeviceMemory(fp, b1);
    const p2 = planDeviceMemory(fp, b2);
    for (const [p, b] of [
      [p1, b1],
      [p2, b2],
    ] as const) {
      if (!p.feasible) continue;
      const msm = p.msmScratchBytes === 0 ? singlePassScratch(fp) : p.msmScratchBytes;
      assert.ok(p.residentBytes + Math.max(p.workingBytes, 0) <= b, `case ${i}: ${p.residentBytes} + ${p.workingBytes} > ${b}`);
      assert.ok(msm > 0);
    }
    assert.equal(p1.neededBytes, p2.neededBytes, 'the smallest plan does not depend on the budget');
    if (p1.feasible) assert.ok(p2.feasible, `case ${i}: more memory, no plan`);
    if (p1.feasible && p1.matrices === 'resident') assert.equal(p2.matrices, 'resident', `case ${i}: more memory streamed the matrices`);
  }
});

test('after an out-of-memory failure the plan shrinks what a proof takes, then gives up', () => {
  const full = planDeviceMemory(porep32, card(139.8));
  const s1 = shrinkPlan(full, porep32);
  assert.ok(s1);
  assert.equal(s1.quotientBuffers, 2);
  assert.equal(s1.prefetchWitness, false);
  assert.ok(s1.msmScratchBytes > 0 && s1.msmScratchBytes < singlePassScratch(porep32));
  assert.match(s1.summary, /re-planned after running out of device memory/);
  let p = s1;
  let steps = 0;
  for (let next = shrinkPlan(p, porep32); next; next = shrinkPlan(p, porep32)) {
    assert.ok(next.msmScratchBytes < p.msmScratchBytes);
    p = next;
    assert.ok(++steps < 64, 'shrinking ends');
  }
  assert.equal(p.msmScratchBytes, 768 * 2 ** 20);
});

test('the budget: free memory capped by memory_limit, less the reserve', () => {
  const free = 23.5 * GiB;
  const total = 24 * GiB;
  const a = deviceBudget(free, total);
  assert.equal(a.limitBytes, undefined);
  assert.ok(a.budgetBytes < free && a.budgetBytes > free - 1 * GiB);
  const b = deviceBudget(free, total, { bytes: 16 * GiB });
  assert.equal(b.limitBytes, 16 * GiB);
  assert.ok(b.budgetBytes < 16 * GiB && b.budgetBytes > 15 * GiB);
  const c = deviceBudget(free, total, { fraction: 0.5 });
  assert.equal(c.limitBytes, 12 * GiB);
  const d = deviceBudget(free, total, { bytes: 100 * GiB });
  assert.equal(d.budgetBytes, a.budgetBytes, 'a limit above the free memory changes nothing');
});

test('memory limits from text: bytes, sizes, percentages; bad ones refused', () => {
  assert.deepEqual(parseMemoryLimit('24GiB'), { bytes: 24 * GiB });
  assert.deepEqual(parseMemoryLimit('16 GB'), { bytes: 16e9 });
  assert.deepEqual(parseMemoryLimit(String(20 * GiB)), { bytes: 20 * GiB });
  assert.deepEqual(parseMemoryLimit('75%'), { fraction: 0.75 });
  for (const bad of ['0%', '101%', 'lots', '512MiB', '-1GiB', '']) assert.throws(() => parseMemoryLimit(bad), RangeError, bad);
});

test('the MSM scratch model: a single 2^27 pass is what the H200 measured, chunks shrink it', () => {
  const c = pickWindow(2 ** 27);
  assert.equal(c, 20, 'the window the cost model picks at 2^27 (msm.cu pick_window; the H200 partition ran c = 20)');
  const one = msmChunkScratch(1, 2 ** 27, c) + msmPersistent(1, c);
  // the partition's pool peaked at 46.8 GiB with h, the witness and the quotient's leftovers in it
  assert.ok(one > 30 * GiB && one < 46.8 * GiB, `single pass ${one / GiB} GiB`);
  assert.ok(msmChunkScratch(1, 2 ** 23, 16) < 3 * GiB);
  assert.ok(msmChunkScratch(2, 2 ** 20, 14) > msmChunkScratch(1, 2 ** 20, 14), 'G2 buckets are twice as large');
  const fp = footprintOf({
    shape: {
      numInputs: 2,
      numAux: 9,
      a: { rowPtr: new Uint32Array(11), colIdx: new Uint32Array(20), coeffIdx: new Uint32Array(20), coeffs: new Uint8Array(64) },
      b: { rowPtr: new Uint32Array(11), colIdx: new Uint32Array(10), coeffIdx: new Uint32Array(10), coeffs: new Uint8Array(32) },
      c: { rowPtr: new Uint32Array(11), colIdx: new Uint32Array(5), coeffIdx: new Uint32Array(5), coeffs: new Uint8Array(32) },
    },
    logN: 4,
    na: 7,
    nb: 3,
  });
  assert.deepEqual(fp, { logN: 4, numVars: 11, matrixBytes: 3 * 44 + 35 * 8, fixedBytes: 128 + 40, sections: { h: 15, l: 9, a: 7, b_g1: 3, b_g2: 3 } });
});
