/**
 * The engine's narrow interfaces. A request is turned by the planner of its proof kind into a
 * ProofWork (what to synthesise, per partition, for which circuit); circuits (shape + Groth16
 * parameters) come from CircuitProviders keyed by circuit id (the SRS cache key, e.g. 'porep-32g').
 * The engine itself knows nothing about Filecoin: it schedules, budgets memory, caches SRS,
 * proves, verifies and times.
 */
import type { Backend } from '../backend/backend.js';
import type { AnyParameters as Parameters } from '../groth16/keys.js';
import type { CompiledCircuit } from '../groth16/compiled.js';
import type { Span } from '../util/timing.js';

/** cuzk.v1.ProofKind (docs/filecoin.md §5), plus kiln's hidden demo kind. */
export const ProofKind = {
  UNSPECIFIED: 0,
  POREP_SEAL_COMMIT: 1,
  SNAP_DEALS_UPDATE: 2,
  WINDOW_POST_PARTITION: 3,
  WINNING_POST: 4,
  /** kiln only, not in the proto enum: the demo circuit (tests, smoke runs). Accepted only when a
   *  demo planner is registered. */
  KILN_DEMO: 1000,
} as const;

/** cuzk.v1.Priority. Larger = more urgent. */
export const Priority = { UNSPECIFIED: 0, LOW: 1, NORMAL: 2, HIGH: 3, CRITICAL: 4 } as const;
export type PriorityValue = (typeof Priority)[keyof typeof Priority];

export const PRIORITY_NAMES: Record<number, string> = { 0: 'UNSPECIFIED', 1: 'LOW', 2: 'NORMAL', 3: 'HIGH', 4: 'CRITICAL' };

/** AwaitProofResponse.Status. */
export const AwaitStatus = { UNKNOWN: 0, COMPLETED: 1, FAILED: 2, CANCELLED: 3, TIMEOUT: 4 } as const;

/** A SubmitProofRequest in engine terms (the server converts the wire message). */
export interface ProofRequest {
  requestId: string;
  proofKind: number;
  sectorSize: number;
  registeredProof: number;
  priority: number;
  vanillaProof: Uint8Array;
  vanillaProofs: Uint8Array[];
  sectorNumber: number;
  minerId: number;
  randomness: Uint8Array;
  partitionIndex: number;
  commROld: Uint8Array;
  commRNew: Uint8Array;
  commDNew: Uint8Array;
}

/** Fills the fields a caller left out with the wire defaults. */
export function proofRequest(p: Partial<ProofRequest> & { proofKind: number }): ProofRequest {
  return {
    requestId: '',
    sectorSize: 0,
    registeredProof: 0,
    priority: 0,
    vanillaProof: new Uint8Array(0),
    vanillaProofs: [],
    sectorNumber: 0,
    minerId: 0,
    randomness: new Uint8Array(0),
    partitionIndex: 0,
    commROld: new Uint8Array(0),
    commRNew: new Uint8Array(0),
    commDNew: new Uint8Array(0),
    ...p,
  };
}

/** The witness of one partition: the full assignment (Montgomery Fr, ONE first) and the public
 *  inputs the proof must verify against (without ONE). */
export interface PartitionWitness {
  assignment: Uint8Array;
  inputs: bigint[];
  /** Frees the assignment's native memory now (called once, after proving or when dropped). */
  release?(): void;
}

/** One job's work, produced by the planner of its kind. */
export interface ProofWork {
  /** SRS cache key, e.g. 'porep-2k', 'porep-32g', 'demo-2000'. */
  circuitId: string;
  partitions: number;
  /** Computes the witness of partition k. Runs on the synthesis stage; may use the engine's
   *  worker pool (PlanContext.synthPool). Must throw (not crash) on bad input. */
  synthesize(partition: number, span: Span): Promise<PartitionWitness>;
  /** Called once when the job ends (frees parsed input). */
  dispose?(): void;
  /** Free-form description for status/logs (e.g. 'StackedDrg2KiBV1_1 sector 7'). */
  describe?: string;
}

/** Refusal of a request by a planner: the job FAILS with this message. */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

export interface PlanContext {
  /** Worker pool for synthesis (may be used or not by a planner): the engine's pool as seen by this job, its
   *  tasks ranked by the job's priority and submission order (synth-pool.ts SynthesisPool.forJob); a planner
   *  may rank a job's own tasks further (e.g. by partition: `{ rank: [k] }`). */
  synthPool: import('./synth-pool.js').SynthRunner;
  /** The job's `validate` span: a planner may record its steps under it (the engine's warm() call has none). */
  span?: Span;
  /** Witness buffers in the backend's memory, reused across partitions (give them back in
   *  PartitionWitness.release). */
  buffers: import('./buffers.js').BufferPool;
  /**
   * The turn of a large circuit's native witness (kinds/kind.ts nativeWitness), one at a time in the order of
   * the jobs (priority, then submission; `rank` orders a job's own): such a witness runs on every core, so
   * several at once only delay the one whose partition the device takes next (three 32 GiB WindowPoSt
   * witnesses at once: 8.26 s for the first, 2.47 s alone; bench:post32 --window 4 on the H100, 2026-12-05).
   * Resolves with its release. Absent: no turns (every witness runs at once).
   */
  witnessTurn?(rank?: readonly number[]): Promise<() => void>;
}

/** Turns requests of one proof kind into ProofWork. */
export interface Planner {
  readonly kind: number;
  /** Queue label (cuzk's ProofKind display name: 'porep-c2', 'snap-update', 'window-post', 'winning-post'). */
  readonly name: string;
  /** Priority when the request says UNSPECIFIED. */
  readonly defaultPriority: number;
  plan(req: ProofRequest, ctx: PlanContext): Promise<ProofWork>;
  /** Optional: called once when the engine registers the planner, e.g. to load its worker module into a
   *  synthesis worker ahead of the first request (a latency-critical kind's first plan then pays no
   *  worker start or module import). Must not throw or block. */
  warm?(ctx: PlanContext): void;
}

/** Shapes and parameters of the circuits one planner family uses. */
export interface CircuitProvider {
  /** True when this provider serves `circuitId`. */
  knows(circuitId: string): boolean;
  /** Optional fast check that parameters can be had at all (e.g. the .params file exists), run
   *  before the (possibly expensive) shape is compiled. Throws with a message when not. */
  available?(circuitId: string): Promise<void>;
  /** The compiled circuit: R1CS shape, query indices, digest, witness program (one value per circuit id,
   *  memoised by the provider). */
  compiled(circuitId: string): Promise<CompiledCircuit>;
  /** Loads the Groth16 parameters (the engine caches them: see SrsCache) for `backend`: the device
   *  whose copy this is (with several GPUs each loads its own; on a GPU the sections go to that
   *  device). Without it, the provider's own backend. */
  params(circuitId: string, span: Span, backend?: Backend): Promise<Parameters>;
  /** Whether the parameters loaded for `circuitId` are INSECURE development parameters (a proof made with
   *  them never verifies on chain): every result of such a proof says so (JobResult, /status, the status
   *  page, the bench client). Absent: official parameters. */
  insecure?(circuitId: string): boolean;
  /** Stops work in flight (worker threads compiling shapes) at shutdown. */
  close?(): Promise<void>;
  /** Optional: true for a circuit whose parameters memory pressure never evicts (a latency-critical kind's:
   *  WinningPoSt's; only EvictSRS frees them). */
  keepResident?(circuitId: string): boolean;
}
