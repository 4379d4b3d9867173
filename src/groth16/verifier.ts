/**
 * Groth16 verification with noble's pairing (the independent reference), as bellperson does it:
 *   e(A, B) · e(Σ x_i·IC_i, −γ) · e(C, −δ)  ==  e(α, β)
 * with the three Miller loops in one batch and one final exponentiation. Preparing a key computes
 * e(α, β) and the Miller-loop line coefficients of −γ and −δ once, so a proof costs one G2 line
 * precomputation (for B), the Miller loop and the final exponentiation.
 *
 * The input sum Σ x_i·IC_i is done either by noble, one scalar multiplication per input
 * (`verifyProof`, synchronous: the slow twin), or by the native CPU addon's MSM (`verifyProofNative`):
 * a WinningPoSt has 133 inputs and a 32 GiB PoRep partition 328, and noble's ~1 ms per full-width
 * input was most of the ~200 ms a proof spent in verification on the H200 host.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { FR_MODULUS, frVector, g1Vector, readG1, type G1Point, type G2Point } from '../field/layout.js';
import type { VerifyingKey } from './keys.js';
import type { Proof } from './proof.js';

type Gt = ReturnType<typeof bls12_381.pairing>;
type Lines = ReturnType<typeof bls12_381.utils.calcPairingPrecomputes>;

export interface PreparedVerifyingKey {
  /** e(α, β). */
  alphaBeta: Gt;
  negGammaG2: G2Point;
  negDeltaG2: G2Point;
  ic: readonly G1Point[];
  /** Miller-loop lines of −γ and −δ (undefined when the point is the identity). */
  negGammaLines?: Lines;
  negDeltaLines?: Lines;
  /** The IC points in the native layout, made on first use by verifyProofNative. */
  icBytes?: Uint8Array;
}

export function prepareVerifyingKey(vk: VerifyingKey): PreparedVerifyingKey {
  if (vk.ic.length === 0) throw new RangeError('verifying key has no IC points');
  const negGammaG2 = vk.gammaG2.negate();
  const negDeltaG2 = vk.deltaG2.negate();
  const lines = (q: G2Point): Lines | undefined => (q.is0() ? undefined : bls12_381.utils.calcPairingPrecomputes(q));
  return {
    alphaBeta: bls12_381.pairing(vk.alphaG1, vk.betaG2),
    negGammaG2,
    negDeltaG2,
    ic: vk.ic,
    negGammaLines: lines(negGammaG2),
    negDeltaLines: lines(negDeltaG2),
  };
}

function checkInputs(pvk: PreparedVerifyingKey, publicInputs: readonly bigint[]): void {
  if (publicInputs.length !== pvk.ic.length - 1) {
    throw new RangeError(`verifyProof: ${publicInputs.length} public inputs given, the key expects ${pvk.ic.length - 1}`);
  }
  for (let i = 0; i < publicInputs.length; i++) {
    const x = publicInputs[i];
    if (typeof x !== 'bigint' || x < 0n || x >= FR_MODULUS) {
      throw new RangeError(`verifyProof: public input ${i} is not a field element in [0, r)`);
    }
  }
}

/** IC_0 + Σ x_i·IC_{i+1} with noble (inputs already checked). */
export function inputSum(pvk: PreparedVerifyingKey, publicInputs: readonly bigint[]): G1Point {
  let acc = pvk.ic[0];
  // Public data: the variable-time multiplication is fine.
  for (let i = 0; i < publicInputs.length; i++) if (publicInputs[i] !== 0n) acc = acc.add(pvk.ic[i + 1].multiplyUnsafe(publicInputs[i]));
  return acc;
}

/** The pairing equation, given the input sum. */
export function pairingCheck(pvk: PreparedVerifyingKey, proof: Proof, acc: G1Point): boolean {
  // A pairing with the identity contributes 1: such pairs are left out (noble refuses them).
  const terms: [Lines, bigint, bigint][] = [];
  const add = (p: G1Point, lines: () => Lines | undefined): void => {
    if (p.is0()) return;
    const l = lines();
    if (l === undefined) return;
    p.assertValidity();
    const { x, y } = p.toAffine();
    terms.push([l, x, y]);
  };
  add(proof.a, () => {
    if (proof.b.is0()) return undefined;
    proof.b.assertValidity();
    return bls12_381.utils.calcPairingPrecomputes(proof.b);
  });
  add(acc, () => pvk.negGammaLines);
  add(proof.c, () => pvk.negDeltaLines);
  const lhs = bls12_381.fields.Fp12.finalExponentiate(bls12_381.millerLoopBatch(terms));
  return bls12_381.fields.Fp12.eql(lhs, pvk.alphaBeta);
}

/**
 * True when `proof` is valid for `publicInputs` (canonical field elements, without the leading
 * ONE). A wrong number of inputs, or an input outside [0, r), is a caller error and throws.
 */
export function verifyProof(pvk: PreparedVerifyingKey, proof: Proof, publicInputs: readonly bigint[]): boolean {
  checkInputs(pvk, publicInputs);
  return pairingCheck(pvk, proof, inputSum(pvk, publicInputs));
}

/** What verifyProofNative needs of the native CPU addon (src/backend/native.ts). */
export interface NativeG1Msm {
  msmG1(bases: Uint8Array, scalars: Uint8Array): Promise<{ point: Uint8Array }>;
}

/** verifyProof with the input sum done by the native MSM (same answer; tested against verifyProof). */
export async function verifyProofNative(
  pvk: PreparedVerifyingKey,
  proof: Proof,
  publicInputs: readonly bigint[],
  native: NativeG1Msm,
): Promise<boolean> {
  checkInputs(pvk, publicInputs);
  pvk.icBytes ??= g1Vector(pvk.ic);
  const { point } = await native.msmG1(pvk.icBytes, frVector([1n, ...publicInputs]));
  return pairingCheck(pvk, proof, readG1(point, 0));
}

/** verifyProof over several partition proofs with their own inputs; true when all are valid. */
export function verifyProofs(
  pvk: PreparedVerifyingKey,
  proofs: readonly Proof[],
  publicInputs: readonly (readonly bigint[])[],
): boolean {
  if (proofs.length !== publicInputs.length) {
    throw new RangeError(`verifyProofs: ${proofs.length} proofs but ${publicInputs.length} input vectors`);
  }
  return proofs.every((p, i) => verifyProof(pvk, p, publicInputs[i]));
}
