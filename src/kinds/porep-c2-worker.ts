/**
 * Witness of one PoRep partition, run in a synthesis worker (see synth-pool.ts): the C1 arrives
 * structured-cloned with only this partition's vanilla proofs filled in.
 */
import type { C1Output } from '../filecoin/c1.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import { verifyC1 } from '../filecoin/verify.js';
import { stackedCircuitFor } from '../filecoin/circuit/index.js';

export interface PorepWitnessArg {
  c1: C1Output;
  partition: number;
  numInputs: number;
}

export function porepWitness(arg: PorepWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const circuit = stackedCircuitFor(arg.c1, arg.partition);
  const wg = new WitnessGenerator(arg.numInputs);
  circuit.synthesize(wg);
  return { assignment: wg.assignment().slice(), inputs: wg.inputs(), ms: performance.now() - t0 };
}

/** What the vanilla proofs of a C1 claim, checked before any synthesis (filecoin/verify.ts): every
 *  Merkle path against its root, comm_r = Poseidon2(comm_c, comm_r_last), the challenges and column
 *  indices, the parents against the graph, the labels and the encoding. The first few failures. */
export function porepCheck(arg: { c1: C1Output }): { failures: string[]; count: number; ms: number } {
  const t0 = performance.now();
  const failures = verifyC1(arg.c1);
  return { failures: failures.slice(0, 5), count: failures.length, ms: performance.now() - t0 };
}
