/**
 * The official parameter file names of every circuit kiln knows (docs/filecoin.md §4): rust-fil-proofs names a
 * circuit's files `v28-<cache prefix>-<hex SHA-256 of PublicParams::identifier()>.{params,vk,meta}`
 * (storage-proofs-core parameter_cache.rs). The identifiers and prefixes, from rust-fil-proofs:
 *  - PoRep (storage-proofs-porep stacked/vanilla/params.rs, graph.rs; storage-proofs-core drgraph.rs):
 *    `layered_drgporep::PublicParams{ graph: stacked_graph::StackedGraph{expansion_degree: 8 base_graph:
 *    drgraph::BucketGraph{size: N; degree: 6; hasher: poseidon_hasher} }, challenges: LayerChallenges {
 *    layers: L, max_count: C }, tree: merkletree-poseidon_hasher-8-8-0 }`, prefix
 *    `stacked-proof-of-replication-<tree>-sha256_hasher` (stacked/circuit/proof.rs cache_prefix). One
 *    file per sector size: V1, V1_1 and Synthetic PoRep share it (the porep id is not in the identifier).
 *  - PoSt: src/filecoin/post/registry.ts (`FallbackPoSt::PublicParams{…}`).
 *  - SnapDeals (storage-proofs-update vanilla.rs, compound.rs): `empty_sector_update::PublicParams{
 *    sector_nodes: N }`, prefix `empty-sector-update-<tree>`; the 32/64 GiB sizes also have the
 *    `empty-sector-update-poseidon-<tree>` variant (poseidon/compound.rs), same identifier.
 * Pinned against rust-fil-proofs' parameters.json in test/params-names.test.ts.
 */
import { createHash } from 'node:crypto';
import { allPoStProofs, postCircuitId, postParamsFileName, postParamsIdentifier, postProofName } from './post/registry.js';
import { allSectorSizes, type SectorSize } from './registry.js';

/** BASE_DEGREE and EXP_DEGREE of storage-proofs-porep's stacked graph. */
export const DRG_BASE_DEGREE = 6;
export const EXP_DEGREE = 8;
/** The parameter-cache version of the file names (storage-proofs-core VERSION). */
export const PARAMS_VERSION = 28;

export type ParamsExt = 'params' | 'vk' | 'meta';

export interface OfficialCircuit {
  /** kiln's circuit id (`porep-32g`, `wpost-32g`, `winning-32g`, `snap-32g`, `snap-poseidon-32g`). */
  readonly circuitId: string;
  readonly kind: 'porep' | 'winning' | 'window' | 'snap';
  /** Which proofs use it, in words (registered proof names). */
  readonly serves: string;
  readonly sectorSize: number;
  readonly identifier: string;
  readonly prefix: string;
  /** `v28-<prefix>-<sha256(identifier)>.params`. */
  readonly fileName: string;
}

export function paramsFileName(prefix: string, identifier: string, ext: ParamsExt = 'params'): string {
  return `v${PARAMS_VERSION}-${prefix}-${createHash('sha256').update(identifier).digest('hex')}.${ext}`;
}

function treeDisplay(s: SectorSize): string {
  return `merkletree-poseidon_hasher-${s.paramsTreeTag}`;
}

/** The stacked DRG PoRep's `PublicParams::identifier()` for a sector size (interactive challenges). */
export function porepParamsIdentifier(s: SectorSize): string {
  const nodes = s.sectorSize / 32;
  const graph = `stacked_graph::StackedGraph{expansion_degree: ${EXP_DEGREE} base_graph: drgraph::BucketGraph{size: ${nodes}; degree: ${DRG_BASE_DEGREE}; hasher: poseidon_hasher} }`;
  return `layered_drgporep::PublicParams{ graph: ${graph}, challenges: LayerChallenges { layers: ${s.layers}, max_count: ${s.challenges} }, tree: ${treeDisplay(s)} }`;
}

export function porepParamsPrefix(s: SectorSize): string {
  return `stacked-proof-of-replication-${treeDisplay(s)}-sha256_hasher`;
}

/** The official PoRep parameter file name of a sector size (bytes or SectorSize). */
export function porepParamsFileName(s: SectorSize, ext: ParamsExt = 'params'): string {
  return paramsFileName(porepParamsPrefix(s), porepParamsIdentifier(s), ext);
}

export function snapParamsIdentifier(s: SectorSize): string {
  return `empty_sector_update::PublicParams{ sector_nodes: ${s.sectorSize / 32} }`;
}

export function snapParamsPrefix(s: SectorSize, poseidon = false): string {
  return `empty-sector-update-${poseidon ? 'poseidon-' : ''}${treeDisplay(s)}`;
}

export function snapParamsFileName(s: SectorSize, poseidon = false, ext: ParamsExt = 'params'): string {
  return paramsFileName(snapParamsPrefix(s, poseidon), snapParamsIdentifier(s), ext);
}

/** Every official circuit kiln can name: PoRep, WinningPoSt, WindowPoSt, SnapDeals (both variants at 32/64 GiB). */
export function allOfficialCircuits(): OfficialCircuit[] {
  const out: OfficialCircuit[] = [];
  for (const s of allSectorSizes()) {
    const identifier = porepParamsIdentifier(s);
    const prefix = porepParamsPrefix(s);
    out.push({
      circuitId: `porep-${s.circuitLabel}`,
      kind: 'porep',
      serves: `StackedDrg${s.label}V1, V1_1, V1_1_Feat_SyntheticPoRep (PoRep C2)`,
      sectorSize: s.sectorSize,
      identifier,
      prefix,
      fileName: paramsFileName(prefix, identifier),
    });
  }
  const seen = new Set<string>();
  for (const p of allPoStProofs()) {
    const circuitId = postCircuitId(p);
    const fileName = postParamsFileName(p);
    if (seen.has(fileName)) continue;
    seen.add(fileName);
    const serves = allPoStProofs()
      .filter((q) => postParamsFileName(q) === fileName)
      .map(postProofName)
      .join(', ');
    out.push({
      circuitId,
      kind: p.type,
      serves,
      sectorSize: p.size.sectorSize,
      identifier: postParamsIdentifier(p),
      prefix: `proof-of-spacetime-fallback-${treeDisplay(p.size)}`,
      fileName,
    });
  }
  for (const s of allSectorSizes()) {
    const identifier = snapParamsIdentifier(s);
    const variants = s.sectorSize >= 32 * 2 ** 30 ? [false, true] : [false];
    for (const poseidon of variants) {
      out.push({
        circuitId: `snap-${poseidon ? 'poseidon-' : ''}${s.circuitLabel}`,
        kind: 'snap',
        serves: `RegisteredUpdateProof StackedDrg${s.label}V1${poseidon ? ' (the empty-sector-update-poseidon circuit)' : ''}`,
        sectorSize: s.sectorSize,
        identifier,
        prefix: snapParamsPrefix(s, poseidon),
        fileName: snapParamsFileName(s, poseidon),
      });
    }
  }
  return out;
}

/** The official circuit a file name belongs to (`.params`, `.vk` or `.meta`); undefined for other names. */
export function officialCircuitOfFile(fileName: string): OfficialCircuit | undefined {
  const base = fileName.replace(/\.(params|vk|meta)$/, '.params');
  return allOfficialCircuits().find((c) => c.fileName === base);
}
