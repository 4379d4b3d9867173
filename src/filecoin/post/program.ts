/**
 * The FallbackPoSt circuit as a witness program (r1cs/program.ts), the way stacked-program.ts does PoRep: recorded
 * once per circuit id together with the shape, run natively per proof. Each circuit sector is one segment (the
 * circuit has no prologue); its tape slots are contiguous: comm_r_last, comm_c, comm_r, then per challenge the leaf
 * and, per path level (base, sub, top), the index and the siblings. Sectors are identical segments, so a 2349-sector
 * 32 GiB WindowPoSt shape and program are recorded from one sector and replicated (tests compare with a full
 * recording).
 */
import { CountingSystem } from '../../r1cs/counter.js';
import type { CircuitShape, ConstraintSystem } from '../../r1cs/cs.js';
import { type WitnessProgram } from '../../r1cs/program.js';
import { ProgramRecorder } from '../../r1cs/program-recorder.js';
import { replicateLastSegment } from '../../r1cs/program-replicate.js';
import { type NativeWitness, type WitnessProgramRunner, nativeWitness, recordShapeAndProgram, replicatedShapeAndProgram } from '../../r1cs/circuit-program.js';
import type { AuthPath, AuthPathLevel } from '../circuit/por.js';
import { FallbackPoStCircuit, type PoStCircuitParams, type PoStSectorWitness, postBlankCircuit } from './circuit.js';

/** The circuit sectors' leaves mapped in tape order (see the module comment). */
function mapPoStLeaves(
  sectors: readonly PoStSectorWitness[],
  leaf: (x: bigint | undefined) => bigint | undefined,
  index: (i: number | undefined) => number | undefined,
  onSector: (i: number) => void = () => {},
): PoStSectorWitness[] {
  const path = (p: AuthPath): AuthPath => {
    const level = (l: AuthPathLevel): AuthPathLevel => {
      const idx = index(l.index);
      return { arity: l.arity, index: idx, hashes: l.hashes.map(leaf) };
    };
    return { base: p.base.map(level), sub: p.sub.map(level), top: p.top.map(level) };
  };
  return sectors.map((s, i) => {
    onSector(i);
    const commRLast = leaf(s.commRLast);
    const commC = leaf(s.commC);
    const commR = leaf(s.commR);
    const leaves: (bigint | undefined)[] = [];
    const paths: AuthPath[] = [];
    s.leaves.forEach((x, n) => {
      leaves.push(leaf(x));
      paths.push(path(s.paths[n]!));
    });
    return { commRLast, commC, commR, leaves, paths };
  });
}

/** The slot witness of `params` (every leaf its tape slot) and where each sector's slots start. */
export function postSlotWitness(params: PoStCircuitParams): { sectors: PoStSectorWitness[]; numSlots: number; segmentSlotBases: number[] } {
  let n = 0;
  const segmentSlotBases: number[] = [];
  const sectors = mapPoStLeaves(
    postBlankCircuit(params).sectors,
    () => BigInt(n++),
    () => n++,
    () => segmentSlotBases.push(n),
  );
  return { sectors, numSlots: n, segmentSlotBases };
}

/** The tape of a circuit: its leaves in slot order (a missing leaf is an error naming the slot). */
/** The tape of a circuit, or of some of its sectors in order (each sector's slots follow the one before's). */
export function postTape(circuit: { readonly sectors: readonly PoStSectorWitness[] }): bigint[] {
  const out: bigint[] = [];
  const push = (x: bigint | number | undefined): void => {
    if (x === undefined) throw new RangeError(`PoSt witness: leaf ${out.length} (tape slot) has no value`);
    out.push(BigInt(x));
  };
  mapPoStLeaves(
    circuit.sectors,
    (x) => (push(x), x),
    (i) => (push(i), i),
  );
  return out;
}

function record(params: PoStCircuitParams, inner: ConstraintSystem, onBeginSegment?: () => void): ProgramRecorder {
  const slots = postSlotWitness(params);
  const rec = new ProgramRecorder(inner, { numSlots: slots.numSlots, segmentSlotBases: slots.segmentSlotBases, onBeginSegment });
  new FallbackPoStCircuit(params, slots.sectors).synthesize(rec);
  return rec;
}

/** The witness program of the whole circuit (counting only: no shape kept). */
export function postProgram(params: PoStCircuitParams): WitnessProgram {
  return record(params, new CountingSystem()).finish();
}

/** The same program from a one-sector recording, replicated (sectors are identical segments). */
export function postProgramFast(params: PoStCircuitParams): WitnessProgram {
  return replicateLastSegment(postProgram({ ...params, sectorCount: 1 }), params.sectorCount);
}

/** Shape and witness program in one synthesis of the whole circuit. */
export function postShapeAndProgram(params: PoStCircuitParams): { shape: CircuitShape; program: WitnessProgram } {
  return recordShapeAndProgram((inner) => record(params, inner));
}

/** Shape and witness program from a one-sector recording, both replicated to `params.sectorCount` sectors. */
export function postShapeAndProgramFast(params: PoStCircuitParams): { shape: CircuitShape; program: WitnessProgram } {
  return replicatedShapeAndProgram((inner, onBegin) => record({ ...params, sectorCount: 1 }, inner, onBegin), params.sectorCount, 'sector');
}

/** The witness of a PoSt circuit computed natively: the same bytes as WitnessGenerator over `circuit`. */
export async function postWitnessNative(runner: WitnessProgramRunner, program: WitnessProgram, circuit: FallbackPoStCircuit, out?: Uint8Array): Promise<NativeWitness> {
  return nativeWitness(runner, program, () => postTape(circuit), out);
}
