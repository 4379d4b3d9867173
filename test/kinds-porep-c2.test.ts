/** The PoRep C2 kind's verifying-key lookup (kiln verify): found without compiling the circuit shape. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { cachedPorepShapeDigest, porepVerifyingKeySource, STACKED_CIRCUIT_VERSION } from '../src/kinds/porep/porep-c2.js';

test('porepVerifyingKeySource: official file by circuit id, else dev parameters by the cached shape digest; no shape compiled', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-vk-source-'));
  try {
    const info = sealProofInfo('StackedDrg2KiBV1_1')!;
    const params = join(dir, 'params');
    const cache = join(dir, 'cache');
    mkdirSync(join(cache, 'shapes'), { recursive: true });
    assert.equal(cachedPorepShapeDigest(info, cache), undefined);
    // a cached shape (its bytes are never read here) and its digest
    const digest = 'ab'.repeat(32);
    const shapeFile = join(cache, 'shapes', `porep-2k-v${STACKED_CIRCUIT_VERSION}.shape`);
    writeFileSync(shapeFile, 'not a shape');
    writeFileSync(`${shapeFile}.sha256`, `${digest}\n`);
    assert.equal(cachedPorepShapeDigest(info, cache), digest);
    const t0 = performance.now();
    assert.deepEqual(await porepVerifyingKeySource(info, params, cache), { kind: 'dev', path: join(cache, 'dev-params', `dev-${digest}.params`) });
    // official parameters under the circuit id win
    mkdirSync(params);
    writeFileSync(join(params, 'porep-2k.params'), '');
    assert.deepEqual(await porepVerifyingKeySource(info, params, cache), { kind: 'official', path: join(params, 'porep-2k.params') });
    assert.ok(performance.now() - t0 < 5000, 'no circuit was compiled');
    // a digest file that is not a digest is ignored
    writeFileSync(`${shapeFile}.sha256`, 'garbage\n');
    assert.equal(cachedPorepShapeDigest(info, cache), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
