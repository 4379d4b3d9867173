/**
 * Insertion and Merkle inclusion (storage-proofs-core insertion.rs, por.rs) against rust-fil-proofs'
 * pinned figures: `test_insert` (size 2 → 2, 4 → 8, 8 → 22, 16 → 240 constraints), `test_select`
 * (size − 1), and tests/por_circuit.rs (`test_por_circuit_*`, public root, 3 inputs;
 * `*_private_root`, 2 inputs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { AllocatedBit, Boolean } from '../src/gadgets/boolean.js';
import { AllocatedNum } from '../src/gadgets/num.js';
import { bytesToBigintLE } from '../src/filecoin/hash/fr32.js';
import { buildPoseidonTree, buildSha256Tree, treeProof } from '../src/filecoin/tree/build.js';
import type { MerkleProof } from '../src/filecoin/tree/path.js';
import { type AuthPath, type MerkleHasher, blankAuthPath, insert, porCircuit, select } from '../src/filecoin/circuit/por.js';
import { rng } from './support.js';

function allocBits(cs: TestConstraintSystem, index: number, count: number): Boolean[] {
  return Array.from({ length: count }, (_, i) =>
    Boolean.is(cs.namespace(`index bit ${i}`, () => AllocatedBit.alloc(cs, ((index >> i) & 1) === 1))),
  );
}

test('insert: every position of sizes 2, 4, 8, 16 with the pinned constraint counts', () => {
  const expected: Record<number, number> = { 2: 2, 4: 8, 8: 22, 16: 240 };
  for (let logSize = 1; logSize <= 4; logSize++) {
    const size = 1 << logSize;
    for (let index = 0; index < size; index++) {
      const next = rng(index);
      const cs = new TestConstraintSystem();
      const elements = Array.from({ length: size - 1 }, (_, i) => cs.namespace(`element ${i}`, () => AllocatedNum.alloc(cs, next)));
      const toInsert = cs.namespace('insert', () => AllocatedNum.alloc(cs, next));
      const bits = allocBits(cs, index, logSize);
      const before = cs.numConstraints;
      const inserted = insert(cs, toInsert, bits, elements);
      assert.equal(cs.numConstraints - before, expected[size]);
      assert.ok(cs.isSatisfied());
      const values = inserted.map((n) => n.value);
      const want = elements.map((n) => n.value);
      want.splice(index, 0, toInsert.value);
      assert.deepEqual(values, want);
    }
  }
});

test('select: size − 1 constraints, picks element n', () => {
  for (let logSize = 1; logSize < 5; logSize++) {
    const size = 1 << logSize;
    for (let index = 0; index < size; index++) {
      const next = rng(100 + index);
      const cs = new TestConstraintSystem();
      const elements = Array.from({ length: size }, (_, i) => cs.namespace(`element ${i}`, () => AllocatedNum.alloc(cs, next)));
      const bits = allocBits(cs, index, logSize);
      const before = cs.numConstraints;
      const selected = cs.namespace('select', () => select(cs, elements, bits));
      assert.equal(cs.numConstraints - before, size - 1);
      assert.ok(cs.isSatisfied());
      assert.equal(selected.value, elements[index].value);
    }
  }
});

/** Blank PoR with a public root (Root::Val leaf and root, as PoRCompound's blank circuit). */
function countPor(hasher: MerkleHasher, path: AuthPath, isPrivate: boolean): { constraints: number; inputs: number } {
  const cs = new CountingSystem();
  porCircuit(cs, hasher, { value: undefined }, path, { value: undefined }, isPrivate);
  return { constraints: cs.numConstraints, inputs: cs.numInputs };
}

test('PoR constraint counts = tests/por_circuit.rs (64 leaves per base tree)', () => {
  // [hasher, base arity, base levels, sub, top, public-root constraints]
  const cases: [MerkleHasher, number, number, number, number, number][] = [
    ['sha256', 2, 6, 0, 0, 272_295],
    ['poseidon', 2, 6, 0, 0, 1_887],
    ['poseidon', 4, 3, 0, 0, 1_164],
    ['poseidon', 8, 2, 0, 0, 1_063],
    ['poseidon', 8, 2, 2, 0, 1_377],
    ['poseidon', 8, 2, 4, 2, 1_764],
    ['poseidon', 8, 2, 8, 0, 1_593],
    ['poseidon', 8, 2, 8, 2, 1_907],
    ['poseidon', 8, 2, 2, 4, 1_764],
  ];
  for (const [hasher, arity, levels, sub, top, pinned] of cases) {
    const got = countPor(hasher, blankAuthPath(arity, levels, sub, top), false);
    assert.deepEqual(got, { constraints: pinned, inputs: 3 }, `${hasher} ${arity}-${sub}-${top}`);
  }
  // Private root (one constraint fewer: no inputize), 2 inputs.
  for (const [arity, levels, pinned] of [[2, 6, 1_886], [4, 3, 1_163], [8, 2, 1_062]]) {
    assert.deepEqual(countPor('poseidon', blankAuthPath(arity, levels), true), { constraints: pinned, inputs: 2 });
  }
});

function authPathOf<T>(proof: MerkleProof<T>, toFr: (x: T) => bigint): AuthPath {
  const lv = (el: { hashes: readonly T[]; index: number }) => ({ arity: el.hashes.length + 1, hashes: el.hashes.map(toFr), index: el.index });
  return { base: proof.base.map(lv), sub: proof.sub.map(lv), top: proof.top.map(lv) };
}

test('PoR over a Poseidon 8-8-2 tree with values: satisfied, inputs [1, leaf index, root], corruption caught', () => {
  const next = rng(7);
  const leaves = Array.from({ length: 1024 }, next);
  const tree = buildPoseidonTree(leaves, [8, 8, 8, 2]);
  const shape = { baseArity: 8 as const, subArity: 8 as const, topArity: 2 as const, baseLevels: 2 };
  for (const challenge of [0, 333, 1023]) {
    const proof = treeProof(tree, challenge, shape);
    const cs = new TestConstraintSystem();
    const root = porCircuit(cs, 'poseidon', { value: proof.leaf }, authPathOf(proof, (x) => x), { value: proof.root }, false);
    assert.equal(root.value, tree.root);
    assert.equal(cs.whichIsUnsatisfied(), undefined);
    assert.equal(cs.numConstraints, 1_907);
    assert.deepEqual(cs.inputs(), [1n, BigInt(challenge), tree.root]);
    cs.set('sub/merkle tree hash 0/path element 5/num', 12345n);
    assert.match(cs.whichIsUnsatisfied() ?? '', /^sub\/merkle tree hash 0\/p\d/);
  }
});

test('PoR over a binary SHA-256 tree with allocated leaf and private root (as StackedDrg uses it)', () => {
  const leaves = Array.from({ length: 16 }, (_, i) => {
    const b = new Uint8Array(32).map((_, k) => (i * 31 + k * 7) & 0xff);
    b[31] &= 0x3f;
    return b;
  });
  const tree = buildSha256Tree(leaves);
  const challenge = 11;
  const proof = treeProof(tree, challenge);
  const cs = new TestConstraintSystem();
  const leaf = cs.namespace('leaf', () => AllocatedNum.alloc(cs, () => bytesToBigintLE(proof.leaf)));
  const root = cs.namespace('root', () => AllocatedNum.alloc(cs, () => bytesToBigintLE(proof.root)));
  const computed = cs.namespace('por', () => porCircuit(cs, 'sha256', leaf, authPathOf(proof, bytesToBigintLE), root, true));
  assert.equal(computed.value, bytesToBigintLE(tree.root));
  assert.equal(cs.whichIsUnsatisfied(), undefined);
  assert.deepEqual(cs.inputs(), [1n, BigInt(challenge)]);
  // A wrong root is caught by the root equality.
  cs.set('root/num', bytesToBigintLE(tree.root) + 1n);
  assert.equal(cs.whichIsUnsatisfied(), 'por/enforce root is correct');
});
