/**
 * kiln's tuning variables: the environment variables that choose a path or cap a resource below the
 * config file (a build of the CUDA addon, the GPU memory cap, the witness path, the PoSt shape cache, the CPU's
 * IFMA kernels, the GPU MSM's diagnostics…), parsed in one place into a typed `Tuning`.
 *
 * Only the edges read the environment: the CLI (src/cli/options.ts cliTuning, once per process), the daemon
 * (src/server/daemon.ts runDaemon, unless its caller passes a Tuning) and the bench scripts call
 * `tuningFromEnv(process.env)` and pass the object down: to the backends (src/backend/select.ts
 * SelectOptions.tuning → CudaBackendOptions / NativeBackendOptions; the native addons get theirs through
 * setNoIfma / setMsmBatch / setMsmAcc), to the proof kinds (KindOptions.tuning: the witness path, the PoSt shape
 * cache) and, through the kinds' task arguments, to the synthesis workers. Library code (src/backend, src/kinds,
 * src/engine, src/groth16, src/r1cs, src/filecoin, native/) reads no environment variable, so that what a daemon
 * does is decided where it starts, and a library caller (a test, a bench) says what it wants instead of setting
 * process-wide variables.
 *
 * A field left undefined is the library's default, as when the variable is unset; an empty value counts as unset.
 * A value that is not understood is refused with a RangeError naming the variable and what it accepts: a typo
 * must not silently fall back to the default. (KILN_NO_IFMA keeps its old rule: any value but '' and '0' turns
 * the IFMA kernels off.) KILN_PROGRESS, KILN_PROGRESS_INTERVAL and KILN_SPAN_GAPS are how the CLI draws and stay
 * with it (src/util/progress.ts, src/cli/options.ts); FIL_PROOFS_PARAMETER_CACHE and KILN_CACHE_DIR are defaults
 * of the config and the CLI's directories (src/engine/config.ts, which takes the environment as an argument).
 */
import { resolve } from 'node:path';
import type { MemoryLimit } from '../backend/cuda.js';
import { parseMemoryLimit } from '../backend/device-plan.js';
import type { WitnessPath } from '../kinds/witness.js';

export interface Tuning {
  /** KILN_CUDA_ADDON: another build of the CUDA addon (e.g. a variant for an A/B comparison), resolved against
   *  the working directory when read. Default: build/cuda/kiln_cuda.node, then native/cuda/.build/. */
  addonPath?: string;
  /** KILN_GPU_MEMORY_LIMIT: the most device memory each GPU's plans use, bytes ("25769803776"), a size ("24GiB")
   *  or a percentage ("75%"): the CLI's counterpart of the daemon's `[gpus] memory_limit`, which wins when both
   *  are set. Default: the free memory. */
  gpuMemoryLimit?: MemoryLimit;
  /** KILN_PLAN_MATRICES=streamed (diagnostics): the CUDA plans stream the matrices even where they fit. */
  planMatrices?: 'streamed';
  /** KILN_DEV_SETUP: `cpu` makes INSECURE development parameters on the CPU even with the CUDA backend (false
   *  here); `gpu` (true) is the default. */
  devSetup?: boolean;
  /** KILN_GPU_DETAIL=1 (diagnostics): one `kiln gpu-detail` JSON line on stderr per GPU partition proof. */
  gpuDetail?: boolean;
  /** KILN_WITNESS: `native` (witness programs on the CPU addon: the default when it loads) or `ts` (the
   *  TypeScript generator). */
  witness?: WitnessPath;
  /** KILN_POST_SHAPE_CACHE: `0` / `off` / `false` record PoSt shapes in memory every time instead of caching
   *  them in the cache directory (for disks too small for both the wpost-32g parameters and its shape);
   *  `1` / `on` / `true` (the default) cache them. */
  postShapeCache?: boolean;
  /** KILN_NO_IFMA: any value but '' and '0' keeps the CPU addon off its AVX-512 IFMA kernels (the scalar paths
   *  run; the same bytes). Fixed for the process once a kernel has run. */
  noIfma?: boolean;
  /** KILN_MSM_BATCH (diagnostics, the CUDA addon): the most scalars of one Pippenger batch (a positive
   *  integer), so that tests run a chunk's scalars in several batches. Default: the cost model's. */
  msmBatch?: number;
  /** KILN_MSM_ACC (diagnostics, the CUDA addon): the MSM accumulation kernel, 0 (general additions), 1
   *  (k_accumulate_hot), 2 (G1's multiplication inlined), 3 (G1's squarings by the dedicated squaring), 4
   *  (batch-affine levels before the XYZZ chunks wherever the runs are long and the memory is there) or 5 (the
   *  default: the levels in big G2 passes, 1 elsewhere), for A/B measurements. */
  msmAcc?: number;
  /** KILN_NTT_FUSED (A/B, the CUDA addon): 1 fuses the inverse NTTs' scalings (1/n, the coset shift) into their
   *  last stage group, 0 runs them as a pass of their own. Default: the addon's build default. */
  nttFused?: 0 | 1;
  /** KILN_PRECOMPUTE_H (the CUDA backend's plans): 1 keeps precomputed copies of a resident h section in the
   *  memory a plan has to spare (DevicePlan.hCopies, made before the circuit's first proof), 0 (the default
   *  until measured end to end) none. */
  precomputeH?: boolean;
}

/** The variables tuningFromEnv reads, each with the Tuning field it sets. */
export const TUNING_VARIABLES = {
  KILN_CUDA_ADDON: 'addonPath',
  KILN_GPU_MEMORY_LIMIT: 'gpuMemoryLimit',
  KILN_PLAN_MATRICES: 'planMatrices',
  KILN_DEV_SETUP: 'devSetup',
  KILN_GPU_DETAIL: 'gpuDetail',
  KILN_WITNESS: 'witness',
  KILN_POST_SHAPE_CACHE: 'postShapeCache',
  KILN_NO_IFMA: 'noIfma',
  KILN_MSM_BATCH: 'msmBatch',
  KILN_MSM_ACC: 'msmAcc',
  KILN_NTT_FUSED: 'nttFused',
  KILN_PRECOMPUTE_H: 'precomputeH',
} as const satisfies Record<string, keyof Tuning>;

/** The value of one of `words` (a flag's accepted spellings, lower case, in the order the error lists them), or
 *  a RangeError naming the variable. */
function oneOf<T>(name: string, v: string, words: readonly (readonly [string, T])[]): T {
  const w = words.find(([word]) => word === v.trim().toLowerCase());
  if (w === undefined) throw new RangeError(`${name}=${v}: expected ${words.map(([word]) => word).join(', ')} (or unset)`);
  return w[1];
}

/** An integer in [min, max], or a RangeError naming the variable. */
function integer(name: string, v: string, min: number, max: number, what: string): number {
  const t = v.trim();
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new RangeError(`${name}=${v}: expected ${what}`);
  return n;
}

/**
 * The Tuning the variables of `env` ask for (the edges pass process.env); throws a RangeError naming the first
 * variable whose value is not understood. Pure: reads `env` only, so tests pass a plain object.
 */
export function tuningFromEnv(env: Readonly<Record<string, string | undefined>>): Tuning {
  const t: Tuning = {};
  const get = (name: keyof typeof TUNING_VARIABLES): string | undefined => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  let v: string | undefined;
  if ((v = get('KILN_CUDA_ADDON')) !== undefined) t.addonPath = resolve(v);
  if ((v = get('KILN_GPU_MEMORY_LIMIT')) !== undefined) {
    try {
      t.gpuMemoryLimit = parseMemoryLimit(v);
    } catch (e) {
      throw new RangeError(`KILN_GPU_MEMORY_LIMIT: ${(e as Error).message}`);
    }
  }
  if ((v = get('KILN_PLAN_MATRICES')) !== undefined) {
    if (v !== 'streamed') throw new RangeError(`KILN_PLAN_MATRICES=${v}: only 'streamed' (or unset)`);
    t.planMatrices = 'streamed';
  }
  if ((v = get('KILN_DEV_SETUP')) !== undefined) t.devSetup = oneOf('KILN_DEV_SETUP', v, [['cpu', false], ['gpu', true]]);
  if ((v = get('KILN_GPU_DETAIL')) !== undefined) t.gpuDetail = oneOf('KILN_GPU_DETAIL', v, [['1', true], ['0', false]]);
  if ((v = get('KILN_WITNESS')) !== undefined) {
    if (v !== 'native' && v !== 'ts') throw new RangeError(`KILN_WITNESS must be native or ts, got ${v}`);
    t.witness = v;
  }
  if ((v = get('KILN_POST_SHAPE_CACHE')) !== undefined) {
    const words = [['0', false], ['off', false], ['false', false], ['1', true], ['on', true], ['true', true]] as const;
    t.postShapeCache = oneOf('KILN_POST_SHAPE_CACHE', v, words);
  }
  // as the addon read it: set, not empty and not "0"
  const noIfma = env.KILN_NO_IFMA;
  if (noIfma !== undefined) t.noIfma = noIfma !== '' && noIfma !== '0';
  if ((v = get('KILN_MSM_BATCH')) !== undefined) t.msmBatch = integer('KILN_MSM_BATCH', v, 1, 2 ** 32 - 1, 'the most scalars of a Pippenger batch, a positive integer');
  if ((v = get('KILN_MSM_ACC')) !== undefined) t.msmAcc = integer('KILN_MSM_ACC', v, 0, 5, 'the MSM accumulation kernel: 0, 1, 2, 3, 4 or 5 (the default)');
  if ((v = get('KILN_PRECOMPUTE_H')) !== undefined) t.precomputeH = integer('KILN_PRECOMPUTE_H', v, 0, 1, 'copies of h in the spare device memory: 1 kept, 0 none') === 1;
  if ((v = get('KILN_NTT_FUSED')) !== undefined) t.nttFused = integer('KILN_NTT_FUSED', v, 0, 1, 'the inverse NTTs\' scalings: 1 fused into the last stage group, 0 a pass of their own') as 0 | 1;
  return t;
}
