/**
 * The proof kinds: the engine's planners and circuit providers, one set of modules per kind, above
 * the engine (which knows nothing about Filecoin) and below the server and the CLI.
 *  - PoRep C2: porep-c2.ts (circuit ids, compiled shapes, parameter files, witness, prove/verify of
 *    every partition), porep-c2-planner.ts (the engine's planner and circuit provider) and
 *    porep-c2-worker.ts (a partition's witness in a synthesis worker);
 *  - WinningPoSt / WindowPoSt: post.ts (shape, witness program, parameters, verification of the FallbackPoSt
 *    circuit), post-planner.ts (the two planners and their circuit provider), post-worker.ts;
 *  - SnapDeals: snap.ts (shape, witness program, parameters, verification of the EmptySectorUpdate circuit),
 *    snap-planner.ts (SNAP_DEALS_UPDATE's planner and circuit provider), snap-worker.ts;
 *  - the opt-in demo-circuit kind (demo-circuit.ts, demo-circuit-worker.ts): the synthetic
 *    DemoCircuit of src/r1cs/demo-circuit.ts.
 */
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import type { CircuitProvider, Planner } from '../engine/types.js';
import { createPorepKind } from './porep-c2-planner.js';
import { createPoStKind } from './post-planner.js';
import { createSnapKind } from './snap-planner.js';

export { createDemoKind, demoCircuitId, type DemoKindOptions } from './demo-circuit.js';
export { createPorepKind, porepCircuitId } from './porep-c2-planner.js';
export { createPoStKind } from './post-planner.js';
export { createSnapKind } from './snap-planner.js';

/** The built-in kinds; `notice` gets the lines worth logging (parameters found or generated, shapes). */
export function builtinKinds(config: EngineConfig, backend: Backend, notice?: (msg: string) => void): { planners: Planner[]; providers: CircuitProvider[] } {
  const porep = createPorepKind({ config, backend, notice });
  const post = createPoStKind({ config, backend, notice });
  const snap = createSnapKind({ config, backend, notice });
  return {
    planners: [
      porep.planner,
      snap.planner,
      post.window,
      post.winning,
    ],
    providers: [porep.circuits, post.circuits, snap.circuits],
  };
}
