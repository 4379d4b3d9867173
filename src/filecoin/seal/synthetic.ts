/**
 * A synthetic C1 of the full shape for any sector size (32/64 GiB included) without building the
 * sector: only the nodes the vanilla proofs open exist.
 *
 * - Labels: every challenged node's label is the SHA256 of its stated parents' labels, layer by layer
 *   (ascending node order inside a layer, so a challenged node that is another's DRG parent is done first);
 *   every other opened node (a parent that is not challenged) gets pseudo-random labels.
 * - Columns are built from those labels, so a column opened by several challenges is the same everywhere.
 * - tree_c, tree_r_last and the comm_d tree are sparse trees over the union of their opened leaves; the
 *   siblings that no opened leaf determines are pseudo-random (for comm_d, see `data`), so every challenge
 *   shares the same roots and comm_r = Poseidon2(comm_c, comm_r_last).
 * - `data: 'zero'` (default) makes a committed-capacity sector: all data is zero, so comm_d is the
 *   all-zero tree's root, known before the challenges; replica_id is then derived properly from comm_d
 *   (SHA256(prover_id ‖ sector ‖ ticket ‖ comm_d ‖ porep_id)) and the challenges from replica_id.
 *   `data: 'random'` opens random data leaves under a sparse comm_d tree; since comm_d then depends on the
 *   challenges, replica_id is a pseudo-random value instead of derived (`replicaIdDerived: false`).
 * - NI-PoRep (`version: 'V1_2_Feat_NonInteractivePoRep'`, 13 or 126 partitions): its challenges are
 *   derived from comm_r, which here depends on the challenged nodes; they are derived from a stand-in
 *   comm_r instead, so the C1 is consistent in every respect but that one and is proved only with the
 *   challenges it states (c1.ts withStatedChallenges; INSECURE, benchmarks only).
 * Everything is a deterministic function of the options (rngSeed included).
 */
import { hash as nodeHash } from 'node:crypto';
import { FR_MODULUS } from '../../field/layout.js';
import {
  DrgParents, ExpanderParents, computeLabel, labelParentOrder, proverIdFromActorId, replicaId as computeReplicaId,
} from '../graph.js';
import { bytesEqual, bytesToBigintLE, frToBytesLE } from '../hash/fr32.js';
import { sha256Node } from '../hash/sha256.js';
import { shapeArities } from '../tree/build.js';
import { buildC1Json, sectorChallenges, type SectorProofSource, withCommit2In } from './commit1.js';
import { SealOptionError, check32, deriveKey, resolveSealProof, rngSeedBytes } from './options.js';
import { fastPoseidon } from './poseidon-fast.js';
import { DEFAULT_SEED, minerActorId, type SealResult, type SectorOptions } from './sealer.js';
import { poseidonPool } from './poseidon-pool.js';
import { SparseTree, poseidonLevel, sha256Level } from './trees.js';

export interface SynthOptions extends SectorOptions {
  /** 'zero' (default): an all-zero sector, replica_id derived from comm_d; 'random': random leaves. */
  readonly data?: 'zero' | 'random';
}

export interface SynthResult extends SealResult {
  /** Whether replica_id = SHA256(prover_id ‖ sector ‖ ticket ‖ comm_d ‖ porep_id) (true for `data: 'zero'`). */
  readonly replicaIdDerived: boolean;
  /** Distinct nodes opened (challenges and their parents). */
  readonly openedNodes: number;
  /** Whether the challenges are derived as a verifier derives them (false for NI-PoRep: stated, see above). */
  readonly challengesDerived: boolean;
}

/** A pseudo-random value < 2^254 keyed by (key, tag, a, b). */
function prf(key: Uint8Array, tag: number, a: number, b: number): Uint8Array {
  const buf = new Uint8Array(32 + 1 + 8 + 4);
  buf.set(key, 0);
  buf[32] = tag;
  const dv = new DataView(buf.buffer);
  dv.setUint32(33, Math.floor(a / 2 ** 32), false);
  dv.setUint32(37, a >>> 0, false);
  dv.setUint32(41, b >>> 0, false);
  const h = nodeHash('sha256', buf, 'buffer');
  h[31] &= 0x3f;
  return new Uint8Array(h);
}

const TAG_LABEL = 1;
const TAG_TREE_C = 2;
const TAG_TREE_R = 3;
const TAG_COMM_D = 4;
const TAG_DATA = 5;

/** Roots of all-zero binary SHA256 trees: zero[h] = root of 2^h zero leaves. */
function zeroLadder(height: number): Uint8Array[] {
  const out: Uint8Array[] = [new Uint8Array(32)];
  for (let h = 1; h <= height; h++) out.push(sha256Node(out[h - 1], out[h - 1]));
  return out;
}

export function synthC1(opts: SynthOptions): SynthResult {
  const info = resolveSealProof(opts);
  const mode = opts.data ?? 'zero';
  if (mode !== 'zero' && mode !== 'random') throw new SealOptionError(`data must be 'zero' or 'random', got ${JSON.stringify(mode)}`);
  const rng = rngSeedBytes(opts.rngSeed);
  const key = deriveKey('kiln synth', rng);
  const ticket = opts.ticket !== undefined ? check32(opts.ticket, 'ticket') : deriveKey('kiln synth ticket', rng);
  const seed = opts.seed !== undefined ? check32(opts.seed, 'seed') : DEFAULT_SEED;
  const actorId = minerActorId(opts.miner);
  const sectorNumber = BigInt(opts.sectorNumber ?? 0);
  if (sectorNumber < 0n || sectorNumber >= 1n << 64n) throw new SealOptionError('sector number must be a u64');
  const report = opts.progress;
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (stage: string): void => {
    const t = performance.now();
    timings[stage] = Math.round(t - t0);
    t0 = t;
  };
  const { layers } = info;

  // replica_id and the challenges
  const zeros = zeroLadder(info.commDLevels);
  let replicaId: Uint8Array;
  if (mode === 'zero') {
    replicaId = computeReplicaId(proverIdFromActorId(actorId), sectorNumber, ticket, zeros[info.commDLevels], info.porepId);
  } else {
    replicaId = deriveKey('kiln synth replica_id', rng);
    replicaId[31] &= 0x3f;
  }
  // NI-PoRep derives its challenges from comm_r, which a synthetic sector knows only once the
  // challenged nodes are in its sparse trees: they come from a stand-in comm_r instead, and the C1 is
  // proved with the challenges it states (withStatedChallenges: INSECURE, benchmarks only)
  const standInCommR = deriveKey('kiln synth NI-PoRep stand-in comm_r', rng);
  standInCommR[31] &= 0x3f;
  const challenges = sectorChallenges(info, { replicaId, seed, commR: standInCommR });
  const challenged = [...new Set(challenges.flat())].sort((a, b) => a - b);

  // parents of every challenge
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  const parentsOf = new Map<number, { drg: number[]; exp: number[] }>();
  for (const c of challenged) parentsOf.set(c, { drg: drg.parents(c), exp: exp.parents(c) });
  lap('parents');

  // labels: random for opened non-challenged nodes, computed for challenged ones
  const labels = new Map<number, Uint8Array[]>();
  for (const { drg: d, exp: e } of parentsOf.values()) {
    for (const p of [...d, ...e]) {
      if (!labels.has(p) && !parentsOf.has(p)) labels.set(p, Array.from({ length: layers }, (_, l) => prf(key, TAG_LABEL, p, l + 1)));
    }
  }
  for (const c of challenged) labels.set(c, new Array<Uint8Array>(layers));
  let done = 0;
  for (let layer = 1; layer <= layers; layer++) {
    const order = labelParentOrder(layer);
    for (const c of challenged) {
      const { drg: d, exp: e } = parentsOf.get(c)!;
      const base = [...d.map((p) => labels.get(p)![layer - 1]), ...(layer > 1 ? e.map((p) => labels.get(p)![layer - 2]) : [])];
      labels.get(c)![layer - 1] = computeLabel(replicaId, layer, c, order.map((i) => base[i]));
      report?.('labels', ++done, layers * challenged.length);
    }
  }
  lap('labels');

  // columns and tree_c
  const batch = opts.threads === undefined ? poseidonPool(undefined, 256) : poseidonPool(opts.threads, 256);
  let treeC: SparseTree<bigint>;
  let treeR: SparseTree<bigint>;
  const dataLeaves = new Map<number, Uint8Array>();
  try {
    const hashLevel = poseidonLevel(batch);
    const opened = [...labels.keys()].sort((a, b) => a - b);
    const colHashes = hashLevel(opened.map((v) => labels.get(v)!.map(bytesToBigintLE)), report && ((d) => report('column hashes', d, opened.length)));
    const columns = new Map(opened.map((v, i) => [v, colHashes[i]]));
    lap('column hashes');
    const arities = shapeArities(info.tree);
    const fr = (tag: number) => (level: number, index: number): bigint => bytesToBigintLE(prf(key, tag, index, level));
    treeC = new SparseTree(columns, arities, hashLevel, fr(TAG_TREE_C), report && ((d, t) => report('tree_c', d, t)));
    lap('tree_c');

    // data, encoding and tree_r_last
    for (const c of challenged) dataLeaves.set(c, mode === 'zero' ? new Uint8Array(32) : prf(key, TAG_DATA, c, 0));
    const replica = new Map<number, bigint>();
    for (const c of challenged) {
      const s = bytesToBigintLE(labels.get(c)![layers - 1]) + bytesToBigintLE(dataLeaves.get(c)!);
      replica.set(c, s >= FR_MODULUS ? s - FR_MODULUS : s);
    }
    treeR = new SparseTree(replica, arities, hashLevel, fr(TAG_TREE_R), report && ((d, t) => report('tree_r_last', d, t)));
    lap('tree_r_last');
  } finally {
    batch.close();
  }

  // comm_d tree
  const dArities = new Array<number>(info.commDLevels).fill(2);
  const dFiller = mode === 'zero'
    ? (level: number): Uint8Array => zeros[level]
    : (level: number, index: number): Uint8Array => prf(key, TAG_COMM_D, index, level);
  const treeD = new SparseTree(dataLeaves, dArities, sha256Level, dFiller);
  const commD = treeD.root;
  if (mode === 'zero' && !bytesEqual(commD, zeros[info.commDLevels])) throw new Error('synthetic comm_d: zero tree root mismatch');
  lap('comm_d tree');

  const commRBig = fastPoseidon([treeC.root, treeR.root]);
  const source: SectorProofSource = {
    info,
    replicaId,
    commD,
    commC: treeC.root,
    commRLast: treeR.root,
    dataLeaf: (v) => treeD.leaf(v),
    commDPath: (v) => treeD.path(v),
    label: (layer, v) => {
      const ls = labels.get(v);
      if (ls === undefined) throw new RangeError(`synthetic sector: node ${v} was not opened`);
      return ls[layer - 1];
    },
    treeCLeaf: (v) => treeC.leaf(v),
    treeCPath: (v) => treeC.path(v),
    treeRLastLeaf: (v) => treeR.leaf(v),
    treeRLastPath: (v) => treeR.path(v),
  };
  const c1 = buildC1Json({ source, commR: commRBig, seed, ticket, challenges, progress: report && ((d, t) => report('commit1', d, t)) });
  const c1Text = JSON.stringify(c1);
  lap('commit1');
  const result = {
    info, c1Text, c1, commD, commR: frToBytesLE(commRBig), replicaId,
    replicaIdDerived: mode === 'zero', openedNodes: labels.size, challengesDerived: info.challengeDerivation !== 'non-interactive', timings,
  };
  return withCommit2In(result, c1Text, sectorNumber, info.sectorSize, opts.includeMiner === false ? undefined : `f0${actorId}`);
}
