/**
 * Bits in the circuit and boolean logic: bellperson 0.27's `gadgets::boolean` (bellpepper-core's
 * boolean.rs, same logic as bellman's). Constraint order, variable order, constant short-cuts and
 * the operand order inside each constraint follow the Rust code exactly: Filecoin's parameters are
 * tied to bellperson's circuit shape.
 *
 * Values: an AllocatedBit stores the value it was allocated with (as Rust's `Option<bool>`); the
 * value of a *derived* bit (xor, and, …) is computed inside the allocation closure as in Rust, so a
 * system that does not compute values leaves it undefined and never calls any closure.
 */
import { type ConstraintSystem, LinearCombination, ONE, type Variable } from '../r1cs/cs.js';
import { FR_MODULUS } from '../field/layout.js';
import { FR_NUM_BITS, SynthesisError, required } from './errors.js';

const BIT_NAMES = Array.from({ length: 256 }, (_, i) => `bit ${i}`);
const bitName = (i: number) => BIT_NAMES[i];

/** A variable constrained to be 0 or 1. */
export class AllocatedBit {
  constructor(
    readonly variable: Variable,
    readonly value: boolean | undefined,
  ) {}

  getValue(): boolean | undefined {
    return this.value;
  }

  getVariable(): Variable {
    return this.variable;
  }

  /** Allocates "boolean" and enforces "boolean constraint": (1 − a) · a = 0. */
  static alloc(cs: ConstraintSystem, value: boolean | undefined): AllocatedBit {
    const v = cs.alloc('boolean', () => (required(value) ? 1n : 0n));
    cs.enforce('boolean constraint', LinearCombination.of(ONE).sub(v), LinearCombination.of(v), LinearCombination.zero());
    return new AllocatedBit(v, value);
  }

  /**
   * A bit that must be false when `mustBeFalse` is true:
   * "boolean constraint": (1 − mustBeFalse − a) · a = 0.
   */
  static allocConditionally(cs: ConstraintSystem, value: boolean | undefined, mustBeFalse: AllocatedBit): AllocatedBit {
    const v = cs.alloc('boolean', () => (required(value) ? 1n : 0n));
    cs.enforce(
      'boolean constraint',
      LinearCombination.of(ONE).sub(mustBeFalse.variable).sub(v),
      LinearCombination.of(v),
      LinearCombination.zero(),
    );
    return new AllocatedBit(v, value);
  }

  /** "xor result"; "xor constraint": (a + a) · b = a + b − c. */
  static xor(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit): AllocatedBit {
    let result: boolean | undefined;
    const v = cs.alloc('xor result', () => {
      result = required(a.value) !== required(b.value);
      return result ? 1n : 0n;
    });
    cs.program?.bitOp('xor', v, a.variable, b.variable);
    cs.enforce(
      'xor constraint',
      LinearCombination.of(a.variable).add(a.variable),
      LinearCombination.of(b.variable),
      LinearCombination.of(a.variable).add(b.variable).sub(v),
    );
    return new AllocatedBit(v, result);
  }

  /** "and result"; "and constraint": a · b = c. */
  static and(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit): AllocatedBit {
    let result: boolean | undefined;
    const v = cs.alloc('and result', () => {
      const av = required(a.value);
      const bv = required(b.value); // both required, as Rust's `?` on each
      result = av && bv;
      return result ? 1n : 0n;
    });
    cs.program?.bitOp('and', v, a.variable, b.variable);
    cs.enforce('and constraint', LinearCombination.of(a.variable), LinearCombination.of(b.variable), LinearCombination.of(v));
    return new AllocatedBit(v, result);
  }

  /** a AND (NOT b). "and not result"; "and not constraint": a · (1 − b) = c. */
  static andNot(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit): AllocatedBit {
    let result: boolean | undefined;
    const v = cs.alloc('and not result', () => {
      const av = required(a.value);
      const bv = required(b.value);
      result = av && !bv;
      return result ? 1n : 0n;
    });
    cs.program?.bitOp('andnot', v, a.variable, b.variable);
    cs.enforce(
      'and not constraint',
      LinearCombination.of(a.variable),
      LinearCombination.of(ONE).sub(b.variable),
      LinearCombination.of(v),
    );
    return new AllocatedBit(v, result);
  }

  /** (NOT a) AND (NOT b). "nor result"; "nor constraint": (1 − a) · (1 − b) = c. */
  static nor(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit): AllocatedBit {
    let result: boolean | undefined;
    const v = cs.alloc('nor result', () => {
      const av = required(a.value);
      const bv = required(b.value);
      result = !av && !bv;
      return result ? 1n : 0n;
    });
    cs.program?.bitOp('nor', v, a.variable, b.variable);
    cs.enforce(
      'nor constraint',
      LinearCombination.of(ONE).sub(a.variable),
      LinearCombination.of(ONE).sub(b.variable),
      LinearCombination.of(v),
    );
    return new AllocatedBit(v, result);
  }
}

const enum Kind {
  Is,
  Not,
  Constant,
}

/** A bit: an allocated bit (`Is`), its negation (`Not`, free), or a constant (no variable). */
export class Boolean {
  private constructor(
    private readonly kind: Kind,
    /** The underlying bit for Is / Not; undefined for constants. */
    readonly bit: AllocatedBit | undefined,
    private readonly constantValue: boolean,
  ) {}

  static readonly TRUE = new Boolean(Kind.Constant, undefined, true);
  static readonly FALSE = new Boolean(Kind.Constant, undefined, false);

  static constant(b: boolean): Boolean {
    return b ? Boolean.TRUE : Boolean.FALSE;
  }

  /** `Boolean::Is(bit)` (Rust's `From<AllocatedBit>`). */
  static is(bit: AllocatedBit): Boolean {
    return new Boolean(Kind.Is, bit, false);
  }

  /** `Boolean::Not(bit)`. */
  static notOf(bit: AllocatedBit): Boolean {
    return new Boolean(Kind.Not, bit, false);
  }

  isConstant(): boolean {
    return this.kind === Kind.Constant;
  }
  isIs(): boolean {
    return this.kind === Kind.Is;
  }
  isNot(): boolean {
    return this.kind === Kind.Not;
  }
  /** True when this is the constant `b`. */
  isConstantEqual(b: boolean): boolean {
    return this.kind === Kind.Constant && this.constantValue === b;
  }

  /** BitRef (witness programs): the variable (ONE for constants) … */
  refVariable(): Variable {
    return this.kind === Kind.Constant ? ONE : this.bit!.variable;
  }

  /** … and whether the bit is its negation (constant false = ¬ONE). */
  refNegated(): boolean {
    return this.kind === Kind.Not || (this.kind === Kind.Constant && !this.constantValue);
  }

  getValue(): boolean | undefined {
    switch (this.kind) {
      case Kind.Constant:
        return this.constantValue;
      case Kind.Is:
        return this.bit!.value;
      default: {
        const v = this.bit!.value;
        return v === undefined ? undefined : !v;
      }
    }
  }

  /** coeff · this as a new linear combination (`Boolean::lc(one, coeff)`). */
  lc(coeff = 1n, one: Variable = ONE): LinearCombination {
    return this.addTo(LinearCombination.zero(), coeff, one);
  }

  /** Appends coeff · this to `lc` (the same terms as `lc + &b.lc(one, coeff)`); returns lc. */
  addTo(lc: LinearCombination, coeff = 1n, one: Variable = ONE): LinearCombination {
    switch (this.kind) {
      case Kind.Constant:
        if (this.constantValue) lc.add(one, coeff);
        return lc;
      case Kind.Is:
        return lc.add(this.bit!.variable, coeff);
      default:
        return lc.add(one, coeff).sub(this.bit!.variable, coeff);
    }
  }

  /** Appends −coeff · this to `lc` (`lc - &b.lc(one, coeff)`); returns lc. */
  subFrom(lc: LinearCombination, coeff = 1n, one: Variable = ONE): LinearCombination {
    return this.addTo(lc, -coeff, one);
  }

  /** The negation; free (no constraint). */
  not(): Boolean {
    switch (this.kind) {
      case Kind.Constant:
        return Boolean.constant(!this.constantValue);
      case Kind.Is:
        return new Boolean(Kind.Not, this.bit, false);
      default:
        return new Boolean(Kind.Is, this.bit, false);
    }
  }

  /**
   * Enforces a = b. Two constants: nothing, or Unsatisfiable (thrown). Otherwise one constraint
   * 0 · 0 = …: "enforce equal to one" (a constant true), "enforce equal to zero" (a constant
   * false), or "enforce equal".
   */
  static enforceEqual(cs: ConstraintSystem, a: Boolean, b: Boolean): void {
    if (a.isConstant() && b.isConstant()) {
      if (a.constantValue !== b.constantValue) throw new SynthesisError('Unsatisfiable', 'constant booleans differ');
      return;
    }
    const z = LinearCombination.zero;
    if (a.isConstantEqual(true) || b.isConstantEqual(true)) {
      const x = a.isConstantEqual(true) ? b : a;
      cs.enforce('enforce equal to one', z(), z(), x.subFrom(LinearCombination.of(ONE)));
      return;
    }
    if (a.isConstantEqual(false) || b.isConstantEqual(false)) {
      const x = a.isConstantEqual(false) ? b : a;
      cs.enforce('enforce equal to zero', z(), z(), x.lc());
      return;
    }
    cs.enforce('enforce equal', z(), z(), b.subFrom(a.lc()));
  }

  /** XOR; constants and negations are folded, otherwise one AllocatedBit::xor. */
  static xor(cs: ConstraintSystem, a: Boolean, b: Boolean): Boolean {
    if (a.isConstantEqual(false)) return b;
    if (b.isConstantEqual(false)) return a;
    if (a.isConstantEqual(true)) return b.not();
    if (b.isConstantEqual(true)) return a.not();
    // a XOR (NOT b) = NOT (a XOR b): the `Is` operand goes first.
    if (a.kind === Kind.Is && b.kind === Kind.Not) return Boolean.is(AllocatedBit.xor(cs, a.bit!, b.bit!)).not();
    if (a.kind === Kind.Not && b.kind === Kind.Is) return Boolean.is(AllocatedBit.xor(cs, b.bit!, a.bit!)).not();
    // Is/Is, or Not/Not: (NOT a) XOR (NOT b) = a XOR b.
    return Boolean.is(AllocatedBit.xor(cs, a.bit!, b.bit!));
  }

  /** AND; constants folded, then and / and_not / nor of the underlying bits. */
  static and(cs: ConstraintSystem, a: Boolean, b: Boolean): Boolean {
    if (a.isConstantEqual(false) || b.isConstantEqual(false)) return Boolean.FALSE;
    if (a.isConstantEqual(true)) return b;
    if (b.isConstantEqual(true)) return a;
    if (a.kind === Kind.Is && b.kind === Kind.Not) return Boolean.is(AllocatedBit.andNot(cs, a.bit!, b.bit!));
    if (a.kind === Kind.Not && b.kind === Kind.Is) return Boolean.is(AllocatedBit.andNot(cs, b.bit!, a.bit!));
    if (a.kind === Kind.Not) return Boolean.is(AllocatedBit.nor(cs, a.bit!, b.bit!));
    return Boolean.is(AllocatedBit.and(cs, a.bit!, b.bit!));
  }

  /** OR = NOT((NOT a) AND (NOT b)), in namespace "not and (not a) (not b)" (bellpepper-core). */
  static or(cs: ConstraintSystem, a: Boolean, b: Boolean): Boolean {
    return cs.namespace('not and (not a) (not b)', () => Boolean.and(cs, a.not(), b.not())).not();
  }

  /** SHA-256 Ch: (a AND b) XOR ((NOT a) AND c), with bellperson's constant short-cuts. */
  static sha256Ch(cs: ConstraintSystem, a: Boolean, b: Boolean, c: Boolean): Boolean {
    const av = a.getValue();
    const bv = b.getValue();
    const cv = c.getValue();
    const chValue = av !== undefined && bv !== undefined && cv !== undefined ? (av && bv) !== (!av && cv) : undefined;

    if (a.isConstant() && b.isConstant() && c.isConstant()) return Boolean.constant(chValue!);
    if (a.isConstantEqual(false)) return c;
    if (b.isConstantEqual(false)) return Boolean.and(cs, a.not(), c);
    if (c.isConstantEqual(false)) return Boolean.and(cs, a, b);
    if (c.isConstantEqual(true)) return Boolean.and(cs, a, b.not()).not();
    if (b.isConstantEqual(true)) return Boolean.and(cs, a.not(), c.not()).not();
    // a constant true: falls through to the general case (lc of a is ONE).

    const ch = cs.alloc('ch', () => (required(chValue) ? 1n : 0n));
    cs.program?.ch(ch, a, b, c);
    // a · (b − c) = ch − c
    cs.enforce('ch computation', c.subFrom(b.lc()), a.lc(), c.subFrom(LinearCombination.of(ch)));
    return Boolean.is(new AllocatedBit(ch, chValue));
  }

  /** SHA-256 Maj: (a AND b) XOR (a AND c) XOR (b AND c), with bellperson's constant short-cuts. */
  static sha256Maj(cs: ConstraintSystem, a: Boolean, b: Boolean, c: Boolean): Boolean {
    const av = a.getValue();
    const bv = b.getValue();
    const cv = c.getValue();
    const majValue =
      av !== undefined && bv !== undefined && cv !== undefined ? ((av && bv) !== (av && cv)) !== (bv && cv) : undefined;

    if (a.isConstant() && b.isConstant() && c.isConstant()) return Boolean.constant(majValue!);
    if (a.isConstantEqual(false)) return Boolean.and(cs, b, c);
    if (b.isConstantEqual(false)) return Boolean.and(cs, a, c);
    if (c.isConstantEqual(false)) return Boolean.and(cs, a, b);
    if (c.isConstantEqual(true)) return Boolean.and(cs, a.not(), b.not()).not();
    if (b.isConstantEqual(true)) return Boolean.and(cs, a.not(), c.not()).not();
    if (a.isConstantEqual(true)) return Boolean.and(cs, b.not(), c.not()).not();

    // maj is allocated before "b and c".
    const maj = cs.alloc('maj', () => (required(majValue) ? 1n : 0n));
    cs.program?.maj(maj, a, b, c);
    const bc = cs.namespace('b and c', () => Boolean.and(cs, b, c));
    // (2bc − b − c) · a = bc − maj
    const lhs = c.subFrom(b.subFrom(bc.addTo(bc.lc())));
    cs.enforce('maj computation', lhs, a.lc(), bc.lc().sub(maj));
    return Boolean.is(new AllocatedBit(maj, majValue));
  }
}

/** 64 bits of a u64, little-endian, each AllocatedBit in namespace "bit i" (u64_into_boolean_vec_le). */
export function u64IntoBooleanVecLe(cs: ConstraintSystem, value: bigint | undefined): Boolean[] {
  const bits: Boolean[] = [];
  for (let i = 0; i < 64; i++) {
    const b = value === undefined ? undefined : ((value >> BigInt(i)) & 1n) === 1n;
    bits.push(Boolean.is(cs.namespace(bitName(i), () => AllocatedBit.alloc(cs, b))));
  }
  return bits;
}

/**
 * The 255 bits of a field element, little-endian, each in namespace "bit i"
 * (field_into_allocated_bits_le). Does not constrain them to the value.
 */
export function fieldIntoAllocatedBitsLe(cs: ConstraintSystem, value: bigint | undefined, src?: Variable): AllocatedBit[] {
  if (value !== undefined && (value < 0n || value >= FR_MODULUS)) throw new RangeError('field element out of range');
  const bits: AllocatedBit[] = [];
  for (let i = 0; i < FR_NUM_BITS; i++) {
    const b = value === undefined ? undefined : ((value >> BigInt(i)) & 1n) === 1n;
    bits.push(cs.namespace(bitName(i), () => AllocatedBit.alloc(cs, b)));
  }
  // witness programs: the bits of `src` (callers without a source variable cannot be recorded)
  if (cs.program && src !== undefined) cs.program.bits(bits[0].variable, FR_NUM_BITS, src);
  return bits;
}

export function fieldIntoBooleanVecLe(cs: ConstraintSystem, value: bigint | undefined): Boolean[] {
  return fieldIntoAllocatedBitsLe(cs, value).map(Boolean.is);
}
