/**
 * WINNING_POST (4, CRITICAL, queue 'winning-post') and WINDOW_POST_PARTITION (3, HIGH, queue 'window-post'):
 * Curio's fields (FACTS §8): `vanilla_proofs` (raw bincode `FallbackPoStSectorProof`s: one for WinningPoSt, one per
 * sector of the partition for WindowPoSt), `randomness` (32 B, a canonical field element: Curio masks [31] &= 0x3f),
 * `partition_index`, `miner_id`, `registered_proof` (RegisteredPoStProof 0–14). Every element is parsed (errors
 * name the element, field and offset), every challenged leaf is checked against the challenge the randomness
 * derives (errors name the sector and challenge), and one ProofWork of one partition is made: circuit id
 * `winning-<size>` / `wpost-<size>`. Nothing heavy runs on the event loop (issue 16): the parse, the checks, the
 * public inputs and the witness tape are made in a synthesis worker (post-worker.ts postPlanTask; ~2 s for a
 * 2,349-sector 32 GiB WindowPoSt), the shape and witness program are recorded in a one-shot worker thread
 * (post.ts postShapeTask, its arrays transferred back), the CPU development setup too (postDevParamsTask).
 * Synthesis: the circuit's witness program on the native backend run on the worker's tape (one sector = one
 * segment, run in parallel), else the TypeScript generator in the worker pool (post-worker.ts postWitness). The
 * engine verifies the proof against `postPublicInputs` before it returns it.
 *
 * Parameters: the official file by its name (`postParamsFileName`, e.g.
 * v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-<sha256>.params) or `<circuit id>.params` in
 * `[srs] param_cache`; otherwise, only with `[srs] dev_params = true`, INSECURE development parameters
 * (params.ts, exactly as PoRep: `<[kiln] cache_dir>/dev-params/`).
 */
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork, type ProofRequest, type PlanContext } from '../engine/types.js';
import { FR_BYTES } from '../field/layout.js';
import { postCircuitId, postParamsFileName, postProofByCircuitId, postProofName } from '../filecoin/post/registry.js';
import type { PoStProofInfo } from '../filecoin/post/types.js';
import type { AnyParameters } from '../groth16/keys.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { loadCircuitParams, stepsOf } from './params.js';
import type { ProgressFn } from '../util/progress.js';
import { type ParamsSource, witnessRunner } from './porep-c2.js';
import { findOfficialPoStParams, postProgramFor, postShapeCacheDir, postWitnessNativeFromTape, type PostShapeTaskResult, rememberPostProgram } from './post.js';
import type { PoStPlanArg, PoStPlanTaskResult, PoStWitnessArg } from './post-worker.js';
import { checkPoStRequest } from './post-request.js';
import { runOffThread, type OffThreadTask } from '../engine/task-worker.js';
import { rememberQueryIndices } from '../groth16/queries.js';
import { devSetupOnDevice, type ensureDevParamsFile } from '../groth16/setup.js';
import { rememberShapeDigest } from '../r1cs/shape.js';

const SYNTH_MODULE = new URL('./post-worker.js', import.meta.url).href;
const SHAPE_MODULE = new URL('./post.js', import.meta.url).href;

export interface PoStKindOptions {
  config: EngineConfig;
  backend: Backend;
  /** Shapes and development parameters (default `[kiln] cache_dir`; the CLI passes its --cache-dir, whose default is the same). */
  cacheDir?: string;
  notice?: (msg: string) => void;
  /** A development setup's progress in percent (the CLI's bar). */
  progress?: ProgressFn;
}

export interface PoStKind {
  winning: Planner;
  window: Planner;
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export function createPoStKind(opts: PoStKindOptions): PoStKind {
  const sources = new Map<string, ParamsSource>();
  const shapes = new Map<string, Promise<CircuitShape>>();
  const shapeCacheDir = opts.cacheDir ?? opts.config.kiln.cache_dir;
  const notice = opts.notice ?? ((): void => undefined);
  const infoOf = (id: string): PoStProofInfo => {
    const info = postProofByCircuitId(id);
    if (!info) throw new Error(`unknown PoSt circuit ${id}`);
    return info;
  };
  /** Shape compilations and CPU development setups in flight (terminated on close). */
  const tasks = new Set<OffThreadTask<unknown>>();
  const track = <T>(task: OffThreadTask<T>): Promise<T> => {
    tasks.add(task);
    return task.result.finally(() => tasks.delete(task));
  };

  const circuits: CircuitProvider = {
    knows: (id) => postProofByCircuitId(id) !== undefined,
    insecure: (id) => sources.get(id)?.kind === 'dev',
    // a WinningPoSt answers within seconds or the block is lost: its parameters stay whatever else is evicted
    keepResident: (id) => postProofByCircuitId(id)?.type === 'winning',
    async available(id) {
      const info = infoOf(id);
      if (!opts.config.srs.dev_params && findOfficialPoStParams(info, opts.config.srs.param_cache) === undefined) {
        throw new Error(
          `no parameters for ${id} in ${opts.config.srs.param_cache}: neither the official ${join(opts.config.srs.param_cache, postParamsFileName(info))} ` +
            `nor ${id}.params (or set [srs] dev_params = true for INSECURE development parameters)`,
        );
      }
    },
    shape(id) {
      let s = shapes.get(id);
      if (s === undefined) {
        const info = postProofByCircuitId(id);
        if (info === undefined) return Promise.reject(new Error(`unknown PoSt circuit ${id}`));
        // recorded (or read from the disk cache) once per circuit in a worker thread: seconds to half a minute
        // and gigabytes that must not block the event loop; the shape's arrays come back transferred, not
        // copied; concurrent callers share the one promise
        const cacheDir = postShapeCacheDir(shapeCacheDir);
        // without a shape cache, development parameters are named by a digest hashed now, in the worker
        const digest = cacheDir === undefined && opts.config.srs.dev_params && findOfficialPoStParams(info, opts.config.srs.param_cache) === undefined;
        s = track(runOffThread<PostShapeTaskResult>(SHAPE_MODULE, 'postShapeTask', { circuitId: id, cacheDir, digest })).then((r) => {
          const { shape, cached, cacheError } = r;
          rememberPostProgram(shape, r.program);
          rememberQueryIndices(shape, r.queries);
          if (r.digest !== undefined) rememberShapeDigest(shape, r.digest);
          notice(
            `circuit ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux ` +
              `(shape ${cached ? 'cached' : cacheError ? `recorded; ${cacheError}` : cacheDir ? 'recorded and cached' : 'recorded, not cached: KILN_POST_SHAPE_CACHE=0'})`,
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
        officialFile: findOfficialPoStParams(infoOf(id), opts.config.srs.param_cache),
        config: opts.config,
        backend: device,
        devDir,
        notice,
        span,
        checkAvailable: () => circuits.available!(id),
        onSource: (s) => void sources.set(id, s),
        officialName: postParamsFileName(infoOf(id)),
        progress: opts.progress,
        // the CPU setup runs in a worker thread (it would hold the event loop for as long as it takes)
        makeDevParams:
          !devSetupOnDevice(device) && (device.name === 'native' || device.name === 'reference')
            ? (onStep) =>
                track(
                  runOffThread<Awaited<ReturnType<typeof ensureDevParamsFile>>>(
                    SHAPE_MODULE,
                    'postDevParamsTask',
                    { circuitId: id, cacheDir: postShapeCacheDir(shapeCacheDir), devDir, backend: device.name },
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
  /** The request checked and planned in a synthesis worker (post-worker.ts postPlanTask). */
  const plan = async (req: ProofRequest, ctx: PlanContext, type: 'winning' | 'window'): Promise<WorkerPlan> => {
    const t0 = performance.now();
    const { info, elements } = checkPoStRequest(req, type);
    // parameters first (as PreloadSRS): a circuit without them fails now, not after its vanilla proofs are checked
    await circuits.available!(postCircuitId(info));
    const arg: PoStPlanArg = { registeredProof: info.id, elements, randomness: req.randomness, partitionIndex: req.partitionIndex, tape: runner !== undefined };
    const r = await ctx.synthPool.run<PoStPlanTaskResult>({ module: SYNTH_MODULE, fn: 'postPlanTask', arg });
    if (!r.ok) throw new PlanError(r.error);
    // the validate span's steps: the request's fields and the wait for a worker, the checks and public inputs, the tape
    ctx.span?.record('worker_wait', Math.max(0, performance.now() - t0 - r.planMs - r.tapeMs));
    ctx.span?.record('checks', r.planMs);
    if (r.tape !== undefined) ctx.span?.record('tape', r.tapeMs);
    return { info, elements, inputs: r.inputs, tape: r.tape, tapeMs: r.tapeMs, firstSectorId: r.firstSectorId, sectors: r.sectors, partitionIndex: req.partitionIndex };
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
        const check = (got: bigint[]): void => {
          const bad = want.findIndex((x, i) => got[i] !== x);
          if (got.length !== want.length || bad >= 0) throw new Error(`the circuit's public inputs differ from postPublicInputs (index ${bad < 0 ? got.length : bad})`);
        };
        if (runner !== undefined && held.tape !== undefined) {
          // the tape was made with the plan, in the worker: here only the native program runs
          const shape = await circuits.shape(circuitId);
          const program = postProgramFor(info, shape, postShapeCacheDir(shapeCacheDir));
          // (a new pinned buffer costs seconds at 32 GiB: span `buffer`)
          const out = await span.time('buffer', () => ctx.buffers.take((shape.numInputs + shape.numAux) * FR_BYTES));
          let buf: Uint8Array | undefined = out;
          const giveBack = (): void => {
            if (buf) ctx.buffers.give(buf);
            buf = undefined;
          };
          try {
            // (its tape was made with the plan: the validate span's `tape`, not this span's)
            const tape = held.tape;
            const w = await span.time('witness', () => postWitnessNativeFromTape(runner, program, tape, out));
            check(w.inputs);
            return { assignment: w.assignment, inputs: want, release: giveBack };
          } catch (e) {
            giveBack();
            throw e;
          }
        }
        const arg: PoStWitnessArg = { registeredProof: info.id, elements: held.elements, numInputs: want.length + 1 };
        const t0 = performance.now();
        const r = await ctx.synthPool.run<{ assignment: Uint8Array; inputs: bigint[]; ms: number }>({ module: SYNTH_MODULE, fn: 'postWitness', arg });
        span.record('worker_wait', Math.max(0, performance.now() - t0 - r.ms));
        span.record('witness', r.ms);
        check(r.inputs);
        return { assignment: r.assignment, inputs: want };
      },
      dispose() {
        held = undefined;
      },
    };
  };

  const winning: Planner = {
    kind: ProofKind.WINNING_POST,
    name: 'winning-post',
    defaultPriority: Priority.CRITICAL,
    warm(ctx) {
      // WinningPoSt's latency: the first request finds the planning module loaded in a synthesis worker
      ctx.synthPool.run({ module: SYNTH_MODULE, fn: 'postWarm', arg: undefined }).catch(() => undefined);
    },
    async plan(req, ctx) {
      const p = await plan(req, ctx, 'winning');
      return work(p, ctx, `${postProofName(p.info)} sector ${p.firstSectorId}${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
  const window: Planner = {
    kind: ProofKind.WINDOW_POST_PARTITION,
    name: 'window-post',
    defaultPriority: Priority.HIGH,
    async plan(req, ctx) {
      const p = await plan(req, ctx, 'window');
      return work(p, ctx, `${postProofName(p.info)} partition ${p.partitionIndex} (${p.sectors} sectors)${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
  return { winning, window, circuits, paramsSource: (id) => sources.get(id) };
}

/** A request as the worker planned it: the checked raw elements, the public inputs, the witness tape. */
interface WorkerPlan {
  info: PoStProofInfo;
  elements: Uint8Array[];
  inputs: bigint[];
  tape: Uint8Array | undefined;
  tapeMs?: number;
  firstSectorId: bigint;
  sectors: number;
  partitionIndex: number;
}
