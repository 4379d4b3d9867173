/**
 * The whole parent table of a sector, computed once and shared by every layer (the graph is the same
 * for all of them, as rust-fil-proofs' parent cache): per node 6 DRG parents then 8 expander parents.
 *
 * The expander side is a fast twin of `graph.ts` `ExpanderParents`: the Feistel round function
 * f(right, key) only takes 2^halfBits values of `right`, so for the sealable sizes (halfBits ≤ 16) it is
 * tabulated once per key (3 × 2^halfBits blake2b calls) and the permutation runs on plain numbers.
 * Tested against `ExpanderParents` (test/seal-parts.test.ts).
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { DRG_DEGREE, DrgParents, EXP_DEGREE, ExpanderParents } from '../graph.js';

export const BASE_DEGREE = DRG_DEGREE + EXP_DEGREE;

const FEISTEL_ROUNDS = 3;

/** Expander parents through tabulated Feistel rounds; falls back to `ExpanderParents` for large graphs. */
export class FastExpanderParents {
  private readonly elements: number;
  private readonly half: number;
  private readonly tables: Uint32Array[] | undefined;
  private readonly slow: ExpanderParents | undefined;

  constructor(porepId: Uint8Array, readonly nodes: number) {
    this.elements = nodes * EXP_DEGREE;
    let nextPow4 = 4;
    let log4 = 1;
    while (nextPow4 < this.elements) {
      nextPow4 *= 4;
      log4++;
    }
    this.half = 2 ** log4;
    if (log4 > 16) {
      this.slow = new ExpanderParents(porepId, nodes);
      return;
    }
    const te = new TextEncoder().encode('Filecoin_Feistel');
    const seedIn = new Uint8Array(te.length + porepId.length);
    seedIn.set(te);
    seedIn.set(porepId, te.length);
    const raw = sha256(seedIn);
    const dv = new DataView(raw.buffer, raw.byteOffset, 32);
    const mask = this.half - 1;
    const buf = new Uint8Array(16);
    const bv = new DataView(buf.buffer);
    this.tables = [];
    for (let r = 0; r < FEISTEL_ROUNDS; r++) {
      const key = dv.getBigUint64(r * 8, true);
      const t = new Uint32Array(this.half);
      bv.setBigUint64(8, key, false);
      for (let right = 0; right < this.half; right++) {
        bv.setUint32(0, 0, false);
        bv.setUint32(4, right, false);
        const h = blake2b(buf);
        // first 8 digest bytes big-endian, masked to halfBits ≤ 16: only the last bytes matter
        t[right] = (((h[4] << 24) | (h[5] << 16) | (h[6] << 8) | h[7]) >>> 0) & mask;
      }
      this.tables.push(t);
    }
  }

  private encode(index: number): number {
    const tables = this.tables!;
    let left = Math.floor(index / this.half);
    let right = index % this.half;
    for (let r = 0; r < FEISTEL_ROUNDS; r++) {
      const next = left ^ tables[r][right];
      left = right;
      right = next;
    }
    return left * this.half + right;
  }

  /** Writes the 8 expander parents of `node` into `out` at `offset`. */
  parentsInto(node: number, out: Uint32Array | number[], offset: number): void {
    if (this.slow !== undefined) {
      const ps = this.slow.parents(node);
      for (let i = 0; i < EXP_DEGREE; i++) out[offset + i] = ps[i];
      return;
    }
    for (let i = 0; i < EXP_DEGREE; i++) {
      let u = this.encode(node * EXP_DEGREE + i);
      while (u >= this.elements) u = this.encode(u);
      out[offset + i] = Math.floor(u / EXP_DEGREE);
    }
  }

  parents(node: number): number[] {
    const out = new Array<number>(EXP_DEGREE);
    this.parentsInto(node, out, 0);
    return out;
  }
}

/** Parent table: `table[node·14 + j]`, j < 6 DRG parents, 6 ≤ j < 14 expander parents. */
export function buildParentTable(
  porepId: Uint8Array, nodes: number, predecessorFirst: boolean,
  progress?: (done: number, total: number) => void,
): Uint32Array {
  const table = new Uint32Array(nodes * BASE_DEGREE);
  const drg = new DrgParents(porepId, predecessorFirst);
  const exp = new FastExpanderParents(porepId, nodes);
  const step = 1 << 14;
  for (let v = 0; v < nodes; v++) {
    const o = v * BASE_DEGREE;
    const d = drg.parents(v);
    for (let j = 0; j < DRG_DEGREE; j++) table[o + j] = d[j];
    exp.parentsInto(v, table, o + DRG_DEGREE);
    if (progress !== undefined && (v + 1) % step === 0) progress(v + 1, nodes);
  }
  progress?.(nodes, nodes);
  return table;
}
