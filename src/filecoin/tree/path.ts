/**
 * Merkle inclusion paths as rust-fil-proofs lays them out (storage-proofs-core merkle/proof.rs):
 * a path is a list of levels from the leaf up; each level holds the `arity − 1` sibling hashes and the
 * position `index` at which the current node is inserted among them. Compound trees (32/64 GiB)
 * split the path into `base_proof` (oct levels of one base tree), `sub_proof` (one arity-8 level over
 * the base roots) and, for 64 GiB, `top_proof` (one arity-2 level over the sub roots).
 */
import { fastPoseidonHash } from '../hash/poseidon-native.js';
import { sha256Node } from '../hash/sha256.js';

export interface PathElement<T> {
  /** Siblings at this level (arity − 1 of them). */
  readonly hashes: readonly T[];
  /** Position of the current node among the arity children (0 ≤ index < arity). */
  readonly index: number;
}

export type MerkleProofShape = 'Single' | 'Sub' | 'Top';

/** One inclusion proof; for `Single` only `base` is non-empty. */
export interface MerkleProof<T> {
  readonly shape: MerkleProofShape;
  readonly root: T;
  readonly leaf: T;
  /** `path.path` (Single) or `base_proof.path` (Sub/Top). */
  readonly base: readonly PathElement<T>[];
  /** `sub_proof.path` (Sub/Top), else empty. */
  readonly sub: readonly PathElement<T>[];
  /** `top_proof.path` (Top), else empty. */
  readonly top: readonly PathElement<T>[];
}

/** The whole path from the leaf to the root: base levels, then sub, then top (the circuit's order). */
export function fullPath<T>(proof: MerkleProof<T>): PathElement<T>[] {
  return [...proof.base, ...proof.sub, ...proof.top];
}

/** Leaf index the path proves: Σ index_l · Π_{m<l} arity_m (rust-fil-proofs `path_index`, per-level arities). */
export function pathLeafIndex<T>(path: readonly PathElement<T>[]): number {
  let idx = 0;
  let scale = 1;
  for (const el of path) {
    idx += el.index * scale;
    scale *= el.hashes.length + 1;
  }
  return idx;
}

function insertAt<T>(hashes: readonly T[], index: number, node: T): T[] {
  if (!Number.isInteger(index) || index < 0 || index > hashes.length) throw new RangeError('path index out of range');
  const out = hashes.slice();
  out.splice(index, 0, node);
  return out;
}

/** Root of a binary SHA256 path (comm_d tree). */
export function sha256PathRoot(leaf: Uint8Array, path: readonly PathElement<Uint8Array>[]): Uint8Array {
  let cur = leaf;
  for (const el of path) {
    if (el.hashes.length !== 1) throw new RangeError('SHA256 paths are binary');
    const [l, r] = insertAt(el.hashes, el.index, cur);
    cur = sha256Node(l, r);
  }
  return cur;
}

/** Root of a Poseidon path; each level is hashed with the Poseidon of its own arity (8 base/sub, 2 top), natively
 *  when the addon is built (poseidon-native.ts). */
export function poseidonPathRoot(leaf: bigint, path: readonly PathElement<bigint>[]): bigint {
  let cur = leaf;
  for (const el of path) cur = fastPoseidonHash(insertAt(el.hashes, el.index, cur));
  return cur;
}

/** True when the proof's path leads from its leaf to its root. */
export function verifySha256Proof(proof: MerkleProof<Uint8Array>): boolean {
  const r = sha256PathRoot(proof.leaf, fullPath(proof));
  return r.length === proof.root.length && r.every((b, i) => b === proof.root[i]);
}

export function verifyPoseidonProof(proof: MerkleProof<bigint>): boolean {
  return poseidonPathRoot(proof.leaf, fullPath(proof)) === proof.root;
}
