/**
 * The EmptySectorUpdate circuit against rust-fil-proofs v19 (storage-proofs-update/tests/circuit.rs and the gadget
 * tests of gadgets.rs, FACTS §7): constraint counts of the pinned sizes with the TreeR shapes the test uses
 * (1 KiB 8-4-0 1,248,389; 2 KiB 8-0-0 1,705,039; 4 KiB 8-2-0 2,165,109; 8 KiB 8-4-0 2,620,359; 16 KiB 8-8-0
 * 6,300,021; 32 KiB 8-8-2 6,760,091), gen_challenge_bits 568 constraints per digest (one digest: 1 KiB … 16 MiB;
 * 8 digests 4,544 at 512 MiB; 10 digests 5,680 at 32 and 64 GiB), apex_por (317,654; 5,808,515; 771,448; 453,797); the circuit satisfied with public inputs
 * [k | h_select << partition_bit_len, comm_r_old, comm_d_new, comm_r_new] and the in-circuit challenge bits equal
 * to the out-of-circuit challenges; tampering named by the test system.
 */
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import assert from 'node:assert/strict';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import { AllocatedNum } from '../src/gadgets/num.js';
import { SNAP_SECTOR_NODES, snapParams } from '../src/filecoin/snap/registry.js';
import { EmptySectorUpdateCircuit, apexPor, genChallengeBits, snapBlankCircuit, snapPublicInputs } from '../src/filecoin/snap/circuit.js';
import { AllocatedBit } from '../src/gadgets/boolean.js';
import { snapChallenges, snapRandomBitsPerChallenge } from '../src/filecoin/snap/challenges.js';
import { SnapInputError, checkSnapPartition, snapCircuitFor, snapCircuitWitness, type SnapPartitionProof } from '../src/filecoin/snap/vanilla.js';
import { snapFixture } from './snap-support.js';

const N = SNAP_SECTOR_NODES;

if (isMainThread) for (const [label, nodes, constraints] of [
  ['1 KiB (8-4-0)', N['1KiB'], 1_248_389],
  ['2 KiB (8-0-0)', N['2KiB'], 1_705_039],
  ['4 KiB (8-2-0)', N['4KiB'], 2_165_109],
  ['8 KiB (8-4-0)', N['8KiB'], 2_620_359],
  ['16 KiB (8-8-0)', N['16KiB'], 6_300_021],
  ['32 KiB (8-8-2)', N['32KiB'], 6_760_091],
] as const) {
  test(`circuit.rs test_empty_sector_update_circuit ${label}: ${constraints.toLocaleString('en')} constraints, 5 inputs (blank circuit)`, () => {
    const cs = new CountingSystem();
    snapBlankCircuit(snapParams(nodes)).synthesize(cs);
    assert.equal(cs.numConstraints, constraints);
    assert.equal(cs.numInputs, 5);
  });
}

if (isMainThread) test('circuit.rs test_empty_sector_update_constraints_32gib (BenchCS, 8-8-0): 81,049,499 constraints (counted, about a minute)', { timeout: 600_000 }, () => {
  const cs = new CountingSystem();
  snapBlankCircuit(snapParams(N['32GiB'])).synthesize(cs);
  assert.equal(cs.numConstraints, 81_049_499);
  assert.equal(cs.numInputs, 5);
});

if (isMainThread) test('gadgets.rs test_gen_challenge_bits_gadget: constraints per size; bits equal the out-of-circuit challenges', () => {
  const want: [number, number][] = [
    [N['1KiB'], 568], [N['2KiB'], 568], [N['4KiB'], 568], [N['8KiB'], 568], [N['16KiB'], 568], [N['32KiB'], 568],
    [N['8MiB'], 568], [N['16MiB'], 568], [N['512MiB'], 4544], [N['32GiB'], 5680], [N['64GiB'], 5680],
  ];
  const commRNew = 0x1234_5678_9abc_def0_1122_3344_5566_7788_99aa_bbcc_ddee_ff00_0102_0304_0506_0708n;
  for (const [nodes, expected] of want) {
    const p = snapParams(nodes);
    for (const k of [0, p.partitionCount - 1]) {
      const cs = new TestConstraintSystem();
      const c = cs.namespace('comm_r_new', () => AllocatedNum.alloc(cs, () => commRNew));
      const part = cs.namespace('k', () => AllocatedNum.alloc(cs, () => BigInt(k)));
      const before = cs.numConstraints;
      const bits = cs.namespace('gen_challenge_bits', () => genChallengeBits(cs, c, part, p.challengeCount, snapRandomBitsPerChallenge(p)));
      assert.equal(cs.numConstraints - before, expected, `${nodes} nodes`);
      assert.equal(cs.whichIsUnsatisfied(), undefined);
      const got = bits.map((b) => b.reduce((s, bit, i) => s + (bit.getValue() ? 2 ** i : 0), 0) + k * 2 ** snapRandomBitsPerChallenge(p));
      assert.deepEqual(got, snapChallenges(p, commRNew, k), `${nodes} nodes, k = ${k}`);
    }
  }
});

if (isMainThread) test('gadgets.rs test_apex_por_gadget: 8 leaves 317,654; 128 leaves + 1 partition bit 5,808,515; 16 × 4 partitions 771,448; 8 × 8 partitions 453,797', () => {
  for (const [leaves, partitionBits, expected] of [[8, 0, 317_654], [128, 1, 5_808_515], [16, 2, 771_448], [8, 3, 453_797]] as const) {
    const cs = new CountingSystem();
    const commD = AllocatedNum.alloc(cs, () => 0n);
    const bits = Array.from({ length: partitionBits }, () => AllocatedBit.alloc(cs, undefined));
    const apex = Array.from({ length: leaves }, () => AllocatedNum.alloc(cs, () => 0n));
    const path = Array.from({ length: partitionBits }, () => AllocatedNum.alloc(cs, () => 0n));
    const before = cs.numConstraints;
    apexPor(cs, apex, bits, path, commD);
    assert.equal(cs.numConstraints - before, expected, `${leaves} leaves, ${partitionBits} partition bits`);
  }
});

/** The first unsatisfied constraint's path (WitnessGenerator with checks: values only, O(variables) memory); `gen`
 *  (a checking generator) keeps the values for the caller. */
function firstUnsatisfied(c: EmptySectorUpdateCircuit, gen = new WitnessGenerator(5, undefined, { check: true })): string | undefined {
  try {
    c.synthesize(gen);
    return undefined;
  } catch (e) {
    const m = /^unsatisfied constraint: (.*)$/.exec((e as Error).message);
    if (!m) throw e;
    return m[1];
  }
}

function satisfied(nodes: number, seed: number): void {
  const { p, update, proofs } = snapFixture(nodes, seed);
  proofs.forEach((pp, k) => {
    checkSnapPartition(p, k, update.h, update.pub, pp);
    if (p.partitionCount > 1) assert.throws(() => checkSnapPartition(p, (k + 1) % p.partitionCount, update.h, update.pub, pp), SnapInputError);
    const c = snapCircuitFor(p, k, update.h, update.pub, pp);
    // one synthesis: every constraint checked, then the public inputs read from its values
    const wg = new WitnessGenerator(5, undefined, { check: true });
    assert.equal(firstUnsatisfied(c, wg), undefined, `partition ${k}`);
    const inputs = Array.from({ length: 4 }, (_, i) => wg.value(i + 1));
    assert.deepEqual(inputs, snapPublicInputs(p, k, update.h, update.pub.commROld, update.pub.commDNew, update.pub.commRNew));
  });
}

const here = fileURLToPath(import.meta.url);

/** [variable path to change, expected first unsatisfied constraint] (TestConstraintSystem get/set, as bellperson tests do). */
const TAMPERS: readonly (readonly [string, string])[] = [
  ['comm_r_new_input/input variable', 'comm_r_new_input/enforce input is correct'],
  ['root_r_new/num', 'comm_r_new_calc/first round/quintic s-box 2/(l+rk)^2/squared sum constraint'],
  ['leaf_r_old (c_index=3)/num', 'leaf_r_new (c_index=3)/label_r_new == label_r_old + label_d_new * rho'],
  ['leaf_d_new (c_index=4)/num', 'leaf_r_new (c_index=4)/label_d_new * rho/multiplication constraint'],
  ['apex_leaf_2/num', 'apex_gadget/apex_tree generation hash (tree_row=0, siblings=1)/a_bits/unpacking constraint'],
];

interface WorkerResult {
  constraints: number;
  inputs: string[];
  expectedInputs: string[];
  unsatisfied: string | null;
  tampered: (string | null)[];
  afterRestore: string | null;
  ms: number;
}

function runInWorker(): WorkerResult {
  const { p, update, proofs } = snapFixture(N['2KiB'], 7);
  const t0 = performance.now();
  const cs = new TestConstraintSystem();
  snapCircuitFor(p, 0, update.h, update.pub, proofs[0]!).synthesize(cs);
  const ms = Math.round(performance.now() - t0);
  const tampered = TAMPERS.map(([path]) => {
    const old = cs.get(path);
    cs.set(path, old + 1n);
    const which = cs.whichIsUnsatisfied() ?? null;
    cs.set(path, old);
    return which;
  });
  return {
    constraints: cs.numConstraints,
    inputs: cs.inputs().slice(1).map(String),
    expectedInputs: snapPublicInputs(p, 0, update.h, update.pub.commROld, update.pub.commDNew, update.pub.commRNew).map(String),
    unsatisfied: cs.whichIsUnsatisfied() ?? null,
    tampered,
    afterRestore: cs.whichIsUnsatisfied() ?? null,
    ms,
  };
}

if (isMainThread) {
  test('2 KiB in TestConstraintSystem: satisfied, inputs [1, comm_r_old, comm_d_new, comm_r_new]; tampering named', { timeout: 600_000 }, async () => {
    const r = await new Promise<WorkerResult>((resolve, reject) => {
      const worker = new Worker(here, { resourceLimits: { maxOldGenerationSizeMb: 10_240, maxYoungGenerationSizeMb: 256 } });
      worker.once('message', (m: WorkerResult) => resolve(m));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`worker exited with code ${code} before reporting`)));
    });
    console.log(`TestConstraintSystem synthesis of a 2 KiB SnapDeals partition: ${r.ms} ms`);
    assert.equal(r.constraints, 1_705_039);
    assert.equal(r.unsatisfied, null);
    assert.deepEqual(r.inputs, r.expectedInputs);
    assert.equal(r.inputs[0], '1'); // k = 0, h_select = 1 (hs = [1;6], h = hs[2] = 1: index 0)
    TAMPERS.forEach(([changed, want], i) => assert.equal(r.tampered[i], want, changed));
    assert.equal(r.afterRestore, null);
  });

  test('1 KiB (sub-tree 8-4): an updated sector satisfies the circuit; inputs = [k|h_select, comm_r_old, comm_d_new, comm_r_new]', () => satisfied(N['1KiB'], 1));

  test('16 KiB (two partitions, 8-8): both partitions satisfied, k in the packed input; proofs of one partition refused for the other', { timeout: 600_000 }, () =>
    satisfied(N['16KiB'], 16));

  test('2 KiB: re-synthesized tampering (comm_r_new, leaves, paths, apex leaves) names the constraint; the checks refuse the same inputs', () => {
    const { p, update, proofs } = snapFixture(N['2KiB'], 7);
    const pp = proofs[0]!;
    const h = update.h;
    const pub = update.pub;
    checkSnapPartition(p, 0, h, pub, pp);
    const w = snapCircuitWitness(p, 0, h, pub, pp);
    const un = (x: typeof w): string | undefined => firstUnsatisfied(new EmptySectorUpdateCircuit(p, x));
    assert.equal(un(w), undefined);
    // comm_r_new (private and public alike): the challenges move with it, and H(comm_c, root_r_new) differs
    assert.equal(un({ ...w, commRNew: w.commRNew! + 1n }), 'enforce comm_r_new_calc == comm_r_new');
    assert.throws(() => checkSnapPartition(p, 0, h, { ...pub, commRNew: pub.commRNew + 1n }, pp), /partition 0: comm_r_new is not Poseidon\(comm_c, root_r_new\)/);
    const ch = w.challenges;
    const at = (i: number, c: (typeof ch)[number]): typeof w => ({ ...w, challenges: ch.map((x, j) => (j === i ? c : x)) });
    // an old replica leaf (leaf_r_new follows it): the r_old path
    assert.equal(un(at(3, { ...ch[3]!, leafROld: ch[3]!.leafROld! + 1n })), 'por tree_r_old (c_index=3)/calculated root == provided root');
    // a new data leaf: the r_new path (via label_r_new) fails first
    assert.equal(un(at(4, { ...ch[4]!, leafDNew: ch[4]!.leafDNew! + 1n })), 'por tree_r_new (c_index=4)/calculated root == provided root');
    // siblings of the r_new path and of the d_new path below the apex leaves
    const pathRNew = ch[2]!.pathRNew.map((s, l) => (l === 1 ? [s[0]! + 1n, ...s.slice(1)] : s));
    assert.equal(un(at(2, { ...ch[2]!, pathRNew })), 'por tree_r_new (c_index=2)/calculated root == provided root');
    const pathDToApex = ch[5]!.pathDToApex.map((s, l) => (l === 0 ? s! + 1n : s));
    assert.equal(un(at(5, { ...ch[5]!, pathDToApex })), 'por to_apex_leaf (c_index=5)/calculated root == provided root');
    // an apex leaf
    assert.equal(un({ ...w, apexLeaves: w.apexLeaves.map((x, i) => (i === 2 ? x! + 1n : x)) }), 'apex_gadget/partition-tree por/calculated root == provided root');

    const tamper = (i: number, f: (c: SnapPartitionProof['challengeProofs'][number]) => SnapPartitionProof['challengeProofs'][number]): SnapPartitionProof => ({
      ...pp,
      challengeProofs: pp.challengeProofs.map((c, j) => (j === i ? f(c) : c)),
    });
    assert.throws(() => checkSnapPartition(p, 0, h, pub, tamper(3, (c) => ({ ...c, proofROld: { ...c.proofROld, leaf: c.proofROld.leaf + 1n } }))), /partition 0 challenge 3 \(node \d+\): proof_r_old does not lead from its leaf to its root/);
    assert.throws(() => checkSnapPartition(p, 0, h, pub, tamper(1, (c) => ({ ...c, proofDNew: { ...c.proofDNew, leaf: c.proofDNew.leaf + 1n } }))), /challenge 1 .*proof_d_new does not lead from its leaf to comm_d_new/);
    assert.throws(() => checkSnapPartition(p, 0, h, pub, { ...pp, apexLeaves: pp.apexLeaves.map((x, i) => (i === 0 ? x + 1n : x)) }), /apex/);
    assert.throws(() => checkSnapPartition(p, 0, h, pub, { ...pp, challengeProofs: [...pp.challengeProofs.slice(1), pp.challengeProofs[0]!] }), /opens node \d+, but comm_r_new and the partition challenge node/);
    assert.throws(() => checkSnapPartition(p, 0, 7, pub, pp), /h = 7 is not allowed/);
  });
} else {
  parentPort!.postMessage(runInWorker());
}
