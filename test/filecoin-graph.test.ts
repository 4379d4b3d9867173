import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseC1, parseCommit2In } from '../src/filecoin/c1.js';
import {
  DrgParents, ExpanderParents, actorIdFromAddress, interactiveChallenges, labelParentOrder, proverIdFromActorId, replicaId,
} from '../src/filecoin/graph.js';
import { ChaCha8Rng } from '../src/filecoin/hash/chacha8.js';
import { porepIdFor, sealProofInfo } from '../src/filecoin/registry.js';
import { fixture, python } from './support.js';

const readFixture = (name: string): Buffer => readFileSync(fixture(name));

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('DRG and expander parents of the fixture equal the indices in its vanilla proofs', () => {
  const c1 = parseC1(readFixture('2KiB.c1.json'));
  const info = c1.registeredProof;
  const drg = new DrgParents(info.porepId, true);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  let n = 0;
  for (const part of c1.partitions) {
    for (const p of part) {
      assert.deepEqual(drg.parents(p.challenge), p.drgParents.map((c) => c.index));
      assert.deepEqual(exp.parents(p.challenge), p.expParents.map((c) => c.index));
      assert.equal(drg.parents(p.challenge)[0], p.challenge - 1, 'V1_1: predecessor first');
      n++;
    }
  }
  assert.equal(n, 2);
});

test('parents on a 32 GiB graph equal graph_ref.py (V1_1 and V1 orderings)', () => {
  const nodes = 2 ** 30;
  const sample = [0, 1, 2, 3, 7, 8, 1000, 123456, 2 ** 29 + 17, nodes - 2, nodes - 1];
  let s = 12345;
  for (let i = 0; i < 12; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    sample.push(s % nodes);
  }
  const v11 = sealProofInfo('StackedDrg32GiBV1_1')!;
  const v1 = sealProofInfo('StackedDrg32GiBV1')!;
  const lines = python([
    'from graph_ref import drg_parents, exp_parents',
    `nodes = ${JSON.stringify(sample)}`,
    `p11 = bytes.fromhex(${JSON.stringify(hex(v11.porepId))}); p1 = bytes.fromhex(${JSON.stringify(hex(v1.porepId))})`,
    `print(json.dumps([[drg_parents(n, p11), exp_parents(n, ${nodes}, p11), drg_parents(n, p1, api_v1_0=True), exp_parents(n, ${nodes}, p1)] for n in nodes]))`,
  ].join('\n'));
  const expected = JSON.parse(lines[0]) as number[][][];
  const d11 = new DrgParents(v11.porepId, true);
  const e11 = new ExpanderParents(v11.porepId, nodes);
  const d1 = new DrgParents(v1.porepId, false);
  const e1 = new ExpanderParents(v1.porepId, nodes);
  sample.forEach((node, i) => {
    assert.deepEqual(d11.parents(node), expected[i][0], `drg V1_1 node ${node}`);
    assert.deepEqual(e11.parents(node), expected[i][1], `exp V1_1 node ${node}`);
    assert.deepEqual(d1.parents(node), expected[i][2], `drg V1 node ${node}`);
    assert.deepEqual(e1.parents(node), expected[i][3], `exp V1 node ${node}`);
  });
});

test('expander parents on a 64 GiB graph equal graph_ref.py', () => {
  const nodes = 2 ** 31;
  const info = sealProofInfo('StackedDrg64GiBV1_1')!;
  const sample = [1, 5, 2 ** 30 + 3, nodes - 1];
  const lines = python([
    'from graph_ref import drg_parents, exp_parents',
    `p = bytes.fromhex(${JSON.stringify(hex(info.porepId))})`,
    `print(json.dumps([[drg_parents(n, p), exp_parents(n, ${nodes}, p)] for n in ${JSON.stringify(sample)}]))`,
  ].join('\n'));
  const expected = JSON.parse(lines[0]) as number[][][];
  const d = new DrgParents(info.porepId);
  const e = new ExpanderParents(info.porepId, nodes);
  sample.forEach((node, i) => {
    assert.deepEqual(d.parents(node), expected[i][0]);
    assert.deepEqual(e.parents(node), expected[i][1]);
  });
});

test('ChaCha8 stream equals the reference ChaCha8Rng across block boundaries', () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
  const lines = python(`from graph_ref import ChaCha8Rng\nr = ChaCha8Rng(bytes.fromhex(${JSON.stringify(hex(seed))}))\nprint(json.dumps([str(r.next_u64()) for _ in range(20)]))`);
  const rng = new ChaCha8Rng(seed);
  assert.deepEqual(Array.from({ length: 20 }, () => rng.nextU64().toString()), JSON.parse(lines[0]));
});

test('challenges equal public_inputs.py for a 32 GiB partition', () => {
  const c1 = parseC1(readFixture('2KiB.c1.json'));
  const lines = python([
    'from public_inputs import challenges',
    `print(json.dumps(challenges(bytes.fromhex(${JSON.stringify(hex(c1.replicaId))}), bytes.fromhex(${JSON.stringify(hex(c1.seed))}), ${2 ** 30}, 18, 7)))`,
  ].join('\n'));
  assert.deepEqual(interactiveChallenges(c1.replicaId, c1.seed, 2 ** 30, 18, 7), JSON.parse(lines[0]));
});

test('ids: porep_id layout, prover_id LEB128, replica_id of the fixture', () => {
  const p = porepIdFor(5);
  assert.equal(hex(p), '05' + '00'.repeat(31));
  assert.equal(sealProofInfo('StackedDrg2KiBV1_1')!.id, 5);
  assert.equal(sealProofInfo('StackedDrg64GiBV1_1_Feat_SyntheticPoRep')!.id, 14);
  assert.equal(sealProofInfo('StackedDrg32GiBV1_2_Feat_NonInteractivePoRep')!.id, 18);
  assert.equal(hex(proverIdFromActorId(1001)), 'e907' + '00'.repeat(30));
  assert.equal(hex(proverIdFromActorId(0)), '00'.repeat(32));
  assert.equal(hex(proverIdFromActorId(127)), '7f' + '00'.repeat(31));
  assert.equal(hex(proverIdFromActorId(128)), '8001' + '00'.repeat(30));
  assert.equal(actorIdFromAddress('f01001'), 1001n);
  assert.throws(() => actorIdFromAddress('f1abc'), RangeError);
  const w = parseCommit2In(readFixture('2KiB.commit2in.json'));
  const c1 = w.phase1Out;
  const rid = replicaId(proverIdFromActorId(actorIdFromAddress(w.miner!)), w.sectorNum, c1.ticket, c1.commD, c1.registeredProof.porepId);
  assert.equal(hex(rid), hex(c1.replicaId));
});

test('label parent order: 6 DRG repeated on layer 1, 14 base parents then 9 later', () => {
  assert.deepEqual(labelParentOrder(1), Array.from({ length: 37 }, (_, i) => i % 6));
  const later = labelParentOrder(3);
  assert.deepEqual(later.slice(0, 14), [...Array(14).keys()]);
  assert.deepEqual(later.slice(14, 28), [...Array(14).keys()]);
  assert.deepEqual(later.slice(28), [...Array(9).keys()]);
});
