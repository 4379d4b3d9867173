/**
 * The parse of a C1 in the Commit2In wrapper Curio sends (filecoin/c1.ts parseC1Input: the wrapper, Phase1Out's
 * base64, the C1 JSON, every field checked and decoded), what a PoRep request's `validate` spends before its first
 * partition (3.15 s for a 32 GiB C1 on the H200 machine, 2026-12-06). A synthetic C1 (kiln synth-c1) of
 * --sector-size, parsed --runs times on one core, whole and split (what the daemon does: splitCommit2In, then each
 * partition's parseSplitPartition in its own synthesis worker, in parallel: here one after the other, each timed, so
 * that the critical path with a worker per partition is the split plus the slowest partition); medians and the
 * machine's peak RSS.
 *
 *   npm run bench:c1-parse -- [--sector-size 32GiB] [--runs 5] [--no-results]
 */
import os from 'node:os';
import { parseC1Input, parseSplitPartition, splitCommit2In } from '../src/filecoin/c1.js';
import { synthC1 } from '../src/filecoin/seal/synthetic.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1]! : dflt;
};
const sector = opt('--sector-size', '32GiB');
const runs = Math.max(1, Number(opt('--runs', '5')));

const s = synthC1({ sectorSize: sector, rngSeed: 'bench-c1-parse' });
const bytes = new TextEncoder().encode(s.commit2In);
console.log(`synthetic ${sector} Commit2In: ${(bytes.length / 2 ** 20).toFixed(1)} MiB`);
const ms: number[] = [];
const splitMs: number[] = [];
const slowestPartMs: number[] = [];
let partitions = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  partitions = parseC1Input(bytes).phase1Out.partitions.length;
  ms.push(performance.now() - t0);
  const t1 = performance.now();
  const split = splitCommit2In(bytes);
  splitMs.push(performance.now() - t1);
  let slowest = 0;
  if (split !== undefined) {
    split.ranges.forEach((r, k) => {
      const t2 = performance.now();
      parseSplitPartition(split.json, r, split.path, k, split.c2.phase1Out.registeredProof);
      slowest = Math.max(slowest, performance.now() - t2);
    });
  }
  slowestPartMs.push(slowest);
  console.log(`run ${i + 1}/${runs}: whole ${ms[i]!.toFixed(0)} ms; split ${splitMs[i]!.toFixed(0)} ms + slowest partition ${slowest.toFixed(0)} ms${split === undefined ? ' (not split)' : ''}`);
}
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const median = med(ms);
const rssGiB = process.resourceUsage().maxRSS / 2 ** 20;
const table = markdownTable(
  ['step', 'figure'],
  [
    [`parseC1Input of a ${sector} Commit2In (${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${partitions} partitions), median of ${runs}`, `${(median / 1000).toFixed(2)} s`],
    ['split (splitCommit2In: wrapper, base64, structure scan, the C1\'s fields), median', `${(med(splitMs) / 1000).toFixed(2)} s`],
    ['slowest partition of a run (parseSplitPartition), median', `${(med(slowestPartMs) / 1000).toFixed(2)} s`],
    ['critical path of the split parse with a worker per partition (split + slowest), median', `${(med(splitMs.map((x, i) => x + slowestPartMs[i]!)) / 1000).toFixed(2)} s`],
    ['peak RSS of the bench process (VmHWM)', `${rssGiB.toFixed(2)} GiB`],
  ],
);
console.log(table);
if (!argv.includes('--no-results')) {
  appendResults(`C1 parse of a ${sector} Commit2In (bench/c1-parse.ts)`, table, [`${os.cpus().length} cores, one used; whole runs: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`]);
}
