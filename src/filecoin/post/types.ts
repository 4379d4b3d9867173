/**
 * FallbackPoSt (WinningPoSt / WindowPoSt) types shared by the vanilla-proof codec and generators
 * (vanilla.ts, challenges.ts, generate.ts) and the circuit and planner (circuit.ts, src/kinds/post/).
 * docs/filecoin.md §6 and §8; rust-fil-proofs v19 storage-proofs-post/src/fallback/.
 */
import type { MerkleProof } from '../tree/path.js';
import type { SectorSize } from '../registry.js';

/** Which use of the FallbackPoSt circuit. */
export type PoStType = 'winning' | 'window';

/** RegisteredPoStProof (filecoin-ffi / Go abi): 0–4 Winning V1, 5–9 Window V1, 10–14 Window V1_1 (= proofs-api V1_2). */
export interface PoStProofInfo {
  readonly id: number;
  readonly type: PoStType;
  /** API version of the challenge derivation: 'V1' (idx = sector_index·challenge_count + n) or 'V1_2' (idx = n). */
  readonly api: 'V1' | 'V1_2';
  readonly size: SectorSize;
  /** Challenges per sector (10 window, 66 winning as set up: 1 per unrolled sector proof). */
  readonly challengeCount: number;
  /** Sectors per partition circuit (window: 2 / 2349 / 2300; winning: 66 unrolled sector proofs). */
  readonly sectorCount: number;
}

/** One sector's vanilla proof as Curio sends it (bincode `FallbackPoStSectorProof`, docs/filecoin.md §8). Field elements
 *  are canonical Fr values (the 32-byte little-endian encodings parsed). */
export interface PoStSectorProof {
  readonly sectorId: bigint;
  readonly commR: bigint;
  /** The inclusion proofs of the challenged leaves in tree_r_last, in challenge order. */
  readonly inclusionProofs: readonly MerkleProof<bigint>[];
  readonly commC: bigint;
  readonly commRLast: bigint;
}
