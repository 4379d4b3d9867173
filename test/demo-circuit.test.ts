import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReferenceBackend } from '../src/backend/reference.js';
import type { CsrMatrix } from '../src/field/csr.js';
import { FR_MODULUS, frVectorToBigints, mod } from '../src/field/layout.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape, shapeDigest } from '../src/r1cs/shape.js';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';

const r = FR_MODULUS;

test('DemoCircuit is satisfied and has exactly the requested size', () => {
  for (const [constraints, publicInputs, bitsPerWord] of [
    [1, 1, 32],
    [2, 2, 32],
    [33, 1, 32],
    [34, 1, 32],
    [35, 2, 32],
    [100, 3, 8],
    [1000, 2, 32],
    [4321, 5, 64],
  ]) {
    const circuit = new DemoCircuit({ constraints, publicInputs, bitsPerWord, seed: constraints });
    const cs = new TestConstraintSystem();
    circuit.synthesize(cs);
    assert.equal(cs.whichIsUnsatisfied(), undefined, `size ${constraints}`);
    assert.equal(cs.numConstraints, constraints);
    assert.equal(cs.numInputs, publicInputs + 1);
    const counter = new CountingSystem();
    circuit.synthesize(counter);
    assert.deepEqual(counter.counts(), { constraints, inputs: cs.numInputs, aux: cs.numAux });
  }
  assert.throws(() => new DemoCircuit({ constraints: 2, publicInputs: 3 }), RangeError);
  assert.throws(() => new DemoCircuit({ constraints: 10, publicInputs: 0 }), RangeError);
});

test('DemoCircuit: deterministic in the seed; witness mix of bits and field elements', () => {
  const values = (seed: number) => {
    const cs = new TestConstraintSystem();
    new DemoCircuit({ constraints: 500, seed }).synthesize(cs);
    return cs.assignment();
  };
  const a = values(7);
  assert.deepEqual(values(7), a);
  assert.notDeepEqual(values(8), a);
  const zeros = a.filter((x) => x === 0n).length;
  const ones = a.filter((x) => x === 1n).length;
  const big = a.filter((x) => x > 1n << 64n).length;
  assert.ok(zeros > a.length / 5 && ones > a.length / 5 && big > 20, `${zeros} zeros, ${ones} ones, ${big} big`);
});

test('DemoCircuit: recorded shape and generated witness satisfy A·w ∘ B·w = C·w', async () => {
  const circuit = new DemoCircuit({ constraints: 3000, seed: 3, publicInputs: 3 });
  const shape = recordShape((cs) => circuit.synthesize(cs));
  assert.equal(shape.numConstraints, 3000);
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const w = wg.assignment();
  const be = new ReferenceBackend();
  const mv = async (m: CsrMatrix) => {
    const out = new Uint8Array(m.rows * 32);
    await be.csrMatVec(m, w, out);
    return frVectorToBigints(out);
  };
  const [a, b, c] = [await mv(shape.a), await mv(shape.b), await mv(shape.c)];
  for (let i = 0; i < shape.numConstraints; i++) assert.equal(mod(a[i] * b[i] - c[i], r), 0n, `row ${i}`);
  const tcs = new TestConstraintSystem();
  circuit.synthesize(tcs);
  assert.deepEqual(frVectorToBigints(w), tcs.assignment());
  assert.equal(wg.inputs().length, 3);
  // same circuit, same digest
  assert.equal(shapeDigest(recordShape((cs) => circuit.synthesize(cs))), shapeDigest(shape));
});

test('DemoCircuit scales: 10^6 constraints shape-recorded in bounded memory', () => {
  const circuit = new DemoCircuit({ constraints: 1_000_000, seed: 1 });
  const before = process.memoryUsage();
  const shape = recordShape((cs) => circuit.synthesize(cs));
  assert.equal(shape.numConstraints, 1_000_000);
  const bytes =
    [shape.a, shape.b, shape.c].reduce((n, m) => n + m.rowPtr.byteLength + m.colIdx.byteLength + m.coeffIdx.byteLength, 0);
  assert.ok(bytes < 64 * 2 ** 20, `shape takes ${bytes} bytes`);
  const grown = process.memoryUsage().rss - before.rss;
  assert.ok(grown < 512 * 2 ** 20, `rss grew by ${grown} bytes`);
});
