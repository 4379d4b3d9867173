/**
 * Native witness of a WindowPoSt partition (the FallbackPoSt circuit's witness program, filecoin/post/program.ts):
 * the work between a WindowPoSt request's checks and its GPU phases. Runs the program natively on the AVX-512 IFMA
 * path (where the CPU has it) and on the scalar path, each in a child process (the choice is fixed once per
 * process), and checks both give the same bytes.
 *   node dist/bench/witness-post.js [--sectors 2349] [--runs 3] [--threads N] [--no-write]
 * The sector proofs are synthetic 32 GiB ones (synthPoSt, 8 of them; the circuit repeats the last as a partial
 * partition does, so every sector is a full 32 GiB sector circuit). Prints, per path, the median wall of the
 * native run, the process's core-seconds over it and the peak RSS (VmHWM); appends them to bench/RESULTS.md.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { NativeBackend } from '../src/backend/native.js';
import { postCircuitFor, postCircuitParams } from '../src/filecoin/post/circuit.js';
import { postProgramFast, postTape } from '../src/filecoin/post/program.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import { parsePoStSectorProof } from '../src/filecoin/post/vanilla.js';
import { encodeTapeWith } from '../src/r1cs/circuit-program.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const sectors = Number(opt('--sectors', '2349'));
const runs = Number(opt('--runs', '3'));
const CHILD = 'KILN_BENCH_WITNESS_POST_PATH';
const vmHwmGiB = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 2 ** 20;

interface PathResult {
  path: string;
  ifma: boolean;
  threads: number;
  aux: number;
  medianMs: number;
  coreS: number;
  digest: string;
  rssGiB: number;
}

async function child(noIfma: boolean): Promise<void> {
  const backend = new NativeBackend({ noIfma });
  const threads = argv.includes('--threads') ? backend.setThreads(Number(opt('--threads', '0'))) : backend.capabilities().threads;
  const info = postProofById(13)!; // StackedDrgWindow32GiBV1_1
  const randomness = new Uint8Array(32).fill(7);
  randomness[31] = 0;
  const proofs = synthPoSt({ info, randomness, sectors: 8, rngSeed: 'bench-witness-post' }).elements.map((e) => parsePoStSectorProof(e, info));
  const cut = { ...info, sectorCount: sectors };
  const program = postProgramFast(postCircuitParams(cut));
  const tape = encodeTapeWith(postTape(postCircuitFor(cut, proofs)), backend);
  const out = backend.alloc((program.numInputs + program.numAux) * 32);
  await backend.runWitnessProgram(program, tape, out); // the first run also touches the output's pages
  const ms: number[] = [];
  const cores: number[] = [];
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    ms.push((await backend.runWitnessProgram(program, tape, out)).ms);
    const cpu = process.cpuUsage(cpu0);
    cores.push((cpu.user + cpu.system) / 1e6);
  }
  const med = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const hash = createHash('sha256');
  for (let at = 0; at < out.length; at += 1 << 30) hash.update(out.subarray(at, Math.min(out.length, at + (1 << 30)))); // update takes < 2 GiB
  const digest = hash.digest('hex');
  backend.release(out);
  const r: PathResult = { path: noIfma ? 'scalar' : 'ifma', ifma: backend.addon.capabilities().ifma, threads, aux: program.numAux, medianMs: med(ms), coreS: med(cores), digest, rssGiB: vmHwmGiB() };
  process.stdout.write(JSON.stringify(r));
}

function runChild(path: 'ifma' | 'scalar'): PathResult {
  const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...argv.slice(2)], { env: { ...process.env, [CHILD]: path }, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (res.status !== 0) throw new Error(`bench child (${path}) failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as PathResult;
}

async function main(): Promise<void> {
  const results = [runChild('ifma'), runChild('scalar')];
  const same = results[0].digest === results[1].digest;
  const rows = results.map((r) => [
    r.ifma ? 'AVX-512 IFMA' : 'scalar (mulx)',
    sectors,
    r.aux,
    r.threads,
    (r.medianMs / 1000).toFixed(2),
    r.coreS.toFixed(1),
    ((r.medianMs * r.threads) / sectors).toFixed(2),
    r.rssGiB.toFixed(2),
  ]);
  const table = markdownTable(['path', 'sectors', 'aux', 'threads', 'native witness (s, median)', 'core-s', 'thread-ms per sector', 'peak RSS (GiB)'], rows);
  console.log(table);
  console.log(`both paths byte-identical: ${same}`);
  if (!same) process.exitCode = 1;
  if (!argv.includes('--no-write')) {
    appendResults(`Native witness of a 32 GiB WindowPoSt partition (bench:witness-post)`, table, [
      `both paths byte-identical: ${same} (sha256 ${results[0].digest.slice(0, 16)}…)`,
      `median of ${runs} runs after one that touches the output; synthetic 32 GiB sector proofs (8, the last repeated); machine cores: ${os.cpus().length}`,
    ]);
  }
}

if (process.env[CHILD] !== undefined) {
  child(process.env[CHILD] === 'scalar').catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
