/**
 * The constants of the INSECURE development setup, derived once and shared by its two twins: the
 * CPU setup (setup.ts setupWithToxicWaste, writeInsecureDevParamsCpu) and the GPU one (setup-gpu.ts,
 * native/cuda/setup.cu). Tests and benchmarks ONLY: the toxic waste comes from a public seed, so
 * anyone can recompute it and forge proofs.
 *
 * From the toxic waste (τ, α, β, γ, δ) and the domain size n: τ, α, β, 1/γ, 1/δ and Z(τ)/δ (the h
 * query is τ^i·Z(τ)/δ), and the verifying key's fixed points [α]₁, [β]₁, [β]₂, [γ]₂, [δ]₁, [δ]₂.
 */
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { FR_MODULUS, G1, G2, frVector, mod, modInverse, powMod } from '../field/layout.js';
import type { VerifyingKey } from './keys.js';

const R = FR_MODULUS;

/** The seed of the development setup when none is given. Public: the setup is insecure. */
export const DEV_SETUP_DEFAULT_SEED = 'kiln insecure development setup v1';

export interface DevSetupOptions {
  /** Seed of the toxic waste (default DEV_SETUP_DEFAULT_SEED). */
  seed?: string | Uint8Array;
}

/** The secret scalars of a setup. Exposed for tests; a real setup destroys them. */
export interface ToxicWaste {
  tau: bigint;
  alpha: bigint;
  beta: bigint;
  gamma: bigint;
  delta: bigint;
}

/** Derives the toxic waste from a seed (SHA-512 per label, reduced mod r, never 0). */
export function insecureToxicWaste(seed: string | Uint8Array = DEV_SETUP_DEFAULT_SEED): ToxicWaste {
  const seedBytes = typeof seed === 'string' ? utf8ToBytes(seed) : seed;
  const draw = (label: string): bigint => {
    for (let counter = 0; ; counter++) {
      const h = sha512(concatBytes(seedBytes, utf8ToBytes(`/${label}/${counter}`)));
      let x = 0n;
      for (const b of h) x = (x << 8n) | BigInt(b);
      x %= R;
      if (x !== 0n) return x;
    }
  };
  return { tau: draw('tau'), alpha: draw('alpha'), beta: draw('beta'), gamma: draw('gamma'), delta: draw('delta') };
}

/** The field constants of a setup over a domain of size n. */
export interface SetupConstants {
  tau: bigint;
  alpha: bigint;
  beta: bigint;
  gammaInv: bigint;
  deltaInv: bigint;
  /** Z(τ)/δ = (τ^n − 1)/δ: h_i = τ^i · hScale. */
  hScale: bigint;
}

/** The constants of the setup of `tw` over a domain of size n; τ in the domain (Z(τ) = 0) is refused. */
export function setupConstants(tw: ToxicWaste, n: number): SetupConstants {
  const z = mod(powMod(tw.tau, BigInt(n), R) - 1n, R);
  if (z === 0n) throw new RangeError('τ lies in the evaluation domain');
  const deltaInv = modInverse(tw.delta, R);
  return {
    tau: tw.tau,
    alpha: tw.alpha,
    beta: tw.beta,
    gammaInv: modInverse(tw.gamma, R),
    deltaInv,
    hScale: (z * deltaInv) % R,
  };
}

/** The constants as the native setup takes them: τ, α, β, 1/γ, 1/δ, Z(τ)/δ, Montgomery Fr (192 bytes). */
export function setupConstantsBytes(k: SetupConstants): Uint8Array {
  return frVector([k.tau, k.alpha, k.beta, k.gammaInv, k.deltaInv, k.hScale]);
}

/** The verifying key's fixed points [α]₁, [β]₁, [β]₂, [γ]₂, [δ]₁, [δ]₂ (both twins). */
export function verifyingKeyPoints(tw: ToxicWaste): Omit<VerifyingKey, 'ic'> {
  return {
    alphaG1: G1.BASE.multiply(tw.alpha),
    betaG1: G1.BASE.multiply(tw.beta),
    betaG2: G2.BASE.multiply(tw.beta),
    gammaG2: G2.BASE.multiply(tw.gamma),
    deltaG1: G1.BASE.multiply(tw.delta),
    deltaG2: G2.BASE.multiply(tw.delta),
  };
}
