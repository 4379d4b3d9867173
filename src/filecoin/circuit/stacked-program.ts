/**
 * The StackedDrg partition circuit as a witness program (r1cs/program.ts): recorded once per
 * sector size together with the shape, run natively per proof. The tape is the partition's
 * witness leaves in `stackedTape` order; challenges are segments, so one partition's witness is
 * computed on all cores and the 18 challenges of a 32 GiB partition share one code block.
 */
import { CountingSystem } from '../../r1cs/counter.js';
import type { CircuitShape, ConstraintSystem } from '../../r1cs/cs.js';
import { ProgramRecorder, type WitnessProgram, checkProgramForShape, encodeTape, replicateLastSegment } from '../../r1cs/program.js';
import { ShapeRecorder, replicateLastShapeSegment } from '../../r1cs/shape.js';
import { FR_BYTES, readFr } from '../../field/layout.js';
import type { C1Output } from '../c1.js';
import { StackedCircuit, type StackedCircuitParams, stackedCircuitFor, stackedSlotWitness, stackedTape } from './stacked.js';

function record(params: StackedCircuitParams, inner: ConstraintSystem, onBeginSegment?: () => void): ProgramRecorder {
  const slots = stackedSlotWitness(params);
  const rec = new ProgramRecorder(inner, { ...slots, onBeginSegment });
  new StackedCircuit(params, slots.witness).synthesize(rec);
  return rec;
}

/** The witness program of a partition circuit (counting only: no shape kept). */
export function stackedProgram(params: StackedCircuitParams): WitnessProgram {
  return record(params, new CountingSystem()).finish();
}

/**
 * The same program from a one-challenge recording (challenges are identical segments): seconds
 * instead of a whole partition's synthesis. Tests compare it with `stackedProgram`.
 */
export function stackedProgramFast(params: StackedCircuitParams): WitnessProgram {
  return replicateLastSegment(stackedProgram({ ...params, challenges: 1 }), params.challenges);
}

/** Shape and witness program in one synthesis. */
export function stackedShapeAndProgram(params: StackedCircuitParams): { shape: CircuitShape; program: WitnessProgram } {
  const shapeRec = new ShapeRecorder();
  const program = record(params, shapeRec).finish();
  const shape = shapeRec.finish();
  checkProgramForShape(program, shape);
  return { shape, program };
}

/**
 * Shape and witness program of a partition from a one-challenge recording, both replicated to
 * `params.challenges` challenges (challenges are identical segments): a 32 GiB partition in tens
 * of seconds and ~1 GB instead of ~10 minutes. Tests compare both with `stackedShapeAndProgram`.
 */
export function stackedShapeAndProgramFast(
  params: StackedCircuitParams,
  /** Called before each step (record, replicate the shape, replicate the program, check): progress of a long compile. */
  onStep?: (step: string, index: number, steps: number) => void,
): { shape: CircuitShape; program: WitnessProgram } {
  onStep?.('record one challenge', 0, 4);
  const shapeRec = new ShapeRecorder();
  let constraintBase = -1;
  const one = record({ ...params, challenges: 1 }, shapeRec, () => {
    constraintBase = shapeRec.numConstraints;
  }).finish();
  const oneShape = shapeRec.finish();
  if (one.segments.length !== 2 || constraintBase < 0) throw new Error(`a one-challenge recording has ${one.segments.length} segments`);
  const seg = one.segments[1];
  onStep?.(`replicate the shape × ${params.challenges} challenges`, 1, 4);
  const shape = replicateLastShapeSegment(oneShape, { constraintBase, inputBase: seg.inputBase, auxBase: seg.auxBase }, params.challenges);
  onStep?.('replicate the witness program', 2, 4);
  const program = replicateLastSegment(one, params.challenges);
  onStep?.('check the program against the shape', 3, 4);
  checkProgramForShape(program, shape);
  return { shape, program };
}

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

/**
 * The witness of partition `partition` of a parsed C1, computed natively: the same bytes as
 * WitnessGenerator over `stackedCircuitFor(c1, partition)`.
 */
export async function stackedWitnessNative(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  c1: C1Output,
  partition: number,
  out?: Uint8Array,
): Promise<NativeWitness> {
  const t0 = performance.now();
  const circuit = stackedCircuitFor(c1, partition);
  const tape = encodeTape(stackedTape(circuit.witness));
  const tapeMs = performance.now() - t0;
  const bytes = (program.numInputs + program.numAux) * FR_BYTES;
  const assignment = out ?? runner.alloc(bytes);
  if (assignment.length !== bytes) throw new RangeError(`witness buffer of ${assignment.length} bytes, the program writes ${bytes}`);
  const { ms } = await runner.runWitnessProgram(program, tape, assignment);
  const inputs: bigint[] = [];
  for (let i = 1; i < program.numInputs; i++) inputs.push(readFr(assignment, i));
  return { assignment, inputs, tapeMs, runMs: ms };
}
