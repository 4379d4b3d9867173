/**
 * Bit-vector helpers of rust-fil-proofs (`storage-proofs-core/src/util.rs`) used around the
 * SHA-256 gadget: allocating bytes as big-endian bits, and reversing the bit numbering inside
 * each byte (SHA-256 digests are big-endian per byte; Fr packing is little-endian).
 */
import type { ConstraintSystem } from '../r1cs/cs.js';
import { AllocatedBit, Boolean } from './boolean.js';
import { bytesToBits } from './multipack.js';

/**
 * `bytes_into_boolean_vec_be`: each bit, most significant first within a byte, as an AllocatedBit
 * in namespace "bit i". Without a value, `sizeBits` bits are allocated. (Rust passes `size`
 * straight to `vec![None; size]`, i.e. a count of *bits*; its callers all pass a value.)
 */
export function bytesIntoBooleanVecBe(cs: ConstraintSystem, value: Uint8Array | undefined, sizeBits: number): Boolean[] {
  const values: (boolean | undefined)[] = value === undefined ? new Array<undefined>(sizeBits).fill(undefined) : bytesToBits(value);
  return values.map((b, i) => Boolean.is(cs.namespace(() => `bit ${i}`, () => AllocatedBit.alloc(cs, b))));
}

/** `reverse_bit_numbering`: pad with constant false to whole bytes, then reverse each byte's bits. */
export function reverseBitNumbering(bits: readonly Boolean[]): Boolean[] {
  const padded = bits.slice();
  while (padded.length % 8 !== 0) padded.push(Boolean.FALSE);
  const out: Boolean[] = [];
  for (let i = 0; i < padded.length; i += 8) for (let k = 7; k >= 0; k--) out.push(padded[i + k]);
  return out;
}
