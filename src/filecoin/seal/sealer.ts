/**
 * A real seal of a small sector (2 KiB, 8 MiB, 512 MiB), everything in memory:
 * parents → comm_d tree → SDR labels of every layer → column hashes and tree_c → encoding and
 * tree_r_last → comm_r = Poseidon2(comm_c, comm_r_last) → commit phase 1 → lotus-bench's Commit2In.
 *
 * Memory is about (layers + 2) × sector size for labels and the data/comm_d tree, plus the parent
 * table (56 B per node) and two bigint trees (~100 B per leaf each).
 */
import { hash as nodeHash } from 'node:crypto';
import { FR_MODULUS } from '../../field/layout.js';
import { DRG_DEGREE, actorIdFromAddress, proverIdFromActorId, replicaId as computeReplicaId } from '../graph.js';
import { frToBytesLE } from '../hash/fr32.js';
import type { SealProofInfo, SealProofVersion } from '../registry.js';
import type { PathElement } from '../tree/path.js';
import { buildC1Json, type Commit2InOutput, type Json, type SectorProofSource, withCommit2In } from './commit1.js';
import {
  SEALABLE_SIZES, SealOptionError, check32, deriveKey, prepareSectorData, randomSectorData, resolveSealProof, rngSeedBytes,
} from './options.js';
import { BASE_DEGREE, buildParentTable } from './parents.js';
import { fastPoseidon, readFrLE, writeFrLE } from './poseidon-fast.js';
import { poseidonPool, sharedBytes, type PoseidonBatch } from './poseidon-pool.js';
import { DensePoseidonTree, DenseSha256Tree } from './trees.js';
import type { SealedSectorData } from './sector-store.js';
import { shapeArities } from '../tree/build.js';

/** Called as the slow steps advance; `stage` names the step (stable strings, see SEAL_STAGES). */
export type SealProgress = (stage: string, done: number, total: number) => void;

/** Stages reported by `sealSector`, in order ("labels layer N" once per layer). */
export const SEAL_STAGES = ['parents', 'comm_d tree', 'labels layer N', 'column hashes', 'tree_c', 'tree_r_last', 'commit1'] as const;

/** lotus-bench's interactive seed: 1..31 then 255. */
export const DEFAULT_SEED: Uint8Array = Uint8Array.from([...Array.from({ length: 31 }, (_, i) => i + 1), 255]);

/** What a real seal and a synthetic C1 share. */
export interface SectorOptions {
  /** A registry size ("2KiB" … "64GiB") or the byte count; with `version` (V1_1 by default). */
  readonly sectorSize?: string | number;
  readonly version?: SealProofVersion;
  /** Or the registered proof's full name, e.g. "StackedDrg2KiBV1_1". */
  readonly registeredProof?: string;
  /** Seeds the pseudo-random values (data, default ticket, …). Default "0". */
  readonly rngSeed?: Uint8Array | string | number | bigint;
  /** Miner actor id (default 1000) or an ID address "f0…". */
  readonly miner?: bigint | number | string;
  readonly sectorNumber?: number | bigint;
  /** 32 bytes; default derived from rngSeed. */
  readonly ticket?: Uint8Array;
  /** Interactive seed, 32 bytes; default lotus-bench's [1, 2, …, 31, 255]. */
  readonly seed?: Uint8Array;
  /** Add "Miner" to the Commit2In wrapper, as the fixtures do (default true). */
  readonly includeMiner?: boolean;
  /** Worker threads for the Poseidon stages (default: the machine's parallelism; 1 = in-thread). */
  readonly threads?: number;
  readonly progress?: SealProgress;
}

export interface SealOptions extends SectorOptions {
  /** Padded (sectorSize bytes, Fr32) or unpadded (127/128 of it) data; random when absent. */
  readonly data?: Uint8Array;
  /** Keep what the sector's later PoSt proofs need (the replica, tree_r_last, comm_c) in `SealResult.sector`. */
  readonly keepSector?: boolean;
}

export interface SealTimings {
  /** Milliseconds per stage, in order. */
  readonly [stage: string]: number;
}

export interface SealResult extends Commit2InOutput {
  readonly info: SealProofInfo;
  /** The C1 (SealCommitPhase1Output) JSON text, as inside Phase1Out. */
  readonly c1Text: string;
  /** The same as a JSON value. */
  readonly c1: Json;
  readonly commD: Uint8Array;
  readonly commR: Uint8Array;
  readonly replicaId: Uint8Array;
  readonly timings: SealTimings;
  /** With `keepSector`: the sector's PoSt material (write it with writeSectorDir). */
  readonly sector?: SealedSectorData;
}

/** Miner id from a number/bigint or an "f0…"/"t0…" address. */
export function minerActorId(miner: bigint | number | string | undefined): bigint {
  if (miner === undefined) return 1000n;
  if (typeof miner === 'string') {
    if (/^\d+$/.test(miner.trim())) return BigInt(miner.trim());
    try {
      return actorIdFromAddress(miner.trim());
    } catch (e) {
      throw new SealOptionError(`miner: ${(e as Error).message}`);
    }
  }
  const v = BigInt(miner);
  if (v < 0n || v >= 1n << 64n) throw new SealOptionError('miner: actor id must be a u64');
  return v;
}

/** SDR labels of every layer (flat, 32 bytes per node), as rust-fil-proofs `create_label` / `create_label_exp`. */
export function labelLayers(
  replicaId: Uint8Array, nodes: number, layers: number, parents: Uint32Array,
  progress?: (layer: number, done: number, total: number) => void,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  const buf = new Uint8Array(64 + 37 * 32);
  buf.set(replicaId, 0);
  const dv = new DataView(buf.buffer);
  const head = buf.subarray(0, 64);
  for (let layer = 1; layer <= layers; layer++) {
    const cur = new Uint8Array(nodes * 32);
    const prev = layer > 1 ? out[layer - 2] : undefined;
    dv.setUint32(32, layer, false);
    const degree = layer === 1 ? DRG_DEGREE : BASE_DEGREE;
    const blockBytes = degree * 32;
    for (let v = 0; v < nodes; v++) {
      dv.setUint32(36, Math.floor(v / 2 ** 32), false);
      dv.setUint32(40, v >>> 0, false);
      let h: Uint8Array;
      if (v === 0) {
        h = nodeHash('sha256', head, 'buffer'); // node 0 hashes no parents
      } else {
        const o = v * BASE_DEGREE;
        for (let j = 0; j < DRG_DEGREE; j++) {
          const p = parents[o + j] * 32;
          buf.set(cur.subarray(p, p + 32), 64 + j * 32);
        }
        if (prev !== undefined) {
          for (let j = DRG_DEGREE; j < BASE_DEGREE; j++) {
            const p = parents[o + j] * 32;
            buf.set(prev.subarray(p, p + 32), 64 + j * 32);
          }
        }
        // repeat the base parents to 37 (labelParentOrder)
        for (let at = 64 + blockBytes; at < buf.length; at += blockBytes) {
          buf.copyWithin(at, 64, 64 + Math.min(blockBytes, buf.length - at));
        }
        h = nodeHash('sha256', buf, 'buffer');
      }
      h[31] &= 0x3f;
      cur.set(h, v * 32);
      if (progress !== undefined && (v + 1) % 16384 === 0) progress(layer, v + 1, nodes);
    }
    progress?.(layer, nodes, nodes);
    out.push(cur);
  }
  return out;
}

/** Column hashes: Poseidon(label_1(v), …, label_L(v)) for every node, as a flat LE buffer. */
export function columnHashes(labels: readonly Uint8Array[], nodes: number, batch: PoseidonBatch, progress?: (done: number, total: number) => void): Uint8Array {
  const layers = labels.length;
  // interleaved so that each column is one contiguous group (freed when this returns)
  const colIn = sharedBytes(nodes * layers * 32);
  for (let v = 0; v < nodes; v++) {
    for (let l = 0; l < layers; l++) colIn.set(labels[l].subarray(v * 32, v * 32 + 32), (v * layers + l) * 32);
  }
  return batch.hashGroups(colIn, layers, progress);
}

/** Seals one sector in memory and runs commit phase 1. */
export function sealSector(opts: SealOptions): SealResult {
  const info = resolveSealProof(opts);
  if (!SEALABLE_SIZES.some((s) => info.name.startsWith(`StackedDrg${s}`))) {
    throw new SealOptionError(`${info.name}: a real seal supports ${SEALABLE_SIZES.join(', ')} only (use synth-c1 for larger sizes)`);
  }
  const rng = rngSeedBytes(opts.rngSeed);
  const ticket = opts.ticket !== undefined ? check32(opts.ticket, 'ticket') : deriveKey('kiln seal ticket', rng);
  const seed = opts.seed !== undefined ? check32(opts.seed, 'seed') : DEFAULT_SEED;
  const actorId = minerActorId(opts.miner);
  const sectorNumber = BigInt(opts.sectorNumber ?? 0);
  if (sectorNumber < 0n || sectorNumber >= 1n << 64n) throw new SealOptionError('sector number must be a u64');
  const data = opts.data !== undefined ? prepareSectorData(opts.data, info.sectorSize) : randomSectorData(info.sectorSize, rng);
  const report = opts.progress;
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (stage: string): void => {
    const t = performance.now();
    timings[stage] = Math.round(t - t0);
    t0 = t;
  };
  const { nodes, layers } = info;
  let treeC: DensePoseidonTree;
  let treeR: DensePoseidonTree;

  // 56 bytes per node (940 MiB at 512 MiB): dropped once the labels are done
  let parents: Uint32Array | undefined = buildParentTable(info.porepId, nodes, info.drgPredecessorFirst, report && ((d, t) => report('parents', d, t)));
  lap('parents');
  const treeD = new DenseSha256Tree(data, report && ((d, t) => report('comm_d tree', d, t)));
  const commD = treeD.root;
  lap('comm_d tree');
  const proverId = proverIdFromActorId(actorId);
  const replicaId = computeReplicaId(proverId, sectorNumber, ticket, commD, info.porepId);
  const labels = labelLayers(replicaId, nodes, layers, parents, report && ((l, d, t) => report(`labels layer ${l}`, d, t)));
  parents = undefined;
  lap('labels');

  const batch = opts.threads === undefined ? poseidonPool() : poseidonPool(opts.threads);
  try {
    const columns = columnHashes(labels, nodes, batch, report && ((d, t) => report('column hashes', d, t)));
    lap('column hashes');
    const arities = shapeArities(info.tree);
    treeC = new DensePoseidonTree(columns, arities, batch, report && ((d, t) => report('tree_c', d, t)));
    lap('tree_c');

    // encoding: replica node = last label + data (both < 2^254, so one conditional subtraction)
    const last = labels[layers - 1];
    const replica = sharedBytes(nodes * 32);
    const dl = new DataView(last.buffer, last.byteOffset, last.byteLength);
    const dd = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const dr = new DataView(replica.buffer);
    for (let v = 0; v < nodes; v++) {
      const s = readFrLE(dl, v * 32) + readFrLE(dd, v * 32);
      writeFrLE(dr, v * 32, s >= FR_MODULUS ? s - FR_MODULUS : s);
    }
    treeR = new DensePoseidonTree(replica, arities, batch, report && ((d, t) => report('tree_r_last', d, t)));
  } finally {
    batch.close();
  }
  const commRBig = fastPoseidon([treeC.root, treeR.root]);
  lap('tree_r_last');

  const source: SectorProofSource = {
    info,
    replicaId,
    commD,
    commC: treeC.root,
    commRLast: treeR.root,
    dataLeaf: (v) => data.slice(v * 32, v * 32 + 32),
    commDPath: (v): PathElement<Uint8Array>[] => treeD.path(v),
    label: (layer, v) => labels[layer - 1].slice(v * 32, v * 32 + 32),
    treeCLeaf: (v) => treeC.leaf(v),
    treeCPath: (v) => treeC.path(v),
    treeRLastLeaf: (v) => treeR.leaf(v),
    treeRLastPath: (v) => treeR.path(v),
  };
  const c1 = buildC1Json({ source, commR: commRBig, seed, ticket, progress: report && ((d, t) => report('commit1', d, t)) });
  const c1Text = JSON.stringify(c1);
  lap('commit1');
  const commR = frToBytesLE(commRBig);
  const sector: SealedSectorData | undefined = opts.keepSector
    ? {
      info, sectorNumber, minerId: actorId, commD, commR, replicaId, ticket,
      commC: treeC.root, commRLast: treeR.root, treeRLast: { arities: treeR.arities, levels: treeR.levels },
    }
    : undefined;
  const miner = opts.includeMiner === false ? undefined : `f0${actorId}`;
  return withCommit2In({ info, c1Text, c1, commD, commR, replicaId, timings, ...(sector ? { sector } : {}) }, c1Text, sectorNumber, info.sectorSize, miner);
}
