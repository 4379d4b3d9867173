/** Shared helpers of the native backend tests (test/native-*.test.ts): deterministic randomness and
 *  bigint references written independently of the addon. No tests here. */
import { FQ_MODULUS, FR_MODULUS, G1, G2, mod, type G1Point, type G2Point } from '../src/field/layout.js';

export const r = FR_MODULUS;
export const p = FQ_MODULUS;


export function powMod(base: bigint, e: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let x = e;
  while (x > 0n) {
    if (x & 1n) result = (result * b) % m;
    b = (b * b) % m;
    x >>= 1n;
  }
  return result;
}

/** noble's multiply rejects 0; this accepts any scalar mod r. */
export function g1Mul(P: G1Point, k: bigint): G1Point {
  const kk = mod(k, r);
  return kk === 0n ? G1.ZERO : P.multiply(kk);
}

export function g2Mul(P: G2Point, k: bigint): G2Point {
  const kk = mod(k, r);
  return kk === 0n ? G2.ZERO : P.multiply(kk);
}

export function sumMod(xs: readonly bigint[], m: bigint = r): bigint {
  let s = 0n;
  for (const x of xs) s += x;
  return mod(s, m);
}
