/**
 * The health probe of a compute device: a tiny NTT round trip and a tiny G1 MSM through its backend
 * (the same entry points a proof uses: on a GPU, a kernel launch, a device allocation and copies each
 * way), checked against values computed here with @noble/curves. The engine runs it on a device it
 * marked unhealthy after a failed partition proof, and puts the device back in service when it passes.
 * Milliseconds on any backend; it needs no SRS and leaves nothing resident (its buffers come from the
 * backend's `alloc` and are released, which also frees a GPU backend's device copy of the bases).
 */
import type { Backend } from './backend.js';
import { FR_BYTES, G1, frVector, g1Vector, readG1 } from '../field/layout.js';

const NTT_VALUES = Array.from({ length: 16 }, (_, i) => BigInt(i) * 0x9e3779b97f4a7c15n + 1n);
/** Σ k_i·(i+1)·G for k = 5, 1, 7, 0 (a Pippenger scalar, a batched-addition one, another, a skipped one). */
const MSM_SCALARS = [5n, 1n, 7n, 0n];
const MSM_EXPECTED = G1.BASE.multiply(5n * 1n + 1n * 2n + 7n * 3n);

export class ProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeError';
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Resolves when the device computes correctly; rejects (ProbeError, or the backend's own error)
 *  when it does not. */
export async function probeBackend(backend: Backend): Promise<void> {
  const values = frVector(NTT_VALUES);
  const v = backend.alloc(values.length);
  try {
    v.set(values);
    await backend.ntt(v, { inverse: false, coset: false });
    if (equalBytes(v, values)) throw new ProbeError('probe: the NTT left its input unchanged');
    await backend.ntt(v, { inverse: true, coset: false });
    if (!equalBytes(v, values)) throw new ProbeError(`probe: an NTT and its inverse over ${values.length / FR_BYTES} elements did not give the input back`);
  } finally {
    backend.release(v);
  }
  const bases = backend.alloc(MSM_SCALARS.length * 96);
  try {
    bases.set(g1Vector(MSM_SCALARS.map((_, i) => G1.BASE.multiply(BigInt(i + 1)))));
    const r = await backend.msmG1(bases, frVector(MSM_SCALARS));
    if (!readG1(r.point, 0).equals(MSM_EXPECTED)) throw new ProbeError('probe: a 4-point G1 MSM gave the wrong point');
  } finally {
    backend.release(bases);
  }
}
