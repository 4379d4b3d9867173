/**
 * The C1 consistency checks of one partition (filecoin/c1-checks.ts verifyC1Partition: paths, columns, labels,
 * encoding), what the daemon runs before a partition's synthesis (a 32 GiB partition's took 10.7 s on
 * one core of the H100 machine, ahead of the first partition). A synthetic C1 (kiln synth-c1) of --sector-size;
 * its partition 0 checked with Poseidon in TypeScript (poseidon.ts) and through the native addon
 * (poseidon-native.ts), one core each, the same failures (none) both ways.
 *
 *   npm run bench:c1-checks -- [--sector-size 32GiB] [--challenges N (default: all of partition 0)] [--no-results]
 */
import os from 'node:os';
import { parseC1 } from '../src/filecoin/c1.js';
import { useNativePoseidon, nativePoseidon } from '../src/filecoin/hash/poseidon-native.js';
import { synthC1 } from '../src/filecoin/seal/synthetic.js';
import { verifyC1Partition } from '../src/filecoin/c1-checks.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1]! : dflt;
};
const sector = opt('--sector-size', '32GiB');

let t = performance.now();
const c1 = parseC1(synthC1({ sectorSize: sector, rngSeed: 'bench-c1-checks' }).c1Text);
const synthMs = performance.now() - t;
const all = c1.partitions[0]!.length;
const n = Math.min(all, Number(opt('--challenges', String(all))));
console.log(`synthetic ${sector} C1: ${c1.partitions.length} partitions × ${all} challenges in ${(synthMs / 1000).toFixed(1)} s; checking ${n} of partition 0`);

const run = (native: boolean): { ms: number; failures: string[] } => {
  useNativePoseidon(native);
  if (native && nativePoseidon() === null) throw new Error('the native addon is not built (npm install)');
  const t0 = performance.now();
  const r = verifyC1Partition(c1, 0, { from: 0, to: n });
  return { ms: performance.now() - t0, failures: r.failures };
};
const native = run(true);
const ts = run(false);
useNativePoseidon(true);
if (native.failures.length !== 0 || ts.failures.length !== 0) throw new Error(`the synthetic C1 failed its checks: ${[...native.failures, ...ts.failures][0]}`);
const perPartition = (ms: number): string => `${((ms / n) * all / 1000).toFixed(2)} s`;
const rows = [
  ['Poseidon in TypeScript (poseidon.ts)', `${(ts.ms / n).toFixed(1)} ms`, perPartition(ts.ms)],
  ['Poseidon native (poseidon-native.ts)', `${(native.ms / n).toFixed(1)} ms`, perPartition(native.ms)],
  ['ratio', `${(ts.ms / native.ms).toFixed(1)}×`, ''],
];
const table = markdownTable(['checks of one partition, one core', 'per challenge', `per partition (${all} challenges)`], rows);
console.log(table);
if (!argv.includes('--no-results')) {
  appendResults(`C1 checks of one ${sector} partition (bench/c1-checks.ts)`, table, [
    `${os.cpus().length} cores, one used; ${n} of partition 0's ${all} challenges timed each way, without failures both ways`,
  ]);
}
