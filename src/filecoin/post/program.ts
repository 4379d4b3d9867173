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
import { ProgramRecorder, type WitnessProgram, checkProgramForShape, encodeTape, replicateLastSegment } from '../../r1cs/program.js';
import { ShapeRecorder, replicateLastShapeSegment } from '../../r1cs/shape.js';
import { FR_BYTES, FR_MODULUS, FR_R, readFr, writeFr } from '../../field/layout.js';
import type { AuthPath, AuthPathLevel } from '../circuit/por.js';
import type { NativeWitness, WitnessProgramRunner } from '../circuit/stacked-program.js';
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
export function postTape(circuit: FallbackPoStCircuit): bigint[] {
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
  const shapeRec = new ShapeRecorder();
  const program = record(params, shapeRec).finish();
  const shape = shapeRec.finish();
  checkProgramForShape(program, shape);
  return { shape, program };
}

/** Shape and witness program from a one-sector recording, both replicated to `params.sectorCount` sectors. */
export function postShapeAndProgramFast(params: PoStCircuitParams): { shape: CircuitShape; program: WitnessProgram } {
  const shapeRec = new ShapeRecorder();
  let constraintBase = -1;
  const one = record({ ...params, sectorCount: 1 }, shapeRec, () => {
    constraintBase = shapeRec.numConstraints;
  }).finish();
  const oneShape = shapeRec.finish();
  if (one.segments.length !== 2 || constraintBase < 0) throw new Error(`a one-sector recording has ${one.segments.length} segments`);
  const seg = one.segments[1]!;
  const shape = replicateLastShapeSegment(oneShape, { constraintBase, inputBase: seg.inputBase, auxBase: seg.auxBase }, params.sectorCount);
  const program = replicateLastSegment(one, params.sectorCount);
  checkProgramForShape(program, shape);
  return { shape, program };
}

/** The native backend's elementwise field operation (NativeBackend.fieldOp). */
interface FieldMultiplier {
  fieldOp(field: 'fr', op: 'mul', a: Uint8Array, b?: Uint8Array): Uint8Array;
}

const hasFieldOp = (x: unknown): x is FieldMultiplier => typeof (x as { fieldOp?: unknown } | undefined)?.fieldOp === 'function';

/**
 * encodeTape's bytes (Montgomery Fr) for a large tape: the canonical values written as four u64 words each, then
 * one native Montgomery multiplication by R² (x·R²·R⁻¹ = x·R): a 32 GiB WindowPoSt tape (1.9 M values) in
 * ~0.6 s instead of ~10 s of bigint arithmetic. Without a native field, encodeTape.
 */
export function encodeTapeWith(values: readonly bigint[], native?: unknown): Uint8Array {
  if (!hasFieldOp(native)) return encodeTape(values);
  const n = values.length;
  const canonical = new Uint8Array(n * FR_BYTES);
  const dv = new DataView(canonical.buffer);
  for (let i = 0; i < n; i++) {
    const x = values[i]!;
    if (x < 0n || x >= FR_MODULUS) throw new RangeError(`tape slot ${i} is not a canonical field element`);
    const o = i * FR_BYTES;
    dv.setBigUint64(o, BigInt.asUintN(64, x), true);
    dv.setBigUint64(o + 8, BigInt.asUintN(64, x >> 64n), true);
    dv.setBigUint64(o + 16, BigInt.asUintN(64, x >> 128n), true);
    dv.setBigUint64(o + 24, x >> 192n, true);
  }
  if (n === 0) return canonical;
  const r2 = new Uint8Array(n * FR_BYTES);
  writeFr(r2, 0, FR_R); // the Montgomery form of R: R² mod r
  for (let filled = FR_BYTES; filled < r2.length; filled *= 2) r2.copyWithin(filled, 0, Math.min(filled, r2.length - filled));
  return native.fieldOp('fr', 'mul', canonical, r2);
}

/** The witness of a PoSt circuit computed natively: the same bytes as WitnessGenerator over `circuit`. */
export async function postWitnessNative(runner: WitnessProgramRunner, program: WitnessProgram, circuit: FallbackPoStCircuit, out?: Uint8Array): Promise<NativeWitness> {
  const t0 = performance.now();
  const tape = encodeTapeWith(postTape(circuit), runner);
  const tapeMs = performance.now() - t0;
  const w = await postWitnessFromTape(runner, program, tape, out);
  return { ...w, tapeMs };
}

/** postWitnessNative from the circuit's encoded tape (`encodeTapeWith(postTape(circuit))`, made e.g. in a worker). */
export async function postWitnessFromTape(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  tape: Uint8Array,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; runMs: number }> {
  if (tape.length !== program.numSlots * FR_BYTES) throw new RangeError(`tape of ${tape.length / FR_BYTES} slots, the program reads ${program.numSlots}`);
  const bytes = (program.numInputs + program.numAux) * FR_BYTES;
  const assignment = out ?? runner.alloc(bytes);
  if (assignment.length !== bytes) throw new RangeError(`witness buffer of ${assignment.length} bytes, the program writes ${bytes}`);
  const { ms } = await runner.runWitnessProgram(program, tape, assignment);
  const inputs: bigint[] = [];
  for (let i = 1; i < program.numInputs; i++) inputs.push(readFr(assignment, i));
  return { assignment, inputs, runMs: ms };
}
