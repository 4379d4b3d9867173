/**
 * UInt32 / MultiEq / UInt64 against bellperson's uint32.rs tests and rust-fil-proofs' uint64.rs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { LinearCombination, ONE } from '../src/r1cs/cs.js';
import { Boolean, MultiEq, UInt32, UInt64, computeMultipacking, withMultiEq } from '../src/gadgets/index.js';
import { rng } from './support.js';

function checkBits(r: UInt32, expected: number): void {
  for (let i = 0; i < 32; i++) assert.equal(r.bits[i].getValue(), ((expected >>> i) & 1) === 1, `bit ${i}`);
}

test('fromBitsBe / fromBits of constants round-trip (test_uint32_from_bits[_be])', () => {
  const next = rng(1).u32;
  for (let k = 0; k < 200; k++) {
    const v = Array.from({ length: 32 }, () => Boolean.constant(next() % 2 !== 0));
    const be = UInt32.fromBitsBe(v);
    checkBits(be, be.value!);
    assert.deepEqual(be.intoBitsBe(), v);
    const le = UInt32.fromBits(v);
    checkBits(le, le.value!);
    assert.deepEqual(le.intoBits(), v);
    assert.equal(
      be.value,
      UInt32.fromBits(v.slice().reverse()).value,
    );
  }
});

test('xor with a constant and an allocated operand (test_uint32_xor)', () => {
  const next = rng(2).u32;
  for (let k = 0; k < 50; k++) {
    const cs = new TestConstraintSystem();
    const [a, b, c] = [next(), next(), next()];
    const aBit = cs.namespace('a_bit', () => UInt32.alloc(cs, a));
    const cBit = cs.namespace('c_bit', () => UInt32.alloc(cs, c));
    let r = cs.namespace('first xor', () => aBit.xor(cs, UInt32.constant(b)));
    r = cs.namespace('second xor', () => r.xor(cs, cBit));
    assert.ok(cs.isSatisfied());
    assert.equal(r.value, (a ^ b ^ c) >>> 0);
    checkBits(r, (a ^ b ^ c) >>> 0);
    // xor with a constant is free: 64 bit constraints + 32 xor.
    assert.equal(cs.numConstraints, 64 + 32);
  }
});

test('addmany of constants is a constant, no constraint (test_uint32_addmany_constants)', () => {
  const next = rng(3).u32;
  for (let k = 0; k < 100; k++) {
    const cs = new TestConstraintSystem();
    const [a, b, c] = [next(), next(), next()];
    const r = withMultiEq(cs, (me) => me.namespace('addition', () => UInt32.addmany(me, [a, b, c].map(UInt32.constant))));
    assert.equal(r.value, (a + b + c) % 2 ** 32);
    assert.ok(r.bits.every((x) => x.isConstant()));
    checkBits(r, r.value!);
    assert.equal(cs.numConstraints, 0);
  }
});

test('addmany: (a xor b) + c + d, a flipped result bit is caught (test_uint32_addmany)', () => {
  const next = rng(4).u32;
  for (let k = 0; k < 50; k++) {
    const cs = new TestConstraintSystem();
    const [a, b, c, d] = [next(), next(), next(), next()];
    const expected = (((a ^ b) >>> 0) + c + d) % 2 ** 32;
    const aBit = cs.namespace('a_bit', () => UInt32.alloc(cs, a));
    const dBit = cs.namespace('d_bit', () => UInt32.alloc(cs, d));
    const x = cs.namespace('xor', () => aBit.xor(cs, UInt32.constant(b)));
    const r = withMultiEq(cs, (me) => me.namespace('addition', () => UInt32.addmany(me, [x, UInt32.constant(c), dBit])));
    assert.ok(cs.isSatisfied());
    assert.equal(r.value, expected);
    checkBits(r, expected);
    assert.ok(r.bits.every((bit) => !bit.isConstant()));
    // Two allocated operands (64), xor with a constant is free, 3·(2^32 − 1) needs 34 result
    // bits, then 1 MultiEq constraint.
    assert.equal(cs.numConstraints, 64 + 34 + 1);
    // Rust names the flushed constraint from the namespace open when the MultiEq drops: the root.
    assert.equal(cs.constraintPaths().at(-1), 'multieq 0');
    const path = 'addition/result bit 0/boolean';
    cs.set(path, cs.get(path) === 0n ? 1n : 0n);
    assert.ok(!cs.isSatisfied());
    assert.equal(cs.whichIsUnsatisfied(), 'multieq 0');
  }
});

test('addmany result widths: n operands allocate bitlength(n·(2^32−1)) bits', () => {
  for (let n = 2; n <= 10; n++) {
    const counter = new CountingSystem();
    const ops = Array.from({ length: n }, (_, i) => counter.namespace(`op ${i}`, () => UInt32.alloc(counter, undefined)));
    const before = counter.numConstraints;
    const r = withMultiEq(counter, (me) => UInt32.addmany(me, ops));
    assert.equal(r.value, undefined);
    const width = (BigInt(n) * 0xffffffffn).toString(2).length;
    assert.equal(counter.numConstraints - before, width + 1);
  }
  assert.throws(() => withMultiEq(new CountingSystem(), (me) => UInt32.addmany(me, [UInt32.constant(1)])));
});

test('MultiEq packs equalities until CAPACITY = 254 bits, then flushes; finish() flushes the rest', () => {
  const cs = new TestConstraintSystem();
  const me = new MultiEq(cs);
  // 7 × 34 = 238 bits fit; the 8th starts "multieq 1".
  for (let k = 0; k < 8; k++) me.enforceEqual(34, LinearCombination.of(ONE, 5n), LinearCombination.of(ONE, 5n));
  assert.equal(cs.numConstraints, 1);
  assert.deepEqual(cs.constraintPaths(), ['multieq 0']);
  me.finish();
  assert.deepEqual(cs.constraintPaths(), ['multieq 0', 'multieq 1']);
  me.finish();
  assert.equal(cs.numConstraints, 2);
  assert.ok(cs.isSatisfied());
  // An empty MultiEq emits nothing.
  const cs2 = new TestConstraintSystem();
  new MultiEq(cs2).finish();
  assert.equal(cs2.numConstraints, 0);
  assert.throws(() => new MultiEq(cs2).enforceEqual(254, LinearCombination.zero(), LinearCombination.zero()));
});

test('rotr and shr rewire bits without constraints (test_uint32_rotr / test_uint32_shr)', () => {
  const next = rng(5).u32;
  let num = next();
  const a = UInt32.constant(num);
  for (let i = 0; i < 32; i++) {
    const b = a.rotr(i);
    assert.equal(b.value, num);
    checkBits(b, num);
    num = ((num >>> 1) | (num << 31)) >>> 0;
  }
  for (let k = 0; k < 20; k++)
    for (let i = 0; i < 60; i++) {
      const n = next();
      const s = UInt32.constant(n).shr(i);
      assert.equal(s.value, n >>> i % 32); // u32::wrapping_shr: the shift is taken mod 32
      checkBits(s, n >>> i % 32);
    }
});

test('sha256Maj / sha256Ch over mixed operands (test_uint32_sha256_maj / _ch)', () => {
  const next = rng(6).u32;
  for (let k = 0; k < 50; k++) {
    const [a, b, c] = [next(), next(), next()];
    for (const [fn, f] of [
      [UInt32.sha256Maj, (x: number, y: number, z: number) => ((x & y) ^ (x & z) ^ (y & z)) >>> 0],
      [UInt32.sha256Ch, (x: number, y: number, z: number) => ((x & y) ^ (~x & z)) >>> 0],
    ] as const) {
      const cs = new TestConstraintSystem();
      const aBit = cs.namespace('a_bit', () => UInt32.alloc(cs, a));
      const cBit = cs.namespace('c_bit', () => UInt32.alloc(cs, c));
      const r = fn(cs, aBit, UInt32.constant(b), cBit);
      assert.ok(cs.isSatisfied());
      assert.equal(r.value, f(a, b, c));
      checkBits(r, f(a, b, c));
      // With b constant each bit is one AND (or zero-cost for maj/ch short-cuts): 32 constraints.
      assert.equal(cs.numConstraints, 64 + 32);
    }
  }
});

test('UInt32 in shape mode: no values, no closures, same constraint count', () => {
  const counter = new CountingSystem();
  const a = counter.namespace('a', () => UInt32.alloc(counter, undefined));
  const b = counter.namespace('b', () => UInt32.alloc(counter, undefined));
  const x = a.xor(counter, b.rotr(3));
  const s = withMultiEq(counter, (me) => UInt32.addmany(me, [x, a.shr(7), UInt32.constant(99)]));
  assert.equal(s.value, undefined);
  assert.equal(counter.numConstraints, 64 + 32 + 34 + 1);
});

test('UInt64 (rust-fil-proofs uint64.rs): bits, packing into one public input', () => {
  const next = rng(7).u32;
  for (let k = 0; k < 20; k++) {
    const v = (BigInt(next()) << 32n) | BigInt(next());
    const cs = new TestConstraintSystem();
    const u = cs.namespace('challenge', () => UInt64.alloc(cs, v));
    cs.namespace('pack', () => u.packIntoInput(cs));
    assert.ok(cs.isSatisfied());
    assert.equal(cs.numConstraints, 65);
    assert.equal(cs.numInputs, 2);
    assert.deepEqual(cs.inputs(), [1n, v]);
    assert.equal(cs.inputPath(1), 'pack/input 0');
    const bits = Array.from({ length: 64 }, (_, i) => ((v >> BigInt(i)) & 1n) === 1n);
    assert.deepEqual(computeMultipacking(bits), [v]);
    const be = UInt64.fromBitsBe(u.toBitsBe());
    assert.equal(be.value, v);
    assert.equal(UInt64.fromBits(u.toBitsLe()).value, v);
    const cst = UInt64.constant(v);
    assert.ok(cst.bits.every((b) => b.isConstant()));
    assert.equal(UInt64.fromBits(cst.toBitsLe()).value, v);
    cs.set('challenge/allocated bit 5/boolean', 1n - cs.get('challenge/allocated bit 5/boolean'));
    assert.equal(cs.whichIsUnsatisfied(), 'pack/packing constraint 0');
  }
});
