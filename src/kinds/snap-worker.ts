/**
 * Witness of one SnapDeals partition in a synthesis worker (see synth-pool.ts), when the native witness path is off
 * (KILN_WITNESS=ts or no CPU addon): the parsed partition proof arrives structured-cloned.
 */
import { snapProofById } from '../filecoin/snap/registry.js';
import { snapWitnessTs, type SnapPartitionJob } from './snap.js';

export interface SnapWitnessArg {
  registeredProof: number;
  job: SnapPartitionJob;
  numInputs: number;
}

export function snapWitness(arg: SnapWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const info = snapProofById(arg.registeredProof);
  if (!info) throw new Error(`unknown RegisteredUpdateProof ${arg.registeredProof}`);
  const w = snapWitnessTs(info, arg.job, arg.numInputs);
  return { assignment: w.assignment.slice(), inputs: w.inputs, ms: performance.now() - t0 };
}
