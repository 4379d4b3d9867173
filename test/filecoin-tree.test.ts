import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '@noble/hashes/sha2.js';
import { FR_MODULUS } from '../src/field/layout.js';
import { bytesToBigintLE, frFromBytesLE, frToBytesLE } from '../src/filecoin/hash/fr32.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { sha256Truncated } from '../src/filecoin/hash/sha256.js';
import { buildPoseidonTree, buildSha256Tree, shapeArities, treePath, treeProof } from '../src/filecoin/tree/build.js';
import {
  fullPath, pathLeafIndex, poseidonPathRoot, sha256PathRoot, verifyPoseidonProof, verifySha256Proof,
} from '../src/filecoin/tree/path.js';
import type { TreeShape } from '../src/filecoin/registry.js';
import { python, rng } from './support.js';


const leafBytes = (i: number): Uint8Array => sha256Truncated(Uint8Array.of(i & 0xff, i >> 8));
const leafFr = (i: number): bigint => bytesToBigintLE(leafBytes(i));

test('fr32: round trip, range checks', () => {
  const x = FR_MODULUS - 1n;
  assert.equal(frFromBytesLE(frToBytesLE(x)), x);
  assert.throws(() => frFromBytesLE(new Uint8Array(32).fill(0xff)), RangeError);
  assert.throws(() => frFromBytesLE(new Uint8Array(31)), RangeError);
  assert.throws(() => frToBytesLE(FR_MODULUS), RangeError);
  assert.equal(frToBytesLE(1n)[0], 1);
});

test('truncated SHA256 clears the top two bits only', () => {
  const d = sha256(Uint8Array.of(1, 2, 3));
  const t = sha256Truncated(Uint8Array.of(1, 2, 3));
  assert.deepEqual(t.slice(0, 31), d.slice(0, 31));
  assert.equal(t[31], d[31] & 0x3f);
});

test('binary SHA256 tree: every path leads to the root', () => {
  const leaves = Array.from({ length: 64 }, (_, i) => leafBytes(i));
  const tree = buildSha256Tree(leaves);
  assert.deepEqual(tree.root, sha256Truncated(tree.levels[5][0], tree.levels[5][1]));
  for (const i of [0, 1, 17, 63]) {
    const proof = treeProof(tree, i);
    assert.equal(proof.base.length, 6);
    assert.equal(pathLeafIndex(proof.base), i);
    assert.ok(verifySha256Proof(proof));
    assert.deepEqual(sha256PathRoot(leaves[i], proof.base), tree.root);
  }
  const bad = treeProof(tree, 5);
  assert.equal(verifySha256Proof({ ...bad, leaf: leaves[6] }), false);
});

test('oct Poseidon tree root equals poseidon_ref.py', () => {
  const leaves = Array.from({ length: 64 }, (_, i) => leafFr(i));
  const tree = buildPoseidonTree(leaves, [8, 8]);
  const [out] = python(
    `from poseidon_ref import poseidon\nl = [${leaves.map(String).join(',')}]\nm = [poseidon(l[i:i+8]) for i in range(0, 64, 8)]\nprint(poseidon(m))`,
  );
  assert.equal(tree.root, BigInt(out));
  for (const i of [0, 9, 63]) {
    const proof = treeProof(tree, i);
    assert.equal(proof.shape, 'Single');
    assert.ok(verifyPoseidonProof(proof));
    assert.equal(pathLeafIndex(fullPath(proof)), i);
  }
});

test('compound trees: Sub (arity-8 sub level) and Top (plus binary top level) proofs', () => {
  const subShape: TreeShape = { baseArity: 8, subArity: 8, topArity: 0, baseLevels: 1 };
  const topShape: TreeShape = { baseArity: 8, subArity: 8, topArity: 2, baseLevels: 1 };
  const leaves = Array.from({ length: 128 }, (_, i) => leafFr(i));

  const sub = buildPoseidonTree(leaves.slice(0, 64), shapeArities(subShape));
  // The sub root hashes the roots of 8 independent base trees, in order.
  const baseRoots = Array.from({ length: 8 }, (_, k) => buildPoseidonTree(leaves.slice(8 * k, 8 * k + 8), [8]).root);
  assert.equal(sub.root, poseidonHash(baseRoots));
  const sp = treeProof(sub, 42, subShape);
  assert.equal(sp.shape, 'Sub');
  assert.equal(sp.base.length, 1);
  assert.equal(sp.sub.length, 1);
  assert.equal(sp.sub[0].hashes.length, 7);
  assert.equal(sp.sub[0].index, 5);
  assert.ok(verifyPoseidonProof(sp));
  assert.equal(pathLeafIndex(fullPath(sp)), 42);

  const top = buildPoseidonTree(leaves, shapeArities(topShape));
  const subRoots = [0, 1].map((h) => buildPoseidonTree(leaves.slice(64 * h, 64 * h + 64), [8, 8]).root);
  assert.equal(top.root, poseidonHash(subRoots));
  const tp = treeProof(top, 100, topShape);
  assert.equal(tp.shape, 'Top');
  assert.equal(tp.top.length, 1);
  assert.equal(tp.top[0].hashes.length, 1);
  assert.equal(tp.top[0].index, 1);
  assert.ok(verifyPoseidonProof(tp));
  assert.equal(pathLeafIndex(fullPath(tp)), 100);
  assert.equal(poseidonPathRoot(leaves[100], treePath(top, 100)), top.root);
  assert.equal(verifyPoseidonProof({ ...tp, leaf: leaves[101] }), false);
});

test('bytesToBigintLE (four 64-bit words) equals the byte-by-byte reading on random and edge bytes, offsets included', () => {
  const slow = (b: Uint8Array): bigint => {
    let v = 0n;
    for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
    return v;
  };
  const r = rng(6);
  const big = new Uint8Array(32 * 300 + 7);
  for (let i = 0; i < big.length; i++) big[i] = r.int(256);
  const cases = [new Uint8Array(32), new Uint8Array(32).fill(0xff), Uint8Array.from({ length: 32 }, (_, i) => i)];
  for (let k = 0; k < 300; k++) cases.push(big.subarray(7 + 32 * k - (k % 7), 7 + 32 * k - (k % 7) + 32)); // unaligned views
  for (const b of cases) assert.equal(bytesToBigintLE(b), slow(b));
  assert.throws(() => bytesToBigintLE(new Uint8Array(31)), RangeError);
});
