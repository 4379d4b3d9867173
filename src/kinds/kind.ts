/**
 * What every proof kind shares on the event loop, written once over a small description of the kind
 * (KindCircuitsSpec): the circuit provider (a shape recorded or read from the cache once per circuit in a
 * one-shot worker thread, parameters found or made as params.ts says, the CPU development setup in a worker
 * thread, all of it stopped on close), the plan task run in a synthesis worker, and a partition's witness, native
 * into a pooled buffer or TypeScript in a synthesis worker. A kind (porep/, post/, snap/) keeps what differs: its
 * request checks, its circuit and witness program, its public inputs, its parameter file names.
 */
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import type { SynthRunOptions, SynthTask } from '../engine/synth-pool.js';
import { runOffThread, type OffThreadTask } from '../engine/task-worker.js';
import { PlanError, type CircuitProvider, type PartitionWitness, type PlanContext, type Planner, type ProofRequest, type ProofWork } from '../engine/types.js';
import { FR_BYTES } from '../field/layout.js';
import type { AnyParameters } from '../groth16/keys.js';
import type { CompiledCircuit } from '../groth16/compiled.js';
import { devSetupOnDevice, type ensureDevParamsFile } from '../groth16/setup.js';
import type { CircuitShape } from '../r1cs/cs.js';
import type { ProgressFn } from '../util/progress.js';
import type { Span } from '../util/timing.js';
import type { Tuning } from '../util/tuning.js';
import { firstParamsFile, loadCircuitParams, missingParamsMessage, type ParamsSource, stepsOf } from './params.js';
import { compiledFromTask, type ShapeTaskResult } from './shape-cache.js';

/** What a kind's constructor takes (createPorepKind, createPoStKind, createSnapKind). */
export interface KindOptions {
  config: EngineConfig;
  backend: Backend;
  /** Shapes and development parameters (default `[kiln] cache_dir`; the CLI passes its --cache-dir, whose default is the same). */
  cacheDir?: string;
  /** Lines worth telling a person (which parameters, a long generation starting); default none. */
  notice?: (msg: string) => void;
  /** A development setup's progress in percent (the CLI's bar). */
  progress?: ProgressFn;
  /** What the edge read from the environment (src/util/tuning.ts): the kinds use `witness` (the witness path)
   *  and PoSt `postShapeCache`; default: none (native witnesses when the CPU addon loads, shapes cached). */
  tuning?: Tuning;
}

/** What the generic circuit provider needs to know of a kind. */
export interface KindCircuitsSpec<Info> {
  /** The kind's name in errors ("unknown PoSt circuit …"). */
  name: string;
  /** The kind's registered proof of a circuit id; undefined for an id it does not serve. */
  infoOf(circuitId: string): Info | undefined;
  /** The module (file: URL) exporting the kind's one-shot worker tasks, and their names: the shape task takes
   *  `{circuitId, cacheDir, …shapeTaskArg}` and returns a ShapeTaskResult, the development setup task takes
   *  `{circuitId, cacheDir, devDir, backend}` (cacheDir: shapeCacheDir). */
  tasks: { module: string; shape: string; devParams: string };
  /** The shape cache the tasks use, from the provider's cache directory (default: the same; undefined: none). */
  shapeCacheDir?(cacheDir: string): string | undefined;
  /** Why shapes are not cached when shapeCacheDir gave none (said in the notice). */
  uncachedReason?: string;
  /** More fields of the shape task's argument. */
  shapeTaskArg?(circuitId: string, info: Info, shapeCacheDir: string | undefined): Record<string, unknown>;
  /** The file names of the circuit's official parameters in the parameter cache, in the order they are looked for
   *  (the official v28 name first: params.ts firstParamsFile). */
  paramsNames(circuitId: string, info: Info): readonly string[];
  /** A last look when none is there by name (`shape`: the circuit's shape, compiled only when asked for), and what
   *  it looks for (said in the refusal). A file it finds is remembered. */
  otherParams?: {
    find(circuitId: string, info: Info, paramsDir: string, shape: () => Promise<CircuitShape>): Promise<string | undefined>;
    words: string;
  };
  keepResident?(circuitId: string): boolean;
}

export interface KindCircuits<Info> {
  circuits: CircuitProvider;
  /** Where the parameters of a circuit id were loaded from (once loaded). */
  paramsSource(circuitId: string): ParamsSource | undefined;
  /** The kind's registered proof of a circuit id (throws naming an unknown one). */
  infoOf(circuitId: string): Info;
  /** The provider's cache directory (shapes, dev-params). */
  cacheDir: string;
  notice: (msg: string) => void;
}

/** The circuit provider of a kind. */
export function createKindCircuits<Info>(spec: KindCircuitsSpec<Info>, opts: KindOptions): KindCircuits<Info> {
  const sources = new Map<string, ParamsSource>();
  const compiled = new Map<string, Promise<CompiledCircuit>>();
  const cacheDir = opts.cacheDir ?? opts.config.kiln.cache_dir;
  const shapeCacheDir = spec.shapeCacheDir ? spec.shapeCacheDir(cacheDir) : cacheDir;
  const devDir = join(cacheDir, 'dev-params');
  const notice = opts.notice ?? ((): void => undefined);
  const infoOf = (id: string): Info => {
    const info = spec.infoOf(id);
    if (info === undefined) throw new Error(`unknown ${spec.name} circuit ${id}`);
    return info;
  };
  // official parameters: by name, looked up again while not found (a file placed later is seen), then otherParams
  const paramCache = opts.config.srs.param_cache;
  const found = new Map<string, string>();
  const officialFile = async (id: string): Promise<string | undefined> => {
    const info = infoOf(id);
    const byName = firstParamsFile(paramCache, spec.paramsNames(id, info));
    if (byName !== undefined || spec.otherParams === undefined) return byName;
    if (!found.has(id)) {
      const f = await spec.otherParams.find(id, info, paramCache, async () => (await circuits.compiled(id)).shape);
      if (f !== undefined) found.set(id, f);
    }
    return found.get(id);
  };
  const missingParams = (id: string): string => missingParamsMessage(id, paramCache, spec.paramsNames(id, infoOf(id)), spec.otherParams?.words);
  /** Shape compilations and CPU development setups in flight (terminated on close). */
  const tasks = new Set<OffThreadTask<unknown>>();
  const track = <T>(task: OffThreadTask<T>): Promise<T> => {
    tasks.add(task);
    return task.result.finally(() => tasks.delete(task));
  };

  const circuits: CircuitProvider = {
    knows: (id) => spec.infoOf(id) !== undefined,
    insecure: (id) => sources.get(id)?.kind === 'dev',
    ...(spec.keepResident ? { keepResident: spec.keepResident } : {}),
    async available(id) {
      if (!opts.config.srs.dev_params && (await officialFile(id)) === undefined) throw new Error(missingParams(id));
    },
    compiled(id) {
      let s = compiled.get(id);
      if (s === undefined) {
        const info = spec.infoOf(id);
        if (info === undefined) return Promise.reject(new Error(`unknown ${spec.name} circuit ${id}`));
        // recorded (or read from the disk cache) once per circuit in a worker thread: seconds to minutes and
        // gigabytes that must not block the event loop; the shape's arrays come back transferred, not copied;
        // concurrent callers share the one promise
        const arg = { circuitId: id, cacheDir: shapeCacheDir, ...spec.shapeTaskArg?.(id, info, shapeCacheDir) };
        s = track(runOffThread<ShapeTaskResult>(spec.tasks.module, spec.tasks.shape, arg)).then((r) => {
          const { shape, cached, cacheError } = r;
          const recorded = shapeCacheDir !== undefined ? 'recorded and cached' : `recorded, not cached${spec.uncachedReason ? `: ${spec.uncachedReason}` : ''}`;
          notice(
            `circuit ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux ` +
              `(shape ${cached ? 'cached' : cacheError ? `recorded; ${cacheError}` : recorded})`,
          );
          return compiledFromTask(r);
        });
        compiled.set(id, s);
        s.catch(() => compiled.delete(id));
      }
      return s;
    },
    async params(id, span, device = opts.backend): Promise<AnyParameters> {
      return loadCircuitParams({
        id,
        circuit: await circuits.compiled(id),
        officialFile: await officialFile(id),
        config: opts.config,
        backend: device,
        devDir,
        notice,
        span,
        checkAvailable: () => circuits.available!(id),
        onSource: (s) => void sources.set(id, s),
        officialName: join(paramCache, spec.paramsNames(id, infoOf(id))[0]!),
        progress: opts.progress,
        // the CPU setup runs in a worker thread (it would hold the event loop for as long as it takes)
        makeDevParams:
          !devSetupOnDevice(device) && (device.name === 'native' || device.name === 'reference')
            ? (onStep) =>
                track(
                  runOffThread<Awaited<ReturnType<typeof ensureDevParamsFile>>>(
                    spec.tasks.module,
                    spec.tasks.devParams,
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
  return { circuits, paramsSource: (id) => sources.get(id), infoOf, cacheDir, notice };
}

/** What a kind's plan task (run in a synthesis worker) sends back: its refusal, or its result with the time of
 *  its checks and (when it made one) of the witness tape. */
export type PlanTaskResult<R> = ({ ok: true; planMs: number; tapeMs?: number } & R) | { ok: false; error: string };

/**
 * Runs a kind's plan task in a synthesis worker (the parse and checks of a request's vanilla proofs: seconds at
 * 32 GiB, not on the event loop). Its refusal becomes the job's PlanError; the validate span gets the steps: the
 * wait for a worker (counted from `t0`, when the request's fields were first looked at), the checks, the tape.
 */
export async function planInWorker<R>(ctx: Pick<PlanContext, 'synthPool' | 'span'>, task: SynthTask, t0: number): Promise<PlanTaskResult<R> & { ok: true }> {
  const r = await ctx.synthPool.run<PlanTaskResult<R>>(task);
  if (!r.ok) throw new PlanError(r.error);
  ctx.span?.record('worker_wait', Math.max(0, performance.now() - t0 - r.planMs - (r.tapeMs ?? 0)));
  ctx.span?.record('checks', r.planMs);
  if (r.tapeMs !== undefined) ctx.span?.record('tape', r.tapeMs);
  return r;
}

/** Throws `differ (index i)` when the circuit's public inputs are not the ones the proof must verify against. */
export function checkInputs(want: readonly bigint[], got: readonly bigint[], differ: string): void {
  const bad = want.findIndex((x, i) => got[i] !== x);
  if (got.length !== want.length || bad >= 0) throw new Error(`${differ} (index ${bad < 0 ? got.length : bad})`);
}

/**
 * A partition's witness computed natively straight into a pooled buffer of the backend's (pinned on the GPU: fast
 * uploads; a new one costs seconds at 32 GiB: span `buffer`) by `run`, which records its own span steps. The buffer
 * goes back when the witness fails, else by the result's release. `want`: the public inputs the proof must verify
 * against, checked by `check` against the circuit's.
 */
export async function nativeWitness(
  ctx: PlanContext,
  span: Span,
  shape: CircuitShape,
  want: bigint[],
  run: (out: Uint8Array) => Promise<{ assignment: Uint8Array; inputs: bigint[] }>,
  check?: (got: bigint[]) => void,
  rank?: readonly number[],
): Promise<PartitionWitness> {
  const out = await span.time('buffer', () => ctx.buffers.take((shape.numInputs + shape.numAux) * FR_BYTES));
  // a large circuit's witness takes every core: one at a time, in the jobs' order (span witness_wait)
  const turn = ctx.witnessTurn !== undefined && shape.numConstraints >= WITNESS_TURN_CONSTRAINTS ? ctx.witnessTurn : undefined;
  let release: (() => void) | undefined;
  let held: Uint8Array | undefined = out;
  const giveBack = (): void => {
    if (held) ctx.buffers.give(held);
    held = undefined;
  };
  try {
    if (turn !== undefined) release = await span.time('witness_wait', () => turn(rank));
    const w = await run(out);
    check?.(w.inputs);
    return { assignment: w.assignment, inputs: want, release: giveBack };
  } catch (e) {
    giveBack();
    throw e;
  } finally {
    release?.();
  }
}

/** From this many constraints a native witness waits for its turn (PlanContext.witnessTurn): the 32 GiB circuits
 *  (81–130 M), not the small sizes' (2 KiB PoRep: 2.7 M; WinningPoSt 32 GiB: 0.37 M), whose witnesses use few cores. */
export const WITNESS_TURN_CONSTRAINTS = 2 ** 24;

/** A partition's witness by the TypeScript generator in a synthesis worker (the span's steps: the wait for a
 *  worker, the witness); its public inputs checked by `check`. */
export async function workerWitness(ctx: PlanContext, span: Span, task: SynthTask, want: bigint[], check: (got: bigint[]) => void, opts?: SynthRunOptions): Promise<PartitionWitness> {
  const t0 = performance.now();
  const r = await ctx.synthPool.run<{ assignment: Uint8Array; inputs: bigint[]; ms: number }>(task, opts);
  span.record('worker_wait', Math.max(0, performance.now() - t0 - r.ms));
  span.record('witness', r.ms);
  check(r.inputs);
  return { assignment: r.assignment, inputs: want };
}

/**
 * A kind's planner: the request planned (its checks in a synthesis worker), then its work, described as
 * `describe` says and, when the request names one, by its miner.
 */
export function plannerOf<P>(
  head: Pick<Planner, 'kind' | 'name' | 'defaultPriority' | 'warm'>,
  plan: (req: ProofRequest, ctx: PlanContext) => Promise<P>,
  work: (planned: P, ctx: PlanContext, describe: string) => ProofWork,
  describe: (planned: P) => string,
): Planner {
  return {
    ...head,
    async plan(req, ctx) {
      const planned = await plan(req, ctx);
      return work(planned, ctx, `${describe(planned)}${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
}
