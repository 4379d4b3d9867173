/**
 * PoSt leaf challenges (rust-fil-proofs storage-proofs-post/src/fallback/{vanilla,utils}.rs,
 * `generate_leaf_challenge_inner` and `get_challenge_index`; docs/filecoin.md §6):
 *   leaf = LE_u64(SHA256(randomness ‖ LE_u64(sector_id) ‖ LE_u64(idx))[0..8]) mod (sector_size / 32)
 * with idx = n for WindowPoSt V1_2 and idx = sector_index·challenge_count + n for V1 (sector_index =
 * partition·sector_count + i, the sector's place in the whole PoSt). WinningPoSt asks 66 challenges of its one
 * sector (idx = n, n < 66). Curio masks the randomness (`[31] &= 0x3f`) before it sends it.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { WINNING_POST_CHALLENGE_COUNT } from './registry.js';
import type { PoStProofInfo } from './types.js';

function u64le(x: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, x), true);
  return out;
}

/** One leaf challenge: the index of a 32-byte node of the sector. */
export function postLeafChallenge(randomness: Uint8Array, sectorId: bigint, idx: bigint, sectorSize: number): number {
  if (randomness.length !== 32) throw new RangeError(`randomness must be 32 bytes, got ${randomness.length}`);
  const h = sha256.create().update(randomness).update(u64le(sectorId)).update(u64le(idx)).digest();
  const v = new DataView(h.buffer, h.byteOffset, 8).getBigUint64(0, true);
  return Number(v % BigInt(sectorSize / 32));
}

/**
 * The leaf challenges of one sector, in order: 66 for WinningPoSt, 10 for WindowPoSt. `sectorIndex` is the
 * sector's place in the whole WindowPoSt (partition·sector_count + position in the partition); V1_2 ignores it.
 */
export function postSectorChallenges(p: PoStProofInfo, randomness: Uint8Array, sectorId: bigint, sectorIndex = 0): number[] {
  const count = p.type === 'winning' ? WINNING_POST_CHALLENGE_COUNT : p.challengeCount;
  const base = p.type === 'window' && p.api === 'V1' ? BigInt(sectorIndex) * BigInt(count) : 0n;
  return Array.from({ length: count }, (_, n) => postLeafChallenge(randomness, sectorId, base + BigInt(n), p.size.sectorSize));
}

/**
 * WinningPoSt's sector challenge (rust-fil-proofs fallback/vanilla.rs `generate_sector_challenge`, n = 0 since
 * WINNING_POST_SECTOR_COUNT = 1): LE_u64(SHA256(prover_id ‖ randomness ‖ LE_u64(n))[0..8]) mod sector_set_len,
 * the position of the challenged sector in the miner's eligible sector set.
 */
export function winningPostSectorIndex(randomness: Uint8Array, proverId: Uint8Array, sectorSetLen: number, n = 0): number {
  if (randomness.length !== 32) throw new RangeError(`randomness must be 32 bytes, got ${randomness.length}`);
  if (proverId.length !== 32) throw new RangeError(`prover_id must be 32 bytes, got ${proverId.length}`);
  if (!Number.isInteger(sectorSetLen) || sectorSetLen <= 0) throw new RangeError('the sector set is empty');
  const h = sha256.create().update(proverId).update(randomness).update(u64le(BigInt(n))).digest();
  const v = new DataView(h.buffer, h.byteOffset, 8).getBigUint64(0, true);
  return Number(v % BigInt(sectorSetLen));
}
