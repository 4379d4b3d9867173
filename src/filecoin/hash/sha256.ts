/** SHA256 as Filecoin's Sha256Domain uses it: digests truncated to 254 bits so they are Fr elements. */
import { sha256 } from '@noble/hashes/sha2.js';

/** Clears the two top bits of byte 31 in place (`digest[31] &= 0x3f`) and returns the array. */
export function truncateTo254(digest: Uint8Array): Uint8Array {
  digest[31] &= 0x3f;
  return digest;
}

/** SHA256 of the concatenation of `parts`, truncated to 254 bits. */
export function sha256Truncated(...parts: readonly Uint8Array[]): Uint8Array {
  const h = sha256.create();
  for (const p of parts) h.update(p);
  return truncateTo254(h.digest());
}

/** Binary SHA256 Merkle node (comm_d tree): truncated sha256(left ‖ right). */
export function sha256Node(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256Truncated(left, right);
}

export { sha256 };
