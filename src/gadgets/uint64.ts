/**
 * UInt64 as rust-fil-proofs' `storage-proofs-core/src/gadgets/uint64.rs`: 64 Booleans, least
 * significant first; PoRep packs the challenge into one public input with `packIntoInput`.
 */
import type { ConstraintSystem } from '../r1cs/cs.js';
import { AllocatedBit, Boolean } from './boolean.js';
import { packIntoInputs } from './multipack.js';

const U64_MASK = (1n << 64n) - 1n;

export class UInt64 {
  private constructor(
    /** Least significant bit first; length 64. */
    readonly bits: readonly Boolean[],
    readonly value: bigint | undefined,
  ) {}

  static constant(value: bigint): UInt64 {
    const v = value & U64_MASK;
    const bits: Boolean[] = [];
    for (let i = 0n; i < 64n; i++) bits.push(Boolean.constant(((v >> i) & 1n) === 1n));
    return new UInt64(bits, v);
  }

  /** 64 AllocatedBits in namespaces "allocated bit i", least significant first. */
  static alloc(cs: ConstraintSystem, value: bigint | undefined): UInt64 {
    const v = value === undefined ? undefined : value & U64_MASK;
    const bits: Boolean[] = [];
    for (let i = 0; i < 64; i++) {
      const b = v === undefined ? undefined : ((v >> BigInt(i)) & 1n) === 1n;
      bits.push(Boolean.is(cs.namespace(() => `allocated bit ${i}`, () => AllocatedBit.alloc(cs, b))));
    }
    return new UInt64(bits, v);
  }

  /** `alloc` of a value from outside the circuit: witness programs read its bits from the tape. */
  static allocHint(cs: ConstraintSystem, leaf: bigint | undefined): UInt64 {
    const u = UInt64.alloc(cs, leaf);
    cs.program?.inputBits(u.bits[0].refVariable(), 64, leaf);
    return u;
  }

  getValue(): bigint | undefined {
    return this.value;
  }

  /** One public input ("input 0", "packing constraint 0" in the caller's namespace). */
  packIntoInput(cs: ConstraintSystem): void {
    packIntoInputs(cs, this.bits);
  }

  toBitsBe(): Boolean[] {
    return this.bits.slice().reverse();
  }

  static fromBitsBe(bits: readonly Boolean[]): UInt64 {
    if (bits.length !== 64) throw new RangeError('UInt64.fromBitsBe needs 64 bits');
    let value: bigint | undefined = 0n;
    for (const b of bits) {
      const bv = b.getValue();
      if (bv === undefined) value = undefined;
      else if (value !== undefined) value = (value << 1n) | (bv ? 1n : 0n);
    }
    return new UInt64(bits.slice().reverse(), value);
  }

  toBitsLe(): Boolean[] {
    return this.bits.slice();
  }

  static fromBits(bits: readonly Boolean[]): UInt64 {
    if (bits.length !== 64) throw new RangeError('UInt64.fromBits needs 64 bits');
    let value: bigint | undefined = 0n;
    for (let i = 63; i >= 0; i--) {
      const bv = bits[i].getValue();
      if (bv === undefined) value = undefined;
      else if (value !== undefined) value = (value << 1n) | (bv ? 1n : 0n);
    }
    return new UInt64(bits.slice(), value);
  }
}
