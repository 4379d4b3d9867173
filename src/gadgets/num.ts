/**
 * Field-element gadgets (bellperson 0.27 = bellpepper-core `gadgets::num`): AllocatedNum (one
 * variable) and Num (a linear combination with its value).
 *
 * As in Rust, an AllocatedNum's value is captured inside the allocation closure, so it is known only
 * when the constraint system computes values.
 */
import { type ConstraintSystem, LinearCombination, ONE, type Variable } from '../r1cs/cs.js';
import { FR_MODULUS, mod, modInverse } from '../field/layout.js';
import { AllocatedBit, Boolean, fieldIntoAllocatedBitsLe } from './boolean.js';
import { FR_NUM_BITS, SynthesisError, required } from './errors.js';

const R = FR_MODULUS;

/** The bits of r − 1, most significant first, from bit NUM_BITS − 1 (the bits `to_bits_le_strict` walks). */
const CHAR_MINUS_ONE_BITS_BE: readonly boolean[] = (() => {
  const out: boolean[] = [];
  for (let i = FR_NUM_BITS - 1; i >= 0; i--) out.push((((R - 1n) >> BigInt(i)) & 1n) === 1n);
  return out;
})();

export class AllocatedNum {
  constructor(
    readonly variable: Variable,
    readonly value: bigint | undefined,
  ) {}

  getValue(): bigint | undefined {
    return this.value;
  }

  getVariable(): Variable {
    return this.variable;
  }

  /** An auxiliary variable named "num". `value` is called only when the system computes values. */
  static alloc(cs: ConstraintSystem, value: () => bigint): AllocatedNum {
    let v: bigint | undefined;
    const variable = cs.alloc('num', () => {
      v = mod(value(), R);
      return v;
    });
    return new AllocatedNum(variable, v);
  }

  /**
   * `alloc` of a value from outside the circuit (a witness leaf): recorded in witness programs as
   * a tape read (in a slot witness the leaf is its slot number).
   */
  static allocHint(cs: ConstraintSystem, leaf: bigint | undefined): AllocatedNum {
    const n = AllocatedNum.alloc(cs, () => required(leaf));
    cs.program?.input(n.variable, leaf);
    return n;
  }

  /** A public input named "input num". */
  static allocInput(cs: ConstraintSystem, value: () => bigint): AllocatedNum {
    let v: bigint | undefined;
    const variable = cs.allocInput('input num', () => {
      v = mod(value(), R);
      return v;
    });
    return new AllocatedNum(variable, v);
  }

  static allocMaybeInput(cs: ConstraintSystem, isInput: boolean, value: () => bigint): AllocatedNum {
    return isInput ? AllocatedNum.allocInput(cs, value) : AllocatedNum.alloc(cs, value);
  }

  /** Allocates "input variable" and enforces "enforce input is correct": input · 1 = self. */
  inputize(cs: ConstraintSystem): void {
    const input = cs.allocInput('input variable', () => required(this.value));
    cs.program?.copy(input, this.variable);
    cs.enforce(
      'enforce input is correct',
      LinearCombination.of(input),
      LinearCombination.of(ONE),
      LinearCombination.of(this.variable),
    );
  }

  /**
   * The 255 bits, little-endian, strictly below r: bits are allocated from the most significant
   * ("bit 0" is bit 254); a bit where r − 1 has a zero is allocated with `alloc_conditionally`
   * against the AND of the preceding runs of ones ("run ending at i" / "and j"), so the bit string
   * cannot exceed r − 1. Then "unpacking constraint": 0 · 0 = Σ 2^k·bit_k − self.
   */
  toBitsLeStrict(cs: ConstraintSystem): Boolean[] {
    const value = this.value;
    const result: AllocatedBit[] = [];
    let lastRun: AllocatedBit | undefined;
    let currentRun: AllocatedBit[] = [];

    // CHAR_MINUS_ONE_BITS_BE starts at bit 254, which is set: the Rust loop's leading zero bits
    // (bit 255 of the 256-bit representation) are skipped without allocation.
    let i = 0;
    for (let k = 0; k < CHAR_MINUS_ONE_BITS_BE.length; k++) {
      const charBit = CHAR_MINUS_ONE_BITS_BE[k];
      const pos = FR_NUM_BITS - 1 - k;
      const aBit = value === undefined ? undefined : ((value >> BigInt(pos)) & 1n) === 1n;
      const idx = i;
      if (charBit) {
        const bit = cs.namespace(() => `bit ${idx}`, () => AllocatedBit.alloc(cs, aBit));
        currentRun.push(bit);
        result.push(bit);
      } else {
        if (currentRun.length > 0) {
          if (lastRun !== undefined) currentRun.push(lastRun);
          const run = currentRun;
          lastRun = cs.namespace(() => `run ending at ${idx}`, () => karyAnd(cs, run));
          currentRun = [];
        }
        const mustBeFalse = lastRun;
        if (mustBeFalse === undefined) throw new Error('char always starts with a one');
        result.push(cs.namespace(() => `bit ${idx}`, () => AllocatedBit.allocConditionally(cs, aBit, mustBeFalse)));
      }
      i += 1;
    }
    if (currentRun.length !== 0) throw new Error('r − 1 must end on a run of zeros');

    // `result` is big-endian.
    const lc = LinearCombination.zero();
    let coeff = 1n;
    for (let j = result.length - 1; j >= 0; j--) {
      lc.add(result[j].variable, coeff);
      coeff <<= 1n;
    }
    lc.sub(this.variable);
    cs.enforce('unpacking constraint', LinearCombination.zero(), LinearCombination.zero(), lc);

    return result.reverse().map(Boolean.is);
  }

  /**
   * The 255 bits, little-endian, in namespaces "bit i", and "unpacking constraint":
   * 0 · 0 = Σ 2^i·bit_i − self. Not strict: r + x has the same bits as x for small x.
   */
  toBitsLe(cs: ConstraintSystem): Boolean[] {
    const bits = fieldIntoAllocatedBitsLe(cs, this.value, this.variable);
    const lc = LinearCombination.zero();
    let coeff = 1n;
    for (const bit of bits) {
      lc.add(bit.variable, coeff);
      coeff <<= 1n;
    }
    lc.sub(this.variable);
    cs.enforce('unpacking constraint', LinearCombination.zero(), LinearCombination.zero(), lc);
    return bits.map(Boolean.is);
  }

  /** "sum num"; "addition constraint": (a + b) · 1 = c (bellpepper-core). */
  add(cs: ConstraintSystem, other: AllocatedNum): AllocatedNum {
    let v: bigint | undefined;
    const variable = cs.alloc('sum num', () => {
      v = mod(required(this.value) + required(other.value), R);
      return v;
    });
    cs.program?.add(variable, this.variable, other.variable);
    cs.enforce(
      'addition constraint',
      LinearCombination.of(this.variable).add(other.variable),
      LinearCombination.of(ONE),
      LinearCombination.of(variable),
    );
    return new AllocatedNum(variable, v);
  }

  /** "product num"; "multiplication constraint": a · b = ab. */
  mul(cs: ConstraintSystem, other: AllocatedNum): AllocatedNum {
    let v: bigint | undefined;
    const variable = cs.alloc('product num', () => {
      v = mod(required(this.value) * required(other.value), R);
      return v;
    });
    cs.program?.mul(variable, this.variable, other.variable);
    cs.enforce(
      'multiplication constraint',
      LinearCombination.of(this.variable),
      LinearCombination.of(other.variable),
      LinearCombination.of(variable),
    );
    return new AllocatedNum(variable, v);
  }

  /** "squared num"; "squaring constraint": a · a = aa. */
  square(cs: ConstraintSystem): AllocatedNum {
    let v: bigint | undefined;
    const variable = cs.alloc('squared num', () => {
      const a = required(this.value);
      v = mod(a * a, R);
      return v;
    });
    cs.program?.sqr(variable, this.variable);
    cs.enforce(
      'squaring constraint',
      LinearCombination.of(this.variable),
      LinearCombination.of(this.variable),
      LinearCombination.of(variable),
    );
    return new AllocatedNum(variable, v);
  }

  /** "ephemeral inverse"; "nonzero assertion constraint": a · inv = 1. Zero → DivisionByZero. */
  assertNonzero(cs: ConstraintSystem): void {
    const inv = cs.alloc('ephemeral inverse', () => {
      const a = required(this.value);
      if (a === 0n) throw new SynthesisError('DivisionByZero');
      return modInverse(a, R);
    });
    cs.program?.inv(inv, this.variable);
    cs.enforce(
      'nonzero assertion constraint',
      LinearCombination.of(this.variable),
      LinearCombination.of(inv),
      LinearCombination.of(ONE),
    );
  }

  /**
   * (b, a) if `condition`, else (a, b):
   * "conditional reversal result 1" c, "first conditional reversal": (a − b) · cond = a − c;
   * "conditional reversal result 2" d, "second conditional reversal": (b − a) · cond = b − d.
   */
  static conditionallyReverse(
    cs: ConstraintSystem,
    a: AllocatedNum,
    b: AllocatedNum,
    condition: Boolean,
  ): [AllocatedNum, AllocatedNum] {
    const c = cs.namespace('conditional reversal result 1', () =>
      AllocatedNum.alloc(cs, () => (required(condition.getValue()) ? required(b.value) : required(a.value))),
    );
    cs.program?.select(c.variable, condition, b.variable, a.variable);
    cs.enforce(
      'first conditional reversal',
      LinearCombination.of(a.variable).sub(b.variable),
      condition.lc(),
      LinearCombination.of(a.variable).sub(c.variable),
    );
    const d = cs.namespace('conditional reversal result 2', () =>
      AllocatedNum.alloc(cs, () => (required(condition.getValue()) ? required(a.value) : required(b.value))),
    );
    cs.program?.select(d.variable, condition, a.variable, b.variable);
    cs.enforce(
      'second conditional reversal',
      LinearCombination.of(b.variable).sub(a.variable),
      condition.lc(),
      LinearCombination.of(b.variable).sub(d.variable),
    );
    return [c, d];
  }
}

/** k-ary AND by repeated AllocatedBit::and, step j in namespace "and j" (j from 1). */
function karyAnd(cs: ConstraintSystem, v: readonly AllocatedBit[]): AllocatedBit {
  if (v.length === 0) throw new Error('karyAnd of nothing');
  let cur = v[0];
  for (let j = 1; j < v.length; j++) {
    const prev = cur;
    cur = cs.namespace(() => `and ${j}`, () => AllocatedBit.and(cs, prev, v[j]));
  }
  return cur;
}

/** A linear combination and its value (bellperson `Num`). */
export class Num {
  constructor(
    readonly lcTerms: LinearCombination,
    readonly value: bigint | undefined,
  ) {}

  static zero(): Num {
    return new Num(LinearCombination.zero(), 0n);
  }

  static fromAllocated(n: AllocatedNum): Num {
    return new Num(LinearCombination.of(n.variable), n.value);
  }

  getValue(): bigint | undefined {
    return this.value;
  }

  /** coeff · this as a new linear combination. */
  lc(coeff = 1n): LinearCombination {
    return LinearCombination.zero().addLc(this.lcTerms, coeff);
  }

  /** this + coeff·bit (a new Num; the value is unknown if the bit's is). */
  addBoolWithCoeff(one: Variable, bit: Boolean, coeff: bigint): Num {
    const bv = bit.getValue();
    const value = this.value !== undefined && bv !== undefined ? (bv ? mod(this.value + coeff, R) : this.value) : undefined;
    const lc = LinearCombination.zero().addLc(this.lcTerms);
    bit.addTo(lc, coeff, one);
    return new Num(lc, value);
  }

  /** this + other (the value is unknown if either is: bellpepper-core after its #88 fix). */
  add(other: Num): Num {
    const lc = LinearCombination.zero().addLc(this.lcTerms).addLc(other.lcTerms);
    const value = this.value !== undefined && other.value !== undefined ? mod(this.value + other.value, R) : undefined;
    return new Num(lc, value);
  }

  scale(scalar: bigint): Num {
    const lc = LinearCombination.zero().addLc(this.lcTerms, scalar);
    return new Num(lc, this.value === undefined ? undefined : mod(this.value * scalar, R));
  }
}
