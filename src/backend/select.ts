/**
 * Picks a compute backend by name: `native` (C++ on all cores), `reference` (TypeScript, slow),
 * `cuda` (the GPU addon; falls back to native with a warning when no GPU or driver is present), or
 * `auto` (cuda when a GPU is present, else native).
 */
import type { Backend } from './backend.js';
import { createGpuBackend } from './cuda.js';
import { NativeBackend } from './native.js';
import { ReferenceBackend } from './reference.js';

export type BackendName = 'native' | 'reference' | 'cuda' | 'auto';

export function selectBackend(name: string, warn: (msg: string) => void = (m) => console.error(m)): Backend {
  switch (name) {
    case 'native':
      return new NativeBackend();
    case 'reference':
      return new ReferenceBackend();
    case 'cuda':
    case 'auto': {
      const { backend, gpu, reason } = createGpuBackend();
      if (!gpu && name === 'cuda') warn(`kiln: no usable GPU (${reason ?? 'unknown'}): using the native CPU backend`);
      return backend;
    }
    default:
      throw new Error(`unknown backend '${name}' (expected native, cuda, auto or reference)`);
  }
}
