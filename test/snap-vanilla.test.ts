/**
 * SnapDeals vanilla proofs: the bincode `PartitionProof` codec (FACTS §8, storage-proofs-update vanilla.rs serde
 * order) round trip and its named errors; synthetic region-uniform updates (synth-snap) that pass every check,
 * including a full-size 32 GiB partition set; and synthetic 2 KiB and 8 MiB (production parameters) updates satisfying
 * the circuit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { SNAP_SECTOR_NODES, snapParams } from '../src/filecoin/snap/registry.js';
import {
  VanillaProofError,
  checkSnapPartition,
  parseSnapPartitionProof,
  serializeSnapPartitionProof,
  snapCircuitFor,
  snapPartitionProofSize,
} from '../src/filecoin/snap/vanilla.js';
import { syntheticSnapUpdate } from '../src/filecoin/snap/synthetic.js';
import { snapPartitionProof } from '../src/filecoin/snap/update.js';
import { snapHDefault } from '../src/filecoin/snap/registry.js';
import { snapFixture } from './snap-support.js';

const N = SNAP_SECTOR_NODES;

test('codec: a 2 KiB partition proof round-trips byte for byte; its size is the layout sum', () => {
  const { p, proofs } = snapFixture(N['2KiB'], 3);
  const bytes = serializeSnapPartitionProof(proofs[0]!, p);
  // comm_c + apex_leafs (8) + 10 × (2 Single TreeR proofs of 2 oct levels + 1 Single TreeD proof of 6 binary levels)
  const rProof = 4 + 64 + 8 + 2 * (8 + 7 * 32 + 8);
  const dProof = 4 + 64 + 8 + 6 * (8 + 32 + 8);
  assert.equal(bytes.length, 32 + 8 + 8 * 32 + 8 + 10 * (2 * rProof + dProof));
  assert.equal(bytes.length, snapPartitionProofSize(p));
  const back = parseSnapPartitionProof(bytes, p);
  assert.deepEqual(back, proofs[0]);
  assert.deepEqual(serializeSnapPartitionProof(back, p), bytes);
  // field order: comm_c first, then the apex leaves' u64 length
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  assert.equal(dv.getBigUint64(32, true), 8n);
  assert.equal(dv.getBigUint64(32 + 8 + 8 * 32, true), 10n);
  assert.equal(dv.getUint32(32 + 8 + 8 * 32 + 8, true), 0); // proof_r_old: MerkleProof::Single
});

test('codec: malformed partition proofs are refused with the field and byte offset named', () => {
  const { p, proofs } = snapFixture(N['2KiB'], 3);
  const good = serializeSnapPartitionProof(proofs[0]!, p);
  const err = (b: Uint8Array, re: RegExp): void => {
    assert.throws(() => parseSnapPartitionProof(b, p), (e: Error) => e instanceof VanillaProofError && re.test(e.message), re.source);
  };
  err(good.subarray(0, 20), /comm_c is truncated/);
  err(good.subarray(0, good.length - 1), /challenge_proofs\[9\]\.proof_r_new\.base\[1\]\.index is truncated/);
  err(new Uint8Array([...good, 0]), /end has 1 trailing bytes/);
  const set = (at: number, f: (b: Uint8Array, dv: DataView) => void): Uint8Array => {
    const b = good.slice();
    f(b, new DataView(b.buffer));
    return b;
  };
  err(set(32, (_, dv) => dv.setBigUint64(32, 9n, true)), /apex_leafs length = 9, expected 8 \(byte offset 32\)/);
  err(set(0, (b) => b.fill(0xff, 0, 32)), /comm_c = 0x[0-9a-f]+ is not a canonical field element/);
  const cp0 = 32 + 8 + 256 + 8;
  err(set(cp0, (_, dv) => dv.setUint32(cp0, 1, true)), /challenge_proofs\[0\]\.proof_r_old\.tag = 1 \(Sub\) is wrong/);
  err(set(0, (_, dv) => dv.setBigUint64(40 + 256, 11n, true)), /challenge_proofs length = 11, expected 10/);
  // proof_d_new's first path index (binary tree: < 2)
  const rProof = 4 + 64 + 8 + 2 * (8 + 7 * 32 + 8);
  const dIdx = cp0 + rProof + 4 + 64 + 8 + 8 + 32;
  err(set(0, (_, dv) => dv.setBigUint64(dIdx, 2n, true)), /challenge_proofs\[0\]\.proof_d_new\.base\[0\]\.index = 2 is out of range for arity 2/);
  assert.throws(() => serializeSnapPartitionProof({ ...proofs[0]!, apexLeaves: [] }, p), /apex_leafs has 0 elements, expected 8/);
});

test('synthetic 2 KiB update: every check passes and the circuit is satisfied', () => {
  const p = snapParams(N['2KiB']);
  const u = syntheticSnapUpdate(p, 1, 5n);
  const pub = { commROld: u.commROld, commDNew: u.commDNew, commRNew: u.commRNew };
  const pp = snapPartitionProof(p, 0, u.commRNew, u.trees);
  checkSnapPartition(p, 0, 1, pub, pp);
  snapCircuitFor(p, 0, 1, pub, pp).synthesize(new WitnessGenerator(5, undefined, { check: true }));
});

test('synthetic 32 GiB update (h = 10): 16 consistent partitions of 86 challenges; bincode round trip; checks pass', { timeout: 600_000 }, () => {
  const p = snapParams(N['32GiB']);
  const t0 = performance.now();
  const u = syntheticSnapUpdate(p, snapHDefault(p.sectorNodes), 9n);
  const treesMs = performance.now() - t0;
  const pub = { commROld: u.commROld, commDNew: u.commDNew, commRNew: u.commRNew };
  for (const k of [0, 7, 15]) {
    const pp = snapPartitionProof(p, k, u.commRNew, u.trees);
    const bytes = serializeSnapPartitionProof(pp, p);
    assert.equal(bytes.length, snapPartitionProofSize(p));
    const back = parseSnapPartitionProof(bytes, p);
    checkSnapPartition(p, k, 10, pub, back);
    assert.equal(back.challengeProofs[0]!.proofROld.shape, 'Sub');
    assert.throws(() => checkSnapPartition(p, k, 11, pub, back), /leaf_r_new ≠ leaf_r_old \+ leaf_d_new·rho/);
  }
  console.log(`synthetic 32 GiB trees in ${Math.round(treesMs)} ms; partition proof ${snapPartitionProofSize(p)} B`);
});

test('synthetic 8 MiB update (production parameters: 4 partitions, 128 apex leaves, hs 7–12, h = 10): partition 3 satisfies the circuit; h = 12 is named', { timeout: 900_000 }, () => {
  const p = snapParams(N['8MiB']);
  const u = syntheticSnapUpdate(p, 10, 3n);
  const pub = { commROld: u.commROld, commDNew: u.commDNew, commRNew: u.commRNew };
  const pp = snapPartitionProof(p, 3, u.commRNew, u.trees);
  checkSnapPartition(p, 3, 10, pub, pp);
  assert.throws(() => checkSnapPartition(p, 3, 12, pub, pp), /leaf_r_new ≠ leaf_r_old \+ leaf_d_new·rho/);
  const wg = new WitnessGenerator(5, undefined, { check: true });
  snapCircuitFor(p, 3, 10, pub, pp).synthesize(wg);
  assert.equal(wg.value(1), 3n | (8n << 2n)); // k = 3, h_select = 1 << index(10) = 8, partition_bit_len = 2
  assert.throws(() => snapCircuitFor(p, 3, 12, pub, pp).synthesize(new WitnessGenerator(5, undefined, { check: true })), /unsatisfied constraint: por tree_r_new \(c_index=0\)\/calculated root == provided root/);
});
