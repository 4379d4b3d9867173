/** The one registry of sector sizes and proof ids: labels, ids, circuit ids, parameter tags, the one parser. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allSealProofs, allSectorSizes, parseSectorSize, sealProofById, sealProofInfo, sectorSizeByBytes, sectorSizeByCircuitLabel,
} from '../src/filecoin/registry.js';
import { SealOptionError, sectorSizeLabel } from '../src/filecoin/seal/index.js';
import { parsePorepSectorSize, porepCircuitId, porepInfoForCircuit, porepInfoForSize } from '../src/kinds/porep-c2.js';

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

test('one parser of sector sizes: labels in any case, units, byte counts; unknown sizes refused by each caller in its words', () => {
  const cases: [string | number, number | undefined][] = [
    ['2KiB', 2 * KiB], ['2kib', 2 * KiB], ['2 KiB', 2 * KiB], ['2K', 2 * KiB], ['2048', 2 * KiB], [2048, 2 * KiB],
    ['8MiB', 8 * MiB], ['512M', 512 * MiB], ['32GiB', 32 * GiB], [' 64gib ', 64 * GiB], [String(64 * GiB), 64 * GiB],
    ['4KiB', undefined], ['1GiB', undefined], [4096, undefined], ['', undefined], ['lots', undefined], ['2 KB', undefined], ['-2KiB', undefined],
  ];
  for (const [text, bytes] of cases) assert.equal(parseSectorSize(text)?.sectorSize, bytes, JSON.stringify(text));
  assert.equal(sectorSizeLabel('64gib'), '64GiB');
  assert.equal(sectorSizeLabel(8 * MiB), '8MiB');
  assert.throws(() => sectorSizeLabel('4KiB'), (e: unknown) => e instanceof SealOptionError && /unknown sector size "4KiB" \(expected one of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB\)/.test(e.message));
  assert.throws(() => sectorSizeLabel(4096), /unknown sector size 4096 bytes/);
  assert.equal(parsePorepSectorSize('32GiB'), 32 * GiB);
  assert.throws(() => parsePorepSectorSize('lots'), /bad sector size 'lots'/);
  assert.throws(() => parsePorepSectorSize('4KiB'), /no PoRep circuit for sector size 4KiB/);
});
