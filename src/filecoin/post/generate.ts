/**
 * WindowPoSt and WinningPoSt vanilla proofs of sectors kiln sealed (`kiln seal --sector-dir`), as
 * rust-fil-proofs builds them (filecoin-proofs api/post_util.rs `generate_fallback_sector_challenges` and
 * `generate_single_vanilla_proof`, storage-proofs-post fallback/vanilla.rs):
 *  - the challenged leaves from the randomness (challenges.ts),
 *  - for each, the inclusion proof of that leaf of tree_r_last, laid out Single/Sub/Top for the sector size,
 *  - comm_c and comm_r_last of the sector, comm_r = Poseidon2(comm_c, comm_r_last),
 * each serialised as the raw bincode `FallbackPoStSectorProof` Curio sends (vanilla.ts).
 *
 * WindowPoSt: the sectors are the proving set in ascending sector id order (rust-fil-proofs keeps replicas in a
 * BTreeMap); partition k holds sectors [k·sector_count, (k+1)·sector_count), one element per sector. WinningPoSt:
 * with several sectors, the challenged one is chosen as `generate_winning_post_sector_challenge` does, and its
 * 66 challenges give one element.
 */
import { proverIdFromActorId } from '../graph.js';
import { sectorTreeLeaf, sectorTreePath, type SealedSectorData } from '../seal/sector-store.js';
import { shapedProof } from '../seal/trees.js';
import type { PathElement } from '../tree/path.js';
import { bytesToBigintLE } from '../hash/fr32.js';
import { FR_MODULUS } from '../../field/layout.js';
import { postSectorChallenges, winningPostSectorIndex } from './challenges.js';
import { postProofName } from './registry.js';
import type { PoStProofInfo, PoStSectorProof } from './types.js';
import { serializePoStSectorProof } from './vanilla.js';

/** A bad request for vanilla proofs (sizes that do not match, randomness not a field element, …). */
export class PoStGenerateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoStGenerateError';
  }
}

/** What a sector proof needs of a sector. */
export interface PoStSectorSource {
  readonly sectorId: bigint;
  readonly commC: bigint;
  readonly commRLast: bigint;
  readonly commR: bigint;
  leaf(index: number): bigint;
  /** The leaf's path in tree_r_last, bottom up. */
  path(index: number): PathElement<bigint>[];
}

export function sealedSectorSource(s: SealedSectorData): PoStSectorSource {
  return {
    sectorId: s.sectorNumber,
    commC: s.commC,
    commRLast: s.commRLast,
    commR: bytesToBigintLE(s.commR),
    leaf: (i) => sectorTreeLeaf(s, i),
    path: (i) => sectorTreePath(s, i),
  };
}

/** Randomness as the proofs use it: 32 bytes, a canonical field element (rust-fil-proofs `as_safe_commitment`). */
export function checkPoStRandomness(randomness: Uint8Array): Uint8Array {
  if (randomness.length !== 32) throw new PoStGenerateError(`randomness must be 32 bytes, got ${randomness.length}`);
  if (bytesToBigintLE(randomness) >= FR_MODULUS) {
    throw new PoStGenerateError('randomness is not a canonical field element (Curio masks it: randomness[31] &= 0x3f)');
  }
  return randomness;
}

/** One sector's vanilla proof (not serialised). `sectorIndex`: the sector's place in the whole PoSt (V1 window). */
export function postSectorProof(info: PoStProofInfo, src: PoStSectorSource, randomness: Uint8Array, sectorIndex = 0): PoStSectorProof {
  checkPoStRandomness(randomness);
  const challenges = postSectorChallenges(info, randomness, src.sectorId, sectorIndex);
  return {
    sectorId: src.sectorId,
    commR: src.commR,
    inclusionProofs: challenges.map((c) => shapedProof(src.commRLast, src.leaf(c), src.path(c), info.size.tree)),
    commC: src.commC,
    commRLast: src.commRLast,
  };
}

function checkSize(info: PoStProofInfo, s: SealedSectorData): void {
  if (s.info.sectorSize !== info.size.sectorSize) {
    throw new PoStGenerateError(`sector ${s.sectorNumber} is a ${s.info.name} sector; ${postProofName(info)} proves ${info.size.label} sectors`);
  }
}

/** WindowPoSt vanilla proofs: one array of elements per partition, sectors in ascending id order. */
export function windowPoStVanilla(info: PoStProofInfo, sectors: readonly SealedSectorData[], randomness: Uint8Array): Uint8Array[][] {
  if (info.type !== 'window') throw new PoStGenerateError(`${postProofName(info)} is not a WindowPoSt proof`);
  if (sectors.length === 0) throw new PoStGenerateError('no sectors');
  checkPoStRandomness(randomness);
  const sorted = [...sectors].sort((a, b) => (a.sectorNumber < b.sectorNumber ? -1 : a.sectorNumber > b.sectorNumber ? 1 : 0));
  sorted.forEach((s, i) => {
    checkSize(info, s);
    if (i > 0 && sorted[i - 1]!.sectorNumber === s.sectorNumber) throw new PoStGenerateError(`sector ${s.sectorNumber} is given twice`);
  });
  const partitions: Uint8Array[][] = [];
  sorted.forEach((s, i) => {
    const k = Math.floor(i / info.sectorCount);
    (partitions[k] ??= []).push(serializePoStSectorProof(postSectorProof(info, sealedSectorSource(s), randomness, i), info));
  });
  return partitions;
}

/** WinningPoSt vanilla proof: the challenged sector of the set (in the order given) and its one element. */
export function winningPoStVanilla(
  info: PoStProofInfo, sectors: readonly SealedSectorData[], randomness: Uint8Array,
): { readonly sectorIndex: number; readonly sectorId: bigint; readonly element: Uint8Array } {
  if (info.type !== 'winning') throw new PoStGenerateError(`${postProofName(info)} is not a WinningPoSt proof`);
  if (sectors.length === 0) throw new PoStGenerateError('no sectors');
  checkPoStRandomness(randomness);
  for (const s of sectors) checkSize(info, s);
  const miners = new Set(sectors.map((s) => s.minerId));
  if (miners.size > 1) throw new PoStGenerateError('the sectors of one WinningPoSt belong to one miner');
  const sectorIndex = winningPostSectorIndex(randomness, proverIdFromActorId(sectors[0]!.minerId), sectors.length);
  const s = sectors[sectorIndex]!;
  return { sectorIndex, sectorId: s.sectorNumber, element: serializePoStSectorProof(postSectorProof(info, sealedSectorSource(s), randomness), info) };
}
