/**
 * GPU benchmarks (npm run bench:gpu): G1 MSM 2^20 … 2^26, G2 MSM 2^20 … 2^24, Fr NTT 2^20 … 2^26,
 * with device-resident data (bases [k_i]·G and scalars generated on the device, so only the
 * computation is timed; MSM time = the whole MSM call incl. classification and the host's window
 * combination, NTT time = CUDA events around the transform). Prints a markdown table; `--append`
 * adds it to bench/RESULTS.md. `--quick` runs the smaller sizes only.
 * Options: --device N, --g1 20,22,24,26 --g2 20,22 --ntt 20,21,...  (log2 sizes),
 *          --sweep 22,24 (G1 sizes at which every window width 13 … 21 is timed, to tune the model)
 */
import { CudaBackend, cudaCapabilities, loadCuda } from '../src/backend/cuda.js';
import { G1, G2, writeG1, writeG2 } from '../src/field/layout.js';
import { appendResults, commitLine, fmtMs, machineLine, markdownTable } from './report.js';

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const list = (s: string | undefined, d: number[]): number[] => (s ? s.split(',').map(Number) : d);

async function main(): Promise<void> {
  const probe = cudaCapabilities();
  if (!probe.cuda) {
    console.log(`bench:gpu: no GPU (${probe.error}); nothing to measure`);
    return;
  }
  const quick = process.argv.includes('--quick');
  const device = Number(opt('device') ?? 0);
  const g1Sizes = list(opt('g1'), quick ? [20, 22] : [20, 22, 24, 26]);
  const g2Sizes = list(opt('g2'), quick ? [20] : [20, 22]);
  const nttSizes = list(opt('ntt'), quick ? [20, 22] : [20, 21, 22, 23, 24, 25, 26]);
  const addon = loadCuda();
  const gpu = new CudaBackend({ addon, device });
  const info = probe.gpus[device];
  const g1 = new Uint8Array(96);
  writeG1(g1, 0, G1.BASE);
  const g2 = new Uint8Array(192);
  writeG2(g2, 0, G2.BASE);
  const rows: (string | number)[][] = [];
  for (const k of nttSizes) {
    const r = await addon.benchNtt(device, k, 10);
    rows.push([`Fr NTT 2^${k}`, fmtMs(r.medianMs), fmtMs(r.minMs), '']);
    console.log(`NTT 2^${k}: median ${r.medianMs.toFixed(2)} ms, min ${r.minMs.toFixed(2)} ms`);
  }
  for (const [curve, sizes] of [[1, g1Sizes], [2, g2Sizes]] as const) {
    for (const k of sizes) {
      const iters = k >= 26 ? 3 : 5;
      const r = await addon.benchMsm(device, curve, k, curve === 1 ? g1 : g2, iters);
      const name = `${curve === 1 ? 'G1' : 'G2'} MSM 2^${k}`;
      const t = r.timings as typeof r.timings & { pippenger?: Record<string, number> };
      const ph = t.pippenger ? Object.entries(t.pippenger).map(([k2, v]) => `${k2} ${v.toFixed(1)}`).join(', ') : '';
      rows.push([name, fmtMs(r.medianMs), fmtMs(r.minMs), `c = ${r.window}; classify ${t.classify.toFixed(1)}, pippenger ${t.msm.toFixed(1)} ms (${ph})`]);
      console.log(`${name}: median ${r.medianMs.toFixed(1)} ms, min ${r.minMs.toFixed(1)} ms, ${rows[rows.length - 1][3]}`);
    }
  }
  const sweep = opt('sweep');
  if (sweep) {
    for (const k of list(sweep, [])) {
      const line: string[] = [];
      for (let c = 13; c <= 21; c++) {
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
  ];
  console.log(`\n## CUDA backend (bench/gpu.ts)\n\n- date: ${new Date().toISOString()}\n- machine: ${machineLine()}\n- commit: ${process.env.KILN_COMMIT ?? commitLine()}\n${notes.map((n) => `- ${n}`).join('\n')}\n\n${table}\n`);
  if (process.argv.includes('--append')) appendResults('CUDA backend (bench/gpu.ts)', table, notes);
  gpu.evictAll();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
