/**
 * Trees for the sealer and the synthetic builder, with the same path layout (`PathElement`, bottom up):
 * - dense trees (every node stored): the comm_d tree as flat 32-byte levels, Poseidon trees as bigint
 *   levels; a compound (sub/top) tree is one tree with per-level arities (see tree/build.ts);
 * - sparse trees: only the opened leaves, their ancestors and the siblings on their paths exist; the
 *   siblings that are not ancestors of an opened leaf come from a `filler(level, index)` function, so the
 *   root is a deterministic function of the opened leaves and the filler.
 */
import { hash as nodeHash } from 'node:crypto';
import { bytesToBigintLE } from '../hash/fr32.js';
import { poseidonHash } from '../hash/poseidon.js';
import { sha256Node } from '../hash/sha256.js';
import type { TreeShape } from '../registry.js';
import type { MerkleProof, PathElement } from '../tree/path.js';
import { readFrLE, writeFrLE } from './poseidon-fast.js';
import { inThreadBatch, sharedBytes, type PoseidonBatch } from './poseidon-pool.js';

export type Progress = (done: number, total: number) => void;

// ---------------------------------------------------------------------------------------------
// Dense binary SHA256 tree (comm_d)

export class DenseSha256Tree {
  /** levels[0] = the leaves (n × 32 bytes), levels[height] = the root. */
  readonly levels: Uint8Array[];

  constructor(leaves: Uint8Array, progress?: Progress) {
    const n = leaves.length / 32;
    if (!Number.isInteger(Math.log2(n))) throw new RangeError('leaf count must be a power of two');
    this.levels = [leaves];
    let prev = leaves;
    let done = 0;
    const total = n - 1;
    while (prev.length > 32) {
      const count = prev.length / 64;
      const next = new Uint8Array(count * 32);
      for (let i = 0; i < count; i++) {
        const h = nodeHash('sha256', prev.subarray(i * 64, i * 64 + 64), 'buffer');
        h[31] &= 0x3f;
        next.set(h, i * 32);
        if (progress !== undefined && ++done % 65536 === 0) progress(done, total);
      }
      this.levels.push(next);
      prev = next;
    }
    progress?.(total, total);
  }

  get root(): Uint8Array {
    return this.levels[this.levels.length - 1].slice(0, 32);
  }

  node(level: number, index: number): Uint8Array {
    return this.levels[level].slice(index * 32, index * 32 + 32);
  }

  path(index: number): PathElement<Uint8Array>[] {
    const out: PathElement<Uint8Array>[] = [];
    let i = index;
    for (let level = 0; level < this.levels.length - 1; level++) {
      out.push({ hashes: [this.node(level, i ^ 1)], index: i & 1 });
      i >>= 1;
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Dense Poseidon tree (tree_c, tree_r_last)

/**
 * Every level is a flat buffer of 32-byte LE field elements (off the JS heap: 2^24 leaves of a 512 MiB
 * sector would be ~1 GiB as bigints); levels are hashed through a `PoseidonBatch` (worker threads).
 */
export class DensePoseidonTree {
  /** levels[0] = the leaves, levels[arities.length] = the root. */
  readonly levels: Uint8Array[];

  constructor(leaves: Uint8Array, readonly arities: readonly number[], batch: PoseidonBatch = inThreadBatch(), progress?: Progress) {
    const n = leaves.length / 32;
    const expected = arities.reduce((a, b) => a * b, 1);
    if (n !== expected) throw new RangeError(`tree needs ${expected} leaves, got ${n}`);
    this.levels = [leaves];
    let total = 0;
    let width = n;
    for (const a of arities) {
      width /= a;
      total += width;
    }
    let before = 0;
    for (const a of arities) {
      const prev = this.levels[this.levels.length - 1];
      const next = batch.hashGroups(prev, a, progress && ((d) => progress(before + d, total)));
      before += next.length / 32;
      this.levels.push(next);
    }
    progress?.(total, total);
  }

  get root(): bigint {
    return this.node(this.arities.length, 0);
  }

  leaf(index: number): bigint {
    return this.node(0, index);
  }

  private node(level: number, index: number): bigint {
    return bytesToBigintLE(this.levels[level].subarray(index * 32, index * 32 + 32));
  }

  path(index: number): PathElement<bigint>[] {
    const out: PathElement<bigint>[] = [];
    let i = index;
    this.arities.forEach((a, level) => {
      const first = i - (i % a);
      const hashes: bigint[] = [];
      for (let k = 0; k < a; k++) if (k !== i % a) hashes.push(this.node(level, first + k));
      out.push({ hashes, index: i % a });
      i = Math.floor(i / a);
    });
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Sparse trees

/** A tree of which only the opened leaves' paths exist. */
export class SparseTree<T> {
  /** levels[l]: index → value of every stored node at level l. */
  readonly levels: Map<number, T>[];
  private readonly opened: ReadonlySet<number>;

  constructor(
    leaves: ReadonlyMap<number, T>,
    readonly arities: readonly number[],
    /** Hashes every group of one level (children in order) at once, so a worker pool can share it. */
    hashLevel: (groups: T[][], progress?: (done: number) => void) => T[],
    filler: (level: number, index: number) => T,
    progress?: Progress,
  ) {
    this.levels = [new Map(leaves)];
    this.opened = new Set(leaves.keys());
    let total = 0;
    {
      let known = new Set(leaves.keys());
      for (const a of arities) {
        known = new Set([...known].map((i) => Math.floor(i / a)));
        total += known.size;
      }
    }
    let done = 0;
    arities.forEach((a, level) => {
      const cur = this.levels[level];
      const parents = [...new Set([...cur.keys()].map((i) => Math.floor(i / a)))].sort((x, y) => x - y);
      const groups = parents.map((p) => {
        const children: T[] = [];
        for (let k = 0; k < a; k++) {
          const idx = p * a + k;
          let v = cur.get(idx);
          if (v === undefined) {
            v = filler(level, idx);
            cur.set(idx, v);
          }
          children.push(v);
        }
        return children;
      });
      const hashes = hashLevel(groups, progress && ((d) => progress(done + d, total)));
      done += groups.length;
      this.levels.push(new Map(parents.map((p, i) => [p, hashes[i]])));
    });
    if (this.levels[arities.length].size !== 1) throw new Error('sparse tree: expected one root');
    progress?.(total, total);
  }

  get root(): T {
    return this.levels[this.arities.length].get(0)!;
  }

  leaf(index: number): T {
    const v = this.opened.has(index) ? this.levels[0].get(index) : undefined;
    if (v === undefined) throw new RangeError(`sparse tree: leaf ${index} was not opened`);
    return v;
  }

  path(index: number): PathElement<T>[] {
    const out: PathElement<T>[] = [];
    let i = index;
    this.arities.forEach((a, level) => {
      const first = i - (i % a);
      const hashes: T[] = [];
      for (let k = 0; k < a; k++) {
        if (k === i % a) continue;
        const v = this.levels[level].get(first + k);
        if (v === undefined) throw new RangeError(`sparse tree: node ${first + k} of level ${level} missing`);
        hashes.push(v);
      }
      out.push({ hashes, index: i % a });
      i = Math.floor(i / a);
    });
    return out;
  }
}

/** Level hashers for SparseTree. */
export const sha256Level = (groups: Uint8Array[][]): Uint8Array[] => groups.map(([l, r]) => sha256Node(l, r));

/** Poseidon of every group through `batch` (worker threads when it is a pool). */
export function poseidonLevel(batch: PoseidonBatch = inThreadBatch()) {
  return (groups: bigint[][], progress?: (done: number) => void): bigint[] => {
    if (groups.length === 0) return [];
    const arity = groups[0].length;
    const flat = sharedBytes(groups.length * arity * 32);
    const dv = new DataView(flat.buffer);
    groups.forEach((g, i) => g.forEach((x, k) => writeFrLE(dv, (i * arity + k) * 32, x)));
    const out = batch.hashGroups(flat, arity, progress && ((d) => progress(d)));
    const dout = new DataView(out.buffer, out.byteOffset, out.byteLength);
    return groups.map((_, i) => readFrLE(dout, i * 32));
  };
}

/** The slow twin, for tests. */
export const poseidonLevelReference = (groups: bigint[][]): bigint[] => groups.map((g) => poseidonHash(g));

/** Splits a full path (bottom up) into the Single / Sub / Top layout of `shape`. */
export function shapedProof<T>(root: T, leaf: T, path: PathElement<T>[], shape?: TreeShape): MerkleProof<T> {
  if (shape === undefined || (shape.subArity === 0 && shape.topArity === 0)) {
    return { shape: 'Single', root, leaf, base: path, sub: [], top: [] };
  }
  const base = path.slice(0, shape.baseLevels);
  const sub = path.slice(shape.baseLevels, shape.baseLevels + 1);
  if (shape.topArity === 0) return { shape: 'Sub', root, leaf, base, sub, top: [] };
  return { shape: 'Top', root, leaf, base, sub, top: path.slice(shape.baseLevels + 1) };
}
