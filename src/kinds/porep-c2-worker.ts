/**
 * Witness of one PoRep partition, run in a synthesis worker (see synth-pool.ts): the C1 arrives
 * structured-cloned with only this partition's vanilla proofs filled in.
 */
import type { C1Output } from '../filecoin/c1.js';
import { WitnessGenerator } from '../r1cs/witness.js';
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
