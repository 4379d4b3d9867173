/**
 * SnapDeals vanilla proofs (storage-proofs-update vanilla.rs) as Curio sends them to cuzk: one raw bincode 1.x
 * `PartitionProof` per partition (docs/filecoin.md §8), fields in serde order:
 *
 *   PartitionProof = comm_c: [32]; apex_leafs: u64 len + len × [32]; challenge_proofs: u64 len + len × ChallengeProof
 *   ChallengeProof = proof_r_old: MerkleProof (TreeR: Single 8-0-0 / Sub 8-8-0 / Top 8-8-2, Poseidon),
 *                    proof_d_new: MerkleProof (TreeD: Single, binary SHA256, log2(nodes) levels),
 *                    proof_r_new: MerkleProof (TreeR)
 *
 * MerkleProof's bincode is post/vanilla.ts's (its Reader/Writer are shared); every length, tag, index and field
 * element is checked against the sector size, trailing bytes are refused, and every problem is a
 * `VanillaProofError` naming the field and its byte offset.
 *
 * `checkSnapPartition` is vanilla.rs `EmptySectorUpdate::verify` (plus what circuit.rs asserts), each failure a
 * `SnapInputError` naming the partition and challenge; `snapCircuitWitness` turns a checked partition proof into
 * the circuit's witness.
 */
import { FR_MODULUS } from '../../field/layout.js';
import { frFromBytesLE, frToBytesLE } from '../hash/fr32.js';
import { fastPoseidonHash } from '../hash/poseidon-native.js';
import { sha256Node } from '../hash/sha256.js';
import { Reader, VanillaProofError, Writer, merkleProofBytes, readMerkleProof, writeMerkleProof, type PoStProofLayout } from '../post/vanilla.js';
import { fullPath, pathLeafIndex, poseidonPathRoot, type MerkleProof } from '../tree/path.js';
import { EmptySectorUpdateCircuit, snapKAndHSelect, snapTreeRArities, type SnapWitness } from './circuit.js';
import { snapChallenges, snapHighBits, snapPhi, snapRho } from './challenges.js';
import type { SnapParams } from './registry.js';

export { VanillaProofError };

export interface SnapChallengeProof {
  readonly proofROld: MerkleProof<bigint>;
  /** TreeD proof; its field elements are the 32-byte SHA256 domain values read little-endian. */
  readonly proofDNew: MerkleProof<bigint>;
  readonly proofRNew: MerkleProof<bigint>;
}

export interface SnapPartitionProof {
  readonly commC: bigint;
  readonly apexLeaves: readonly bigint[];
  readonly challengeProofs: readonly SnapChallengeProof[];
}

/** The public inputs of an update (the same for every partition). */
export interface SnapPublic {
  readonly commROld: bigint;
  readonly commDNew: bigint;
  readonly commRNew: bigint;
}

/** TreeR's MerkleProof layout for the size. */
export function snapTreeRLayout(p: SnapParams): PoStProofLayout {
  const t = p.tree;
  const shape = t.topArity ? 'Top' : t.subArity ? 'Sub' : 'Single';
  return {
    shape,
    tag: shape === 'Top' ? 2 : shape === 'Sub' ? 1 : 0,
    base: { levels: t.baseLevels, arity: t.baseArity },
    sub: { levels: t.subArity ? 1 : 0, arity: t.subArity },
    top: { levels: t.topArity ? 1 : 0, arity: t.topArity },
    inclusionProofs: p.challengeCount,
  };
}

/** TreeD's layout: Single, binary, log2(nodes) levels. */
export function snapTreeDLayout(p: SnapParams): PoStProofLayout {
  return { shape: 'Single', tag: 0, base: { levels: p.challengeBitLen, arity: 2 }, sub: { levels: 0, arity: 0 }, top: { levels: 0, arity: 0 }, inclusionProofs: p.challengeCount };
}

/** Exact bytes of one partition proof of this size. */
export function snapPartitionProofSize(p: SnapParams): number {
  return 32 + 8 + 32 * p.apexLeafCount + 8 + p.challengeCount * (2 * merkleProofBytes(snapTreeRLayout(p)) + merkleProofBytes(snapTreeDLayout(p)));
}

/** Parses one raw bincode `PartitionProof` of this size; throws VanillaProofError naming the field and offset. */
export function parseSnapPartitionProof(bytes: Uint8Array, p: SnapParams): SnapPartitionProof {
  if (!(bytes instanceof Uint8Array)) throw new VanillaProofError('vanilla proof: expected bytes');
  const lr = snapTreeRLayout(p);
  const ld = snapTreeDLayout(p);
  const r = new Reader(bytes);
  const commC = r.fr('comm_c');
  r.len('apex_leafs', p.apexLeafCount);
  const apexLeaves: bigint[] = [];
  for (let i = 0; i < p.apexLeafCount; i++) apexLeaves.push(r.fr(`apex_leafs[${i}]`));
  r.len('challenge_proofs', p.challengeCount);
  const challengeProofs: SnapChallengeProof[] = [];
  for (let i = 0; i < p.challengeCount; i++) {
    const f = `challenge_proofs[${i}]`;
    const proofROld = readMerkleProof(r, `${f}.proof_r_old`, lr);
    const proofDNew = readMerkleProof(r, `${f}.proof_d_new`, ld);
    const proofRNew = readMerkleProof(r, `${f}.proof_r_new`, lr);
    challengeProofs.push({ proofROld, proofDNew, proofRNew });
  }
  if (r.pos !== bytes.length) {
    r.fail('end', `has ${bytes.length - r.pos} trailing bytes (a ${p.sectorNodes * 32}-byte sector's partition proof is ${snapPartitionProofSize(p)} bytes, got ${bytes.length})`);
  }
  return { commC, apexLeaves, challengeProofs };
}

/** Serialises one partition proof as raw bincode `PartitionProof`; checks the layout like the parser. */
export function serializeSnapPartitionProof(pp: SnapPartitionProof, p: SnapParams): Uint8Array {
  if (pp.apexLeaves.length !== p.apexLeafCount) throw new VanillaProofError(`vanilla proof: apex_leafs has ${pp.apexLeaves.length} elements, expected ${p.apexLeafCount}`, 'apex_leafs');
  if (pp.challengeProofs.length !== p.challengeCount) {
    throw new VanillaProofError(`vanilla proof: challenge_proofs has ${pp.challengeProofs.length} elements, expected ${p.challengeCount}`, 'challenge_proofs');
  }
  const lr = snapTreeRLayout(p);
  const ld = snapTreeDLayout(p);
  const w = new Writer(snapPartitionProofSize(p));
  w.fr(pp.commC, 'comm_c');
  w.u64(p.apexLeafCount);
  pp.apexLeaves.forEach((x, i) => w.fr(x, `apex_leafs[${i}]`));
  w.u64(p.challengeCount);
  pp.challengeProofs.forEach((c, i) => {
    const f = `challenge_proofs[${i}]`;
    writeMerkleProof(w, c.proofROld, `${f}.proof_r_old`, lr);
    writeMerkleProof(w, c.proofDNew, `${f}.proof_d_new`, ld);
    writeMerkleProof(w, c.proofRNew, `${f}.proof_r_new`, lr);
  });
  if (w.pos !== w.out.length) throw new Error(`vanilla proof: serialised ${w.pos} bytes, expected ${w.out.length}`);
  return w.out;
}

// ---------------------------------------------------------------------------------------------
// Checks (vanilla.rs `verify`) and the circuit witness

/** A partition proof that cannot be proved for the given public inputs (the message names partition and challenge). */
export class SnapInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapInputError';
  }
}

/** SHA256 hash2 of two TreeD nodes given as field elements (LE). */
export function sha256NodeFr(a: bigint, b: bigint): bigint {
  return frFromBytesLE(sha256Node(frToBytesLE(a), frToBytesLE(b)));
}

export function sha256PathRootFr(leaf: bigint, proof: MerkleProof<bigint>): bigint {
  let cur = leaf;
  for (const el of fullPath(proof)) {
    const s = el.hashes[0]!;
    cur = el.index === 0 ? sha256NodeFr(cur, s) : sha256NodeFr(s, cur);
  }
  return cur;
}

/** The apex tree's rows, leaves first, root last (SHA256 hash2). */
export function snapApexTree(leaves: readonly bigint[]): bigint[][] {
  const rows: bigint[][] = [leaves.slice()];
  while (rows[rows.length - 1]!.length > 1) {
    const prev = rows[rows.length - 1]!;
    const next: bigint[] = [];
    for (let i = 0; i < prev.length; i += 2) next.push(sha256NodeFr(prev[i]!, prev[i + 1]!));
    rows.push(next);
  }
  return rows;
}

function checkFr(x: bigint, what: string): void {
  if (typeof x !== 'bigint' || x < 0n || x >= FR_MODULUS) throw new SnapInputError(`${what} is not a canonical field element`);
}

/**
 * vanilla.rs `EmptySectorUpdate::verify` for partition k with h, plus circuit.rs' assertions: counts; comm_r_old /
 * comm_r_new = Poseidon(comm_c, root_r_old / root_r_new); per challenge the three proofs open the challenged node,
 * have the expected roots and verify; leaf_r_new = leaf_r_old + leaf_d_new·rho(c >> (log2 nodes − h)); the apex
 * leaves hash to the apex root on every d_new path; all challenges share the partition path. Throws SnapInputError.
 */
export function checkSnapPartition(p: SnapParams, k: number, h: number, pub: SnapPublic, pp: SnapPartitionProof): void {
  const who = `partition ${k}`;
  if (!Number.isInteger(k) || k < 0 || k >= p.partitionCount) throw new SnapInputError(`${who}: outside 0..${p.partitionCount - 1}`);
  if (!p.hs.includes(h)) throw new SnapInputError(`h = ${h} is not allowed for this sector size (allowed: ${[...new Set(p.hs)].join(', ')})`);
  checkFr(pub.commROld, 'comm_r_old');
  checkFr(pub.commDNew, 'comm_d_new');
  checkFr(pub.commRNew, 'comm_r_new');
  if (pp.apexLeaves.length !== p.apexLeafCount) throw new SnapInputError(`${who}: ${pp.apexLeaves.length} apex leaves, expected ${p.apexLeafCount}`);
  if (pp.challengeProofs.length !== p.challengeCount) throw new SnapInputError(`${who}: ${pp.challengeProofs.length} challenge proofs, expected ${p.challengeCount}`);
  const rootROld = pp.challengeProofs[0]!.proofROld.root;
  const rootRNew = pp.challengeProofs[0]!.proofRNew.root;
  if (fastPoseidonHash([pp.commC, rootROld]) !== pub.commROld) throw new SnapInputError(`${who}: comm_r_old is not Poseidon(comm_c, root_r_old) (wrong comm_r_old or comm_c?)`);
  if (fastPoseidonHash([pp.commC, rootRNew]) !== pub.commRNew) throw new SnapInputError(`${who}: comm_r_new is not Poseidon(comm_c, root_r_new) (wrong comm_r_new?)`);
  const phi = snapPhi(pub.commDNew, pub.commROld);
  const challenges = snapChallenges(p, pub.commRNew, k);
  const apexTree = snapApexTree(pp.apexLeaves);
  const apexRoot = apexTree[apexTree.length - 1]![0]!;
  const apexStart = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
  const arities = snapTreeRArities(p.tree);
  let partitionPath: bigint[] | undefined;
  pp.challengeProofs.forEach((cp, i) => {
    const c = challenges[i]!;
    const where = `${who} challenge ${i} (node ${c})`;
    for (const [name, mp, root] of [['proof_r_old', cp.proofROld, rootROld], ['proof_r_new', cp.proofRNew, rootRNew]] as const) {
      const path = fullPath(mp);
      if (path.length !== arities.length || path.some((el, l) => el.hashes.length !== arities[l]! - 1)) throw new SnapInputError(`${where}: ${name} does not have the TreeR shape`);
      if (pathLeafIndex(path) !== c) throw new SnapInputError(`${where}: ${name} opens node ${pathLeafIndex(path)}, but comm_r_new and the partition challenge node ${c} (wrong comm_r_new or partition?)`);
      if (mp.root !== root) throw new SnapInputError(`${where}: ${name}'s root differs from challenge 0's`);
      if (poseidonPathRoot(mp.leaf, path) !== mp.root) throw new SnapInputError(`${where}: ${name} does not lead from its leaf to its root`);
    }
    const d = cp.proofDNew;
    const dPath = fullPath(d);
    if (dPath.length !== p.challengeBitLen || dPath.some((el) => el.hashes.length !== 1)) throw new SnapInputError(`${where}: proof_d_new is not a ${p.challengeBitLen}-level binary path`);
    if (pathLeafIndex(dPath) !== c) throw new SnapInputError(`${where}: proof_d_new opens node ${pathLeafIndex(dPath)}, expected ${c}`);
    if (d.root !== pub.commDNew) throw new SnapInputError(`${where}: proof_d_new's root is not comm_d_new`);
    if (sha256PathRootFr(d.leaf, d) !== d.root) throw new SnapInputError(`${where}: proof_d_new does not lead from its leaf to comm_d_new`);
    const rho = snapRho(phi, snapHighBits(p, c, h));
    if ((cp.proofROld.leaf + cp.proofDNew.leaf * rho) % FR_MODULUS !== cp.proofRNew.leaf) {
      throw new SnapInputError(`${where}: leaf_r_new ≠ leaf_r_old + leaf_d_new·rho (the replica is not encoded with this comm_d_new and h = ${h}?)`);
    }
    // the d_new path passes through this partition's apex tree: recompute the node at the apex-leaf row
    let cur = d.leaf;
    dPath.slice(0, apexStart).forEach((el) => (cur = el.index === 0 ? sha256NodeFr(cur, el.hashes[0]!) : sha256NodeFr(el.hashes[0]!, cur)));
    const apexIndex = Math.floor(c / 2 ** apexStart) % p.apexLeafCount;
    if (pp.apexLeaves[apexIndex] !== cur) throw new SnapInputError(`${where}: proof_d_new does not pass through apex leaf ${apexIndex}`);
    const pPath = dPath.slice(p.challengeBitLen - p.partitionBitLen).map((el) => el.hashes[0]!);
    if (partitionPath === undefined) {
      partitionPath = pPath;
      let top = apexRoot;
      dPath.slice(p.challengeBitLen - p.partitionBitLen).forEach((el) => (top = el.index === 0 ? sha256NodeFr(top, el.hashes[0]!) : sha256NodeFr(el.hashes[0]!, top)));
      if (top !== pub.commDNew) throw new SnapInputError(`${who}: the apex leaves do not hash up to comm_d_new (wrong apex leaves or partition?)`);
    } else if (pPath.some((x, j) => x !== partitionPath![j])) throw new SnapInputError(`${where}: its partition path differs from challenge 0's`);
  });
}

/** The circuit witness of a (checked) partition proof: circuit.rs `PrivateInputs::new` + `PublicInputs::new`. */
export function snapCircuitWitness(p: SnapParams, k: number, h: number, pub: SnapPublic, pp: SnapPartitionProof): SnapWitness {
  const apexStart = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
  const first = fullPath(pp.challengeProofs[0]!.proofDNew);
  return {
    kAndHSelect: snapKAndHSelect(p, k, h),
    commROld: pub.commROld,
    commDNew: pub.commDNew,
    commRNew: pub.commRNew,
    commC: pp.commC,
    rootROld: pp.challengeProofs[0]!.proofROld.root,
    rootRNew: pp.challengeProofs[0]!.proofRNew.root,
    apexLeaves: pp.apexLeaves,
    partitionPath: first.slice(p.challengeBitLen - p.partitionBitLen).map((el) => el.hashes[0]!),
    challenges: pp.challengeProofs.map((cp) => ({
      leafROld: cp.proofROld.leaf,
      pathROld: fullPath(cp.proofROld).map((el) => el.hashes),
      leafDNew: cp.proofDNew.leaf,
      pathDToApex: fullPath(cp.proofDNew)
        .slice(0, apexStart)
        .map((el) => el.hashes[0]!),
      pathRNew: fullPath(cp.proofRNew).map((el) => el.hashes),
    })),
  };
}

/** `EmptySectorUpdateCompound::circuit` for partition k (no checks: see checkSnapPartition). */
export function snapCircuitFor(p: SnapParams, k: number, h: number, pub: SnapPublic, pp: SnapPartitionProof): EmptySectorUpdateCircuit {
  return new EmptySectorUpdateCircuit(p, snapCircuitWitness(p, k, h, pub, pp));
}
