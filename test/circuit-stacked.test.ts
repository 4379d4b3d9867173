/**
 * The StackedDrg partition circuit: shape figures against rust-fil-proofs' pins
 * (tests/stacked_circuit.rs `test_stacked_porep_circuit`: 8 nodes × base-tree count, 2 layers,
 * 1 challenge, 22 inputs; create_label.rs `test_create_label`: 532,025), and the 2 KiB fixture's
 * partition: figures printed, shape recorded from the blank circuit identical to the C1 circuit's,
 * witness public inputs = 2KiB.public_inputs.json, and tampered C1 values caught where the
 * verifier would catch them. (The same circuit in TestConstraintSystem: circuit-2kib.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { ShapeRecorder, shapeDigest } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { AllocatedNum } from '../src/gadgets/num.js';
import { UInt32 } from '../src/gadgets/uint32.js';
import { UInt64 } from '../src/gadgets/uint64.js';
import { bytesIntoBooleanVecBe } from '../src/gadgets/bits.js';
import { type C1Output, type ChallengeProof, parseC1 } from '../src/filecoin/c1.js';
import { computeLabel } from '../src/filecoin/graph.js';
import { bytesToBigintLE } from '../src/filecoin/hash/fr32.js';
import { partitionPublicInputs } from '../src/filecoin/public-inputs.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import {
  createLabelCircuit,
  stackedBlankCircuit,
  stackedCircuitFor,
  stackedShapeCircuit,
  stackedTestParams,
} from '../src/filecoin/circuit/index.js';
import { fixture, rng } from './support.js';


test('test_stacked_porep_circuit configurations: 22 inputs and the pinned constraint counts', () => {
  // [base arity, sub arity, top arity, constraints]
  const pins: [number, number, number, number][] = [
    [8, 0, 0, 1_199_620], // test_stacked_input_circuit_poseidon_base_8: 8 nodes
    [2, 0, 0, 1_206_212], // test_stacked_porep_circuit_poseidon_base_2
    [8, 4, 0, 1_296_576], // test_stacked_input_circuit_poseidon_sub_8_4
    [8, 4, 2, 1_346_982], // test_stacked_input_circuit_poseidon_top_8_4_2
  ];
  for (const [b, s, t, constraints] of pins) {
    const cs = new CountingSystem();
    stackedBlankCircuit(stackedTestParams(b, s, t)).synthesize(cs);
    assert.equal(cs.numConstraints, constraints, `${b}-${s}-${t}`);
    assert.equal(cs.numInputs, 22, `${b}-${s}-${t}`);
  }
});

test('create_label: test_create_label figure (532,025 with allocated id and parent bits) and the label value', () => {
  const rand = rng(12345);
  const bytes32 = () => {
    const b = rand.bytes(32);
    b[31] &= 0x3f;
    return b;
  };
  const id = bytes32();
  const parents = Array.from({ length: 14 }, bytes32);
  const expanded = [...parents, ...parents, ...parents.slice(0, 9)];
  const layer = 3;
  const node = 22;

  const cs = new TestConstraintSystem();
  const parentBits = expanded.map((p, i) => cs.namespace(`parents ${i}`, () => bytesIntoBooleanVecBe(cs, p, 256)));
  const idBits = cs.namespace('id', () => bytesIntoBooleanVecBe(cs, id, 256));
  const out = cs.namespace('create_label', () => createLabelCircuit(cs, idBits, parentBits, UInt32.constant(layer), UInt64.constant(BigInt(node))));
  assert.equal(cs.numConstraints, 532_025);
  assert.equal(cs.whichIsUnsatisfied(), undefined);
  assert.equal(out.value, bytesToBigintLE(computeLabel(id, layer, node, expanded)));
});

// ---------------------------------------------------------------------------------------------
// 2 KiB fixture

const c1 = parseC1(readFileSync(fixture('2KiB.c1.json')));
const expectedInputs = (JSON.parse(readFileSync(fixture('2KiB.public_inputs.json'), 'utf8')) as string[]).map(BigInt);

test('2 KiB partition: CountingSystem figures (C1 circuit = blank shape circuit = ShapeRecorder)', () => {
  const valued = new CountingSystem();
  stackedCircuitFor(c1, 0).synthesize(valued);
  const blank = new CountingSystem();
  stackedShapeCircuit(sealProofInfo('StackedDrg2KiBV1_1')!).synthesize(blank);
  console.log(`2 KiB partition circuit: ${JSON.stringify(valued.counts())}`);
  assert.deepEqual(blank.counts(), valued.counts());
  assert.equal(valued.numInputs, 40); // ONE + 3 + 18 per challenge × 2
  assert.equal(valued.numConstraints, 2_687_921);
  assert.equal(valued.numAux, 2_685_673);

  const recorder = new ShapeRecorder();
  stackedShapeCircuit(c1.registeredProof).synthesize(recorder);
  const shape = recorder.finish();
  assert.deepEqual(
    { constraints: shape.numConstraints, inputs: shape.numInputs, aux: shape.numAux },
    valued.counts(),
  );

  // The circuit built from the C1 has exactly the blank circuit's matrices.
  const recorder2 = new ShapeRecorder();
  stackedCircuitFor(c1, 0).synthesize(recorder2);
  assert.equal(shapeDigest(recorder2.finish()), shapeDigest(shape));
});

test('2 KiB partition: witness public inputs = 2KiB.public_inputs.json = partitionPublicInputs', () => {
  const w = new WitnessGenerator(40);
  stackedCircuitFor(c1, 0).synthesize(w);
  assert.deepEqual(w.inputs(), expectedInputs);
  assert.deepEqual(w.inputs(), partitionPublicInputs(c1, 0));
});

/** Synthesizes `c` with constraint checking; returns the path of the first unsatisfied constraint. */
function firstFailure(c: C1Output): string | undefined {
  const w = new WitnessGenerator(40, undefined, { check: true });
  try {
    stackedCircuitFor(c, 0).synthesize(w);
  } catch (e) {
    const m = /^unsatisfied constraint: (.*)$/.exec((e as Error).message);
    if (m) return m[1];
    throw e;
  }
  return undefined;
}

function withChallenge(c: C1Output, i: number, f: (p: ChallengeProof) => ChallengeProof): C1Output {
  return { ...c, partitions: [c.partitions[0].map((p, k) => (k === i ? f(p) : p))] };
}

test('2 KiB partition: tampered C1 values are caught where the verifier catches them', () => {
  // a parent's label (column row) → its column hash leaves tree_c
  const badLabel = withChallenge(c1, 0, (p) => ({
    ...p,
    drgParents: p.drgParents.map((col, k) => (k === 2 ? { ...col, rows: [col.rows[0], col.rows[1] ^ 1n] } : col)),
  }));
  assert.equal(firstFailure(badLabel), 'challenge_0/drg_parent_2_inclusion/enforce root is correct');

  // a sibling on the comm_r_last path
  const badPath = withChallenge(c1, 1, (p) => ({
    ...p,
    commRLastProof: {
      ...p.commRLastProof,
      base: p.commRLastProof.base.map((lv, l) => (l === 1 ? { ...lv, hashes: lv.hashes.map((h, j) => (j === 4 ? h ^ 1n : h)) } : lv)),
    },
  }));
  assert.equal(firstFailure(badPath), 'challenge_1/comm_r_last_data_inclusion/enforce root is correct');

  // the data leaf → comm_d inclusion
  const leaf = Uint8Array.from(c1.partitions[0][0].commDProof.leaf);
  leaf[0] ^= 1;
  const badLeaf = withChallenge(c1, 0, (p) => ({ ...p, commDProof: { ...p.commDProof, leaf } }));
  assert.equal(firstFailure(badLeaf), 'challenge_0/comm_d_inclusion/enforce root is correct');

  // comm_r
  const commR = Uint8Array.from(c1.commR);
  commR[5] ^= 0x10;
  assert.equal(firstFailure({ ...c1, commR }), 'enforce comm_r = H(comm_c || comm_r_last)');

  assert.equal(firstFailure(c1), undefined);
});

test('shape mode never calls a value closure', () => {
  // AllocatedNum.alloc in a system that does not compute values must not call the closure: a
  // blank circuit would otherwise throw AssignmentMissing here.
  const cs = new CountingSystem();
  assert.doesNotThrow(() => stackedBlankCircuit(stackedTestParams()).synthesize(cs));
  assert.equal(AllocatedNum.alloc(cs, () => { throw new Error('called'); }).value, undefined);
});
