/**
 * SNAP_DEALS_UPDATE (2, NORMAL, queue 'snap-update'): Curio's fields (docs/filecoin.md §8): `vanilla_proofs` = one raw bincode
 * `PartitionProof` per partition, in order (16 for 32 GiB), `comm_r_old`, `comm_r_new`, `comm_d_new` (32 B each,
 * little-endian field elements), `registered_proof` (RegisteredUpdateProof 0–4). Every element is parsed (errors
 * name the element, field and offset) and checked as vanilla.rs `verify` does with h = h_default (errors name the
 * partition and challenge); one ProofWork of `partitions` partitions is made, circuit id `snap-<size>`, through the
 * per-partition pipeline; the answer is the partition proofs concatenated (16 × 192 = 3,072 B for 32 GiB).
 * Nothing heavy runs on the event loop, so that the daemon keeps answering: the parse and checks run in a
 * synthesis worker (tasks.ts snapPlanTask; ~20 s for a 32 GiB update on this 2-core machine), each partition's
 * witness tape is made there too (snapTapeTask), the shape and witness program are recorded in a one-shot worker
 * thread (snap.ts snapShapeTask, its arrays transferred back), the CPU development setup too (snapDevParamsTask).
 * Synthesis: the circuit's witness program on the native backend (one segment per challenge) run on the worker's
 * tape, else the TypeScript generator in the worker pool (tasks.ts snapWitness). The engine verifies each
 * partition proof against its public inputs.
 *
 * Parameters: the official file (by the name `officialParamsName` gives: params-names.ts `snapParamsFileName`) or
 * `<circuit id>.params` in `[srs] param_cache`; otherwise, only with `[srs] dev_params = true`,
 * INSECURE development parameters (params.ts).
 */
import { taskName, workerTasks } from '../../engine/synth-pool.js';
import { Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork, type ProofRequest, type PlanContext } from '../../engine/types.js';
import { snapParamsFileName } from '../../filecoin/params-names.js';
import { snapPublicInputs } from '../../filecoin/snap/circuit.js';
import { snapProofByCircuitId, type SnapProofInfo } from '../../filecoin/snap/registry.js';
import type { SnapPublic } from '../../filecoin/snap/vanilla.js';
import { checkInputs, createKindCircuits, type KindOptions, nativeWitness, planInWorker, plannerOf, workerWitness } from '../kind.js';
import type { ParamsSource } from '../params.js';
import { snapParamsNames } from './snap.js';
import { witnessFromTape } from '../../r1cs/circuit-program.js';
import type { SnapPlanArg, SnapPlanTaskResult, SnapWitnessArg } from './tasks.js';
import { checkSnapRequest } from './request.js';
import { witnessRunner } from '../witness.js';

type ShapeModule = typeof import('./snap.js');
const task = workerTasks<typeof import('./tasks.js')>(new URL('./tasks.js', import.meta.url).href);
const SHAPE_MODULE = new URL('./snap.js', import.meta.url).href;

export interface SnapKindOptions extends KindOptions {
  /** The official parameter file name of a circuit (default: params-names.ts `snapParamsFileName(info.size)`). */
  officialParamsName?: (info: SnapProofInfo) => string | undefined;
}

export interface SnapKind {
  planner: Planner;
  /** The one planner, as a list (as every kind has). */
  planners: Planner[];
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export function createSnapKind(opts: SnapKindOptions): SnapKind {
  const officialName = (info: SnapProofInfo): string => opts.officialParamsName?.(info) ?? snapParamsFileName(info.size);
  const { circuits, paramsSource } = createKindCircuits<SnapProofInfo>(
    {
      name: 'SnapDeals',
      infoOf: snapProofByCircuitId,
      tasks: { module: SHAPE_MODULE, shape: taskName<ShapeModule>('snapShapeTask'), devParams: taskName<ShapeModule>('snapDevParamsTask') },
      paramsNames: (_id, info) => snapParamsNames(info, officialName(info)),
    },
    opts,
  );

  const runner = witnessRunner(opts.tuning?.witness);
  /** The request checked in a synthesis worker (tasks.ts snapPlanTask); only the verdict comes back. */
  const plan = async (req: ProofRequest, ctx: PlanContext): Promise<WorkerPlan> => {
    const t0 = performance.now();
    const { info, h, pub, elements } = checkSnapRequest(req);
    // parameters first (as PreloadSRS): a circuit without them fails now, not after its partition proofs are checked
    await circuits.available!(info.circuitId);
    const arg: SnapPlanArg = { registeredProof: info.id, elements, h, pub };
    await planInWorker<SnapPlanTaskResult>(ctx, task('snapPlanTask', arg), t0);
    return { info, h, pub, elements, sectorNumber: req.sectorNumber };
  };
  const work = (plan: WorkerPlan, ctx: PlanContext, describe: string): ProofWork => {
    const { info } = plan;
    let elements: Uint8Array[] | undefined = plan.elements;
    return {
      circuitId: info.circuitId,
      partitions: info.params.partitionCount,
      describe,
      async synthesize(k, span) {
        if (elements === undefined) throw new Error('job disposed');
        const element = elements[k]!;
        const want = snapPublicInputs(info.params, k, plan.h, plan.pub.commROld, plan.pub.commDNew, plan.pub.commRNew);
        const check = (got: bigint[]): void => checkInputs(want, got, `partition ${k}: the circuit's public inputs differ from the expected ones`);
        if (runner !== undefined) {
          // the partition's tape is made in a synthesis worker (parse + Montgomery encoding); here only the
          // native program runs
          const t0 = performance.now();
          const tapeArg: Omit<SnapWitnessArg, 'numInputs'> = { registeredProof: info.id, k, h: plan.h, pub: plan.pub, element };
          const [t, { shape, program }] = await Promise.all([
            ctx.synthPool.run(task('snapTapeTask', tapeArg), { rank: [k] }),
            circuits.compiled(info.circuitId),
          ]);
          span.record('worker_wait', Math.max(0, performance.now() - t0 - t.ms));
          span.record('tape', t.ms);
          const run = async (out: Uint8Array): Promise<{ assignment: Uint8Array; inputs: bigint[] }> => {
            const w = await witnessFromTape(runner, program, t.tape, out);
            span.record('witness', w.runMs);
            return w;
          };
          return nativeWitness(ctx, span, shape, want, run, check, [k]);
        }
        const arg: SnapWitnessArg = { registeredProof: info.id, k, h: plan.h, pub: plan.pub, element, numInputs: want.length + 1 };
        return workerWitness(ctx, span, task('snapWitness', arg), want, check, { rank: [k] });
      },
      dispose() {
        elements = undefined;
      },
    };
  };

  const planner = plannerOf({ kind: ProofKind.SNAP_DEALS_UPDATE, name: 'snap-update', defaultPriority: Priority.NORMAL }, plan, work, (p) => {
    const n = p.info.params.partitionCount;
    return `${p.info.name} update (${n} partition${n > 1 ? 's' : ''})${p.sectorNumber ? ` sector ${p.sectorNumber}` : ''}`;
  });
  return { planner, planners: [planner], circuits, paramsSource };
}

/** A request as the worker checked it: its raw elements (parsed again per partition in a worker) and public values. */
interface WorkerPlan {
  info: SnapProofInfo;
  h: number;
  pub: SnapPublic;
  elements: Uint8Array[];
  /** The request's sector number, for the job's description. */
  sectorNumber: ProofRequest['sectorNumber'];
}
