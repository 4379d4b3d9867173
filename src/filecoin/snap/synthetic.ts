/**
 * Synthetic, fully consistent SnapDeals updates of any size (32 GiB: 16 partitions of 86 challenges) without storing
 * a tree: every tree is *region-uniform*. With h high bits selecting rho, the 2^h regions of 2^(log2 nodes − h)
 * nodes each share one rho; giving every node of a region the same old replica label and the same new data label
 * makes the new replica label region-uniform too (label_r_new = r + d·rho(region)). A tree node whose subtree lies in
 * one region then depends on the region only, so each tree costs about (regions × levels) hashes, and any node, path
 * or row is computed on demand. The roots, comm_r_old/comm_d_new/comm_r_new, challenges and inclusion proofs are
 * those of the real (huge) trees over these labels: the vanilla proofs pass every check and the circuit.
 */
import { FR_MODULUS } from '../../field/layout.js';
import { poseidonHash } from '../hash/poseidon.js';
import type { MerkleProof, PathElement } from '../tree/path.js';
import { snapTreeRArities } from './circuit.js';
import { snapPhi, snapRho } from './challenges.js';
import type { SnapParams } from './registry.js';
import { sha256NodeFr } from './vanilla.js';
import type { SnapTree, SnapTrees } from './update.js';

/** A tree whose leaf i is leafOfRegion(floor(i / regionSize)); nodes computed on demand and memoized. */
export function regionUniformTree(
  arities: readonly number[],
  regionSize: number,
  leafOfRegion: (region: number) => bigint,
  hash: (children: bigint[]) => bigint,
  shape?: { readonly baseLevels: number; readonly subArity: number; readonly topArity: number },
): SnapTree {
  const span: number[] = [1];
  for (const a of arities) span.push(span[span.length - 1]! * a);
  const memo = new Map<string, bigint>();
  const node = (level: number, index: number): bigint => {
    const s = span[level]!;
    const uniform = s <= regionSize;
    const key = uniform ? `r${level}:${Math.floor((index * s) / regionSize)}` : `n${level}:${index}`;
    let v = memo.get(key);
    if (v !== undefined) return v;
    if (level === 0) v = leafOfRegion(Math.floor(index / regionSize));
    else {
      const a = arities[level - 1]!;
      const children: bigint[] = [];
      for (let k = 0; k < a; k++) children.push(node(level - 1, index * a + k));
      v = hash(children);
    }
    memo.set(key, v);
    return v;
  };
  const root = node(arities.length, 0);
  const path = (leaf: number): PathElement<bigint>[] => {
    const out: PathElement<bigint>[] = [];
    let i = leaf;
    arities.forEach((a, level) => {
      const first = i - (i % a);
      const hashes: bigint[] = [];
      for (let k = 0; k < a; k++) if (first + k !== i) hashes.push(node(level, first + k));
      out.push({ hashes, index: i % a });
      i = Math.floor(i / a);
    });
    return out;
  };
  return {
    root,
    proof: (leaf: number): MerkleProof<bigint> => {
      const full = path(leaf);
      const l = node(0, leaf);
      if (!shape || (!shape.subArity && !shape.topArity)) return { shape: 'Single', root, leaf: l, base: full, sub: [], top: [] };
      const base = full.slice(0, shape.baseLevels);
      const sub = full.slice(shape.baseLevels, shape.baseLevels + 1);
      if (!shape.topArity) return { shape: 'Sub', root, leaf: l, base, sub, top: [] };
      return { shape: 'Top', root, leaf: l, base, sub, top: full.slice(shape.baseLevels + 1) };
    },
    row: (r: number, from: number, to: number): bigint[] => Array.from({ length: to - from }, (_, k) => node(r, from + k)),
  };
}

/** A deterministic pseudo-random field element from a seed and a counter (Poseidon, for reproducible benches). */
function prf(seed: bigint, i: number): bigint {
  return poseidonHash([seed % FR_MODULUS, BigInt(i)]);
}

export interface SyntheticSnapUpdate {
  readonly commROld: bigint;
  readonly commDNew: bigint;
  readonly commRNew: bigint;
  readonly h: number;
  readonly trees: SnapTrees;
}

/** A synthetic update of a sector of this size with h (region-uniform trees; see the module comment). */
export function syntheticSnapUpdate(p: SnapParams, h: number, seed = 1n): SyntheticSnapUpdate {
  if (!p.hs.includes(h)) throw new RangeError(`h = ${h} is not allowed for this sector size`);
  const regionSize = 2 ** (p.challengeBitLen - h);
  const rArities = snapTreeRArities(p.tree);
  const dArities = new Array<number>(p.challengeBitLen).fill(2);
  const commC = prf(seed + 7n, 0);
  const rOldLeaf = (region: number): bigint => prf(seed, 2 * region);
  // new data: canonical field elements below 2^254, as fr32-padded data is
  const dLeaf = (region: number): bigint => prf(seed + 1n, 2 * region + 1) >> 2n;
  const rOld = regionUniformTree(rArities, regionSize, rOldLeaf, (c) => poseidonHash(c), p.tree);
  const dNew = regionUniformTree(dArities, regionSize, dLeaf, ([a, b]) => sha256NodeFr(a!, b!));
  const commROld = poseidonHash([commC, rOld.root]);
  const commDNew = dNew.root;
  const phi = snapPhi(commDNew, commROld);
  const rNewLeaf = (region: number): bigint => (rOldLeaf(region) + dLeaf(region) * snapRho(phi, region)) % FR_MODULUS;
  const rNew = regionUniformTree(rArities, regionSize, rNewLeaf, (c) => poseidonHash(c), p.tree);
  return { commROld, commDNew, commRNew: poseidonHash([commC, rNew.root]), h, trees: { commC, rOld, dNew, rNew } };
}
