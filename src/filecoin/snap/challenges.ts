/**
 * SnapDeals randomness out of circuit (storage-proofs-update challenges.rs and vanilla.rs), all Poseidon arity 2 with
 * the custom domain tag 1·2^40 (`POSEIDON_CONSTANTS_GEN_RANDOMNESS`, docs/filecoin.md §7):
 *  - phi = H(comm_d_new, comm_r_old);
 *  - rho(high) = H(phi, high), high = the h high bits of a node index (node >> (log2(nodes) − h));
 *  - challenges of partition k: digest_j = H(comm_r_new, k·digests_per_partition + j); each digest's little-endian
 *    bits are cut into chunks of (log2(nodes) − partition_bit_len) bits, floor(254 / chunk) chunks per digest, and
 *    each chunk is one challenge with k's bits above it (so every challenge of partition k lies in its 1/partitions
 *    of the sector).
 * The circuit derives the same bits (circuit.ts `genChallengeBits`).
 */
import { FR_MODULUS } from '../../field/layout.js';
import { FR_CAPACITY } from '../../gadgets/errors.js';
import { GEN_RANDOMNESS_DOMAIN_TAG, poseidonHash } from '../hash/poseidon.js';
import type { SnapParams } from './registry.js';

/** Poseidon arity 2 with the gen-randomness domain tag. */
export function genRandomnessHash(a: bigint, b: bigint): bigint {
  return poseidonHash([a, b], GEN_RANDOMNESS_DOMAIN_TAG);
}

/** `phi(comm_d_new, comm_r_old)`. */
export function snapPhi(commDNew: bigint, commROld: bigint): bigint {
  return genRandomnessHash(commDNew, commROld);
}

/** `rho(phi, high)`. */
export function snapRho(phi: bigint, high: number): bigint {
  return genRandomnessHash(phi, BigInt(high));
}

/** Random bits per challenge (the partition's bits are appended above them). */
export function snapRandomBitsPerChallenge(p: SnapParams): number {
  return p.challengeBitLen - p.partitionBitLen;
}

export function snapChallengesPerDigest(p: SnapParams): number {
  return Math.floor(FR_CAPACITY / snapRandomBitsPerChallenge(p));
}

/** `digests_per_partition = ceil(challenge_count / challenges_per_digest)`. */
export function snapDigestsPerPartition(p: SnapParams): number {
  return Math.ceil(p.challengeCount / snapChallengesPerDigest(p));
}

/** `Challenges::new(sector_nodes, comm_r_new, k)`: the challenge_count node indices of partition k. */
export function snapChallenges(p: SnapParams, commRNew: bigint, k: number): number[] {
  if (!Number.isInteger(k) || k < 0 || k >= p.partitionCount) throw new RangeError(`partition ${k} outside 0..${p.partitionCount - 1}`);
  if (commRNew < 0n || commRNew >= FR_MODULUS) throw new RangeError('comm_r_new is not a canonical field element');
  const bits = snapRandomBitsPerChallenge(p);
  const perDigest = snapChallengesPerDigest(p);
  const dpp = snapDigestsPerPartition(p);
  const out: number[] = [];
  const mask = (1n << BigInt(bits)) - 1n;
  let digest = 0n;
  for (let n = 0; n < p.challengeCount; n++) {
    const i = n % perDigest;
    if (i === 0) digest = genRandomnessHash(commRNew, BigInt(k * dpp + n / perDigest));
    const c = Number((digest >> BigInt(i * bits)) & mask);
    out.push(c + k * 2 ** bits);
  }
  return out;
}

/** The h high bits of a node index (`node >> (log2(nodes) − h)`). */
export function snapHighBits(p: SnapParams, node: number, h: number): number {
  return Math.floor(node / 2 ** (p.challengeBitLen - h));
}
