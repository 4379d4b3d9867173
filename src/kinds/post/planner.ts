/**
 * WINNING_POST (4, CRITICAL, queue 'winning-post') and WINDOW_POST_PARTITION (3, HIGH, queue 'window-post'):
 * Curio's fields (docs/filecoin.md §8): `vanilla_proofs` (raw bincode `FallbackPoStSectorProof`s: one for WinningPoSt, one per
 * sector of the partition for WindowPoSt), `randomness` (32 B, a canonical field element: Curio masks [31] &= 0x3f),
 * `partition_index`, `miner_id`, `registered_proof` (RegisteredPoStProof 0–14). Every element is parsed (errors
 * name the element, field and offset), every challenged leaf is checked against the challenge the randomness
 * derives (errors name the sector and challenge), and one ProofWork of one partition is made: circuit id
 * `winning-<size>` / `wpost-<size>`. Nothing heavy runs on the event loop, so that the daemon keeps answering:
 * the parse, the checks, the public inputs and the witness tape are made in a synthesis worker (tasks.ts
 * postPlanTask; ~2 s for a 2,349-sector 32 GiB WindowPoSt), the shape and witness program are recorded in a
 * one-shot worker thread (post.ts postShapeTask, its arrays transferred back), the CPU development setup too
 * (postDevParamsTask).
 * Synthesis: the circuit's witness program on the native backend run on the worker's tape (one sector = one
 * segment, run in parallel), else the TypeScript generator in the worker pool (tasks.ts postWitness). The
 * engine verifies the proof against `postPublicInputs` before it returns it.
 *
 * Parameters: the official file by its name (`postParamsFileName`, e.g.
 * v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-<sha256>.params) or `<circuit id>.params` in
 * `[srs] param_cache`; otherwise, only with `[srs] dev_params = true`, INSECURE development parameters
 * (params.ts, exactly as PoRep: `<[kiln] cache_dir>/dev-params/`).
 */
import { taskName, workerTasks } from '../../engine/synth-pool.js';
import { Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork, type ProofRequest, type PlanContext } from '../../engine/types.js';
import { postCircuitId, postProofByCircuitId, postProofName } from '../../filecoin/post/registry.js';
import type { PoStProofInfo } from '../../filecoin/post/types.js';
import { checkInputs, createKindCircuits, type KindOptions, nativeWitness, planInWorker, plannerOf, workerWitness } from '../kind.js';
import type { ParamsSource } from '../params.js';
import { findOfficialPoStParams, postParamsNames, postShapeCacheDir } from './post.js';
import { witnessFromTape } from '../../r1cs/circuit-program.js';
import { joinPoStPieces, type PoStPieceResult, type PoStPlanArg, type PoStPlanTaskResult, type PoStWitnessArg } from './tasks.js';
import { checkPoStRequest } from './request.js';
import { witnessRunner } from '../witness.js';

type ShapeModule = typeof import('./post.js');
const task = workerTasks<typeof import('./tasks.js')>(new URL('./tasks.js', import.meta.url).href);
const SHAPE_MODULE = new URL('./post.js', import.meta.url).href;

export type PoStKindOptions = KindOptions;

export interface PoStKind {
  winning: Planner;
  window: Planner;
  /** Both, WinningPoSt first. */
  planners: Planner[];
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export function createPoStKind(opts: PoStKindOptions): PoStKind {
  const paramCache = opts.config.srs.param_cache;
  const shapeCache = opts.tuning?.postShapeCache;
  const { circuits, paramsSource } = createKindCircuits<PoStProofInfo>(
    {
      name: 'PoSt',
      infoOf: postProofByCircuitId,
      tasks: { module: SHAPE_MODULE, shape: taskName<ShapeModule>('postShapeTask'), devParams: taskName<ShapeModule>('postDevParamsTask') },
      shapeCacheDir: (dir) => postShapeCacheDir(dir, shapeCache),
      uncachedReason: 'KILN_POST_SHAPE_CACHE=0',
      // without a shape cache, development parameters are named by a digest hashed now, in the worker
      shapeTaskArg: (_id, info, shapeCacheDir) => ({ digest: shapeCacheDir === undefined && opts.config.srs.dev_params && findOfficialPoStParams(info, paramCache) === undefined }),
      paramsNames: (_id, info) => postParamsNames(info),
      // a WinningPoSt answers within seconds or the block is lost: its parameters stay whatever else is evicted
      keepResident: (id) => postProofByCircuitId(id)?.type === 'winning',
    },
    opts,
  );

  const runner = witnessRunner(opts.tuning?.witness);
  /** The request checked and planned in a synthesis worker (tasks.ts postPlanTask). */
  const plan = async (req: ProofRequest, ctx: PlanContext, type: 'winning' | 'window'): Promise<WorkerPlan> => {
    const t0 = performance.now();
    const { info, elements } = checkPoStRequest(req, type);
    // parameters first (as PreloadSRS): a circuit without them fails now, not after its vanilla proofs are checked
    await circuits.available!(postCircuitId(info));
    const arg: PoStPlanArg = { registeredProof: info.id, elements, randomness: req.randomness, partitionIndex: req.partitionIndex, tape: runner !== undefined };
    // the validate span's steps: the request's fields and the wait for a worker, the checks and public inputs, the tape
    // in pieces on the workers free now: the jobs submitted with this one plan whole, on one worker each, and leave the
    // cores to the witness of the first (its GPU time is their slack)
    const r = await planPoStInWorkers(ctx, arg, t0, postPieces(type, elements.length, ctx.synthPool.idle));
    return { info, elements, inputs: r.inputs, tape: r.tape, firstSectorId: r.firstSectorId, sectors: r.sectors, partitionIndex: req.partitionIndex };
  };
  const work = (plan: WorkerPlan, ctx: PlanContext, describe: string): ProofWork => {
    const { info } = plan;
    const circuitId = postCircuitId(info);
    let held: { elements: Uint8Array[]; tape: Uint8Array | undefined } | undefined = { elements: plan.elements, tape: plan.tape };
    return {
      circuitId,
      partitions: 1,
      describe,
      async synthesize(_k, span) {
        if (held === undefined) throw new Error('job disposed');
        const want = plan.inputs;
        const check = (got: bigint[]): void => checkInputs(want, got, "the circuit's public inputs differ from postPublicInputs");
        const tape = held.tape;
        if (runner !== undefined && tape !== undefined) {
          // the tape was made with the plan, in the worker (the validate span's `tape`): here only the native program runs
          const { shape, program } = await circuits.compiled(circuitId);
          return nativeWitness(ctx, span, shape, want, (out) => span.time('witness', () => witnessFromTape(runner, program, tape, out)), check);
        }
        const arg: PoStWitnessArg = { registeredProof: info.id, elements: held.elements, numInputs: want.length + 1 };
        return workerWitness(ctx, span, task('postWitness', arg), want, check);
      },
      dispose() {
        held = undefined;
      },
    };
  };

  // WinningPoSt's latency: the first request finds the planning module loaded in a synthesis worker
  const warm = (ctx: PlanContext): void => void ctx.synthPool.run(task('postWarm', runner !== undefined)).catch(() => undefined);
  const winning = plannerOf({ kind: ProofKind.WINNING_POST, name: 'winning-post', defaultPriority: Priority.CRITICAL, warm }, (req, ctx) => plan(req, ctx, 'winning'), work, (p) => `${postProofName(p.info)} sector ${p.firstSectorId}`);
  const window = plannerOf({ kind: ProofKind.WINDOW_POST_PARTITION, name: 'window-post', defaultPriority: Priority.HIGH }, (req, ctx) => plan(req, ctx, 'window'), work, (p) => `${postProofName(p.info)} partition ${p.partitionIndex} (${p.sectors} sectors)`);
  return { winning, window, planners: [winning, window], circuits, paramsSource };
}

/** A WindowPoSt partition of at least this many sectors is planned in pieces, on several synthesis workers at once. */
export const POST_PIECE_MIN_SECTORS = 256;

/** How many pieces a request of `sectors` vanilla proofs is planned in on `workers` free workers: a WindowPoSt of
 *  POST_PIECE_MIN_SECTORS or more in one per worker (at least 128 sectors each), anything else whole (1). */
export function postPieces(type: 'winning' | 'window', sectors: number, workers: number): number {
  if (type !== 'window' || sectors < POST_PIECE_MIN_SECTORS) return 1;
  return Math.max(1, Math.min(workers, Math.floor(sectors / 128)));
}

/**
 * The plan of a PoSt request in a synthesis worker (tasks.ts postPlanTask), or, with `pieces` > 1, of a large
 * WindowPoSt in that many pieces of consecutive sectors on as many workers at once (postPlanPiece, joined by
 * joinPoStPieces into the whole's inputs and tape): a 2,349-sector 32 GiB partition's ~2.5 s of checks and tape
 * before its witness become the slowest piece's. Should any piece refuse, the request is planned again whole, so the
 * refusal is the one a whole plan gives (its first fault in the whole's order). The validate span's steps: the wait
 * for a worker, the checks, the tape (of the slowest piece, with the pieces).
 */
export async function planPoStInWorkers(ctx: Pick<PlanContext, 'synthPool' | 'span'>, arg: PoStPlanArg, t0: number, pieces: number): Promise<PoStPlanTaskResult & { ok: true }> {
  const n = arg.elements.length;
  if (pieces < 2 || n < 2) return planInWorker<PoStPlanTaskResult>(ctx, task('postPlanTask', arg), t0);
  const size = Math.ceil(n / pieces);
  const runs: Promise<PoStPieceResult>[] = [];
  for (let first = 0; first < n; first += size) {
    // copies of their own: a piece's message then clones its elements, not the request's whole buffer they view
    const elements = arg.elements.slice(first, first + size).map((e) => e.slice());
    runs.push(ctx.synthPool.run(task('postPlanPiece', { ...arg, elements, first })));
  }
  const got = await Promise.all(runs);
  const ok = got.filter((p): p is PoStPieceResult & { ok: true } => p.ok);
  if (ok.length < got.length) return planInWorker<PoStPlanTaskResult>(ctx, task('postPlanTask', arg), t0);
  const joined = joinPoStPieces(arg.registeredProof, ok);
  const slowest = ok.reduce((a, b) => (b.planMs + (b.tapeMs ?? 0) > a.planMs + (a.tapeMs ?? 0) ? b : a));
  ctx.span?.record('worker_wait', Math.max(0, performance.now() - t0 - slowest.planMs - (slowest.tapeMs ?? 0)));
  ctx.span?.record('checks', slowest.planMs);
  if (slowest.tapeMs !== undefined) ctx.span?.record('tape', slowest.tapeMs);
  return joined;
}

/** A request as the worker planned it: the checked raw elements, the public inputs, the witness tape. */
interface WorkerPlan {
  info: PoStProofInfo;
  elements: Uint8Array[];
  inputs: bigint[];
  tape: Uint8Array | undefined;
  firstSectorId: bigint;
  sectors: number;
  partitionIndex: number;
}
