/**
 * The FallbackPoSt proofs (docs/filecoin.md §6): RegisteredPoStProof ids (filecoin-ffi / Go abi), the circuit each one
 * uses, kiln's circuit ids (`winning-32g`, `wpost-32g`) and the official parameter identifier and file name.
 *  - 0–4: StackedDrgWinning{2KiB,8MiB,512MiB,32GiB,64GiB}V1 (API V1: WinningPoSt),
 *  - 5–9: StackedDrgWindow…V1 (API V1_0_0 challenge derivation),
 *  - 10–14: StackedDrgWindow…V1_1 (proofs-api V1_2: idx = n).
 * WinningPoSt asks 66 challenges of one sector; rust-fil-proofs sets its circuit up as 66 sector proofs of one
 * challenge each (`winning_post_setup_params`: sector_count = 66, challenge_count = 1).
 */
import { createHash } from 'node:crypto';
import { allSectorSizes, sectorSizeByCircuitLabel, type SectorSize } from '../registry.js';
import type { PoStProofInfo, PoStType } from './types.js';

export const WINDOW_POST_CHALLENGE_COUNT = 10;
export const WINNING_POST_CHALLENGE_COUNT = 66;
export const WINNING_POST_SECTOR_COUNT = 1;

/** Sectors per WindowPoSt partition (filecoin-proofs constants `WINDOW_POST_SECTOR_COUNT`). */
export function windowPostSectorCount(size: SectorSize): number {
  if (size.label === '32GiB') return 2349;
  if (size.label === '64GiB') return 2300;
  return 2;
}

function info(id: number): PoStProofInfo {
  const sizes = allSectorSizes();
  const size = sizes[id % 5]!;
  if (id < 5) return { id, type: 'winning', api: 'V1', size, challengeCount: 1, sectorCount: WINNING_POST_CHALLENGE_COUNT };
  return { id, type: 'window', api: id < 10 ? 'V1' : 'V1_2', size, challengeCount: WINDOW_POST_CHALLENGE_COUNT, sectorCount: windowPostSectorCount(size) };
}

const PROOFS: readonly PoStProofInfo[] = Object.freeze(Array.from({ length: 15 }, (_, id) => info(id)));

/** RegisteredPoStProof by id; undefined outside 0–14. */
export function postProofById(id: number): PoStProofInfo | undefined {
  return Number.isInteger(id) ? PROOFS[id] : undefined;
}

export function allPoStProofs(): readonly PoStProofInfo[] {
  return PROOFS;
}

/** The registered proof's name as in filecoin-ffi ("StackedDrgWindow32GiBV1_1"). */
export function postProofName(p: PoStProofInfo): string {
  const kind = p.type === 'winning' ? 'Winning' : 'Window';
  return `StackedDrg${kind}${p.size.label}${p.api === 'V1_2' ? 'V1_1' : 'V1'}`;
}

/** kiln's circuit id (the SRS cache key): `winning-<label>` or `wpost-<label>` (one circuit for V1 and V1_1). */
export function postCircuitId(p: PoStProofInfo): string {
  return `${p.type === 'winning' ? 'winning' : 'wpost'}-${p.size.circuitLabel}`;
}

/** The circuit a circuit id names (any registered proof of it: the V1_2 one for windows); undefined when none. */
export function postProofByCircuitId(circuitId: string): PoStProofInfo | undefined {
  const m = /^(winning|wpost)-([0-9a-z]+)$/.exec(circuitId);
  if (!m) return undefined;
  const size = sectorSizeByCircuitLabel(m[2]!);
  if (!size) return undefined;
  const type: PoStType = m[1] === 'winning' ? 'winning' : 'window';
  return PROOFS.find((p) => p.type === type && p.size === size && (type === 'winning' || p.api === 'V1_2'));
}

/** `FallbackPoSt::PublicParams{…}::identifier()` of the circuit. */
export function postParamsIdentifier(p: PoStProofInfo): string {
  return `FallbackPoSt::PublicParams{sector_size: ${p.size.sectorSize}, challenge_count: ${p.challengeCount}, sector_count: ${p.sectorCount}}`;
}

/** The official parameter file name, `v28-<prefix>-<sha256(identifier) hex>.params` (docs/filecoin.md §4, §6). */
export function postParamsFileName(p: PoStProofInfo, ext: 'params' | 'vk' | 'meta' = 'params'): string {
  const digest = createHash('sha256').update(postParamsIdentifier(p)).digest('hex');
  return `v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-${p.size.paramsTreeTag}-${digest}.${ext}`;
}
