/**
 * Witness programs (r1cs/program.ts, native/src/witness/interp.hpp): recorded once per shape, they
 * give the assignment the TypeScript WitnessGenerator writes, byte for byte. Compared here:
 * WitnessGenerator (the reference), the TypeScript interpreter (slow twin) and the native one, on
 * the 2 KiB fixture, a kiln-sealed 8 MiB sector, the first challenge of a synthetic 32 GiB
 * partition, a tampered C1, a small circuit using every op, and corrupted programs. The larger circuits' programs
 * are recorded over a CountingSystem (stackedProgram, as porep-c2's recordProgram does): the shape matrices the
 * combined recording also builds are not needed there, and the 2 KiB test pins that both recordings give one program.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { NativeBackend } from '../src/backend/native.js';
import { FR_MODULUS } from '../src/field/layout.js';
import { type C1Output, parseC1 } from '../src/filecoin/c1.js';
import { stackedCircuitFor, stackedShapeCircuit, stackedTape } from '../src/filecoin/circuit/stacked.js';
import { stackedProgram, stackedProgramFast, stackedShapeAndProgram, stackedWitnessNative } from '../src/filecoin/circuit/stacked-program.js';
import { poseidonHashCircuit } from '../src/filecoin/circuit/poseidon.js';
import { pick } from '../src/filecoin/circuit/por.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { sealSector, synthC1 } from '../src/filecoin/seal/index.js';
import { AllocatedNum, UInt64, packBits, packIntoInputs } from '../src/gadgets/index.js';
import { sha256 } from '../src/gadgets/sha256.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import type { ConstraintSystem } from '../src/r1cs/cs.js';
import { ProgramError, type WitnessProgram, encodeTape } from '../src/r1cs/program.js';
import { deserializeProgram, programChunks } from '../src/r1cs/program-file.js';
import { interpretProgram } from '../src/r1cs/program-interpreter.js';
import { recordProgram } from '../src/r1cs/program-recorder.js';
import { recordShape, shapeDigest } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { firstDifference, fixture, rng } from './support.js';

const backend = new NativeBackend();

function tsWitness(c1: C1Output, partition: number, numInputs: number): Uint8Array {
  const gen = new WitnessGenerator(numInputs);
  stackedCircuitFor(c1, partition).synthesize(gen);
  return gen.assignment();
}

/** Native witness of every partition == WitnessGenerator's; returns the native run times. */
async function compareAll(c1: C1Output, program: WitnessProgram, partitions = c1.partitions.length): Promise<number[]> {
  const ms: number[] = [];
  for (let k = 0; k < partitions; k++) {
    const ref = tsWitness(c1, k, program.numInputs);
    const w = await stackedWitnessNative(backend, program, c1, k);
    try {
      assert.equal(firstDifference(w.assignment, ref), -1, `partition ${k}: first difference at element`);
      ms.push(w.runMs);
    } finally {
      backend.release(w.assignment);
    }
  }
  return ms;
}

const c1Fixture = (): C1Output => parseC1(readFileSync(fixture('2KiB.c1.json')));

test('2 KiB fixture: WitnessGenerator, the TypeScript interpreter and the native one agree byte for byte; the shape is unchanged', async () => {
  const c1 = c1Fixture();
  const circuit = stackedCircuitFor(c1, 0);
  const { shape, program } = stackedShapeAndProgram(circuit.params);
  // recording from the slot witness does not change the circuit's shape
  const blank = recordShape((cs) => stackedShapeCircuit(c1.registeredProof).synthesize(cs));
  assert.equal(shapeDigest(shape), shapeDigest(blank));
  assert.equal(program.numAux, shape.numAux);
  // challenges are segments with one shared block
  assert.equal(program.segments.length, 1 + circuit.params.challenges);
  assert.equal(program.blocks.length, 2);
  const ref = tsWitness(c1, 0, program.numInputs);
  assert.equal(firstDifference(interpretProgram(program, stackedTape(circuit.witness)), ref), -1);
  // the counting-only recording is the same program, and so is the fast one (one challenge, replicated)
  assert.deepEqual(stackedProgram(circuit.params), program);
  assert.deepEqual(stackedProgramFast(circuit.params), program);
  const ms = await compareAll(c1, program);
  console.log(`2 KiB: native witness ${ms.map((x) => x.toFixed(0)).join(', ')} ms per partition`);
});

test('a tampered C1 gives the same (unsatisfying) witness on both paths, and the same first failing constraint', async () => {
  const c1 = c1Fixture();
  const p0 = c1.partitions[0][0];
  // one sibling of the comm_d path changed
  const sib = p0.commDProof.base[1].hashes[0] as Uint8Array;
  const tampered = Uint8Array.from(sib);
  tampered[0] ^= 1;
  (p0.commDProof.base[1].hashes as Uint8Array[])[0] = tampered;
  const circuit = stackedCircuitFor(c1, 0);
  const { shape, program } = stackedShapeAndProgram(circuit.params);
  const ref = tsWitness(c1, 0, program.numInputs);
  const w = await stackedWitnessNative(backend, program, c1, 0);
  assert.equal(firstDifference(w.assignment, ref), -1);
  // the first unsatisfied row, evaluated with the shape's matrices
  const rows = shape.numConstraints;
  const ev = async (m: typeof shape.a): Promise<Uint8Array> => {
    const out = new Uint8Array(rows * 32);
    await backend.csrMatVec(m, w.assignment, out);
    return out;
  };
  const [a, b, c] = [await ev(shape.a), await ev(shape.b), await ev(shape.c)];
  const ab = backend.fieldOp('fr', 'mul', a, b);
  const bad = firstDifference(ab, c);
  assert.ok(bad >= 0, 'the tampered witness satisfies every constraint');
  // WitnessGenerator's check mode stops at a constraint of the comm_d inclusion too
  const gen = new WitnessGenerator(program.numInputs, undefined, { check: true });
  assert.throws(() => stackedCircuitFor(c1, 0).synthesize(gen), /unsatisfied constraint: challenge_0\/comm_d_inclusion/);
  backend.release(w.assignment);
  // a structurally wrong witness (a missing sibling) is refused by both before anything runs
  (p0.commDProof.base[1].hashes as Uint8Array[]).pop();
  assert.throws(() => tsWitness(c1, 0, program.numInputs), /arity must be a power of two/);
  await assert.rejects(stackedWitnessNative(backend, program, c1, 0), /tape of \d+ values, the program reads \d+/);
});

test('a kiln-sealed 8 MiB sector: native witness == WitnessGenerator', async () => {
  const r = sealSector({ sectorSize: '8MiB', rngSeed: 'witness-program' });
  const c1 = parseC1(r.c1Text);
  const program = stackedProgram(stackedCircuitFor(c1, 0).params);
  const ms = await compareAll(c1, program);
  console.log(`8 MiB: native witness ${ms.map((x) => x.toFixed(0)).join(', ')} ms per partition`);
});

for (const size of ['32GiB', '64GiB'] as const) {
  test(`the first challenge of a synthetic ${size} partition: native witness == WitnessGenerator`, async () => {
    const r = synthC1({ sectorSize: size, rngSeed: 'witness-program' });
    const full = parseC1(r.c1Text);
    assert.equal(full.registeredProof, sealProofInfo(`StackedDrg${size}V1_1`));
    const c1: C1Output = { ...full, partitions: [[full.partitions[0][0]]] };
    const program = stackedProgram(stackedCircuitFor(c1, 0).params);
    const ms = await compareAll(c1, program);
    console.log(`${size}, one challenge (${program.numAux} aux): native witness ${ms[0].toFixed(0)} ms`);
  });
}

// ---------------------------------------------------------------------------------------------
// Every op on a small circuit; corrupted programs

/** A small circuit touching every op: hints, bits, sha256 (xor/and/ch/maj/addmany), pack, Poseidon (lc/sqadd/muladd), num ops, select. */
function everyOp(leaves: { a: bigint; b: bigint; n: bigint } | undefined) {
  return (cs: ConstraintSystem): void => {
    const slot = (k: number, v: bigint | undefined): bigint | undefined => (leaves ? v : BigInt(k));
    const a = AllocatedNum.allocHint(cs, slot(0, leaves?.a));
    const b = AllocatedNum.allocHint(cs, slot(1, leaves?.b));
    const n = UInt64.allocHint(cs, slot(2, leaves?.n));
    a.inputize(cs);
    const bits = [...a.toBitsLe(cs), ...b.toBitsLe(cs)].slice(0, 504);
    const digest = sha256(cs, bits);
    const packed = packBits(cs, digest);
    packIntoInputs(cs, n.toBitsLe());
    const h = poseidonHashCircuit(cs, [packed, b]);
    const s = h.add(cs, a).mul(cs, b).square(cs);
    s.assertNonzero(cs);
    const cond = digest[3].not();
    const [x, y] = AllocatedNum.conditionallyReverse(cs, s, h, cond);
    pick(cs, digest[5], x, y);
  };
}

function everyOpProgram(): WitnessProgram {
  return recordProgram(new CountingSystem(), everyOp(undefined), { numSlots: 3 });
}

test('every op: TypeScript and native interpreters == WitnessGenerator on random values', async () => {
  const prog = everyOpProgram();
  const r = rng(11);
  for (let t = 0; t < 5; t++) {
    const leaves = { a: r(), b: r(), n: r(1n << 64n) };
    if (t === 1) leaves.a = 0n; // edge values
    if (t === 2) leaves.b = FR_MODULUS - 1n;
    const gen = new WitnessGenerator(prog.numInputs);
    everyOp(leaves)(gen);
    const tape = [leaves.a, leaves.b, leaves.n];
    assert.equal(firstDifference(interpretProgram(prog, tape), gen.assignment()), -1, `TS interpreter, round ${t}`);
    const out = new Uint8Array(gen.assignment().length);
    await backend.runWitnessProgram(prog, encodeTape(tape), out);
    assert.equal(firstDifference(out, gen.assignment()), -1, `native, round ${t}`);
  }
});

test('a value that breaks a gadget fails in both: DivisionByZero', async () => {
  const prog = everyOpProgram();
  // s = ((h + a)·b)² is zero when b = 0: the nonzero assertion's inverse fails
  const leaves = { a: 5n, b: 0n, n: 1n };
  assert.throws(() => everyOp(leaves)(new WitnessGenerator(prog.numInputs)), /DivisionByZero/);
  assert.throws(() => interpretProgram(prog, [5n, 0n, 1n]), /DivisionByZero/);
  const out = new Uint8Array((prog.numInputs + prog.numAux) * 32);
  await assert.rejects(backend.runWitnessProgram(prog, encodeTape([5n, 0n, 1n]), out), /DivisionByZero/);
});

test('corrupted programs: the native interpreter never crashes and accepts exactly what the TypeScript one accepts', async () => {
  const prog = everyOpProgram();
  const r = rng(12);
  const tape = [r(), r(), 12345n];
  const tapeBytes = encodeTape(tape);
  let rejected = 0;
  for (let t = 0; t < 60; t++) {
    const words = prog.blocks[0].slice();
    const flips = 1 + (t % 3);
    for (let f = 0; f < flips; f++) words[r.int(words.length)] ^= 1 << r.int(32);
    const bad: WitnessProgram = { ...prog, blocks: [words] };
    let tsOut: Uint8Array | undefined;
    try {
      tsOut = interpretProgram(bad, tape);
    } catch (e) {
      assert.ok(e instanceof ProgramError || e instanceof RangeError, String(e));
    }
    const out = new Uint8Array((prog.numInputs + prog.numAux) * 32);
    let nativeOk = true;
    try {
      await backend.runWitnessProgram(bad, tapeBytes, out);
    } catch (e) {
      nativeOk = false;
      assert.match(String(e), /witnessRun: segment 0: |witnessRun: /);
    }
    assert.equal(nativeOk, tsOut !== undefined, `round ${t}: native ${nativeOk ? 'accepted' : 'rejected'}, TypeScript ${tsOut ? 'accepted' : 'rejected'}`);
    if (tsOut) assert.equal(firstDifference(out, tsOut), -1, `round ${t}`);
    else rejected++;
  }
  assert.ok(rejected > 10, `only ${rejected} of 60 corruptions were rejected`);
});

test('program files: round trip; truncated, bad magic and inconsistent counts are refused by name', () => {
  const prog = everyOpProgram();
  const bytes = Buffer.concat(programChunks(prog));
  const back = deserializeProgram(bytes);
  assert.deepEqual(back, prog);
  assert.throws(() => deserializeProgram(bytes.subarray(0, bytes.length - 4)), /witness program file: .* bytes, the header describes/);
  const magic = Buffer.from(bytes);
  magic[0] ^= 1;
  assert.throws(() => deserializeProgram(magic), /bad magic/);
  const counts = Buffer.from(bytes);
  counts.writeUInt32LE(99, 8 + 4 * 5); // nBlocks
  assert.throws(() => deserializeProgram(counts), /witness program file/);
  assert.throws(() => deserializeProgram(bytes.subarray(0, 10)), /too short/);
});

test('recording names the allocation whose gadget reports no op', () => {
  assert.throws(
    () =>
      recordProgram(
        new CountingSystem(),
        (cs) => {
          cs.namespace('outer', () => AllocatedNum.alloc(cs, () => 1n)); // no op
          AllocatedNum.allocHint(cs, 0n);
        },
        { numSlots: 1 },
      ),
    /no witness op for the aux allocation "num"/,
  );
  // a slot outside the tape
  assert.throws(() => recordProgram(new CountingSystem(), (cs) => void AllocatedNum.allocHint(cs, 5n), { numSlots: 1 }), /slot 5 is outside/);
});
