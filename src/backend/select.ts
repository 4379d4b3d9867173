/**
 * Picks a compute backend by name: `native` (C++ on all cores), `reference` (TypeScript, slow),
 * `cuda` (the GPU addon; falls back to native with a warning when no GPU or driver is present), or
 * `auto` (cuda when a GPU is present, else native). `selectDevices` picks the daemon's devices: one
 * backend per GPU. The edges' Tuning (src/util/tuning.ts: the environment, read by the CLI and the daemon)
 * comes in as `tuning` and goes to the backends' options here.
 */
import type { Backend } from './backend.js';
import { CudaBackend, createGpuBackend, cudaCapabilities, type CudaAddon, type CudaBackendOptions, type MemoryLimit } from './cuda.js';
import { NativeBackend, applyNativeTuning, nativeAvailable } from './native.js';
import { ReferenceBackend } from './reference.js';
import type { Tuning } from '../util/tuning.js';

export const BACKEND_NAMES = ['auto', 'cuda', 'native', 'reference'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export interface SelectOptions {
  /** CUDA device ordinal for `cuda` / `auto` (default 0). */
  device?: number;
  /** Where the fallback warning of `cuda` goes (default: stderr). */
  warn?: (msg: string) => void;
  /** An already loaded CUDA addon (tests: a stand-in). */
  addon?: CudaAddon;
  /** [gpus] memory_limit: the cap on the device memory the CUDA backend plans with (CudaBackendOptions);
   *  wins over the tuning's gpuMemoryLimit. */
  memoryLimit?: MemoryLimit;
  /** What the edge read from the environment (the addon's build, the GPU memory cap, diagnostics, the CPU
   *  addon's IFMA choice); default: none, the backends' defaults. */
  tuning?: Tuning;
}

/** The CUDA backend's options a tuning asks for (what selectBackend and selectDevices pass; benches and tests that
 *  make a CudaBackend themselves use it too); `memoryLimit` ([gpus] memory_limit) wins over the tuning's
 *  gpuMemoryLimit. */
export function cudaOptions(tuning: Tuning | undefined, memoryLimit?: MemoryLimit): CudaBackendOptions {
  const t = tuning ?? {};
  return {
    addonPath: t.addonPath,
    memoryLimit: memoryLimit ?? t.gpuMemoryLimit,
    planMatrices: t.planMatrices,
    devSetup: t.devSetup,
    gpuDetail: t.gpuDetail,
    msmBatch: t.msmBatch,
    msmAcc: t.msmAcc,
    nttFused: t.nttFused,
    precomputeH: t.precomputeH,
  };
}

export function selectBackend(name: string, opts: SelectOptions = {}): Backend {
  const warn = opts.warn ?? ((m: string) => console.error(m));
  switch (name) {
    case 'native':
      return new NativeBackend({ noIfma: opts.tuning?.noIfma });
    case 'reference':
      return new ReferenceBackend();
    case 'cuda':
    case 'auto': {
      // the CPU addon of the fallback and of the GPU's fixed-base multiplications (process-wide)
      if (opts.tuning?.noIfma !== undefined && nativeAvailable()) applyNativeTuning({ noIfma: opts.tuning.noIfma });
      const { backend, gpu, reason } = createGpuBackend({ device: opts.device ?? 0, addon: opts.addon, ...cudaOptions(opts.tuning, opts.memoryLimit) });
      if (!gpu && name === 'cuda') warn(`kiln: no usable GPU (${reason ?? 'unknown'}): using the native CPU backend`);
      return backend;
    }
    default:
      throw new Error(`unknown backend '${name}' (expected native, cuda, auto or reference)`);
  }
}

export interface SelectDevicesOptions {
  /** [gpus] devices: the GPU ordinals to drive; empty or absent = every GPU the addon reports. */
  devices?: readonly number[];
  /** Where the fallback warning of `cuda` goes (default: stderr). */
  warn?: (msg: string) => void;
  /** An already loaded CUDA addon (tests: a stand-in that reports several GPUs). */
  addon?: CudaAddon;
  /** [gpus] memory_limit: the cap on the device memory each GPU's backend plans with; wins over the tuning's
   *  gpuMemoryLimit. */
  memoryLimit?: MemoryLimit;
  /** What the edge read from the environment (SelectOptions.tuning). */
  tuning?: Tuning;
}

/**
 * The daemon's compute devices: one backend per GPU, each with its own device context, SRS copy and
 * circuit uploads (the engine binds prover lanes to them). `native` and `reference`: the one CPU
 * backend. `cuda` / `auto`: the GPUs of `devices` (empty: every GPU the addon reports); with one GPU,
 * or no usable GPU at all, this is `selectBackend` (the same fallback to the CPU, the same warning). With several, a
 * listed ordinal the machine does not have is refused, naming it: a daemon silently driving fewer
 * GPUs than it was told to is worse than one that does not start.
 */
export function selectDevices(name: string, opts: SelectDevicesOptions = {}): Backend[] {
  const wanted = opts.devices ?? [];
  const { warn, addon, memoryLimit, tuning } = opts;
  if (name !== 'cuda' && name !== 'auto') return [selectBackend(name, { device: wanted[0] ?? 0, warn, addon, memoryLimit, tuning })];
  const probe = addon ? addon.probe() : cudaCapabilities(tuning?.addonPath);
  const ordinals = wanted.length > 0 ? [...wanted] : probe.gpus.map((g) => g.ordinal);
  // no usable GPU (the CPU then, as with one GPU), or one GPU
  if (!probe.cuda || ordinals.length <= 1) return [selectBackend(name, { device: ordinals[0] ?? 0, warn, addon, memoryLimit, tuning })];
  const dup = ordinals.find((o, i) => ordinals.indexOf(o) !== i);
  if (dup !== undefined) throw new RangeError(`[gpus] devices lists GPU ${dup} twice`);
  const missing = ordinals.filter((o) => !probe.gpus.some((g) => g.ordinal === o));
  if (missing.length > 0) {
    throw new RangeError(
      `[gpus] devices lists GPU ${missing.join(', ')}, which this machine does not have (its GPUs: ${probe.gpus.map((g) => g.ordinal).join(', ') || 'none'})`,
    );
  }
  // one CPU backend for the assembly and the point codec of every device
  const cpu = nativeAvailable() ? new NativeBackend({ noIfma: tuning?.noIfma }) : undefined;
  return ordinals.map((device) => new CudaBackend({ device, addon, cpu, ...cudaOptions(tuning, memoryLimit) }));
}

/** "native-cpu (2 threads)" / "cuda (GPU 0: NVIDIA H200)": what a command says it runs on. */
export function describeBackend(backend: Backend): string {
  const caps = backend.capabilities();
  if (caps.cuda && caps.gpus.length > 0) return `${backend.name} (${caps.gpus.map((g) => `GPU ${g.ordinal}: ${g.name}`).join(', ')})`;
  const isa = caps.cpuFeatures !== undefined && caps.cpuFeatures.length > 0 ? `, ${caps.cpuFeatures.join(', ')}` : '';
  return `${backend.name} (${caps.threads} thread${caps.threads === 1 ? '' : 's'}${isa})`;
}
