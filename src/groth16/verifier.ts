/**
 * Groth16 verification with noble's pairing (the independent reference), as bellperson does it:
 *   e(A, B) · e(Σ x_i·IC_i, −γ) · e(C, −δ)  ==  e(α, β)
 * with the three Miller loops in one batch and one final exponentiation; e(α, β) is computed once
 * when the key is prepared.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { FR_MODULUS, type G1Point, type G2Point } from '../field/layout.js';
import type { VerifyingKey } from './keys.js';
import type { Proof } from './proof.js';

type Gt = ReturnType<typeof bls12_381.pairing>;

export interface PreparedVerifyingKey {
  /** e(α, β). */
  alphaBeta: Gt;
  negGammaG2: G2Point;
  negDeltaG2: G2Point;
  ic: readonly G1Point[];
}

export function prepareVerifyingKey(vk: VerifyingKey): PreparedVerifyingKey {
  if (vk.ic.length === 0) throw new RangeError('verifying key has no IC points');
  return {
    alphaBeta: bls12_381.pairing(vk.alphaG1, vk.betaG2),
    negGammaG2: vk.gammaG2.negate(),
    negDeltaG2: vk.deltaG2.negate(),
    ic: vk.ic,
  };
}

/**
 * True when `proof` is valid for `publicInputs` (canonical field elements, without the leading
 * ONE). A wrong number of inputs, or an input outside [0, r), is a caller error and throws.
 */
export function verifyProof(pvk: PreparedVerifyingKey, proof: Proof, publicInputs: readonly bigint[]): boolean {
  if (publicInputs.length !== pvk.ic.length - 1) {
    throw new RangeError(
      `verifyProof: ${publicInputs.length} public inputs given, the key expects ${pvk.ic.length - 1}`,
    );
  }
  let acc = pvk.ic[0];
  for (let i = 0; i < publicInputs.length; i++) {
    const x = publicInputs[i];
    if (typeof x !== 'bigint' || x < 0n || x >= FR_MODULUS) {
      throw new RangeError(`verifyProof: public input ${i} is not a field element in [0, r)`);
    }
    // Public data: the variable-time multiplication is fine.
    if (x !== 0n) acc = acc.add(pvk.ic[i + 1].multiplyUnsafe(x));
  }
  // A pairing with the identity contributes 1; noble refuses such pairs, so leave them out.
  const pairs = [
    { g1: proof.a, g2: proof.b },
    { g1: acc, g2: pvk.negGammaG2 },
    { g1: proof.c, g2: pvk.negDeltaG2 },
  ].filter((p) => !p.g1.is0() && !p.g2.is0());
  const lhs = bls12_381.pairingBatch(pairs, true);
  return bls12_381.fields.Fp12.eql(lhs, pvk.alphaBeta);
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
