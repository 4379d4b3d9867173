/**
 * Consistency checks of a parsed C1 (what rust-fil-proofs' vanilla verifier checks; test/filecoin-c1.test.ts runs
 * them on the 2 KiB fixture and on tampered copies of it):
 * challenge derivation, every inclusion path against its root, column hashes, comm_r = H(comm_c,
 * comm_r_last), parent indices against the graph, labels recomputed from their parents, encoding.
 * Returns the list of failures (empty = consistent) instead of throwing, so a caller can report all.
 */
import { FR_MODULUS } from '../field/layout.js';
import type { C1Output, ChallengeProof, ColumnProof, LabelingProof } from './c1.js';
import { DrgParents, ExpanderParents, computeLabel, labelParentOrder, porepChallenges, replicaId } from './graph.js';
import { bytesEqual, bytesToBigintLE } from './hash/fr32.js';
import { fastPoseidonHash } from './hash/poseidon-native.js';
import { fullPath, pathLeafIndex, poseidonPathRoot, sha256PathRoot } from './tree/path.js';

export interface VerifyOptions {
  /** When given with `sectorId`, replica_id is recomputed from them, the ticket, comm_d and porep_id. */
  readonly proverId?: Uint8Array;
  readonly sectorId?: bigint | number;
}

/** Whether the C1's challenges are checked against the derived ones: from (replica_id, seed) (V1,
 *  V1_1) or (replica_id, comm_r) (NI-PoRep); not for Synthetic PoRep (not implemented) nor a C1
 *  marked `statedChallenges` (INSECURE: synthetic NI C1s of benchmarks). */
export function hasDerivedChallenges(c1: C1Output): boolean {
  return c1.statedChallenges !== true && c1.registeredProof.challengeDerivation !== 'synthetic';
}

/** What a failed challenge check says the challenge is derived from. */
function derivedFrom(c1: C1Output): string {
  if (c1.registeredProof.challengeDerivation !== 'non-interactive') return 'replica_id and seed';
  return 'replica_id and comm_r (NI-PoRep; a kiln synth-c1 --ni C1 states its own: [kiln] insecure_stated_ni_challenges or kiln prove --insecure-stated-challenges, benchmarks only)';
}

/** A column's hash (natively when the addon is built: poseidon-native.ts). */
export function columnHash(rows: readonly bigint[]): bigint {
  return fastPoseidonHash(rows);
}

export function verifyC1(c1: C1Output, opts: VerifyOptions = {}): string[] {
  const failures = verifyC1Header(c1, opts);
  const parts = c1.partitions.map((_, k) => verifyC1Partition(c1, k));
  for (const p of parts) failures.push(...p.failures);
  failures.push(...crossPartitionFailures(parts));
  return failures;
}

/** The checks of a C1 that no partition holds: replica_id (given the prover id and sector number). */
export function verifyC1Header(c1: C1Output, opts: VerifyOptions = {}): string[] {
  const failures: string[] = [];
  if (opts.proverId !== undefined && opts.sectorId !== undefined) {
    const rid = replicaId(opts.proverId, opts.sectorId, c1.ticket, c1.commD, c1.registeredProof.porepId);
    if (!bytesEqual(rid, c1.replicaId)) failures.push('replica_id: does not match SHA256(prover_id ‖ sector_id ‖ ticket ‖ comm_d ‖ porep_id)');
  }
  return failures;
}

/** What one partition's roots must share with the others' (crossPartitionFailures). */
export interface PartitionRoots {
  readonly partition: number;
  /** The first challenge checked, when the partition was checked in pieces (verifyC1Partition's range); 0 or absent: from its first. */
  readonly from?: number;
  readonly commC: bigint | undefined;
  readonly commRLast: bigint | undefined;
}

/** Which of a partition's challenges verifyC1Partition checks: [from, to). */
export interface ChallengeRange {
  readonly from: number;
  readonly to: number;
}

/**
 * The checks of partition k alone (its challenges, paths, columns, labels, encoding, and comm_r =
 * Poseidon2(comm_c, comm_r_last) at its first challenge): independent of the other partitions, so a
 * 32 GiB C1's ten run in parallel (the daemon's synthesis workers). Only `c1.partitions[k]` is read.
 * With `range`, only its challenges [from, to) (a 32 GiB partition's 18 took 10.7 s on a loaded core with
 * Poseidon in TypeScript, ~0.5 s with the native one; the
 * daemon checks them in pieces, in parallel); comm_r is checked by the piece that starts at challenge 0, and
 * the pieces' roots are compared by crossPartitionFailures like partitions'.
 */
export function verifyC1Partition(c1: C1Output, k: number, range?: ChallengeRange): { failures: string[] } & PartitionRoots {
  const failures: string[] = [];
  const fail = (where: string, what: string): void => {
    failures.push(`${where}: ${what}`);
  };
  const info = c1.registeredProof;
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  const commR = bytesToBigintLE(c1.commR);
  const part = c1.partitions[k];
  const expected = hasDerivedChallenges(c1) ? porepChallenges(info, c1, part.length, k) : undefined;
  const from = Math.max(0, range?.from ?? 0);
  const to = Math.min(part.length, range?.to ?? part.length);
  let commC: bigint | undefined;
  let commRLast: bigint | undefined;
  for (let i = from; i < to; i++) {
    const p = part[i]!;
    const at = `partition ${k} challenge ${i} (node ${p.challenge})`;
    if (expected !== undefined && expected[i] !== p.challenge) fail(at, `challenge (c_x.column.index) should be ${expected[i]}, derived from ${derivedFrom(c1)}`);
    const roots = checkChallenge(c1, p, drg, exp, (what) => fail(at, what));
    if (commC === undefined) {
      commC = roots.commC;
      commRLast = roots.commRLast;
      if (i === 0 && fastPoseidonHash([roots.commC, roots.commRLast]) !== commR) fail(at, 'comm_r ≠ Poseidon2(comm_c, comm_r_last)');
    } else {
      if (roots.commC !== commC) fail(at, `comm_c differs from challenge ${from}'s`);
      if (roots.commRLast !== commRLast) fail(at, `comm_r_last differs from challenge ${from}'s`);
    }
  }
  return { failures, partition: k, ...(from > 0 ? { from } : {}), commC, commRLast };
}

/** Every partition's (or piece of a partition's) roots equal the first non-empty one's. */
export function crossPartitionFailures(parts: readonly PartitionRoots[]): string[] {
  const failures: string[] = [];
  const first = parts.find((p) => p.commC !== undefined);
  if (first === undefined) return failures;
  const name = (p: PartitionRoots): string => `partition ${p.partition}${p.from ? ` from challenge ${p.from}` : ''}`;
  for (const p of parts) {
    if (p === first || p.commC === undefined) continue;
    if (p.commC !== first.commC) failures.push(`${name(p)}: comm_c differs from ${name(first)}'s`);
    if (p.commRLast !== first.commRLast) failures.push(`${name(p)}: comm_r_last differs from ${name(first)}'s`);
  }
  return failures;
}

function checkColumn(col: ColumnProof, commC: bigint, name: string, fail: (w: string) => void): void {
  const h = columnHash(col.rows);
  if (h !== col.inclusion.leaf) fail(`${name}: column hash ≠ inclusion leaf`);
  const path = fullPath(col.inclusion);
  if (pathLeafIndex(path) !== col.index) fail(`${name}: inclusion path proves node ${pathLeafIndex(path)}, column is ${col.index}`);
  if (col.inclusion.root !== commC) fail(`${name}: inclusion root ≠ comm_c`);
  if (poseidonPathRoot(h, path) !== commC) fail(`${name}: inclusion path does not lead to comm_c`);
}

function sameLabeling(a: LabelingProof, b: LabelingProof): boolean {
  return a.layerIndex === b.layerIndex && a.node === b.node && a.parents.every((x, i) => bytesEqual(x, b.parents[i]));
}

function checkChallenge(
  c1: C1Output, p: ChallengeProof, drg: DrgParents, exp: ExpanderParents, fail: (w: string) => void,
): { commC: bigint; commRLast: bigint } {
  const info = c1.registeredProof;
  const c = p.challenge;
  // comm_d
  const dPath = fullPath(p.commDProof);
  if (pathLeafIndex(dPath) !== p.cX.index) fail(`c_x.column.index ${p.cX.index} ≠ the node the comm_d path proves (${pathLeafIndex(dPath)})`);
  if (!bytesEqual(p.commDProof.root, c1.commD)) fail('comm_d proof root ≠ comm_d');
  if (!bytesEqual(sha256PathRoot(p.commDProof.leaf, dPath), c1.commD)) fail('comm_d path does not lead to comm_d');
  if (pathLeafIndex(dPath) !== c) fail('comm_d path proves another node');
  // comm_r_last
  const rPath = fullPath(p.commRLastProof);
  const commRLast = p.commRLastProof.root;
  if (poseidonPathRoot(p.commRLastProof.leaf, rPath) !== commRLast) fail('comm_r_last path does not lead to its root');
  if (pathLeafIndex(rPath) !== c) fail('comm_r_last path proves another node');
  // columns
  const commC = p.cX.inclusion.root;
  checkColumn(p.cX, commC, 'c_x', fail);
  const drgIdx = drg.parents(c);
  const expIdx = exp.parents(c);
  p.drgParents.forEach((col, j) => {
    if (col.index !== drgIdx[j]) fail(`drg_parents[${j}]: index ${col.index}, graph says ${drgIdx[j]}`);
    checkColumn(col, commC, `drg_parents[${j}]`, fail);
  });
  p.expParents.forEach((col, j) => {
    if (col.index !== expIdx[j]) fail(`exp_parents[${j}]: index ${col.index}, graph says ${expIdx[j]}`);
    checkColumn(col, commC, `exp_parents[${j}]`, fail);
  });
  // labels: layer l hashes the DRG parents' layer-l labels and the expander parents' layer-(l−1) labels
  p.labelingProofs.forEach((lp, l) => {
    const layer = l + 1;
    const name = `labeling_proofs[${l}]`;
    if (lp.layerIndex !== layer) fail(`${name}: layer_index ${lp.layerIndex}, expected ${layer}`);
    if (lp.node !== c) fail(`${name}: node ${lp.node}, expected ${c}`);
    const base = [
      ...p.drgParents.map((col) => col.rows[layer - 1]),
      ...(layer > 1 ? p.expParents.map((col) => col.rows[layer - 2]) : []),
    ];
    const order = labelParentOrder(layer);
    order.forEach((src, i) => {
      if (bytesToBigintLE(lp.parents[i]) !== base[src]) fail(`${name}.parents[${i}]: not the label of parent column ${src}`);
    });
    const label = bytesToBigintLE(computeLabel(c1.replicaId, layer, lp.node, lp.parents));
    if (label !== p.cX.rows[l]) fail(`${name}: recomputed label ≠ c_x row ${l}`);
  });
  // encoding: replica node = last label + data leaf
  const last = p.labelingProofs[p.labelingProofs.length - 1];
  if (!sameLabeling(p.encodingProof, last)) fail('encoding_proof differs from the last labeling proof');
  const encoded = (p.cX.rows[info.layers - 1] + bytesToBigintLE(p.commDProof.leaf)) % FR_MODULUS;
  if (encoded !== p.commRLastProof.leaf) fail('encoding: last label + data ≠ replica leaf');
  return { commC, commRLast };
}
