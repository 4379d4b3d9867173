/**
 * The parse of a C1 in the Commit2In wrapper Curio sends (filecoin/c1.ts parseC1Input: the wrapper, Phase1Out's
 * base64, the C1 JSON, every field checked and decoded), what a PoRep request's `validate` spends before its first
 * partition (3.15 s for a 32 GiB C1 on the H200 machine, 2026-12-06). A synthetic C1 (kiln synth-c1) of
 * --sector-size, parsed --runs times on one core; the median and the machine's peak RSS.
 *
 *   npm run bench:c1-parse -- [--sector-size 32GiB] [--runs 5] [--no-results]
 */
import os from 'node:os';
import { parseC1Input } from '../src/filecoin/c1.js';
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
let partitions = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  partitions = parseC1Input(bytes).phase1Out.partitions.length;
  ms.push(performance.now() - t0);
  console.log(`parse ${i + 1}/${runs}: ${ms[i]!.toFixed(0)} ms`);
}
const median = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
const rssGiB = process.resourceUsage().maxRSS / 2 ** 20;
const table = markdownTable(
  ['step', 'figure'],
  [
    [`parseC1Input of a ${sector} Commit2In (${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${partitions} partitions), median of ${runs}`, `${(median / 1000).toFixed(2)} s`],
    ['peak RSS of the bench process (VmHWM)', `${rssGiB.toFixed(2)} GiB`],
  ],
);
console.log(table);
if (!argv.includes('--no-results')) {
  appendResults(`C1 parse of a ${sector} Commit2In (bench/c1-parse.ts)`, table, [`${os.cpus().length} cores, one used; runs: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`]);
}
