/**
 * The FallbackPoSt circuit against rust-fil-proofs' pinned figures (storage-proofs-post/tests/fallback_circuit.rs,
 * FACTS §6): `test_fallback_post(total_sector_count, sector_count, partitions, inputs, constraints)` with
 * 64 leaves per base tree, challenge_count 5, randomly filled trees, comm_r = Poseidon(comm_c, comm_r_last):
 * (3, 3, 1, 19, 16,869) base 8; (3, 3, 1, 19, 22,674) 8-4; (3, 3, 1, 19, 27,384) 8-4-2; (4, 2, 2, 13, 11,246)
 * base 8; (2, 3, 1, 19, 16,869) and (5, 3, 2, 19, 16,869) (padding by the last sector); the ignored BenchCS test
 * (32 GiB base-only oct tree, challenge_count 10, sector_count 5: 266,665). Every partition satisfied, its
 * inputs equal to postPublicInputs; tampering names an unsatisfied constraint or is refused by the checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import type { TreeShape } from '../src/filecoin/registry.js';
import {
  FallbackPoStCircuit,
  PoStInputError,
  checkPoStSectors,
  postBlankCircuit,
  postCircuitFor,
  postPublicInputs,
} from '../src/filecoin/post/circuit.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import type { PoStSectorProof } from '../src/filecoin/post/types.js';
import { postProofsFor, testPoStInfo, testRandomness, testSector } from './post-support.js';

const shape = (baseLevels: number, subArity: number, topArity: number): TreeShape => ({ baseArity: 8, baseLevels, subArity, topArity }) as unknown as TreeShape;

function rustCase(tree: TreeShape, total: number, sectorCount: number, partitions: number, inputs: number, constraints: number): void {
  const info = testPoStInfo(tree, sectorCount, 5, 'V1'); // rust's test: ApiVersion::V1_1_0 (idx = sector_index·5 + n)
  const randomness = testRandomness(total * 7 + sectorCount);
  const sectors = Array.from({ length: total }, (_, i) => testSector(tree, BigInt(i), 1000 + i));
  for (let j = 0; j < partitions; j++) {
    const mine = sectors.slice(j * sectorCount, (j + 1) * sectorCount);
    const proofs = postProofsFor(info, mine, randomness, j);
    checkPoStSectors(info, proofs, { randomness, partitionIndex: j });
    const cs = new TestConstraintSystem();
    postCircuitFor(info, proofs).synthesize(cs);
    assert.equal(cs.whichIsUnsatisfied(), undefined, `partition ${j}`);
    assert.equal(cs.numInputs, inputs, 'inputs');
    assert.equal(cs.numConstraints, constraints, 'constraints');
    assert.deepEqual(cs.inputs().slice(1), postPublicInputs(info, mine, { randomness, partitionIndex: j }));
  }
  // the blank circuit has the same counts
  const cc = new CountingSystem();
  postBlankCircuit({ tree, challengeCount: 5, sectorCount }).synthesize(cc);
  assert.equal(cc.numConstraints, constraints);
  assert.equal(cc.numInputs, inputs);
}

test('fallback_circuit.rs: single partition, base 8: 19 inputs, 16,869 constraints', () => rustCase(shape(2, 0, 0), 3, 3, 1, 19, 16_869));
test('fallback_circuit.rs: single partition, sub 8-4: 19 inputs, 22,674 constraints', () => rustCase(shape(2, 4, 0), 3, 3, 1, 19, 22_674));
test('fallback_circuit.rs: single partition, top 8-4-2: 19 inputs, 27,384 constraints', () => rustCase(shape(2, 4, 2), 3, 3, 1, 19, 27_384));
test('fallback_circuit.rs: two partitions, base 8: 13 inputs, 11,246 constraints', () => rustCase(shape(2, 0, 0), 4, 2, 2, 13, 11_246));
test('fallback_circuit.rs: single partition, smaller (2 of 3 sectors, last repeated): 16,869', () => rustCase(shape(2, 0, 0), 2, 3, 1, 19, 16_869));
test('fallback_circuit.rs: two partitions, smaller (5 sectors in 2×3): 16,869', () => rustCase(shape(2, 0, 0), 5, 3, 2, 19, 16_869));

test('fallback_circuit.rs bench_cs: 32 GiB base-only oct tree, 10 challenges, 5 sectors: 266,665 constraints', () => {
  const cs = new CountingSystem();
  postBlankCircuit({ tree: shape(10, 0, 0), challengeCount: 10, sectorCount: 5 }).synthesize(cs);
  assert.equal(cs.numConstraints, 266_665);
});

function twoKiB(type: 'window' | 'winning'): { info: NonNullable<ReturnType<typeof postProofById>>; proofs: PoStSectorProof[]; randomness: Uint8Array } {
  const info = postProofById(type === 'window' ? 10 : 0)!;
  const randomness = testRandomness(type === 'window' ? 5 : 6);
  const n = type === 'window' ? 2 : 1;
  const sectors = Array.from({ length: n }, (_, i) => testSector(info.size.tree, BigInt(100 + i), 50 + i));
  return { info, proofs: postProofsFor(info, sectors, randomness), randomness };
}

for (const type of ['window', 'winning'] as const) {
  test(`2 KiB ${type}: satisfied, inputs = postPublicInputs${type === 'window' ? '; tampering names a constraint or is refused' : ''}`, () => {
    const { info, proofs, randomness } = twoKiB(type);
    const ctx = { randomness, partitionIndex: 0 };
    checkPoStSectors(info, proofs, ctx);
    const cs = new TestConstraintSystem();
    postCircuitFor(info, proofs).synthesize(cs);
    assert.equal(cs.whichIsUnsatisfied(), undefined);
    const sectorCount = type === 'window' ? 2 : 66;
    const perSector = type === 'window' ? 11 : 2;
    assert.equal(cs.numInputs, 1 + sectorCount * perSector);
    assert.deepEqual(cs.inputs().slice(1), postPublicInputs(info, proofs, ctx));
    if (type === 'winning') {
      // the 66 unrolled sector proofs: the one sector's comm_r in front of each challenge
      assert.deepEqual(cs.inputs().slice(1, 5), [proofs[0]!.commR, BigInt(proofs[0]!.inclusionProofs[0]!.base[0]!.index + 8 * proofs[0]!.inclusionProofs[0]!.base[1]!.index), proofs[0]!.commR, BigInt(proofs[0]!.inclusionProofs[1]!.base[0]!.index + 8 * proofs[0]!.inclusionProofs[1]!.base[1]!.index)]);
      return; // tampering: the window case below (the same sector circuit; a 66-sector TestConstraintSystem is slow)
    }

    const unsatisfied = (ps: PoStSectorProof[]): string | undefined => {
      const t = new TestConstraintSystem();
      postCircuitFor(info, ps).synthesize(t);
      return t.whichIsUnsatisfied();
    };
    const p0 = proofs[0]!;
    const ip0 = p0.inclusionProofs[0]!;
    const withProof = (ip: typeof ip0): PoStSectorProof[] => [{ ...p0, inclusionProofs: [ip, ...p0.inclusionProofs.slice(1)] }, ...proofs.slice(1)];
    // a changed leaf
    assert.match(unsatisfied(withProof({ ...ip0, leaf: ip0.leaf + 1n }))!, /sector_0\/challenge_inclusion_0\/enforce root is correct/);
    // a changed path element
    const base = ip0.base.map((el, l) => (l === 1 ? { ...el, hashes: [el.hashes[0]! + 1n, ...el.hashes.slice(1)] } : el));
    assert.match(unsatisfied(withProof({ ...ip0, base }))!, /sector_0\/challenge_inclusion_0\/enforce root is correct/);
    // a changed comm_c
    assert.match(unsatisfied([{ ...p0, commC: p0.commC + 1n }, ...proofs.slice(1)])!, /sector_0\/enforce_comm_c_comm_r_last_hash_comm_r/);
    assert.throws(() => checkPoStSectors(info, [{ ...p0, commC: p0.commC + 1n }, ...proofs.slice(1)], ctx), /sector 100 \(proof 0\): comm_r is not Poseidon/);
    // changed randomness: the proofs open other leaves than the challenges (planner refuses, naming sector and challenge)
    const other = testRandomness(99);
    assert.throws(
      () => checkPoStSectors(info, proofs, { randomness: other, partitionIndex: 0 }),
      (e: Error) => e instanceof PoStInputError && /sector 100 \(proof 0\) challenge \d+: the proof opens leaf \d+, but the randomness challenges leaf \d+/.test(e.message),
    );
    // … and the circuit's public inputs (from the proofs) differ from what a verifier derives from it
    assert.notDeepEqual(cs.inputs().slice(1), postPublicInputs(info, proofs, { randomness: other, partitionIndex: 0 }));
  });
}

test('WindowPoSt V1: the partition index changes the challenges; a wrong one is refused', () => {
  const info = postProofById(5)!; // StackedDrgWindow2KiBV1
  const randomness = testRandomness(11);
  const sectors = [testSector(info.size.tree, 7n, 70)];
  const proofs = postProofsFor(info, sectors, randomness, 3);
  checkPoStSectors(info, proofs, { randomness, partitionIndex: 3 });
  assert.throws(() => checkPoStSectors(info, proofs, { randomness, partitionIndex: 0 }), PoStInputError);
  const cs = new TestConstraintSystem();
  postCircuitFor(info, proofs).synthesize(cs);
  assert.equal(cs.whichIsUnsatisfied(), undefined);
  assert.deepEqual(cs.inputs().slice(1), postPublicInputs(info, proofs, { randomness, partitionIndex: 3 }));
});

test('checks: wrong counts and shapes are refused with the sector named', () => {
  const { info, proofs, randomness } = twoKiB('window');
  const ctx = { randomness, partitionIndex: 0 };
  assert.throws(() => checkPoStSectors(info, [], ctx), /no sector proofs/);
  assert.throws(() => checkPoStSectors(info, [...proofs, proofs[0]!], ctx), /3 sector proofs; a 2KiB WindowPoSt partition holds at most 2/);
  const p = proofs[1]!;
  assert.throws(() => checkPoStSectors(info, [proofs[0]!, { ...p, inclusionProofs: p.inclusionProofs.slice(1) }], ctx), /sector 101 \(proof 1\): 9 inclusion proofs/);
  const ip = p.inclusionProofs[2]!;
  const bad = { ...p, inclusionProofs: p.inclusionProofs.map((x, i) => (i === 2 ? { ...ip, base: ip.base.slice(1) } : x)) };
  assert.throws(() => checkPoStSectors(info, [proofs[0]!, bad], ctx), /sector 101 \(proof 1\) challenge 2: base path of 1 levels, expected 2/);
  const badRoot = { ...p, inclusionProofs: p.inclusionProofs.map((x, i) => (i === 2 ? { ...ip, root: 5n } : x)) };
  assert.throws(() => checkPoStSectors(info, [proofs[0]!, badRoot], ctx), /challenge 2: the inclusion proof's root is not the sector's comm_r_last/);
  assert.throws(() => new FallbackPoStCircuit({ tree: info.size.tree, challengeCount: 10, sectorCount: 2 }, []), /expected 2 circuit sectors/);
});

test('postCircuitSizes (one and two sectors counted, extrapolated) = a whole count: winning-2k (66 sectors), wpost-8m', async () => {
  const { postCircuitSizes } = await import('../src/kinds/post/post.js');
  const { DensityCounter } = await import('../src/r1cs/density.js');
  const { postCircuitParams } = await import('../src/filecoin/post/circuit.js');
  for (const id of [0, 11]) {
    const info = postProofById(id)!;
    const dc = new DensityCounter();
    postBlankCircuit(postCircuitParams(info)).synthesize(dc);
    const d = dc.densityCounts();
    assert.deepEqual(postCircuitSizes(info), {
      numConstraints: d.constraints,
      numInputs: d.inputs,
      numAux: d.aux,
      aAuxDense: d.aAuxDense,
      bInputDense: d.bInputDense,
      bAuxDense: d.bAuxDense,
    });
  }
  // the 32 GiB circuits from FACTS §6's per-gadget figures: per sector Poseidon-2 (311) + comm_r equality (1) + its
  // input (1), per challenge 10 arity-8 levels (530 each) + the packed path (1) + the root equality (1) — the same
  // 53,333 per sector as rust's pinned bench_cs (266,665 / 5); cuzk: ~125 M constraints, domain 2^27
  const perSector = (challenges: number): number => 311 + 1 + 1 + challenges * (10 * 530 + 1 + 1);
  assert.equal(perSector(10) * 5, 266_665);
  assert.equal(postCircuitSizes(postProofById(13)!).numConstraints, 2349 * perSector(10)); // 125,279,217
  assert.equal(postCircuitSizes(postProofById(3)!).numConstraints, 66 * perSector(1)); // 370,590
});

test('checkPoStSectorsAsync: the same refusals, comm_r checked in chunks', async () => {
  const { checkPoStSectorsAsync } = await import('../src/filecoin/post/circuit.js');
  const { info, proofs, randomness } = twoKiB('window');
  const ctx = { randomness, partitionIndex: 0 };
  await checkPoStSectorsAsync(info, proofs, ctx, 1);
  const bad = [proofs[0]!, { ...proofs[1]!, commRLast: proofs[1]!.commRLast }, ].map((p, i) => (i === 1 ? { ...p, commC: p.commC + 1n } : p));
  await assert.rejects(() => checkPoStSectorsAsync(info, bad, ctx, 1), /sector 101 \(proof 1\): comm_r is not Poseidon/);
  await assert.rejects(() => checkPoStSectorsAsync(info, proofs, { randomness: testRandomness(98), partitionIndex: 0 }), PoStInputError);
});
