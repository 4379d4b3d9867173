/**
 * Native witness synthesis of PoRep partitions (witness programs, r1cs/program.ts) against the
 * TypeScript WitnessGenerator, on a synthetic C1 of any size (32 GiB by default).
 *   node dist/bench/witness.js [--sector-size 32GiB] [--partitions 10] [--compare 0] [--threads N] [--no-write]
 * --full-record: record the program from the whole partition (default: one challenge, replicated).
 * --compare K: also runs WitnessGenerator on partition K (one core) and checks the bytes are equal.
 * Prints per-partition tape and native times (wall, and core-seconds: the process's CPU time over the
 * call), the program's size, and peak RSS (VmHWM); appends them to bench/RESULTS.md unless --no-write.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { NativeBackend } from '../src/backend/native.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { parseC1 } from '../src/filecoin/c1.js';
import { stackedCircuitFor, stackedParamsFor } from '../src/filecoin/circuit/stacked.js';
import { stackedProgram, stackedProgramFast, stackedWitnessNative } from '../src/filecoin/circuit/stacked-program.js';
import { synthC1 } from '../src/filecoin/seal/index.js';
import { programBytes } from '../src/r1cs/program.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const sectorSize = opt('--sector-size', '32GiB');
const compare = argv.includes('--compare') ? Number(opt('--compare', '0')) : undefined;
const vmHwm = (): string => /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '?';
const gib = (kb: string): string => (Number(kb) / 2 ** 20).toFixed(2);
const log = (s: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

async function main(): Promise<void> {
  const backend = new NativeBackend({ noIfma: tuningFromEnv(process.env).noIfma }); // KILN_NO_IFMA=1: the scalar path
  const threads = argv.includes('--threads') ? backend.setThreads(Number(opt('--threads', '0'))) : backend.capabilities().threads;
  let t = performance.now();
  const synth = synthC1({ sectorSize, rngSeed: 'bench-witness' });
  const c1 = parseC1(synth.c1Text);
  const synthMs = performance.now() - t;
  log(`synth-c1 ${sectorSize}: ${(synthMs / 1000).toFixed(1)} s, ${c1.partitions.length} partitions × ${c1.partitions[0].length} challenges`);
  const partitions = Math.min(Number(opt('--partitions', String(c1.partitions.length))), c1.partitions.length);

  t = performance.now();
  // --full-record: the whole partition's synthesis; default: one challenge, replicated (the
  // comparison with WitnessGenerator below checks the result byte for byte)
  const params = stackedParamsFor(c1.registeredProof, c1.partitions[0].length);
  const program = argv.includes('--full-record') ? stackedProgram(params) : stackedProgramFast(params);
  const recordMs = performance.now() - t;
  const words = program.blocks.reduce((s, b) => s + b.length, 0);
  log(
    `program recorded in ${(recordMs / 1000).toFixed(1)} s: ${program.numInputs} inputs, ${program.numAux} aux, ` +
      `${program.segments.length} segments in ${program.blocks.length} blocks, ${(programBytes(program) / 2 ** 20).toFixed(1)} MiB (${words} words)`,
  );

  const bytes = (program.numInputs + program.numAux) * 32;
  const out = backend.alloc(bytes);
  const rows: (string | number)[][] = [];
  const runs: number[] = [];
  const cores: number[] = [];
  for (let k = 0; k < partitions; k++) {
    const cpu0 = process.cpuUsage();
    const w = await stackedWitnessNative(backend, program, c1, k, out);
    const cpu = process.cpuUsage(cpu0);
    const coreS = (cpu.user + cpu.system) / 1e6; // every thread of the process: tape + native run
    runs.push(w.runMs);
    cores.push(coreS);
    rows.push([k, w.tapeMs.toFixed(1), w.runMs.toFixed(1), coreS.toFixed(2)]);
    log(`partition ${k}: tape ${w.tapeMs.toFixed(1)} ms, native ${w.runMs.toFixed(1)} ms on ${threads} threads, ${coreS.toFixed(2)} core-s`);
  }
  let compareLine = '';
  if (compare !== undefined) {
    t = performance.now();
    const tsOut = backend.alloc(bytes); // exact size: a grown buffer would pass Node's 4 GiB typed-array cap
    const gen = new WitnessGenerator(program.numInputs, tsOut);
    stackedCircuitFor(c1, compare).synthesize(gen);
    const tsMs = performance.now() - t;
    const w = await stackedWitnessNative(backend, program, c1, compare, out);
    const equal = Buffer.from(w.assignment.buffer, w.assignment.byteOffset, w.assignment.byteLength).equals(gen.assignment());
    compareLine = `partition ${compare}: WitnessGenerator ${(tsMs / 1000).toFixed(1)} s on one core; native == TypeScript byte for byte: ${equal}`;
    log(compareLine);
    if (!equal) process.exitCode = 1;
    backend.release(tsOut);
  }
  backend.release(out);
  const sorted = [...runs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const summary =
    `${sectorSize}: native witness median ${median.toFixed(0)} ms per partition on ${threads} threads ` +
    `(${[...cores].sort((a, b) => a - b)[Math.floor(cores.length / 2)].toFixed(2)} core-s, tape included); program recorded once in ${(recordMs / 1000).toFixed(1)} s; peak RSS ${gib(vmHwm())} GiB`;
  log(summary);
  if (!argv.includes('--no-write')) {
    appendResults(
      `Native witness synthesis, ${sectorSize} PoRep partition (bench:witness)`,
      markdownTable(['partition', 'tape (ms)', 'native (ms)', 'core-s (process CPU time)'], rows),
      [summary, ...(compareLine ? [compareLine] : []), `machine cores: ${os.cpus().length}`],
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
