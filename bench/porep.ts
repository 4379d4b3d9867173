/**
 * PoRep C2 of the 2 KiB fixture on this machine, split into synthesis (witness) and proving, with the
 * prover's phases; development parameters cached in --cache-dir (generated on first use).
 *   node dist/bench/porep.js [--runs 3] [--cache-dir DIR] [--c1 FILE] [--no-write]
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeBackend } from '../src/backend/native.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { parseCommit2In } from '../src/filecoin/c1.js';
import { porepParamsSource, porepShape, porepWitness } from '../src/kinds/porep/porep-c2.js';
import { loadPorepParams } from '../src/kinds/params.js';
import { prepareVerifyingKey, prove, verifyProof } from '../src/groth16/index.js';
import { appendResults, fmtMs, markdownTable, repoRoot } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const runs = Number(opt('--runs', '3'));
const cacheDir = opt('--cache-dir', path.join(os.homedir(), '.cache', 'kiln'));
const c1File = opt('--c1', path.resolve(repoRoot, '..', 'shared', 'fixtures', '2KiB.commit2in.json'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const backend = new NativeBackend({ noIfma: tuningFromEnv(process.env).noIfma }); // KILN_NO_IFMA=1: the scalar path
  const c1 = parseCommit2In(readFileSync(c1File)).phase1Out;
  const info = c1.registeredProof;
  const { circuit, shape } = porepShape(info, cacheDir);
  const devDir = path.join(cacheDir, 'dev-params');
  const source = await porepParamsSource(info, circuit, path.join(cacheDir, 'none'), devDir);
  const params = await loadPorepParams(source, circuit, backend, devDir);
  const pvk = prepareVerifyingKey(params.vk);
  const synth: number[] = [];
  const proveMs: number[] = [];
  let phases: Record<string, number> = {};
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    const w = porepWitness(c1, 0, shape);
    synth.push(performance.now() - t);
    t = performance.now();
    const r = await prove(params, circuit, w.assignment, backend);
    proveMs.push(performance.now() - t);
    phases = r.timings;
    if (!verifyProof(pvk, r.proof, w.inputs)) throw new Error('proof does not verify');
  }
  const s = median(synth);
  const p = median(proveMs);
  const table = markdownTable(
    ['circuit', 'constraints', 'synthesis (ms)', 'prove (ms)', 'total (ms)'],
    [[info.name, shape.numConstraints, fmtMs(s), fmtMs(p), fmtMs(s + p)]],
  );
  console.log(table);
  const ph = Object.entries(phases).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
  console.log(ph);
  if (!argv.includes('--no-write'))
    appendResults('PoRep C2, 2 KiB (bench/porep.ts)', table, [
      `median of ${runs}; native CPU backend, ${backend.capabilities().threads} threads; INSECURE development parameters (same sizes as the official ones)`,
      `prover phases (ms, last run): ${ph}`,
      'no peer in this process: rust-fil-proofs/bellperson are not installable from npm or Debian',
    ]);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
