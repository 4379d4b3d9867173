/**
 * What every circuit's witness program (program.ts) shares, written once for PoRep's StackedDrg partition,
 * FallbackPoSt and EmptySectorUpdate (filecoin/circuit/stacked-program.ts, post/program.ts, snap/program.ts):
 * the shape and program recorded in one synthesis, or from a one-segment recording replicated (identical
 * challenges or sectors), the tape encoded to Montgomery bytes, and the witness run natively from a tape.
 * A circuit module supplies only its recording (its circuit over its slot witness) and its tape.
 */
import { FR_BYTES, FR_MODULUS, FR_R, readFr, writeFr } from '../field/layout.js';
import type { CircuitShape, ConstraintSystem } from './cs.js';
import { type WitnessProgram, checkProgramForShape, encodeTape } from './program.js';
import { type ProgramRecorder } from './program-recorder.js';
import { replicateLastSegment } from './program-replicate.js';
import { ShapeRecorder, replicateLastShapeSegment } from './shape.js';

/** Something that runs witness programs (the native CPU backend). */
export interface WitnessProgramRunner {
  runWitnessProgram(p: WitnessProgram, tape: Uint8Array, out: Uint8Array): Promise<{ ms: number }>;
  alloc(bytes: number): Uint8Array;
  release(buf: Uint8Array): void;
}

export interface NativeWitness {
  /** The full assignment (Montgomery Fr), in `out` when given, else in a buffer from runner.alloc. */
  assignment: Uint8Array;
  /** Public inputs 1 … numInputs − 1 (as WitnessGenerator.inputs()). */
  inputs: bigint[];
  /** Tape building (TypeScript) and the native run, ms. */
  tapeMs: number;
  runMs: number;
}

/** A circuit's recording into `inner`: its synthesis over its slot witness (`onBeginSegment` before each segment). */
export type RecordCircuit = (inner: ConstraintSystem, onBeginSegment?: () => void) => ProgramRecorder;

/** Shape and witness program in one synthesis. */
export function recordShapeAndProgram(record: RecordCircuit): { shape: CircuitShape; program: WitnessProgram } {
  const shapeRec = new ShapeRecorder();
  const program = record(shapeRec).finish();
  const shape = shapeRec.finish();
  checkProgramForShape(program, shape);
  return { shape, program };
}

/**
 * Shape and witness program from a recording of one segment (`recordOne`: the circuit with one challenge or
 * sector after its prologue), both replicated to `count` segments; `what` names a segment in errors and steps.
 */
export function replicatedShapeAndProgram(
  recordOne: RecordCircuit,
  count: number,
  what: string,
  onStep?: (step: string, index: number, steps: number) => void,
): { shape: CircuitShape; program: WitnessProgram } {
  onStep?.(`record one ${what}`, 0, 4);
  const shapeRec = new ShapeRecorder();
  let constraintBase = -1;
  const one = recordOne(shapeRec, () => {
    constraintBase = shapeRec.numConstraints;
  }).finish();
  const oneShape = shapeRec.finish();
  if (one.segments.length !== 2 || constraintBase < 0) throw new Error(`a one-${what} recording has ${one.segments.length} segments`);
  const seg = one.segments[1]!;
  onStep?.(`replicate the shape × ${count} ${what}s`, 1, 4);
  const shape = replicateLastShapeSegment(oneShape, { constraintBase, inputBase: seg.inputBase, auxBase: seg.auxBase }, count);
  onStep?.('replicate the witness program', 2, 4);
  const program = replicateLastSegment(one, count);
  onStep?.('check the program against the shape', 3, 4);
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

/** A witness run natively from a circuit's encoded tape (made here or e.g. in a worker): its assignment (in `out`
 *  when given) and public inputs. */
export async function witnessFromTape(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  tape: Uint8Array,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; runMs: number }> {
  if (tape.length !== program.numSlots * FR_BYTES) throw new RangeError(`tape of ${tape.length / FR_BYTES} values, the program reads ${program.numSlots}`);
  const bytes = (program.numInputs + program.numAux) * FR_BYTES;
  const assignment = out ?? runner.alloc(bytes);
  if (assignment.length !== bytes) throw new RangeError(`witness buffer of ${assignment.length} bytes, the program writes ${bytes}`);
  const { ms } = await runner.runWitnessProgram(program, tape, assignment);
  const inputs: bigint[] = [];
  for (let i = 1; i < program.numInputs; i++) inputs.push(readFr(assignment, i));
  return { assignment, inputs, runMs: ms };
}

/** witnessFromTape of the tape `values()` makes (timed as tapeMs): the same bytes as WitnessGenerator over the circuit. */
export async function nativeWitness(runner: WitnessProgramRunner, program: WitnessProgram, values: () => readonly bigint[], out?: Uint8Array): Promise<NativeWitness> {
  const t0 = performance.now();
  const tape = encodeTapeWith(values(), runner);
  const tapeMs = performance.now() - t0;
  const w = await witnessFromTape(runner, program, tape, out);
  return { ...w, tapeMs };
}
