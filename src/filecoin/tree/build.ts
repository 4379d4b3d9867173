/**
 * Building small trees in memory (tests, dev tooling): every level is listed, leaves first.
 * A compound tree (MerkleTreeWrapper with sub/top trees) is the same as one tree whose upper levels
 * have other arities, because base tree i holds leaves [i·N, (i+1)·N) and the sub/top roots hash the
 * base/sub roots in order; so a tree is described by its per-level arities, bottom up.
 */
import { poseidonHash } from '../hash/poseidon.js';
import { sha256Node } from '../hash/sha256.js';
import type { TreeShape } from '../registry.js';
import type { MerkleProof, PathElement } from './path.js';

export interface BuiltTree<T> {
  /** Arity of each level, bottom up. */
  readonly arities: readonly number[];
  /** levels[0] = leaves, levels[arities.length] = [root]. */
  readonly levels: readonly (readonly T[])[];
  readonly root: T;
}

function build<T>(leaves: readonly T[], arities: readonly number[], hash: (children: T[]) => T): BuiltTree<T> {
  const expected = arities.reduce((a, b) => a * b, 1);
  if (leaves.length !== expected) throw new RangeError(`tree needs ${expected} leaves, got ${leaves.length}`);
  const levels: T[][] = [leaves.slice()];
  for (const a of arities) {
    const prev = levels[levels.length - 1];
    const next: T[] = [];
    for (let i = 0; i < prev.length; i += a) next.push(hash(prev.slice(i, i + a)));
    levels.push(next);
  }
  return { arities, levels, root: levels[levels.length - 1][0] };
}

/** Binary SHA256 tree over 32-byte leaves (comm_d shape); leaves.length must be a power of two. */
export function buildSha256Tree(leaves: readonly Uint8Array[]): BuiltTree<Uint8Array> {
  const height = Math.log2(leaves.length);
  if (!Number.isInteger(height)) throw new RangeError('leaf count must be a power of two');
  return build(leaves, new Array<number>(height).fill(2), ([l, r]) => sha256Node(l, r));
}

/** Per-level arities of a Poseidon tree of the given shape. */
export function shapeArities(shape: TreeShape): number[] {
  const out = new Array<number>(shape.baseLevels).fill(shape.baseArity);
  if (shape.subArity) out.push(shape.subArity);
  if (shape.topArity) out.push(shape.topArity);
  return out;
}

export function buildPoseidonTree(leaves: readonly bigint[], arities: readonly number[]): BuiltTree<bigint> {
  return build(leaves, arities, (children) => poseidonHash(children));
}

/** The path of leaf `index`, one element per level, bottom up. */
export function treePath<T>(tree: BuiltTree<T>, index: number): PathElement<T>[] {
  const path: PathElement<T>[] = [];
  let i = index;
  tree.arities.forEach((a, level) => {
    const first = i - (i % a);
    const siblings = tree.levels[level].slice(first, first + a).filter((_, k) => k !== i % a);
    path.push({ hashes: siblings, index: i % a });
    i = Math.floor(i / a);
  });
  return path;
}

/** An inclusion proof laid out like rust-fil-proofs' for a tree of `shape` (or Single for a plain binary/oct tree). */
export function treeProof<T>(tree: BuiltTree<T>, index: number, shape?: TreeShape): MerkleProof<T> {
  const path = treePath(tree, index);
  const leaf = tree.levels[0][index];
  if (shape === undefined || (shape.subArity === 0 && shape.topArity === 0)) {
    return { shape: 'Single', root: tree.root, leaf, base: path, sub: [], top: [] };
  }
  const base = path.slice(0, shape.baseLevels);
  const sub = path.slice(shape.baseLevels, shape.baseLevels + 1);
  if (shape.topArity === 0) return { shape: 'Sub', root: tree.root, leaf, base, sub, top: [] };
  return { shape: 'Top', root: tree.root, leaf, base, sub, top: path.slice(shape.baseLevels + 1) };
}
