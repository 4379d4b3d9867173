/**
 * UInt32 (bellperson `gadgets::uint32`): 32 Booleans, least significant first, plus the value when
 * known. rotr / shr only rewire bits (no constraints); xor is bitwise Boolean::xor; addmany unpacks
 * the sum into fresh bits and checks it through a MultiEq.
 */
import { type ConstraintSystem, LinearCombination, ONE } from '../r1cs/cs.js';
import { AllocatedBit, Boolean } from './boolean.js';
import type { MultiEq } from './multieq.js';

// Names as precomputed strings: no closure per bit on the synthesis hot path.
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i}`);
const ALLOC_NAMES = names('allocated bit', 32);
const XOR_NAMES = names('xor of bit', 32);
const MAJ_NAMES = names('maj', 32);
const CH_NAMES = names('ch', 32);
const RESULT_BIT_NAMES = names('result bit', 64);
const POW2: readonly bigint[] = Array.from({ length: 64 }, (_, i) => 1n << BigInt(i));

export class UInt32 {
  private constructor(
    /** Least significant bit first; length 32. */
    readonly bits: readonly Boolean[],
    /** The value as an unsigned 32-bit number, when known. */
    readonly value: number | undefined,
  ) {}

  static constant(value: number): UInt32 {
    const v = value >>> 0;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) bits[i] = Boolean.constant(((v >>> i) & 1) === 1);
    return new UInt32(bits, v);
  }

  /** 32 AllocatedBits in namespaces "allocated bit i", least significant first. */
  static alloc(cs: ConstraintSystem, value: number | undefined): UInt32 {
    const v = value === undefined ? undefined : value >>> 0;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) {
      const b = v === undefined ? undefined : ((v >>> i) & 1) === 1;
      bits[i] = Boolean.is(cs.namespace(ALLOC_NAMES[i], () => AllocatedBit.alloc(cs, b)));
    }
    return new UInt32(bits, v);
  }

  getValue(): number | undefined {
    return this.value;
  }

  /** Most significant bit first. */
  intoBitsBe(): Boolean[] {
    return this.bits.slice().reverse();
  }

  /** From 32 bits, most significant first. The value is known when every bit's value is. */
  static fromBitsBe(bits: readonly Boolean[]): UInt32 {
    if (bits.length !== 32) throw new RangeError('UInt32.fromBitsBe needs 32 bits');
    let value: number | undefined = 0;
    for (const b of bits) {
      const bv = b.getValue();
      if (bv === undefined) {
        value = undefined;
      } else if (value !== undefined) {
        value = ((value << 1) | (bv ? 1 : 0)) >>> 0;
      }
    }
    return new UInt32(bits.slice().reverse(), value);
  }

  /** Least significant first ("little-endian bit order"). */
  intoBits(): Boolean[] {
    return this.bits.slice();
  }

  /** From 32 bits, least significant first. */
  static fromBits(bits: readonly Boolean[]): UInt32 {
    if (bits.length !== 32) throw new RangeError('UInt32.fromBits needs 32 bits');
    let value: number | undefined = 0;
    for (let i = 31; i >= 0; i--) {
      const bv = bits[i].getValue();
      if (bv === undefined) {
        value = undefined;
      } else if (value !== undefined) {
        value = ((value << 1) | (bv ? 1 : 0)) >>> 0;
      }
    }
    return new UInt32(bits.slice(), value);
  }

  /** Rotate right by `by` (mod 32): rewiring only. */
  rotr(by: number): UInt32 {
    const k = by % 32;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) bits[i] = this.bits[(i + k) % 32];
    const value = this.value === undefined ? undefined : ((this.value >>> k) | (this.value << (32 - k))) >>> 0;
    return new UInt32(bits, value);
  }

  /** Shift right by `by` (mod 32, as bellperson), filling with constant false: rewiring only. */
  shr(by: number): UInt32 {
    const k = by % 32;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) bits[i] = i + k < 32 ? this.bits[i + k] : Boolean.FALSE;
    const value = this.value === undefined ? undefined : this.value >>> k;
    return new UInt32(bits, value);
  }

  /** Bitwise XOR, bit i in namespace "xor of bit i". */
  xor(cs: ConstraintSystem, other: UInt32): UInt32 {
    const value = this.value !== undefined && other.value !== undefined ? (this.value ^ other.value) >>> 0 : undefined;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) {
      bits[i] = cs.namespace(XOR_NAMES[i], () => Boolean.xor(cs, this.bits[i], other.bits[i]));
    }
    return new UInt32(bits, value);
  }

  /** (a AND b) XOR (a AND c) XOR (b AND c), bit i in namespace "maj i". */
  static sha256Maj(cs: ConstraintSystem, a: UInt32, b: UInt32, c: UInt32): UInt32 {
    const value =
      a.value !== undefined && b.value !== undefined && c.value !== undefined
        ? ((a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value)) >>> 0
        : undefined;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) {
      bits[i] = cs.namespace(MAJ_NAMES[i], () => Boolean.sha256Maj(cs, a.bits[i], b.bits[i], c.bits[i]));
    }
    return new UInt32(bits, value);
  }

  /** (a AND b) XOR ((NOT a) AND c), bit i in namespace "ch i". */
  static sha256Ch(cs: ConstraintSystem, a: UInt32, b: UInt32, c: UInt32): UInt32 {
    const value =
      a.value !== undefined && b.value !== undefined && c.value !== undefined
        ? ((a.value & b.value) ^ (~a.value & c.value)) >>> 0
        : undefined;
    const bits: Boolean[] = new Array(32);
    for (let i = 0; i < 32; i++) {
      bits[i] = cs.namespace(CH_NAMES[i], () => Boolean.sha256Ch(cs, a.bits[i], b.bits[i], c.bits[i]));
    }
    return new UInt32(bits, value);
  }

  /**
   * Sum of 2..10 operands mod 2^32. All-constant operands give a constant (no constraint);
   * otherwise ⌈log2(n·(2^32−1))⌉ result bits are allocated in namespaces "result bit i" and the
   * equality Σ operands = Σ 2^i·result_i goes to the MultiEq (`cs.get_root().enforce_equal`).
   * `cs` is the MultiEq itself (or called inside one of its namespaces), as in Rust.
   */
  static addmany(cs: MultiEq, operands: readonly UInt32[]): UInt32 {
    if (operands.length < 2 || operands.length > 10) throw new RangeError('UInt32.addmany takes 2..10 operands');

    let maxValue = operands.length * 0xffffffff; // < 2^36: exact in a double
    let resultValue: number | undefined = 0;
    const lc = LinearCombination.zero();
    let allConstants = true;

    for (const op of operands) {
      if (op.value === undefined) resultValue = undefined;
      else if (resultValue !== undefined) resultValue += op.value;
      for (let k = 0; k < 32; k++) {
        const bit = op.bits[k];
        bit.addTo(lc, POW2[k], ONE);
        if (allConstants && !bit.isConstant()) allConstants = false;
      }
    }

    const modularValue = resultValue === undefined ? undefined : resultValue % 0x100000000;
    if (allConstants && modularValue !== undefined) return UInt32.constant(modularValue);

    const resultBits: Boolean[] = [];
    const resultLc = LinearCombination.zero();
    let i = 0;
    while (maxValue !== 0) {
      const b =
        resultValue === undefined ? undefined : Math.floor(resultValue / 2 ** i) % 2 === 1;
      const bit = cs.namespace(RESULT_BIT_NAMES[i], () => AllocatedBit.alloc(cs, b));
      resultLc.add(bit.variable, POW2[i]);
      resultBits.push(Boolean.is(bit));
      maxValue = Math.floor(maxValue / 2);
      i += 1;
    }

    cs.program?.addmany(resultBits[0].refVariable(), i, operands.map((o) => o.bits));
    cs.enforceEqual(i, lc, resultLc);

    return new UInt32(resultBits.slice(0, 32), modularValue);
  }
}
