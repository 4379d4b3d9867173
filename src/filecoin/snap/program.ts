/**
 * The EmptySectorUpdate circuit as a witness program (r1cs/program.ts), as post/program.ts does FallbackPoSt: the
 * prologue (public inputs, phi, comm_c, the roots, apex tree, partition path, challenge bits) and one segment per
 * challenge. Tape slots: the prologue's values (k_and_h_select, comm_r_old, comm_d_new, comm_r_new, comm_c,
 * root_r_old, root_r_new, the apex leaves, the partition path), then per challenge leaf_r_old, leaf_d_new, the
 * r_old siblings, the d_new siblings below the apex leaves, the r_new siblings (contiguous per segment).
 *
 * The challenge segments have the same structure but read different prologue variables: each challenge's random
 * bits are its own chunk of a digest. `snapShapeAndProgramFast` therefore records the prologue and challenge 0 only
 * and replicates that segment with *relocation*: copy k reads challenge k's bit variables where challenge 0 read its
 * own (r1cs replicateLastShapeSegment's `relocate`, program.ts replicateLastSegmentRelocated; each copy gets its own
 * program block). Tests compare it with a whole recording (shape digest and witness bytes).
 */
import { CountingSystem } from '../../r1cs/counter.js';
import type { CircuitShape, ConstraintSystem } from '../../r1cs/cs.js';
import { type WitnessProgram, checkProgramForShape } from '../../r1cs/program.js';
import { ProgramRecorder } from '../../r1cs/program-recorder.js';
import { replicateLastSegmentRelocated } from '../../r1cs/program-replicate.js';
import { ShapeRecorder, replicateLastShapeSegment } from '../../r1cs/shape.js';
import { auxIndex } from '../../r1cs/cs.js';
import { type NativeWitness, type WitnessProgramRunner, nativeWitness, recordShapeAndProgram } from '../../r1cs/circuit-program.js';
import { EmptySectorUpdateCircuit, snapBlankWitness, type SnapChallengeWitness, type SnapWitness } from './circuit.js';
import type { SnapParams } from './registry.js';

type V = bigint | undefined;

/** The witness with every value mapped in tape order; `onChallenge(i)` before challenge i's values. */
function mapSnapLeaves(w: SnapWitness, leaf: (x: V) => V, onChallenge: (i: number) => void = () => {}): SnapWitness {
  const kAndHSelect = leaf(w.kAndHSelect);
  const commROld = leaf(w.commROld);
  const commDNew = leaf(w.commDNew);
  const commRNew = leaf(w.commRNew);
  const commC = leaf(w.commC);
  const rootROld = leaf(w.rootROld);
  const rootRNew = leaf(w.rootRNew);
  const apexLeaves = w.apexLeaves.map(leaf);
  const partitionPath = w.partitionPath.map(leaf);
  const challenges = w.challenges.map((c, i): SnapChallengeWitness => {
    onChallenge(i);
    const leafROld = leaf(c.leafROld);
    const leafDNew = leaf(c.leafDNew);
    const pathROld = c.pathROld.map((s) => s.map(leaf));
    const pathDToApex = c.pathDToApex.map(leaf);
    const pathRNew = c.pathRNew.map((s) => s.map(leaf));
    return { leafROld, leafDNew, pathROld, pathDToApex, pathRNew };
  });
  return { kAndHSelect, commROld, commDNew, commRNew, commC, rootROld, rootRNew, apexLeaves, partitionPath, challenges };
}

/** The slot witness (every value its tape slot) and where each challenge's slots start. */
export function snapSlotWitness(p: SnapParams): { witness: SnapWitness; numSlots: number; segmentSlotBases: number[] } {
  let n = 0;
  const segmentSlotBases: number[] = [];
  const witness = mapSnapLeaves(
    snapBlankWitness(p),
    () => BigInt(n++),
    () => segmentSlotBases.push(n),
  );
  return { witness, numSlots: n, segmentSlotBases };
}

/** The tape of a circuit: its values in slot order (a missing one is an error naming the slot). */
export function snapTape(circuit: EmptySectorUpdateCircuit): bigint[] {
  const out: bigint[] = [];
  mapSnapLeaves(circuit.witness, (x) => {
    if (x === undefined) throw new RangeError(`SnapDeals witness: tape slot ${out.length} has no value`);
    out.push(x);
    return x;
  });
  return out;
}

function record(p: SnapParams, inner: ConstraintSystem): ProgramRecorder {
  const slots = snapSlotWitness(p);
  const rec = new ProgramRecorder(inner, { numSlots: slots.numSlots, segmentSlotBases: slots.segmentSlotBases });
  new EmptySectorUpdateCircuit(p, slots.witness).synthesize(rec);
  return rec;
}

/** The witness program (counting only: no shape kept). */
export function snapProgram(p: SnapParams): WitnessProgram {
  return record(p, new CountingSystem()).finish();
}

/** Shape and witness program in one synthesis. */
export function snapShapeAndProgram(p: SnapParams): { shape: CircuitShape; program: WitnessProgram } {
  return recordShapeAndProgram((inner) => record(p, inner));
}

/** Shape and witness program from a prologue + one-challenge recording, replicated with relocation (see above). */
export function snapShapeAndProgramFast(p: SnapParams): { shape: CircuitShape; program: WitnessProgram } {
  const slots = snapSlotWitness(p);
  const shapeRec = new ShapeRecorder();
  let constraintBase = -1;
  const bases = slots.segmentSlotBases;
  const rec = new ProgramRecorder(shapeRec, {
    numSlots: bases.length > 1 ? bases[1]! : slots.numSlots,
    segmentSlotBases: [bases[0]!],
    onBeginSegment: () => {
      constraintBase = shapeRec.numConstraints;
    },
  });
  const circuit = new EmptySectorUpdateCircuit(p, slots.witness, { challenges: 1 });
  circuit.synthesize(rec);
  const one = rec.finish();
  const oneShape = shapeRec.finish();
  if (one.segments.length !== 2 || constraintBase < 0) throw new Error(`a one-challenge recording has ${one.segments.length} segments`);
  const bits = circuit.challengeBitVariables.map((vs) => vs.map(auxIndex));
  if (bits.length !== p.challengeCount) throw new Error(`${bits.length} challenges' bits, expected ${p.challengeCount}`);
  const maps = bits.map((b) => new Map(bits[0]!.map((j, i) => [j, b[i]!] as [number, number])));
  const seg = one.segments[1]!;
  const shape = replicateLastShapeSegment(oneShape, { constraintBase, inputBase: seg.inputBase, auxBase: seg.auxBase }, p.challengeCount, (k) => maps[k]!);
  const program = replicateLastSegmentRelocated(one, p.challengeCount, (k) => (k === 0 ? new Map() : maps[k]!));
  checkProgramForShape(program, shape);
  return { shape, program };
}

/** The witness computed natively: the same bytes as WitnessGenerator over `circuit`. */
export async function snapWitnessNative(runner: WitnessProgramRunner, program: WitnessProgram, circuit: EmptySectorUpdateCircuit, out?: Uint8Array): Promise<NativeWitness> {
  return nativeWitness(runner, program, () => snapTape(circuit), out);
}
