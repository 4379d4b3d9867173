/**
 * The proof's assembly on the backend (`lincombG1` / `lincombG2`), with the prover's formulas:
 *   A = α + r·δ + ΣA,  B = β + s·δ + ΣB (G2),  B1 = β + s·δ + ΣB1,
 *   C = s·A + r·B1 − r·s·δ + H + L.
 * A, B1 and B are three small linear combinations; C is a fourth over A and B1. The noble path
 * in prover.ts (for backends without lincomb) computes the same points one multiplication at a
 * time; tests compare the two.
 */
import { concatBytes } from '@noble/hashes/utils.js';
import type { Backend } from '../backend/backend.js';
import { readG1OnCurve, readG2OnCurve } from '../curve/encoding.js';
import { FR_BYTES, FR_MODULUS, G1_BYTES, G2_BYTES, writeFr, writeG1, writeG2 } from '../field/layout.js';
import type { VerifyingKey } from './keys.js';
import type { Proof } from './proof.js';

/** The verifying key's points in the backend layout, per key object (converted once). */
interface VkBytes {
  alphaG1: Uint8Array;
  betaG1: Uint8Array;
  deltaG1: Uint8Array;
  betaG2: Uint8Array;
  deltaG2: Uint8Array;
}
const vkCache = new WeakMap<VerifyingKey, VkBytes>();

function vkBytes(vk: VerifyingKey): VkBytes {
  let e = vkCache.get(vk);
  if (e === undefined) {
    const g1 = (p: VerifyingKey['alphaG1']): Uint8Array => {
      const b = new Uint8Array(G1_BYTES);
      writeG1(b, 0, p);
      return b;
    };
    const g2 = (p: VerifyingKey['betaG2']): Uint8Array => {
      const b = new Uint8Array(G2_BYTES);
      writeG2(b, 0, p);
      return b;
    };
    e = { alphaG1: g1(vk.alphaG1), betaG1: g1(vk.betaG1), deltaG1: g1(vk.deltaG1), betaG2: g2(vk.betaG2), deltaG2: g2(vk.deltaG2) };
    vkCache.set(vk, e);
  }
  return e;
}

function scalars(xs: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(xs.length * FR_BYTES);
  xs.forEach((x, i) => writeFr(out, i, x));
  return out;
}

export interface QuerySums {
  /** Affine points in the backend layout (96 B G1, 192 B G2). */
  hSum: Uint8Array;
  lSum: Uint8Array;
  aSum: Uint8Array;
  b1Sum: Uint8Array;
  b2Sum: Uint8Array;
}

/** A, B, C from the query sums and r, s (both in [0, r)) on a backend with lincombG1/G2. */
export async function assembleOnBackend(
  backend: Required<Pick<Backend, 'lincombG1' | 'lincombG2'>>,
  vk: VerifyingKey,
  r: bigint,
  s: bigint,
  q: QuerySums,
): Promise<Proof> {
  const v = vkBytes(vk);
  const [a, b1, b2] = await Promise.all([
    backend.lincombG1(concatBytes(v.alphaG1, v.deltaG1, q.aSum), scalars([1n, r, 1n])),
    backend.lincombG1(concatBytes(v.betaG1, v.deltaG1, q.b1Sum), scalars([1n, s, 1n])),
    backend.lincombG2(concatBytes(v.betaG2, v.deltaG2, q.b2Sum), scalars([1n, s, 1n])),
  ]);
  const rs = (r * s) % FR_MODULUS;
  const c = await backend.lincombG1(
    concatBytes(a, b1, v.deltaG1, q.hSum, q.lSum),
    scalars([s, r, rs === 0n ? 0n : FR_MODULUS - rs, 1n, 1n]),
  );
  // Combinations of subgroup points (the parameters were validated when loaded): an on-curve check
  // guards against a faulty backend; the subgroup check (~1.5 ms per point in noble) is left to the
  // verifier, which every caller runs.
  return { a: readG1OnCurve(a, 0), b: readG2OnCurve(b2, 0), c: readG1OnCurve(c, 0) };
}
