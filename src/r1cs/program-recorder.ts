/**
 * The ProgramRecorder: records a circuit's witness program (program.ts: the format) while the circuit is
 * synthesised over a wrapped constraint system, one op per allocation, and checks that every allocation got one.
 */
import { FR_BYTES, FR_MODULUS, mod, writeFr } from '../field/layout.js';
import { type ConstraintSystem, type LinearCombination, type Name, ONE, type Variable, auxIndex, evalName, isInput } from './cs.js';
import { WOP, WOP_NEG, WOP_REL, WOP_INP, WOP_INDEX_MASK, WOP_NONE, TARGET_INPUT, type BitRef, type WitnessProgramSink, type ProgramSegment, type WitnessProgram, ProgramError } from './program.js';

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
