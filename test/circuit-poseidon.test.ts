/**
 * neptune's legacy Poseidon circuit against the out-of-circuit hash, with neptune's pinned
 * constraint counts (circuit.rs `test_poseidon_hash`, Strength::Standard: arity 2 → 311,
 * 4 → 377, 8 → 505) and storage-proofs-porep hash.rs (`hash_single_column`, arity 11 → 598;
 * `hash2_circuit` → 311).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { ShapeRecorder } from '../src/r1cs/shape.js';
import { FR_MODULUS } from '../src/field/layout.js';
import { AllocatedNum } from '../src/gadgets/num.js';
import { SynthesisError } from '../src/gadgets/errors.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { poseidonCircuitConstraintCount, poseidonHashCircuit } from '../src/filecoin/circuit/poseidon.js';
import { rng } from './support.js';

const PINNED: ReadonlyMap<number, number> = new Map([
  [2, 311],
  [4, 377],
  [8, 505],
  [11, 598],
]);

for (const [arity, pinned] of PINNED) {
  test(`Poseidon circuit, arity ${arity}: equals poseidonHash, satisfied, ${pinned} constraints`, () => {
    assert.equal(poseidonCircuitConstraintCount(arity), pinned);
    const next = rng(arity);
    const cases = [
      Array.from({ length: arity }, () => 0n),
      Array.from({ length: arity }, () => FR_MODULUS - 1n),
      Array.from({ length: arity }, next),
      Array.from({ length: arity }, next),
    ];
    for (const xs of cases) {
      const cs = new TestConstraintSystem();
      const nums = xs.map((x, i) => cs.namespace(`data ${i}`, () => AllocatedNum.alloc(cs, () => x)));
      const before = cs.numConstraints;
      const out = cs.namespace('hash', () => poseidonHashCircuit(cs, nums));
      assert.equal(out.value, poseidonHash(xs));
      assert.equal(cs.whichIsUnsatisfied(), undefined);
      assert.equal(cs.numConstraints - before, pinned);
      assert.equal(cs.numInputs, 1);

      // A wrong preimage value is caught (first S-box that uses it).
      cs.set('data 1/num', xs[1] + 1n);
      assert.equal(cs.whichIsUnsatisfied(), 'hash/first round/quintic s-box 2/(l+rk)^2/squared sum constraint');
    }
  });
}

test('Poseidon circuit: shape mode allocates the same and never asks for values', () => {
  for (const [arity, pinned] of PINNED) {
    const counter = new CountingSystem();
    const recorder = new ShapeRecorder();
    for (const cs of [counter, recorder]) {
      const nums = Array.from({ length: arity }, () =>
        AllocatedNum.alloc(cs, () => {
          throw new Error('value closure called in shape mode');
        }),
      );
      const out = poseidonHashCircuit(cs, nums);
      assert.equal(out.value, undefined);
    }
    assert.equal(counter.numConstraints, pinned);
    const shape = recorder.finish();
    assert.equal(shape.numConstraints, pinned);
    assert.equal(shape.numAux, counter.numAux);
    // aux = preimage + 3 per S-box but the tag's first + the LC allocations, as constraints
    assert.equal(counter.numAux, arity + pinned);
  }
});

test('Poseidon circuit: a missing value is AssignmentMissing in a value-computing system', () => {
  const cs = new TestConstraintSystem();
  const a = new AllocatedNum(cs.alloc('a', () => 1n), undefined);
  const b = cs.namespace('b', () => AllocatedNum.alloc(cs, () => 2n));
  assert.throws(() => poseidonHashCircuit(cs, [a, b]), (e: unknown) => e instanceof SynthesisError && e.kind === 'AssignmentMissing');
});
