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
import { FR_BYTES, FR_MODULUS, mod, modInverse, readFr, writeFr } from '../field/layout.js';
import {
  type CircuitShape,
  type ConstraintSystem,
  type LinearCombination,
  type Name,
  ONE,
  type Variable,
  auxIndex,
  isInput,
} from './cs.js';
import { evalName } from './test.js';

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
const TARGET_INPUT = 1 << 8;

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

class Words {
  private buf = new Uint32Array(1 << 16);
  length = 0;
  push(w: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = w >>> 0;
  }
  take(): Uint32Array {
    return this.buf.slice(0, this.length);
  }
}

const BIT_OPS = { xor: WOP.XOR, and: WOP.AND, andnot: WOP.ANDNOT, nor: WOP.NOR } as const;
const MAX_PENDING = 512;

export interface ProgramRecorderOptions {
  /** The slot where each segment's own slots start (segment k uses entry k − 1). */
  segmentSlotBases?: readonly number[];
  /** Total tape length. */
  numSlots: number;
  /** Called at each beginSegment, before the segment's first allocation (e.g. to note where the
   *  segment's constraints start in the wrapped system). */
  onBeginSegment?: () => void;
}

/**
 * Wraps a constraint system (a ShapeRecorder to record shape and program in one pass, or a
 * CountingSystem) and records the witness program. Values are never computed.
 */
export class ProgramRecorder implements ConstraintSystem, WitnessProgramSink {
  readonly computesValues = false;
  readonly program: WitnessProgramSink = this;
  private readonly coeffIndex = new Map<bigint, number>();
  private readonly coeffList: bigint[] = [];
  private readonly blocks: Uint32Array[] = [];
  private readonly blockKeys = new Map<string, number[]>();
  private readonly segments: ProgramSegment[] = [];
  private words = new Words();
  private readonly path: Name[] = [];
  /** Allocations without an op yet: kind (true = input) and name, in order. */
  private pending: { input: boolean; name: Name }[] = [];
  private nInputs = 1; // ONE
  private nAux = 0;
  private doneInputs = 1;
  private doneAux = 0;
  // the current segment (segment 0 = prologue)
  private seg = 0;
  private auxBase = 0;
  private inputBase = 0;
  private slotBase = 0;
  private slotEnd: number;
  private prologueAux = -1;
  private prologueInputs = -1;
  private prologueSlots: number;

  constructor(
    private readonly inner: ConstraintSystem,
    private readonly opts: ProgramRecorderOptions,
  ) {
    if (inner.computesValues) throw new ProgramError('ProgramRecorder wraps a system that does not compute values');
    this.prologueSlots = opts.segmentSlotBases?.[0] ?? opts.numSlots;
    this.slotEnd = this.prologueSlots;
  }

  // -- ConstraintSystem ------------------------------------------------------------------------

  alloc(name: Name, value: () => bigint): Variable {
    const v = this.inner.alloc(name, value);
    if (auxIndex(v) !== this.nAux) throw new ProgramError(`the wrapped system numbered aux ${auxIndex(v)}, expected ${this.nAux}`);
    this.nAux++;
    this.noteAlloc(false, name);
    return v;
  }

  allocInput(name: Name, value: () => bigint): Variable {
    const v = this.inner.allocInput(name, value);
    if (v !== this.nInputs) throw new ProgramError(`the wrapped system numbered input ${v}, expected ${this.nInputs}`);
    this.nInputs++;
    this.noteAlloc(true, name);
    return v;
  }

  enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    this.inner.enforce(name, a, b, c);
  }

  namespace<T>(name: Name, fn: () => T): T {
    this.path.push(name);
    try {
      return this.inner.namespace(name, fn);
    } finally {
      this.path.pop();
    }
  }

  value(_v: Variable): bigint | undefined {
    return undefined;
  }

  private noteAlloc(input: boolean, name: Name): void {
    if (this.pending.length >= MAX_PENDING) this.missing(this.pending[0]);
    this.pending.push({ input, name });
  }

  private missing(p: { input: boolean; name: Name }): never {
    throw new ProgramError(
      `no witness op for the ${p.input ? 'input' : 'aux'} allocation "${evalName(p.name)}" ` +
        `(reported inside ${this.path.map(evalName).join('/') || 'the root'}): its gadget does not say how its value is computed`,
    );
  }

  // -- operands --------------------------------------------------------------------------------

  private inSegment(): boolean {
    return this.seg > 0;
  }

  private operand(v: Variable, what: string): number {
    if (isInput(v)) {
      if (v >= this.doneInputs) throw new ProgramError(`${what}: input ${v} has no value yet`);
      if (this.inSegment() && v >= this.inputBase) return WOP_REL | WOP_INP | this.checkIndex(v - this.inputBase);
      if (this.inSegment() && v >= this.prologueInputs && v !== ONE) {
        throw new ProgramError(`${what}: input ${v} belongs to another segment`);
      }
      return WOP_INP | this.checkIndex(v);
    }
    const j = auxIndex(v);
    if (j >= this.doneAux) throw new ProgramError(`${what}: aux ${j} has no value yet`);
    if (this.inSegment() && j >= this.auxBase) return WOP_REL | this.checkIndex(j - this.auxBase);
    if (this.inSegment() && j >= this.prologueAux) throw new ProgramError(`${what}: aux ${j} belongs to another segment`);
    return this.checkIndex(j);
  }

  private checkIndex(i: number): number {
    if (i > WOP_INDEX_MASK) throw new ProgramError(`variable index ${i} exceeds the program format's 2^29`);
    return i;
  }

  private bitOperand(b: BitRef, what: string): number {
    return (this.operand(b.refVariable(), what) | (b.refNegated() ? WOP_NEG : 0)) >>> 0;
  }

  private slotOperand(slot: bigint | number | undefined, what: string): number {
    if (slot === undefined) throw new ProgramError(`${what}: the circuit was not built from a slot witness (no slot)`);
    const s = Number(slot);
    if (!Number.isSafeInteger(s) || s < 0) throw new ProgramError(`${what}: bad slot ${slot}`);
    if (this.inSegment() && s >= this.slotBase) {
      if (s >= this.slotEnd) throw new ProgramError(`${what}: slot ${s} belongs to another segment`);
      return WOP_REL | this.checkIndex(s - this.slotBase);
    }
    if (s >= this.prologueSlots) throw new ProgramError(`${what}: slot ${s} is outside the prologue's ${this.prologueSlots}`);
    return this.checkIndex(s);
  }

  private coeff(c: bigint): number {
    const k = mod(c, FR_MODULUS);
    let i = this.coeffIndex.get(k);
    if (i === undefined) {
      i = this.coeffList.length;
      this.coeffList.push(k);
      this.coeffIndex.set(k, i);
    }
    return i;
  }

  /** Checks that `first` … first + n − 1 are the next allocations and marks them done; emits the header. */
  private header(op: number, first: Variable, n: number, count: number, what: string): void {
    const input = isInput(first);
    if (this.pending.length < n) throw new ProgramError(`${what}: ${n} targets but ${this.pending.length} allocations pending`);
    for (let k = 0; k < n; k++) {
      const p = this.pending[k];
      if (p.input !== input) this.missing(p);
    }
    const expected = input ? this.doneInputs : this.doneAux;
    const got = input ? first : auxIndex(first);
    if (got !== expected) this.missing(this.pending[0]);
    this.pending.splice(0, n);
    if (input) this.doneInputs += n;
    else this.doneAux += n;
    if (count > 0x7fffff) throw new ProgramError(`${what}: count ${count} too large`);
    this.words.push(op | (input ? TARGET_INPUT : 0) | (count << 9));
  }

  // -- WitnessProgramSink ----------------------------------------------------------------------

  input(target: Variable, slot: bigint | number | undefined): void {
    const s = this.slotOperand(slot, 'input');
    this.header(WOP.INPUT, target, 1, 0, 'input');
    this.words.push(s);
  }

  inputBits(first: Variable, n: number, slot: bigint | number | undefined): void {
    if (n < 1 || n > 256) throw new ProgramError(`inputBits: ${n} bits`);
    const s = this.slotOperand(slot, 'inputBits');
    this.header(WOP.INPUT_BITS, first, n, n, 'inputBits');
    this.words.push(s);
  }

  bits(first: Variable, n: number, src: Variable): void {
    if (n < 1 || n > 256) throw new ProgramError(`bits: ${n} bits`);
    const s = this.operand(src, 'bits');
    this.header(WOP.BITS, first, n, n, 'bits');
    this.words.push(s);
  }

  bitOp(op: 'xor' | 'and' | 'andnot' | 'nor', target: Variable, a: Variable, b: Variable): void {
    const oa = this.operand(a, op);
    const ob = this.operand(b, op);
    this.header(BIT_OPS[op], target, 1, 0, op);
    this.words.push(oa);
    this.words.push(ob);
  }

  private three(op: number, what: string, target: Variable, a: BitRef, b: BitRef, c: BitRef): void {
    const oa = this.bitOperand(a, what);
    const ob = this.bitOperand(b, what);
    const oc = this.bitOperand(c, what);
    this.header(op, target, 1, 0, what);
    this.words.push(oa);
    this.words.push(ob);
    this.words.push(oc);
  }

  ch(target: Variable, a: BitRef, b: BitRef, c: BitRef): void {
    this.three(WOP.CH, 'ch', target, a, b, c);
  }

  maj(target: Variable, a: BitRef, b: BitRef, c: BitRef): void {
    this.three(WOP.MAJ, 'maj', target, a, b, c);
  }

  addmany(first: Variable, nbits: number, operands: readonly (readonly BitRef[])[]): void {
    if (nbits < 1 || nbits > 64) throw new ProgramError(`addmany: ${nbits} result bits`);
    if (operands.length < 1 || operands.length > 255) throw new ProgramError(`addmany: ${operands.length} operands`);
    const refs: number[] = [];
    for (const op of operands) {
      if (op.length !== 32) throw new ProgramError('addmany: operands of 32 bits');
      for (const b of op) refs.push(this.bitOperand(b, 'addmany'));
    }
    this.header(WOP.ADDMANY, first, nbits, nbits | (operands.length << 8), 'addmany');
    for (const r of refs) this.words.push(r);
  }

  pack(target: Variable, bits: readonly BitRef[]): void {
    if (bits.length > 254) throw new ProgramError(`pack: ${bits.length} bits (at most 254)`);
    const refs = bits.map((b) => this.bitOperand(b, 'pack'));
    this.header(WOP.PACK, target, 1, refs.length, 'pack');
    for (const r of refs) this.words.push(r);
  }

  lc(target: Variable, terms: Iterable<readonly [Variable, bigint]>): void {
    const ops: number[] = [];
    for (const [v, c] of terms) {
      ops.push(this.operand(v, 'lc'));
      ops.push(this.coeff(c));
    }
    this.header(WOP.LC, target, 1, ops.length / 2, 'lc');
    for (const w of ops) this.words.push(w);
  }

  private unary(op: number, what: string, target: Variable, a: Variable): void {
    const oa = this.operand(a, what);
    this.header(op, target, 1, 0, what);
    this.words.push(oa);
  }

  private binary(op: number, what: string, target: Variable, a: Variable, b: Variable): void {
    const oa = this.operand(a, what);
    const ob = this.operand(b, what);
    this.header(op, target, 1, 0, what);
    this.words.push(oa);
    this.words.push(ob);
  }

  add(target: Variable, a: Variable, b: Variable): void {
    this.binary(WOP.ADD, 'add', target, a, b);
  }
  copy(target: Variable, a: Variable): void {
    this.unary(WOP.COPY, 'copy', target, a);
  }
  mul(target: Variable, a: Variable, b: Variable): void {
    this.binary(WOP.MUL, 'mul', target, a, b);
  }
  sqr(target: Variable, a: Variable): void {
    this.unary(WOP.SQR, 'sqr', target, a);
  }
  inv(target: Variable, a: Variable): void {
    this.unary(WOP.INV, 'inv', target, a);
  }

  sqadd(target: Variable, a: Variable, k: bigint): void {
    const oa = this.operand(a, 'sqadd');
    this.header(WOP.SQADD, target, 1, 0, 'sqadd');
    this.words.push(oa);
    this.words.push(this.coeff(k));
  }

  muladd(target: Variable, a: Variable, b: Variable, pre: bigint | undefined, post: bigint | undefined): void {
    const oa = this.operand(a, 'muladd');
    const ob = this.operand(b, 'muladd');
    this.header(WOP.MULADD, target, 1, 0, 'muladd');
    this.words.push(oa);
    this.words.push(ob);
    this.words.push(pre === undefined ? WOP_NONE : this.coeff(pre));
    this.words.push(post === undefined ? WOP_NONE : this.coeff(post));
  }

  select(target: Variable, cond: BitRef, x: Variable, y: Variable): void {
    const oc = this.bitOperand(cond, 'select');
    const ox = this.operand(x, 'select');
    const oy = this.operand(y, 'select');
    this.header(WOP.SELECT, target, 1, 0, 'select');
    this.words.push(oc);
    this.words.push(ox);
    this.words.push(oy);
  }

  beginSegment(): void {
    if (this.pending.length > 0) this.missing(this.pending[0]);
    this.opts.onBeginSegment?.();
    this.closeSegment();
    if (this.seg === 0) {
      this.prologueAux = this.nAux;
      this.prologueInputs = this.nInputs;
    }
    this.seg++;
    const bases = this.opts.segmentSlotBases ?? [];
    if (this.seg > bases.length) throw new ProgramError(`segment ${this.seg}: no slot base given (${bases.length} segments declared)`);
    this.auxBase = this.nAux;
    this.inputBase = this.nInputs;
    this.slotBase = bases[this.seg - 1];
    this.slotEnd = this.seg < bases.length ? bases[this.seg] : this.opts.numSlots;
  }

  private closeSegment(): void {
    const words = this.words.take();
    this.words = new Words();
    const key = blockKey(words);
    let same = this.blockKeys.get(key);
    let block = same?.find((b) => equalWords(this.blocks[b], words));
    if (block === undefined) {
      block = this.blocks.length;
      this.blocks.push(words);
      if (!same) this.blockKeys.set(key, (same = []));
      same.push(block);
    }
    const first = this.seg === 0;
    this.segments.push({
      block,
      auxBase: first ? 0 : this.auxBase,
      inputBase: first ? 0 : this.inputBase,
      slotBase: first ? 0 : this.slotBase,
    });
  }

  /** Ends recording; every allocation must have had its op. */
  finish(): WitnessProgram {
    if (this.pending.length > 0) this.missing(this.pending[0]);
    this.closeSegment();
    const coeffs = new Uint8Array(this.coeffList.length * FR_BYTES);
    this.coeffList.forEach((c, i) => writeFr(coeffs, i, c));
    return {
      numInputs: this.nInputs,
      numAux: this.nAux,
      numSlots: this.opts.numSlots,
      coeffs,
      blocks: this.blocks,
      segments: this.segments,
    };
  }
}

function blockKey(w: Uint32Array): string {
  let h = 0x811c9dc5;
  const step = Math.max(1, Math.floor(w.length / 4096));
  for (let i = 0; i < w.length; i += step) h = Math.imul(h ^ w[i], 0x01000193) >>> 0;
  return `${w.length}:${h}`;
}

function equalWords(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Records a circuit's shape (optional) and witness program in one synthesis. */
export function recordProgram(
  inner: ConstraintSystem,
  synthesize: (cs: ConstraintSystem) => void,
  opts: ProgramRecorderOptions,
): WitnessProgram {
  const rec = new ProgramRecorder(inner, opts);
  synthesize(rec);
  return rec.finish();
}

/** Checks a program against the shape it is meant to fill. */
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

/**
 * The slow twin of the native interpreter: runs a program over a tape (canonical values) with
 * bigints and returns the full assignment as Montgomery Fr bytes, exactly as WitnessGenerator
 * lays it out. Throws ProgramError on a malformed program and 'DivisionByZero' like the gadget.
 */
export function interpretProgram(p: WitnessProgram, tape: readonly bigint[]): Uint8Array {
  if (tape.length !== p.numSlots) throw new ProgramError(`tape has ${tape.length} values, the program takes ${p.numSlots}`);
  const R = FR_MODULUS;
  const coeffs: bigint[] = [];
  for (let i = 0; i < p.coeffs.length / FR_BYTES; i++) coeffs.push(readFrCanonical(p.coeffs, i));
  const inputs: bigint[] = new Array(p.numInputs).fill(0n);
  const aux: bigint[] = new Array(p.numAux).fill(0n);
  inputs[0] = 1n;
  for (const [si, seg] of p.segments.entries()) {
    const words = p.blocks[seg.block];
    if (!words) throw new ProgramError(`segment ${si}: no block ${seg.block}`);
    const first = si === 0;
    let nextAux = first ? 0 : seg.auxBase;
    let nextInput = first ? 1 : seg.inputBase;
    // a segment reads the prologue (absolute) and itself (relative), nothing not yet written
    const absInputs = first ? Infinity : p.segments[1].inputBase;
    const absAux = first ? Infinity : p.segments[1].auxBase;
    const get = (o: number): bigint => {
      const idx = o & WOP_INDEX_MASK;
      const rel = (o & WOP_REL) !== 0;
      if (o & WOP_INP) {
        const i = (rel ? seg.inputBase : 0) + idx;
        if (i >= nextInput || (!rel && i >= absInputs)) throw new ProgramError(`segment ${si}: input ${i} is not readable here`);
        return inputs[i];
      }
      const j = (rel ? seg.auxBase : 0) + idx;
      if (j >= nextAux || (!rel && j >= absAux)) throw new ProgramError(`segment ${si}: aux ${j} is not readable here`);
      return aux[j];
    };
    const bit = (o: number): boolean => (get(o) !== 0n) !== ((o & WOP_NEG) !== 0);
    const slot = (o: number): bigint => {
      const s = ((o & WOP_REL) !== 0 ? seg.slotBase : 0) + (o & WOP_INDEX_MASK);
      if (s >= tape.length) throw new ProgramError(`segment ${si}: slot ${s} out of range`);
      return mod(tape[s], R);
    };
    const coeff = (o: number): bigint => {
      if (o === WOP_NONE) return 0n;
      if (o >= coeffs.length) throw new ProgramError(`coefficient ${o} out of range`);
      return coeffs[o];
    };
    let k = 0;
    while (k < words.length) {
      const h = words[k++];
      const op = h & 0xff;
      const toInput = (h & TARGET_INPUT) !== 0;
      const count = h >>> 9;
      const put = (v: bigint): void => {
        if (toInput) {
          if (nextInput >= p.numInputs) throw new ProgramError('too many inputs');
          inputs[nextInput++] = v;
        } else {
          if (nextAux >= p.numAux) throw new ProgramError('too many aux');
          aux[nextAux++] = v;
        }
      };
      const putBits = (x: bigint, n: number): void => {
        for (let i = 0; i < n; i++) put((x >> BigInt(i)) & 1n);
      };
      switch (op) {
        case WOP.INPUT:
          put(slot(words[k++]));
          break;
        case WOP.INPUT_BITS:
          putBits(slot(words[k++]), count);
          break;
        case WOP.BITS:
          putBits(get(words[k++]), count);
          break;
        case WOP.XOR:
        case WOP.AND:
        case WOP.ANDNOT:
        case WOP.NOR: {
          const a = get(words[k++]) !== 0n;
          const b = get(words[k++]) !== 0n;
          const r = op === WOP.XOR ? a !== b : op === WOP.AND ? a && b : op === WOP.ANDNOT ? a && !b : !a && !b;
          put(r ? 1n : 0n);
          break;
        }
        case WOP.CH:
        case WOP.MAJ: {
          const a = bit(words[k++]);
          const b = bit(words[k++]);
          const c = bit(words[k++]);
          const r = op === WOP.CH ? (a && b) !== (!a && c) : ((a && b) !== (a && c)) !== (b && c);
          put(r ? 1n : 0n);
          break;
        }
        case WOP.ADDMANY: {
          const nbits = count & 0xff;
          const nops = count >>> 8;
          let sum = 0n;
          for (let o = 0; o < nops; o++) for (let i = 0; i < 32; i++) if (bit(words[k++])) sum += 1n << BigInt(i);
          putBits(sum, nbits);
          break;
        }
        case WOP.PACK: {
          let x = 0n;
          for (let i = 0; i < count; i++) if (bit(words[k++])) x |= 1n << BigInt(i);
          put(x);
          break;
        }
        case WOP.LC: {
          let acc = 0n;
          for (let i = 0; i < count; i++) {
            const v = get(words[k++]);
            acc += coeff(words[k++]) * v;
          }
          put(acc % R);
          break;
        }
        case WOP.ADD:
          put((get(words[k++]) + get(words[k++])) % R);
          break;
        case WOP.COPY:
          put(get(words[k++]));
          break;
        case WOP.MUL:
          put((get(words[k++]) * get(words[k++])) % R);
          break;
        case WOP.SQR: {
          const a = get(words[k++]);
          put((a * a) % R);
          break;
        }
        case WOP.SQADD: {
          const t = get(words[k++]) + coeff(words[k++]);
          put((t * t) % R);
          break;
        }
        case WOP.MULADD: {
          const a = get(words[k++]);
          const b = get(words[k++]);
          const pre = coeff(words[k++]);
          const post = coeff(words[k++]);
          put((a * (b + pre) + post) % R);
          break;
        }
        case WOP.INV: {
          const a = get(words[k++]);
          if (a === 0n) throw new ProgramError('DivisionByZero');
          put(modInverse(a, R));
          break;
        }
        case WOP.SELECT: {
          const c = bit(words[k++]);
          const x = get(words[k++]);
          const y = get(words[k++]);
          put(c ? x : y);
          break;
        }
        default:
          throw new ProgramError(`segment ${si}: unknown opcode ${op} at word ${k - 1}`);
      }
    }
    const end = si + 1 < p.segments.length ? p.segments[si + 1] : undefined;
    if (end && si > 0 && (nextAux !== end.auxBase || nextInput !== end.inputBase)) {
      throw new ProgramError(`segment ${si} wrote up to aux ${nextAux} / input ${nextInput}, the next starts at ${end.auxBase} / ${end.inputBase}`);
    }
  }
  const out = new Uint8Array((p.numInputs + p.numAux) * FR_BYTES);
  for (let i = 0; i < p.numInputs; i++) writeFr(out, i, inputs[i]);
  for (let j = 0; j < p.numAux; j++) writeFr(out, p.numInputs + j, aux[j]);
  return out;
}

function readFrCanonical(buf: Uint8Array, i: number): bigint {
  return readFr(buf, i);
}

// ---------------------------------------------------------------------------------------------
// Files: magic, u32 version, numInputs, numAux, numSlots, nCoeffs, nBlocks, nSegments, the
// segment table (4 u32 each), the block lengths (u32 words), coefficients (32 B each), blocks.

export const PROGRAM_MAGIC = new Uint8Array([0x4b, 0x49, 0x4c, 0x4e, 0x57, 0x50, 0x47, 0x00]); // "KILNWPG\0"
export const PROGRAM_FORMAT_VERSION = 1;
const PROGRAM_HEADER_WORDS = 7;

/** The file's bytes as chunks (no single buffer holds the whole program). */
export function programChunks(p: WitnessProgram): Uint8Array[] {
  const head = new Uint32Array(PROGRAM_HEADER_WORDS + p.segments.length * 4 + p.blocks.length);
  head.set([PROGRAM_FORMAT_VERSION, p.numInputs, p.numAux, p.numSlots, p.coeffs.length / FR_BYTES, p.blocks.length, p.segments.length]);
  let o = PROGRAM_HEADER_WORDS;
  for (const s of p.segments) {
    head.set([s.block, s.auxBase, s.inputBase, s.slotBase], o);
    o += 4;
  }
  for (const b of p.blocks) head[o++] = b.length;
  const u8 = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  return [PROGRAM_MAGIC, u8(head), p.coeffs, ...p.blocks.map(u8)];
}

/** Parses a program file; every count is checked against the file's length first. */
export function deserializeProgram(bytes: Uint8Array): WitnessProgram {
  const fail = (m: string): never => {
    throw new ProgramError(`witness program file: ${m}`);
  };
  if (bytes.length < PROGRAM_MAGIC.length + PROGRAM_HEADER_WORDS * 4) fail(`${bytes.length} bytes is too short`);
  for (let i = 0; i < PROGRAM_MAGIC.length; i++) if (bytes[i] !== PROGRAM_MAGIC[i]) fail('bad magic');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = PROGRAM_MAGIC.length;
  const u32 = (): number => {
    if (o + 4 > bytes.length) fail('truncated');
    const v = dv.getUint32(o, true);
    o += 4;
    return v;
  };
  const version = u32();
  if (version !== PROGRAM_FORMAT_VERSION) fail(`format version ${version}, expected ${PROGRAM_FORMAT_VERSION}`);
  const [numInputs, numAux, numSlots, nCoeffs, nBlocks, nSegments] = [u32(), u32(), u32(), u32(), u32(), u32()];
  if (nSegments < 1) fail('no segments');
  const tableBytes = (nSegments * 4 + nBlocks) * 4;
  if (o + tableBytes > bytes.length) fail(`truncated in the segment table (${nSegments} segments, ${nBlocks} blocks)`);
  const segments: ProgramSegment[] = [];
  for (let i = 0; i < nSegments; i++) {
    const s = { block: u32(), auxBase: u32(), inputBase: u32(), slotBase: u32() };
    if (s.block >= nBlocks) fail(`segment ${i} names block ${s.block} of ${nBlocks}`);
    segments.push(s);
  }
  const lengths: number[] = [];
  for (let i = 0; i < nBlocks; i++) lengths.push(u32());
  const expected = o + nCoeffs * FR_BYTES + lengths.reduce((t, n) => t + n * 4, 0);
  if (expected !== bytes.length) fail(`${bytes.length} bytes, the header describes ${expected}`);
  const coeffs = new Uint8Array(bytes.subarray(o, o + nCoeffs * FR_BYTES)); // a copy
  o += nCoeffs * FR_BYTES;
  const blocks = lengths.map((n) => {
    const words = new Uint32Array(n);
    new Uint8Array(words.buffer).set(bytes.subarray(o, o + n * 4));
    o += n * 4;
    return words;
  });
  return { numInputs, numAux, numSlots, coeffs, blocks, segments };
}

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
