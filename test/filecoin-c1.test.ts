import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { C1FormatError, parseC1, parseC1Input, parseC1Value, parseCommit2In } from '../src/filecoin/c1.js';
import { actorIdFromAddress, proverIdFromActorId } from '../src/filecoin/graph.js';
import { partitionPublicInputs } from '../src/filecoin/public-inputs.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { crossPartitionFailures, verifyC1, verifyC1Header, verifyC1Partition } from '../src/filecoin/c1-checks.js';
import { checkPieces } from '../src/kinds/porep/planner.js';
import { fixture, reference, rng } from './support.js';

const c1Text = readFileSync(fixture('2KiB.c1.json'), 'utf8');
const wrapperText = readFileSync(fixture('2KiB.commit2in.json'), 'utf8');

type AnyJson = any;
const fresh = (): AnyJson => JSON.parse(c1Text);
const VP = 'vanilla_proofs.StackedDrg2KiBV1';

function refused(fn: () => unknown, fieldPath: string, detail?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof C1FormatError, `expected C1FormatError, got ${String(e)}`);
    assert.equal(e.path, fieldPath);
    assert.ok(e.message.includes(fieldPath === '' ? '(root)' : fieldPath), e.message);
    if (detail) assert.match(e.message, detail);
    return true;
  });
}

function mutated(edit: (c: AnyJson) => void): string {
  const c = fresh();
  edit(c);
  return JSON.stringify(c);
}

test('the 2 KiB fixture parses into the expected shape', () => {
  const c1 = parseC1(c1Text);
  assert.equal(c1.registeredProof.name, 'StackedDrg2KiBV1_1');
  assert.equal(c1.partitions.length, 1);
  assert.equal(c1.partitions[0].length, 2);
  const p = c1.partitions[0][0];
  assert.equal(p.challenge, 56);
  assert.equal(p.drgParents.length, 6);
  assert.equal(p.expParents.length, 8);
  assert.equal(p.labelingProofs.length, 2);
  assert.equal(p.labelingProofs[0].parents.length, 37);
  assert.equal(p.commDProof.base.length, 6);
  assert.equal(p.commRLastProof.base.length, 2);
  assert.equal(p.cX.rows.length, 2);
  assert.equal(typeof p.cX.rows[0], 'bigint');
});

test('the Commit2In wrapper parses to the same C1 as the raw file', () => {
  const w = parseCommit2In(wrapperText);
  assert.equal(w.sectorNum, 0);
  assert.equal(w.sectorSize, 2048);
  assert.equal(w.miner, 'f01001');
  assert.deepEqual(w.phase1Out, parseC1(c1Text));
  assert.deepEqual(parseCommit2In(Buffer.from(wrapperText)).phase1Out, w.phase1Out);
});

test('public inputs of partition 0 equal 2KiB.public_inputs.json', () => {
  const expected = JSON.parse(readFileSync(fixture('2KiB.public_inputs.json'), 'utf8')) as string[];
  const got = partitionPublicInputs(parseC1(c1Text), 0);
  assert.equal(got.length, 3 + 18 * 2);
  assert.deepEqual(got.map(String), expected);
  assert.throws(() => partitionPublicInputs(parseC1(c1Text), 1), RangeError);
});

test('every path, column, label and the encoding of the fixture verify (as check_c1.py)', () => {
  const oracle = execFileSync('python3', [reference('check_c1.py'), fixture('2KiB.c1.json')], {
    cwd: reference(), encoding: 'utf8',
  });
  assert.match(oracle, /ALL OK/);
  const w = parseCommit2In(wrapperText);
  const failures = verifyC1(w.phase1Out, {
    proverId: proverIdFromActorId(actorIdFromAddress(w.miner!)), sectorId: w.sectorNum,
  });
  assert.deepEqual(failures, []);
});

test('verification catches tampered proofs that are still well formed', () => {
  const cases: [string, (c: AnyJson) => void, RegExp][] = [
    ['label parent', (c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].labeling_proofs[1].parents[4][0] ^= 1; }, /labeling_proofs\[1\]/],
    ['comm_d sibling', (c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][1].comm_d_proofs.data.Single.path.path[2].hashes[0][5] ^= 1; }, /comm_d path/],
    ['exp parent index', (c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].replica_column_proofs.exp_parents[2].column.index ^= 1; }, /exp_parents\[2\]/],
    ['column row', (c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].replica_column_proofs.drg_parents[1].column.rows[0][3] ^= 1; }, /drg_parents\[1\]/],
    ['comm_r', (c) => { c.comm_r[0] ^= 1; }, /comm_r/],
    ['seed', (c) => { c.seed[0] ^= 1; }, /challenge \(c_x\.column\.index\) should be/],
    ['data leaf', (c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][1].comm_d_proofs.data.Single.leaf[0] ^= 1; }, /encoding|comm_d path/],
  ];
  for (const [name, edit, expect] of cases) {
    const failures = verifyC1(parseC1(mutated(edit)));
    assert.ok(failures.length > 0, `${name}: no failure reported`);
    assert.ok(failures.some((f) => expect.test(f)), `${name}: ${failures.join('; ')}`);
  }
});

test('per-partition checks (the daemon runs them in parallel) add up to verifyC1; roots compared across partitions', () => {
  // two partitions from the fixture's one: the second's challenges are not the ones derived for
  // partition 1, its paths and roots are the first's
  const one = parseC1(c1Text);
  const two = { ...one, partitions: [one.partitions[0], one.partitions[0]] };
  const parts = two.partitions.map((_, k) => verifyC1Partition(two, k));
  assert.deepEqual(parts[0].failures, []);
  assert.ok(parts[1].failures.length > 0 && parts[1].failures.every((f) => /^partition 1 challenge \d+ .*should be/.test(f)), parts[1].failures.join('; '));
  assert.equal(parts[0].commC, parts[1].commC);
  assert.deepEqual(crossPartitionFailures(parts), []);
  assert.deepEqual(verifyC1(two), [...verifyC1Header(two), ...parts[0].failures, ...parts[1].failures]);
  // only partition k is read: the others may be empty (what a worker receives)
  const only1 = { ...two, partitions: [[], two.partitions[1]] };
  assert.deepEqual(verifyC1Partition(only1, 1), parts[1]);
  // roots that differ are named once per partition, against the first partition that has any
  assert.deepEqual(
    crossPartitionFailures([
      { partition: 0, commC: undefined, commRLast: undefined },
      { partition: 1, commC: 5n, commRLast: 6n },
      { partition: 2, commC: 5n, commRLast: 6n },
      { partition: 3, commC: 7n, commRLast: 6n },
      { partition: 4, commC: 5n, commRLast: 8n },
    ]),
    ["partition 3: comm_c differs from partition 1's", "partition 4: comm_r_last differs from partition 1's"],
  );
});

test('a partition checked in pieces (the daemon checks a 32 GiB partition in parallel): the pieces add up to the whole; their roots are compared', () => {
  const c1 = parseC1(c1Text);
  const n = c1.partitions[0].length;
  assert.ok(n >= 2);
  const whole = verifyC1Partition(c1, 0);
  const pieces = Array.from({ length: n }, (_, i) => verifyC1Partition(c1, 0, { from: i, to: i + 1 }));
  assert.deepEqual(pieces.flatMap((p) => p.failures), whole.failures);
  assert.ok(pieces.every((p) => p.commC === whole.commC && p.commRLast === whole.commRLast));
  assert.equal(pieces[0].from, undefined);
  assert.equal(pieces[1].from, 1);
  assert.deepEqual(crossPartitionFailures(pieces), []);
  // comm_r is checked by the piece from challenge 0 only, once
  const badR = { ...c1, commR: new Uint8Array(32).fill(1) };
  assert.equal(verifyC1Partition(badR, 0, { from: 0, to: 1 }).failures.filter((f) => /comm_r ≠/.test(f)).length, 1);
  assert.deepEqual(verifyC1Partition(badR, 0, { from: 1, to: n }).failures, []);
  // a piece whose roots differ is named by its first challenge
  assert.deepEqual(
    crossPartitionFailures([{ partition: 0, commC: 5n, commRLast: 6n }, { partition: 0, from: 16, commC: 7n, commRLast: 6n }, { partition: 1, commC: 5n, commRLast: 9n }]),
    ["partition 0 from challenge 16: comm_c differs from partition 0's", "partition 1: comm_r_last differs from partition 0's"],
  );
  // the planner's pieces: at most 16 challenges, near-equal, covering every challenge in order
  assert.deepEqual(checkPieces([2], 16), [[{ partition: 0, from: 0, to: 2 }]]);
  assert.deepEqual(checkPieces([18], 16)[0]!.map((p) => [p.from, p.to]), [[0, 9], [9, 18]]);
  const p176 = checkPieces([176, 176], 16);
  assert.equal(p176[1]!.length, 11);
  assert.ok(p176[1]!.every((p, j) => p.partition === 1 && p.to - p.from === 16 && p.from === 16 * j));
});

test('format errors name the offending JSON path', () => {
  const ch = (k: number, i: number): string => `${VP}[${k}][${i}]`;
  refused(() => parseC1(mutated((c) => { c.comm_r.pop(); })), 'comm_r', /expected 32 bytes, got 31/);
  refused(() => parseC1(mutated((c) => {
    c.vanilla_proofs.StackedDrg2KiBV1[0][1].replica_column_proofs.drg_parents[3].column.rows.push(c.comm_d);
  })), `${ch(0, 1)}.replica_column_proofs.drg_parents[3].column.rows`, /expected 2 elements, got 3/);
  refused(() => parseC1(mutated((c) => { delete c.vanilla_proofs.StackedDrg2KiBV1[0][0].labeling_proofs; })),
    `${ch(0, 0)}.labeling_proofs`, /missing field/);
  refused(() => parseC1(mutated((c) => { delete c.ticket; })), 'ticket', /missing field/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].replica_column_proofs.c_x.column.index = 64; })),
    `${ch(0, 0)}.replica_column_proofs.c_x.column.index`, /out of range/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][1].comm_r_last_proof.data.Single.path.path[1].index = 8; })),
    `${ch(0, 1)}.comm_r_last_proof.data.Single.path.path[1].index`, /out of range/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs.data.Single.path.path[0].index = 2; })),
    `${ch(0, 0)}.comm_d_proofs.data.Single.path.path[0].index`, /out of range/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].labeling_proofs[0].layer_index = 3; })),
    `${ch(0, 0)}.labeling_proofs[0].layer_index`, /out of range/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].encoding_proof.node = 2048; })),
    `${ch(0, 0)}.encoding_proof.node`, /out of range/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][1].comm_r_last_proof.data.Single.leaf = new Array(32).fill(255); })),
    `${ch(0, 1)}.comm_r_last_proof.data.Single.leaf`, /≥ r/);
  refused(() => parseC1(mutated((c) => { c.replica_id = new Array(32).fill(255); })), 'replica_id', /≥ r/);
  refused(() => parseC1(mutated((c) => { c.seed[3] = 256; })), 'seed[3]', /byte/);
  refused(() => parseC1(mutated((c) => { c.seed[3] = 1.5; })), 'seed[3]', /byte/);
  refused(() => parseC1(mutated((c) => { c.ticket[0] = '7'; })), 'ticket[0]', /byte/);
  refused(() => parseC1(mutated((c) => { c.registered_proof = 5; })), 'registered_proof', /string/);
  refused(() => parseC1(mutated((c) => { c.registered_proof = 'StackedDrg4KiBV1_1'; })), 'registered_proof', /unknown/);
  refused(() => parseC1(mutated((c) => { c.registered_proof = 'StackedDrg32GiBV1_1'; })), 'vanilla_proofs', /StackedDrg32GiBV1/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1.push([]); })), VP, /expected 1 elements, got 2/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0].pop(); })), `${VP}[0]`, /expected 2 elements, got 1/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].replica_column_proofs.exp_parents.pop(); })),
    `${ch(0, 0)}.replica_column_proofs.exp_parents`, /expected 8/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].labeling_proofs[1].parents.pop(); })),
    `${ch(0, 0)}.labeling_proofs[1].parents`, /expected 37/);
  refused(() => parseC1(mutated((c) => {
    const d = c.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_r_last_proof.data;
    d.Sub = d.Single;
    delete d.Single;
  })), `${ch(0, 0)}.comm_r_last_proof.data.Sub`, /wrong proof shape/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_r_last_proof.data.Single.path.path[0].hashes.pop(); })),
    `${ch(0, 0)}.comm_r_last_proof.data.Single.path.path[0].hashes`, /expected 7/);
  refused(() => parseC1(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs = null; })),
    `${ch(0, 0)}.comm_d_proofs`, /object/);
});

test('garbage input is refused, never crashes', () => {
  refused(() => parseC1('not json'), '', /JSON/);
  refused(() => parseC1(''), '', /JSON/);
  refused(() => parseC1(Uint8Array.of(0xff, 0xfe, 0x00, 0x81)), '', /UTF-8/);
  refused(() => parseC1('null'), '', /object/);
  refused(() => parseC1('[]'), '', /object/);
  refused(() => parseC1('{}'), 'registered_proof', /missing/);
  refused(() => parseC1('['.repeat(100000)), '', /JSON/);
  refused(() => parseC1Value(42), '', /object/);

  // Random structural mutations: each parse either succeeds or throws C1FormatError.
  const rand = rng(7).int;
  const junk: unknown[] = [null, -1, 2 ** 60, 'x', [], {}, true, 3.5, [1, 2], { data: {} }];
  const c1 = fresh();
  for (let iter = 0; iter < 300; iter++) {
    const c = structuredClone(c1);
    // walk to a random node
    let node: AnyJson = c;
    for (let depth = 0; depth < 12; depth++) {
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const key = keys[rand(keys.length)];
      const child = node[key];
      if (child === null || typeof child !== 'object' || rand(4) === 0) {
        node[key] = junk[rand(junk.length)];
        break;
      }
      node = child;
    }
    try {
      parseC1(JSON.stringify(c));
    } catch (e) {
      assert.ok(e instanceof C1FormatError, `iteration ${iter}: ${String(e)}`);
    }
  }
});

test('Commit2In wrapper errors: bad base64, bad inner JSON, wrong sizes and types', () => {
  const w = JSON.parse(wrapperText) as AnyJson;
  const wrap = (edit: (x: AnyJson) => void): string => {
    const x = structuredClone(w);
    edit(x);
    return JSON.stringify(x);
  };
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = '!!not base64!!'; })), 'Phase1Out', /base64/);
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = x.Phase1Out.slice(0, -1); })), 'Phase1Out', /base64/);
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = Buffer.from('{"registered_proof":').toString('base64'); })), '', /Phase1Out.*JSON/);
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = Buffer.from([0xc3, 0x28, 0xa0]).toString('base64'); })), '', /UTF-8/);
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = 17; })), 'Phase1Out', /string/);
  // A 32 GiB Commit2In carries ~50 MB of base64: the check must be linear, not a regex that recurses.
  const big = Buffer.alloc(45 << 20, 0x20).toString('base64');
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = big; })), '', /Phase1Out/);
  refused(() => parseCommit2In(wrap((x) => { x.Phase1Out = 'QQ=A'; })), 'Phase1Out', /base64/);
  refused(() => parseCommit2In(wrap((x) => { delete x.Phase1Out; })), 'Phase1Out', /missing/);
  refused(() => parseCommit2In(wrap((x) => { x.SectorSize = 4096; })), 'SectorSize', /does not match/);
  refused(() => parseCommit2In(wrap((x) => { x.SectorNum = -3; })), 'SectorNum', /non-negative/);
  refused(() => parseCommit2In(wrap((x) => { x.Miner = 1001; })), 'Miner', /string/);
  refused(() => parseCommit2In(wrap((x) => {
    x.Phase1Out = Buffer.from(mutated((c) => { c.vanilla_proofs.StackedDrg2KiBV1[0][1].replica_column_proofs.drg_parents[3].column.rows.pop(); })).toString('base64');
  })), `${VP}[0][1].replica_column_proofs.drg_parents[3].column.rows`, /Phase1Out/);
  refused(() => parseCommit2In('garbage'), '', /JSON/);
  const noMiner = parseCommit2In(wrap((x) => { delete x.Miner; }));
  assert.equal(noMiner.miner, undefined);
});

test('gpuproxy\'s C2 input {c1out, prover_id, sector_id, miner_id} is a third form: same C1, its ids checked', () => {
  // serde's JSON of gpuproxy's C2Input (venus-cluster / damocles): SectorId and ActorID as numbers, ProverId as 32 integers
  const gp = (edit: (x: AnyJson) => void = () => {}): string => {
    const x: AnyJson = { c1out: fresh(), prover_id: Array.from(proverIdFromActorId(1001)), sector_id: 0, miner_id: 1001 };
    edit(x);
    return JSON.stringify(x);
  };
  const c2 = parseC1Input(gp());
  assert.equal(c2.form, 'gpuproxy');
  assert.deepEqual(c2.phase1Out, parseC1(c1Text));
  assert.equal(c2.miner, 'f01001');
  assert.equal(c2.sectorNum, 0);
  assert.equal(c2.sectorSize, 2048);
  assert.deepEqual([...c2.proverId!], [...proverIdFromActorId(1001)]);
  // the fixture was sealed by f01001 as sector 0: its replica_id follows from gpuproxy's prover_id and sector_id
  assert.deepEqual(verifyC1Header(c2.phase1Out, { proverId: c2.proverId, sectorId: c2.sectorNum }), []);
  const other = parseC1Input(gp((x) => { x.sector_id = 5; }));
  assert.match(verifyC1Header(other.phase1Out, { proverId: other.proverId, sectorId: other.sectorNum }).join(), /replica_id: does not match/);
  // without miner_id (gpuproxy's stored C2Resource) the miner is read back from prover_id
  assert.equal(parseC1Input(gp((x) => { delete x.miner_id; })).miner, 'f01001');
  assert.equal(parseC1Input(gp((x) => { delete x.miner_id; x.prover_id[20] = 9; })).miner, undefined);
  // refusals name the field inside the gpuproxy object
  refused(() => parseC1Input(gp((x) => { x.miner_id = 1002; })), 'prover_id', /not miner_id 1002's prover id/);
  refused(() => parseC1Input(gp((x) => { x.prover_id = x.prover_id.slice(1); })), 'prover_id', /32 bytes/);
  refused(() => parseC1Input(gp((x) => { x.sector_id = 'two'; })), 'sector_id', /non-negative integer/);
  refused(() => parseC1Input(gp((x) => { delete x.sector_id; })), 'sector_id', /missing/);
  refused(() => parseC1Input(gp((x) => { x.c1out.comm_r = [1]; })), 'c1out.comm_r', /32 bytes/);
  refused(() => parseC1Input(gp((x) => { x.c1out = 'x'; })), 'c1out', /object/);
  // the other two forms are unchanged, and an object that is none of the three is refused naming them
  assert.equal(parseC1Input(wrapperText).form, 'commit2in');
  assert.equal(parseC1Input(c1Text).form, 'c1');
  refused(() => parseC1Input('{"c1": {}, "sector": 2}'), '', /Commit2In wrapper .*raw C1 .*gpuproxy's C2 input \{c1out, prover_id, sector_id, miner_id\}; this object has the keys c1, sector/);
});

test('registry: sizes, layers, partitions, challenges (FACTS §1)', () => {
  const expect: [string, number, number, number, number | undefined][] = [
    ['StackedDrg2KiBV1_1', 2048, 2, 1, 2],
    ['StackedDrg8MiBV1_1', 8 << 20, 2, 1, 2],
    ['StackedDrg512MiBV1_1', 512 << 20, 2, 1, 2],
    ['StackedDrg32GiBV1_1', 2 ** 35, 11, 10, 18],
    ['StackedDrg64GiBV1_1', 2 ** 36, 11, 10, 18],
    ['StackedDrg32GiBV1', 2 ** 35, 11, 10, 18],
    ['StackedDrg32GiBV1_1_Feat_SyntheticPoRep', 2 ** 35, 11, 10, 18],
  ];
  for (const [name, size, layers, partitions, challenges] of expect) {
    const info = sealProofInfo(name)!;
    assert.ok(info, name);
    assert.equal(info.sectorSize, size);
    assert.equal(info.layers, layers);
    assert.equal(info.partitions, partitions);
    assert.equal(info.challengesPerPartition, challenges);
  }
  assert.equal(sealProofInfo('StackedDrg32GiBV1_1')!.vanillaKey, 'StackedDrg32GiBV1');
  assert.deepEqual(sealProofInfo('StackedDrg64GiBV1_1')!.tree, { baseArity: 8, subArity: 8, topArity: 2, baseLevels: 9 });
  assert.equal(sealProofInfo('StackedDrg8MiBV1_1')!.tree.baseLevels, 6);
  assert.equal(sealProofInfo('StackedDrg512MiBV1_1')!.tree.baseLevels, 8);
  assert.equal(sealProofInfo('StackedDrg32GiBV1')!.drgPredecessorFirst, false);
  assert.equal(sealProofInfo('nope'), undefined);
});

/** A well-formed (not cryptographically valid) C1 JSON value of the given compound shape. */
function syntheticC1(name: string): AnyJson {
  const info = sealProofInfo(name)!;
  const b32 = (x: number): number[] => Array.from({ length: 32 }, (_, i) => (i === 31 ? 0 : (x + i) & 0xff));
  const level = (arity: number, index: number): AnyJson => ({ hashes: Array.from({ length: arity - 1 }, (_, j) => b32(j)), index });
  const poseidonProof = (): AnyJson => {
    const base = { path: Array.from({ length: info.tree.baseLevels }, (_, l) => level(8, l % 8)) };
    const sub = { path: [level(8, 3)] };
    if (info.tree.topArity === 0) return { data: { Sub: { base_proof: base, sub_proof: sub, root: b32(1), leaf: b32(2) } } };
    return { data: { Top: { base_proof: base, sub_proof: sub, top_proof: { path: [level(2, 1)] }, root: b32(1), leaf: b32(2) } } };
  };
  const column = (index: number): AnyJson => ({
    column: { index, rows: Array.from({ length: info.layers }, (_, l) => b32(l)), _h: null },
    inclusion_proof: poseidonProof(),
  });
  const labeling = (layer: number): AnyJson => ({ parents: Array.from({ length: 37 }, (_, j) => b32(j)), layer_index: layer, node: 12345 });
  const challenge = (): AnyJson => ({
    comm_d_proofs: { data: { Single: { root: b32(9), leaf: b32(8), path: { path: Array.from({ length: info.commDLevels }, (_, l) => level(2, l & 1)) } } } },
    comm_r_last_proof: poseidonProof(),
    replica_column_proofs: {
      c_x: column(12345),
      drg_parents: Array.from({ length: 6 }, (_, j) => column(j)),
      exp_parents: Array.from({ length: 8 }, (_, j) => column(1000 + j)),
    },
    labeling_proofs: Array.from({ length: info.layers }, (_, l) => labeling(l + 1)),
    encoding_proof: labeling(info.layers),
  });
  return {
    registered_proof: name,
    vanilla_proofs: { [info.vanillaKey]: Array.from({ length: info.partitions! }, () => Array.from({ length: info.challengesPerPartition! }, challenge)) },
    comm_r: b32(3), comm_d: b32(4), replica_id: b32(5), seed: b32(6), ticket: b32(7),
  };
}

test('32 GiB (Sub) and 64 GiB (Top) proof layouts parse; shapes are enforced', () => {
  for (const name of ['StackedDrg32GiBV1_1', 'StackedDrg64GiBV1_1']) {
    const value = syntheticC1(name);
    const text = JSON.stringify(value);
    const t0 = performance.now();
    const c1 = parseC1(text);
    const ms = performance.now() - t0;
    assert.ok(ms < 10_000, `${name}: parsing ${text.length} bytes took ${ms} ms`);
    assert.equal(c1.partitions.length, 10);
    assert.equal(c1.partitions[9].length, 18);
    const p = c1.partitions[9][17];
    assert.equal(p.commRLastProof.shape, name.startsWith('StackedDrg32') ? 'Sub' : 'Top');
    assert.equal(p.commRLastProof.base.length, 9);
    assert.equal(p.commRLastProof.sub.length, 1);
    assert.equal(p.commRLastProof.top.length, name.startsWith('StackedDrg32') ? 0 : 1);
    assert.equal(p.cX.rows.length, 11);
    assert.equal(p.labelingProofs.length, 11);
    assert.equal(p.commDProof.base.length, name.startsWith('StackedDrg32') ? 30 : 31);
  }
  const v = syntheticC1('StackedDrg32GiBV1_1');
  const at = `vanilla_proofs.StackedDrg32GiBV1[4][7]`;
  const cp = v.vanilla_proofs.StackedDrg32GiBV1[4][7];
  cp.comm_r_last_proof.data.Sub.sub_proof.path[0].index = 8;
  refused(() => parseC1Value(v), `${at}.comm_r_last_proof.data.Sub.sub_proof.path[0].index`, /out of range/);
  cp.comm_r_last_proof.data.Sub.sub_proof.path[0].index = 0;
  delete cp.replica_column_proofs.exp_parents[7].inclusion_proof.data.Sub.base_proof;
  refused(() => parseC1Value(v), `${at}.replica_column_proofs.exp_parents[7].inclusion_proof.data.Sub.base_proof`, /missing/);
  const t = syntheticC1('StackedDrg64GiBV1_1');
  t.vanilla_proofs.StackedDrg64GiBV1[0][0].comm_r_last_proof.data.Top.top_proof.path[0].hashes.push(t.comm_d);
  refused(() => parseC1Value(t), 'vanilla_proofs.StackedDrg64GiBV1[0][0].comm_r_last_proof.data.Top.top_proof.path[0].hashes', /expected 1 elements/);
});
