/**
 * WINNING_POST (4, CRITICAL, queue 'winning-post') and WINDOW_POST_PARTITION (3, HIGH, queue 'window-post'):
 * Curio's fields (FACTS §8): `vanilla_proofs` (raw bincode `FallbackPoStSectorProof`s: one for WinningPoSt, one per
 * sector of the partition for WindowPoSt), `randomness` (32 B, a canonical field element: Curio masks [31] &= 0x3f),
 * `partition_index`, `miner_id`, `registered_proof` (RegisteredPoStProof 0–14). Every element is parsed (errors
 * name the element, field and offset), every challenged leaf is checked against the challenge the randomness
 * derives (errors name the sector and challenge), and one ProofWork of one partition is made: circuit id
 * `winning-<size>` / `wpost-<size>`. Synthesis: the circuit's witness program on the native backend (one sector =
 * one segment, run in parallel), else the TypeScript generator in the worker pool (post-worker.ts). The engine
 * verifies the proof against `postPublicInputs` before it returns it.
 *
 * Parameters: the official file by its name (`postParamsFileName`, e.g.
 * v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-<sha256>.params) or `<circuit id>.params` in
 * `[srs] param_cache`; otherwise, only with `[srs] dev_params = true`, INSECURE development parameters
 * (params.ts, exactly as PoRep: `<param_cache>/kiln-cache/dev-params/`).
 */
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork, type ProofRequest, type PlanContext } from '../engine/types.js';
import { FR_BYTES, FR_MODULUS } from '../field/layout.js';
import { checkPoStSectorsAsync, PoStInputError, postPublicInputs } from '../filecoin/post/circuit.js';
import { postCircuitId, postParamsFileName, postProofByCircuitId, postProofById, postProofName } from '../filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../filecoin/post/types.js';
import { parsePoStSectorProof, VanillaProofError } from '../filecoin/post/vanilla.js';
import type { AnyParameters } from '../groth16/keys.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { loadCircuitParams } from './params.js';
import { type ParamsSource, witnessRunner } from './porep-c2.js';
import { findOfficialPoStParams, postProgramFor, postShape, postShapeCacheDir, postWitnessNativeFor } from './post.js';
import type { PoStWitnessArg } from './post-worker.js';

const SYNTH_MODULE = new URL('./post-worker.js', import.meta.url).href;

export interface PoStKindOptions {
  config: EngineConfig;
  backend: Backend;
  /** Shapes and development parameters (default `<param_cache>/kiln-cache`; the CLI passes its --cache-dir). */
  cacheDir?: string;
  notice?: (msg: string) => void;
}

export interface PoStKind {
  winning: Planner;
  window: Planner;
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

/** The parsed, checked request: what the ProofWork proves. */
export interface PoStPlan {
  info: PoStProofInfo;
  sectors: PoStSectorProof[];
  randomness: Uint8Array;
  partitionIndex: number;
  inputs: bigint[];
}

function le32(bytes: Uint8Array): bigint {
  let x = 0n;
  for (let i = 31; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]!);
  return x;
}

/** Validates a PoSt request for `type` and parses its vanilla proofs (PlanError naming the problem). */
export async function planPoStRequest(req: ProofRequest, type: 'winning' | 'window'): Promise<PoStPlan> {
  const wire = type === 'winning' ? 'WINNING_POST' : 'WINDOW_POST_PARTITION';
  const info = postProofById(req.registeredProof);
  if (!info) throw new PlanError(`registered_proof ${req.registeredProof} is not a RegisteredPoStProof (0–4 Winning, 5–14 Window)`);
  if (info.type !== type) {
    throw new PlanError(`registered_proof ${req.registeredProof} is ${postProofName(info)}, not a ${type === 'winning' ? 'WinningPoSt' : 'WindowPoSt'} proof (${wire} takes ${type === 'winning' ? '0–4' : '5–14'})`);
  }
  if (req.sectorSize !== 0 && req.sectorSize !== info.size.sectorSize) {
    throw new PlanError(`sector_size ${req.sectorSize} does not match registered_proof ${postProofName(info)} (${info.size.sectorSize})`);
  }
  if (req.randomness.length !== 32) throw new PlanError(`randomness must be 32 bytes, got ${req.randomness.length}`);
  if (le32(req.randomness) >= FR_MODULUS) throw new PlanError('randomness is not a canonical field element (Curio masks its last byte with 0x3f)');
  if (!Number.isSafeInteger(req.partitionIndex) || req.partitionIndex < 0) throw new PlanError(`partition_index ${req.partitionIndex} is invalid`);
  if (type === 'winning' && req.partitionIndex !== 0) throw new PlanError(`partition_index must be 0 for WinningPoSt, got ${req.partitionIndex}`);
  const elements = req.vanillaProofs.length > 0 ? req.vanillaProofs : req.vanillaProof.length > 0 ? [req.vanillaProof] : [];
  if (elements.length === 0) throw new PlanError(`vanilla_proofs is empty: ${wire} needs ${type === 'winning' ? 'the challenged sector\'s' : 'one per sector of the partition:'} FallbackPoStSectorProof${type === 'winning' ? '' : 's'}`);
  if (type === 'winning' && elements.length !== 1) throw new PlanError(`WinningPoSt takes exactly one vanilla proof (the challenged sector), got ${elements.length}`);
  if (type === 'window' && elements.length > info.sectorCount) {
    throw new PlanError(`${elements.length} vanilla proofs; a ${info.size.label} WindowPoSt partition holds at most ${info.sectorCount} sectors`);
  }
  const sectors = elements.map((bytes, k) => {
    try {
      return parsePoStSectorProof(bytes, info);
    } catch (e) {
      if (e instanceof VanillaProofError) throw new PlanError(`vanilla_proofs[${k}]: ${e.message}`);
      throw new PlanError(`vanilla_proofs[${k}]: ${(e as Error).message}`);
    }
  });
  const ctx = { randomness: req.randomness, partitionIndex: req.partitionIndex };
  try {
    await checkPoStSectorsAsync(info, sectors, ctx);
  } catch (e) {
    if (e instanceof PoStInputError) throw new PlanError(`${postProofName(info)}: ${e.message}`);
    throw e;
  }
  return { info, sectors, randomness: req.randomness, partitionIndex: req.partitionIndex, inputs: postPublicInputs(info, sectors, ctx) };
}

export function createPoStKind(opts: PoStKindOptions): PoStKind {
  const sources = new Map<string, ParamsSource>();
  const shapes = new Map<string, Promise<CircuitShape>>();
  const shapeCacheDir = opts.cacheDir ?? join(opts.config.srs.param_cache, 'kiln-cache');
  const notice = opts.notice ?? ((): void => undefined);
  const infoOf = (id: string): PoStProofInfo => {
    const info = postProofByCircuitId(id);
    if (!info) throw new Error(`unknown PoSt circuit ${id}`);
    return info;
  };

  const circuits: CircuitProvider = {
    knows: (id) => postProofByCircuitId(id) !== undefined,
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
        s = Promise.resolve().then(() => {
          const { shape, cached, cacheError } = postShape(info, postShapeCacheDir(shapeCacheDir));
          notice(
            `circuit ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux ` +
              `(shape ${cached ? 'cached' : cacheError ? `recorded; ${cacheError}` : postShapeCacheDir(shapeCacheDir) ? 'recorded and cached' : 'recorded, not cached: KILN_POST_SHAPE_CACHE=0'})`,
          );
          return shape;
        });
        shapes.set(id, s);
        s.catch(() => shapes.delete(id));
      }
      return s;
    },
    async params(id, span): Promise<AnyParameters> {
      const shape = await circuits.shape(id);
      return loadCircuitParams({
        id,
        shape,
        officialFile: findOfficialPoStParams(infoOf(id), opts.config.srs.param_cache),
        config: opts.config,
        backend: opts.backend,
        devDir: join(shapeCacheDir, 'dev-params'),
        notice,
        span,
        checkAvailable: () => circuits.available!(id),
        onSource: (s) => void sources.set(id, s),
      });
    },
  };

  const runner = witnessRunner();
  const work = (plan: PoStPlan, ctx: PlanContext, describe: string): ProofWork => {
    const { info } = plan;
    const circuitId = postCircuitId(info);
    let sectors: PoStSectorProof[] | undefined = plan.sectors;
    return {
      circuitId,
      partitions: 1,
      describe,
      async synthesize(_k, span) {
        if (sectors === undefined) throw new Error('job disposed');
        const want = plan.inputs;
        const check = (got: bigint[]): void => {
          const bad = want.findIndex((x, i) => got[i] !== x);
          if (got.length !== want.length || bad >= 0) throw new Error(`the circuit's public inputs differ from postPublicInputs (index ${bad < 0 ? got.length : bad})`);
        };
        if (runner !== undefined) {
          const shape = await circuits.shape(circuitId);
          const program = postProgramFor(info, shape, postShapeCacheDir(shapeCacheDir));
          const out = ctx.buffers.take((shape.numInputs + shape.numAux) * FR_BYTES);
          let held: Uint8Array | undefined = out;
          const giveBack = (): void => {
            if (held) ctx.buffers.give(held);
            held = undefined;
          };
          try {
            const w = await postWitnessNativeFor(runner, program, info, sectors, out);
            span.record('tape', w.tapeMs);
            span.record('witness', w.runMs);
            check(w.inputs);
            return { assignment: w.assignment, inputs: want, release: giveBack };
          } catch (e) {
            giveBack();
            throw e;
          }
        }
        const arg: PoStWitnessArg = { registeredProof: info.id, sectors, numInputs: want.length + 1 };
        const t0 = performance.now();
        const r = await ctx.synthPool.run<{ assignment: Uint8Array; inputs: bigint[]; ms: number }>({ module: SYNTH_MODULE, fn: 'postWitness', arg });
        span.record('worker_wait', Math.max(0, performance.now() - t0 - r.ms));
        span.record('witness', r.ms);
        check(r.inputs);
        return { assignment: r.assignment, inputs: want };
      },
      dispose() {
        sectors = undefined;
      },
    };
  };

  const winning: Planner = {
    kind: ProofKind.WINNING_POST,
    name: 'winning-post',
    defaultPriority: Priority.CRITICAL,
    async plan(req, ctx) {
      const plan = await planPoStRequest(req, 'winning');
      return work(plan, ctx, `${postProofName(plan.info)} sector ${plan.sectors[0]!.sectorId}${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
  const window: Planner = {
    kind: ProofKind.WINDOW_POST_PARTITION,
    name: 'window-post',
    defaultPriority: Priority.HIGH,
    async plan(req, ctx) {
      const plan = await planPoStRequest(req, 'window');
      return work(plan, ctx, `${postProofName(plan.info)} partition ${plan.partitionIndex} (${plan.sectors.length} sectors)${req.minerId ? ` miner ${req.minerId}` : ''}`);
    },
  };
  return { winning, window, circuits, paramsSource: (id) => sources.get(id) };
}
