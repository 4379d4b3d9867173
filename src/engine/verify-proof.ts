/**
 * Verification of one partition proof, the input sum by the native CPU addon's MSM when the addon is
 * built (a few milliseconds for hundreds or tens of thousands of inputs) and by noble otherwise
 * (verifyProof, ~1 ms per full-width input). Used on the verification worker (verify-task.ts) and
 * by the partition pipeline when it has no worker.
 */
import { loadNative } from '../backend/native.js';
import type { Proof } from '../groth16/proof.js';
import { verifyProof, verifyProofNative, type NativeG1Msm, type PreparedVerifyingKey } from '../groth16/verifier.js';

let nativeMsm: NativeG1Msm | null | undefined;

export async function verifyPartitionProof(pvk: PreparedVerifyingKey, proof: Proof, inputs: readonly bigint[]): Promise<boolean> {
  if (nativeMsm === undefined) {
    try {
      nativeMsm = loadNative();
    } catch {
      nativeMsm = null;
    }
  }
  return nativeMsm ? verifyProofNative(pvk, proof, inputs, nativeMsm) : verifyProof(pvk, proof, inputs);
}
