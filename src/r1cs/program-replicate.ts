/**
 * A witness program recorded with one segment, replicated to n (program.ts: segments of identical structure),
 * with relocation of the variables a segment names outside itself where the copies differ.
 */
import { WOP, WOP_NEG, WOP_REL, WOP_INP, WOP_INDEX_MASK, type WitnessProgram, ProgramError } from './program.js';

/**
 * The program of the same circuit with `n` copies of its last segment, from a recording with one
 * (the prologue then one segment): for circuits whose segments are identical by construction
 * (StackedDrg's challenges), so a 32 GiB partition's program is recorded from a one-challenge
 * circuit in seconds. Exactness is the caller's claim; tests compare it with a full recording.
 */
export function replicateLastSegment(p: WitnessProgram, n: number): WitnessProgram {
  if (p.segments.length !== 2) throw new ProgramError(`replicateLastSegment needs a prologue and one segment, got ${p.segments.length} segments`);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`segment count ${n}`);
  const s = p.segments[1];
  const aux = p.numAux - s.auxBase;
  const inputs = p.numInputs - s.inputBase;
  const slots = p.numSlots - s.slotBase;
  const segments = [p.segments[0]];
  for (let k = 0; k < n; k++) {
    segments.push({ block: s.block, auxBase: s.auxBase + k * aux, inputBase: s.inputBase + k * inputs, slotBase: s.slotBase + k * slots });
  }
  return { ...p, numAux: s.auxBase + n * aux, numInputs: s.inputBase + n * inputs, numSlots: s.slotBase + n * slots, segments };
}

/**
 * A block with its absolute (prologue) aux operands remapped through `map` (aux index → aux index), op by op as the
 * interpreter reads them (slots, coefficients and segment-relative operands untouched, negation kept).
 */
export function relocateBlock(words: Uint32Array, map: ReadonlyMap<number, number>): Uint32Array {
  const out = words.slice();
  const v = (k: number): void => {
    const o = out[k];
    if ((o & (WOP_REL | WOP_INP)) !== 0) return;
    const to = map.get(o & WOP_INDEX_MASK);
    if (to !== undefined) out[k] = ((o & WOP_NEG) | to) >>> 0;
  };
  let k = 0;
  while (k < out.length) {
    const h = out[k++];
    const op = h & 0xff;
    const count = h >>> 9;
    switch (op) {
      case WOP.INPUT:
      case WOP.INPUT_BITS:
        k += 1;
        break;
      case WOP.BITS:
      case WOP.COPY:
      case WOP.SQR:
      case WOP.INV:
        v(k++);
        break;
      case WOP.XOR:
      case WOP.AND:
      case WOP.ANDNOT:
      case WOP.NOR:
      case WOP.ADD:
      case WOP.MUL:
        v(k++);
        v(k++);
        break;
      case WOP.CH:
      case WOP.MAJ:
      case WOP.SELECT:
        v(k++);
        v(k++);
        v(k++);
        break;
      case WOP.ADDMANY: {
        const nops = count >>> 8;
        for (let i = 0; i < 32 * nops; i++) v(k++);
        break;
      }
      case WOP.PACK:
        for (let i = 0; i < count; i++) v(k++);
        break;
      case WOP.LC:
        for (let i = 0; i < count; i++) {
          v(k++);
          k++; // coefficient
        }
        break;
      case WOP.SQADD:
        v(k++);
        k++;
        break;
      case WOP.MULADD:
        v(k++);
        v(k++);
        k += 2;
        break;
      default:
        throw new ProgramError(`relocateBlock: unknown opcode ${op} at word ${k - 1}`);
    }
  }
  return out;
}

/**
 * replicateLastSegment where copy k reads other prologue variables: `relocate(k)` maps the prologue aux indices the
 * recorded segment reads to copy k's (each copy gets its own block when its map changes anything).
 */
export function replicateLastSegmentRelocated(p: WitnessProgram, n: number, relocate: (k: number) => ReadonlyMap<number, number>): WitnessProgram {
  const r = replicateLastSegment(p, n);
  const base = p.blocks[p.segments[1].block];
  const blocks = p.blocks.slice();
  const segments = r.segments.map((s, i) => {
    if (i < 2) return s;
    const map = relocate(i - 1);
    if (map.size === 0) return s;
    blocks.push(relocateBlock(base, map));
    return { ...s, block: blocks.length - 1 };
  });
  return { ...r, blocks, segments };
}
