/**
 * The PoSt vanilla proof codec (src/filecoin/post/vanilla.ts) and the leaf challenges (challenges.ts):
 * sizes pinned from FACTS §8 on a real 2 KiB tree, the byte layout checked by hand, round trips for every tree
 * shape, every malformation class named, and a fuzz that only ever sees VanillaProofError.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FR_MODULUS } from '../src/field/layout.js';
import { postLeafChallenge, postSectorChallenges } from '../src/filecoin/post/challenges.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../src/filecoin/post/types.js';
import {
  VanillaFileError, VanillaProofError, parsePoStSectorProof, parsePoStSectorProofs, parseVanillaFile, postSectorProofSize, readVanillaFile,
  serializePoStSectorProof, vanillaFileText,
} from '../src/filecoin/post/vanilla.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { buildPoseidonTree, shapeArities, treeProof } from '../src/filecoin/tree/build.js';
import { verifyPoseidonProof, type MerkleProof, type PathElement } from '../src/filecoin/tree/path.js';

const proof = (id: number): PoStProofInfo => postProofById(id)!;
const WINNING_2K = proof(0);
const WINDOW_2K = proof(10);
const WINDOW_2K_V1 = proof(5);
const WINDOW_32G = proof(13);
const WINDOW_64G = proof(14);
const WINNING_32G = proof(3);

/** A deterministic canonical field element. */
function fe(tag: string, i: number): bigint {
  const h = createHash('sha256').update(`${tag}:${i}`).digest();
  h[31]! &= 0x3f;
  return BigInt(`0x${Buffer.from(h).reverse().toString('hex')}`);
}

/** A real 2 KiB tree_r_last (64 leaves, oct tree of 2 levels) and a sector proof opening `challenges`. */
function real2KiB(info: PoStProofInfo, challenges: readonly number[]): PoStSectorProof {
  const tree = buildPoseidonTree(Array.from({ length: 64 }, (_, i) => fe('leaf', i)), shapeArities(info.size.tree));
  const commC = fe('comm_c', 0);
  return {
    sectorId: 5n,
    commR: poseidonHash([commC, tree.root]),
    inclusionProofs: challenges.map((c) => treeProof(tree, c, info.size.tree)),
    commC,
    commRLast: tree.root,
  };
}

/** A layout-correct (not Merkle-consistent) sector proof for any shape: the codec does not hash. */
function fakeProof(info: PoStProofInfo, n: number): PoStSectorProof {
  const t = info.size.tree;
  let k = 0;
  const path = (levels: number, arity: number): PathElement<bigint>[] =>
    Array.from({ length: levels }, (_, j) => ({ hashes: Array.from({ length: arity - 1 }, () => fe('h', k++)), index: (j * 3 + n) % arity }));
  const count = info.type === 'winning' ? 66 : 10;
  const proofs: MerkleProof<bigint>[] = Array.from({ length: count }, () => ({
    shape: t.topArity ? 'Top' : t.subArity ? 'Sub' : 'Single',
    root: fe('root', 0),
    leaf: fe('leaf', k++),
    base: path(t.baseLevels, 8),
    sub: t.subArity ? path(1, 8) : [],
    top: t.topArity ? path(1, 2) : [],
  }));
  return { sectorId: 123456789n, commR: fe('comm_r', n), inclusionProofs: proofs, commC: fe('comm_c', n), commRLast: fe('root', 0) };
}

const u64At = (b: Uint8Array, o: number): bigint => new DataView(b.buffer, b.byteOffset).getBigUint64(o, true);
const u32At = (b: Uint8Array, o: number): number => new DataView(b.buffer, b.byteOffset).getUint32(o, true);
const frAt = (b: Uint8Array, o: number): bigint => BigInt(`0x${Buffer.from(b.subarray(o, o + 32)).reverse().toString('hex')}`);

function expectError(bytes: Uint8Array, info: PoStProofInfo, pattern: RegExp): VanillaProofError {
  try {
    parsePoStSectorProof(bytes, info);
  } catch (e) {
    assert.ok(e instanceof VanillaProofError, `expected VanillaProofError, got ${String(e)}`);
    assert.match(e.message, pattern);
    return e;
  }
  assert.fail(`parsed without error; expected ${pattern}`);
}

test('leaf challenges match SHA256(randomness ‖ sector_id LE ‖ idx LE) mod nodes, computed independently', () => {
  const randomness = Uint8Array.from({ length: 32 }, (_, i) => i);
  randomness[31]! &= 0x3f;
  const byHand = (sector: bigint, idx: bigint, nodes: bigint): number => {
    const b = Buffer.alloc(16);
    b.writeBigUInt64LE(sector, 0);
    b.writeBigUInt64LE(idx, 8);
    return Number(createHash('sha256').update(randomness).update(b).digest().readBigUInt64LE(0) % nodes);
  };
  // values computed with Python hashlib per FACTS §6 (storage-proofs-post fallback/vanilla.rs generate_leaf_challenge_inner)
  assert.deepEqual(postSectorChallenges(WINDOW_2K, randomness, 5n), [26, 20, 59, 15, 60, 46, 40, 17, 54, 28]);
  assert.deepEqual(postSectorChallenges(WINDOW_32G, randomness, 5n).slice(0, 3), [499355610, 1015611732, 558812731]);
  // V1: idx = sector_index · 10 + n
  assert.deepEqual(postSectorChallenges(proof(8), randomness, 7n, 3).slice(0, 3), [539744758, 835595011, 900891028]);
  // V1_2 ignores the sector index
  assert.deepEqual(postSectorChallenges(WINDOW_32G, randomness, 7n, 3), postSectorChallenges(WINDOW_32G, randomness, 7n, 0));
  const winning = postSectorChallenges(WINNING_2K, randomness, 5n);
  assert.equal(winning.length, 66);
  assert.deepEqual(winning.slice(60), [5, 1, 11, 18, 9, 23]);
  for (let n = 0; n < 66; n++) assert.equal(winning[n], byHand(5n, BigInt(n), 64n));
  assert.equal(postLeafChallenge(randomness, 2n ** 64n - 1n, 12345n, 64 * 2 ** 30), byHand(2n ** 64n - 1n, 12345n, 2n ** 31n));
  assert.deepEqual(postSectorChallenges(WINDOW_2K_V1, randomness, 5n, 2), Array.from({ length: 10 }, (_, n) => byHand(5n, BigInt(20 + n), 64n)));
});

test('a real 2 KiB window sector proof is 5,680 bytes and a winning one 36,816 bytes (FACTS §8), laid out as bincode', () => {
  const w = real2KiB(WINDOW_2K, [26, 20, 59, 15, 60, 46, 40, 17, 54, 28]);
  for (const p of w.inclusionProofs) assert.ok(verifyPoseidonProof(p));
  const bytes = serializePoStSectorProof(w, WINDOW_2K);
  assert.equal(bytes.length, 5680);
  assert.equal(postSectorProofSize(WINDOW_2K), 5680);
  const win = serializePoStSectorProof(real2KiB(WINNING_2K, Array.from({ length: 66 }, (_, i) => i % 64)), WINNING_2K);
  assert.equal(win.length, 36816);
  assert.equal(postSectorProofSize(WINNING_2K), 36816);

  // the layout, read by hand
  assert.equal(u64At(bytes, 0), 5n); // sector_id
  assert.equal(frAt(bytes, 8), w.commR);
  assert.equal(u64At(bytes, 40), 1n); // sectors
  assert.equal(u64At(bytes, 48), 10n); // inclusion_proofs
  assert.equal(u32At(bytes, 56), 0); // Single
  assert.equal(frAt(bytes, 60), w.commRLast); // root first
  assert.equal(frAt(bytes, 92), w.inclusionProofs[0]!.leaf); // then leaf
  assert.equal(u64At(bytes, 124), 2n); // path levels
  assert.equal(u64At(bytes, 132), 7n); // siblings of level 0
  assert.equal(frAt(bytes, 140), w.inclusionProofs[0]!.base[0]!.hashes[0]);
  assert.equal(u64At(bytes, 140 + 7 * 32), BigInt(26 % 8)); // index of level 0
  assert.equal(u64At(bytes, 140 + 7 * 32 + 8 + 8 + 7 * 32), BigInt(Math.floor(26 / 8))); // index of level 1
  assert.equal(frAt(bytes, 5680 - 64), w.commC);
  assert.equal(frAt(bytes, 5680 - 32), w.commRLast);
  assert.equal(poseidonHash([frAt(bytes, 5680 - 64), frAt(bytes, 5680 - 32)]), frAt(bytes, 8));

  const back = parsePoStSectorProof(bytes, WINDOW_2K);
  assert.deepEqual(back, w);
  for (const p of back.inclusionProofs) assert.ok(verifyPoseidonProof(p));
  assert.deepEqual(parsePoStSectorProof(win, WINNING_2K).inclusionProofs.length, 66);
});

test('round trips for Single, Sub (32 GiB) and Top (64 GiB) layouts; Sub puts base, sub, root, leaf in that order', () => {
  for (const info of [WINDOW_2K, WINNING_2K, proof(1), proof(7), WINDOW_32G, WINNING_32G, WINDOW_64G, proof(4)]) {
    const p = fakeProof(info, info.id);
    const bytes = serializePoStSectorProof(p, info);
    assert.equal(bytes.length, postSectorProofSize(info), info.size.label);
    assert.deepEqual(parsePoStSectorProof(bytes, info), p);
    assert.deepEqual(serializePoStSectorProof(parsePoStSectorProof(bytes, info), info), bytes);
  }
  // 32 GiB: tag 1, base_proof (9 levels), sub_proof (1 level), root, leaf: 4 + 8 + 9·240 + 8 + 240 + 64 = 2,484 B per proof
  assert.equal(postSectorProofSize(WINDOW_32G), 120 + 10 * 2484);
  assert.equal(postSectorProofSize(WINDOW_64G), 120 + 10 * (2484 + 8 + 8 + 32 + 8));
  const p = fakeProof(WINDOW_32G, 1);
  const b = serializePoStSectorProof(p, WINDOW_32G);
  assert.equal(u32At(b, 56), 1);
  assert.equal(u64At(b, 60), 9n);
  const subAt = 60 + 8 + 9 * 240;
  assert.equal(u64At(b, subAt), 1n);
  assert.equal(frAt(b, subAt + 8 + 240), p.inclusionProofs[0]!.root);
  assert.equal(frAt(b, subAt + 8 + 240 + 32), p.inclusionProofs[0]!.leaf);
  const t = serializePoStSectorProof(fakeProof(WINDOW_64G, 2), WINDOW_64G);
  assert.equal(u32At(t, 56), 2);
  assert.equal(u64At(t, subAt + 8 + 240), 1n); // top_proof: one level
  assert.equal(u64At(t, subAt + 8 + 240 + 8), 1n); // of one sibling (arity 2)
});

test('malformed proofs: each class is a VanillaProofError naming the field and offset', () => {
  const w = serializePoStSectorProof(real2KiB(WINDOW_2K, [26, 20, 59, 15, 60, 46, 40, 17, 54, 28]), WINDOW_2K);
  const PROOF = 556; // bytes of one 2 KiB inclusion proof
  const at = (i: number): number => 56 + i * PROOF;
  const edit = (f: (b: Uint8Array, dv: DataView) => void): Uint8Array => {
    const b = w.slice();
    f(b, new DataView(b.buffer));
    return b;
  };
  // truncated, at every length
  for (let n = 0; n < w.length; n += 37) expectError(w.subarray(0, n), WINDOW_2K, /is truncated/);
  expectError(w.subarray(0, w.length - 1), WINDOW_2K, /comm_r_last is truncated/);
  expectError(new Uint8Array(0), WINDOW_2K, /sector_id is truncated/);
  // trailing bytes
  const longer = new Uint8Array(w.length + 3);
  longer.set(w);
  expectError(longer, WINDOW_2K, /end has 3 trailing bytes .*5680 bytes/);
  // wrong tag
  expectError(edit((_, dv) => dv.setUint32(at(3), 1, true)), WINDOW_2K, /inclusion_proofs\[3\]\.tag = 1 \(Sub\) is wrong: .* needs 0 \(Single\) \(byte offset 1724\)/);
  expectError(edit((_, dv) => dv.setUint32(at(0), 7, true)), WINDOW_2K, /inclusion_proofs\[0\]\.tag = 7 is wrong/);
  expectError(w, WINDOW_32G, /inclusion_proofs\[0\]\.tag = 0 \(Single\) is wrong: .* needs 1 \(Sub\)/);
  // wrong lengths
  expectError(edit((_, dv) => dv.setBigUint64(40, 2n, true)), WINDOW_2K, /sectors length = 2, expected 1 \(byte offset 40\)/);
  expectError(edit((_, dv) => dv.setBigUint64(48, 66n, true)), WINDOW_2K, /inclusion_proofs length = 66, expected 10/);
  expectError(w, WINNING_2K, /inclusion_proofs length = 10, expected 66/);
  expectError(edit((_, dv) => dv.setBigUint64(at(2) + 68, 3n, true)), WINDOW_2K, /inclusion_proofs\[2\]\.base length = 3, expected 2/);
  expectError(edit((_, dv) => dv.setBigUint64(at(2) + 76, 2n ** 63n, true)), WINDOW_2K, /inclusion_proofs\[2\]\.base\[0\]\.hashes length = 9223372036854775808, expected 7/);
  // index out of range
  const e = expectError(
    edit((_, dv) => dv.setBigUint64(at(3) + 76 + 240 + 8 + 224, 9n, true)),
    WINDOW_2K,
    /^vanilla proof: inclusion_proofs\[3\]\.base\[1\]\.index = 9 is out of range for arity 8 \(byte offset 2272\)$/,
  );
  assert.equal(e.field, 'inclusion_proofs[3].base[1].index');
  assert.equal(e.offset, 2272);
  // non-canonical field elements
  const rBytes = Buffer.from(FR_MODULUS.toString(16).padStart(64, '0'), 'hex').reverse();
  expectError(edit((b) => b.set(rBytes, w.length - 64)), WINDOW_2K, /comm_c = 0x73ed.* is not a canonical field element \(≥ r\) \(byte offset 5616\)/);
  expectError(edit((b) => b.fill(0xff, 8, 40)), WINDOW_2K, /comm_r = 0xff.* not a canonical/);
  expectError(edit((b) => b.fill(0xff, at(9) + 36, at(9) + 68)), WINDOW_2K, /inclusion_proofs\[9\]\.leaf = .* not a canonical/);
  expectError(edit((b) => b.fill(0xff, at(1) + 84, at(1) + 116)), WINDOW_2K, /inclusion_proofs\[1\]\.base\[0\]\.hashes\[0\] = .* not a canonical/);
  // a request's elements: the error names the element
  const bad = edit((_, dv) => dv.setUint32(at(3), 1, true));
  assert.equal(parsePoStSectorProofs([w, w], WINDOW_2K).length, 2);
  assert.throws(() => parsePoStSectorProofs([w, bad], WINDOW_2K), (err: unknown) =>
    err instanceof VanillaProofError && err.field === 'vanilla_proofs[1].inclusion_proofs[3].tag' &&
    /^vanilla_proofs\[1\]: vanilla proof: inclusion_proofs\[3\]\.tag = 1/.test(err.message));
  // the writer refuses what the reader would
  const good = real2KiB(WINDOW_2K, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.throws(() => serializePoStSectorProof({ ...good, commC: FR_MODULUS }, WINDOW_2K), /comm_c is not a canonical/);
  assert.throws(() => serializePoStSectorProof(good, WINNING_2K), /inclusion_proofs has 10 proofs, expected 66/);
  assert.throws(() => serializePoStSectorProof(good, WINDOW_32G), /is Single, this sector size's tree needs Sub/);
});

test('fuzz: random bytes and random edits of a valid proof only ever give VanillaProofError', () => {
  const infos = [WINDOW_2K, WINDOW_32G, WINDOW_64G];
  const valid = infos.map((info) => serializePoStSectorProof(fakeProof(info, 3), info));
  let errors = 0;
  let parsed = 0;
  const tryParse = (b: Uint8Array, info: PoStProofInfo): void => {
    try {
      parsePoStSectorProof(b, info);
      parsed++;
    } catch (e) {
      if (!(e instanceof VanillaProofError)) throw e;
      errors++;
    }
  };
  for (let it = 0; it < 1500; it++) {
    const k = it % infos.length;
    const info = infos[k]!;
    const b = valid[k]!.slice();
    const kind = it % 5;
    if (kind === 0) {
      tryParse(randomBytes(it % 700), info);
      continue;
    }
    const edits = 1 + (it % 4);
    for (let j = 0; j < edits; j++) b[randomBytes(4).readUInt32LE(0) % b.length] = randomBytes(1)[0]!;
    if (kind === 1) tryParse(b.subarray(0, randomBytes(4).readUInt32LE(0) % b.length), info);
    else if (kind === 2) tryParse(Buffer.concat([b, randomBytes(1 + (it % 9))]), info);
    else tryParse(b, infos[(k + kind) % infos.length]!);
    tryParse(b, info);
  }
  assert.ok(errors > 1000, `errors ${errors}`);
  assert.ok(parsed > 0, 'some edits keep the proof well-formed (a changed sibling is still canonical)');
});

test('vanilla files: cuzk-bench JSON arrays of base64, one base64 string, or one raw element', () => {
  const a = serializePoStSectorProof(fakeProof(WINDOW_2K, 1), WINDOW_2K);
  const b = serializePoStSectorProof(fakeProof(WINDOW_2K, 2), WINDOW_2K);
  const dir = mkdtempSync(join(tmpdir(), 'kiln-vanilla-'));
  try {
    writeFileSync(join(dir, 'two.json'), vanillaFileText([a, b]));
    assert.deepEqual(readVanillaFile(join(dir, 'two.json')), [a, b]);
    writeFileSync(join(dir, 'one.json'), JSON.stringify(Buffer.from(a).toString('base64')));
    assert.deepEqual(readVanillaFile(join(dir, 'one.json')), [a]);
    writeFileSync(join(dir, 'raw.bin'), a);
    assert.deepEqual(readVanillaFile(join(dir, 'raw.bin')), [a]);
    assert.throws(() => readVanillaFile(join(dir, 'missing')), VanillaFileError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // a raw element whose first byte is '[' (sector id 91) stays raw
  const p = { ...fakeProof(WINDOW_2K, 1), sectorId: 91n };
  const raw = serializePoStSectorProof(p, WINDOW_2K);
  assert.equal(raw[0], 0x5b);
  assert.deepEqual(parseVanillaFile(raw), [raw]);
  assert.throws(() => parseVanillaFile(new TextEncoder().encode('["not base64!"]')), /element 0: expected a base64 string/);
  assert.throws(() => parseVanillaFile(new TextEncoder().encode('[]')), /holds no vanilla proofs/);
});
