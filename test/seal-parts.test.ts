/**
 * The sealer's fast paths against their slow twins: tabulated Feistel vs graph.ts ExpanderParents,
 * the parent table vs the fixture's vanilla proof indices (via the fast path; graph.ts itself is
 * checked against the fixture in filecoin-graph.test.ts), fastPoseidon vs poseidonHash, FR32 padding,
 * sparse trees vs dense trees.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FR_MODULUS } from '../src/field/layout.js';
import { parseC1 } from '../src/filecoin/c1.js';
import { DrgParents, ExpanderParents } from '../src/filecoin/graph.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { buildPoseidonTree, treePath } from '../src/filecoin/tree/build.js';
import {
  BASE_DEGREE, DensePoseidonTree, DenseSha256Tree, inThreadBatch, poseidonPool, FastExpanderParents, SparseTree, buildParentTable, fastPoseidon, fr32Pad, fr32Unpad,
  poseidonLevelReference,
} from '../src/filecoin/seal/index.js';
import { buildSha256Tree } from '../src/filecoin/tree/build.js';
import { fixture, rng } from './support.js';



test('tabulated Feistel equals ExpanderParents (2 KiB all nodes; 8 MiB and 512 MiB samples)', () => {
  for (const [name, sample] of [['StackedDrg2KiBV1_1', 0], ['StackedDrg8MiBV1_1', 300], ['StackedDrg512MiBV1', 100]] as const) {
    const info = sealProofInfo(name)!;
    const slow = new ExpanderParents(info.porepId, info.nodes);
    const fast = new FastExpanderParents(info.porepId, info.nodes);
    const rnd = rng(7).u32;
    const nodes = sample === 0 ? Array.from({ length: info.nodes }, (_, i) => i) : [0, 1, info.nodes - 1, ...Array.from({ length: sample }, () => rnd() % info.nodes)];
    for (const v of nodes) assert.deepEqual(fast.parents(v), slow.parents(v), `${name} node ${v}`);
  }
});

test('parent table rows equal the 2 KiB fixture vanilla proof indices', () => {
  const c1 = parseC1(readFileSync(fixture('2KiB.c1.json')));
  const info = c1.registeredProof;
  const table = buildParentTable(info.porepId, info.nodes, info.drgPredecessorFirst);
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  for (let v = 0; v < info.nodes; v++) assert.deepEqual(Array.from(table.subarray(v * BASE_DEGREE, v * BASE_DEGREE + 6)), drg.parents(v));
  for (const p of c1.partitions.flat()) {
    const row = Array.from(table.subarray(p.challenge * BASE_DEGREE, (p.challenge + 1) * BASE_DEGREE));
    assert.deepEqual(row, [...p.drgParents.map((c) => c.index), ...p.expParents.map((c) => c.index)]);
  }
});

test('fastPoseidon equals poseidonHash (arities 2, 4, 8, 11; edge values)', () => {
  const rnd = rng(3).u32;
  const randFr = (): bigint => {
    let v = 0n;
    for (let i = 0; i < 8; i++) v = (v << 32n) | BigInt(rnd());
    return v % FR_MODULUS;
  };
  for (const arity of [2, 4, 8, 11]) {
    const cases = [new Array<bigint>(arity).fill(0n), new Array<bigint>(arity).fill(FR_MODULUS - 1n), Array.from({ length: arity }, (_, i) => BigInt(i))];
    for (let k = 0; k < 3; k++) cases.push(Array.from({ length: arity }, randFr));
    for (const xs of cases) assert.equal(fastPoseidon(xs), poseidonHash(xs), `arity ${arity}`);
  }
});

test('FR32 padding: 127 → 128 bytes, top bits clear, round trip', () => {
  const rnd = rng(11).u32;
  const raw = Uint8Array.from({ length: 127 * 4 }, () => rnd() & 0xff);
  const padded = fr32Pad(raw);
  assert.equal(padded.length, 128 * 4);
  for (let i = 31; i < padded.length; i += 32) assert.equal(padded[i] & 0xc0, 0);
  assert.deepEqual(fr32Unpad(padded), raw);
  // all-ones input: every node is 2^254 − 1
  const ones = fr32Pad(new Uint8Array(127).fill(0xff));
  for (let n = 0; n < 4; n++) {
    assert.deepEqual(Array.from(ones.subarray(n * 32, n * 32 + 31)), new Array<number>(31).fill(0xff));
    assert.equal(ones[n * 32 + 31], 0x3f);
  }
});

test('dense SHA256 tree equals tree/build.ts; sparse Poseidon tree paths equal a dense tree', () => {
  const rnd = rng(5).u32;
  const leaves = Array.from({ length: 16 }, () => {
    const b = Uint8Array.from({ length: 32 }, () => rnd() & 0xff);
    b[31] &= 0x3f;
    return b;
  });
  const flat = new Uint8Array(16 * 32);
  leaves.forEach((l, i) => flat.set(l, i * 32));
  const dense = new DenseSha256Tree(flat);
  const ref = buildSha256Tree(leaves);
  assert.deepEqual(dense.root, ref.root);
  assert.deepEqual(dense.path(5).map((e) => [e.index, Array.from(e.hashes[0])]), treePath(ref, 5).map((e) => [e.index, Array.from(e.hashes[0])]));

  // A sparse tree whose filler returns the dense tree's own nodes reproduces the dense root and paths.
  const arities = [8, 2];
  const all = Array.from({ length: 16 }, (_, i) => BigInt(i * 1000 + 1));
  const full = buildPoseidonTree(all, arities);
  const opened = new Map([[3, all[3]], [12, all[12]]]);
  const sparse = new SparseTree(opened, arities, poseidonLevelReference, (level, index) => full.levels[level][index]);
  assert.equal(sparse.root, full.root);
  for (const i of [3, 12]) assert.deepEqual(sparse.path(i), treePath(full, i));
  assert.throws(() => sparse.leaf(4), /not opened/);
});

test('Poseidon worker pool equals in-thread hashing; dense Poseidon tree equals tree/build.ts', () => {
  const rnd = rng(13).u32;
  const input = new Uint8Array(40 * 2 * 32);
  for (let i = 0; i < input.length; i++) input[i] = rnd() & 0xff;
  for (let i = 31; i < input.length; i += 32) input[i] &= 0x3f;
  const pool = poseidonPool(2, 1);
  try {
    assert.equal(pool.threads, 2);
    let last = 0;
    const viaPool = pool.hashGroups(input, 2, (d) => { last = d; });
    assert.equal(last, 40);
    assert.deepEqual(viaPool, inThreadBatch().hashGroups(input, 2));
    // a 64-leaf oct tree through the pool, against the reference builder
    const leaves = Array.from({ length: 64 }, (_, i) => BigInt(i) * 7919n + 3n);
    const flat = new Uint8Array(64 * 32);
    leaves.forEach((x, i) => {
      let v = x;
      for (let b = 0; b < 32; b++, v >>= 8n) flat[i * 32 + b] = Number(v & 0xffn);
    });
    const dense = new DensePoseidonTree(flat, [8, 8], pool);
    const ref = buildPoseidonTree(leaves, [8, 8]);
    assert.equal(dense.root, ref.root);
    assert.deepEqual(dense.path(37), treePath(ref, 37));
  } finally {
    pool.close();
  }
});
