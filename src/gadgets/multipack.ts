/**
 * Packing bit vectors into field elements (bellperson `gadgets::multipack`): chunks of
 * CAPACITY = 254 bits, bit k of a chunk weighted 2^k.
 */
import { type ConstraintSystem, LinearCombination, ONE } from '../r1cs/cs.js';
import { FR_MODULUS } from '../field/layout.js';
import type { Boolean } from './boolean.js';
import { FR_CAPACITY, required } from './errors.js';
import { AllocatedNum } from './num.js';

/** Σ 2^k·bits[k] as a linear combination and its value (unknown if any bit's is). */
function packLc(bits: readonly Boolean[]): { lc: LinearCombination; value: bigint | undefined } {
  const lc = LinearCombination.zero();
  let value: bigint | undefined = 0n;
  let coeff = 1n;
  for (const bit of bits) {
    const bv = bit.getValue();
    if (bv === undefined) value = undefined;
    else if (bv && value !== undefined) value += coeff;
    bit.addTo(lc, coeff, ONE);
    coeff <<= 1n;
  }
  return { lc, value: value === undefined ? undefined : value % FR_MODULUS };
}

/**
 * Exposes `bits` as public inputs, 254 bits per input: "input i" then
 * "packing constraint i": (Σ 2^k·bit_k) · 1 = input_i.
 */
export function packIntoInputs(cs: ConstraintSystem, bits: readonly Boolean[]): void {
  for (let i = 0; i * FR_CAPACITY < bits.length; i++) {
    const chunk = bits.slice(i * FR_CAPACITY, (i + 1) * FR_CAPACITY);
    const { lc, value } = packLc(chunk);
    const input = cs.allocInput(() => `input ${i}`, () => required(value));
    cs.program?.pack(input, chunk);
    cs.enforce(() => `packing constraint ${i}`, lc, LinearCombination.of(ONE), LinearCombination.of(input));
  }
}

/**
 * Packs the first 254 bits into one auxiliary AllocatedNum (namespace "input", variable "num"),
 * "packing constraint": (Σ 2^k·bit_k) · 1 = num (bellperson `pack_bits`).
 */
export function packBits(cs: ConstraintSystem, bits: readonly Boolean[]): AllocatedNum {
  const chunk = bits.slice(0, FR_CAPACITY);
  const { lc, value } = packLc(chunk);
  const num = cs.namespace('input', () => AllocatedNum.alloc(cs, () => required(value)));
  cs.program?.pack(num.variable, chunk);
  cs.enforce('packing constraint', lc, LinearCombination.of(ONE), LinearCombination.of(num.variable));
  return num;
}

/** Bits of bytes, most significant bit of each byte first. */
export function bytesToBits(bytes: Uint8Array | readonly number[]): boolean[] {
  const out: boolean[] = [];
  for (const v of bytes) for (let i = 7; i >= 0; i--) out.push(((v >> i) & 1) === 1);
  return out;
}

/** Bits of bytes, least significant bit of each byte first. */
export function bytesToBitsLe(bytes: Uint8Array | readonly number[]): boolean[] {
  const out: boolean[] = [];
  for (const v of bytes) for (let i = 0; i < 8; i++) out.push(((v >> i) & 1) === 1);
  return out;
}

/** The public inputs `packIntoInputs` produces for these bits. */
export function computeMultipacking(bits: readonly boolean[]): bigint[] {
  const out: bigint[] = [];
  for (let i = 0; i * FR_CAPACITY < bits.length; i++) {
    let cur = 0n;
    let coeff = 1n;
    for (const b of bits.slice(i * FR_CAPACITY, (i + 1) * FR_CAPACITY)) {
      if (b) cur += coeff;
      coeff <<= 1n;
    }
    out.push(cur);
  }
  return out;
}
