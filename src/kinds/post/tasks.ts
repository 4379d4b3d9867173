/**
 * The PoSt kinds' work in a synthesis worker (see synth-pool.ts), off the daemon's event loop:
 *  - `postPlanTask`: the planner's parse of the vanilla proofs, their checks (paths, challenges, comm_r) and the
 *    public inputs (~2 s for a 2,349-sector 32 GiB WindowPoSt on the H200), and the partition's witness tape for
 *    the native witness program (transferred back, not copied: the event loop never holds the parsed sectors);
 *  - `postPlanPiece`: the same for a piece of a large WindowPoSt partition's sectors (the planner runs the pieces
 *    on several workers at once and joins them, joinPoStPieces: the same inputs and tape as postPlanTask's);
 *  - `postWitness`: the TypeScript witness, when the native witness path is off (the kind's tuning.witness 'ts',
 *    KILN_WITNESS=ts at the edges, or no CPU addon): the raw elements arrive structured-cloned and are parsed
 *    here again.
 * The planner's witness path reaches this thread in the task arguments (PoStPlanArg.tape, postWarm's `withNative`).
 */
import { padWindowInputs, postCircuitFor, sectorWitness } from '../../filecoin/post/circuit.js';
import { FR_BYTES } from '../../field/layout.js';
import { postTape } from '../../filecoin/post/program.js';
import { encodeTapeWith } from '../../r1cs/circuit-program.js';
import { postProofById } from '../../filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../../filecoin/post/types.js';
import { parsePoStSectorProofs } from '../../filecoin/post/vanilla.js';
import { planPoStPiece, planPoStSectors } from './request.js';
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
  return planTask(
    arg,
    (info) => planPoStSectors(info, arg.elements, arg.randomness, arg.partitionIndex),
    (info, sectors) => postTape(postCircuitFor(info, sectors)),
  );
}

/** A plan task's body: the info, `plan` (its PlanError the refusal), and with `arg.tape` the tape `tapeOf` the
 *  planned sectors, encoded (the native field's Montgomery conversion when the addon loads here: ~15× faster). */
function planTask(
  arg: PoStPlanArg,
  plan: (info: PoStProofInfo) => { sectors: PoStSectorProof[]; inputs: bigint[] },
  tapeOf: (info: PoStProofInfo, sectors: PoStSectorProof[]) => bigint[],
  window = false,
): PoStPlanTaskResult {
  const t0 = performance.now();
  const info = postProofById(arg.registeredProof);
  if (!info) return { ok: false, error: `unknown registered PoSt proof ${arg.registeredProof}` };
  if (window && info.type !== 'window') return { ok: false, error: `registered PoSt proof ${arg.registeredProof} is not a WindowPoSt proof` };
  let planned: ReturnType<typeof plan>;
  try {
    planned = plan(info);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const t1 = performance.now();
  const found = { ok: true as const, inputs: planned.inputs, firstSectorId: planned.sectors[0]!.sectorId, sectors: planned.sectors.length, planMs: t1 - t0 };
  if (!arg.tape) return { ...found, tape: undefined };
  const tape = encodeTapeWith(tapeOf(info, planned.sectors), native());
  return { ...found, tape, tapeMs: performance.now() - t1 };
}

export interface PoStPieceArg extends PoStPlanArg {
  /** The position of elements[0] in the partition's vanilla proofs. */
  first: number;
}

/** What postPlanPiece finds: as postPlanTask, of the piece's sectors (inputs unpadded, the tape of its sectors' slots). */
export type PoStPieceResult = PoStPlanTaskResult;

/** planPoStPiece (messages as the whole parse gives them) of a WindowPoSt piece and, with `tape`, its sectors' tape. */
export function postPlanPiece(arg: PoStPieceArg): PoStPieceResult {
  return planTask(
    arg,
    (info) => planPoStPiece(info, arg.elements, arg.randomness, arg.partitionIndex, arg.first),
    (_info, sectors) => postTape({ sectors: sectors.map((s) => sectorWitness(s, s.inclusionProofs)) }),
    true,
  );
}

/**
 * The pieces of a WindowPoSt partition (in order, each ok) joined into what postPlanTask gives for the whole: the
 * public inputs padded with the last sector's up to sector_count, and the tape likewise (each sector's slots are one
 * run of the same length, the circuit's padding sectors copies of the last real one). planMs/tapeMs: the slowest piece's.
 */
export function joinPoStPieces(registeredProof: number, pieces: readonly (PoStPieceResult & { ok: true })[]): PoStPlanTaskResult & { ok: true } {
  const info = postProofById(registeredProof);
  if (!info || info.type !== 'window') throw new RangeError(`registered PoSt proof ${registeredProof} is not a WindowPoSt proof`);
  if (pieces.length === 0) throw new RangeError('no pieces');
  const sectors = pieces.reduce((n, p) => n + p.sectors, 0);
  const inputs = padWindowInputs(info, pieces.flatMap((p) => p.inputs));
  let tape: Uint8Array | undefined;
  if (pieces.every((p) => p.tape !== undefined)) {
    const last = pieces[pieces.length - 1]!;
    const sector = last.tape!.length / last.sectors;
    if (!Number.isInteger(sector / FR_BYTES) || pieces.some((p) => p.tape!.length !== p.sectors * sector)) throw new RangeError('the pieces\' tapes differ in slots per sector');
    tape = new Uint8Array(info.sectorCount * sector);
    let o = 0;
    for (const p of pieces) {
      tape.set(p.tape!, o);
      o += p.tape!.length;
    }
    const lastSector = tape.subarray(o - sector, o);
    for (; o < tape.length; o += sector) tape.set(lastSector, o);
  }
  const max = (f: (p: PoStPieceResult & { ok: true }) => number | undefined): number => Math.max(...pieces.map((p) => f(p) ?? 0));
  return { ok: true, inputs, firstSectorId: pieces[0]!.firstSectorId, sectors, tape, planMs: max((p) => p.planMs), ...(tape ? { tapeMs: max((p) => p.tapeMs) } : {}) };
}
