/**
 * Commit phase 1: the challenges (interactive from the seed, NI-PoRep from comm_r) and, per challenge, the vanilla proof laid
 * out exactly as rust-fil-proofs serialises it (docs/filecoin.md §3; field order from storage-proofs-core
 * merkle/proof.rs and storage-proofs-porep stacked/vanilla): `comm_d_proofs`, `comm_r_last_proof`,
 * `replica_column_proofs {c_x, drg_parents, exp_parents}`, `labeling_proofs`, `encoding_proof`.
 *
 * The proofs are read from a `SectorProofSource`, which a real seal (sealer.ts, every node stored)
 * and the synthetic builder (synthetic.ts, only the opened nodes stored) both implement.
 */
import { DrgParents, ExpanderParents, type ChallengeSeeds, labelParentOrder, porepChallenges } from '../graph.js';
import { frToBytesLE } from '../hash/fr32.js';
import type { SealProofInfo } from '../registry.js';
import type { MerkleProof, PathElement } from '../tree/path.js';
import { shapedProof } from './trees.js';

/** Everything commit phase 1 reads from a sealed sector. */
export interface SectorProofSource {
  readonly info: SealProofInfo;
  readonly replicaId: Uint8Array;
  readonly commD: Uint8Array;
  readonly commC: bigint;
  readonly commRLast: bigint;
  /** Data leaf (32 bytes, Fr32) of `node`. */
  dataLeaf(node: number): Uint8Array;
  commDPath(node: number): PathElement<Uint8Array>[];
  /** Label of `node` at 1-based `layer` (32 bytes). */
  label(layer: number, node: number): Uint8Array;
  /** Column hash of `node` (leaf of tree_c) and its path. */
  treeCLeaf(node: number): bigint;
  treeCPath(node: number): PathElement<bigint>[];
  /** Replica node (leaf of tree_r_last) and its path. */
  treeRLastLeaf(node: number): bigint;
  treeRLastPath(node: number): PathElement<bigint>[];
}

// ---------------------------------------------------------------------------------------------
// JSON pieces (plain values in serde's field order; every 32-byte value an array of 32 integers)

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const bytesJson = (b: Uint8Array): number[] => Array.from(b);
const frJson = (x: bigint): number[] => Array.from(frToBytesLE(x));

function pathJson<T>(path: readonly PathElement<T>[], enc: (x: T) => number[]): Json {
  return { path: path.map((el) => ({ hashes: el.hashes.map(enc), index: el.index })) };
}

/** `{"data": {"Single": {root, leaf, path}}}`, `{"data": {"Sub": {base_proof, sub_proof, root, leaf}}}` or Top. */
export function merkleProofJson<T>(proof: MerkleProof<T>, enc: (x: T) => number[]): Json {
  const root = enc(proof.root);
  const leaf = enc(proof.leaf);
  if (proof.shape === 'Single') return { data: { Single: { root, leaf, path: pathJson(proof.base, enc) } } };
  if (proof.shape === 'Sub') {
    return { data: { Sub: { base_proof: pathJson(proof.base, enc), sub_proof: pathJson(proof.sub, enc), root, leaf } } };
  }
  return {
    data: {
      Top: {
        base_proof: pathJson(proof.base, enc), sub_proof: pathJson(proof.sub, enc), top_proof: pathJson(proof.top, enc), root, leaf,
      },
    },
  };
}

function columnProofJson(src: SectorProofSource, node: number): Json {
  const rows: number[][] = [];
  for (let l = 1; l <= src.info.layers; l++) rows.push(bytesJson(src.label(l, node)));
  const proof = shapedProof(src.commC, src.treeCLeaf(node), src.treeCPath(node), src.info.tree);
  return { column: { index: node, rows, _h: null }, inclusion_proof: merkleProofJson(proof, frJson) };
}

/** The 37 parent labels hashed into `node`'s label at `layer` (DRG parents of this layer, expander parents of the previous). */
export function labelingParents(src: SectorProofSource, layer: number, drg: readonly number[], exp: readonly number[]): Uint8Array[] {
  const base = [...drg.map((p) => src.label(layer, p)), ...(layer > 1 ? exp.map((p) => src.label(layer - 1, p)) : [])];
  return labelParentOrder(layer).map((i) => base[i]);
}

/** The vanilla proof of one challenge. */
export function challengeProofJson(src: SectorProofSource, challenge: number, drgGraph: DrgParents, expGraph: ExpanderParents): Json {
  const { info } = src;
  const drg = drgGraph.parents(challenge);
  const exp = expGraph.parents(challenge);
  const commDProof = shapedProof(src.commD, src.dataLeaf(challenge), src.commDPath(challenge));
  const rLastProof = shapedProof(src.commRLast, src.treeRLastLeaf(challenge), src.treeRLastPath(challenge), info.tree);
  const labeling: Json[] = [];
  let last: Uint8Array[] = [];
  for (let layer = 1; layer <= info.layers; layer++) {
    last = labelingParents(src, layer, drg, exp);
    labeling.push({ parents: last.map(bytesJson), layer_index: layer, node: challenge });
  }
  return {
    comm_d_proofs: merkleProofJson(commDProof, bytesJson),
    comm_r_last_proof: merkleProofJson(rLastProof, frJson),
    replica_column_proofs: {
      c_x: columnProofJson(src, challenge),
      drg_parents: drg.map((p) => columnProofJson(src, p)),
      exp_parents: exp.map((p) => columnProofJson(src, p)),
    },
    labeling_proofs: labeling,
    encoding_proof: { parents: last.map(bytesJson), layer_index: info.layers, node: challenge },
  };
}

/** Challenges of every partition: [partition][i] (interactive from the seed, NI-PoRep from comm_r). */
export function sectorChallenges(info: SealProofInfo, seeds: ChallengeSeeds): number[][] {
  return Array.from({ length: info.partitions }, (_, k) => porepChallenges(info, seeds, info.challengesPerPartition, k));
}

export interface C1Inputs {
  readonly source: SectorProofSource;
  readonly commR: bigint;
  readonly seed: Uint8Array;
  readonly ticket: Uint8Array;
  /** The challenges opened, [partition][i]; default the derived ones (sectorChallenges). */
  readonly challenges?: readonly (readonly number[])[];
  readonly progress?: (done: number, total: number) => void;
}

/** The SealCommitPhase1Output JSON value, keys in lotus' order. */
export function buildC1Json({ source, commR, seed, ticket, progress, ...o }: C1Inputs): Json {
  const { info } = source;
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  const challenges = o.challenges ?? sectorChallenges(info, { replicaId: source.replicaId, seed, commR: frToBytesLE(commR) });
  const total = challenges.length * challenges[0].length;
  let done = 0;
  const partitions = challenges.map((part) => part.map((c) => {
    const j = challengeProofJson(source, c, drg, exp);
    progress?.(++done, total);
    return j;
  }));
  return {
    registered_proof: info.name,
    vanilla_proofs: { [info.vanillaKey]: partitions },
    comm_r: frJson(commR),
    comm_d: bytesJson(source.commD),
    replica_id: bytesJson(source.replicaId),
    seed: bytesJson(seed),
    ticket: bytesJson(ticket),
  };
}

/** lotus-bench's wrapper `{"SectorNum", "Phase1Out": base64(C1 JSON), "SectorSize"}` (+ "Miner" as the fixtures have it). */
export function commit2InJson(c1Text: string, sectorNum: number | bigint, sectorSize: number, miner?: string): string {
  const w: Record<string, Json> = {
    SectorNum: Number(sectorNum),
    Phase1Out: Buffer.from(c1Text, 'utf8').toString('base64'),
    SectorSize: sectorSize,
  };
  if (miner !== undefined) w.Miner = miner;
  return JSON.stringify(w);
}

/**
 * commit2InJson's bytes in pieces, for wrappers past V8's longest string (2^29 − 24 characters): a
 * 32 GiB NI-PoRep C1 (126 × 18 challenges) is ~490 MB of JSON and ~650 MB wrapped.
 */
export function commit2InChunks(c1Text: string, sectorNum: number | bigint, sectorSize: number, miner?: string): Uint8Array[] {
  const head = `{"SectorNum":${JSON.stringify(Number(sectorNum))},"Phase1Out":"`;
  const tail = `","SectorSize":${JSON.stringify(sectorSize)}${miner !== undefined ? `,"Miner":${JSON.stringify(miner)}` : ''}}`;
  const bytes = Buffer.from(c1Text, 'utf8');
  const step = 3 << 22; // a multiple of 3: no padding inside
  const chunks: Uint8Array[] = [Buffer.from(head)];
  for (let o = 0; o < bytes.length; o += step) chunks.push(Buffer.from(bytes.subarray(o, o + step).toString('base64'), 'latin1'));
  chunks.push(Buffer.from(tail));
  return chunks;
}

/** What a seal or synthetic C1 gives of its Commit2In, made when asked for. */
export interface Commit2InOutput {
  /** The Commit2In wrapper text (what `kiln seal --out` writes); past V8's longest string (a 32 GiB
   *  NI-PoRep C1) asking for it throws: use commit2InChunks. */
  readonly commit2In: string;
  /** The same bytes in pieces, any size. */
  commit2InChunks(): Uint8Array[];
}

/** `r` with its Commit2In (commit2In, commit2InChunks) made from `c1Text` when asked for. */
export function withCommit2In<T extends object>(r: T, c1Text: string, sectorNum: bigint, sectorSize: number, miner: string | undefined): T & Commit2InOutput {
  let text: string | undefined;
  return Object.defineProperties(r, {
    commit2In: { enumerable: true, get: () => (text ??= commit2InJson(c1Text, sectorNum, sectorSize, miner)) },
    commit2InChunks: { value: () => commit2InChunks(c1Text, sectorNum, sectorSize, miner) },
  }) as T & Commit2InOutput;
}
