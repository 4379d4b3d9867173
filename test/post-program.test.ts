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
import { postProofById } from '../src/filecoin/post/registry.js';
import { encodeTape, interpretProgram } from '../src/r1cs/program.js';
import { recordShape, shapeDigest } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { postProofsFor, testPoStInfo, testRandomness, testSector } from './post-support.js';
import type { TreeShape } from '../src/filecoin/registry.js';

const backend = new NativeBackend();

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length) / 32;
  for (let i = 0; i < a.length / 32; i++) {
    if (!Buffer.from(a.subarray(i * 32, i * 32 + 32)).equals(Buffer.from(b.subarray(i * 32, i * 32 + 32)))) return i;
  }
  return -1;
}

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
