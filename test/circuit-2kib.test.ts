/**
 * The 2 KiB fixture's partition circuit (2,687,921 constraints) in TestConstraintSystem: satisfied,
 * its public inputs = 2KiB.public_inputs.json, and a changed label, path element or comm_r named
 * by whichIsUnsatisfied().
 *
 * TestConstraintSystem keeps every name, value and linear combination: ~5.5 GB of heap for this
 * circuit, more than Node's default limit. The synthesis therefore runs in a worker thread (this
 * same file, re-entered) with a larger heap and a larger young generation (fewer scavenges of the
 * long-lived constraint objects: about twice as fast).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { parseC1 } from '../src/filecoin/c1.js';
import { stackedCircuitFor } from '../src/filecoin/circuit/stacked.js';
import { fixture } from './support.js';

const here = fileURLToPath(import.meta.url);

/** [variable path to change, expected first unsatisfied constraint] */
const TAMPERS: readonly (readonly [string, string | RegExp])[] = [
  // a parent's label (row of its column) → the column hash's first S-box over it
  ['challenge_0/drg_parent_3_num/column/column_num_row_1/num', 'challenge_0/drg_parent_3_constraint/first round/quintic s-box 2/(l+rk)^2/squared sum constraint'],
  // a label computed in the circuit → its packing from the SHA-256 digest bits
  ['challenge_1/labeling_2/create_label/result_num/input/num', 'challenge_1/labeling_2/create_label/result_num/packing constraint'],
  // a sibling on the comm_d path → the insertion that uses it
  ['challenge_0/comm_d_inclusion/base/merkle tree hash 2/path element 0/num', /^challenge_0\/comm_d_inclusion\/base\/merkle tree hash 2\/binary insert [01]\/pick$/], // 0 or 1: the index bit
  // a sibling on the comm_r_last path
  ['challenge_1/comm_r_last_data_inclusion/base/merkle tree hash 1/path element 6/num', /^challenge_1\/comm_r_last_data_inclusion\/base\/merkle tree hash 1\/p\d_x+\d*\/pick$/], // which pick depends on the index
  // comm_r, the private copy and the public input
  ['comm_r/num', 'comm_r_input/enforce input is correct'],
  ['comm_r_input/input variable', 'comm_r_input/enforce input is correct'],
];

interface WorkerResult {
  counts: { constraints: number; inputs: number; aux: number };
  unsatisfied: string | null;
  inputs: string[];
  tampered: (string | null)[];
  afterRestore: string | null;
  synthesisMs: number;
}

function runInWorker(): WorkerResult {
  const c1 = parseC1(readFileSync(fixture('2KiB.c1.json')));
  const t0 = performance.now();
  const cs = new TestConstraintSystem();
  stackedCircuitFor(c1, 0).synthesize(cs);
  const synthesisMs = Math.round(performance.now() - t0);
  const tampered = TAMPERS.map(([p]) => {
    const old = cs.get(p);
    cs.set(p, old + 1n);
    const which = cs.whichIsUnsatisfied() ?? null;
    cs.set(p, old);
    return which;
  });
  return {
    counts: { constraints: cs.numConstraints, inputs: cs.numInputs, aux: cs.numAux },
    unsatisfied: cs.whichIsUnsatisfied() ?? null,
    inputs: cs.inputs().map(String),
    tampered,
    afterRestore: cs.whichIsUnsatisfied() ?? null,
    synthesisMs,
  };
}

if (isMainThread) {
  test('2 KiB partition circuit in TestConstraintSystem: satisfied, public inputs, tampering named', { timeout: 300_000 }, async () => {
    const result = await new Promise<WorkerResult>((resolve, reject) => {
      const worker = new Worker(here, { resourceLimits: { maxOldGenerationSizeMb: 12_288, maxYoungGenerationSizeMb: 384 } });
      worker.once('message', (m: WorkerResult) => resolve(m));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`worker exited with code ${code} before reporting`)));
    });
    console.log(`TestConstraintSystem synthesis of the 2 KiB partition: ${result.synthesisMs} ms, ${JSON.stringify(result.counts)}`);
    assert.deepEqual(result.counts, { constraints: 2_687_921, inputs: 40, aux: 2_685_673 });
    assert.equal(result.unsatisfied, null);
    const expected = JSON.parse(readFileSync(fixture('2KiB.public_inputs.json'), 'utf8')) as string[];
    assert.equal(result.inputs[0], '1');
    assert.deepEqual(result.inputs.slice(1), expected.map((x) => BigInt(x).toString()));
    TAMPERS.forEach(([changed, want], i) => {
      const got = result.tampered[i] ?? '(none)';
      if (typeof want === 'string') assert.equal(got, want, changed);
      else assert.match(got, want, changed);
    });
    assert.equal(result.afterRestore, null);
  });
} else {
  parentPort!.postMessage(runInWorker());
}
