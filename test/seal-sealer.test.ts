/**
 * A real 2 KiB seal end to end: the C1 parses (parseCommit2In), passes verifyC1 (replica_id included)
 * and ../shared/reference/check_c1.py, its public inputs equal public_inputs.py's, every label equals
 * the slow graph.ts computation, the output is deterministic, and bad options fail clearly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseC1, parseCommit2In, type C1Output } from '../src/filecoin/c1.js';
import { DrgParents, ExpanderParents, computeLabel, labelParentOrder, proverIdFromActorId } from '../src/filecoin/graph.js';
import { sha256Truncated } from '../src/filecoin/hash/sha256.js';
import { partitionPublicInputs } from '../src/filecoin/public-inputs.js';
import { verifyC1 } from '../src/filecoin/c1-checks.js';
import {
  BASE_DEGREE, SealOptionError, buildParentTable, fr32Unpad, labelLayers, parseHex32, randomSectorData, rngSeedBytes, sealSector,
  sectorSizeLabel, synthC1,
} from '../src/filecoin/seal/index.js';
import { python, reference } from './support.js';


const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function challengesOf(c1: C1Output): number[] {
  return c1.partitions.flat().map((p) => p.challenge);
}

test('2 KiB seal: parses, verifies, passes check_c1.py; public inputs equal public_inputs.py', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kiln-seal-'));
  try {
    const runs = [
      { name: 'v1_1', r: sealSector({ sectorSize: '2KiB', miner: 'f01001', sectorNumber: 7 }), actor: 1001n, sector: 7 },
      { name: 'v1', r: sealSector({ registeredProof: 'StackedDrg2KiBV1', rngSeed: 'v1', miner: 1234n }), actor: 1234n, sector: 0 },
      { name: 'synth', r: synthC1({ sectorSize: '2KiB', rngSeed: 9 }), actor: 1000n, sector: 0 },
    ];
    const parsed = runs.map(({ name, r, actor, sector }) => {
      const w = parseCommit2In(r.commit2In);
      assert.equal(w.sectorSize, 2048);
      assert.equal(w.sectorNum, sector);
      assert.equal(w.miner, `f0${actor}`);
      const c1 = w.phase1Out;
      assert.deepEqual(verifyC1(c1, { proverId: proverIdFromActorId(actor), sectorId: sector }), [], name);
      assert.deepEqual(c1.commR, r.commR);
      const file = path.join(dir, `${name}.c1.json`);
      writeFileSync(file, r.c1Text);
      const out = execFileSync('python3', [reference('check_c1.py'), file], { encoding: 'utf8' });
      assert.match(out, /ALL OK\s*$/, `${name}: ${out}`);
      return { name, c1, file };
    });
    // public inputs of every run, one python call
    const body = [
      'from public_inputs import public_inputs',
      `files = ${JSON.stringify(parsed.map((p) => p.file))}`,
      'out = []',
      'for f in files:',
      '    c = json.load(open(f))',
      '    name = c["registered_proof"]',
      '    v1 = not name.endswith("_1")',
      '    pid = (0 if v1 else 5).to_bytes(8, "little") + bytes(24)',
      '    out.append([str(x) for x in public_inputs(c["replica_id"], c["comm_d"], c["comm_r"], c["seed"], 64, 2, 0, pid, api_v1_0=v1)])',
      'print(json.dumps(out))',
    ].join('\n');
    const expected = JSON.parse(python(body).join('\n')) as string[][];
    parsed.forEach(({ name, c1 }, i) => {
      const ours = partitionPublicInputs(c1, 0).map(String);
      assert.equal(ours.length, 39);
      assert.deepEqual(ours, expected[i], name);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every 2 KiB label equals the slow computation from graph.ts (node 0 hashes no parents)', () => {
  const r = sealSector({ sectorSize: '2KiB', rngSeed: 'labels' });
  const info = r.info;
  const table = buildParentTable(info.porepId, info.nodes, info.drgPredecessorFirst);
  const labels = labelLayers(r.replicaId, info.nodes, info.layers, table);
  const drg = new DrgParents(info.porepId, info.drgPredecessorFirst);
  const exp = new ExpanderParents(info.porepId, info.nodes);
  const ref: Uint8Array[][] = [];
  for (let layer = 1; layer <= info.layers; layer++) {
    const cur: Uint8Array[] = [];
    const head = new Uint8Array(32);
    new DataView(head.buffer).setUint32(0, layer, false);
    cur.push(sha256Truncated(r.replicaId, head));
    for (let v = 1; v < info.nodes; v++) {
      const base = [...drg.parents(v).map((p) => cur[p]), ...(layer > 1 ? exp.parents(v).map((p) => ref[layer - 2][p]) : [])];
      cur.push(computeLabel(r.replicaId, layer, v, labelParentOrder(layer).map((i) => base[i])));
    }
    ref.push(cur);
    for (let v = 0; v < info.nodes; v++) assert.deepEqual(labels[layer - 1].subarray(v * 32, v * 32 + 32), cur[v], `layer ${layer} node ${v}`);
  }
  assert.equal(table.length, info.nodes * BASE_DEGREE);
  // the C1's columns carry these labels
  const c1 = parseC1(r.c1Text);
  for (const p of c1.partitions.flat()) {
    for (const col of [p.cX, ...p.drgParents, ...p.expParents]) {
      col.rows.forEach((row, l) => assert.equal(hex(ref[l][col.index]), row.toString(16).padStart(64, '0').match(/../g)!.reverse().join('')));
    }
  }
});

test('same seed and data give the same Commit2In; another seed other challenges', () => {
  const data = randomSectorData(2048, rngSeedBytes('det'));
  const seed = parseHex32('11'.repeat(32), 'seed');
  const ticket = parseHex32(`0x${'ab'.repeat(32)}`, 'ticket');
  const a = sealSector({ sectorSize: 2048, data, seed, ticket, miner: 'f01001' });
  const b = sealSector({ sectorSize: '2kib', data: data.slice(), seed, ticket, miner: 1001 });
  assert.equal(a.commit2In, b.commit2In);
  const c = sealSector({ sectorSize: '2KiB', data, seed: parseHex32('22'.repeat(32), 'seed'), ticket, miner: 'f01001' });
  assert.deepEqual(c.commD, a.commD);
  assert.deepEqual(c.replicaId, a.replicaId);
  assert.notDeepEqual(challengesOf(parseC1(c.c1Text)), challengesOf(parseC1(a.c1Text)));
  // unpadded input is FR32-padded: the same sector as its padded form
  const d = sealSector({ sectorSize: '2KiB', data: fr32Unpad(data), seed, ticket, miner: 'f01001' });
  assert.equal(d.commit2In, a.commit2In);
  // default options are deterministic too; another rngSeed is another sector
  assert.equal(sealSector({ sectorSize: '2KiB' }).commit2In, sealSector({ sectorSize: '2KiB' }).commit2In);
  assert.notDeepEqual(sealSector({ sectorSize: '2KiB', rngSeed: 1 }).commD, sealSector({ sectorSize: '2KiB', rngSeed: 2 }).commD);
});

test('Commit2In wrapper has lotus-bench key order and a compact Phase1Out', () => {
  const r = sealSector({ sectorSize: '2KiB', miner: 'f01001' });
  const w = JSON.parse(r.commit2In) as Record<string, unknown>;
  assert.deepEqual(Object.keys(w), ['SectorNum', 'Phase1Out', 'SectorSize', 'Miner']);
  assert.equal(Buffer.from(w.Phase1Out as string, 'base64').toString('utf8'), r.c1Text);
  const c1 = JSON.parse(r.c1Text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(c1), ['registered_proof', 'vanilla_proofs', 'comm_r', 'comm_d', 'replica_id', 'seed', 'ticket']);
  assert.deepEqual(Object.keys(c1.vanilla_proofs as object), ['StackedDrg2KiBV1']);
  assert.match(r.c1Text, /"column":\{"index":\d+,"rows":\[\[[\d,]+\],\[[\d,]+\]\],"_h":null\}/);
  assert.equal(JSON.parse(sealSector({ sectorSize: '2KiB', includeMiner: false }).commit2In).Miner, undefined);
});

test('bad options give clear errors', () => {
  assert.throws(() => sealSector({ sectorSize: '3KiB' }), (e: Error) => e instanceof SealOptionError && /--sector-size '3KiB': not a Filecoin sector size/.test(e.message));
  assert.throws(() => sealSector({ sectorSize: '32GiB' }), /synth-c1/);
  assert.throws(() => sealSector({}), /sector size or a registered proof/);
  assert.throws(() => sealSector({ registeredProof: 'StackedDrg2KiBV9' }), /unknown registered proof/);
  assert.throws(() => sealSector({ registeredProof: 'StackedDrg2KiBV1_1', sectorSize: '8MiB' }), /does not match/);
  assert.throws(() => sealSector({ sectorSize: '2KiB', version: 'V1_1_Feat_SyntheticPoRep' }), /only interactive PoRep \(V1, V1_1\) and NI-PoRep/);
  assert.throws(() => sealSector({ sectorSize: '2KiB', data: new Uint8Array(2000) }), /2000 bytes.*2048 padded.*2032 unpadded/);
  const bad = new Uint8Array(2048);
  bad[32 * 5 + 31] = 0x80;
  assert.throws(() => sealSector({ sectorSize: '2KiB', data: bad }), /not Fr32: node 5/);
  assert.throws(() => parseHex32('zz'.repeat(32), 'seed'), /seed: not hexadecimal/);
  assert.throws(() => parseHex32('00', 'ticket'), /ticket: expected 32 bytes \(64 hex digits\), got 2 digits/);
  assert.throws(() => sealSector({ sectorSize: '2KiB', ticket: new Uint8Array(31) }), /ticket: expected 32 bytes/);
  assert.throws(() => sealSector({ sectorSize: '2KiB', miner: 'f1abc' }), /miner: not an ID address/);
  assert.throws(() => synthC1({ sectorSize: '1TiB' }), /'1TiB': not a Filecoin sector size/);
  assert.equal(sectorSizeLabel('64gib'), '64GiB');
  assert.equal(sectorSizeLabel(8 << 20), '8MiB');
});
