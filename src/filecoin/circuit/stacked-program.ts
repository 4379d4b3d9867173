/**
 * The StackedDrg partition circuit as a witness program (r1cs/program.ts): recorded once per
 * sector size together with the shape, run natively per proof. The tape is the partition's
 * witness leaves in `stackedTape` order; challenges are segments, so one partition's witness is
 * computed on all cores and the 18 challenges of a 32 GiB partition share one code block.
 */
import { CountingSystem } from '../../r1cs/counter.js';
import type { CircuitShape, ConstraintSystem } from '../../r1cs/cs.js';
import { type WitnessProgram } from '../../r1cs/program.js';
import { ProgramRecorder } from '../../r1cs/program-recorder.js';
import { replicateLastSegment } from '../../r1cs/program-replicate.js';
import { type NativeWitness, type WitnessProgramRunner, nativeWitness, recordShapeAndProgram, replicatedShapeAndProgram } from '../../r1cs/circuit-program.js';
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
  return recordShapeAndProgram((inner) => record(params, inner));
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
  return replicatedShapeAndProgram((inner, onBegin) => record({ ...params, challenges: 1 }, inner, onBegin), params.challenges, 'challenge', onStep);
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
  return nativeWitness(runner, program, () => stackedTape(stackedCircuitFor(c1, partition).witness), out);
}
