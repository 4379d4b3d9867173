/**
 * The witness path every kind takes, and what its synthesis workers share: native witness programs run by the
 * CPU addon (the default when it loads) or the TypeScript generator (KindOptions.tuning.witness: `KILN_WITNESS=ts`
 * read at the edges, src/util/tuning.ts). A kind's planner chooses once; its workers learn the choice from the
 * tasks it sends them (a tape task only on the native path), so nothing here reads the environment.
 */
import { NativeBackend } from '../backend/native.js';
import type { WitnessProgramRunner } from '../r1cs/circuit-program.js';

/** Which witness path: native (witness programs, the default when the CPU addon loads) or ts. */
export type WitnessPath = 'native' | 'ts';

/** The runner of the witness path `path` (default native): the CPU addon's for native when it loads, else
 *  undefined (the TypeScript generator). */
export function witnessRunner(path: WitnessPath = 'native'): WitnessProgramRunner | undefined {
  if (path !== 'native' && path !== 'ts') throw new RangeError(`witness path must be native or ts, got ${String(path)}`);
  if (path === 'ts') return undefined;
  try {
    return new NativeBackend();
  } catch {
    return undefined; // no CPU addon: the TypeScript generator
  }
}

/** The native witness runner, made once in this thread when first asked for (a synthesis worker's: the native
 *  field's Montgomery conversion of witness tapes, ~15x faster than TypeScript's, when the addon loads here;
 *  undefined without it). Its tasks run only on the native path: their planner sends them only then. */
export function lazyWitnessRunner(): () => WitnessProgramRunner | undefined {
  let runner: WitnessProgramRunner | undefined | null = null;
  return () => {
    if (runner === null) runner = witnessRunner('native');
    return runner;
  };
}

/** `f`'s result (a witness), its assignment copied out of any shared buffer, with the time it took. */
export function timedWitness(f: () => { assignment: Uint8Array; inputs: bigint[] }): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const w = f();
  return { assignment: w.assignment.slice(), inputs: w.inputs, ms: performance.now() - t0 };
}
