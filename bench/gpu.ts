/**
 * GPU benchmarks (npm run bench:gpu): G1 MSM 2^20 … 2^26, G2 MSM 2^20 … 2^24, Fr NTT 2^20 … 2^27,
 * and whole synthetic partitions shaped like the 2 KiB and 32 GiB PoRep partitions (provePartition's
 * device pipeline: witness upload, a/b/c mat-vec, quotient, five MSMs),
 * with device-resident data (bases [k_i]·G and scalars generated on the device, so only the
 * computation is timed; MSM time = the whole MSM call incl. classification and the host's window
 * combination, NTT time = CUDA events around the transform). Prints a markdown table; `--append`
 * adds it to bench/RESULTS.md. `--quick` runs the smaller sizes only.
 * Options: --device N, --g1 20,22,24,26 --g2 20,22,24 --ntt 20,21,...  (log2 sizes),
 *          --partition 2KiB,32GiB (shapes of PoRep partitions, see PARTITIONS; none: "--partition none"),
 *          --sweep 22,24 (G1 sizes at which every window width 13 … 23 is timed, to tune the model),
 *          --threads-sweep 24 (G1 and G2 sizes at which the accumulation kernels' block sizes are timed),
 *          --pre 4,12 (the G1/G2 MSM sizes again over bases with that many precomputed copies; --pre-window c forces
 *          their window, else the cost model's), --pre-h 4 (the partitions' h section with that many precomputed
 *          copies), --plan q=3,msm=12GiB (the partitions under that plan: quotient buffers, MSM scratch), --acc 1,4 (each MSM and partition with those accumulation kernels, setMsmAcc), --pairs 32,128 (each MSM with
 *          that many fewest pairs per thread of a batch-affine level, setMsmAffinePairs), --quotient 26,27 (the quotient on device buffers, scalings fused and as passes),
 *          KILN_NTT_FUSED=0|1 (the inverse NTTs' scalings in the partitions, A/B)
 */
import { CudaBackend, cudaCapabilities, loadCuda, type PartitionSpec, type PartitionTimings } from '../src/backend/cuda.js';
import { cudaOptions } from '../src/backend/select.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { G1, G2, writeG1, writeG2 } from '../src/field/layout.js';
import { appendResults, commitLine, fmtMs, machineLine, markdownTable } from './report.js';

/** Synthetic partitions with the sizes of kiln's PoRep circuits (`kiln circuit-info`) and the
 *  profile of the 2 KiB fixture's witness (51.2 % zeros, 47.2 % ones, 1.6 % other values; terms per
 *  row A 2.39, B 1.00, C 2.17 → 2, 1, 2). */
const PARTITIONS: Record<string, Omit<PartitionSpec, 'iterations'>> = {
  '2KiB': { logN: 22, numConstraints: 2_687_921, numInputs: 40, numAux: 2_685_673, na: 2_674_948, nb: 685_522, nnzA: 2, nnzB: 1, nnzC: 2, fracZero: 0.512, fracOne: 0.472 },
  '32GiB': { logN: 27, numConstraints: 130_278_541, numInputs: 328, numAux: 130_169_893, na: 129_753_620, nb: 33_112_282, nnzA: 2, nnzB: 1, nnzC: 2, fracZero: 0.512, fracOne: 0.472 },
};

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const list = (s: string | undefined, d: number[]): number[] => (s ? s.split(',').filter((x) => x !== 'none').map(Number) : d);

async function main(): Promise<void> {
  // the tuning variables (KILN_CUDA_ADDON for an A/B of two builds, KILN_MSM_ACC, KILN_MSM_BATCH, …): read here, the edge
  const tuning = tuningFromEnv(process.env);
  const probe = cudaCapabilities(tuning.addonPath);
  if (!probe.cuda) {
    console.log(`bench:gpu: no GPU (${probe.error}); nothing to measure`);
    return;
  }
  const quick = process.argv.includes('--quick');
  const device = Number(opt('device') ?? 0);
  const g1Sizes = list(opt('g1'), quick ? [20, 22] : [20, 22, 24, 26]);
  const g2Sizes = list(opt('g2'), quick ? [20] : [20, 22, 24]);
  const nttSizes = list(opt('ntt'), quick ? [20, 22] : [20, 21, 22, 23, 24, 25, 26, 27]);
  const partitions = (opt('partition') ?? (quick ? '2KiB' : '2KiB,32GiB')).split(',').filter((x) => x !== 'none');
  for (const p of partitions) if (!PARTITIONS[p]) throw new Error(`unknown partition shape ${p} (${Object.keys(PARTITIONS).join(', ')})`);
  const addon = loadCuda(tuning.addonPath);
  const gpu = new CudaBackend({ ...cudaOptions(tuning), addon, device });
  const info = probe.gpus[device];
  const g1 = new Uint8Array(96);
  writeG1(g1, 0, G1.BASE);
  const g2 = new Uint8Array(192);
  writeG2(g2, 0, G2.BASE);
  const rows: (string | number)[][] = [];
  // --quotient 26,27: the quotient on device buffers, the inverse transforms' scalings fused and as passes
  for (const k of list(opt('quotient'), [])) {
    if (typeof addon.benchQuotient !== 'function' || typeof addon.setNttFused !== 'function') throw new Error('this build of the CUDA addon has no benchQuotient/setNttFused');
    const prev = addon.setNttFused(0);
    try {
      for (const fused of [0, 1] as const) {
        addon.setNttFused(fused);
        const r = await addon.benchQuotient(device, k, 10);
        const name = `quotient 2^${k}, scalings ${fused ? 'fused into the last stage group' : 'as passes of their own'}`;
        rows.push([name, fmtMs(r.medianMs), fmtMs(r.minMs), '3 × (iNTT, coset NTT), pointwise, coset iNTT on device buffers']);
        console.log(`${name}: median ${r.medianMs.toFixed(2)} ms, min ${r.minMs.toFixed(2)} ms`);
      }
    } finally {
      addon.setNttFused(prev as 0 | 1);
    }
  }
  for (const k of nttSizes) {
    const r = await addon.benchNtt(device, k, 10);
    rows.push([`Fr NTT 2^${k}`, fmtMs(r.medianMs), fmtMs(r.minMs), '']);
    console.log(`NTT 2^${k}: median ${r.medianMs.toFixed(2)} ms, min ${r.minMs.toFixed(2)} ms`);
  }
  // the MSMs over plain bases, then (--pre 4,12) over bases with that many precomputed copies
  // (precomputeBases; --pre-window c, else the model's)
  // (precomputeBases; --pre-window c, else the model's); --acc 1,4: each MSM with those accumulation kernels
  const preWindow = Number(opt('pre-window') ?? 0);
  const accs = list(opt('acc'), []);
  if (accs.length && typeof addon.setMsmAcc !== 'function') throw new Error('this build of the CUDA addon has no setMsmAcc');
  // --pairs 32,128: each MSM with that many fewest pairs per thread of a batch-affine level (setMsmAffinePairs)
  const pairsList = list(opt('pairs'), []);
  if (pairsList.length && typeof addon.setMsmAffinePairs !== 'function') throw new Error('this build of the CUDA addon has no setMsmAffinePairs');
  for (const copies of [0, ...list(opt('pre'), [])]) {
    for (const [curve, sizes] of [[1, g1Sizes], [2, g2Sizes]] as const) {
      for (const k of sizes) for (const acc of accs.length ? accs : [undefined]) for (const pairs of pairsList.length ? pairsList : [undefined]) {
        const iters = k >= 26 ? 3 : 5;
        const gen = curve === 1 ? g1 : g2;
        if (acc !== undefined) addon.setMsmAcc!(acc);
        if (pairs !== undefined) addon.setMsmAffinePairs!(pairs);
        const r = copies > 1 ? await addon.benchMsm(device, curve, k, gen, iters, copies, preWindow) : await addon.benchMsm(device, curve, k, gen, iters);
        const pre = r.pre;
        const name = `${curve === 1 ? 'G1' : 'G2'} MSM 2^${k}${copies > 1 ? `, ${pre ? pre.copies : 1} copies of the bases` : ''}${acc !== undefined ? `, KILN_MSM_ACC=${acc}` : ''}${pairs !== undefined ? `, ${pairs} pairs per level thread` : ''}`;
        const t = r.timings as typeof r.timings & { pippenger?: Record<string, number> };
        const ph = t.pippenger ? Object.entries(t.pippenger).map(([k2, v]) => `${k2} ${v.toFixed(1)}`).join(', ') : '';
        const made = pre ? `; ${pre.windows} window(s) of buckets, ${(pre.bytes / 2 ** 30).toFixed(1)} GiB of bases made in ${pre.ms.toFixed(0)} ms` : '';
        rows.push([name, fmtMs(r.medianMs), fmtMs(r.minMs), `c = ${r.window}${made}; classify ${t.classify.toFixed(1)}, pippenger ${t.msm.toFixed(1)} ms (${ph})`]);
        console.log(`${name}: median ${r.medianMs.toFixed(1)} ms, min ${r.minMs.toFixed(1)} ms, ${rows[rows.length - 1][3]}`);
      }
    }
  }
  if (pairsList.length) addon.setMsmAffinePairs!(128);
  const preH = Number(opt('pre-h') ?? 0);
  // --plan q=3,msm=12GiB: the partitions under that plan (an 80 GB card at 32 GiB), else the whole-GPU one
  const planOpt = Object.fromEntries((opt('plan') ?? '').split(',').filter((x) => x.includes('=')).map((x) => x.split('=') as [string, string]));
  const planSpec = {
    ...(planOpt.q ? { quotientBuffers: Number(planOpt.q) as 2 | 3 | 4 } : {}),
    ...(planOpt.msm ? { msmScratchBytes: Math.round(Number(planOpt.msm.replace(/GiB$/, '')) * 2 ** 30) } : {}),
  };
  for (const name of partitions) for (const acc of accs.length ? accs : [undefined]) {
    const spec = { ...PARTITIONS[name], iterations: 3, ...(preH > 1 ? { preH } : {}), ...planSpec };
    if (acc !== undefined) addon.setMsmAcc!(acc);
    const r = await addon.benchPartition(device, spec, g1, g2);
    const totals = r.runs.map((x) => x.total).sort((a, b) => a - b);
    const last: PartitionTimings = r.runs[r.runs.length - 1];
    const m = last.msm;
    const cnt = (x: { ones: number; others: number }): string => `${(x.ones / 1e6).toFixed(1)} M ones + ${(x.others / 1e6).toFixed(1)} M others`;
    const notes =
      `${spec.numConstraints.toLocaleString('en-US')} constraints, domain 2^${spec.logN}; witness copy ${last.copy.toFixed(1)} (waited ${last.upload.toFixed(1)}), matvec ${last.matvec.toFixed(1)}, ` +
      `ntt_h ${last.ntt.toFixed(1)}, msm_h ${last.msmH.toFixed(1)} (c = ${m.h.window}${m.h.pippenger.affineLevels ? `; ${m.h.pippenger.affineLevels} affine levels, ${m.h.pippenger.affineSlices} slices in ${m.h.pippenger.affinePasses} passes` : ''}), msm_l ${last.msmL.toFixed(1)} (${cnt(m.l)}), ` +
      `msm_a ${last.msmA.toFixed(1)}, msm_b1 ${last.msmB1.toFixed(1)}, msm_b2 (G2) ${last.msmB2.toFixed(1)} (${cnt(m.b2)}); ` +
      `SRS ${(r.srsBytes / 2 ** 30).toFixed(1)} GiB + circuit ${(r.circuitBytes / 2 ** 30).toFixed(1)} GiB resident, pool peak ${(r.peakPoolBytes / 2 ** 30).toFixed(1)} GiB; generated in ${(r.generateMs / 1000).toFixed(1)} s`;
    const preNote = r.preH ? `; h with ${r.preH.copies} precomputed copies (c = ${r.preH.window}, made in ${(r.preH.ms / 1000).toFixed(1)} s)` : '';
    const planName = opt('plan') ? `, plan ${opt('plan')}` : '';
    rows.push([`partition, ${name} PoRep shape (synthetic)${r.preH ? `, h × ${r.preH.copies}` : ''}${planName}${acc !== undefined ? `, KILN_MSM_ACC=${acc}` : ''}`, fmtMs(totals[totals.length >> 1]), fmtMs(totals[0]), notes + preNote]);
    console.log(`partition ${name}${acc !== undefined ? ` (KILN_MSM_ACC=${acc})` : ''}: median ${totals[totals.length >> 1].toFixed(1)} ms, min ${totals[0].toFixed(1)} ms; ${notes}`);
  }
  if (accs.length) addon.setMsmAcc!(tuning.msmAcc ?? 5);
  const tsweep = opt('threads-sweep');
  if (tsweep) {
    for (const k of list(tsweep, [])) {
      for (const curve of [1, 2] as const) {
        const line: string[] = [];
        for (const th of [32, 64, 96, 128, 256]) {
          addon.setMsmThreads(th);
          const r = await addon.benchMsm(device, curve, k, curve === 1 ? g1 : g2, 3);
          line.push(`${th}: ${r.medianMs.toFixed(1)}`);
        }
        addon.setMsmThreads(32);
        console.log(`threads per block, ${curve === 1 ? 'G1' : 'G2'} MSM 2^${k} (ms): ${line.join(', ')}`);
      }
    }
  }
  const sweep = opt('sweep');
  if (sweep) {
    for (const k of list(sweep, [])) {
      const line: string[] = [];
      for (let c = 13; c <= 23; c++) {
        addon.setMsmWindow(c);
        const r = await addon.benchMsm(device, 1, k, g1, 3);
        line.push(`c=${c}: ${r.medianMs.toFixed(1)}`);
      }
      addon.setMsmWindow(0);
      console.log(`window sweep G1 2^${k} (ms): ${line.join(', ')}`);
    }
  }
  const table = markdownTable(['operation', 'median ms', 'min ms', 'notes'], rows);
  const notes = [
    `GPU: ${info.name}, ${(info.memoryBytes / 2 ** 30).toFixed(0)} GiB, sm_${info.computeCapability.replace('.', '')}, ${probe.runtime}`,
    'data resident on the device (generated there); random full-width scalars; median of 5 (MSM 2^26: 3; NTT: 10) after one warm-up',
    `the inverse NTTs' scalings (1/n, coset shift): ${tuning.nttFused === undefined ? 'the build default' : tuning.nttFused ? 'fused into the last stage group (KILN_NTT_FUSED=1)' : 'a pass of their own (KILN_NTT_FUSED=0)'}`,
    'partition rows: the whole device pipeline of one proof (witness upload from pinned memory, a/b/c = A·w, B·w, C·w, quotient, MSMs H, L, A, B1 in G1 and B in G2), CUDA events, median of 3 after one warm-up; the SRS is random points (sums of two of 2^18 random multiples of the generators) and the CSR rows random, so the timing is real but there is no proof to verify (test:gpu proves and verifies the real 2 KiB fixture through the same pipeline)',
  ];
  console.log(`\n## CUDA backend (bench/gpu.ts)\n\n- date: ${new Date().toISOString()}\n- machine: ${machineLine()}\n- commit: ${process.env.KILN_COMMIT ?? commitLine()}\n${notes.map((n) => `- ${n}`).join('\n')}\n\n${table}\n`);
  if (process.argv.includes('--append')) appendResults('CUDA backend (bench/gpu.ts)', table, notes);
  gpu.evictAll();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
