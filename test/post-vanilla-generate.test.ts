/**
 * Vanilla PoSt proofs of kiln-sealed 2 KiB sectors (`kiln seal --sector-dir`, src/filecoin/post/generate.ts,
 * `kiln gen-vanilla`): every inclusion proof verifies with the reference Poseidon, opens the leaf the
 * challenge formula names (computed here with node:crypto) and holds that replica node, comm_r equals the
 * seal's comm_r = Poseidon2(comm_c, comm_r_last); WinningPoSt picks the sector SHA256(prover_id ‖ randomness ‖ 0)
 * names.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runGenVanilla } from '../src/cli/post-vanilla-commands.js';
import { runSeal } from '../src/cli/seal.js';
import { proverIdFromActorId } from '../src/filecoin/graph.js';
import { bytesToBigintLE } from '../src/filecoin/hash/fr32.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { PoStGenerateError, windowPoStVanilla, winningPoStVanilla } from '../src/filecoin/post/generate.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { checkPoStSectorProof, parsePoStSectorProof, readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { SectorDirError, readSectorDir, sealSector, writeSectorDir, type SealedSectorData } from '../src/filecoin/seal/index.js';
import { fullPath, pathLeafIndex, verifyPoseidonProof } from '../src/filecoin/tree/path.js';

const dir = mkdtempSync(join(tmpdir(), 'kiln-post-gen-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const randomness = createHash('sha256').update('kiln post test randomness').digest();
randomness[31]! &= 0x3f;

/** The leaf challenge by hand (FACTS §6). */
function challengeByHand(sectorId: bigint, idx: number, nodes: number): number {
  const b = Buffer.alloc(16);
  b.writeBigUInt64LE(sectorId, 0);
  b.writeBigUInt64LE(BigInt(idx), 8);
  return Number(createHash('sha256').update(randomness).update(b).digest().readBigUInt64LE(0) % BigInt(nodes));
}

const sealed = [9, 4, 12].map((n) => {
  const r = sealSector({ sectorSize: '2KiB', sectorNumber: n, rngSeed: `post-${n}`, miner: 1001, keepSector: true, threads: 1 });
  assert.ok(r.sector);
  const d = join(dir, `s${n}`);
  writeSectorDir(d, r.sector);
  return { n: BigInt(n), commR: r.commR, dir: d, data: r.sector };
});

/** Everything the circuit will rely on, checked with the reference code and hand-computed challenges. */
function checkElement(el: Uint8Array, info: PoStProofInfo, s: (typeof sealed)[number], idxBase: number): void {
  const p = parsePoStSectorProof(el, info);
  assert.equal(p.sectorId, s.n);
  assert.equal(p.commR, bytesToBigintLE(s.commR), 'comm_r is the seal\'s');
  assert.equal(poseidonHash([p.commC, p.commRLast]), p.commR, 'comm_r = Poseidon2(comm_c, comm_r_last)');
  const replica = readFileSync(join(s.dir, 'replica.bin'));
  assert.equal(p.inclusionProofs.length, info.type === 'winning' ? 66 : 10);
  p.inclusionProofs.forEach((mp, n) => {
    assert.equal(mp.shape, 'Single');
    assert.equal(mp.root, p.commRLast);
    assert.ok(verifyPoseidonProof(mp), `inclusion proof ${n} verifies`);
    const c = challengeByHand(s.n, idxBase + n, 64);
    assert.equal(pathLeafIndex(fullPath(mp)), c, `proof ${n} opens the challenged leaf`);
    assert.equal(mp.leaf, bytesToBigintLE(replica.subarray(c * 32, c * 32 + 32)), 'the leaf is the replica node');
  });
  assert.deepEqual(checkPoStSectorProof(p, info, randomness, idxBase / 10), []);
}

test('WindowPoSt of kiln-sealed 2 KiB sectors: sorted by id, 2 per partition, every proof verifies at its challenge', () => {
  const info = postProofById(10)!; // StackedDrgWindow2KiBV1_1: idx = n
  const data = sealed.map((s) => readSectorDir(s.dir));
  const parts = windowPoStVanilla(info, data, randomness);
  assert.equal(parts.length, 2);
  assert.deepEqual(parts.map((p) => p.length), [2, 1]);
  const order = [...sealed].sort((a, b) => Number(a.n - b.n)); // 4, 9, 12
  parts.flat().forEach((el, i) => {
    assert.equal(el.length, 5680);
    checkElement(el, info, order[i]!, 0);
  });
  // V1 (id 5): idx = sector_index · 10 + n, the sector's place in the whole PoSt
  const v1 = windowPoStVanilla(postProofById(5)!, data, randomness).flat();
  v1.forEach((el, i) => checkElement(el, postProofById(5)!, order[i]!, i * 10));
  assert.notDeepEqual(v1[2], parts[1]![0]);
});

test('WinningPoSt: the challenged sector of the set, 66 inclusion proofs (36,816 B)', () => {
  const info = postProofById(0)!;
  const data = sealed.map((s) => readSectorDir(s.dir));
  const h = createHash('sha256').update(proverIdFromActorId(1001n)).update(randomness).update(Buffer.alloc(8)).digest();
  const expected = Number(h.readBigUInt64LE(0) % 3n);
  const r = winningPoStVanilla(info, data, randomness);
  assert.equal(r.sectorIndex, expected);
  assert.equal(r.sectorId, sealed[expected]!.n);
  assert.equal(r.element.length, 36816);
  checkElement(r.element, info, sealed[expected]!, 0);
});

test('a changed leaf, sibling, comm_c or randomness is caught by checkPoStSectorProof', () => {
  const info = postProofById(10)!;
  const el = windowPoStVanilla(info, [readSectorDir(sealed[0]!.dir)], randomness)[0]![0]!;
  const p = parsePoStSectorProof(el, info);
  const proofs = [...p.inclusionProofs];
  proofs[2] = { ...proofs[2]!, leaf: proofs[2]!.leaf + 1n };
  assert.match(checkPoStSectorProof({ ...p, inclusionProofs: proofs }, info, randomness).join('; '), /inclusion_proofs\[2\]: the path does not lead/);
  const base = [...p.inclusionProofs[4]!.base];
  base[1] = { ...base[1]!, hashes: [base[1]!.hashes[0]! ^ 1n, ...base[1]!.hashes.slice(1)] };
  const proofs2 = [...p.inclusionProofs];
  proofs2[4] = { ...proofs2[4]!, base };
  assert.match(checkPoStSectorProof({ ...p, inclusionProofs: proofs2 }, info, randomness).join('; '), /inclusion_proofs\[4\]: the path/);
  assert.match(checkPoStSectorProof({ ...p, commC: p.commC + 1n }, info, randomness).join('; '), /comm_r ≠ Poseidon2/);
  const other = Uint8Array.from(randomness);
  other[0]! ^= 1;
  assert.match(checkPoStSectorProof(p, info, other).join('; '), /opens leaf \d+, the challenge is \d+/);
});

test('sector directories: rebuilt tree, corrupted replica and bad requests fail clearly', () => {
  const s = sealed[1]!;
  const copy = join(dir, 'copy');
  writeSectorDir(copy, readSectorDir(s.dir));
  unlinkSync(join(copy, 'tree-r-last.bin'));
  const rebuilt: SealedSectorData = readSectorDir(copy); // tree_r_last rebuilt from replica.bin
  assert.equal(rebuilt.commRLast, s.data.commRLast);
  const replica = readFileSync(join(copy, 'replica.bin'));
  replica[100]! ^= 1;
  writeFileSync(join(copy, 'replica.bin'), replica);
  assert.throws(() => readSectorDir(copy), (e: unknown) => e instanceof SectorDirError && /root is not the stated comm_r_last/.test(e.message));
  writeFileSync(join(copy, 'replica.bin'), replica.subarray(0, 1024));
  assert.throws(() => readSectorDir(copy), /1024 bytes, a StackedDrg2KiBV1_1 replica has 2048/);
  assert.throws(() => readSectorDir(join(dir, 'nope')), /no sector.json/);
  const data = [readSectorDir(s.dir)];
  assert.throws(() => windowPoStVanilla(postProofById(13)!, data, randomness), (e: unknown) => e instanceof PoStGenerateError && /proves 32GiB sectors/.test(e.message));
  assert.throws(() => windowPoStVanilla(postProofById(0)!, data, randomness), /not a WindowPoSt/);
  assert.throws(() => windowPoStVanilla(postProofById(10)!, [...data, ...data], randomness), /given twice/);
  assert.throws(() => windowPoStVanilla(postProofById(10)!, data, new Uint8Array(32).fill(0xff)), /not a canonical field element/);
});

test('kiln gen-vanilla writes cuzk-bench vanilla files that readVanillaFile reads back', async () => {
  const logs: string[] = [];
  const files = await runGenVanilla(
    { type: 'window', sectors: sealed.map((s) => s.dir), randomness: Buffer.from(randomness).toString('hex'), out: [join(dir, 'wpost.json')] },
    (l) => logs.push(l),
  );
  assert.deepEqual(files, [join(dir, 'wpost-p0.json'), join(dir, 'wpost-p1.json')]);
  const p0 = readVanillaFile(files[0]!);
  assert.equal(p0.length, 2);
  assert.equal(JSON.parse(readFileSync(files[0]!, 'utf8')).length, 2);
  const info = postProofById(10)!;
  assert.equal(parsePoStSectorProof(p0[0]!, info).sectorId, 4n);
  const [win] = await runGenVanilla(
    { type: 'winning', sectors: [sealed[0]!.dir], randomness: Buffer.from(randomness).toString('hex'), registeredProof: 'StackedDrgWinning2KiBV1', out: [join(dir, 'win.json')] },
    (l) => logs.push(l),
  );
  const els = readVanillaFile(win!);
  assert.equal(els.length, 1);
  checkElement(els[0]!, postProofById(0)!, sealed[0]!, 0);
  await assert.rejects(runGenVanilla({ type: 'winning', sectors: [sealed[0]!.dir], randomness: '00', out: [join(dir, 'x')] }), /64 hex digits/);
  await assert.rejects(runGenVanilla({ type: 'window', sectors: [sealed[0]!.dir], randomness: Buffer.from(randomness).toString('hex'), registeredProof: '3', out: [join(dir, 'x')] }), /is a winning proof/);
});

test('kiln seal --sector-dir keeps a sector directory matching the Commit2In it writes', () => {
  const d = join(dir, 'cli-sector');
  const text = runSeal({ sectorSize: '2KiB', out: join(dir, 'c2in.json'), sector: '21', miner: 'f01002', rngSeed: 'cli', sectorDir: d }, true);
  const s = readSectorDir(d);
  assert.equal(s.sectorNumber, 21n);
  assert.equal(s.minerId, 1002n);
  assert.equal(s.info.name, 'StackedDrg2KiBV1_1');
  const c1 = JSON.parse(Buffer.from(JSON.parse(text).Phase1Out, 'base64').toString('utf8')) as { comm_r: number[] };
  assert.deepEqual([...s.commR], c1.comm_r, 'the sector directory\'s comm_r is the C1\'s');
  assert.equal(readFileSync(join(d, 'replica.bin')).length, 2048);
  assert.equal(readFileSync(join(d, 'tree-r-last.bin')).length, (8 + 1) * 32);
});
