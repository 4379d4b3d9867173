/**
 * Boolean gadgets against bellperson's own boolean.rs tests (bellperson 0.27 / bellpepper-core):
 * truth tables, the constraint named when a witness is corrupted, constant short-cuts (0
 * constraints when every operand is constant), and the kind (Is / Not / Constant) of each result.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import type { ConstraintSystem } from '../src/r1cs/cs.js';
import {
  AllocatedBit,
  Boolean,
  SynthesisError,
  fieldIntoAllocatedBitsLe,
  u64IntoBooleanVecLe,
} from '../src/gadgets/index.js';

const B = [false, true];

test('AllocatedBit.alloc: boolean constraint (bellperson test_allocated_bit)', () => {
  const cs = new TestConstraintSystem();
  AllocatedBit.alloc(cs, true);
  assert.equal(cs.get('boolean'), 1n);
  assert.ok(cs.isSatisfied());
  cs.set('boolean', 0n);
  assert.ok(cs.isSatisfied());
  cs.set('boolean', 2n);
  assert.equal(cs.whichIsUnsatisfied(), 'boolean constraint');
});

const binaryOps: [string, (cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit) => AllocatedBit, string, (a: boolean, b: boolean) => boolean][] = [
  ['xor', AllocatedBit.xor, 'xor result', (a, b) => a !== b],
  ['and', AllocatedBit.and, 'and result', (a, b) => a && b],
  ['and_not', AllocatedBit.andNot, 'and not result', (a, b) => a && !b],
  ['nor', AllocatedBit.nor, 'nor result', (a, b) => !a && !b],
];

for (const [label, op, resultName, f] of binaryOps) {
  test(`AllocatedBit.${label}: truth table and inverted result`, () => {
    for (const av of B)
      for (const bv of B) {
        const cs = new TestConstraintSystem();
        const a = cs.namespace('a', () => AllocatedBit.alloc(cs, av));
        const b = cs.namespace('b', () => AllocatedBit.alloc(cs, bv));
        const c = op(cs, a, b);
        assert.equal(c.value, f(av, bv));
        assert.ok(cs.isSatisfied());
        assert.equal(cs.get('a/boolean'), av ? 1n : 0n);
        assert.equal(cs.get(resultName), f(av, bv) ? 1n : 0n);
        assert.equal(cs.numConstraints, 3);
        cs.set(resultName, f(av, bv) ? 0n : 1n);
        assert.ok(!cs.isSatisfied());
      }
  });
}

test('Boolean.enforceEqual: every combination of allocated / negated / constant', () => {
  for (const aBool of B)
    for (const bBool of B)
      for (const aNeg of B)
        for (const bNeg of B) {
          const expected = (aBool !== aNeg) === (bBool !== bNeg);
          for (const [aConst, bConst] of [
            [false, false],
            [true, false],
            [false, true],
            [true, true],
          ]) {
            const cs = new TestConstraintSystem();
            let a = aConst ? Boolean.constant(aBool) : Boolean.is(cs.namespace('a', () => AllocatedBit.alloc(cs, aBool)));
            let b = bConst ? Boolean.constant(bBool) : Boolean.is(cs.namespace('b', () => AllocatedBit.alloc(cs, bBool)));
            if (aNeg) a = a.not();
            if (bNeg) b = b.not();
            if (aConst && bConst) {
              if (expected) {
                Boolean.enforceEqual(cs, a, b);
                assert.ok(cs.isSatisfied());
              } else {
                assert.throws(() => Boolean.enforceEqual(cs, a, b), (e) => e instanceof SynthesisError && e.kind === 'Unsatisfiable');
              }
            } else {
              Boolean.enforceEqual(cs, a, b);
              assert.equal(cs.isSatisfied(), expected);
              const name = cs.constraintPaths().at(-1)!;
              const constant = aConst ? aBool !== aNeg : bConst ? bBool !== bNeg : undefined;
              assert.equal(
                name,
                constant === undefined ? 'enforce equal' : constant ? 'enforce equal to one' : 'enforce equal to zero',
              );
            }
          }
        }
});

test('Boolean.not: Is <-> Not, constants flip', () => {
  const cs = new TestConstraintSystem();
  const b = Boolean.is(AllocatedBit.alloc(cs, true));
  assert.ok(b.isIs());
  assert.ok(b.not().isNot());
  assert.ok(b.not().not().isIs());
  assert.ok(Boolean.constant(true).not().isConstantEqual(false));
  assert.ok(Boolean.constant(true).not().not().isConstantEqual(true));
});

type Operand = 'True' | 'False' | 'AllocatedTrue' | 'AllocatedFalse' | 'NegatedAllocatedTrue' | 'NegatedAllocatedFalse';
const OPERANDS: Operand[] = ['True', 'False', 'AllocatedTrue', 'AllocatedFalse', 'NegatedAllocatedTrue', 'NegatedAllocatedFalse'];
const isConst = (o: Operand) => o === 'True' || o === 'False';
const val = (o: Operand) => o === 'True' || o === 'AllocatedTrue' || o === 'NegatedAllocatedFalse';

function construct(cs: ConstraintSystem, o: Operand, name: string): Boolean {
  return cs.namespace(name, () => {
    switch (o) {
      case 'True':
        return Boolean.constant(true);
      case 'False':
        return Boolean.constant(false);
      case 'AllocatedTrue':
        return Boolean.is(AllocatedBit.alloc(cs, true));
      case 'AllocatedFalse':
        return Boolean.is(AllocatedBit.alloc(cs, false));
      case 'NegatedAllocatedTrue':
        return Boolean.is(AllocatedBit.alloc(cs, true)).not();
      case 'NegatedAllocatedFalse':
        return Boolean.is(AllocatedBit.alloc(cs, false)).not();
    }
  });
}

const kindOf = (b: Boolean) => (b.isConstant() ? 'Constant' : b.isIs() ? 'Is' : 'Not');
const negated = (o: Operand) => o.startsWith('Negated');

test('Boolean.xor over all operand kinds (bellperson test_boolean_xor)', () => {
  for (const x of OPERANDS)
    for (const y of OPERANDS) {
      const cs = new TestConstraintSystem();
      const a = construct(cs, x, 'a');
      const b = construct(cs, y, 'b');
      const c = Boolean.xor(cs, a, b);
      assert.ok(cs.isSatisfied());
      assert.equal(c.getValue(), val(x) !== val(y));
      if (isConst(x) && isConst(y)) assert.equal(kindOf(c), 'Constant');
      else if (isConst(x) || isConst(y)) {
        // x XOR const: the other operand, negated when the constant is true.
        const other = isConst(x) ? y : x;
        const flip = (isConst(x) ? val(x) : val(y)) !== negated(other);
        assert.equal(kindOf(c), flip ? 'Not' : 'Is');
        assert.equal(cs.numConstraints, 1);
      } else {
        assert.equal(kindOf(c), negated(x) !== negated(y) ? 'Not' : 'Is');
        assert.equal(cs.numConstraints, 3);
        const raw = val(x) !== negated(x) ? 1 : 0; // underlying bit values
        const rawY = val(y) !== negated(y) ? 1 : 0;
        assert.equal(cs.get('xor result'), BigInt(raw ^ rawY));
      }
    }
});

test('Boolean.xor(Not x, Is y) calls AllocatedBit.xor(y, x): operand order inside the constraint', () => {
  const cs = new TestConstraintSystem();
  const x = cs.namespace('x', () => AllocatedBit.alloc(cs, true));
  const y = cs.namespace('y', () => AllocatedBit.alloc(cs, false));
  const rec = recordingCs();
  rec.enforce = (_n, a) => {
    rec.firstA = a.vars.slice();
  };
  Boolean.xor(wrap(cs, rec), Boolean.notOf(x), Boolean.is(y));
  assert.deepEqual(rec.firstA, [y.variable, y.variable]);
});

test('Boolean.and over all operand kinds (bellperson test_boolean_and)', () => {
  for (const x of OPERANDS)
    for (const y of OPERANDS) {
      const cs = new TestConstraintSystem();
      const a = construct(cs, x, 'a');
      const b = construct(cs, y, 'b');
      const c = Boolean.and(cs, a, b);
      assert.ok(cs.isSatisfied());
      assert.equal(c.getValue(), val(x) && val(y));
      const allocs = (isConst(x) ? 0 : 1) + (isConst(y) ? 0 : 1);
      if (isConst(x) || isConst(y)) {
        assert.equal(cs.numConstraints, allocs);
        if ((isConst(x) && !val(x)) || (isConst(y) && !val(y))) assert.ok(c.isConstantEqual(false));
      } else {
        assert.equal(kindOf(c), 'Is');
        assert.equal(cs.numConstraints, 3);
        const name = negated(x) && negated(y) ? 'nor result' : negated(x) || negated(y) ? 'and not result' : 'and result';
        assert.equal(cs.get(name), val(x) && val(y) ? 1n : 0n);
      }
    }
});

test('Boolean.or', () => {
  for (const x of OPERANDS)
    for (const y of OPERANDS) {
      const cs = new TestConstraintSystem();
      const c = Boolean.or(cs, construct(cs, x, 'a'), construct(cs, y, 'b'));
      assert.ok(cs.isSatisfied());
      assert.equal(c.getValue(), val(x) || val(y));
    }
});

for (const [label, fn, expectedFn, allocName, constraintName] of [
  ['sha256Ch', Boolean.sha256Ch, (a: boolean, b: boolean, c: boolean) => (a && b) !== (!a && c), 'ch', 'ch computation'],
  [
    'sha256Maj',
    Boolean.sha256Maj,
    (a: boolean, b: boolean, c: boolean) => ((a && b) !== (a && c)) !== (b && c),
    'maj',
    'maj computation',
  ],
] as const) {
  test(`Boolean.${label} over all operand kinds (bellperson test_boolean_${label === 'sha256Ch' ? 'sha256_ch' : 'sha256_maj'})`, () => {
    for (const x of OPERANDS)
      for (const y of OPERANDS)
        for (const z of OPERANDS) {
          const cs = new TestConstraintSystem();
          const a = construct(cs, x, 'a');
          const b = construct(cs, y, 'b');
          const c = construct(cs, z, 'c');
          const before = cs.numConstraints;
          const expected = expectedFn(val(x), val(y), val(z));
          const r = fn(cs, a, b, c);
          assert.ok(cs.isSatisfied());
          assert.equal(r.getValue(), expected);
          if (isConst(x) || isConst(y) || isConst(z)) {
            if (isConst(x) && isConst(y) && isConst(z)) assert.equal(cs.numConstraints, 0);
            // A short-cut costs at most one AND; a constant-true `a` in Ch keeps the general form.
            assert.ok(cs.numConstraints - before <= 1);
          } else {
            assert.equal(cs.numConstraints - before, label === 'sha256Ch' ? 1 : 2);
            assert.equal(cs.get(allocName), expected ? 1n : 0n);
            cs.set(allocName, expected ? 0n : 1n);
            assert.equal(cs.whichIsUnsatisfied(), constraintName);
          }
        }
  });
}

test('AllocatedBit.allocConditionally (bellperson test_alloc_conditionally)', () => {
  {
    const cs = new TestConstraintSystem();
    const b = AllocatedBit.alloc(cs, false);
    assert.throws(
      () => cs.namespace('alloc_conditionally', () => AllocatedBit.allocConditionally(cs, undefined, b)),
      (e) => e instanceof SynthesisError && e.kind === 'AssignmentMissing',
    );
  }
  for (const [value, mustBeFalse, ok] of [
    [true, false, true],
    [true, true, false],
    [false, false, true],
    [false, true, true],
  ] as const) {
    const cs = new TestConstraintSystem();
    const b = AllocatedBit.alloc(cs, mustBeFalse);
    const x = cs.namespace('alloc_conditionally', () => AllocatedBit.allocConditionally(cs, value, b));
    assert.equal(x.getValue(), value);
    assert.equal(cs.isSatisfied(), ok);
    if (!ok) assert.equal(cs.whichIsUnsatisfied(), 'alloc_conditionally/boolean constraint');
  }
});

test('u64IntoBooleanVecLe (bellperson test_u64_into_boolean_vec_le)', () => {
  const cs = new TestConstraintSystem();
  const bits = u64IntoBooleanVecLe(cs, 17234652694787248421n);
  assert.ok(cs.isSatisfied());
  assert.equal(bits.length, 64);
  assert.equal(cs.numConstraints, 64);
  const v = (i: number) => bits[63 - i].getValue();
  for (const i of [0, 1, 2, 4, 5, 20]) assert.equal(v(i), true);
  for (const i of [3, 21, 22]) assert.equal(v(i), false);
  assert.equal(cs.get('bit 63/boolean'), 1n);
});

test('fieldIntoAllocatedBitsLe (bellperson test_field_into_allocated_bits_le)', () => {
  const cs = new TestConstraintSystem();
  const r = 9147677615426976802526883532204139322118074541891858454835346926874644257775n;
  const bits = fieldIntoAllocatedBitsLe(cs, r);
  assert.ok(cs.isSatisfied());
  assert.equal(bits.length, 255);
  const v = (i: number) => bits[254 - i].value;
  for (const i of [2, 4, 20, 23]) assert.equal(v(i), true);
  for (const i of [0, 1, 3, 5]) assert.equal(v(i), false);
});

test('shape mode: no value closure is called, derived values stay undefined, same count', () => {
  const counter = new CountingSystem();
  const a = Boolean.is(AllocatedBit.alloc(counter, undefined));
  const b = Boolean.is(AllocatedBit.alloc(counter, undefined));
  const c = Boolean.is(AllocatedBit.alloc(counter, undefined));
  const outs = [
    Boolean.xor(counter, a, b),
    Boolean.and(counter, a, b.not()),
    Boolean.sha256Ch(counter, a, b, c),
    Boolean.sha256Maj(counter, a, b, c),
  ];
  for (const o of outs) assert.equal(o.getValue(), undefined);
  assert.equal(counter.numConstraints, 3 + 1 + 1 + 1 + 2);
  assert.equal(counter.numAux, 3 + 1 + 1 + 1 + 2);
});

// --- a tiny recording wrapper, to look at the linear combinations a gadget emits ---------------
interface Rec {
  enforce: (name: unknown, a: { vars: number[] }, b: unknown, c: unknown) => void;
  firstA?: number[];
}
function recordingCs(): Rec {
  return { enforce: () => {} };
}
function wrap(inner: ConstraintSystem, rec: Rec): ConstraintSystem {
  return {
    computesValues: inner.computesValues,
    alloc: (n, v) => inner.alloc(n, v),
    allocInput: (n, v) => inner.allocInput(n, v),
    enforce: (n, a, b, c) => {
      rec.enforce(n, a, b, c);
      inner.enforce(n, a, b, c);
    },
    namespace: (n, fn) => inner.namespace(n, fn),
    value: (v) => inner.value(v),
  };
}
