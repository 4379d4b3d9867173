/**
 * Witness of one PoSt partition in a synthesis worker (see synth-pool.ts), when the native witness path is off
 * (KILN_WITNESS=ts or no CPU addon): the parsed sector proofs arrive structured-cloned.
 */
import { postProofById } from '../filecoin/post/registry.js';
import type { PoStSectorProof } from '../filecoin/post/types.js';
import { postWitnessTs } from './post.js';

export interface PoStWitnessArg {
  registeredProof: number;
  sectors: PoStSectorProof[];
  numInputs: number;
}

export function postWitness(arg: PoStWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const info = postProofById(arg.registeredProof);
  if (!info) throw new Error(`unknown registered PoSt proof ${arg.registeredProof}`);
  const w = postWitnessTs(info, arg.sectors, arg.numInputs);
  return { assignment: w.assignment.slice(), inputs: w.inputs, ms: performance.now() - t0 };
}
