/**
 * The proof kinds' registry: the engine's planners and circuit providers, above the engine (which knows nothing
 * about Filecoin) and below the server and the CLI. A kind is one folder of what makes it different:
 *  - porep/ (POREP_SEAL_COMMIT, C2), post/ (WINNING_POST, WINDOW_POST_PARTITION), snap/ (SNAP_DEALS_UPDATE), each
 *    with its core (<kind>.ts: circuit ids, shapes, parameter files, witness, verification), planner.ts (the
 *    engine's planner and circuit provider), tasks.ts (its tasks in a synthesis worker) and, for PoSt and
 *    SnapDeals, request.ts (the request's checks, shared by planner and tasks);
 *  - the opt-in demo-circuit kind (demo-circuit.ts, demo-circuit-tasks.ts): the synthetic DemoCircuit of
 *    src/r1cs/demo-circuit.ts.
 * What every kind shares is written once beside them: kind.ts (the circuit provider, planning in a synthesis
 * worker, the witness paths), shape-cache.ts (shapes and witness programs, cached on disk), params.ts and
 * params-dir.ts (parameters), witness.ts (the witness runner). A kind's tasks import what they run, never its planner.
 */
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import type { CircuitProvider, Planner } from '../engine/types.js';
import { createPorepKind } from './porep/planner.js';
import { createPoStKind } from './post/planner.js';
import { createSnapKind } from './snap/planner.js';
import type { Tuning } from '../util/tuning.js';

export { createDemoKind, demoCircuitId, type DemoKindOptions } from './demo-circuit.js';
export { createPorepKind, porepCircuitId } from './porep/planner.js';
export { createPoStKind } from './post/planner.js';
export { createSnapKind } from './snap/planner.js';

/** The built-in kinds; `notice` gets the lines worth logging (parameters found or generated, shapes); `tuning`: what
 *  the edge read from the environment (KindOptions.tuning: the witness path, the PoSt shape cache). */
export function builtinKinds(config: EngineConfig, backend: Backend, notice?: (msg: string) => void, tuning?: Tuning): { planners: Planner[]; providers: CircuitProvider[] } {
  const porep = createPorepKind({ config, backend, notice, tuning });
  const post = createPoStKind({ config, backend, notice, tuning });
  const snap = createSnapKind({ config, backend, notice, tuning });
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
