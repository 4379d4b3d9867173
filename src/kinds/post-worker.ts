/**
 * The PoSt kinds' work in a synthesis worker (see synth-pool.ts), off the daemon's event loop:
 *  - `postPlanTask`: the planner's parse of the vanilla proofs, their checks (paths, challenges, comm_r) and the
 *    public inputs (~2 s for a 2,349-sector 32 GiB WindowPoSt on the H200), and the partition's witness tape for
 *    the native witness program (transferred back, not copied: the event loop never holds the parsed sectors);
 *  - `postWitness`: the TypeScript witness, when the native witness path is off (KILN_WITNESS=ts or no CPU
 *    addon): the raw elements arrive structured-cloned and are parsed here again.
 */
import { postCircuitFor } from '../filecoin/post/circuit.js';
import { encodeTapeWith, postTape } from '../filecoin/post/program.js';
import { postProofById } from '../filecoin/post/registry.js';
import { parsePoStSectorProofs } from '../filecoin/post/vanilla.js';
import { planPoStSectors } from './post-request.js';
import { witnessRunner } from './porep-c2.js';
import { postWitnessTs } from './post.js';

export interface PoStWitnessArg {
  registeredProof: number;
  /** The request's raw bincode FallbackPoStSectorProofs (already checked by postPlanTask). */
  elements: Uint8Array[];
  numInputs: number;
}

export function postWitness(arg: PoStWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const info = postProofById(arg.registeredProof);
  if (!info) throw new Error(`unknown registered PoSt proof ${arg.registeredProof}`);
  const w = postWitnessTs(info, parsePoStSectorProofs(arg.elements, info), arg.numInputs);
  return { assignment: w.assignment.slice(), inputs: w.inputs, ms: performance.now() - t0 };
}

export interface PoStPlanArg {
  registeredProof: number;
  elements: Uint8Array[];
  randomness: Uint8Array;
  partitionIndex: number;
  /** Make the witness tape too (the native witness path will run the circuit's program on it). */
  tape: boolean;
}

export type PoStPlanTaskResult =
  | { ok: true; inputs: bigint[]; firstSectorId: bigint; sectors: number; tape: Uint8Array | undefined; planMs: number; tapeMs: number }
  | { ok: false; error: string };

let native: ReturnType<typeof witnessRunner> | null = null;

/** Loads this module (and the native field, when the addon loads here) into a synthesis worker ahead of the
 *  first request: the planner's `warm` (a WinningPoSt then pays no worker start or import, ~0.2–0.4 s). */
export function postWarm(): boolean {
  if (native === null) native = witnessRunner();
  return native !== undefined;
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
  let tape: Uint8Array | undefined;
  if (arg.tape) {
    // the native field's Montgomery conversion when the addon loads in this thread (~15x faster)
    if (native === null) native = witnessRunner();
    tape = encodeTapeWith(postTape(postCircuitFor(info, plan.sectors)), native);
  }
  return { ok: true, inputs: plan.inputs, firstSectorId: plan.sectors[0]!.sectorId, sectors: plan.sectors.length, tape, planMs: t1 - t0, tapeMs: performance.now() - t1 };
}
