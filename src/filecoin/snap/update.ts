/**
 * Sector updates (storage-proofs-update vanilla.rs `encode_into` and `prove`): the new replica's labels
 * label_r_new[i] = label_r_old[i] + label_d_new[i]·rho(i >> (log2 nodes − h)), phi = H(comm_d_new, comm_r_old); the
 * trees over old replica (tree_r_old), new data (tree_d_new, binary SHA256) and new replica (tree_r_new, the TreeR
 * shape of the size); comm_r_new = Poseidon(comm_c, root_r_new); and each partition's vanilla proof: comm_c, the
 * partition's apex leaves (the TreeD row log2(apex leaves) below its apex root) and, per challenge, the three
 * inclusion proofs.
 *
 * Trees are reached through `SnapTree` (root, proof of a node, a row of TreeD), so the same prover serves trees held
 * in memory (kiln update of a small sealed sector, tests) and the synthetic region-uniform trees of `synth-snap`
 * (synthetic.ts), which stand for full 32 GiB trees without storing them.
 */
import { FR_MODULUS } from '../../field/layout.js';
import { frFromBytesLE } from '../hash/fr32.js';
import { poseidonHash } from '../hash/poseidon.js';
import { buildPoseidonTree, buildSha256Tree, treeProof, type BuiltTree } from '../tree/build.js';
import type { MerkleProof } from '../tree/path.js';
import { snapTreeRArities } from './circuit.js';
import { snapChallenges, snapHighBits, snapPhi, snapRho } from './challenges.js';
import type { SnapParams } from './registry.js';
import type { SnapPartitionProof, SnapPublic } from './vanilla.js';
import { frToBytesLE } from '../hash/fr32.js';

/** What the prover needs of a tree. */
export interface SnapTree {
  readonly root: bigint;
  /** The inclusion proof of leaf `index` (Single / Sub / Top as the tree's shape says). */
  proof(index: number): MerkleProof<bigint>;
  /** Nodes [from, to) of row `row` (0 = leaves). */
  row(row: number, from: number, to: number): bigint[];
}

export interface SnapTrees {
  readonly commC: bigint;
  readonly rOld: SnapTree;
  readonly dNew: SnapTree;
  readonly rNew: SnapTree;
}

/** `encode_new_replica`: the new replica's labels (field elements). */
export function snapEncodeLabels(p: SnapParams, h: number, phi: bigint, labelsROld: readonly bigint[], labelsDNew: readonly bigint[]): bigint[] {
  if (labelsROld.length !== p.sectorNodes || labelsDNew.length !== p.sectorNodes) throw new RangeError(`expected ${p.sectorNodes} labels`);
  const rhos = new Map<number, bigint>();
  return labelsROld.map((r, i) => {
    const high = snapHighBits(p, i, h);
    let rho = rhos.get(high);
    if (rho === undefined) rhos.set(high, (rho = snapRho(phi, high)));
    return (r + labelsDNew[i]! * rho) % FR_MODULUS;
  });
}

/** The inverse (decoding): label_d_new = (label_r_new − label_r_old) / rho. */
export function snapDecodeLabels(p: SnapParams, h: number, phi: bigint, labelsROld: readonly bigint[], labelsRNew: readonly bigint[]): bigint[] {
  const inv = (x: bigint): bigint => {
    let [a, m, x0, x1] = [x % FR_MODULUS, FR_MODULUS, 0n, 1n];
    while (a > 1n) {
      const q = a / m;
      [a, m] = [m, a % m];
      [x0, x1] = [x1 - q * x0, x0];
    }
    return ((x1 % FR_MODULUS) + FR_MODULUS) % FR_MODULUS;
  };
  const rhoInv = new Map<number, bigint>();
  return labelsRNew.map((r, i) => {
    const high = snapHighBits(p, i, h);
    let ri = rhoInv.get(high);
    if (ri === undefined) rhoInv.set(high, (ri = inv(snapRho(phi, high))));
    return ((((r - labelsROld[i]!) % FR_MODULUS) + FR_MODULUS) * ri) % FR_MODULUS;
  });
}

/** A SnapTree over a tree held in memory (BuiltTree of field elements). */
export function memoryTree(tree: BuiltTree<bigint>, shape?: SnapParams['tree']): SnapTree {
  return {
    root: tree.root,
    proof: (i) => treeProof(tree, i, shape as never),
    row: (r, from, to) => tree.levels[r]!.slice(from, to),
  };
}

/** TreeR (the size's shape) over labels. */
export function buildTreeR(p: SnapParams, labels: readonly bigint[]): BuiltTree<bigint> {
  return buildPoseidonTree(labels, snapTreeRArities(p.tree));
}

/** TreeD (binary SHA256) over labels given as field elements, as a tree of field elements. */
export function buildTreeD(labels: readonly bigint[]): BuiltTree<bigint> {
  const t = buildSha256Tree(labels.map(frToBytesLE));
  const levels = t.levels.map((row) => row.map((x) => frFromBytesLE(x)));
  return { arities: t.arities, levels, root: levels[levels.length - 1]![0]! };
}

/** An update computed in memory from the old replica's labels, comm_c, the new data's labels and h. */
export interface SnapUpdate {
  readonly pub: SnapPublic;
  readonly h: number;
  readonly labelsRNew: bigint[];
  readonly trees: SnapTrees;
}

export function snapUpdateInMemory(p: SnapParams, h: number, commC: bigint, labelsROld: readonly bigint[], labelsDNew: readonly bigint[]): SnapUpdate {
  if (!p.hs.includes(h)) throw new RangeError(`h = ${h} is not allowed for this sector size`);
  const tROld = buildTreeR(p, labelsROld);
  const commROld = poseidonHash([commC, tROld.root]);
  const tDNew = buildTreeD(labelsDNew);
  const commDNew = tDNew.root;
  const phi = snapPhi(commDNew, commROld);
  const labelsRNew = snapEncodeLabels(p, h, phi, labelsROld, labelsDNew);
  const tRNew = buildTreeR(p, labelsRNew);
  const commRNew = poseidonHash([commC, tRNew.root]);
  return {
    pub: { commROld, commDNew, commRNew },
    h,
    labelsRNew,
    trees: { commC, rOld: memoryTree(tROld, p.tree), dNew: memoryTree(tDNew), rNew: memoryTree(tRNew, p.tree) },
  };
}

/** `EmptySectorUpdate::prove` for partition k. */
export function snapPartitionProof(p: SnapParams, k: number, commRNew: bigint, trees: SnapTrees): SnapPartitionProof {
  const apexRow = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
  const apexLeaves = trees.dNew.row(apexRow, k * p.apexLeafCount, (k + 1) * p.apexLeafCount);
  const challengeProofs = snapChallenges(p, commRNew, k).map((c) => ({
    proofROld: trees.rOld.proof(c),
    proofDNew: trees.dNew.proof(c),
    proofRNew: trees.rNew.proof(c),
  }));
  return { commC: trees.commC, apexLeaves, challengeProofs };
}

/** Every partition's vanilla proof, in order. */
export function snapPartitionProofs(p: SnapParams, commRNew: bigint, trees: SnapTrees): SnapPartitionProof[] {
  return Array.from({ length: p.partitionCount }, (_, k) => snapPartitionProof(p, k, commRNew, trees));
}
