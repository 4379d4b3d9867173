/**
 * G1 MSM, 2^12 … 2^18 random points and scalars: kiln native vs ffjavascript (snarkjs's engine,
 * WebAssembly, all cores) vs @noble/curves (pure JS Pippenger), in one process, same inputs.
 * All three results are compared before a time is reported.
 *   node dist/bench/msm.js [--max-log 18] [--noble-max-log 16] [--runs 5] [--no-write]
 */
import { randomBytes } from 'node:crypto';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { pippenger } from '@noble/curves/abstract/curve.js';
// @ts-expect-error ffjavascript ships no types
import { buildBls12381 } from 'ffjavascript';
import { NativeBackend } from '../src/backend/native.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { FR_BYTES, FR_MODULUS, G1, G1_BYTES, readG1, writeFr } from '../src/field/layout.js';
import { appendResults, fmtMs, markdownTable, medianMs } from './report.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const minLog = arg('--min-log', 12);
const maxLog = arg('--max-log', 18);
const nobleMaxLog = arg('--noble-max-log', 16);
const tableMaxLog = arg('--table-max-log', 16); // tables: 96 MiB at 2^16, one-time build ~2.4 s
const runs = arg('--runs', 5);
const write = !process.argv.includes('--no-write');

function randomScalars(n: number): bigint[] {
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = BigInt('0x' + randomBytes(40).toString('hex')) % FR_MODULUS;
  return out;
}

function canonicalLE(values: bigint[]): Uint8Array {
  const out = new Uint8Array(values.length * FR_BYTES);
  values.forEach((v, i) => {
    let x = v;
    for (let k = 0; k < FR_BYTES; k++) {
      out[i * FR_BYTES + k] = Number(x & 0xffn);
      x >>= 8n;
    }
  });
  return out;
}

async function main(): Promise<void> {
  const native = new NativeBackend({ noIfma: tuningFromEnv(process.env).noIfma }); // KILN_NO_IFMA=1: the scalar path
  const ffj = await buildBls12381();
  const rows: (string | number)[][] = [];
  const maxN = 1 << maxLog;
  console.log(`generating ${maxN} random bases…`);
  const baseScalars = new Uint8Array(maxN * FR_BYTES);
  randomScalars(maxN).forEach((s, i) => writeFr(baseScalars, i, s));
  const gen = new Uint8Array(G1_BYTES);
  const { writeG1 } = await import('../src/field/layout.js');
  writeG1(gen, 0, G1.BASE);
  const allBases = await native.fixedBaseMulG1(gen, baseScalars);

  for (let log = minLog; log <= maxLog; log++) {
    const n = 1 << log;
    const bases = allBases.subarray(0, n * G1_BYTES);
    const scalars = randomScalars(n);
    const mont = new Uint8Array(n * FR_BYTES);
    scalars.forEach((s, i) => writeFr(mont, i, s));
    const canon = canonicalLE(scalars);

    const kiln = await native.msmG1(bases, mont);
    const ffjOut: Uint8Array = ffj.G1.toAffine(await ffj.G1.multiExpAffine(bases, canon));
    const kilnPoint = readG1(kiln.point, 0);
    if (!kilnPoint.equals(readG1(ffjOut, 0))) throw new Error(`2^${log}: kiln and ffjavascript disagree`);

    // Plain Pippenger: the addon directly (the backend would build a fixed-base table on reuse).
    const tKiln = await medianMs(runs, () => native.addon.msmG1(bases, mont));
    // The backend's path for fixed bases (the SRS): a precomputed table of window shifts, built by
    // the warm-up above on first reuse (one-time per SRS; not timed here).
    let tTable: number | undefined;
    if (log <= tableMaxLog) {
      await native.msmG1(bases, mont);
      const res = await native.msmG1(bases, mont);
      if (!readG1(res.point, 0).equals(kilnPoint)) throw new Error(`2^${log}: table path disagrees`);
      if (res.timings.precomputed) tTable = await medianMs(runs, () => native.msmG1(bases, mont));
    }
    const tFfj = await medianMs(Math.min(runs, 3), () => ffj.G1.multiExpAffine(bases, canon));
    let tNoble: number | undefined;
    if (log <= nobleMaxLog) {
      const pts = Array.from({ length: n }, (_, i) => readG1(bases, i));
      const t = performance.now();
      const p = pippenger(bls12_381.G1.Point, pts, scalars);
      tNoble = performance.now() - t;
      if (!p.equals(kilnPoint)) throw new Error(`2^${log}: kiln and noble disagree`);
    }
    const row = [
      `2^${log}`,
      fmtMs(tKiln),
      tTable === undefined ? '–' : fmtMs(tTable),
      fmtMs(tFfj),
      tNoble === undefined ? 'not run' : fmtMs(tNoble),
      (tFfj / tKiln).toFixed(1) + '×',
      tNoble === undefined ? '–' : (tNoble / tKiln).toFixed(1) + '×',
    ];
    console.log(row.join('\t'));
    rows.push(row);
  }
  await ffj.terminate();
  const table = markdownTable(
    ['n', 'kiln native (ms)', 'kiln, fixed-base table (ms)', 'ffjavascript (ms)', '@noble/curves (ms)', 'ffjavascript / kiln', 'noble / kiln'],
    rows,
  );
  console.log(table);
  if (write)
    appendResults('G1 MSM (bench/msm.ts)', table, [
      `random bases and scalars; kiln and ffjavascript: median of ${runs} (ffjavascript ≤ 3) after a warm-up; noble: one run`,
      'kiln native: the plain Pippenger (ratios use it); fixed-base table: the backend\'s path for SRS bases, over a precomputed table of window shifts built once per base vector (not timed)',
      `kiln CPU kernels: ${native.capabilities().cpuFeatures?.join(', ') || 'portable'}`,
      'results of the three libraries are compared before timing',
    ]);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
