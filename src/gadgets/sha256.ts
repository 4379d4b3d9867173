/**
 * SHA-256 circuit (bellperson `gadgets::sha256`): bits are big-endian within each 32-bit word,
 * words in message order, as bellperson's `from_bits_be` / `into_bits_be`.
 *
 * Cost pinned in bellperson's tests: one compression over allocated input = 25,840 constraints
 * (`test_full_block`), a full one-block hash with padding = 44,874 (`test_full_hash`, the second
 * block is all constants except the chaining value), all-constant input = 0 (`test_blank_hash`).
 */
import type { ConstraintSystem } from '../r1cs/cs.js';
import { Boolean } from './boolean.js';
import { MultiEq } from './multieq.js';
import { UInt32 } from './uint32.js';

export const SHA256_ROUND_CONSTANTS: readonly number[] = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
];

export const SHA256_IV: readonly number[] = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/** The IV as constant UInt32s (`get_sha256_iv`). */
export function sha256Iv(): UInt32[] {
  return SHA256_IV.map((v) => UInt32.constant(v));
}

/** One compression of a 512-bit block from the IV, no padding; 256 output bits (big-endian words). */
export function sha256BlockNoPadding(cs: ConstraintSystem, input: readonly Boolean[]): Boolean[] {
  if (input.length !== 512) throw new RangeError('sha256BlockNoPadding needs 512 bits');
  return sha256CompressionFunction(cs, input, sha256Iv()).flatMap((w) => w.intoBitsBe());
}

/** SHA-256 with padding of a whole number of bytes; block i in namespace "block i". */
export function sha256(cs: ConstraintSystem, input: readonly Boolean[]): Boolean[] {
  if (input.length % 8 !== 0) throw new RangeError('sha256 input must be whole bytes');
  const padded = input.slice();
  const plen = BigInt(input.length);
  padded.push(Boolean.TRUE);
  while ((padded.length + 64) % 512 !== 0) padded.push(Boolean.FALSE);
  for (let i = 63; i >= 0; i--) padded.push(Boolean.constant(((plen >> BigInt(i)) & 1n) === 1n));

  let cur = sha256Iv();
  for (let i = 0; i * 512 < padded.length; i++) {
    const block = padded.slice(i * 512, (i + 1) * 512);
    const prev = cur;
    cur = cs.namespace(() => `block ${i}`, () => sha256CompressionFunction(cs, block, prev));
  }
  return cur.flatMap((w) => w.intoBitsBe());
}

/** bellperson's `Maybe`: a value, or additions deferred until someone needs the result. */
type Maybe = { concrete: UInt32 } | { deferred: UInt32[] };

function compute(cs: MultiEq, m: Maybe, others: readonly UInt32[]): UInt32 {
  if ('concrete' in m) return m.concrete;
  return UInt32.addmany(cs, [...m.deferred, ...others]);
}

/**
 * The compression function over a 512-bit block and 8 chaining words. One MultiEq spans the whole
 * function: it is created before the message schedule and flushed (Rust: dropped) after "new h7".
 */
export function sha256CompressionFunction(
  outer: ConstraintSystem,
  input: readonly Boolean[],
  currentHashValue: readonly UInt32[],
): UInt32[] {
  if (input.length !== 512) throw new RangeError('sha256CompressionFunction needs 512 bits');
  if (currentHashValue.length !== 8) throw new RangeError('sha256CompressionFunction needs 8 words');

  const w: UInt32[] = [];
  for (let j = 0; j < 16; j++) w.push(UInt32.fromBitsBe(input.slice(j * 32, (j + 1) * 32)));

  const cs = new MultiEq(outer);

  for (let i = 16; i < 64; i++) {
    cs.namespace(
      () => `w extension ${i}`,
      () => {
        let s0 = w[i - 15].rotr(7);
        s0 = cs.namespace('first xor for s0', () => s0.xor(cs, w[i - 15].rotr(18)));
        s0 = cs.namespace('second xor for s0', () => s0.xor(cs, w[i - 15].shr(3)));

        let s1 = w[i - 2].rotr(17);
        s1 = cs.namespace('first xor for s1', () => s1.xor(cs, w[i - 2].rotr(19)));
        s1 = cs.namespace('second xor for s1', () => s1.xor(cs, w[i - 2].shr(10)));

        w.push(cs.namespace('computation of w[i]', () => UInt32.addmany(cs, [w[i - 16], s0, w[i - 7], s1])));
      },
    );
  }

  let a: Maybe = { concrete: currentHashValue[0] };
  let b = currentHashValue[1];
  let c = currentHashValue[2];
  let d = currentHashValue[3];
  let e: Maybe = { concrete: currentHashValue[4] };
  let f = currentHashValue[5];
  let g = currentHashValue[6];
  let h = currentHashValue[7];

  for (let i = 0; i < 64; i++) {
    cs.namespace(
      () => `compression round ${i}`,
      () => {
        // S1 := (e rotr 6) xor (e rotr 11) xor (e rotr 25)
        const newE = cs.namespace('deferred e computation', () => compute(cs, e, []));
        let s1 = newE.rotr(6);
        s1 = cs.namespace('first xor for s1', () => s1.xor(cs, newE.rotr(11)));
        s1 = cs.namespace('second xor for s1', () => s1.xor(cs, newE.rotr(25)));

        // ch := (e and f) xor ((not e) and g)
        const ch = cs.namespace('ch', () => UInt32.sha256Ch(cs, newE, f, g));

        // temp1 := h + S1 + ch + k[i] + w[i]
        const temp1 = [h, s1, ch, UInt32.constant(SHA256_ROUND_CONSTANTS[i]), w[i]];

        // S0 := (a rotr 2) xor (a rotr 13) xor (a rotr 22)
        const newA = cs.namespace('deferred a computation', () => compute(cs, a, []));
        let s0 = newA.rotr(2);
        s0 = cs.namespace('first xor for s0', () => s0.xor(cs, newA.rotr(13)));
        s0 = cs.namespace('second xor for s0', () => s0.xor(cs, newA.rotr(22)));

        // maj := (a and b) xor (a and c) xor (b and c)
        const maj = cs.namespace('maj', () => UInt32.sha256Maj(cs, newA, b, c));

        // temp2 := S0 + maj
        const temp2 = [s0, maj];

        h = g;
        g = f;
        f = newE;
        e = { deferred: [...temp1, d] };
        d = c;
        c = b;
        b = newA;
        a = { deferred: [...temp1, ...temp2] };
      },
    );
  }

  const h0 = cs.namespace('deferred h0 computation', () => compute(cs, a, [currentHashValue[0]]));
  const h1 = cs.namespace('new h1', () => UInt32.addmany(cs, [currentHashValue[1], b]));
  const h2 = cs.namespace('new h2', () => UInt32.addmany(cs, [currentHashValue[2], c]));
  const h3 = cs.namespace('new h3', () => UInt32.addmany(cs, [currentHashValue[3], d]));
  const h4 = cs.namespace('deferred h4 computation', () => compute(cs, e, [currentHashValue[4]]));
  const h5 = cs.namespace('new h5', () => UInt32.addmany(cs, [currentHashValue[5], f]));
  const h6 = cs.namespace('new h6', () => UInt32.addmany(cs, [currentHashValue[6], g]));
  const h7 = cs.namespace('new h7', () => UInt32.addmany(cs, [currentHashValue[7], h]));

  // Rust drops the MultiEq here, at the end of the function.
  cs.finish();

  return [h0, h1, h2, h3, h4, h5, h6, h7];
}
