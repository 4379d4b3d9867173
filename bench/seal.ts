/**
 * Time and peak memory of `kiln seal` (2 KiB, 8 MiB) and `kiln synth-c1` (32 GiB, 64 GiB), each in a
 * fresh child process so its peak RSS is its own.
 *   node dist/bench/seal.js [--sizes seal:2KiB,seal:8MiB,synth:32GiB] [--no-write]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sealSector, synthC1 } from '../src/filecoin/seal/index.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};

if (argv[2] === '--child') {
  const [what, size] = argv[3].split(':');
  const t0 = performance.now();
  const r = what === 'seal' ? sealSector({ sectorSize: size, rngSeed: 'bench' }) : synthC1({ sectorSize: size, rngSeed: 'bench' });
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, bytes: r.commit2In.length, stages: r.timings }));
} else {
  const jobs = opt('--sizes', 'seal:2KiB,seal:8MiB,synth:32GiB,synth:64GiB').split(',');
  const rows: (string | number)[][] = [];
  for (const job of jobs) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', job], { maxBuffer: 1 << 26 }).toString();
    const r = JSON.parse(out.trim().split('\n').pop()!) as { ms: number; maxRssMiB: number; bytes: number; stages: Record<string, number> };
    const stages = Object.entries(r.stages)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`)
      .join(', ');
    const row = [job.replace(':', ' '), (r.ms / 1000).toFixed(1), r.maxRssMiB.toFixed(0), (r.bytes / 2 ** 20).toFixed(1), stages];
    console.log(row.join('\t'));
    rows.push(row);
  }
  const table = markdownTable(['job', 'wall (s)', 'peak RSS (MiB)', 'Commit2In (MiB)', 'stages (s)'], rows);
  console.log(table);
  if (!argv.includes('--no-write'))
    appendResults('Seal and synthetic C1 (bench/seal.ts)', table, ['each job in its own child process; random data from a fixed seed']);
}
