/**
 * The public input vector of one PoRep partition circuit (docs/filecoin.md §1, storage-proofs-porep
 * stacked/circuit/proof.rs `generate_public_inputs`): [replica_id, comm_d, comm_r], then per challenge
 * [c, drg parents ×6, exp parents ×8, c, c, c]. The verifier's implicit ONE is not included.
 */
import type { C1Output } from './c1.js';
import { DrgParents, ExpanderParents, porepChallenges } from './graph.js';
import { bytesToBigintLE } from './hash/fr32.js';

export class UnsupportedProofError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedProofError';
  }
}

/**
 * Challenges of partition `k`, derived as the verifier does: from (replica_id, seed) for interactive
 * PoRep, from (replica_id, comm_r) for NI-PoRep (graph.ts porepChallenges). A C1 marked
 * `statedChallenges` (INSECURE, benchmarks of synthetic NI C1s only) gives its vanilla proofs' own.
 */
export function partitionChallenges(c1: C1Output, k: number): number[] {
  const info = c1.registeredProof;
  if (!Number.isInteger(k) || k < 0 || k >= c1.partitions.length) throw new RangeError(`partition ${k} out of range`);
  if (c1.statedChallenges === true) return c1.partitions[k].map((p) => p.challenge);
  if (info.challengeDerivation === 'synthetic') {
    throw new UnsupportedProofError(`challenge derivation for ${info.name} (${info.version}) is not implemented`);
  }
  return porepChallenges(info, c1, c1.partitions[k].length, k);
}

export function partitionPublicInputs(c1: C1Output, k: number): bigint[] {
  const info = c1.registeredProof;
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  const out = [bytesToBigintLE(c1.replicaId), bytesToBigintLE(c1.commD), bytesToBigintLE(c1.commR)];
  for (const c of partitionChallenges(c1, k)) {
    const cc = BigInt(c);
    out.push(cc);
    for (const p of drg.parents(c)) out.push(BigInt(p));
    for (const p of exp.parents(c)) out.push(BigInt(p));
    out.push(cc, cc, cc);
  }
  return out;
}
