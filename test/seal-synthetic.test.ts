/**
 * Synthetic C1s: 32 GiB in full (parse + verifyC1 with replica_id: paths lead to the roots, labels hash
 * from their parents, comm_r = Poseidon2(comm_c, comm_r_last)) on two partitions and the shared roots
 * and own paths on all ten, 64 GiB in shape and on its first partition (verifyC1 is slow in
 * TypeScript: ~25 s for all ten partitions of one size), determinism.
 * The 2 KiB synthetic C1 also goes through check_c1.py in seal-sealer.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseC1, type C1Output } from '../src/filecoin/c1.js';
import { proverIdFromActorId } from '../src/filecoin/graph.js';
import { bytesToBigintLE } from '../src/filecoin/hash/fr32.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { partitionChallenges } from '../src/filecoin/public-inputs.js';
import { fullPath, poseidonPathRoot } from '../src/filecoin/tree/path.js';
import { verifyC1 } from '../src/filecoin/c1-checks.js';
import { synthC1 } from '../src/filecoin/seal/index.js';

test('32 GiB synthetic C1: full shape, Sub proofs, verifyC1 passes (replica_id derived), shared roots', () => {
  const r = synthC1({ sectorSize: '32GiB', rngSeed: 'test', miner: 'f01001', sectorNumber: 3 });
  assert.equal(r.replicaIdDerived, true);
  const c1 = parseC1(r.c1Text);
  assert.equal(c1.registeredProof.name, 'StackedDrg32GiBV1_1');
  assert.equal(c1.partitions.length, 10);
  for (const part of c1.partitions) assert.equal(part.length, 18);
  const p = c1.partitions[0][0];
  assert.equal(p.commRLastProof.shape, 'Sub');
  assert.equal(p.commRLastProof.base.length, 9);
  assert.equal(p.commDProof.base.length, 30);
  assert.equal(p.labelingProofs.length, 11);
  assert.equal(p.cX.rows.length, 11);
  // verifyC1 over everything takes ~25 s here: run it on the first two partitions, and check the
  // challenged node's own paths (comm_r_last, c_x) and the shared roots on all ten.
  const firstTwo: C1Output = { ...c1, partitions: c1.partitions.slice(0, 2) };
  assert.deepEqual(verifyC1(firstTwo, { proverId: proverIdFromActorId(1001n), sectorId: 3 }), []);
  const commC = p.cX.inclusion.root;
  const commRLast = p.commRLastProof.root;
  assert.equal(poseidonHash([commC, commRLast]), bytesToBigintLE(c1.commR));
  c1.partitions.forEach((part, k) => {
    assert.deepEqual(part.map((q) => q.challenge), partitionChallenges(c1, k));
    for (const q of part) {
      assert.equal(q.cX.inclusion.root, commC);
      assert.equal(q.commRLastProof.root, commRLast);
      assert.equal(poseidonPathRoot(q.commRLastProof.leaf, fullPath(q.commRLastProof)), commRLast);
      assert.equal(poseidonPathRoot(poseidonHash(q.cX.rows), fullPath(q.cX.inclusion)), commC);
    }
  });
  // the wrapper: SectorSize of 32 GiB (the Phase1Out is ~50 MB of base64)
  const w = JSON.parse(r.commit2In) as { SectorNum: number; SectorSize: number; Miner: string };
  assert.equal(w.SectorSize, 32 * 2 ** 30);
  assert.equal(w.SectorNum, 3);
  assert.equal(w.Miner, 'f01001');
});

test('64 GiB synthetic C1: Top proofs; first partition verifies', () => {
  const r = synthC1({ sectorSize: '64GiB', rngSeed: 'test64' });
  const c1 = parseC1(r.c1Text);
  assert.equal(c1.partitions.length, 10);
  const p = c1.partitions[0][0];
  assert.equal(p.commRLastProof.shape, 'Top');
  assert.equal(p.cX.inclusion.top.length, 1);
  assert.equal(p.commDProof.base.length, 31);
  const first: C1Output = { ...c1, partitions: c1.partitions.slice(0, 1) };
  assert.deepEqual(verifyC1(first, { proverId: proverIdFromActorId(1000n), sectorId: 0 }), []);
});

test('synthetic C1 is deterministic in its options; random-data mode verifies too', () => {
  const a = synthC1({ sectorSize: '512MiB', rngSeed: 5 });
  const b = synthC1({ sectorSize: '512MiB', rngSeed: 5 });
  assert.equal(a.commit2In, b.commit2In);
  const c = synthC1({ sectorSize: '512MiB', rngSeed: 6 });
  assert.notEqual(c.c1Text, a.c1Text);
  // zero data: comm_d (and so replica_id, challenges) depend only on the ids, not on rngSeed
  assert.deepEqual(c.commD, a.commD);
  const rnd = synthC1({ sectorSize: '8MiB', data: 'random', rngSeed: 1 });
  assert.equal(rnd.replicaIdDerived, false);
  assert.deepEqual(verifyC1(parseC1(rnd.c1Text)), []);
});
