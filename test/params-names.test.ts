/** Official parameter file names, computed from each circuit's identifier, pinned against rust-fil-proofs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allOfficialCircuits, officialCircuitOfFile, porepParamsFileName } from '../src/filecoin/params-names.js';
import { sectorSizeByBytes } from '../src/filecoin/registry.js';

/**
 * Every `.params` name (with its sector_size) in rust-fil-proofs' parameters.json — the file
 * `filecoin-proofs/parameters.json` links to — at commit 87348a749d80447d00c595af834a8ed73c09e4d9
 * (filecoin-proofs 19.1.0; parameters.json last changed in de000dd3732471e1cb79b1fdc842d3f9267cea9b).
 * Copied verbatim: only the names, not the digests or CIDs.
 */
const PARAMETERS_JSON: readonly [string, number][] = [
  ['v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c.params', 536870912],
  ['v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63.params', 8388608],
  ['v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194.params', 2048],
  ['v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18.params', 34359738368],
  ['v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7.params', 68719476736],
  ['v28-empty-sector-update-poseidon-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18.params', 34359738368],
  ['v28-empty-sector-update-poseidon-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7.params', 68719476736],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.params', 2048],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9.params', 536870912],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e.params', 2048],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331.params', 8388608],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9.params', 8388608],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781.params', 536870912],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.params', 34359738368],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.params', 34359738368],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def.params', 68719476736],
  ['v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c.params', 68719476736],
  ['v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.params', 2048],
  ['v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472.params', 536870912],
  ['v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb.params', 8388608],
  ['v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params', 34359738368],
  ['v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2.params', 68719476736],
];

test('every official .params name in parameters.json is computed by kiln, and kiln names no file that is not there', () => {
  const computed = new Map(allOfficialCircuits().map((c) => [c.fileName, c]));
  for (const [name, size] of PARAMETERS_JSON) {
    const c = computed.get(name);
    assert.ok(c, `kiln does not compute ${name}`);
    assert.equal(c.sectorSize, size, name);
  }
  assert.equal(computed.size, PARAMETERS_JSON.length);
  assert.deepEqual([...computed.keys()].sort(), PARAMETERS_JSON.map(([n]) => n).sort());
});

test('circuit ids and kinds of the names; .vk and .meta resolve to the same circuit', () => {
  const g32 = sectorSizeByBytes(32 * 2 ** 30)!;
  assert.equal(
    porepParamsFileName(g32),
    'v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params',
  );
  assert.equal(officialCircuitOfFile(porepParamsFileName(g32, 'vk'))?.circuitId, 'porep-32g');
  const byId = new Map(allOfficialCircuits().map((c) => [c.circuitId, c]));
  for (const id of ['porep-2k', 'porep-8m', 'porep-512m', 'porep-32g', 'porep-64g', 'winning-32g', 'wpost-32g', 'wpost-64g', 'snap-32g', 'snap-poseidon-64g']) {
    assert.ok(byId.get(id), id);
  }
  assert.equal(byId.get('wpost-32g')!.kind, 'window');
  assert.match(byId.get('wpost-32g')!.serves, /StackedDrgWindow32GiBV1_1/);
  assert.equal(officialCircuitOfFile('porep-32g.params'), undefined);
});

test('the PoRep provider looks for the official name first, then <circuit id>.params', async () => {
  const { officialParamsCandidates, findOfficialParams } = await import('../src/kinds/porep/porep-c2.js');
  const { sealProofInfo } = await import('../src/filecoin/registry.js');
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const info = sealProofInfo('StackedDrg32GiBV1_1')!;
  const [official, byId] = officialParamsCandidates(info, '/p');
  assert.equal(official, `/p/${porepParamsFileName(sectorSizeByBytes(info.sectorSize)!)}`);
  assert.equal(byId, '/p/porep-32g.params');
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-names-'));
  try {
    const sizes = (): never => assert.fail('the shape is not needed when a file has its official name');
    assert.equal(await findOfficialParams(info, sizes, dir), undefined);
    await writeFile(join(dir, 'porep-32g.params'), '');
    assert.equal(await findOfficialParams(info, sizes, dir), join(dir, 'porep-32g.params'));
    await writeFile(join(dir, porepParamsFileName(sectorSizeByBytes(info.sectorSize)!)), '');
    assert.equal(await findOfficialParams(info, sizes, dir), join(dir, porepParamsFileName(sectorSizeByBytes(info.sectorSize)!)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
