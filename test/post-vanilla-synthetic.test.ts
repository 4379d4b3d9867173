/**
 * Synthetic full-size PoSt vanilla proofs (src/filecoin/post/synthetic.ts, `kiln synth-post`): every sector's
 * inclusion proofs verify with the reference Poseidon and lead to one comm_r_last, open exactly the leaves the
 * challenge formula names (computed here with node:crypto), comm_r = Poseidon2(comm_c, comm_r_last); the output is
 * deterministic and parses with the codec for 2 KiB (Single), 32 GiB (Sub) and 64 GiB (Top) trees.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSynthPost } from '../src/cli/post-vanilla-commands.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { checkPoStSectorProof, parsePoStSectorProof, postSectorProofSize, readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { fullPath, pathLeafIndex, verifyPoseidonProof } from '../src/filecoin/tree/path.js';

const randomness = createHash('sha256').update('kiln synth-post test').digest();
randomness[31]! &= 0x3f;

function challengeByHand(sectorId: bigint, idx: number, sectorSize: number): number {
  const b = Buffer.alloc(16);
  b.writeBigUInt64LE(sectorId, 0);
  b.writeBigUInt64LE(BigInt(idx), 8);
  return Number(createHash('sha256').update(randomness).update(b).digest().readBigUInt64LE(0) % BigInt(sectorSize / 32));
}

function checkAll(info: PoStProofInfo, elements: readonly Uint8Array[], firstId: bigint, partition = 0): void {
  elements.forEach((el, i) => {
    assert.equal(el.length, postSectorProofSize(info));
    const p = parsePoStSectorProof(el, info);
    assert.equal(p.sectorId, firstId + BigInt(i));
    assert.equal(poseidonHash([p.commC, p.commRLast]), p.commR);
    const sectorIndex = partition * info.sectorCount + i;
    p.inclusionProofs.forEach((mp, n) => {
      assert.equal(mp.root, p.commRLast);
      assert.ok(verifyPoseidonProof(mp), `sector ${i} proof ${n}`);
      const idx = info.type === 'window' && info.api === 'V1' ? sectorIndex * 10 + n : n;
      assert.equal(pathLeafIndex(fullPath(mp)), challengeByHand(p.sectorId, idx, info.size.sectorSize));
    });
    assert.deepEqual(checkPoStSectorProof(p, info, randomness, sectorIndex), []);
  });
}

test('synthetic 32 GiB WindowPoSt sectors (Sub trees) are consistent and deterministic', () => {
  const info = postProofById(13)!;
  const r = synthPoSt({ info, randomness, sectors: 3, firstSectorId: 100n, threads: 1 });
  assert.equal(r.elements.length, 3);
  checkAll(info, r.elements, 100n);
  const again = synthPoSt({ info, randomness, sectors: 3, firstSectorId: 100n, threads: 1 });
  assert.deepEqual(again.elements, r.elements);
  const other = synthPoSt({ info, randomness, sectors: 1, firstSectorId: 100n, rngSeed: 'other', threads: 1 });
  assert.notDeepEqual(other.elements[0], r.elements[0]);
  // distinct sectors have distinct trees
  assert.notEqual(parsePoStSectorProof(r.elements[0]!, info).commRLast, parsePoStSectorProof(r.elements[1]!, info).commRLast);
});

test('synthetic V1 window (challenge index = sector index · 10 + n) of partition 1, 2 KiB default partition size', () => {
  const v1 = postProofById(8)!; // StackedDrgWindow32GiBV1
  checkAll(v1, synthPoSt({ info: v1, randomness, sectors: 2, partitionIndex: 1, threads: 1 }).elements, 1n, 1);
  const small = postProofById(10)!;
  const r = synthPoSt({ info: small, randomness, threads: 1 });
  assert.equal(r.elements.length, 2);
  checkAll(small, r.elements, 1n);
});

test('synthetic WinningPoSt: 64 GiB (Top trees) and 2 KiB, 66 inclusion proofs of one sector', () => {
  for (const id of [4, 0]) {
    const info = postProofById(id)!;
    const r = synthPoSt({ info, randomness, firstSectorId: 7n, threads: 1 });
    assert.equal(r.elements.length, 1);
    checkAll(info, r.elements, 7n);
    assert.equal(parsePoStSectorProof(r.elements[0]!, info).inclusionProofs[0]!.shape, id === 4 ? 'Top' : 'Single');
  }
  assert.throws(() => synthPoSt({ info: postProofById(3)!, randomness, sectors: 2 }), /one sector/);
  assert.throws(() => synthPoSt({ info: postProofById(3)!, randomness: new Uint8Array(32).fill(0xff) }), /canonical/);
});

test('kiln synth-post writes a vanilla file readVanillaFile reads', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-synth-post-'));
  try {
    const out = join(dir, 'w.json');
    const logs: string[] = [];
    await runSynthPost({ type: 'window', sectorSize: '32GiB', sectors: 2, randomness: Buffer.from(randomness).toString('hex'), firstSector: '5', threads: 1, out }, (l) => logs.push(l));
    assert.match(logs.join('\n'), /StackedDrgWindow32GiBV1_1, 2 sectors: 49920 B of vanilla proofs/);
    const els = readVanillaFile(out);
    assert.equal(els.length, 2);
    checkAll(postProofById(13)!, els, 5n);
    await assert.rejects(runSynthPost({ type: 'window', sectorSize: '3GiB', randomness: Buffer.from(randomness).toString('hex'), out }), /--sector-size '3GiB': not a Filecoin sector size/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
