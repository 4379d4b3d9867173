/**
 * The witness path every kind takes, and what its synthesis workers share: native witness programs run by the
 * CPU addon (the default when it loads) or the TypeScript generator (`KILN_WITNESS=ts`).
 */
import { NativeBackend } from '../backend/native.js';
import type { WitnessProgramRunner } from '../r1cs/circuit-program.js';

/** Which witness path: native (witness programs, the default when the CPU addon loads) or ts. */
export type WitnessPath = 'native' | 'ts';

/** The witness path chosen by `KILN_WITNESS` (native | ts; default native when the CPU addon loads). */
export function witnessRunner(): WitnessProgramRunner | undefined {
  const want = process.env.KILN_WITNESS ?? 'native';
  if (want !== 'native' && want !== 'ts') throw new RangeError(`KILN_WITNESS must be native or ts, got ${want}`);
  if (want === 'ts') return undefined;
  try {
    return new NativeBackend();
  } catch {
    return undefined; // no CPU addon: the TypeScript generator
  }
}

/** witnessRunner, made once in this thread when first asked for (a synthesis worker's: the native field's
 *  Montgomery conversion of witness tapes, ~15x faster than TypeScript's, when the addon loads here). */
export function lazyWitnessRunner(): () => WitnessProgramRunner | undefined {
  let runner: WitnessProgramRunner | undefined | null = null;
  return () => {
    if (runner === null) runner = witnessRunner();
    return runner;
  };
}

/** `f`'s result (a witness), its assignment copied out of any shared buffer, with the time it took. */
export function timedWitness(f: () => { assignment: Uint8Array; inputs: bigint[] }): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const w = f();
  return { assignment: w.assignment.slice(), inputs: w.inputs, ms: performance.now() - t0 };
}
