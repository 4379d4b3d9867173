/**
 * SnapDeals (EmptySectorUpdate, the SHA256/Poseidon `EmptySectorUpdateCompound` Curio and cuzk use; docs/filecoin.md §7),
 * as rust-fil-proofs v19 storage-proofs-update/src/constants.rs and vanilla.rs `PublicParams::from_sector_size` fix it:
 *  - partitions: ≤ 8 KiB 1, ≤ 32 KiB 2, ≤ 16 MiB 4, larger 16;
 *  - challenges per partition: ≤ 16 MiB 10, larger 86;
 *  - apex leaves per partition: ≤ 8 KiB 8, larger 128;
 *  - h (high bits of a node index that select rho) ∈ hs = [1;6] for ≤ 32 KiB, else [7, 8, 9, 10, 11, 12];
 *    h_default = hs[3]; the circuit takes h_select = 1 << index(h);
 *  - TreeR shapes per size (`validate_tree_r_shape`): the test sizes 1 KiB 8-4-0, 2 KiB 8-0-0, 4 KiB 8-2-0,
 *    8 KiB 8-4-0, 16 KiB 8-8-0, 32 KiB 8-8-2 and the published ones (8 MiB / 512 MiB 8-0-0, 16 MiB 8-2-0,
 *    32 GiB 8-8-0, 64 GiB 8-8-2).
 * RegisteredUpdateProof (filecoin-proofs-api): 0–4 = StackedDrg{2KiB,8MiB,512MiB,32GiB,64GiB}V1; kiln's circuit ids
 * are `snap-2k` … `snap-64g`. The parameter set identifier is `empty_sector_update::PublicParams{ sector_nodes: N }`
 * (the official file names come from src/filecoin/params-names.ts: `snapParamsFileName`).
 */
import { allSectorSizes, sectorSizeByCircuitLabel, type SectorSize } from '../registry.js';
import type { PoseidonTreeShape } from '../circuit/stacked.js';

/** Sector sizes in 32-byte nodes (constants.rs). */
export const SNAP_SECTOR_NODES = Object.freeze({
  '1KiB': 1 << 5,
  '2KiB': 1 << 6,
  '4KiB': 1 << 7,
  '8KiB': 1 << 8,
  '16KiB': 1 << 9,
  '32KiB': 1 << 10,
  '8MiB': 1 << 18,
  '16MiB': 1 << 19,
  '512MiB': 1 << 24,
  '32GiB': 1 << 30,
  '64GiB': 2 ** 31,
} as const);

const KIB8 = 1 << 8;
const KIB32 = 1 << 10;
const MIB16 = 1 << 19;

export const snapPartitionCount = (nodes: number): number => (nodes <= KIB8 ? 1 : nodes <= KIB32 ? 2 : nodes <= MIB16 ? 4 : 16);
export const snapChallengeCount = (nodes: number): number => (nodes <= MIB16 ? 10 : 86);
export const snapApexLeafCount = (nodes: number): number => (nodes <= KIB8 ? 8 : 128);
export const snapHs = (nodes: number): readonly number[] => (nodes <= KIB32 ? [1, 1, 1, 1, 1, 1] : [7, 8, 9, 10, 11, 12]);
export const snapHDefault = (nodes: number): number => snapHs(nodes)[3]!;

/** `h_select(sector_nodes, h)`: 1 << (first index of h in hs); a RangeError for an h the size does not allow. */
export function snapHSelect(nodes: number, h: number): number {
  const i = snapHs(nodes).indexOf(h);
  if (i < 0) throw new RangeError(`h = ${h} is not allowed for a sector of ${nodes} nodes (allowed: ${[...new Set(snapHs(nodes))].join(', ')})`);
  return 1 << i;
}

/** The TreeR shape rust-fil-proofs requires for a sector size (`validate_tree_r_shape`). */
export function snapTreeShape(nodes: number): PoseidonTreeShape {
  const arities: Record<number, [number, number]> = {
    [1 << 5]: [4, 0],
    [1 << 6]: [0, 0],
    [1 << 7]: [2, 0],
    [1 << 8]: [4, 0],
    [1 << 9]: [8, 0],
    [1 << 10]: [8, 2],
    [1 << 18]: [0, 0],
    [1 << 19]: [2, 0],
    [1 << 24]: [0, 0],
    [1 << 30]: [8, 0],
    [2 ** 31]: [8, 2],
  };
  const a = arities[nodes];
  if (!a) throw new RangeError(`${nodes} nodes is not a SnapDeals sector size`);
  const [subArity, topArity] = a;
  const baseLeaves = nodes / (subArity || 1) / (topArity || 1);
  const baseLevels = Math.log2(baseLeaves) / 3;
  if (!Number.isInteger(baseLevels)) throw new Error(`snap tree shape: ${baseLeaves} base leaves is not a power of 8`);
  return { baseArity: 8, baseLevels, subArity, topArity };
}

/** vanilla.rs `PublicParams` (plus the TreeR shape), from a sector size in nodes. */
export interface SnapParams {
  readonly sectorNodes: number;
  readonly challengeCount: number;
  /** log2(sector_nodes): TreeD's height. */
  readonly challengeBitLen: number;
  readonly partitionCount: number;
  readonly partitionBitLen: number;
  readonly apexLeafCount: number;
  readonly apexLeafBitLen: number;
  readonly hs: readonly number[];
  readonly tree: PoseidonTreeShape;
}

/** `PublicParams::from_sector_size(nodes · 32)`; a RangeError for a size storage-proofs-update does not allow. */
export function snapParams(nodes: number): SnapParams {
  const tree = snapTreeShape(nodes);
  const partitionCount = snapPartitionCount(nodes);
  const apexLeafCount = snapApexLeafCount(nodes);
  return Object.freeze({
    sectorNodes: nodes,
    challengeCount: snapChallengeCount(nodes),
    challengeBitLen: Math.log2(nodes),
    partitionCount,
    partitionBitLen: Math.log2(partitionCount),
    apexLeafCount,
    apexLeafBitLen: Math.log2(apexLeafCount),
    hs: snapHs(nodes),
    tree,
  });
}

/** `empty_sector_update::PublicParams::identifier()`. */
export function snapParamsIdentifier(nodes: number): string {
  return `empty_sector_update::PublicParams{ sector_nodes: ${nodes} }`;
}

/** A RegisteredUpdateProof. */
export interface SnapProofInfo {
  readonly id: number;
  /** "StackedDrg32GiBV1" (filecoin-proofs-api `RegisteredUpdateProof::StackedDrg32GiBV1`). */
  readonly name: string;
  readonly size: SectorSize;
  readonly params: SnapParams;
  /** kiln's circuit id: snap-2k, snap-8m, snap-512m, snap-32g, snap-64g. */
  readonly circuitId: string;
}

const PROOFS: readonly SnapProofInfo[] = Object.freeze(
  allSectorSizes().map((size, id) =>
    Object.freeze({ id, name: `StackedDrg${size.label}V1`, size, params: snapParams(size.sectorSize / 32), circuitId: `snap-${size.circuitLabel}` }),
  ),
);

/** RegisteredUpdateProof by id (0–4); undefined otherwise. */
export function snapProofById(id: number): SnapProofInfo | undefined {
  return Number.isInteger(id) ? PROOFS[id] : undefined;
}

export function allSnapProofs(): readonly SnapProofInfo[] {
  return PROOFS;
}

/** The registered proof of a circuit id (`snap-2k` … `snap-64g`); undefined when none. */
export function snapProofByCircuitId(circuitId: string): SnapProofInfo | undefined {
  const m = /^snap-([0-9a-z]+)$/.exec(circuitId);
  if (!m) return undefined;
  const size = sectorSizeByCircuitLabel(m[1]!);
  return size ? PROOFS.find((p) => p.size === size) : undefined;
}

/** The registered proof of a sector size in bytes; undefined when none. */
export function snapProofBySectorSize(bytes: number): SnapProofInfo | undefined {
  return PROOFS.find((p) => p.size.sectorSize === bytes);
}
