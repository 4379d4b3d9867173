/**
 * Witness of one demo partition, run in a synthesis worker (see synth-pool.ts). Pure function of
 * its argument.
 */
import { DemoCircuit } from '../r1cs/demo-circuit.js';
import { WitnessGenerator } from '../r1cs/witness.js';

export interface DemoWitnessArg {
  constraints: number;
  publicInputs: number;
  seed: number;
  numInputs: number;
}

export function demoWitness(arg: DemoWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const circuit = new DemoCircuit({ constraints: arg.constraints, seed: arg.seed, publicInputs: arg.publicInputs });
  const wg = new WitnessGenerator(arg.numInputs);
  circuit.synthesize(wg);
  // a right-sized copy: the generator's buffer grows geometrically
  const assignment = wg.assignment().slice();
  return { assignment, inputs: wg.inputs(), ms: performance.now() - t0 };
}
