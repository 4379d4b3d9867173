/**
 * The SnapDeals kind's work in a synthesis worker (see synth-pool.ts), off the daemon's event loop (which keeps
 * answering meanwhile):
 *  - `snapPlanTask`: the planner's parse of the request's partition proofs and their checks (vanilla.rs `verify`
 *    with h = h_default: 16 × 561,768 B at 32 GiB); only the verdict comes back (the event loop never holds the
 *    parsed partitions: synthesis parses its element again in the worker);
 *  - `snapTapeTask`: one partition's witness tape for the native witness program (Montgomery-encoded with the
 *    native field when the addon loads here; transferred back, not copied);
 *  - `snapWitness`: the TypeScript witness, when the native witness path is off (the kind's tuning.witness 'ts',
 *    KILN_WITNESS=ts at the edges, or no CPU addon): the raw element arrives structured-cloned and is parsed here.
 * The planner sends snapTapeTask only on the native witness path, snapWitness only on the TypeScript one.
 */
import { encodeTapeWith } from '../../r1cs/circuit-program.js';
import { snapTape } from '../../filecoin/snap/program.js';
import { snapProofById } from '../../filecoin/snap/registry.js';
import { parseSnapPartitionProof, snapCircuitFor, type SnapPublic } from '../../filecoin/snap/vanilla.js';
import type { PlanTaskResult } from '../kind.js';
import { lazyWitnessRunner, timedWitness } from '../witness.js';
import { planSnapPartitions } from './request.js';
import { snapWitnessTs } from './snap.js';

export interface SnapWitnessArg {
  registeredProof: number;
  k: number;
  h: number;
  pub: SnapPublic;
  /** Partition k's raw bincode PartitionProof (already checked by snapPlanTask). */
  element: Uint8Array;
  numInputs: number;
}

export function snapWitness(arg: SnapWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  return timedWitness(() => {
    const info = snapProofById(arg.registeredProof);
    if (!info) throw new Error(`unknown RegisteredUpdateProof ${arg.registeredProof}`);
    const proof = parseSnapPartitionProof(arg.element, info.params);
    return snapWitnessTs(info, { k: arg.k, h: arg.h, pub: arg.pub, proof }, arg.numInputs);
  });
}

export interface SnapPlanArg {
  registeredProof: number;
  elements: Uint8Array[];
  h: number;
  pub: SnapPublic;
}

export type SnapPlanTaskResult = PlanTaskResult<object>;

/** planSnapPartitions (messages as the planner gives them); the parsed partitions stay here. */
export function snapPlanTask(arg: SnapPlanArg): SnapPlanTaskResult {
  const t0 = performance.now();
  const info = snapProofById(arg.registeredProof);
  if (!info) return { ok: false, error: `unknown RegisteredUpdateProof ${arg.registeredProof}` };
  try {
    planSnapPartitions(info, arg.elements, arg.h, arg.pub);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  return { ok: true, planMs: performance.now() - t0 };
}

const native = lazyWitnessRunner();

/** Partition k's encoded witness tape (the element was checked by snapPlanTask). */
export function snapTapeTask(arg: Omit<SnapWitnessArg, 'numInputs'>): { tape: Uint8Array; ms: number } {
  const t0 = performance.now();
  const info = snapProofById(arg.registeredProof);
  if (!info) throw new Error(`unknown RegisteredUpdateProof ${arg.registeredProof}`);
  const proof = parseSnapPartitionProof(arg.element, info.params);
  // the native field's Montgomery conversion when the addon loads in this thread
  const tape = encodeTapeWith(snapTape(snapCircuitFor(info.params, arg.k, arg.h, arg.pub, proof)), native());
  return { tape, ms: performance.now() - t0 };
}
