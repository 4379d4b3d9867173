/**
 * The FallbackPoSt witness program (filecoin/post/program.ts): the native interpreter's witness equals the
 * TypeScript WitnessGenerator's byte for byte (2 KiB WindowPoSt and WinningPoSt, a padded partition); the
 * one-sector recording replicated equals a full recording (shape digest and program); recording does not change
 * the circuit's shape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NativeBackend } from '../src/backend/native.js';
import { postBlankCircuit, postCircuitFor, postCircuitParams, postPublicInputs } from '../src/filecoin/post/circuit.js';
import { postProgram, postProgramFast, postShapeAndProgram, postShapeAndProgramFast, postTape, postWitnessNative } from '../src/filecoin/post/program.js';
import { encodeTapeWith } from '../src/r1cs/circuit-program.js';
import { FR_MODULUS } from '../src/field/layout.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { encodeTape } from '../src/r1cs/program.js';
import { interpretProgram } from '../src/r1cs/program-interpreter.js';
import { recordShape, shapeDigest } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { postProofsFor, testPoStInfo, testRandomness, testSector } from './post-support.js';
import type { TreeShape } from '../src/filecoin/registry.js';
import { firstDifference } from './support.js';

const backend = new NativeBackend();

for (const [id, nSectors] of [[10, 2], [10, 1], [0, 1]] as const) {
  const info = postProofById(id)!;
  test(`2 KiB ${info.type} (${nSectors} real sector${nSectors > 1 ? 's' : ''}): native witness = WitnessGenerator byte for byte; fast recording = full`, async () => {
    const params = postCircuitParams(info);
    const { shape, program } = postShapeAndProgram(params);
    const blank = recordShape((cs) => postBlankCircuit(params).synthesize(cs));
    assert.equal(shapeDigest(shape), shapeDigest(blank), 'recording from the slot witness changes nothing');
    const fast = postShapeAndProgramFast(params);
    assert.equal(shapeDigest(fast.shape), shapeDigest(shape), 'replicated shape = full recording');
    assert.deepEqual(fast.program, program);
    assert.deepEqual(postProgramFast(params), postProgram(params));
    assert.equal(program.blocks.length, 2, 'an empty prologue and one shared sector block');
    assert.equal(program.segments.length, 1 + params.sectorCount);

    const randomness = testRandomness(40 + id + nSectors);
    const sectors = Array.from({ length: nSectors }, (_, i) => testSector(info.size.tree, BigInt(9 + i), 300 + i));
    const proofs = postProofsFor(info, sectors, randomness);
    const circuit = postCircuitFor(info, proofs);
    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    assert.equal(wg.numAux, shape.numAux);
    const ref = wg.assignment();
    const slow = interpretProgram(program, postTape(circuit));
    assert.equal(firstDifference(slow, ref), -1, 'TypeScript interpreter');
    const w = await postWitnessNative(backend, program, circuit);
    try {
      assert.equal(firstDifference(w.assignment, ref), -1, 'native interpreter');
      assert.deepEqual(w.inputs, postPublicInputs(info, proofs, { randomness, partitionIndex: 0 }));
    } finally {
      backend.release(w.assignment);
    }
    // a tape of the wrong length is refused
    await assert.rejects(() => backend.runWitnessProgram(program, encodeTape(postTape(circuit).slice(1)), new Uint8Array(ref.length)));
  });
}

test('sub and top tree levels (rust\'s 8-4-2 test tree, 3 sectors of which 2 real): native witness = WitnessGenerator', async () => {
  const tree = { baseArity: 8, baseLevels: 2, subArity: 4, topArity: 2 } as unknown as TreeShape;
  const info = testPoStInfo(tree, 3, 5, 'V1');
  const params = { tree, challengeCount: 5, sectorCount: 3 };
  const { shape, program } = postShapeAndProgram(params);
  const fast = postShapeAndProgramFast(params);
  assert.equal(shapeDigest(fast.shape), shapeDigest(shape));
  assert.deepEqual(fast.program, program);
  const randomness = testRandomness(77);
  const proofs = postProofsFor(info, [testSector(tree, 1n, 501), testSector(tree, 2n, 502)], randomness);
  assert.equal(proofs[0]!.inclusionProofs[0]!.shape, 'Top');
  const circuit = postCircuitFor(info, proofs);
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const w = await postWitnessNative(backend, program, circuit);
  try {
    assert.equal(firstDifference(w.assignment, wg.assignment()), -1);
    assert.deepEqual(w.inputs, postPublicInputs(info, proofs, { randomness, partitionIndex: 0 }));
  } finally {
    backend.release(w.assignment);
  }
});

test('encodeTapeWith (canonical words × R² natively) = encodeTape, edge values included; non-canonical refused', () => {
  const vals = [0n, 1n, 2n, FR_MODULUS - 1n, FR_MODULUS - 2n, (1n << 254n) - 1n, 12345678901234567890n, 1n << 64n, (1n << 192n) + 7n];
  for (let i = 0; i < 1000; i++) vals.push((BigInt(i + 1) * 0x9e3779b97f4a7c15f39cc0605cedc834n * 0x1234567n) % FR_MODULUS);
  assert.ok(Buffer.from(encodeTapeWith(vals, backend)).equals(Buffer.from(encodeTape(vals))));
  assert.ok(Buffer.from(encodeTapeWith(vals.slice(0, 1), backend)).equals(Buffer.from(encodeTape(vals.slice(0, 1)))));
  assert.ok(Buffer.from(encodeTapeWith(vals, undefined)).equals(Buffer.from(encodeTape(vals))));
  assert.throws(() => encodeTapeWith([FR_MODULUS], backend), /tape slot 0 is not a canonical field element/);
});

test('32 GiB sector proofs (synthPoSt, Sub paths 9 + 1 levels) in a 3-sector cut of wpost-32g: checks pass, native = WitnessGenerator', async () => {
  const { synthPoSt } = await import('../src/filecoin/post/synthetic.js');
  const { parsePoStSectorProof } = await import('../src/filecoin/post/vanilla.js');
  const { checkPoStSectors } = await import('../src/filecoin/post/circuit.js');
  const full = postProofById(13)!; // StackedDrgWindow32GiBV1_1
  const randomness = testRandomness(32);
  const elements = synthPoSt({ info: full, randomness, sectors: 2, rngSeed: 'post-program-32g', threads: 1 }).elements;
  const proofs = elements.map((e) => parsePoStSectorProof(e, full));
  assert.equal(proofs[0]!.inclusionProofs[0]!.shape, 'Sub');
  // the sector circuit is satisfied by a synthetic 32 GiB sector proof (one sector: 53,333 constraints)
  const { TestConstraintSystem } = await import('../src/r1cs/test.js');
  const tcs = new TestConstraintSystem();
  postCircuitFor({ ...full, sectorCount: 1 }, proofs.slice(0, 1)).synthesize(tcs);
  assert.equal(tcs.numConstraints, 53_333);
  assert.equal(tcs.whichIsUnsatisfied(), undefined);
  const cut = { ...full, sectorCount: 3 }; // the same sector circuit, 3 sectors (the last one repeated)
  checkPoStSectors(cut, proofs, { randomness, partitionIndex: 0 });
  const params = postCircuitParams(cut);
  const { shape, program } = postShapeAndProgramFast(params);
  const circuit = postCircuitFor(cut, proofs);
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  assert.equal(wg.numAux, shape.numAux);
  const w = await postWitnessNative(backend, program, circuit);
  try {
    assert.equal(firstDifference(w.assignment, wg.assignment()), -1);
    assert.deepEqual(w.inputs, postPublicInputs(cut, proofs, { randomness, partitionIndex: 0 }));
  } finally {
    backend.release(w.assignment);
  }
});
