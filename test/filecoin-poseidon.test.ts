import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FR_MODULUS } from '../src/field/layout.js';
import {
  FILECOIN_ARITIES, poseidonConstants, poseidonHash, poseidonHashOptimized, poseidonOptimizedConstants,
} from '../src/filecoin/hash/poseidon.js';
import { python, rng } from './support.js';


/** Deterministic pseudo-random field elements, plus the edges 0, 1, −1. */
function sampleInputs(arity: number, seed: number): bigint[][] {
  const next = rng(seed);
  return [
    Array.from({ length: arity }, () => 0n),
    Array.from({ length: arity }, (_, i) => BigInt(i + 1)),
    Array.from({ length: arity }, () => FR_MODULUS - 1n),
    Array.from({ length: arity }, next),
    Array.from({ length: arity }, next),
  ];
}

const cases = FILECOIN_ARITIES.flatMap((a) => sampleInputs(a, a));

test('Poseidon equals poseidon_ref.py for arities 2, 4, 8, 11', () => {
  const lines = python(
    `from poseidon_ref import poseidon\nfor xs in json.loads(${JSON.stringify(JSON.stringify(cases.map((c) => c.map(String))))}):\n    print(poseidon([int(x) for x in xs]))`,
  );
  assert.equal(lines.length, cases.length);
  cases.forEach((inputs, i) => assert.equal(poseidonHash(inputs), BigInt(lines[i]), `arity ${inputs.length} case ${i}`));
});

test('round constants and MDS equal the reference generator', () => {
  const lines = python(
    `from poseidon_ref import consts\nfor a in (2, 4, 8, 11):\n    rc, m = consts(a)\n    print(json.dumps([str(x) for x in rc]))\n    print(json.dumps([[str(x) for x in r] for r in m]))`,
  );
  FILECOIN_ARITIES.forEach((a, i) => {
    const c = poseidonConstants(a);
    assert.deepEqual(c.roundConstants.map(String), JSON.parse(lines[2 * i]));
    assert.deepEqual(c.mds.map((r) => r.map(String)), JSON.parse(lines[2 * i + 1]));
    assert.equal(c.roundConstants.length, (c.fullRounds + c.partialRounds) * c.width);
    assert.equal(c.domainTag, (1n << BigInt(a)) - 1n);
  });
});

test('optimized (compressed constants, sparse matrices) hash equals the plain hash', () => {
  for (const inputs of cases) assert.equal(poseidonHashOptimized(inputs), poseidonHash(inputs));
});

test('optimized constants have neptune 11 shapes', () => {
  for (const a of FILECOIN_ARITIES) {
    const o = poseidonOptimizedConstants(a);
    const t = a + 1;
    assert.equal(o.compressedRoundConstants.length, o.fullRounds * t + o.partialRounds);
    assert.equal(o.sparseMatrices.length, o.partialRounds);
    for (const s of o.sparseMatrices) {
      assert.equal(s.wHat.length, t);
      assert.equal(s.vRest.length, t - 1);
    }
    assert.equal(o.preSparseMatrix.length, t);
    // M · M⁻¹ = I
    for (let i = 0; i < t; i++) {
      for (let j = 0; j < t; j++) {
        let s = 0n;
        for (let k = 0; k < t; k++) s += o.mds[i][k] * o.mdsInverse[k][j];
        assert.equal(s % FR_MODULUS, i === j ? 1n : 0n);
      }
    }
    // first t compressed constants are the first round's constants unchanged
    assert.deepEqual(o.compressedRoundConstants.slice(0, t), o.roundConstants.slice(0, t));
  }
});

test('Poseidon refuses unsupported arities and non-canonical inputs', () => {
  assert.throws(() => poseidonHash([1n, 2n, 3n]), RangeError);
  assert.throws(() => poseidonHash([1n, FR_MODULUS]), RangeError);
  assert.throws(() => poseidonHash([-1n, 0n]), RangeError);
});
