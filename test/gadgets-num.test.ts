/**
 * AllocatedNum / Num / multipack against bellperson's num.rs and multipack.rs tests, plus the
 * strictness of toBitsLeStrict near the modulus.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { LinearCombination, ONE, auxVariable } from '../src/r1cs/cs.js';
import { FR_MODULUS } from '../src/field/layout.js';
import {
  AllocatedBit,
  AllocatedNum,
  Boolean,
  Num,
  SynthesisError,
  bytesToBits,
  bytesToBitsLe,
  computeMultipacking,
  packBits,
  packIntoInputs,
} from '../src/gadgets/index.js';
import { rng } from './support.js';

const r = FR_MODULUS;

test('alloc / square / mul / add / inputize', () => {
  const cs = new TestConstraintSystem();
  const n = AllocatedNum.alloc(cs, () => 3n);
  assert.equal(cs.get('num'), 3n);
  const n2 = n.square(cs);
  assert.ok(cs.isSatisfied());
  assert.equal(cs.get('squared num'), 9n);
  assert.equal(n2.value, 9n);
  cs.set('squared num', 10n);
  assert.equal(cs.whichIsUnsatisfied(), 'squaring constraint');

  const cs2 = new TestConstraintSystem();
  const a = cs2.namespace('a', () => AllocatedNum.alloc(cs2, () => 12n));
  const b = cs2.namespace('b', () => AllocatedNum.alloc(cs2, () => 10n));
  const p = a.mul(cs2, b);
  assert.equal(p.value, 120n);
  const s = a.add(cs2, b);
  assert.equal(s.value, 22n);
  cs2.namespace('in', () => s.inputize(cs2));
  assert.ok(cs2.isSatisfied());
  assert.deepEqual(cs2.inputs(), [1n, 22n]);
  cs2.set('product num', 121n);
  assert.equal(cs2.whichIsUnsatisfied(), 'multiplication constraint');
  cs2.set('product num', 120n);
  cs2.set('sum num', 23n);
  assert.equal(cs2.whichIsUnsatisfied(), 'addition constraint');
  cs2.set('sum num', 22n);
  cs2.set('in/input variable', 5n);
  assert.equal(cs2.whichIsUnsatisfied(), 'in/enforce input is correct');

  const cs3 = new TestConstraintSystem();
  const x = AllocatedNum.allocInput(cs3, () => r - 1n);
  assert.equal(cs3.get('input num'), r - 1n);
  assert.equal(x.value, r - 1n);
});

test('assertNonzero (test_num_nonzero)', () => {
  const cs = new TestConstraintSystem();
  const n = AllocatedNum.alloc(cs, () => 3n);
  n.assertNonzero(cs);
  assert.ok(cs.isSatisfied());
  cs.set('ephemeral inverse', 3n);
  assert.equal(cs.whichIsUnsatisfied(), 'nonzero assertion constraint');
  const cs2 = new TestConstraintSystem();
  const z = AllocatedNum.alloc(cs2, () => 0n);
  assert.throws(() => z.assertNonzero(cs2), (e) => e instanceof SynthesisError && e.kind === 'DivisionByZero');
});

test('conditionallyReverse (test_num_conditional_reversal), constant and allocated conditions', () => {
  const next = rng(1);
  for (const cond of [false, true]) {
    for (const allocated of [false, true]) {
      const cs = new TestConstraintSystem();
      const a = cs.namespace('a', () => AllocatedNum.alloc(cs, next));
      const b = cs.namespace('b', () => AllocatedNum.alloc(cs, next));
      const condition = allocated ? Boolean.is(cs.namespace('c', () => AllocatedBit.alloc(cs, cond))) : Boolean.constant(cond);
      const [c, d] = AllocatedNum.conditionallyReverse(cs, a, b, condition);
      assert.ok(cs.isSatisfied());
      assert.equal(c.value, cond ? b.value : a.value);
      assert.equal(d.value, cond ? a.value : b.value);
      cs.set('conditional reversal result 2/num', 7n);
      assert.equal(cs.whichIsUnsatisfied(), 'second conditional reversal');
    }
  }
});

test('toBitsLeStrict of r − 1 (test_into_bits_strict): setting bit 254 to make r is caught', () => {
  const cs = new TestConstraintSystem();
  const n = AllocatedNum.alloc(cs, () => r - 1n);
  const bits = n.toBitsLeStrict(cs);
  assert.ok(cs.isSatisfied());
  assert.equal(bits.length, 255);
  bits.forEach((b, i) => assert.equal(b.getValue(), (((r - 1n) >> BigInt(i)) & 1n) === 1n));
  // "bit 254" is the least significant bit (bits are allocated from the top); r − 1 is even.
  cs.set('bit 254/boolean', 1n);
  assert.equal(cs.whichIsUnsatisfied(), 'bit 254/boolean constraint');
});

test('toBitsLe / toBitsLeStrict on random values, every bit flip is caught (test_into_bits)', () => {
  const next = rng(2);
  for (let i = 0; i < 24; i++) {
    const v = next();
    const cs = new TestConstraintSystem();
    const n = AllocatedNum.alloc(cs, () => v);
    const bits = i % 2 === 0 ? n.toBitsLe(cs) : n.toBitsLeStrict(cs);
    assert.ok(cs.isSatisfied());
    assert.equal(bits.length, 255);
    bits.forEach((b, k) => {
      assert.ok(b.isIs());
      assert.equal(b.getValue(), ((v >> BigInt(k)) & 1n) === 1n);
    });
    cs.set('num', next());
    assert.ok(!cs.isSatisfied());
    cs.set('num', v);
    assert.ok(cs.isSatisfied());
    if (i < 2) {
      for (let k = 0; k < 255; k++) {
        const name = `bit ${k}/boolean`;
        const cur = cs.get(name);
        cs.set(name, 1n - cur);
        assert.ok(!cs.isSatisfied(), name);
        cs.set(name, cur);
      }
      assert.ok(cs.isSatisfied());
    }
  }
});

test('values at and near the modulus: strict accepts ≤ r − 1 only; non-strict accepts r + x', () => {
  for (const v of [0n, 1n, r - 1n, r - 2n, r - (1n << 32n), r - (1n << 32n) - 1n, (1n << 254n) - 1n, 1n << 254n]) {
    const cs = new TestConstraintSystem();
    const n = AllocatedNum.alloc(cs, () => v);
    const bits = n.toBitsLeStrict(cs);
    assert.ok(cs.isSatisfied(), `strict ${v}`);
    assert.equal(bits.reduce((acc, b, k) => acc + (b.getValue() ? 1n << BigInt(k) : 0n), 0n), v);
  }
  // A fully consistent witness for r + x (x small, r + x < 2^255): the bits, the run ANDs, all
  // computed from r + x. The unpacking constraint holds mod r, yet the strict gadget rejects it.
  for (const x of [0n, 1n, 5n, (1n << 200n) + 3n]) {
    const cs = new TestConstraintSystem();
    const real = AllocatedNum.alloc(cs, () => x);
    const forged = new AllocatedNum(real.variable, r + x);
    forged.toBitsLeStrict(cs);
    const bad = cs.whichIsUnsatisfied();
    assert.ok(bad !== undefined && /^bit \d+\/boolean constraint$/.test(bad), `strict r+${x}: ${bad}`);
  }
  // The non-strict decomposition accepts the bits of r + x for the value x.
  const cs = new TestConstraintSystem();
  const x = 5n;
  const n = AllocatedNum.alloc(cs, () => x);
  n.toBitsLe(cs);
  for (let k = 0; k < 255; k++) cs.set(`bit ${k}/boolean`, ((r + x) >> BigInt(k)) & 1n);
  assert.ok(cs.isSatisfied());
});

test('constraint counts: toBitsLe = 256, toBitsLeStrict = 255 bits + run ANDs + 1 (derived from r)', () => {
  const c1 = new CountingSystem();
  AllocatedNum.alloc(c1, () => 0n).toBitsLe(c1);
  assert.equal(c1.numConstraints, 256);
  const c2 = new CountingSystem();
  AllocatedNum.alloc(c2, () => 0n).toBitsLeStrict(c2);
  // Runs of ones of r − 1 below bit 254 and the ANDs that chain them (bellperson's algorithm):
  const bitsBe = Array.from({ length: 255 }, (_, k) => (((r - 1n) >> BigInt(254 - k)) & 1n) === 1n);
  let ands = 0;
  let run = 0;
  let haveLast = false;
  for (const b of bitsBe) {
    if (b) run++;
    else if (run > 0) {
      ands += run + (haveLast ? 1 : 0) - 1;
      haveLast = true;
      run = 0;
    }
  }
  assert.equal(c2.numConstraints, 255 + ands + 1);
  assert.equal(c2.numConstraints, 388); // regression pin for BLS12-381 (132 ANDs), derived, not from bellperson
  assert.equal(c2.numAux, 1 + 255 + ands);
});

test('shape mode: toBitsLeStrict / conditionallyReverse call no value closure', () => {
  const c = new CountingSystem();
  const n = AllocatedNum.alloc(c, () => {
    throw new Error('closure called');
  });
  assert.equal(n.value, undefined);
  const bits = n.toBitsLeStrict(c);
  assert.ok(bits.every((b) => b.getValue() === undefined));
  const m = AllocatedNum.alloc(c, () => 1n);
  const [x, y] = AllocatedNum.conditionallyReverse(c, n, m, bits[0]);
  assert.equal(x.value, undefined);
  assert.equal(y.value, undefined);
  packIntoInputs(c, bits);
  assert.equal(c.numInputs, 1 + 2);
});

test('Num: addBoolWithCoeff / add / scale / lc', () => {
  const cs = new TestConstraintSystem();
  const a = Boolean.is(cs.namespace('a', () => AllocatedBit.alloc(cs, true)));
  const b = Boolean.is(cs.namespace('b', () => AllocatedBit.alloc(cs, false)));
  let num = Num.zero();
  num = num.addBoolWithCoeff(ONE, a, 3n).addBoolWithCoeff(ONE, b.not(), 5n).addBoolWithCoeff(ONE, Boolean.constant(true), 7n);
  assert.equal(num.value, 15n);
  assert.equal(cs.eval(num.lc()), 15n);
  assert.equal(cs.eval(num.lc(2n)), 30n);
  const n = AllocatedNum.alloc(cs, () => 100n);
  const sum = num.add(Num.fromAllocated(n));
  assert.equal(sum.value, 115n);
  assert.equal(cs.eval(sum.lc()), 115n);
  const scaled = sum.scale(r - 1n);
  assert.equal(scaled.value, r - 115n);
  assert.equal(cs.eval(scaled.lc()), r - 115n);
  const unknown = new Num(LinearCombination.of(auxVariable(0)), undefined);
  assert.equal(num.add(unknown).value, undefined);
  assert.equal(unknown.addBoolWithCoeff(ONE, a, 1n).value, undefined);
});

test('packIntoInputs = computeMultipacking for 0..1500 bits (test_multipacking)', () => {
  const bit = rng(0x5962be3d).bool;
  for (const numBits of [0, 1, 2, 7, 253, 254, 255, 256, 507, 508, 509, 700, 1016, 1500]) {
    const cs = new TestConstraintSystem();
    const bits = Array.from({ length: numBits }, bit);
    const circuitBits = bits.map((b, i) => Boolean.is(cs.namespace(`bit ${i}`, () => AllocatedBit.alloc(cs, b))));
    cs.namespace('pack', () => packIntoInputs(cs, circuitBits));
    assert.ok(cs.isSatisfied());
    const expected = computeMultipacking(bits);
    assert.equal(expected.length, Math.ceil(numBits / 254));
    assert.deepEqual(cs.inputs(), [1n, ...expected]);
    assert.equal(cs.numConstraints, numBits + expected.length);
    if (numBits > 0) {
      cs.set('pack/input 0', cs.get('pack/input 0') + 1n);
      assert.equal(cs.whichIsUnsatisfied(), 'pack/packing constraint 0');
    }
  }
});

test('packBits: the first 254 bits into one aux num', () => {
  const cs = new TestConstraintSystem();
  const bits = Array.from({ length: 300 }, (_, i) => Boolean.constant(i % 3 === 0));
  const n = packBits(cs, bits);
  assert.ok(cs.isSatisfied());
  assert.equal(n.value, computeMultipacking(bits.slice(0, 254).map((b) => b.getValue()!))[0]);
  assert.equal(cs.get('input/num'), n.value);
  assert.deepEqual(cs.constraintPaths(), ['packing constraint']);
});

test('bytesToBits (MSB first) / bytesToBitsLe (LSB first)', () => {
  const bytes = new Uint8Array([0x80, 0x01, 0xa5]);
  assert.deepEqual(bytesToBits(bytes).map(Number).join(''), '100000000000000110100101');
  assert.deepEqual(bytesToBitsLe(bytes).map(Number).join(''), '000000011000000010100101');
});
