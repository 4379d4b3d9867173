/**
 * The one registry of sector sizes and proof ids: registered seal proofs (rust-filecoin-proofs-api
 * `RegisteredSealProof`) and the PoRep shape each implies (docs/filecoin.md §1), the size labels ("2KiB"), the
 * cuzk circuit id label ("2k": porep-2k) and the tree tag of the official parameter file names
 * ("8-0-0"), and the one parser of sector sizes. Ids: 0–4 V1, 5–9 V1_1, 10–14
 * V1_1_Feat_SyntheticPoRep, 15–19 V1_2_Feat_NonInteractivePoRep, in the size order 2 KiB, 8 MiB,
 * 512 MiB, 32 GiB, 64 GiB.
 */
export type SealProofVersion = 'V1' | 'V1_1' | 'V1_1_Feat_SyntheticPoRep' | 'V1_2_Feat_NonInteractivePoRep';

/** Shape of the Poseidon trees (tree_r_last and tree_c): oct base, optional sub level, optional top level. */
export interface TreeShape {
  readonly baseArity: 8;
  /** Arity of the sub-tree level (0 = none). */
  readonly subArity: 0 | 8;
  /** Arity of the top-tree level (0 = none). */
  readonly topArity: 0 | 2;
  /** Number of oct levels in each base tree (path length of `base_proof`). */
  readonly baseLevels: number;
}

export interface SealProofInfo {
  readonly name: string;
  readonly id: number;
  readonly version: SealProofVersion;
  readonly sectorSize: number;
  /** Sector size in 32-byte nodes. */
  readonly nodes: number;
  readonly layers: number;
  /** Partitions of the proof: the size's interactive count (V1, V1_1, Synthetic), or NI-PoRep's
   *  (13 for 2 KiB-512 MiB, 126 for 32/64 GiB: filecoin-proofs constants.rs
   *  get_porep_non_interactive_partitions). */
  readonly partitions: number;
  /** Challenges per partition: ⌈minimum challenges / partitions⌉ (filecoin-proofs parameters.rs
   *  select_challenges): 2 or 18 for every version, so NI-PoRep proves the same partition circuit. */
  readonly challengesPerPartition: number;
  /** How the challenges are derived: from (replica_id, seed) (V1, V1_1), from (replica_id, comm_r)
   *  without a seed (NI-PoRep), or chosen among the synthetic challenges (Synthetic; not proved here). */
  readonly challengeDerivation: 'interactive' | 'synthetic' | 'non-interactive';
  readonly tree: TreeShape;
  /** Height of the binary comm_d tree (path length). */
  readonly commDLevels: number;
  /** Key of `vanilla_proofs` in the C1 JSON (the V1 name of the size, e.g. "StackedDrg2KiBV1"). */
  readonly vanillaKey: string;
  /** V1 puts the DRG predecessor last; V1_1 and later put it first. */
  readonly drgPredecessorFirst: boolean;
  readonly porepId: Uint8Array;
}

/** One sector size: its names and the PoRep parameters every seal proof version of it shares. */
export interface SectorSize {
  /** The registry's label, as in the proof names: "2KiB", "8MiB", "512MiB", "32GiB", "64GiB". */
  readonly label: string;
  readonly sectorSize: number;
  /** cuzk's circuit id label: porep-2k, porep-8m, porep-512m, porep-32g, porep-64g. */
  readonly circuitLabel: string;
  /** Tree tag of the official parameter file names (…-poseidon_hasher-8-0-0-sha256_hasher-…). */
  readonly paramsTreeTag: string;
  readonly layers: number;
  readonly partitions: number;
  readonly challenges: number;
  /** NI-PoRep's partitions and minimum challenge count (filecoin-proofs constants.rs
   *  get_porep_non_interactive_partitions / get_porep_non_interactive_minimum_challenges). */
  readonly niPartitions: number;
  readonly niMinChallenges: number;
  readonly tree: TreeShape;
}

const SIZES: readonly SectorSize[] = Object.freeze([
  { label: '2KiB', sectorSize: 2048, circuitLabel: '2k', paramsTreeTag: '8-0-0', layers: 2, partitions: 1, challenges: 2, niPartitions: 13, niMinChallenges: 26, tree: { baseArity: 8, subArity: 0, topArity: 0, baseLevels: 2 } },
  { label: '8MiB', sectorSize: 8 << 20, circuitLabel: '8m', paramsTreeTag: '8-0-0', layers: 2, partitions: 1, challenges: 2, niPartitions: 13, niMinChallenges: 26, tree: { baseArity: 8, subArity: 0, topArity: 0, baseLevels: 6 } },
  { label: '512MiB', sectorSize: 512 << 20, circuitLabel: '512m', paramsTreeTag: '8-0-0', layers: 2, partitions: 1, challenges: 2, niPartitions: 13, niMinChallenges: 26, tree: { baseArity: 8, subArity: 0, topArity: 0, baseLevels: 8 } },
  { label: '32GiB', sectorSize: 32 * 2 ** 30, circuitLabel: '32g', paramsTreeTag: '8-8-0', layers: 11, partitions: 10, challenges: 18, niPartitions: 126, niMinChallenges: 2253, tree: { baseArity: 8, subArity: 8, topArity: 0, baseLevels: 9 } },
  { label: '64GiB', sectorSize: 64 * 2 ** 30, circuitLabel: '64g', paramsTreeTag: '8-8-2', layers: 11, partitions: 10, challenges: 18, niPartitions: 126, niMinChallenges: 2253, tree: { baseArity: 8, subArity: 8, topArity: 2, baseLevels: 9 } },
] as const satisfies readonly SectorSize[]);

/** Every sector size, smallest first. */
export function allSectorSizes(): readonly SectorSize[] {
  return SIZES;
}

/** The sector size of a byte count; undefined when it is none of the five. */
export function sectorSizeByBytes(bytes: number): SectorSize | undefined {
  return SIZES.find((s) => s.sectorSize === bytes);
}

/** The sector size of a cuzk circuit id label ("2k", "32g"); undefined when unknown. */
export function sectorSizeByCircuitLabel(label: string): SectorSize | undefined {
  return SIZES.find((s) => s.circuitLabel === label);
}

/**
 * The one sector-size parser, for what people type: "2KiB", "2kib", "2 KiB", "2KB", "2K", "8MiB", "512MB",
 * "32G", "32GiB", "2048", "2048B" or 2048. KB/MB/GB mean KiB/MiB/GiB here (sector sizes are powers of two:
 * nobody means 2,000 bytes). The size when it is one of the five, else undefined (callers refuse it with
 * sectorSizeRefusal).
 */
export function parseSectorSize(size: string | number): SectorSize | undefined {
  if (typeof size === 'number') return sectorSizeByBytes(size);
  const m = /^(\d+)\s*(?:([KMGT])(?:i?B)?|B)?$/i.exec(size.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? '').toUpperCase();
  const mult = unit === 'K' ? 1024 : unit === 'M' ? 2 ** 20 : unit === 'G' ? 2 ** 30 : unit === 'T' ? 2 ** 40 : 1;
  return sectorSizeByBytes(Number(m[1]) * mult);
}

/** The one wording of a refused sector size, `option` the flag it came with ("--sector-size"; none: a value
 *  read from a file). */
export function sectorSizeRefusal(value: string | number, option?: string): string {
  const shown = typeof value === 'number' ? `${value} bytes` : `'${value}'`;
  return `${option === undefined ? '' : `${option} `}${shown}: not a Filecoin sector size (${SIZES.map((s) => s.label).join(', ')}; also written 2KB, 2K, 32G or in bytes, 2048)`;
}

const VERSIONS: readonly SealProofVersion[] = ['V1', 'V1_1', 'V1_1_Feat_SyntheticPoRep', 'V1_2_Feat_NonInteractivePoRep'];

/** porep_id = registered proof id as u64 LE ‖ nonce as u64 LE ‖ 16 zero bytes (nonce is 0 for all of them). */
export function porepIdFor(id: number, nonce = 0n): Uint8Array {
  const out = new Uint8Array(32);
  const dv = new DataView(out.buffer);
  dv.setBigUint64(0, BigInt(id), true);
  dv.setBigUint64(8, nonce, true);
  return out;
}

function build(): Map<string, SealProofInfo> {
  const m = new Map<string, SealProofInfo>();
  VERSIONS.forEach((version, vi) => {
    SIZES.forEach((s, si) => {
      const id = vi * 5 + si;
      const name = `StackedDrg${s.label}${version}`;
      const nodes = s.sectorSize / 32;
      const ni = version === 'V1_2_Feat_NonInteractivePoRep';
      m.set(name, Object.freeze({
        name,
        id,
        version,
        sectorSize: s.sectorSize,
        nodes,
        layers: s.layers,
        partitions: ni ? s.niPartitions : s.partitions,
        challengesPerPartition: ni ? Math.ceil(s.niMinChallenges / s.niPartitions) : s.challenges,
        challengeDerivation: ni ? 'non-interactive' : version === 'V1_1_Feat_SyntheticPoRep' ? 'synthetic' : 'interactive',
        tree: Object.freeze(s.tree),
        commDLevels: Math.log2(nodes),
        vanillaKey: `StackedDrg${s.label}V1`,
        drgPredecessorFirst: version !== 'V1',
        porepId: porepIdFor(id),
      }));
    });
  });
  return m;
}

const BY_NAME = build();

/** Looks a registered seal proof up by its name (e.g. "StackedDrg32GiBV1_1"); undefined when unknown. */
export function sealProofInfo(name: string): SealProofInfo | undefined {
  return BY_NAME.get(name);
}

export function sealProofById(id: number): SealProofInfo | undefined {
  for (const info of BY_NAME.values()) if (info.id === id) return info;
  return undefined;
}

export function allSealProofs(): SealProofInfo[] {
  return [...BY_NAME.values()];
}

/** A registered proof named by its numeric id ("3") or its name (case-insensitive), among ids 0..count-1:
 *  RegisteredPoStProof and RegisteredUpdateProof as filecoin-ffi numbers and names them; undefined when none. */
export function registeredByIdOrName<T>(s: string | number, count: number, byId: (id: number) => T | undefined, nameOf: (p: T) => string): T | undefined {
  const t = String(s).trim();
  if (/^\d+$/.test(t)) return byId(Number(t));
  for (let id = 0; id < count; id++) {
    const p = byId(id);
    if (p !== undefined && nameOf(p).toLowerCase() === t.toLowerCase()) return p;
  }
  return undefined;
}

/** `--miner-id` (or any option naming a miner): an ID address (f01234, t01234) or an actor id (1234); 0 when not
 *  given. A RangeError names `option` and the value. */
export function parseMinerId(option: string, v: string | undefined): number {
  if (v === undefined) return 0;
  const m = /^(?:[ft]0)?(\d{1,16})$/.exec(v.trim());
  if (m === null || !Number.isSafeInteger(Number(m[1]))) throw new RangeError(`${option} must be an ID address (f01234) or an actor id (1234), got '${v}'`);
  return Number(m[1]);
}
