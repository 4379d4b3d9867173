/**
 * An external pin for the gadgets composed the way rust-fil-proofs composes them: the PoR circuit
 * over a binary SHA-256 tree of 64 leaves (storage-proofs-core/tests/por_circuit.rs,
 * `test_por_circuit_sha256_base_2`: 3 inputs, 272,295 constraints). The circuit is rebuilt here
 * from por.rs / insertion.rs (`pick`, `insert_2`) / filecoin-hashers sha256.rs
 * (`hash_multi_leaf_circuit`, `hash_circuit`) on top of kiln's gadgets. It exercises
 * AllocatedNum.toBitsLe, the constant short-cuts of the SHA-256 gadget (the 255-bit leaves are
 * padded with constant bits: 8 constraints fewer per hash than 512 allocated bits), packBits,
 * packIntoInputs and inputize.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { type ConstraintSystem, LinearCombination, ONE } from '../src/r1cs/cs.js';
import {
  AllocatedBit,
  AllocatedNum,
  Boolean,
  packBits,
  packIntoInputs,
  sha256,
  SynthesisError,
} from '../src/gadgets/index.js';
import { rng } from './support.js';

const need = <T>(v: T | undefined): T => {
  if (v === undefined) throw new SynthesisError('AssignmentMissing');
  return v;
};

/** insertion.rs `pick`: c = condition ? a : b; (b − a) · condition = b − c. */
function pick(cs: ConstraintSystem, condition: Boolean, a: AllocatedNum, b: AllocatedNum): AllocatedNum {
  const c = cs.namespace('pick result', () => AllocatedNum.alloc(cs, () => (need(condition.getValue()) ? need(a.value) : need(b.value))));
  cs.enforce('pick', LinearCombination.of(b.variable).sub(a.variable), condition.lc(), LinearCombination.of(b.variable).sub(c.variable));
  return c;
}

/** Per byte: reverse the 8 bits (to_bits_le output → SHA-256 byte order, and back). */
const reverseBytes = (bits: Boolean[]) => {
  const out: Boolean[] = [];
  for (let i = 0; i < bits.length; i += 8) for (let k = 7; k >= 0; k--) out.push(bits[i + k]);
  return out;
};

/** filecoin-hashers Sha256Function::hash_multi_leaf_circuit then hash_circuit. */
function hashMultiLeaf(cs: ConstraintSystem, leaves: AllocatedNum[]): AllocatedNum {
  const bits: Boolean[] = [];
  leaves.forEach((leaf, i) => {
    const padded = cs.namespace(`${i}_num_into_bits`, () => leaf.toBitsLe(cs));
    while (padded.length % 8 !== 0) padded.push(Boolean.FALSE);
    bits.push(...reverseBytes(padded));
  });
  const be = cs.namespace('hash', () => sha256(cs, bits));
  return cs.namespace('pack_le', () => packBits(cs, reverseBytes(be).slice(0, 254)));
}

const leToBig = (b: Uint8Array) => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);
const bigToLe = (v: bigint) => Uint8Array.from({ length: 32 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
function hashNodes(l: bigint, r: bigint): bigint {
  const pre = new Uint8Array(64);
  pre.set(bigToLe(l), 0);
  pre.set(bigToLe(r), 32);
  const d = nobleSha256(pre);
  d[31] &= 0x3f;
  return leToBig(d);
}

/** por.rs PoRCircuit::synthesize for a binary base tree, public root. */
function porCircuit(cs: ConstraintSystem, leaf: bigint | undefined, path: { sibling: bigint | undefined; isRight: boolean | undefined }[], root: bigint | undefined) {
  const valueNum = cs.namespace('value', () => AllocatedNum.alloc(cs, () => need(leaf)));
  let cur = valueNum;
  const pathBits: Boolean[] = [];
  cs.namespace('base', () => {
    path.forEach((el, i) => {
      cs.namespace(`merkle tree hash ${i}`, () => {
        const bit = Boolean.is(cs.namespace('index bit 0', () => AllocatedBit.alloc(cs, el.isRight)));
        pathBits.push(bit);
        const sibling = cs.namespace('path element 0', () => AllocatedNum.alloc(cs, () => need(el.sibling)));
        const inserted = [
          cs.namespace('binary insert 0', () => pick(cs, bit, sibling, cur)),
          cs.namespace('binary insert 1', () => pick(cs, bit, cur, sibling)),
        ];
        cur = cs.namespace('computation of commitment hash', () => hashMultiLeaf(cs, inserted));
      });
    });
  });
  // (empty sub / top paths add nothing)
  cs.namespace('path', () => packIntoInputs(cs, pathBits));
  const rt = cs.namespace('root_value', () => AllocatedNum.alloc(cs, () => need(root)));
  cs.enforce('enforce root is correct', LinearCombination.of(cur.variable), LinearCombination.of(ONE), LinearCombination.of(rt.variable));
  cs.namespace('root', () => rt.inputize(cs));
  return cur;
}

test('PoR over a 64-leaf binary SHA-256 tree = 272,295 constraints, 3 inputs (rust-fil-proofs)', () => {
  const counter = new CountingSystem();
  porCircuit(counter, undefined, Array.from({ length: 6 }, () => ({ sibling: undefined, isRight: undefined })), undefined);
  assert.equal(counter.numConstraints, 272295);
  assert.equal(counter.numInputs, 3);

  // With values: a real tree, a real path; the circuit is satisfied and its inputs are
  // [1, packed path bits, root].
  const rand = rng(99);
  const leaves = Array.from({ length: 64 }, rand);
  const levels: bigint[][] = [leaves];
  while (levels.at(-1)!.length > 1) {
    const prev = levels.at(-1)!;
    levels.push(Array.from({ length: prev.length / 2 }, (_, i) => hashNodes(prev[2 * i], prev[2 * i + 1])));
  }
  const root = levels.at(-1)![0];
  const challenge = 45;
  const path = levels.slice(0, 6).map((lvl, h) => {
    const idx = challenge >> h;
    return { sibling: lvl[idx ^ 1], isRight: (idx & 1) === 1 };
  });
  const cs = new TestConstraintSystem();
  const computed = porCircuit(cs, leaves[challenge], path, root);
  assert.equal(computed.value, root);
  assert.ok(cs.isSatisfied());
  assert.equal(cs.numConstraints, 272295);
  assert.deepEqual(cs.inputs(), [1n, BigInt(challenge), root]);

  // A corrupted sibling is caught by the first selection that uses it.
  const sib = 'base/merkle tree hash 3/path element 0/num';
  cs.set(sib, cs.get(sib) + 1n);
  assert.equal(cs.whichIsUnsatisfied(), 'base/merkle tree hash 3/binary insert 0/pick');
});
