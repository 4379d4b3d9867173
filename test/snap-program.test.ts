/**
 * The EmptySectorUpdate witness program (filecoin/snap/program.ts): the native interpreter's witness and the
 * TypeScript interpreter's equal the TypeScript WitnessGenerator's byte for byte (2 KiB, and partition 1 of a
 * 16 KiB update); recording from the slot witness does not change the shape; the prologue + one-challenge
 * recording replicated with relocation equals the whole recording (shape digest, program); the public inputs are
 * [k | h_select << partition_bit_len, comm_r_old, comm_d_new, comm_r_new].
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NativeBackend } from '../src/backend/native.js';
import { snapBlankCircuit, snapPublicInputs } from '../src/filecoin/snap/circuit.js';
import { snapShapeAndProgram, snapShapeAndProgramFast, snapTape, snapWitnessNative } from '../src/filecoin/snap/program.js';
import { SNAP_SECTOR_NODES } from '../src/filecoin/snap/registry.js';
import { snapCircuitFor } from '../src/filecoin/snap/vanilla.js';
import { encodeTape } from '../src/r1cs/program.js';
import { interpretProgram } from '../src/r1cs/program-interpreter.js';
import { recordShape, shapeDigest } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { snapFixture } from './snap-support.js';
import { firstDifference } from './support.js';

const backend = new NativeBackend();

for (const [label, nodes, k] of [['2 KiB', SNAP_SECTOR_NODES['2KiB'], 0], ['16 KiB partition 1', SNAP_SECTOR_NODES['16KiB'], 1]] as const) {
  test(`${label}: native witness = WitnessGenerator byte for byte; the program's shape = the blank circuit's`, { timeout: 600_000 }, async () => {
    const { p, update, proofs } = snapFixture(nodes, 21);
    const { shape, program } = snapShapeAndProgram(p);
    const blank = recordShape((cs) => snapBlankCircuit(p).synthesize(cs));
    assert.equal(shapeDigest(shape), shapeDigest(blank), 'recording from the slot witness changes nothing');
    assert.equal(program.segments.length, 1 + p.challengeCount);
    // prologue + challenge 0 recorded, replicated with relocation = the whole recording
    const fast = snapShapeAndProgramFast(p);
    assert.equal(shapeDigest(fast.shape), shapeDigest(shape), 'relocated replica shape = full recording');
    assert.deepEqual(fast.program, program, 'relocated replica program = full recording');
    const circuit = snapCircuitFor(p, k, update.h, update.pub, proofs[k]!);
    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    assert.equal(wg.numAux, shape.numAux);
    const ref = wg.assignment();
    if (nodes === SNAP_SECTOR_NODES['2KiB']) assert.equal(firstDifference(interpretProgram(program, snapTape(circuit)), ref), -1, 'TypeScript interpreter');
    const w = await snapWitnessNative(backend, program, circuit);
    try {
      assert.equal(firstDifference(w.assignment, ref), -1, 'native interpreter');
      assert.deepEqual(w.inputs, snapPublicInputs(p, k, update.h, update.pub.commROld, update.pub.commDNew, update.pub.commRNew));
    } finally {
      backend.release(w.assignment);
    }
    await assert.rejects(() => backend.runWitnessProgram(program, encodeTape(snapTape(circuit).slice(1)), new Uint8Array(ref.length)));
  });
}
