/**
 * SNAP_DEALS_UPDATE (2, NORMAL, queue 'snap-update'): Curio's fields (FACTS §8): `vanilla_proofs` = one raw bincode
 * `PartitionProof` per partition, in order (16 for 32 GiB), `comm_r_old`, `comm_r_new`, `comm_d_new` (32 B each,
 * little-endian field elements), `registered_proof` (RegisteredUpdateProof 0–4). Every element is parsed (errors
 * name the element, field and offset) and checked as vanilla.rs `verify` does with h = h_default (errors name the
 * partition and challenge); one ProofWork of `partitions` partitions is made, circuit id `snap-<size>`, through the
 * per-partition pipeline; the answer is the partition proofs concatenated (16 × 192 = 3,072 B for 32 GiB).
 * Nothing heavy runs on the event loop (issue 16): the parse and checks run in a synthesis worker (snap-worker.ts
 * snapPlanTask; ~20 s for a 32 GiB update on this 2-core machine), each partition's witness tape is made there too
 * (snapTapeTask), the shape and witness program are recorded in a one-shot worker thread (snap.ts snapShapeTask,
 * its arrays transferred back), the CPU development setup too (snapDevParamsTask).
 * Synthesis: the circuit's witness program on the native backend (one segment per challenge) run on the worker's
 * tape, else the TypeScript generator in the worker pool (snap-worker.ts snapWitness). The engine verifies each
 * partition proof against its public inputs.
 *
 * Parameters: the official file (by the name `officialParamsName` gives: params-names.ts `snapParamsFileName` on
 * branch ops) or `<circuit id>.params` in `[srs] param_cache`; otherwise, only with `[srs] dev_params = true`,
 * INSECURE development parameters (params.ts).
 */
import { snapParamsFileName } from '../filecoin/params-names.js';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork, type ProofRequest, type PlanContext } from '../engine/types.js';
import { FR_BYTES } from '../field/layout.js';
import { snapPublicInputs } from '../filecoin/snap/circuit.js';
import { snapProofByCircuitId, type SnapProofInfo } from '../filecoin/snap/registry.js';
import type { SnapPublic } from '../filecoin/snap/vanilla.js';
import type { AnyParameters } from '../groth16/keys.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { loadCircuitParams, stepsOf } from './params.js';
import type { ProgressFn } from '../util/progress.js';
import { type ParamsSource, witnessRunner } from './porep-c2.js';
import { findOfficialSnapParams, rememberSnapProgram, snapProgramFor, snapWitnessNativeFromTape, type SnapShapeTaskResult } from './snap.js';
import type { SnapPlanArg, SnapPlanTaskResult, SnapWitnessArg } from './snap-worker.js';
import { checkSnapRequest } from './snap-request.js';
import { runOffThread, type OffThreadTask } from '../engine/task-worker.js';
import { rememberQueryIndices } from '../groth16/queries.js';
import { devSetupOnDevice, type ensureDevParamsFile } from '../groth16/setup.js';
import { rememberShapeDigest } from '../r1cs/shape.js';

const SYNTH_MODULE = new URL('./snap-worker.js', import.meta.url).href;
const SHAPE_MODULE = new URL('./snap.js', import.meta.url).href;

export interface SnapKindOptions {
  config: EngineConfig;
  backend: Backend;
  /** Shapes and development parameters (default `[kiln] cache_dir`; the CLI passes its --cache-dir, whose default is the same). */
  cacheDir?: string;
  notice?: (msg: string) => void;
  /** A development setup's progress in percent (the CLI's bar). */
  progress?: ProgressFn;
  /** The official parameter file name of a circuit (default: params-names.ts `snapParamsFileName(info.size)`). */
  officialParamsName?: (info: SnapProofInfo) => string | undefined;
}

export interface SnapKind {
  planner: Planner;
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export function createSnapKind(opts: SnapKindOptions): SnapKind {
  const officialName = (info: SnapProofInfo): string => opts.officialParamsName?.(info) ?? snapParamsFileName(info.size);
  const sources = new Map<string, ParamsSource>();
  const shapes = new Map<string, Promise<CircuitShape>>();
  const shapeCacheDir = opts.cacheDir ?? opts.config.kiln.cache_dir;
  const notice = opts.notice ?? ((): void => undefined);
  const infoOf = (id: string): SnapProofInfo => {
    const info = snapProofByCircuitId(id);
    if (!info) throw new Error(`unknown SnapDeals circuit ${id}`);
    return info;
  };
  const official = (info: SnapProofInfo): string | undefined => findOfficialSnapParams(info, opts.config.srs.param_cache, officialName(info));
  /** Shape compilations and CPU development setups in flight (terminated on close). */
  const tasks = new Set<OffThreadTask<unknown>>();
  const track = <T>(task: OffThreadTask<T>): Promise<T> => {
    tasks.add(task);
    return task.result.finally(() => tasks.delete(task));
  };

  const circuits: CircuitProvider = {
    knows: (id) => snapProofByCircuitId(id) !== undefined,
    insecure: (id) => sources.get(id)?.kind === 'dev',
    async available(id) {
      const info = infoOf(id);
      if (!opts.config.srs.dev_params && official(info) === undefined) {
        const name = officialName(info);
        throw new Error(
          `no parameters for ${id} in ${opts.config.srs.param_cache}: neither ${name ? `the official ${join(opts.config.srs.param_cache, name)} nor ` : ''}${id}.params ` +
            `(or set [srs] dev_params = true for INSECURE development parameters)`,
        );
      }
    },
    shape(id) {
      let s = shapes.get(id);
      if (s === undefined) {
        const info = snapProofByCircuitId(id);
        if (info === undefined) return Promise.reject(new Error(`unknown SnapDeals circuit ${id}`));
        // recorded (or read from the disk cache) once per circuit in a worker thread: seconds to 40 s and 6 GiB
        // (snap-32g) that must not block the event loop; the shape's arrays come back transferred, not copied;
        // concurrent callers share the one promise
        s = track(runOffThread<SnapShapeTaskResult>(SHAPE_MODULE, 'snapShapeTask', { circuitId: id, cacheDir: shapeCacheDir })).then((r) => {
          const { shape, cached, cacheError } = r;
          rememberSnapProgram(shape, r.program);
          rememberQueryIndices(shape, r.queries);
          rememberShapeDigest(shape, r.digest);
          notice(
            `circuit ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux ` +
              `(shape ${cached ? 'cached' : cacheError ? `recorded; ${cacheError}` : 'recorded and cached'})`,
          );
          return shape;
        });
        shapes.set(id, s);
        s.catch(() => shapes.delete(id));
      }
      return s;
    },
    async params(id, span, device = opts.backend): Promise<AnyParameters> {
      const shape = await circuits.shape(id);
      const devDir = join(shapeCacheDir, 'dev-params');
      return loadCircuitParams({
        id,
        shape,
        officialFile: official(infoOf(id)),
        config: opts.config,
        backend: device,
        devDir,
        notice,
        span,
        checkAvailable: () => circuits.available!(id),
        onSource: (s) => void sources.set(id, s),
        officialName: officialName(infoOf(id)),
        progress: opts.progress,
        // the CPU setup runs in a worker thread (it would hold the event loop for as long as it takes)
        makeDevParams:
          !devSetupOnDevice(device) && (device.name === 'native' || device.name === 'reference')
            ? (onStep) =>
                track(
                  runOffThread<Awaited<ReturnType<typeof ensureDevParamsFile>>>(
                    SHAPE_MODULE,
                    'snapDevParamsTask',
                    { circuitId: id, cacheDir: shapeCacheDir, devDir, backend: device.name },
                    stepsOf(onStep),
                  ),
                )
            : undefined,
      });
    },
    async close() {
      await Promise.all([...tasks].map((t) => t.terminate()));
    },
  };

  const runner = witnessRunner();
  /** The request checked in a synthesis worker (snap-worker.ts snapPlanTask); only the verdict comes back. */
  const plan = async (req: ProofRequest, ctx: PlanContext): Promise<WorkerPlan> => {
    const t0 = performance.now();
    const { info, h, pub, elements } = checkSnapRequest(req);
    // parameters first (as PreloadSRS): a circuit without them fails now, not after its partition proofs are checked
    await circuits.available!(info.circuitId);
    const arg: SnapPlanArg = { registeredProof: info.id, elements, h, pub };
    const r = await ctx.synthPool.run<SnapPlanTaskResult>({ module: SYNTH_MODULE, fn: 'snapPlanTask', arg });
    if (!r.ok) throw new PlanError(r.error);
    ctx.span?.record('worker_wait', Math.max(0, performance.now() - t0 - r.planMs));
    ctx.span?.record('checks', r.planMs);
    return { info, h, pub, elements };
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
        const check = (got: bigint[]): void => {
          const bad = want.findIndex((x, i) => got[i] !== x);
          if (got.length !== want.length || bad >= 0) throw new Error(`partition ${k}: the circuit's public inputs differ from the expected ones (index ${bad < 0 ? got.length : bad})`);
        };
        if (runner !== undefined) {
          // the partition's tape is made in a synthesis worker (parse + Montgomery encoding); here only the
          // native program runs
          const t0 = performance.now();
          const tapeArg: Omit<SnapWitnessArg, 'numInputs'> = { registeredProof: info.id, k, h: plan.h, pub: plan.pub, element };
          const [t, shape] = await Promise.all([
            ctx.synthPool.run<{ tape: Uint8Array; ms: number }>({ module: SYNTH_MODULE, fn: 'snapTapeTask', arg: tapeArg }, { rank: [k] }),
            circuits.shape(info.circuitId),
          ]);
          span.record('worker_wait', Math.max(0, performance.now() - t0 - t.ms));
          span.record('tape', t.ms);
          const program = snapProgramFor(info, shape, shapeCacheDir);
          // (a new pinned buffer costs seconds at 32 GiB: span `buffer`)
          const out = await span.time('buffer', () => ctx.buffers.take((shape.numInputs + shape.numAux) * FR_BYTES));
          let held: Uint8Array | undefined = out;
          const giveBack = (): void => {
            if (held) ctx.buffers.give(held);
            held = undefined;
          };
          try {
            const w = await snapWitnessNativeFromTape(runner, program, t.tape, out);
            span.record('witness', w.runMs);
            check(w.inputs);
            return { assignment: w.assignment, inputs: want, release: giveBack };
          } catch (e) {
            giveBack();
            throw e;
          }
        }
        const arg: SnapWitnessArg = { registeredProof: info.id, k, h: plan.h, pub: plan.pub, element, numInputs: want.length + 1 };
        const t0 = performance.now();
        const r = await ctx.synthPool.run<{ assignment: Uint8Array; inputs: bigint[]; ms: number }>({ module: SYNTH_MODULE, fn: 'snapWitness', arg }, { rank: [k] });
        span.record('worker_wait', Math.max(0, performance.now() - t0 - r.ms));
        span.record('witness', r.ms);
        check(r.inputs);
        return { assignment: r.assignment, inputs: want };
      },
      dispose() {
        elements = undefined;
      },
    };
  };

  const planner: Planner = {
    kind: ProofKind.SNAP_DEALS_UPDATE,
    name: 'snap-update',
    defaultPriority: Priority.NORMAL,
    async plan(req, ctx) {
      const p = await plan(req, ctx);
      const info = p.info;
      return work(p, ctx, `${info.name} update (${info.params.partitionCount} partition${info.params.partitionCount > 1 ? 's' : ''})${req.sectorNumber ? ` sector ${req.sectorNumber}` : ''}${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
  return { planner, circuits, paramsSource: (id) => sources.get(id) };
}

/** A request as the worker checked it: its raw elements (parsed again per partition in a worker) and public values. */
interface WorkerPlan {
  info: SnapProofInfo;
  h: number;
  pub: SnapPublic;
  elements: Uint8Array[];
}
