/**
 * Groth16 prove of one circuit of about 2^16 constraints: kiln (native backend) vs snarkjs, on the
 * *same* R1CS and witness. kiln's demo circuit is written in iden3's .r1cs/.wtns formats; snarkjs sets
 * it up from a prepared bls12381 powers-of-tau file (phase 2, 2^16) and proves it in this process.
 * Both proofs are verified. The snarkjs zkey is cached outside the repository (it takes minutes).
 *   node dist/bench/groth16.js [--constraints 65000] [--runs 7] [--ptau FILE] [--work DIR] [--no-write]
 *                              [--kiln-only]   (development: kiln's times and phases only)
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// @ts-expect-error snarkjs ships no types
import * as snarkjs from 'snarkjs';
import { NativeBackend } from '../src/backend/native.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { loadOrCreateDevParams, prepareVerifyingKey, prove, verifyProof } from '../src/groth16/index.js';
import { writeIden3R1cs, writeIden3Wtns } from '../src/interop/iden3.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { CompiledCircuit } from '../src/groth16/compiled.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { appendResults, fmtMs, markdownTable, repoRoot } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const constraints = Number(opt('--constraints', '65000'));
const runs = Number(opt('--runs', '7')); // the dev VM is noisy: a median of 7 is stable to a few %
const ptau = opt('--ptau', path.resolve(repoRoot, '..', 'shared', 'peers', 'bls12381_pot16_final.ptau'));
const work = opt('--work', path.join(os.homedir(), '.cache', 'kiln-bench'));
const write = !argv.includes('--no-write');
const kilnOnly = argv.includes('--kiln-only'); // development: skip snarkjs (no ratio, nothing written)

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Row {
  label: string;
  constraints: number;
  kiln: number;
  snark: number;
  phases: string;
  precompute: string;
}

async function benchCircuit(label: string, circuit: DemoCircuit, backend: NativeBackend): Promise<Row> {
  const compiled = new CompiledCircuit(recordShape((cs) => circuit.synthesize(cs)));
  const { shape } = compiled;
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const assignment = wg.assignment();
  const inputs = wg.inputs();
  const digest = compiled.digest.slice(0, 16);
  console.log(`${label}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux (shape ${digest})`);

  // kiln
  const params = await loadOrCreateDevParams(compiled, backend, work);
  const pvk = prepareVerifyingKey(params.vk);
  const kilnTimes: number[] = [];
  let last;
  let precompute = '';
  for (let i = 0; i <= runs; i++) {
    const t = performance.now();
    last = await prove(params, compiled, assignment, backend);
    if (i > 0) kilnTimes.push(performance.now() - t); // run 0 warms up
    if (!verifyProof(pvk, last.proof, inputs)) throw new Error('kiln proof does not verify');
    if (i === 0) {
      // One-time per SRS: the precomputed MSM tables of the queries with full-width scalars (the
      // backend would build them on the second proof; built here so the timed runs exclude it).
      const t0 = performance.now();
      const { tables, bytes } = await backend.precomputeSeen();
      precompute = `${tables} tables, ${(bytes / 2 ** 20).toFixed(0)} MiB, ${fmtMs(performance.now() - t0)} ms`;
      console.log(`  precomputed MSM tables (one-time): ${precompute}`);
    }
  }
  const tKiln = median(kilnTimes);
  const phases = last ? Object.entries(last.timings).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ') : '';
  console.log(`  kiln: ${fmtMs(tKiln)} ms (last run: ${phases})`);

  if (kilnOnly) return { label, constraints: shape.numConstraints, kiln: tKiln, snark: NaN, phases, precompute };
  // snarkjs on the same R1CS and witness
  const r1csFile = path.join(work, `demo-${digest}.r1cs`);
  const wtnsFile = path.join(work, `demo-${digest}.wtns`);
  const zkeyFile = path.join(work, `demo-${digest}.zkey`);
  writeFileSync(r1csFile, writeIden3R1cs(shape));
  writeFileSync(wtnsFile, writeIden3Wtns(assignment));
  if (!existsSync(zkeyFile)) {
    console.log('  snarkjs: setting up the zkey (once; cached in', work, ')');
    const t = performance.now();
    await snarkjs.zKey.newZKey(r1csFile, ptau, zkeyFile + '.tmp');
    renameSync(zkeyFile + '.tmp', zkeyFile);
    console.log(`  snarkjs setup: ${fmtMs(performance.now() - t)} ms`);
  }
  const vkJson = await snarkjs.zKey.exportVerificationKey(zkeyFile);
  const snarkTimes: number[] = [];
  for (let i = 0; i <= Math.max(1, Math.min(runs, 2)); i++) {
    const t = performance.now();
    const { proof, publicSignals } = await snarkjs.groth16.prove(zkeyFile, wtnsFile);
    if (i > 0) snarkTimes.push(performance.now() - t);
    const ok = await snarkjs.groth16.verify(vkJson, publicSignals, proof);
    if (!ok) throw new Error('snarkjs proof does not verify');
    if (publicSignals.map(BigInt).join() !== inputs.join()) throw new Error('snarkjs saw other public inputs');
  }
  const tSnark = median(snarkTimes);
  console.log(`  snarkjs: ${fmtMs(tSnark)} ms`);
  return { label, constraints: shape.numConstraints, kiln: tKiln, snark: tSnark, phases, precompute };
}

async function main(): Promise<void> {
  if (!existsSync(ptau)) throw new Error(`powers-of-tau file not found: ${ptau} (pass --ptau)`);
  mkdirSync(work, { recursive: true });
  const backend = new NativeBackend({ noIfma: tuningFromEnv(process.env).noIfma }); // KILN_NO_IFMA=1: the scalar path
  const rows = [
    await benchCircuit('bits + packing + mul chain (PoRep-like witness: mostly 0/1)', new DemoCircuit({ constraints, seed: 7 }), backend),
    await benchCircuit('mul chain (every witness value full-size)', new DemoCircuit({ constraints, seed: 7, dense: true }), backend),
  ];
  const table = markdownTable(
    ['circuit', 'constraints', 'kiln native (ms)', 'snarkjs 0.7.6 (ms)', 'snarkjs / kiln'],
    rows.map((r) => [r.label, r.constraints, fmtMs(r.kiln), fmtMs(r.snark), (r.snark / r.kiln).toFixed(1) + '×']),
  );
  console.log(table);
  if (write && !kilnOnly)
    appendResults('Groth16 prove, ~2^16 constraints (bench/groth16.ts)', table, [
      'same R1CS (iden3 .r1cs written by kiln) and witness for both; both proofs verified; domain 2^16',
      `kiln: median of ${runs} warm proofs; snarkjs: median of warm runs (groth16.prove from zkey + wtns files, all cores)`,
      ...rows.map((r) => `kiln phases, ${r.label} (ms, last run): ${r.phases}`),
      ...rows.map((r) => `kiln precomputed MSM tables, ${r.label} (one-time per SRS, not in the proof times): ${r.precompute}`),
    ]);
  process.exit(0); // snarkjs leaves worker threads alive
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
