/**
 * SHA-256 gadget: the constraint counts pinned in bellperson's sha256.rs tests (test_blank_hash: 0,
 * test_full_block: 25,840 + 512, test_full_hash: 44,874 + 512), digests against @noble/hashes, the
 * compression function against a FIPS 180-4 compression written here, shape mode = value mode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { type ConstraintSystem, LinearCombination, type Name, type Variable, auxVariable } from '../src/r1cs/cs.js';
import {
  AllocatedBit,
  Boolean,
  SHA256_IV,
  SHA256_ROUND_CONSTANTS,
  UInt32,
  UInt64,
  bytesIntoBooleanVecBe,
  packBits,
  reverseBitNumbering,
  sha256,
  sha256BlockNoPadding,
  sha256CompressionFunction,
  sha256Iv,
} from '../src/gadgets/index.js';
import { rng } from './support.js';

/** FIPS 180-4 §6.2.2 compression of one block (16 big-endian words) from state H. */
function compress(H: readonly number[], block: readonly number[]): number[] {
  const rotr = (x: number, n: number) => ((x >>> n) | (x << (32 - n))) >>> 0;
  const w = block.slice();
  for (let t = 16; t < 64; t++) {
    const s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >>> 3);
    const s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >>> 10);
    w.push((w[t - 16] + s0 + w[t - 7] + s1) >>> 0);
  }
  let [a, b, c, d, e, f, g, h] = H;
  for (let t = 0; t < 64; t++) {
    const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + SHA256_ROUND_CONSTANTS[t] + w[t]) >>> 0;
    const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) >>> 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) >>> 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) >>> 0;
  }
  return [a, b, c, d, e, f, g, h].map((x, i) => (x + H[i]) >>> 0);
}

const wordsToBitsBe = (ws: readonly number[]) => ws.flatMap((w) => Array.from({ length: 32 }, (_, i) => ((w >>> (31 - i)) & 1) === 1));
const bytesToBitsBe = (bs: Uint8Array) => Array.from(bs).flatMap((b) => Array.from({ length: 8 }, (_, i) => ((b >> (7 - i)) & 1) === 1));

function allocBits(cs: ConstraintSystem, bits: readonly boolean[], prefix = 'input bit'): Boolean[] {
  return bits.map((b, i) => Boolean.is(cs.namespace(`${prefix} ${i}`, () => AllocatedBit.alloc(cs, cs.computesValues ? b : undefined))));
}

const values = (bits: readonly Boolean[]) => bits.map((b) => b.getValue());

test('test_blank_hash: all-constant block costs 0 constraints and gives SHA256("")', () => {
  const cs = new TestConstraintSystem();
  const input = Array.from({ length: 512 }, (_, i) => Boolean.constant(i === 0));
  const out = sha256CompressionFunction(cs, input, sha256Iv()).flatMap((w) => w.intoBitsBe());
  assert.ok(cs.isSatisfied());
  assert.equal(cs.numConstraints, 0);
  assert.deepEqual(values(out), bytesToBitsBe(nobleSha256(new Uint8Array(0))));
});

test('test_full_block: one compression over 512 allocated bits = 25,840 constraints', () => {
  const next = rng(0x5962be3d).u32;
  const block = Array.from({ length: 16 }, () => next());
  const cs = new TestConstraintSystem();
  const input = allocBits(cs, wordsToBitsBe(block));
  const out = cs.namespace('sha256', () => sha256BlockNoPadding(cs, input));
  assert.ok(cs.isSatisfied());
  assert.equal(cs.numConstraints - 512, 25840);
  assert.deepEqual(values(out), wordsToBitsBe(compress(SHA256_IV, block)));

  // A corrupted witness is caught, and the test system names the constraint.
  const path = 'sha256/compression round 10/ch/ch 3/ch';
  cs.set(path, 1n - cs.get(path));
  assert.ok(!cs.isSatisfied());
  assert.equal(cs.whichIsUnsatisfied(), 'sha256/compression round 10/ch/ch 3/ch computation');
});

test('compression from an allocated chaining value matches FIPS 180-4', () => {
  const next = rng(77).u32;
  for (let trial = 0; trial < 2; trial++) {
    const block = Array.from({ length: 16 }, () => next());
    const H = Array.from({ length: 8 }, () => next());
    const cs = new TestConstraintSystem();
    const input = allocBits(cs, wordsToBitsBe(block));
    const cur = H.map((h, i) => cs.namespace(`h${i}`, () => UInt32.alloc(cs, h)));
    const out = cs.namespace('compress', () => sha256CompressionFunction(cs, input, cur));
    assert.ok(cs.isSatisfied());
    assert.deepEqual(
      out.map((w) => w.getValue()),
      compress(H, block),
    );
    assert.deepEqual(
      values(out.flatMap((w) => w.intoBitsBe())),
      wordsToBitsBe(compress(H, block)),
    );
  }
});

test('test_full_hash: 512-bit message with padding = 44,874 constraints', () => {
  const next = rng(0x5962be3d).u32;
  const msg = new Uint8Array(64).map(() => next() & 0xff);
  const cs = new TestConstraintSystem();
  const input = allocBits(cs, bytesToBitsBe(msg));
  const out = cs.namespace('sha256', () => sha256(cs, input));
  assert.ok(cs.isSatisfied());
  assert.equal(cs.numConstraints - 512, 44874);
  assert.deepEqual(values(out), bytesToBitsBe(nobleSha256(msg)));
});

test('test_against_vectors: sha256 gadget = @noble/hashes for many lengths', () => {
  const next = rng(12345).u32;
  const lengths = [0, 1, 2, 3, 7, 31, 32, 55, 56, 63, 64, 65, 119, 120, 128, 200];
  for (const len of lengths) {
    const data = new Uint8Array(len).map(() => next() & 0xff);
    const cs = new TestConstraintSystem();
    const bits = bytesToBitsBe(data);
    const input = bits.map((b, i) => Boolean.is(cs.namespace(`input bit ${i}`, () => AllocatedBit.alloc(cs, b))));
    const out = sha256(cs, input);
    assert.ok(cs.isSatisfied(), `len ${len}`);
    assert.deepEqual(values(out), bytesToBitsBe(nobleSha256(data)), `len ${len}`);
    for (const b of out) if (b.isConstant()) assert.equal(len, 0);
  }
});

test('create_label_circuit (rust-fil-proofs test_create_label): 532,025 constraints, label = SHA256 preimage', () => {
  // Reproduces the test's circuit: id (32 B) and 37 parents (32 B each) allocated as big-endian
  // bits, layer / node as constants, SHA-256 in "hash", reverse_bit_numbering, pack_bits of 254 bits.
  const next = rng(9).u32;
  const id = new Uint8Array(32).map(() => next() & 0xff);
  id[31] &= 0x3f;
  const parents = Array.from({ length: 37 }, () => new Uint8Array(32).map(() => next() & 0xff));
  const layer = 3;
  const node = 22n;
  const build = (cs: ConstraintSystem) => {
    const parentBits = parents.map((p, i) => cs.namespace(`parents ${i}`, () => bytesIntoBooleanVecBe(cs, cs.computesValues ? p : undefined, 256)));
    const idBits = cs.namespace('id', () => bytesIntoBooleanVecBe(cs, cs.computesValues ? id : undefined, 256));
    return cs.namespace('create_label', () => {
      const pre: Boolean[] = idBits.slice();
      while (pre.length < 256) pre.push(Boolean.FALSE);
      pre.push(...UInt32.constant(layer).intoBitsBe(), ...UInt64.constant(node).toBitsBe());
      while (pre.length < 512) pre.push(Boolean.FALSE);
      for (const p of parentBits) pre.push(...p);
      assert.equal(pre.length, 39 * 256);
      const digest = cs.namespace('hash', () => sha256(cs, pre));
      return cs.namespace('result_num', () => packBits(cs, reverseBitNumbering(digest).slice(0, 254)));
    });
  };
  const counter = new CountingSystem();
  const shapeNum = build(counter);
  assert.equal(counter.numConstraints, 532025);
  assert.equal(shapeNum.value, undefined);

  const cs = new TestConstraintSystem();
  const label = build(cs);
  assert.ok(cs.isSatisfied());
  assert.equal(cs.numConstraints, 532025);
  assert.equal(cs.numAux, counter.numAux);
  const preimage = new Uint8Array(1248);
  preimage.set(id, 0);
  new DataView(preimage.buffer).setUint32(32, layer, false);
  new DataView(preimage.buffer).setBigUint64(36, node, false);
  parents.forEach((p, i) => preimage.set(p, 64 + 32 * i));
  const digest = nobleSha256(preimage);
  digest[31] &= 0x3f;
  const expected = digest.reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);
  assert.equal(label.value, expected);
});

/** A shape recorder for the test: every constraint as (name path, A, B, C terms), no values. */
class ShapeLog implements ConstraintSystem {
  readonly rows: string[] = [];
  private aux = 0;
  private inputs = 1;
  private path: string[] = [];
  constructor(readonly computesValues: boolean, private readonly inner?: ConstraintSystem) {}
  private name(n: Name): string {
    return [...this.path, typeof n === 'function' ? n() : n].join('/');
  }
  alloc(n: Name, v: () => bigint): Variable {
    if (this.inner) return this.inner.alloc(n, v);
    if (this.computesValues) v();
    return auxVariable(this.aux++);
  }
  allocInput(n: Name, v: () => bigint): Variable {
    if (this.inner) return this.inner.allocInput(n, v);
    if (this.computesValues) v();
    return this.inputs++;
  }
  enforce(n: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    const s = (lc: LinearCombination) => lc.vars.map((v, k) => `${lc.coeffs[k]}*${v}`).join('+');
    this.rows.push(`${this.name(n)}: ${s(a)} | ${s(b)} | ${s(c)}`);
    this.inner?.enforce(n, a, b, c);
  }
  namespace<T>(n: Name, fn: () => T): T {
    this.path.push(typeof n === 'function' ? n() : n);
    try {
      return this.inner ? this.inner.namespace(n, fn) : fn();
    } finally {
      this.path.pop();
    }
  }
  value(v: Variable): bigint | undefined {
    return this.inner?.value(v);
  }
}

test('shape mode (no values) emits exactly the constraints of value mode, same names and terms', () => {
  const next = rng(4242).u32;
  const data = new Uint8Array(80).map(() => next() & 0xff);
  const withValues = new ShapeLog(true, new TestConstraintSystem());
  sha256(withValues, allocBits(withValues, bytesToBitsBe(data)));
  const shape = new ShapeLog(false);
  const shapeOut = sha256(shape, allocBits(shape, bytesToBitsBe(data)));
  assert.equal(shape.rows.length, withValues.rows.length);
  assert.deepEqual(shape.rows, withValues.rows);
  assert.ok(shapeOut.every((b) => b.getValue() === undefined));
  // 34-bit sums (4 operands): 7 fit under CAPACITY = 254, the 8th (w[23]) flushes "multieq 0".
  assert.ok(withValues.rows.some((r) => r.startsWith('block 0/w extension 23/computation of w[i]/multieq 0:')));
  assert.ok(withValues.rows.some((r) => r.startsWith('block 0/compression round 1/deferred a computation/multieq 6:')));
  assert.ok(withValues.rows.at(-1)!.startsWith('block 1/multieq'), 'the MultiEq flush closes each compression');
});

test('CountingSystem: the compression of an allocated block is 25,840 constraints', () => {
  const counter = new CountingSystem();
  const input = allocBits(counter, new Array<boolean>(512).fill(false));
  sha256BlockNoPadding(counter, input);
  assert.equal(counter.numConstraints - 512, 25840);
});

test('an unsatisfied output: forcing a digest bit to the wrong value is detected', () => {
  const next = rng(5).u32;
  const data = new Uint8Array(32).map(() => next() & 0xff);
  const cs = new TestConstraintSystem();
  const out = sha256(cs, allocBits(cs, bytesToBitsBe(data)));
  const expected = bytesToBitsBe(nobleSha256(data));
  // Pin output bit 0 to the opposite of its true value.
  Boolean.enforceEqual(cs, out[0], Boolean.constant(!expected[0]));
  assert.ok(!cs.isSatisfied());
  assert.equal(cs.whichIsUnsatisfied(), expected[0] ? 'enforce equal to zero' : 'enforce equal to one');
  void LinearCombination;
});
