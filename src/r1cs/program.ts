/**
 * Witness programs: what a circuit computes for its witness, recorded once per shape, so native
 * code can compute the exact assignment the TypeScript WitnessGenerator writes without running
 * the circuit.
 *
 * While a ProgramRecorder synthesizes a circuit, every allocation is followed by one *op* saying
 * how its value follows from earlier variables or from the *tape* (the per-proof values that come
 * from outside the circuit: a C1's leaves, siblings, indices). Gadgets report ops through
 * `cs.program` (undefined on every other constraint system, so they cost nothing there). The
 * recorder checks that each allocation gets exactly one op, in allocation order, and names the
 * first allocation that did not.
 *
 * The circuit learns tape positions ("slots") by being built from a *slot witness*: its witness
 * object with every leaf replaced by the leaf's slot number (see `StackedDrg`'s `slotWitness`).
 * Each proof then flattens its real witness in the same leaf order into the tape.
 *
 * Segments: a circuit may mark independent parts (one per challenge) with `beginSegment()`. A
 * segment may read the prologue (everything before the first segment) and itself only; its
 * variables and slots are encoded relative to the segment's own bases, so segments with the same
 * structure have the same words and are stored once (a 32 GiB partition's 18 challenges: one
 * block). Native code runs the prologue, then the segments in parallel.
 *
 * Word format (u32), one op = header then operands:
 *   header: opcode (bits 0-7) | target is a public input (bit 8) | count (bits 9-31)
 *   variable operand: NEG (bit 31, bit operands only) | REL (bit 30) | INP (bit 29) | index (0-28)
 *     INP: the index counts public inputs (0 = ONE), else auxiliary variables; REL: relative to the
 *     segment's input / aux base. Constant bits are ONE (true) and NEG ONE (false).
 *   slot operand: REL (bit 30) | index
 *   coefficient operand: index into the program's coefficient table; NONE = 0xffffffff.
 */
import { FR_BYTES, writeFr } from '../field/layout.js';
import type { CircuitShape, Variable } from './cs.js';

export const WOP = {
  INPUT: 1, // [slot]                       v = tape[slot]
  INPUT_BITS: 2, // count n, [slot]         v_k = bit k of tape[slot] (k < n)
  BITS: 3, // count n, [src]                v_k = bit k of src
  XOR: 4, // [a, b]
  AND: 5, // [a, b]
  ANDNOT: 6, // [a, b]                      a ∧ ¬b
  NOR: 7, // [a, b]                         ¬a ∧ ¬b
  CH: 8, // [a, b, c]                       (a ∧ b) ⊕ (¬a ∧ c), bit operands
  MAJ: 9, // [a, b, c]                      majority, bit operands
  ADDMANY: 10, // count = nbits | nops << 8, [32·nops bits]   v_k = bit k of Σ_ops Σ_i 2^i·bit
  PACK: 11, // count n ≤ 254, [n bits]      v = Σ 2^i·bit_i
  LC: 12, // count n, [var, coeff]·n        v = Σ coeff·var
  ADD: 13, // [a, b]
  COPY: 14, // [a]
  MUL: 15, // [a, b]
  SQR: 16, // [a]
  SQADD: 17, // [a, k]                      v = (a + k)²
  MULADD: 18, // [a, b, pre, post]          v = a·(b + pre) + post (NONE = 0)
  INV: 19, // [a]                           v = 1/a (a = 0: DivisionByZero)
  SELECT: 20, // [cond bit, x, y]           v = cond ? x : y
} as const;

export const WOP_NEG = 0x80000000;
export const WOP_REL = 0x40000000;
export const WOP_INP = 0x20000000;
export const WOP_INDEX_MASK = 0x1fffffff;
export const WOP_NONE = 0xffffffff;
export const TARGET_INPUT = 1 << 8;

/** A bit as gadgets hold it: a variable, possibly negated (constants: ONE or ¬ONE). */
export interface BitRef {
  refVariable(): Variable;
  refNegated(): boolean;
}

/** What gadgets call, right after each allocation, to say how its value is computed. */
export interface WitnessProgramSink {
  /** v = tape[slot]; `slot` is the slot witness's leaf. */
  input(target: Variable, slot: bigint | number | undefined): void;
  /** n consecutive bits (first … first + n − 1) of tape[slot]. */
  inputBits(first: Variable, n: number, slot: bigint | number | undefined): void;
  /** n consecutive bits of src's canonical value. */
  bits(first: Variable, n: number, src: Variable): void;
  bitOp(op: 'xor' | 'and' | 'andnot' | 'nor', target: Variable, a: Variable, b: Variable): void;
  ch(target: Variable, a: BitRef, b: BitRef, c: BitRef): void;
  maj(target: Variable, a: BitRef, b: BitRef, c: BitRef): void;
  /** nbits consecutive bits of the integer Σ over operands of Σ_i 2^i·bit_i (UInt32 addmany). */
  addmany(first: Variable, nbits: number, operands: readonly (readonly BitRef[])[]): void;
  pack(target: Variable, bits: readonly BitRef[]): void;
  lc(target: Variable, terms: Iterable<readonly [Variable, bigint]>): void;
  add(target: Variable, a: Variable, b: Variable): void;
  copy(target: Variable, a: Variable): void;
  mul(target: Variable, a: Variable, b: Variable): void;
  sqr(target: Variable, a: Variable): void;
  sqadd(target: Variable, a: Variable, k: bigint): void;
  muladd(target: Variable, a: Variable, b: Variable, pre: bigint | undefined, post: bigint | undefined): void;
  inv(target: Variable, a: Variable): void;
  select(target: Variable, cond: BitRef, x: Variable, y: Variable): void;
  /** Starts an independent part (see the module comment). */
  beginSegment(): void;
}

/** One segment: which code block it runs and where its variables and slots start. */
export interface ProgramSegment {
  block: number;
  auxBase: number;
  inputBase: number;
  slotBase: number;
}

/** A recorded witness program (see the module comment). */
export interface WitnessProgram {
  numInputs: number; // ONE included
  numAux: number;
  numSlots: number;
  /** Montgomery Fr constants, 32 B each. */
  coeffs: Uint8Array;
  /** Code blocks (u32 words); segments refer to them by index. */
  blocks: Uint32Array[];
  /** Segment 0 is the prologue (bases 0, 1, 0). */
  segments: ProgramSegment[];
}

export class ProgramError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProgramError';
  }
}

export function checkProgramForShape(p: WitnessProgram, shape: CircuitShape): void {
  if (p.numInputs !== shape.numInputs || p.numAux !== shape.numAux) {
    throw new ProgramError(
      `witness program (${p.numInputs} inputs, ${p.numAux} aux) does not match the shape (${shape.numInputs}, ${shape.numAux})`,
    );
  }
}

/** Program size in bytes (blocks, coefficients, segment table). */
export function programBytes(p: WitnessProgram): number {
  return p.blocks.reduce((t, b) => t + b.byteLength, 0) + p.coeffs.length + p.segments.length * 16;
}

/** The tape as Montgomery Fr bytes. */
export function encodeTape(values: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(values.length * FR_BYTES);
  for (let i = 0; i < values.length; i++) writeFr(out, i, values[i]);
  return out;
}

// The rest of witness programs, by role: program-recorder.ts (recording them while a circuit is synthesised),
// program-interpreter.ts (the TypeScript interpreter, the native one's slow twin), program-file.ts (their file),
// program-replicate.ts (a recording of one segment replicated, with relocation).
