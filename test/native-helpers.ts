/** Shared helpers of the native backend tests (test/native-*.test.ts): deterministic randomness and
 *  bigint references written independently of the addon. No tests here. */
import { FQ_MODULUS, FR_MODULUS, G1, G2, mod, type G1Point, type G2Point } from '../src/field/layout.js';

export const r = FR_MODULUS;
export const p = FQ_MODULUS;

/** Deterministic 64-bit LCG stream, seeded. */
export function rng(seed: number): (m?: bigint) => bigint {
  let s = (BigInt(seed) * 0x9e3779b97f4a7c15n + 0x632be59bd9b4e019n) & ((1n << 64n) - 1n);
  const mask = (1n << 64n) - 1n;
  return (m: bigint = r) => {
    let x = 0n;
    for (let k = 0; k < 7; k++) {
      s = (s * 6364136223846793005n + 1442695040888963407n) & mask;
      x = (x << 64n) | (s >> 3n);
    }
    return x % m;
  };
}

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
