/**
 * SnapDeals registry and randomness against rust-fil-proofs v19 storage-proofs-update: constants.rs (partitions,
 * challenges, apex leaves, hs, tree shapes) and challenges.rs `test_challenges_against_hardcoded` (the first five
 * challenges of given partitions for comm_r_new = PoseidonDomain::random(XorShiftRng(TEST_SEED))): these pin the
 * custom-tag (1·2^40) Poseidon and the challenge derivation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SNAP_SECTOR_NODES, allSnapProofs, snapHSelect, snapParams, snapParamsIdentifier, snapProofByCircuitId, snapProofById } from '../src/filecoin/snap/registry.js';
import { snapChallenges, snapChallengesPerDigest, snapDigestsPerPartition, snapPhi, snapRho } from '../src/filecoin/snap/challenges.js';
import { poseidonHash, poseidonHashOptimized, GEN_RANDOMNESS_DOMAIN_TAG } from '../src/filecoin/hash/poseidon.js';
import { XorShiftRng } from './snap-support.js';

const N = SNAP_SECTOR_NODES;

test('challenges.rs test_challenges_against_hardcoded: every pinned (size, partition) vector', () => {
  const commRNew = new XorShiftRng().fr();
  const vectors: [number, number, number[]][] = [
    [N['1KiB'], 0, [21, 7, 3, 31, 0]],
    [N['2KiB'], 0, [53, 51, 56, 3, 0]],
    [N['4KiB'], 0, [117, 25, 62, 0, 72]],
    [N['8KiB'], 0, [245, 140, 15, 128, 28]],
    [N['16KiB'], 0, [245, 140, 15, 128, 28]],
    [N['16KiB'], 1, [286, 308, 493, 510, 508]],
    [N['32KiB'], 0, [245, 454, 3, 400, 193]],
    [N['32KiB'], 1, [542, 666, 955, 927, 911]],
    [N['8MiB'], 0, [36085, 32783, 44060, 10950, 3731]],
    [N['8MiB'], 1, [78878, 130797, 112892, 93994, 78379]],
    [N['16MiB'], 0, [101621, 16391, 109319, 25944, 41193]],
    [N['16MiB'], 1, [209950, 163702, 175679, 224741, 197410]],
    [N['512MiB'], 0, [1019125, 116736, 706220, 59698, 799498]],
    [N['512MiB'], 1, [2092548, 1213276, 1185483, 1164598, 1095197]],
    [N['512MiB'], 14, [15212432, 15665918, 15015423, 15012912, 15495223]],
    [N['512MiB'], 15, [16388544, 15794686, 16637142, 16319148, 16328348]],
    [N['32GiB'], 0, [1019125, 27985696, 15282860, 11586600, 44651330]],
    [N['32GiB'], 1, [109168525, 127316247, 80331041, 97065716, 72310052]],
    [N['32GiB'], 14, [990420169, 955146989, 968005601, 976863263, 944650706]],
    [N['32GiB'], 15, [1038629497, 1053983614, 1030421316, 1027373887, 1068685433]],
    [N['64GiB'], 0, [1019125, 13992848, 3820715, 18225541, 57316660]],
    [N['64GiB'], 1, [243386253, 197875851, 204632136, 171516766, 247789010]],
    [N['64GiB'], 14, [1997053129, 1920414070, 2003609080, 1900492803, 1963254685]],
    [N['64GiB'], 15, [2045262457, 2036941247, 2136653521, 2091356007, 2147167623]],
  ];
  for (const [nodes, k, want] of vectors) {
    assert.deepEqual(snapChallenges(snapParams(nodes), commRNew, k).slice(0, 5), want, `${nodes} nodes, k = ${k}`);
  }
});

test('constants.rs: partitions, challenges, apex leaves, hs, h_select, tree shapes; 32 GiB: 10 digests of 9 challenges', () => {
  const p32 = snapParams(N['32GiB']);
  assert.deepEqual(
    { ...p32, tree: undefined },
    { sectorNodes: 2 ** 30, challengeCount: 86, challengeBitLen: 30, partitionCount: 16, partitionBitLen: 4, apexLeafCount: 128, apexLeafBitLen: 7, hs: [7, 8, 9, 10, 11, 12], tree: undefined },
  );
  assert.deepEqual(p32.tree, { baseArity: 8, baseLevels: 9, subArity: 8, topArity: 0 });
  assert.equal(snapChallengesPerDigest(p32), 9);
  assert.equal(snapDigestsPerPartition(p32), 10);
  const p2 = snapParams(N['2KiB']);
  assert.deepEqual([p2.partitionCount, p2.challengeCount, p2.apexLeafCount, p2.tree.baseLevels, p2.tree.subArity], [1, 10, 8, 2, 0]);
  assert.deepEqual([snapParams(N['16KiB']).partitionCount, snapParams(N['16MiB']).partitionCount, snapParams(N['16MiB']).challengeCount, snapParams(N['8MiB']).apexLeafCount], [2, 4, 10, 128]);
  assert.deepEqual(snapParams(N['64GiB']).tree, { baseArity: 8, baseLevels: 9, subArity: 8, topArity: 2 });
  assert.deepEqual(snapParams(N['1KiB']).tree, { baseArity: 8, baseLevels: 1, subArity: 4, topArity: 0 });
  assert.deepEqual(snapParams(N['32KiB']).tree, { baseArity: 8, baseLevels: 2, subArity: 8, topArity: 2 });
  assert.equal(snapHSelect(N['32GiB'], 10), 8); // h_default = hs[3] = 10 → 1 << 3
  assert.equal(snapHSelect(N['2KiB'], 1), 1);
  assert.throws(() => snapHSelect(N['32GiB'], 6), /h = 6 is not allowed/);
  assert.throws(() => snapParams(3000), /not a SnapDeals sector size/);
});

test('RegisteredUpdateProof 0–4, circuit ids snap-2k … snap-64g, identifier', () => {
  assert.deepEqual(allSnapProofs().map((p) => [p.id, p.name, p.circuitId]), [
    [0, 'StackedDrg2KiBV1', 'snap-2k'],
    [1, 'StackedDrg8MiBV1', 'snap-8m'],
    [2, 'StackedDrg512MiBV1', 'snap-512m'],
    [3, 'StackedDrg32GiBV1', 'snap-32g'],
    [4, 'StackedDrg64GiBV1', 'snap-64g'],
  ]);
  assert.equal(snapProofByCircuitId('snap-32g'), snapProofById(3));
  assert.equal(snapProofByCircuitId('snap-1t'), undefined);
  assert.equal(snapProofById(5), undefined);
  assert.equal(snapParamsIdentifier(2 ** 30), 'empty_sector_update::PublicParams{ sector_nodes: 1073741824 }');
});

test('gen-randomness Poseidon: the optimized schedule agrees; phi and rho differ from the MerkleTree-tag hash', () => {
  const rng = new XorShiftRng();
  const a = rng.fr();
  const b = rng.fr();
  assert.equal(poseidonHash([a, b], GEN_RANDOMNESS_DOMAIN_TAG), poseidonHashOptimized([a, b], GEN_RANDOMNESS_DOMAIN_TAG));
  assert.notEqual(snapPhi(a, b), poseidonHash([a, b]));
  assert.equal(snapRho(a, 5), poseidonHash([a, 5n], 1n << 40n));
});

test('encoding: label_r_new = label_r_old + label_d_new·rho(node >> (log2 nodes − h)); decoding inverts it', async () => {
  const { snapEncodeLabels, snapDecodeLabels } = await import('../src/filecoin/snap/update.js');
  const p = snapParams(N['2KiB']);
  const rng = new XorShiftRng();
  const rOld = Array.from({ length: p.sectorNodes }, () => rng.fr());
  const dNew = Array.from({ length: p.sectorNodes }, () => rng.fr());
  const phi = snapPhi(rng.fr(), rng.fr());
  const rNew = snapEncodeLabels(p, 1, phi, rOld, dNew);
  // h = 1: nodes 0–31 use rho(phi, 0), nodes 32–63 rho(phi, 1)
  const R = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n; // r (FACTS §2)
  assert.equal(rNew[5], (rOld[5]! + dNew[5]! * snapRho(phi, 0)) % R);
  assert.equal(rNew[40], (rOld[40]! + dNew[40]! * snapRho(phi, 1)) % R);
  assert.deepEqual(snapDecodeLabels(p, 1, phi, rOld, rNew), dNew);
});
