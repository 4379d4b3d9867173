/** The one registry of sector sizes and proof ids: labels, ids, circuit ids, parameter tags, the one parser. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allSealProofs, allSectorSizes, parseSectorSize, sealProofById, sectorSizeRefusal, sealProofInfo, sectorSizeByBytes, sectorSizeByCircuitLabel,
} from '../src/filecoin/registry.js';
import { SealOptionError, sectorSizeLabel } from '../src/filecoin/seal/index.js';
import { parsePorepSectorSize, porepCircuitId, porepInfoForCircuit, porepInfoForSize } from '../src/kinds/porep/porep-c2.js';

const KiB = 1024;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

test('five sector sizes, each with its label, circuit id and parameter-file tree tag', () => {
  const rows = allSectorSizes().map((s) => [s.label, s.sectorSize, s.circuitLabel, s.paramsTreeTag]);
  assert.deepEqual(rows, [
    ['2KiB', 2 * KiB, '2k', '8-0-0'],
    ['8MiB', 8 * MiB, '8m', '8-0-0'],
    ['512MiB', 512 * MiB, '512m', '8-0-0'],
    ['32GiB', 32 * GiB, '32g', '8-8-0'],
    ['64GiB', 64 * GiB, '64g', '8-8-2'],
  ]);
  for (const s of allSectorSizes()) {
    assert.equal(sectorSizeByBytes(s.sectorSize), s);
    assert.equal(sectorSizeByCircuitLabel(s.circuitLabel), s);
    assert.equal(porepCircuitId(s.sectorSize), `porep-${s.circuitLabel}`);
    const info = porepInfoForCircuit(`porep-${s.circuitLabel}`)!;
    assert.equal(info.name, `StackedDrg${s.label}V1_1`);
    assert.equal(porepInfoForSize(s.sectorSize), info);
  }
  assert.equal(porepInfoForCircuit('porep-1g'), undefined);
  assert.equal(porepInfoForCircuit('demo-2000'), undefined);
  assert.throws(() => porepCircuitId(4096), /no PoRep circuit for sector size 4096/);
});

test('20 registered seal proofs: ids 0-19 by version then size, names and porep ids agree', () => {
  const all = allSealProofs();
  assert.equal(all.length, 20);
  for (const info of all) {
    assert.equal(sealProofById(info.id), info);
    assert.equal(sealProofInfo(info.name), info);
    assert.equal(info.sectorSize, allSectorSizes()[info.id % 5].sectorSize);
    assert.equal(new DataView(info.porepId.buffer).getBigUint64(0, true), BigInt(info.id));
  }
  assert.equal(sealProofInfo('StackedDrg2KiBV1_1')!.id, 5);
  assert.equal(sealProofInfo('StackedDrg32GiBV1')!.id, 3);
  assert.equal(sealProofById(20), undefined);
});

test('one parser of sector sizes: what people type (KiB, KB, K, G, bytes), in any case; one wording for a refusal', () => {
  const cases: [string | number, number | undefined][] = [
    ['2KiB', 2 * KiB], ['2kib', 2 * KiB], ['2 KiB', 2 * KiB], ['2K', 2 * KiB], ['2KB', 2 * KiB], ['2 kb', 2 * KiB], ['2048', 2 * KiB],
    ['2048B', 2 * KiB], [2048, 2 * KiB], ['8MiB', 8 * MiB], ['8MB', 8 * MiB], ['512M', 512 * MiB], ['32GiB', 32 * GiB], ['32G', 32 * GiB],
    ['32GB', 32 * GiB], ['32g', 32 * GiB], [' 64gib ', 64 * GiB], [String(64 * GiB), 64 * GiB],
    ['4KiB', undefined], ['1GiB', undefined], [4096, undefined], ['', undefined], ['lots', undefined], ['2 KiBs', undefined], ['-2KiB', undefined], ['2iB', undefined],
  ];
  for (const [text, bytes] of cases) assert.equal(parseSectorSize(text)?.sectorSize, bytes, JSON.stringify(text));
  assert.equal(sectorSizeLabel('64gib'), '64GiB');
  assert.equal(sectorSizeLabel('32G'), '32GiB');
  assert.equal(sectorSizeLabel(8 * MiB), '8MiB');
  const wording = /: not a Filecoin sector size \(2KiB, 8MiB, 512MiB, 32GiB, 64GiB; also written 2KB, 2K, 32G or in bytes, 2048\)$/;
  assert.equal(sectorSizeRefusal('3KiB', '--sector-size'), "--sector-size '3KiB': not a Filecoin sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB; also written 2KB, 2K, 32G or in bytes, 2048)");
  assert.throws(() => sectorSizeLabel('4KiB'), (e: unknown) => e instanceof SealOptionError && e.message === sectorSizeRefusal('4KiB', '--sector-size'));
  assert.throws(() => sectorSizeLabel(4096), (e: unknown) => e instanceof Error && e.message.startsWith('4096 bytes: ') && wording.test(e.message));
  assert.equal(parsePorepSectorSize('32GiB'), 32 * GiB);
  assert.equal(parsePorepSectorSize('2KB'), 2 * KiB);
  for (const bad of ['lots', '4KiB']) assert.throws(() => parsePorepSectorSize(bad), (e: unknown) => e instanceof Error && e.message === sectorSizeRefusal(bad, '--sector-size'));
});

test('a registered PoSt or update proof by its filecoin-ffi id or name (go-state-types abi numbers), else undefined', async () => {
  const { parsePoStProof } = await import('../src/kinds/post/post.js');
  const { parseSnapProof } = await import('../src/kinds/snap/snap.js');
  const { postProofName } = await import('../src/filecoin/post/registry.js');
  // abi.RegisteredPoStProof_StackedDrgWinning2KiBV1 = 0, _StackedDrgWindow32GiBV1 = 8, _StackedDrgWindow32GiBV1_1 = 13
  for (const [q, id, name] of [
    ['0', 0, 'StackedDrgWinning2KiBV1'], [8, 8, 'StackedDrgWindow32GiBV1'], [' 13 ', 13, 'StackedDrgWindow32GiBV1_1'],
    ['stackeddrgwindow32gibv1_1', 13, 'StackedDrgWindow32GiBV1_1'], ['StackedDrgWinning32GiBV1', 3, 'StackedDrgWinning32GiBV1'],
  ] as const) {
    const p = parsePoStProof(q);
    assert.ok(p, `PoSt ${q}`);
    assert.deepEqual([p.id, postProofName(p)], [id, name]);
  }
  for (const q of ['15', '-1', 'StackedDrgWindow32GiB', '', '1.0']) assert.equal(parsePoStProof(q), undefined, `PoSt ${JSON.stringify(q)}`);
  // abi.RegisteredUpdateProof_StackedDrg2KiBV1 = 0 … _StackedDrg32GiBV1 = 3
  assert.deepEqual([parseSnapProof('3')?.name, parseSnapProof('stackeddrg32gibv1')?.id, parseSnapProof(0)?.name], ['StackedDrg32GiBV1', 3, 'StackedDrg2KiBV1']);
  for (const q of ['5', 'StackedDrg32GiBV1_1', 'x']) assert.equal(parseSnapProof(q), undefined, `update ${q}`);
});
