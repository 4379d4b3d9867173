/**
 * The PoSt kinds' work in a synthesis worker (see synth-pool.ts), off the daemon's event loop:
 *  - `postPlanTask`: the planner's parse of the vanilla proofs, their checks (paths, challenges, comm_r) and the
 *    public inputs (~2 s for a 2,349-sector 32 GiB WindowPoSt on the H200), and the partition's witness tape for
 *    the native witness program (transferred back, not copied: the event loop never holds the parsed sectors);
 *  - `postWitness`: the TypeScript witness, when the native witness path is off (the kind's tuning.witness 'ts',
 *    KILN_WITNESS=ts at the edges, or no CPU addon): the raw elements arrive structured-cloned and are parsed
 *    here again.
 * The planner's witness path reaches this thread in the task arguments (PoStPlanArg.tape, postWarm's `withNative`).
 */
import { postCircuitFor } from '../../filecoin/post/circuit.js';
import { postTape } from '../../filecoin/post/program.js';
import { encodeTapeWith } from '../../r1cs/circuit-program.js';
import { postProofById } from '../../filecoin/post/registry.js';
import { parsePoStSectorProofs } from '../../filecoin/post/vanilla.js';
import { planPoStSectors } from './request.js';
import type { PlanTaskResult } from '../kind.js';
import { lazyWitnessRunner, timedWitness } from '../witness.js';
import { postWitnessTs } from './post.js';

export interface PoStWitnessArg {
  registeredProof: number;
  /** The request's raw bincode FallbackPoStSectorProofs (already checked by postPlanTask). */
  elements: Uint8Array[];
  numInputs: number;
}

export function postWitness(arg: PoStWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  return timedWitness(() => {
    const info = postProofById(arg.registeredProof);
    if (!info) throw new Error(`unknown registered PoSt proof ${arg.registeredProof}`);
    return postWitnessTs(info, parsePoStSectorProofs(arg.elements, info), arg.numInputs);
  });
}

export interface PoStPlanArg {
  registeredProof: number;
  elements: Uint8Array[];
  randomness: Uint8Array;
  partitionIndex: number;
  /** Make the witness tape too (the native witness path will run the circuit's program on it). */
  tape: boolean;
}

/** What postPlanTask finds (tapeMs: with a tape). */
export type PoStPlanTaskResult = PlanTaskResult<{ inputs: bigint[]; firstSectorId: bigint; sectors: number; tape: Uint8Array | undefined }>;

const native = lazyWitnessRunner();

/** Loads this module (and, on the native witness path, the native field when the addon loads here) into a
 *  synthesis worker ahead of the first request: the planner's `warm` (a WinningPoSt then pays no worker start or
 *  import, ~0.2–0.4 s). `withNative`: the planner's witness path is native. */
export function postWarm(withNative: boolean): boolean {
  return withNative && native() !== undefined;
}

/** planPoStSectors (messages as the planner gives them) and, with `tape`, the encoded witness tape. */
export function postPlanTask(arg: PoStPlanArg): PoStPlanTaskResult {
  const t0 = performance.now();
  const info = postProofById(arg.registeredProof);
  if (!info) return { ok: false, error: `unknown registered PoSt proof ${arg.registeredProof}` };
  let plan: ReturnType<typeof planPoStSectors>;
  try {
    plan = planPoStSectors(info, arg.elements, arg.randomness, arg.partitionIndex);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const t1 = performance.now();
  const found = { ok: true as const, inputs: plan.inputs, firstSectorId: plan.sectors[0]!.sectorId, sectors: plan.sectors.length, planMs: t1 - t0 };
  if (!arg.tape) return { ...found, tape: undefined };
  // the native field's Montgomery conversion when the addon loads in this thread (~15x faster)
  const tape = encodeTapeWith(postTape(postCircuitFor(info, plan.sectors)), native());
  return { ...found, tape, tapeMs: performance.now() - t1 };
}
