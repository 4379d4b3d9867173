/**
 * Picks a compute backend by name: `native` (C++ on all cores), `reference` (TypeScript, slow),
 * `cuda` (the GPU addon; falls back to native with a warning when no GPU or driver is present), or
 * `auto` (cuda when a GPU is present, else native).
 */
import type { Backend } from './backend.js';
import { createGpuBackend } from './cuda.js';
import { NativeBackend } from './native.js';
import { ReferenceBackend } from './reference.js';

export const BACKEND_NAMES = ['auto', 'cuda', 'native', 'reference'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export interface SelectOptions {
  /** CUDA device ordinal for `cuda` / `auto` (default 0). */
  device?: number;
  /** Where the fallback warning of `cuda` goes (default: stderr). */
  warn?: (msg: string) => void;
}

export function selectBackend(name: string, opts: SelectOptions = {}): Backend {
  const warn = opts.warn ?? ((m: string) => console.error(m));
  switch (name) {
    case 'native':
      return new NativeBackend();
    case 'reference':
      return new ReferenceBackend();
    case 'cuda':
    case 'auto': {
      const { backend, gpu, reason } = createGpuBackend({ device: opts.device ?? 0 });
      if (!gpu && name === 'cuda') warn(`kiln: no usable GPU (${reason ?? 'unknown'}): using the native CPU backend`);
      return backend;
    }
    default:
      throw new Error(`unknown backend '${name}' (expected native, cuda, auto or reference)`);
  }
}

/** "native-cpu (2 threads)" / "cuda (GPU 0: NVIDIA H200)": what a command says it runs on. */
export function describeBackend(backend: Backend): string {
  const caps = backend.capabilities();
  if (caps.cuda && caps.gpus.length > 0) return `${backend.name} (${caps.gpus.map((g) => `GPU ${g.ordinal}: ${g.name}`).join(', ')})`;
  const isa = caps.cpuFeatures !== undefined && caps.cpuFeatures.length > 0 ? `, ${caps.cpuFeatures.join(', ')}` : '';
  return `${backend.name} (${caps.threads} thread${caps.threads === 1 ? '' : 's'}${isa})`;
}
