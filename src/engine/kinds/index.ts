/**
 * The built-in proof kinds: PoRep C2 (porep.ts), the not-yet-implemented SnapDeals / WindowPoSt /
 * WinningPoSt (their jobs FAIL with a clear message), and the opt-in demo kind (demo.ts).
 */
import type { Backend } from '../../backend/backend.js';
import type { EngineConfig } from '../config.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type Planner } from '../types.js';
import { createPorepKind } from './porep.js';

export { createDemoKind, demoCircuitId, type DemoKindOptions } from './demo.js';
export { createPorepKind, porepCircuitId } from './porep.js';

function notImplemented(kind: number, name: string, wire: string, defaultPriority: number): Planner {
  return {
    kind,
    name,
    defaultPriority,
    plan: () => Promise.reject(new PlanError(`${wire} proofs are not implemented yet in kiln (only POREP_SEAL_COMMIT is)`)),
  };
}

export function builtinKinds(config: EngineConfig, backend: Backend): { planners: Planner[]; providers: CircuitProvider[] } {
  const porep = createPorepKind({ config, backend });
  return {
    planners: [
      porep.planner,
      notImplemented(ProofKind.SNAP_DEALS_UPDATE, 'snap-update', 'SNAP_DEALS_UPDATE', Priority.NORMAL),
      notImplemented(ProofKind.WINDOW_POST_PARTITION, 'window-post', 'WINDOW_POST_PARTITION', Priority.HIGH),
      notImplemented(ProofKind.WINNING_POST, 'winning-post', 'WINNING_POST', Priority.CRITICAL),
    ],
    providers: [porep.circuits],
  };
}
