/**
 * NI-PoRep (registered seal proofs 15–19, StackedDrg…V1_2_Feat_NonInteractivePoRep; docs/ni-porep.md):
 * the counts pinned against rust-fil-proofs' own figures, the challenges against an oracle written
 * from its `NiChallenges::derive`, a kiln-sealed 2 KiB NI sector's C1, and malformed NI inputs
 * refused with the field named (parser and planner; nothing is proved here: porep-e2e.test.ts proves one).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { selectBackend } from '../src/backend/select.js';
import { BufferPool } from '../src/engine/buffers.js';
import { defaultConfig } from '../src/engine/config.js';
import { MemoryBudget } from '../src/engine/memory.js';
import { SynthesisPool } from '../src/engine/synth-pool.js';
import { PlanError, proofRequest } from '../src/engine/types.js';
import { packC1 } from '../src/filecoin/c1-packed.js';
import { C1FormatError, largeCommit2In, parseC1, parseC1Input, parseCommit2In, withStatedChallenges } from '../src/filecoin/c1.js';
import { createPorepKind } from '../src/kinds/porep/planner.js';
import { porepCheckPartition, porepPlanTask } from '../src/kinds/porep/tasks.js';
import { Span } from '../src/util/timing.js';
import { stackedParamsFor } from '../src/filecoin/circuit/index.js';
import { NI_CHALLENGE_TAG, interactiveChallenges, niChallenges } from '../src/filecoin/graph.js';
import { partitionChallenges, partitionPublicInputs } from '../src/filecoin/public-inputs.js';
import { sealProofById, sealProofInfo } from '../src/filecoin/registry.js';
import { commit2InChunks, commit2InJson, sealSector, synthC1 } from '../src/filecoin/seal/index.js';
import { verifyC1 } from '../src/filecoin/c1-checks.js';
import { officialParamsCandidates, porepCircuitId, verifyPorep } from '../src/kinds/porep/porep-c2.js';
import type { VerifyingKey } from '../src/groth16/keys.js';
import { fixture, python, repoRoot, rng } from './support.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const NI = 'V1_2_Feat_NonInteractivePoRep' as const;

test("NI-PoRep's counts are rust-fil-proofs': 13 partitions × 2 challenges up to 1 GiB, 126 × 18 at 32/64 GiB; same circuit and parameter files", () => {
  // filecoin-proofs src/constants.rs get_porep_non_interactive_partitions (13 | 126) and
  // get_porep_non_interactive_minimum_challenges (26 | 2253); parameters.rs select_challenges: ⌈min / partitions⌉;
  // rust-filecoin-proofs-api registry.rs: ids 15–19, porep_id = id u64 LE ‖ nonce 0 u64 LE ‖ 16 zero bytes;
  // tests/seal_regression_records-v18.json: NonInteractivePoRep records of 8 MiB and 512 MiB have partitions 13, of 32 GiB 126
  const rust: [string, number, number, number][] = [
    ['2KiB', 15, 13, 26],
    ['8MiB', 16, 13, 26],
    ['512MiB', 17, 13, 26],
    ['32GiB', 18, 126, 2253],
    ['64GiB', 19, 126, 2253],
  ];
  for (const [size, id, partitions, minChallenges] of rust) {
    const info = sealProofInfo(`StackedDrg${size}V1_2_Feat_NonInteractivePoRep`)!;
    const interactive = sealProofInfo(`StackedDrg${size}V1_1`)!;
    assert.equal(sealProofById(id), info);
    assert.equal(info.version, NI);
    assert.equal(info.challengeDerivation, 'non-interactive');
    assert.equal(info.partitions, partitions, size);
    assert.equal(info.challengesPerPartition, Math.ceil(minChallenges / partitions), size);
    assert.ok(info.partitions * info.challengesPerPartition >= minChallenges);
    assert.equal(hex(info.porepId), id.toString(16).padStart(2, '0') + '00'.repeat(31));
    assert.equal(info.vanillaKey, `StackedDrg${size}V1`); // rust-filecoin-proofs-api VanillaSealProof: the V1 key for every version
    // the same partition circuit (its identifier's max_count is the per-partition count) and parameter files
    assert.equal(info.challengesPerPartition, interactive.challengesPerPartition);
    assert.deepEqual(stackedParamsFor(info), stackedParamsFor(interactive));
    assert.equal(porepCircuitId(info.sectorSize), porepCircuitId(interactive.sectorSize));
    assert.deepEqual(officialParamsCandidates(info, '/p'), officialParamsCandidates(interactive, '/p'));
  }
  assert.equal(sealProofInfo('StackedDrg2KiBV1_1_Feat_SyntheticPoRep')!.challengeDerivation, 'synthetic');
  assert.equal(sealProofInfo('StackedDrg2KiBV1_1')!.challengeDerivation, 'interactive');
});

test("NI challenges equal an oracle written from rust-fil-proofs' NiChallenges::derive (SHA256(tag ‖ replica_id ‖ comm_r ‖ j u32 LE))", () => {
  const r = rng(26);
  const cases = [
    { nodes: 64, per: 2, k: 12 },
    { nodes: 2 ** 30, per: 18, k: 125 },
    { nodes: 2 ** 31, per: 18, k: 0 },
  ].map((c) => ({ ...c, replicaId: r.bytes(32), commR: r.bytes(32) }));
  const lines = python(
    [
      'import hashlib',
      `TAG = ${JSON.stringify(NI_CHALLENGE_TAG)}.encode()`,
      'def ni(replica_id, comm_r, nodes, per, k):',
      '    out = []',
      '    for i in range(per):',
      '        h = hashlib.sha256(TAG + replica_id + comm_r + (per * k + i).to_bytes(4, "little")).digest()',
      '        out.append(int.from_bytes(h, "little") % (nodes - 1) + 1)',
      '    return out',
      ...cases.map((c) => `print(json.dumps(ni(bytes.fromhex("${hex(c.replicaId)}"), bytes.fromhex("${hex(c.commR)}"), ${c.nodes}, ${c.per}, ${c.k})))`),
    ].join('\n'),
  );
  cases.forEach((c, i) => {
    const got = niChallenges(c.replicaId, c.commR, c.nodes, c.per, c.k);
    assert.deepEqual(got, JSON.parse(lines[i]!));
    assert.ok(got.every((x) => x >= 1 && x < c.nodes));
    // not the interactive derivation with comm_r in the seed's place
    assert.notDeepEqual(got, interactiveChallenges(c.replicaId, c.commR, c.nodes, c.per, c.k));
  });
});

describe('a kiln-sealed 2 KiB NI-PoRep sector', () => {
  const seed = new Uint8Array(32).fill(7);
  const sealed = sealSector({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-test', miner: 'f01234', sectorNumber: 7, seed });
  const text = sealed.c1Text;
  const c1 = parseC1(text);

  test('its C1: the registered proof name Curio sends, 13 partitions × 2 challenges derived from comm_r, every check passes', () => {
    const raw = JSON.parse(text);
    assert.equal(raw.registered_proof, 'StackedDrg2KiBV1_2_Feat_NonInteractivePoRep');
    assert.deepEqual(Object.keys(raw.vanilla_proofs), ['StackedDrg2KiBV1']);
    assert.equal(c1.registeredProof.id, 15);
    assert.equal(c1.partitions.length, 13);
    assert.ok(c1.partitions.every((p) => p.length === 2));
    assert.deepEqual(verifyC1(c1, { proverId: undefined, sectorId: undefined }), []);
    for (let k = 0; k < 13; k++) {
      const want = niChallenges(c1.replicaId, c1.commR, 64, 2, k);
      assert.deepEqual(c1.partitions[k]!.map((p) => p.challenge), want);
      assert.deepEqual(partitionChallenges(c1, k), want);
      assert.equal(partitionPublicInputs(c1, k).length, 3 + 18 * 2);
    }
    // the seed is carried but derives nothing: another seed, the same sector and challenges
    const other = sealSector({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-test', miner: 'f01234', sectorNumber: 7, seed: new Uint8Array(32).fill(9) });
    assert.equal(hex(other.commR), hex(sealed.commR));
    assert.deepEqual(parseC1(other.c1Text).partitions.map((p) => p.map((x) => x.challenge)), c1.partitions.map((p) => p.map((x) => x.challenge)));
  });

  test('malformed NI C1s are refused, naming the field', () => {
    const refused = (mutate: (c: any) => void, path: string, re: RegExp): void => {
      const c = JSON.parse(text);
      mutate(c);
      assert.throws(() => parseC1(JSON.stringify(c)), (e: unknown) => {
        assert.ok(e instanceof C1FormatError, String(e));
        assert.equal(e.path, path, e.message);
        assert.match(e.message, re);
        return true;
      });
    };
    const parts = (c: any): any[][] => c.vanilla_proofs.StackedDrg2KiBV1;
    refused((c) => parts(c).pop(), 'vanilla_proofs.StackedDrg2KiBV1', /expected 13 elements, got 12/);
    refused((c) => parts(c)[4]!.push(parts(c)[4]![0]), 'vanilla_proofs.StackedDrg2KiBV1[4]', /expected 2 elements, got 3/);
    refused((c) => (c.seed = new Array(32).fill(0)), 'seed', /all 32 bytes zero/);
    refused((c) => (c.comm_r = new Array(32).fill(0)), 'comm_r', /all 32 bytes zero/);
    refused((c) => (c.vanilla_proofs = { StackedDrg2KiBV1_2_Feat_NonInteractivePoRep: parts(c) }), 'vanilla_proofs', /expected exactly the key StackedDrg2KiBV1/);
    // an interactive 2 KiB C1 relabelled NI: one partition where NI-PoRep has 13
    const fx = JSON.parse(readFileSync(fixture('2KiB.c1.json'), 'utf8'));
    fx.registered_proof = 'StackedDrg2KiBV1_2_Feat_NonInteractivePoRep';
    assert.throws(() => parseC1(JSON.stringify(fx)), /vanilla_proofs\.StackedDrg2KiBV1: expected 13 elements, got 1/);
  });

  test('consistency checks derive NI challenges from comm_r: swapped partitions, another comm_r and stated challenges', () => {
    // partitions 0 and 1 swapped: every proof is valid, but not for the challenges its partition derives
    const c = JSON.parse(text);
    const p = c.vanilla_proofs.StackedDrg2KiBV1;
    [p[0], p[1]] = [p[1], p[0]];
    const swapped = verifyC1(parseC1(JSON.stringify(c)));
    assert.match(swapped[0]!, /^partition 0 challenge 0 \(node \d+\): challenge \(c_x\.column\.index\) should be \d+, derived from replica_id and comm_r \(NI-PoRep/);
    // and the public inputs are those of the derived challenges, not the stated ones
    const marked = withStatedChallenges(parseC1(JSON.stringify(c)));
    assert.equal(marked.statedChallenges, true);
    assert.deepEqual(verifyC1(marked), []);
    assert.deepEqual(partitionChallenges(marked, 0), c1.partitions[1]!.map((x) => x.challenge));
    // an interactive C1 is never marked, nor an NI one whose challenges are the derived ones
    const fx = parseC1(readFileSync(fixture('2KiB.c1.json')));
    assert.equal(withStatedChallenges(fx), fx);
    assert.equal(withStatedChallenges(c1), c1);
  });

  test('a proof of the wrong length is refused with the partition count (13 × 192 bytes)', () => {
    assert.throws(() => verifyPorep(c1, new Uint8Array(192), {} as VerifyingKey), /StackedDrg2KiBV1_2_Feat_NonInteractivePoRep has 13 partition\(s\): expected 2496/);
  });
});

test('kiln synth-c1 --ni (2 KiB here; 126 partitions at 32 GiB): consistent but for its challenges, which only a stated-challenges C1 accepts', () => {
  const r = synthC1({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-synth' });
  assert.equal(r.challengesDerived, false);
  const c1 = parseC1Input(r.commit2In).phase1Out;
  assert.equal(c1.partitions.length, 13);
  const failures = verifyC1(c1);
  assert.ok(failures.length > 0 && failures.every((f) => /derived from replica_id and comm_r/.test(f)), failures.join('\n'));
  assert.deepEqual(verifyC1(withStatedChallenges(c1)), []);
  // interactive synthetic C1s derive their challenges as before
  assert.equal(synthC1({ sectorSize: '2KiB', rngSeed: 'ni-synth' }).challengesDerived, true);
});

describe('the daemon planner with NI C1s (POREP_SEAL_COMMIT, registered_proof 15–19)', () => {
  const GIB = 1024 ** 3;
  const backend = selectBackend('reference');
  const ctx = { synthPool: new SynthesisPool(1), buffers: new BufferPool(backend, new MemoryBudget(8 * GIB), 2) };
  const kind = (stated: boolean): ReturnType<typeof createPorepKind> => {
    const config = defaultConfig(64 * GIB);
    config.srs.dev_params = true; // parameters can be had: planning reads and checks the C1 (nothing is compiled)
    config.kiln.insecure_stated_ni_challenges = stated;
    return createPorepKind({ config, backend });
  };
  const plan = (stated: boolean, p: Parameters<typeof proofRequest>[0]) => kind(stated).planner.plan(proofRequest(p), ctx);
  after(() => ctx.synthPool.close());
  const sealed = sealSector({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-plan', miner: 'f01234', sectorNumber: 3 });
  const wrapper = Buffer.from(sealed.commit2In);

  test('plans 13 partitions of porep-2k (the interactive circuit); request fields checked against registered proof 15', async () => {
    const work = await plan(false, { proofKind: 1, vanillaProof: wrapper, sectorSize: 2048, registeredProof: 15, sectorNumber: 3 });
    assert.equal(work.circuitId, 'porep-2k');
    assert.equal(work.partitions, 13);
    assert.match(work.describe!, /^StackedDrg2KiBV1_2_Feat_NonInteractivePoRep sector 3 miner f01234$/);
    work.dispose?.();
    await assert.rejects(plan(false, { proofKind: 1, vanillaProof: wrapper, registeredProof: 5 }), (e: unknown) =>
      e instanceof PlanError && /registered_proof 5 \(StackedDrg2KiBV1_1\) does not match the C1's StackedDrg2KiBV1_2_Feat_NonInteractivePoRep \(id 15\)/.test(e.message));
  });

  test('a split C1 (13 partitions parsed in parallel) with a fault in partition 5: refused with the whole parse\'s words', async () => {
    const c = JSON.parse(sealed.c1Text);
    const key = Object.keys(c.vanilla_proofs)[0]!;
    c.vanilla_proofs[key][5][1].comm_d_proofs = 'x';
    const w = JSON.parse(sealed.commit2In);
    const bytes = Buffer.from(JSON.stringify({ ...w, Phase1Out: Buffer.from(JSON.stringify(c)).toString('base64') }));
    let words = '';
    assert.throws(() => parseC1Input(bytes), (e: unknown) => e instanceof C1FormatError && (words = e.message) !== '');
    assert.match(words, /vanilla_proofs\.StackedDrg2KiBV1\[5\]\[1\]\.comm_d_proofs/);
    const first = porepPlanTask({ bytes });
    assert.ok(first.ok && first.split !== undefined, 'the planner\'s first task splits it (the fault is in a partition)');
    await assert.rejects(plan(false, { proofKind: 1, vanillaProof: bytes }), (e: unknown) => e instanceof PlanError && e.message === `vanilla_proof (Commit2In): ${words}`);
  });

  /** The first partition's synthesis of a plan, which waits for that partition's C1 check (and fails with it). */
  const firstPartition = async (stated: boolean, bytes: Uint8Array): Promise<unknown> => {
    const work = await plan(stated, { proofKind: 1, vanillaProof: bytes });
    try {
      return await work.synthesize(0, new Span('synth'));
    } finally {
      work.dispose?.();
    }
  };

  test('inconsistent NI C1s are refused before synthesis, naming the first mismatch', async () => {
    const c = JSON.parse(sealed.c1Text);
    c.comm_r[2] ^= 1; // challenges and comm_r = Poseidon2(comm_c, comm_r_last) both fail
    await assert.rejects(firstPartition(false, Buffer.from(JSON.stringify(c))), (e: unknown) =>
      e instanceof PlanError && /^the C1's vanilla proofs are inconsistent: partition 0 challenge 0 .*derived from replica_id and comm_r/.test(e.message));
    const w = JSON.parse(sealed.commit2In);
    await assert.rejects(plan(false, { proofKind: 1, vanillaProof: Buffer.from(JSON.stringify({ ...w, Miner: 'f01235' })) }), /inconsistent: replica_id: does not match/);
  });

  test('a synthetic NI C1 is refused unless [kiln] insecure_stated_ni_challenges, then planned and said INSECURE', async () => {
    const r = synthC1({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-plan' });
    const synth = Buffer.from(r.commit2In);
    await assert.rejects(firstPartition(false, synth), /derived from replica_id and comm_r \(NI-PoRep; a kiln synth-c1 --ni C1 states its own: \[kiln\] insecure_stated_ni_challenges or kiln prove --insecure-stated-challenges/);
    const work = await plan(true, { proofKind: 1, vanillaProof: synth, registeredProof: 15 });
    assert.equal(work.partitions, 13);
    assert.match(work.describe!, /INSECURE: stated challenges/);
    work.dispose?.();
    // and every partition's check (what each synthesis waits for) passes with the stated challenges
    const c1 = withStatedChallenges(parseC1Input(r.commit2In).phase1Out);
    const packed = packC1(c1);
    for (let k = 0; k < 13; k++) {
      assert.deepEqual(porepCheckPartition({ c1: packed, partition: k }).failures, [], `partition ${k}`);
    }
    // the key changes nothing for a real NI sector (its challenges are the derived ones)
    const real = await plan(true, { proofKind: 1, vanillaProof: wrapper });
    assert.doesNotMatch(real.describe!, /INSECURE/);
    real.dispose?.();
  });
});

test('32 GiB NI C1s are past V8\'s longest string wrapped (~650 MB): the Commit2In is written in pieces and read from its bytes, same bytes and result', async () => {
  const r = sealSector({ sectorSize: '2KiB', version: NI, rngSeed: 'ni-large', sectorNumber: 5 });
  const joined = Buffer.concat(commit2InChunks(r.c1Text, 5n, 2048, 'f01000'));
  assert.equal(joined.toString('utf8'), commit2InJson(r.c1Text, 5n, 2048, 'f01000'));
  assert.equal(joined.toString('utf8'), r.commit2In);
  assert.deepEqual(Buffer.concat(r.commit2InChunks()), joined);
  assert.deepEqual(largeCommit2In(joined), parseCommit2In(joined));
  const fx = readFileSync(fixture('2KiB.commit2in.json'));
  assert.deepEqual(largeCommit2In(fx), parseCommit2In(fx));
  // spaces around the colon, and the errors of the wrapper
  const w = JSON.parse(fx.toString('utf8'));
  const spaced = Buffer.from(`{ "SectorNum" : ${w.SectorNum}, "Phase1Out" :\n "${w.Phase1Out}", "SectorSize": 2048 }`);
  assert.deepEqual(largeCommit2In(spaced)!.phase1Out, parseCommit2In(fx).phase1Out);
  const refused = (text: string, path: string, re: RegExp): void => {
    assert.throws(() => largeCommit2In(Buffer.from(text)), (e: unknown) => e instanceof C1FormatError && e.path === path && re.test(e.message), text.slice(0, 80));
  };
  refused(`{"SectorNum":1,"Phase1Out":"${w.Phase1Out.slice(1)}","SectorSize":2048}`, 'Phase1Out', /not valid base64/);
  refused(`{"SectorNum":1,"Phase1Out":"${w.Phase1Out.replace('A', '*')}","SectorSize":2048}`, 'Phase1Out', /not valid base64/);
  refused(`{"SectorNum":1,"Phase1Out":"${w.Phase1Out}","SectorSize":2048,"Phase1Out":"AAAA"}`, 'Phase1Out', /given more than once/);
  refused(`{"SectorNum":1,"Phase1Out":"${w.Phase1Out}","SectorSize":4096}`, 'SectorSize', /4096 does not match StackedDrg2KiBV1_1/);
  // no top-level Phase1Out string: not for this reader
  assert.equal(largeCommit2In(Buffer.from('{"a":{"Phase1Out":"AAAA"}}')), undefined);
  assert.equal(largeCommit2In(readFileSync(fixture('2KiB.c1.json'))), undefined);
});

test('kiln synth-c1 --ni writes the 13-partition C1 and says its challenges are stated, for benchmarks only', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-ni-cli-'));
  try {
    const c1 = join(dir, 'synth-ni.json');
    const { stderr } = await promisify(execFile)(process.execPath, [join(repoRoot, 'dist', 'src', 'cli', 'main.js'), 'synth-c1', '--ni', '--sector-size', '2KiB', '--out', c1]);
    assert.match(stderr, /synthetic StackedDrg2KiBV1_2_Feat_NonInteractivePoRep C1/);
    assert.match(stderr, /13 × 2 challenges are stated, not derived from its comm_r .*insecure_stated_ni_challenges = true, kiln prove with --insecure-stated-challenges \(INSECURE, benchmarks only\)/);
    assert.equal(parseC1Input(readFileSync(c1)).phase1Out.partitions.length, 13);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
